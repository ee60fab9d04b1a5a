"""Seed 004's cost analysis of CTE (§4.2, Eqs. 4.1-4.3): an instruction-only comparator.

The seed bounds the time of W coarse-grained tasks with loads L = {l_1..l_W} (fine-grained tasks
per coarse task; for BFS, a frontier vertex's out-degree) from two constants: T_MAP, one fine
task's map part, and T_RED, one reduction step. Memory latencies are assumed away, which is what
this comparator shows next to the memory + instruction model of `predict`:

- Eq. 4.1, 1D (one thread per coarse task): t_1D(L) = max L x (T_MAP + T_RED).
- Eq. 4.2, sub-warp decomposition with width S: the warp runs S rounds; round s gives the W/S
  tasks l_i with (s-1)W/S < i <= sW/S one sub-warp of S lanes each, maps for ceil(max of them / S)
  steps and then reduces in log2 S steps: t_SW(L, S) = sum_{s=1..S} (T_RED log2 S +
  T_MAP ceil(max{l_i : (s-1)W/S < i <= sW/S} / S)). So `s` indexes rounds (consecutive blocks of
  W/S tasks), not lanes, and the ceiling is taken on the block's largest load divided by S; a
  round whose loads are all 0 still pays its log2 S reduction steps (an upper bound). For S = 1
  the sum is T_MAP max L = t_1D(L) - T_RED max L: Eq. 4.2 charges no reduction for one lane per
  task where Eq. 4.1 charges one step per fine task.
- Eq. 4.3, CTE: t_CTE(L) = ceil(sum L / W) x (T_MAP + T_RED log2 W), a function of the average.

"Bigger sets by scaling": a launch is many such sets run one after another on its warps. Here each
equation is evaluated on the virtual warps our kernels actually run (gpu_validate/cuda), each
placed as the kernel places it, and a launch costs its busiest physical warp slot's sum:

- 1D (`topo`, `sm-1`): virtual warp c holds tasks 32c .. 32c+31 (for `topo` the node chunk
  32c .. 32c+31, inactive nodes with load 0) and costs Eq. 4.1 of its 32 loads.
- SW(S) (`sm-S`): our kernel's virtual warp holds g = floor(32/S) tasks, one per group of S lanes
  (group.cu), i.e. exactly one round s of Eq. 4.2, and costs that round's summand; the seed's S
  rounds of one warp are S consecutive virtual warps that our kernel spreads over S launched
  warps, so the sum of Eq. 4.2 over all sets is kept but its terms run where the kernel runs
  them. For S not a power of two the tree reduction takes ceil(log2 S) steps.
- CTE (`ws`, `scan`): a unit of C tasks (C = 32 for `ws`, the CTA size for `scan`, which
  generalises CTE from the warp to the CTA) spreads its E = sum L fine tasks over its C/32 warps
  in 32-task blocks, block k on warp k mod C/32 (ws.cu, scan.cu); warp j runs
  ceil((E - 32j) / C) rounds (0 when E <= 32j) of T_MAP + T_RED log2 W. For C = 32 this is
  Eq. 4.3 of the unit's 32 loads.

Virtual warp c (unit u, warp j) runs on launched warp (u mod slots) x unit_warps + j, slots =
launched warps // unit_warps (c mod launched warps when a unit is one warp), and launched warp w
on physical slot w mod physical_warps, as `critical` and `predict` place jobs. Nothing else is
added: per-launch constants are the caller's.

Where the constants come from (the caller's, e.g. cycles counted from the compiled kernel; no
hardware number lives here): for BFS T_MAP is one edge visit, the per-edge instruction path; T_RED
one reduction step (a shuffle and add in the seed; for `ws` and `scan` one binary-search step over
shared memory).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
import pandas as pd

from simdmodel.algorithms import BFS
from simdmodel.errors import InputError
from simdmodel.strategies import WARP_SIZE

from .instructions import arch_of, has_listing, kernel_code, listing_name
from .kernels import DEFAULT_BLOCK, Kernel, Launch, check_block, check_grid, parse_kernel
from .kernels.expand import unit_warp
from .predict import PER_LEVEL_COLUMNS, expansion_launch, fixed_ns

LOG2_WARP = WARP_SIZE.bit_length() - 1  # log2 W = 5
MODEL_COLUMNS = ("t_1d_ns", "t_sw_ns", "t_cte_ns", "cte_model_ns")
ROUND_COLUMNS = ("level", "kernel", "cte_model", "block", "grid", "frontier_vertices", "frontier_edges",
                 *MODEL_COLUMNS)


@dataclass(frozen=True)
class CteCosts:
    """Seed 004's T_MAP (one fine-grained task's map part) and T_RED (one reduction step), in ns."""

    t_map_ns: float
    t_red_ns: float

    def __post_init__(self):
        for name in ("t_map_ns", "t_red_ns"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(value) or value < 0:
                raise InputError(f"CTE cost {name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))

    @classmethod
    def from_cycles(cls, map_cycles: float, red_cycles: float, clock_mhz: float) -> CteCosts:
        """Costs from cycles per map and per reduction step at a clock of `clock_mhz`."""
        if isinstance(clock_mhz, bool) or not isinstance(clock_mhz, (int, float, np.integer, np.floating)) \
                or not math.isfinite(clock_mhz) or clock_mhz <= 0:
            raise InputError(f"clock must be a finite number of MHz > 0, got {clock_mhz!r}")
        for name, cycles in (("map cycles", map_cycles), ("reduction cycles", red_cycles)):
            if isinstance(cycles, bool) or not isinstance(cycles, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(cycles) or cycles < 0:
                raise InputError(f"{name} must be a finite number >= 0, got {cycles!r}")
        return cls(1e3 * float(map_cycles) / float(clock_mhz), 1e3 * float(red_cycles) / float(clock_mhz))


def costs_from_code(kernel, profile) -> CteCosts | None:
    """T_MAP and T_RED of `kernel` on `profile`'s GPU from the kernel's compiled code (its SASS
    listing, `opmachine.instructions`) and the profile's measured `[instructions]` costs; None when
    the profile has no such section or its architecture no listing.

    T_MAP is one trip of the kernel's per-edge loop (event `round`): the stall cycles the compiler
    scheduled through it plus the measured latency of each shared load, shuffle and barrier it waits
    on; memory latency is assumed away, as the seed's analysis does. T_RED is one trip of the
    edge-owner search (event `search`, `ws` and `scan`) counted alike, or, for a kernel without one,
    the seed's reduction step: a shuffle and an add at their measured latencies."""
    kernel = kernel if isinstance(kernel, Kernel) else parse_kernel(kernel)
    costs, arch = getattr(profile, "instructions", None), arch_of(profile)
    name = "topo" if kernel.expansion is None else listing_name(kernel.expansion)
    if costs is None or arch is None or not has_listing(name, arch):
        return None
    code = kernel_code(name, arch)
    reduction = code.path_cycles("search", costs.wait_cycles) if "search" in code.events else \
        costs.shuffle_latency_cycles + costs.alu_latency_cycles
    return CteCosts.from_cycles(code.path_cycles("round", costs.wait_cycles), reduction, costs.clock_mhz)


def reduction_steps(width: int) -> int:
    """Steps of a tree reduction over `width` lanes: ceil(log2 width), log2 width for a power of two."""
    return (int(width) - 1).bit_length()


def _loads(loads) -> np.ndarray:
    array = np.asarray(loads)
    if array.ndim != 1:
        raise InputError(f"task loads must be one-dimensional, got shape {array.shape}")
    if array.size and array.dtype.kind not in "iu":
        raise InputError(f"task loads must be integers, got {array.dtype}")
    array = array.astype(np.int64, copy=False)
    if array.size and array.min() < 0:
        raise InputError(f"task loads must be >= 0, got {int(array.min())}")
    return array


def _sub_warp(sub_warp) -> int:
    if isinstance(sub_warp, bool) or not isinstance(sub_warp, (int, np.integer)) \
            or not 1 <= sub_warp <= WARP_SIZE:
        raise InputError(f"sub-warp width must be an integer in 1..{WARP_SIZE}, got {sub_warp!r}")
    return int(sub_warp)


def _one_set(loads) -> np.ndarray:
    """L as the seed's W tasks: a shorter set is padded with empty tasks."""
    array = _loads(loads)
    if array.size > WARP_SIZE:
        raise InputError(f"the seed's equations take at most W = {WARP_SIZE} tasks, got {array.size}")
    return np.concatenate([array, np.zeros(WARP_SIZE - array.size, dtype=np.int64)])


# The seed's equations on one set L of W tasks, as written.

def t_1d(loads, costs: CteCosts) -> float:
    """Eq. 4.1: max L x (T_MAP + T_RED)."""
    return float(_one_set(loads).max()) * (costs.t_map_ns + costs.t_red_ns)


def t_sw(loads, sub_warp: int, costs: CteCosts) -> float:
    """Eq. 4.2: sum over rounds s = 1..S of T_RED log2 S + T_MAP ceil(max of round s's W/S loads / S).

    S must divide W (the seed's log_S W in N, read as W/S tasks per round)."""
    S = _sub_warp(sub_warp)
    if WARP_SIZE % S:
        raise InputError(f"Eq. 4.2 needs a sub-warp width that divides W = {WARP_SIZE}, got {S}")
    rounds = _one_set(loads).reshape(S, WARP_SIZE // S)
    steps = -(-rounds.max(axis=1) // S)
    return S * reduction_steps(S) * costs.t_red_ns + float(steps.sum()) * costs.t_map_ns


def t_cte(loads, costs: CteCosts) -> float:
    """Eq. 4.3: ceil(sum L / W) x (T_MAP + T_RED log2 W)."""
    rounds = -(-int(_one_set(loads).sum()) // WARP_SIZE)
    return rounds * (costs.t_map_ns + costs.t_red_ns * LOG2_WARP)


# The same equations per virtual warp of our kernels.

@numba.njit(cache=True, nogil=True)
def _chunk_max(loads, size):
    """Largest load of each run of `size` consecutive tasks (the last run may be short)."""
    chunks = (loads.size + size - 1) // size
    out = np.zeros(chunks, dtype=np.int64)
    for i in range(loads.size):
        c = i // size
        if loads[i] > out[c]:
            out[c] = loads[i]
    return out


@numba.njit(cache=True, nogil=True)
def _cta_rounds(loads, cta):
    """Rounds of each warp of each unit of `cta` tasks striding over the unit's concatenated fine
    tasks with `cta` lanes: warp j runs ceil((E - 32j) / cta) of them (0 when E <= 32j)."""
    unit_warps = cta // WARP_SIZE
    units = (loads.size + cta - 1) // cta
    out = np.zeros(units * unit_warps, dtype=np.int64)
    for u in range(units):
        total = 0
        for i in range(u * cta, min(u * cta + cta, loads.size)):
            total += loads[i]
        for j in range(unit_warps):
            first = WARP_SIZE * j
            if total > first:
                out[u * unit_warps + j] = (total - first + cta - 1) // cta
    return out


def warp_ns_1d(loads, costs: CteCosts) -> np.ndarray:
    """Eq. 4.1 of each virtual warp of one lane per task: warp c holds tasks 32c .. 32c+31."""
    return _chunk_max(_loads(loads), WARP_SIZE) * (costs.t_map_ns + costs.t_red_ns)


def warp_ns_sw(loads, sub_warp: int, costs: CteCosts) -> np.ndarray:
    """One round of Eq. 4.2 for each virtual warp of our sm-S kernel: warp c holds the floor(32/S)
    tasks c*g .. c*g+g-1, and costs T_RED ceil(log2 S) + T_MAP ceil(max of them / S)."""
    S = _sub_warp(sub_warp)
    largest = _chunk_max(_loads(loads), WARP_SIZE // S)
    return reduction_steps(S) * costs.t_red_ns + (-(-largest // S)) * costs.t_map_ns


def warp_ns_cte(loads, costs: CteCosts, cta: int = WARP_SIZE) -> np.ndarray:
    """Eq. 4.3 for each warp of units of `cta` tasks (32: `ws`; the CTA size: `scan`), warp j of
    unit u at index u * cta/32 + j: its rounds x (T_MAP + T_RED log2 W)."""
    if isinstance(cta, bool) or not isinstance(cta, (int, np.integer)) or cta < WARP_SIZE or cta % WARP_SIZE:
        raise InputError(f"CTE unit must be a positive multiple of {WARP_SIZE} tasks, got {cta!r}")
    return _cta_rounds(_loads(loads), int(cta)) * (costs.t_map_ns + costs.t_red_ns * LOG2_WARP)


@numba.njit(cache=True, nogil=True)
def _slot_sums(warp_ns, warps, physical_warps, unit_warps):
    slots = warps // unit_warps
    out = np.zeros(min(warps, physical_warps), dtype=np.float64)
    for c in range(warp_ns.size):
        launched = unit_warp(c // unit_warps, unit_warps, slots) + c % unit_warps
        out[launched % physical_warps] += warp_ns[c]
    return out


def makespan_ns(warp_ns, warps: int, physical_warps: int, unit_warps: int = 1) -> float:
    """Busiest physical slot's summed time: virtual warp c (unit c // unit_warps, warp c % unit_warps
    of it) runs on launched warp (unit mod slots) x unit_warps + warp, slots = warps // unit_warps,
    and launched warp w on slot w mod physical_warps."""
    for name, value in (("launched warps", warps), ("physical warps", physical_warps), ("unit warps", unit_warps)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise InputError(f"{name} must be a positive integer, got {value!r}")
    if warps < unit_warps:
        raise InputError(f"a unit of {unit_warps} warps needs at least {unit_warps} launched warps, got {warps}")
    costs = np.asarray(warp_ns, dtype=np.float64)
    if costs.size == 0:
        return 0.0
    return float(_slot_sums(costs, int(warps), int(physical_warps), int(unit_warps)).max())


def kernel_model(kernel) -> tuple[str, int]:
    """Which equation matches `kernel` (a Kernel or Mapping) and its width: ("1d", 1) for `topo` and
    `sm-1`, ("sw", S) for `sm-S`, ("cte", C) for `ws` (C = 32) and `scan` (C = its CTA size); for `swc`
    ("cte", C) too, the CTA's concatenated work, though its long lists go to the CTA and its warps first."""
    kernel = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    mapping = kernel.expansion
    if mapping is None:
        return "1d", 1
    if mapping.group_size is not None:
        S = mapping.group_size
        return ("1d", 1) if S == 1 else ("sw", S)
    if mapping.strategy == "ws":
        return "cte", WARP_SIZE
    if mapping.strategy in ("scan", "swc"):
        return "cte", mapping.value("cta_size")
    raise InputError(f"kernel {mapping.label!r} has no counterpart in seed 004's CTE analysis")


def model_label(kernel) -> str:
    """`1D`, `SW(S)` or `CTE`: the equation `cte_model_ns` uses for `kernel`."""
    name, width = kernel_model(kernel)
    return {"1d": "1D", "sw": f"SW({width})", "cte": "CTE"}[name]


def launch_costs(loads, kernel, costs: CteCosts, warps: int, physical_warps: int,
                 sub_warp: int | None = None) -> dict:
    """Eqs. 4.1-4.3 over one launch's coarse-task loads, each a makespan over the kernel's warps.

    `loads`: the launch's tasks in the kernel's order (a data-driven expansion: the frontier's
    out-degrees in queue order; `topo`: every node's, 0 where the level filter fails). `kernel`: a
    Kernel or Mapping. `sub_warp`: the S of t_sw_ns (default the kernel's group size, 1 for
    `topo`; NaN for `ws` and `scan` unless given). t_cte_ns uses the kernel's unit (the CTA for
    `scan`, else the warp). `cte_model_ns` is the equation matching the kernel (`kernel_model`).
    """
    kernel = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    name, width = kernel_model(kernel)
    loads = _loads(loads)
    if sub_warp is None:
        sub_warp = width if name == "sw" else (1 if name == "1d" else None)
    cta = width if name == "cte" else WARP_SIZE
    out = {
        "t_1d_ns": makespan_ns(warp_ns_1d(loads, costs), warps, physical_warps),
        "t_sw_ns": (float("nan") if sub_warp is None else
                    makespan_ns(warp_ns_sw(loads, sub_warp, costs), warps, physical_warps)),
        "t_cte_ns": makespan_ns(warp_ns_cte(loads, costs, cta), warps, physical_warps, cta // WARP_SIZE),
    }
    if name == "sw" and sub_warp != width:
        out["cte_model_ns"] = makespan_ns(warp_ns_sw(loads, width, costs), warps, physical_warps)
    else:
        out["cte_model_ns"] = out[f"t_{name}_ns"]
    out["cte_model"] = model_label(kernel)
    return out


def cte_rounds(graph, frontiers, kernel, costs: CteCosts, profile, block: int | None = None,
               grid: int | None = None, sub_warp: int | None = None) -> pd.DataFrame:
    """The comparator per BFS round: one row per level (ROUND_COLUMNS), the launch that expands it.

    `frontiers`: the BFS's `simdmodel.frontier.Frontiers` (a data-driven kernel walks each level in
    their order, `topo` every node in id order). Launch geometry as `predict.predict_bfs` takes it:
    `block` (default 256, or the mapping's CTA size) and `grid` (default: `topo` one full wave of
    `profile`, an expansion the blocks its frontier needs up to one full wave,
    `predict.expansion_launch`); physical warp slots from `profile`. A data-driven round's
    compaction has no coarse tasks, and no launch constant is added: both are the caller's.
    """
    kernel = kernel if isinstance(kernel, Kernel) else Kernel(kernel)
    if block is not None:
        check_block(block)
    if grid is not None:
        check_grid(grid)
    degrees = graph.degrees()
    levels = frontiers.levels
    rows = []
    for level in range(frontiers.depth):
        front = frontiers.frontier(level)
        if kernel.data_driven:
            size = block or kernel.expansion.block_size or DEFAULT_BLOCK
            launch = expansion_launch(kernel, profile, front.size, size, grid)
            run = Kernel(kernel.expansion.with_block(size))  # a CTA's C is the block
            loads = degrees[front]
        else:
            size = block or DEFAULT_BLOCK
            launch = Launch(size, grid if grid is not None else profile.full_wave_grid(size))
            run = kernel
            loads = np.where(levels == level, degrees, 0)
        row = launch_costs(loads, run, costs, launch.warps, profile.physical_warps, sub_warp)
        rows.append({"level": level, "kernel": kernel.label, "block": launch.block, "grid": launch.grid,
                     "frontier_vertices": int(front.size), "frontier_edges": int(degrees[front].sum()), **row})
    return pd.DataFrame(rows, columns=list(ROUND_COLUMNS))


def cte_launches(graph, source: int, kernel, profile, costs: CteCosts | None = None) -> pd.DataFrame:
    """The comparator as a prediction of every launch of the BFS from `source` (`predict_bfs`'s
    columns, mode "cte", time_model "cte"): an expansion or `topo` launch costs its `cte_model_ns`
    plus the profile's per-launch constants (`predict.fixed_ns`); a compaction has no coarse tasks
    and costs its measured constant at the graph's size alone. `costs` default:
    `costs_from_code(kernel, profile)`; an empty table when there are none. Count columns are NaN: the analysis counts no memory traffic."""
    kernel = kernel if isinstance(kernel, Kernel) else parse_kernel(kernel)
    costs = costs if costs is not None else costs_from_code(kernel, profile)
    columns = [*PER_LEVEL_COLUMNS, "cte_model"]
    if costs is None:
        return pd.DataFrame(columns=columns)
    rounds = cte_rounds(graph, BFS.rounds(graph, source, "sorted"), kernel, costs, profile)
    phase = "expand" if kernel.data_driven else "topo"
    fixed = fixed_ns(profile, phase)
    launches = [rounds.assign(phase=phase, predicted_ns=rounds["cte_model_ns"] + fixed, fixed_ns=fixed)]
    if kernel.data_driven:
        fixed = fixed_ns(profile, "compact", graph.n)
        launches.append(rounds[["level", "kernel", "cte_model"]].assign(
            phase="compact", predicted_ns=fixed, fixed_ns=fixed, block=DEFAULT_BLOCK,
            grid=profile.full_wave_grid(DEFAULT_BLOCK)))
    table = pd.concat(launches, ignore_index=True)  # each level's expansion, then its compaction
    table = table.iloc[np.lexsort((table["phase"] == "compact", table["level"]))]
    table = table.assign(mode="cte", bottleneck="instructions")
    return table.reindex(columns=columns).reset_index(drop=True)


__all__ = [
    "CteCosts", "LOG2_WARP", "MODEL_COLUMNS", "ROUND_COLUMNS", "costs_from_code", "cte_launches", "cte_rounds", "kernel_model", "launch_costs",
    "makespan_ns", "model_label", "reduction_steps", "t_1d", "t_cte", "t_sw", "warp_ns_1d", "warp_ns_cte",
    "warp_ns_sw",
]
