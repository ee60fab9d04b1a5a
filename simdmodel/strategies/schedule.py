"""A strategy's decomposition of one frontier, as arrays: its work units and warp steps.

`Schedule` holds what `Strategy.decompose` wrote for a run of work units: per warp step the warp
that runs it, the edges its active lanes take and its UA / UR lanes. Lane tables sum it
(`step_lane_sums`); the operator machine turns each step into jobs. `schedules` walks a frontier
in blocks of units whose edges fit a bounded buffer, so a hub-heavy level never needs its
whole decomposition in memory at once.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numba
import numpy as np

from .fields import LANE_FIELDS, WARP_SIZE

BLOCK_EDGES = 1 << 22  # edges a block of units may hold (one unit may exceed it alone)


@dataclass(frozen=True)
class Schedule:
    """Steps of units `first_unit` .. `first_unit + units - 1` (unit_ptr indexes the entries).

    Step s runs on warp `step_warp[s]` = local unit * unit_warps + warp in unit, and takes edges
    `edges[step_end[s-1]:step_end[s]]` (step_end[-1] = 0).
    """

    first_unit: int
    unit_ptr: np.ndarray
    step_warp: np.ndarray
    step_end: np.ndarray
    step_ua: np.ndarray
    step_ur: np.ndarray
    edges: np.ndarray

    @property
    def units(self) -> int:
        return self.unit_ptr.size - 1

    @property
    def steps(self) -> int:
        return self.step_warp.size


def queue_units(entries: int, unit_entries: int) -> np.ndarray:
    """unit_ptr of a queue of `entries` cut into units of `unit_entries` (the last may be short)."""
    return np.append(np.arange(0, entries, unit_entries, dtype=np.int64), np.int64(entries))


def unit_blocks(unit_edges: np.ndarray, limit: int) -> list[tuple[int, int]]:
    """Consecutive unit ranges [a, b) whose edges add up to at most `limit` (or one unit alone)."""
    blocks = []
    total = np.concatenate(([0], np.cumsum(unit_edges, dtype=np.int64)))
    start = 0
    units = unit_edges.size
    while start < units:
        end = int(np.searchsorted(total, total[start] + limit, side="right")) - 1
        end = min(max(end, start + 1), units)
        blocks.append((start, end))
        start = end
    return blocks


def decompose(strategy, params: tuple, starts: np.ndarray, degrees: np.ndarray, unit_ptr: np.ndarray,
              first_unit: int = 0) -> Schedule:
    """Run `strategy`'s decomposition over the units of `unit_ptr` (entries `starts`, `degrees`)."""
    edges_total = int(degrees[unit_ptr[0]:unit_ptr[-1]].sum()) if unit_ptr.size > 1 else 0
    steps = max(edges_total, 1)  # every step has at least one active lane
    step_warp = np.empty(steps, dtype=np.int32)
    step_end = np.empty(steps, dtype=np.int64)
    step_ua = np.empty(steps, dtype=np.int32)
    step_ur = np.empty(steps, dtype=np.int32)
    edges = np.empty(max(edges_total, 1), dtype=np.int32)
    count = strategy.decompose(starts, degrees, unit_ptr, np.asarray(params, dtype=np.int64), step_warp,
                               step_end, step_ua, step_ur, edges)
    return Schedule(first_unit, unit_ptr, step_warp[:count], step_end[:count], step_ua[:count], step_ur[:count],
                    edges[:edges_total])


def several_blocks(degrees: np.ndarray, unit_ptr: np.ndarray, limit: int | None = None) -> bool:
    """Whether `schedules` cuts the units of `unit_ptr` into more than one block: more than one unit, and more
    edges than a block holds."""
    limit = BLOCK_EDGES if limit is None else limit
    return unit_ptr.size > 2 and int(degrees[unit_ptr[0]:unit_ptr[-1]].sum()) > limit


def schedules(strategy, params: tuple, starts: np.ndarray, degrees: np.ndarray, unit_ptr: np.ndarray,
              limit: int | None = None) -> Iterator[Schedule]:
    """The decomposition of every unit of `unit_ptr`, in blocks of at most `limit` edges
    (default BLOCK_EDGES)."""
    limit = BLOCK_EDGES if limit is None else limit
    units = unit_ptr.size - 1
    if units <= 0:
        return
    if not several_blocks(degrees, unit_ptr, limit):
        yield decompose(strategy, params, starts, degrees, unit_ptr)
        return
    cumulative = np.concatenate(([0], np.cumsum(degrees, dtype=np.int64)))
    unit_edges = cumulative[unit_ptr[1:]] - cumulative[unit_ptr[:-1]]
    for a, b in unit_blocks(unit_edges, limit):
        yield decompose(strategy, params, starts, degrees, unit_ptr[a:b + 1], a)


@numba.njit(cache=True, nogil=True)
def step_lane_sums(step_end, step_ua, step_ur):
    """(warp_iterations, total, useful, UA, UR, idle) lanes of a run of steps (LANE_FIELDS order)."""
    steps = step_end.size
    ua = 0
    ur = 0
    for s in range(steps):
        ua += step_ua[s]
        ur += step_ur[s]
    useful = step_end[steps - 1] if steps else 0
    total = WARP_SIZE * steps
    out = np.zeros(6, dtype=np.int64)
    out[0] = steps
    out[1] = total
    out[2] = useful
    out[3] = ua
    out[4] = ur
    out[5] = total - useful - ua - ur
    return out


def schedule_lanes(strategy, params: tuple, degrees: np.ndarray, unit_ptr: np.ndarray) -> np.ndarray:
    """LANE_FIELDS sums of the units of `unit_ptr` over entries of `degrees`, from the decomposition."""
    starts = np.zeros(degrees.size, dtype=np.int64)  # which edges the lanes take does not change the counts
    out = np.zeros(len(LANE_FIELDS), dtype=np.int64)
    for block in schedules(strategy, params, starts, degrees, unit_ptr):
        out += step_lane_sums(block.step_end, block.step_ua, block.step_ur)
    return out


def decomposed_lanes(strategy, params: tuple, geometry, degrees: np.ndarray, level_ptr: np.ndarray) -> np.ndarray:
    """Per-level LANE_FIELDS sums (levels x 6) of a queue walked level by level, from the decomposition."""
    levels = level_ptr.size - 1
    out = np.zeros((levels, len(LANE_FIELDS)), dtype=np.int64)
    for level in range(levels):
        lo, hi = int(level_ptr[level]), int(level_ptr[level + 1])
        front = np.asarray(degrees[lo:hi], dtype=np.int64)
        out[level] = schedule_lanes(strategy, params, front, queue_units(front.size, geometry.unit_entries))
    return out
