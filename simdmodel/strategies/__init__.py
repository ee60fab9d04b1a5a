"""Work-mapping strategies, each one registered object (DESIGN.md "Other mapping strategies").

`registry.Strategy` is the plug-in: name, parameter schema, label, work geometry and one numba
decomposition (which lane takes which edge at each warp step). A `Mapping` is a strategy with its
parameter values; its lane counts per level come from the strategy's closed-form fast path when
it has one, else from its decomposition (`schedule`). Shipped: `group` (sm-S), `ws`, `scan`, `swc`.
Adding a strategy = one module here that calls `register`, one `gpu_validate/cuda/<name>.cu`
and one naive reference in tests.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..errors import InputError
from . import group, ws, scan, swc  # noqa: F401, I001  (each registers its strategy, in this order)
from .fields import LANE_FIELDS, WARP_SIZE
from .registry import STRATEGIES, Geometry, Param, Strategy, get_strategy, register, unregister
from .scan import DEFAULT_CTA_SIZE
from .schedule import Schedule, decomposed_lanes, queue_units, schedule_lanes, schedules, several_blocks

DEFAULT_GROUP_SIZES = (1, 2, 4, 8, 16, 32)


class Mapping:
    """One concrete mapping: a registered strategy and its parameter values in schema order.

    `Mapping("group", 8)`, `Mapping("ws")`, `Mapping("scan", 256)`; missing values take the
    schema's defaults, and every value is checked.
    """

    __slots__ = ("strategy", "params")

    def __init__(self, strategy: str, *values):
        object.__setattr__(self, "strategy", strategy)
        object.__setattr__(self, "params", get_strategy(strategy).check_params(tuple(values)))

    def __setattr__(self, name, value):
        raise AttributeError("Mapping is immutable")

    def __reduce__(self):  # pickle and copy rebuild it through the registry
        return Mapping, (self.strategy, *self.params)

    def __eq__(self, other):
        return isinstance(other, Mapping) and (self.strategy, self.params) == (other.strategy, other.params)

    def __hash__(self):
        return hash((self.strategy, self.params))

    def __repr__(self):
        return f"Mapping({self.strategy!r}{''.join(f', {p}' for p in self.params)})"

    @property
    def spec(self) -> Strategy:
        """The registered strategy object."""
        return get_strategy(self.strategy)

    @property
    def label(self) -> str:
        """Short name used in tables: sm-S for group (seed 000 §5.1), else the strategy's label."""
        return self.spec.label(self.params)

    @property
    def param(self) -> int | None:
        """The value of a one-parameter strategy (S of group, C of scan), else None."""
        return self.params[0] if len(self.params) == 1 else None

    def value(self, name: str) -> int | None:
        """The value of parameter `name`, or None if the strategy has no such parameter."""
        for p, v in zip(self.spec.params, self.params):
            if p.name == name:
                return v
        return None

    @property
    def group_size(self) -> int | None:
        return self.value("group_size")

    @property
    def geometry(self) -> Geometry:
        return self.spec.geometry(self.params)

    @property
    def block_size(self) -> int | None:
        """The block size this mapping fixes (a CTA-wide strategy's C), or None."""
        for p, v in zip(self.spec.params, self.params):
            if p.binds_block:
                return v
        return None

    def with_block(self, block: int) -> "Mapping":
        """This mapping launched with `block` threads per block: a block-bound parameter (a CTA-wide
        strategy's C) becomes `block`, other strategies are unchanged."""
        values = tuple(block if p.binds_block else v for p, v in zip(self.spec.params, self.params))
        return Mapping(self.strategy, *values)

    def count_lanes(self, degrees: np.ndarray, level_ptr: np.ndarray) -> np.ndarray:
        """Per-level lane sums (levels x LANE_FIELDS) of a queue of out-degrees walked level by level."""
        spec = self.spec
        if spec.fast_lanes is not None:
            return spec.fast_lanes(degrees, level_ptr, *self.params)
        return self.decomposed_lanes(degrees, level_ptr)

    @property
    def phases(self) -> tuple[str, ...]:
        """The strategy's gathering phases (swc: cta, warp, scan); empty for a one-phase strategy."""
        return self.spec.phases

    def count_phase_lanes(self, degrees: np.ndarray, level_ptr: np.ndarray) -> np.ndarray | None:
        """Per-level lane sums split by phase (levels x phases x LANE_FIELDS), or None for a one-phase
        strategy; summed over the phases they are `count_lanes`."""
        spec = self.spec
        return None if spec.phase_lanes is None else spec.phase_lanes(degrees, level_ptr, *self.params)

    def decomposed_lanes(self, degrees: np.ndarray, level_ptr: np.ndarray) -> np.ndarray:
        """Per-level lane sums from the decomposition itself (what the fast path must equal)."""
        return decomposed_lanes(self.spec, self.params, self.geometry, degrees, level_ptr)


def parse_mapping(text: str) -> Mapping:
    """A mapping from its label (`sm-4`, `ws`, `scan`), asking every registered strategy."""
    name = text.strip().lower()
    for strategy in STRATEGIES.values():
        values = strategy.parse_label(name)
        if values is not None:
            return Mapping(strategy.name, *values)
    raise InputError(f"unknown mapping {text!r}")


def check_cta_size(size: int) -> int:
    return scan.SCAN.param("cta_size").check(size)


def mappings(
    strategies=("group", "ws", "scan", "swc"),
    group_sizes=DEFAULT_GROUP_SIZES,
    cta_size: int = DEFAULT_CTA_SIZE,
) -> list[Mapping]:
    """Expand strategy names into concrete mappings, validating names and parameters.

    A `group_size` parameter takes every size of `group_sizes`, a `cta_size` the CTA size
    `cta_size`, any other parameter its default (so a plug-in strategy gets its defaults).
    """
    given = {"group_size": tuple(group_sizes), "cta_size": (cta_size,)}
    result: list[Mapping] = []
    for name in strategies:
        spec = get_strategy(name)
        choices = [given.get(p.name, (p.default,)) for p in spec.params]
        for p, values in zip(spec.params, choices):
            if not values:
                raise InputError(f"strategy {name!r} needs at least one {p.title}")
        result.extend(Mapping(name, *(p.check(v) for p, v in zip(spec.params, values)))
                      for values in itertools.product(*choices))
    if len(set(result)) != len(result):
        raise InputError("a strategy or group size is listed twice")
    return result


__all__ = [
    "LANE_FIELDS", "WARP_SIZE", "STRATEGIES", "Strategy", "Param", "Geometry", "Mapping", "Schedule",
    "mappings", "parse_mapping", "register", "unregister", "get_strategy", "schedules", "several_blocks", "queue_units",
    "schedule_lanes", "DEFAULT_GROUP_SIZES", "DEFAULT_CTA_SIZE", "check_cta_size",
]
