"""Generator spec strings such as `rmat:scale=20,ef=16,seed=1`: parsing and typed defaults."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .errors import InputError


@dataclass(frozen=True)
class Param:
    """One key of a generator spec: its type (int or float), default and allowed range."""

    kind: type
    default: Any
    low: float | None = None
    high: float | None = None


def parse_spec(text: str) -> tuple[str, dict[str, str]]:
    """Split `name:key=value,...` into the name and the raw key/value strings."""
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    values: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in rest.split(","))):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or not key or not value.strip():
            raise InputError(f"generator spec {text!r}: expected key=value, got {item!r}")
        if key in values:
            raise InputError(f"generator spec {text!r}: key {key!r} given twice")
        values[key] = value.strip()
    return name, values


def bind_params(name: str, raw: dict[str, str], params: dict[str, Param]) -> dict[str, Any]:
    """Check keys against `params`, convert values to their types, fill defaults."""
    unknown = sorted(set(raw) - set(params))
    if unknown:
        known = ", ".join(params) or "none"
        raise InputError(f"generator {name!r}: unknown key {unknown[0]!r} (known: {known})")
    bound: dict[str, Any] = {}
    for key, param in params.items():
        if key not in raw:
            if param.default is None:
                raise InputError(f"generator {name!r}: key {key!r} is required")
            bound[key] = param.default
            continue
        convert: Callable[[str], Any] = _to_int if param.kind is int else float
        try:
            value = convert(raw[key])
        except ValueError:
            raise InputError(
                f"generator {name!r}: {key}={raw[key]!r} is not a{'n integer' if param.kind is int else ' number'}"
            ) from None
        if (param.low is not None and value < param.low) or (param.high is not None and value > param.high):
            raise InputError(f"generator {name!r}: {key}={raw[key]} outside {param.low}..{param.high}")
        bound[key] = value
    return bound


def _to_int(text: str) -> int:
    value = float(text)  # accepts 1e6 and 1_000_000-style integers written as floats
    if not value.is_integer():
        raise ValueError(text)
    return int(value)
