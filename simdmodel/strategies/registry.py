"""The strategy registry: each work-mapping strategy is one object, registered once by name.

A strategy (DESIGN.md "Plug-ins") has a name, a parameter schema, a label (`sm-4`), its work
geometry (how many frontier entries a work unit takes and how many warps run it) and one numba
decomposition: for each work unit, which lane of which warp takes which edge at each warp step,
and how the idle lanes of each step split into UA / UR / idle. Lane tables
(`simdmodel.lanes`), the operator machine's jobs (`opmachine.kernels`) and the CUDA kernel
(`gpu_validate.modules`, `cuda/<name>.cu`) all look a strategy up here, so they cannot drift.
A strategy may also carry a closed-form lane counter (`fast_lanes`) for speed; the test suite
checks every registered fast path against the strategy's own decomposition.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..errors import InputError
from ..plugins import Registry


@dataclass(frozen=True)
class Param:
    """One integer parameter of a strategy: its name, the letter used in labels, default and range."""

    name: str
    title: str  # as error messages say it: "group size"
    symbol: str
    default: int | None
    low: int
    high: int
    multiple_of: int = 1
    binds_block: bool = False  # the launch's block size (a CTA-wide strategy's C); not a template argument

    def check(self, value) -> int:
        """`value` as an int, or InputError naming the parameter and its range."""
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise InputError(f"{self.title} must be an integer, got {value!r}") from None
        if not isinstance(value, str) and number != value:
            raise InputError(f"{self.title} must be an integer, got {value!r}")
        if self.multiple_of > 1 and (not self.low <= number <= self.high or number % self.multiple_of):
            raise InputError(f"{self.title} {number} must be a multiple of {self.multiple_of} in "
                             f"{self.low}..{self.high}")
        if not self.low <= number <= self.high:
            raise InputError(f"{self.title} {number} outside {self.low}..{self.high}")
        return number


@dataclass(frozen=True)
class Geometry:
    """How a strategy cuts a frontier queue into work units.

    A unit takes `unit_entries` consecutive queue entries and is run by `unit_warps` warps; warp j
    of the unit loads entries j*warp_entries .. (j+1)*warp_entries - 1 of it. Unit u runs on the
    launch's unit slot u % (launched warps // unit_warps) (a grid-stride loop over units).
    """

    unit_entries: int
    unit_warps: int
    warp_entries: int


@dataclass(frozen=True)
class Strategy:
    """A registered mapping strategy (see the module docstring).

    `decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges)`
    is a numba function: entries i have edges starts[i] .. starts[i] + degrees[i] - 1, unit u
    holds entries unit_ptr[u] .. unit_ptr[u+1] - 1 (local index u), `params` is an int64 array in
    schema order. It writes the steps in the order the kernel issues them: step s runs on warp
    step_warp[s] = u * unit_warps + j, its active lanes take edges[step_end[s-1]:step_end[s]] (in
    lane order), step_ua[s] / step_ur[s] of its idle lanes are intra- / inter-group waste and the
    rest of the 32 are idle (owned by no group). Every step has at least one active lane. It
    returns the number of steps.

    `fast_lanes(degrees, level_ptr, *params)`, optional, is a closed form of the same counts: the
    per-level LANE_FIELDS sums (levels x 6) of a queue of out-degrees walked level by level.

    `phases`, optional, names the phases of a strategy that gathers in several (swc: cta, warp, scan),
    and `phase_lanes(degrees, level_ptr, *params)` splits the same sums by phase (levels x phases x 6),
    so the waste can be laid to the phase that causes it.
    """

    name: str
    params: tuple[Param, ...]
    description: str
    geometry: Callable[[tuple], Geometry]
    decompose: Callable
    label: Callable[[tuple], str]
    parse_label: Callable[[str], tuple | None]
    fast_lanes: Callable | None = field(default=None)
    phases: tuple[str, ...] = ()
    phase_lanes: Callable | None = field(default=None)

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def check_params(self, values: tuple) -> tuple[int, ...]:
        """Values in schema order, defaults filled in (for missing or None values) and each checked."""
        while len(values) > len(self.params) and values[-1] is None:
            values = values[:-1]
        if len(values) > len(self.params):
            raise InputError(f"strategy {self.name!r} takes {len(self.params)} parameter(s), got {len(values)}")
        out = []
        for i, p in enumerate(self.params):
            value = values[i] if i < len(values) and values[i] is not None else p.default
            if value is None:
                raise InputError(f"strategy {self.name!r} needs {p.name}")
            out.append(p.check(value))
        return tuple(out)


STRATEGIES = Registry("strategy")


def register(strategy: Strategy) -> Strategy:
    """Add `strategy` under its name (a second strategy of the same name is refused)."""
    return STRATEGIES.register(strategy)


def unregister(name: str) -> None:
    """Remove a registered strategy (for plug-ins loaded for a while, e.g. in tests)."""
    STRATEGIES.unregister(name)


def get_strategy(name: str) -> Strategy:
    """The registered strategy `name`, or InputError listing the known ones."""
    return STRATEGIES.get_plugin(name)
