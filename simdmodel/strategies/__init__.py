"""Work-mapping strategies, registered once by name (DESIGN.md "Other mapping strategies").

Every strategy module exposes `count_lanes(degrees, level_ptr, param)`: `degrees` are the
out-degrees of the frontier vertices in walk order, concatenated level by level with offsets
`level_ptr`; the result is an int64 array (levels x LANE_FIELDS) of per-level sums. The
operator-machine job counter and the GPU kernels look strategies up by the same names.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError
from . import group, scan, ws
from .lanes import LANE_FIELDS, WARP_SIZE


@dataclass(frozen=True)
class Strategy:
    """A registered strategy: how to count its lanes and what its one parameter means."""

    name: str
    count_lanes: Callable[[np.ndarray, np.ndarray, int], np.ndarray]
    param_name: str | None
    description: str


STRATEGIES: dict[str, Strategy] = {
    "group": Strategy("group", group.count_lanes, "group_size", group.__doc__.strip().splitlines()[0]),
    "ws": Strategy("ws", ws.count_lanes, None, ws.__doc__.strip().splitlines()[0]),
    "scan": Strategy("scan", scan.count_lanes, "cta_size", scan.__doc__.strip().splitlines()[0]),
}

DEFAULT_GROUP_SIZES = (1, 2, 4, 8, 16, 32)
DEFAULT_CTA_SIZE = 256


@dataclass(frozen=True)
class Mapping:
    """One concrete mapping: a strategy and its parameter (S for group, C for scan, None for ws)."""

    strategy: str
    param: int | None = None

    @property
    def label(self) -> str:
        """Short name used in tables: sm-S for group (seed 000 §5.1), else the strategy name."""
        return mapping_label(self.strategy, self.group_size)

    @property
    def group_size(self) -> int | None:
        return self.param if self.strategy == "group" else None

    def count_lanes(self, degrees: np.ndarray, level_ptr: np.ndarray) -> np.ndarray:
        """Per-level lane sums (levels x LANE_FIELDS) for this mapping."""
        param = 0 if self.param is None else self.param
        return STRATEGIES[self.strategy].count_lanes(degrees, level_ptr, param)


def mapping_label(strategy: str, group_size=None) -> str:
    """Table name of a mapping: sm-S for group with size S, else the strategy name."""
    return f"sm-{int(group_size)}" if strategy == "group" else strategy


def check_group_size(size: int) -> int:
    if not 1 <= size <= WARP_SIZE:
        raise InputError(f"group size {size} outside 1..{WARP_SIZE}")
    return size


def check_cta_size(size: int) -> int:
    if size < WARP_SIZE or size > 1024 or size % WARP_SIZE:
        raise InputError(f"CTA size {size} must be a multiple of {WARP_SIZE} in {WARP_SIZE}..1024")
    return size


def mappings(
    strategies=("group", "ws", "scan"),
    group_sizes=DEFAULT_GROUP_SIZES,
    cta_size: int = DEFAULT_CTA_SIZE,
) -> list[Mapping]:
    """Expand strategy names into concrete mappings, validating names and parameters."""
    result: list[Mapping] = []
    for name in strategies:
        if name not in STRATEGIES:
            raise InputError(f"unknown strategy {name!r} (choose from {', '.join(STRATEGIES)})")
        if name == "group":
            if not group_sizes:
                raise InputError("strategy 'group' needs at least one group size")
            result.extend(Mapping("group", check_group_size(int(s))) for s in group_sizes)
        elif name == "scan":
            result.append(Mapping("scan", check_cta_size(int(cta_size))))
        else:
            result.append(Mapping(name))
    if len(set(result)) != len(result):
        raise InputError("a strategy or group size is listed twice")
    return result


__all__ = [
    "LANE_FIELDS", "WARP_SIZE", "STRATEGIES", "Strategy", "Mapping", "mappings",
    "DEFAULT_GROUP_SIZES", "DEFAULT_CTA_SIZE", "mapping_label", "check_group_size", "check_cta_size",
]
