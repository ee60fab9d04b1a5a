"""The data-driven expansion of any registered mapping strategy, as warp-level jobs (seed 003 §6.3).

The launch strides over the sorted frontier queue in the strategy's work units
(`simdmodel.strategies`: unit u takes `unit_entries` queue positions and runs on unit slot
u % slots of the launch, slot k being launched warps k*unit_warps .. k*unit_warps + unit_warps - 1).
Per unit, in program order: each warp j of the unit with entries loads them (ANI reads the queue
positions, ERL reads `row_start[v]` and `row_start[v+1]`), then the strategy's decomposition
gives the warp steps in issue order, each an EDL, an NF2 and, when a lane stores, an OP job
(Fig. 4). Which lane takes which edge comes only from the strategy's decomposition, the same one
its lane accounting uses, so jobs and lanes cannot drift. Prefix sums, searches and barriers
are not memory jobs.
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.errors import InputError
from simdmodel.strategies import queue_units, schedules, several_blocks

from ..alongside import ahead
from ._jobs import (STEPS_AHEAD, JobBuffer, JobTrace, fits, generate, inner_iteration, input_jobs, lane_buffers,
                    prefetch_step)
from .split import UNMARKED, SplitFill

INPUT_SECTORS_PER_WARP = 72  # ANI: <= 5 queue sectors of 32 entries; ERL: <= 2 x 32 row_start sectors


@numba.njit(cache=True, nogil=True)
def unit_warp(unit, unit_warps, slots):
    """The first launched warp of work unit `unit`: unit slot unit % slots, `unit_warps` warps a slot."""
    return (unit % slots) * unit_warps


@numba.njit(cache=True, nogil=True)
def unit_steps(step_warp, unit_warps, units):
    """First step of each unit (units + 1 offsets): steps come in unit order."""
    out = np.zeros(units + 1, dtype=np.int64)
    for s in range(step_warp.size):
        out[step_warp[s] // unit_warps + 1] += 1
    for u in range(units):
        out[u + 1] += out[u]
    return out


@numba.njit(cache=True, nogil=True, _nrt=False)
def _fill(indptr, indices, levels, stamp, level, mark, before, front, unit_ptr, first_unit, unit_warps, warp_entries,
          slots, first_step, step_warp, step_end, edges, b_row, b_edge, b_level, b_queue, elements, dst, stores, keys,
          unit, units, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    while unit < units:
        lo = unit_ptr[unit]
        count = unit_ptr[unit + 1] - lo
        s0 = first_step[unit]
        s1 = first_step[unit + 1]
        edges_before = step_end[s0 - 1] if s0 > 0 else 0
        work = step_end[s1 - 1] - edges_before if s1 > s0 else 0
        need_jobs = 3 * unit_warps + 3 * (s1 - s0)
        need_sectors = INPUT_SECTORS_PER_WARP * unit_warps + 3 * work
        if not fits(n_jobs, n_sectors, need_jobs, need_sectors, job_server, sectors):
            return unit, n_jobs, n_sectors, need_jobs, need_sectors
        first_warp = unit_warp(first_unit + unit, unit_warps, slots)
        for j in range(unit_warps):
            a = j * warp_entries
            b = min(a + warp_entries, count)
            if a >= b:
                break
            n_jobs, n_sectors = input_jobs(first_warp + j, front, lo + a, lo + b, b_queue, b_row, elements, keys,
                                           job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
        for s in range(s0, s1):
            if s + STEPS_AHEAD < s1:
                prefetch_step(edges, step_end[s + STEPS_AHEAD - 1], step_end[s + STEPS_AHEAD], indices, levels, stamp,
                              mark, before)
            e0 = step_end[s - 1] if s > 0 else 0
            lanes = step_end[s] - e0
            n_jobs, n_sectors = inner_iteration(first_warp + step_warp[s] % unit_warps, edges, e0, lanes,
                                                indices, levels, stamp, level, mark, before, b_edge, b_level, dst,
                                                stores, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                                                n_sectors)
        unit += 1
    return unit, n_jobs, n_sectors, 0, 0


def _block_bound(block, geometry, edges_total: int) -> tuple[int, int]:
    """Jobs and sectors of the first block of units, scaled to the launch's edges: the bound the
    buffers start at (enough for the whole launch when its blocks are alike)."""
    share = max(1.0, edges_total / max(block.edges.size, 1))
    return (int(share * (3 * block.units * geometry.unit_warps + 3 * block.steps)),
            int(share * (INPUT_SECTORS_PER_WARP * block.units * geometry.unit_warps + 3 * block.edges.size)))


def expansion_size(graph, front, mapping) -> tuple[int, int]:
    """The jobs and sectors `expansion_jobs` reserves for this launch (from its first block of units)."""
    front = np.asarray(front)
    starts = graph.indptr[front]
    degrees = graph.indptr[front + 1] - starts
    unit_ptr = queue_units(front.size, mapping.geometry.unit_entries)
    for block in schedules(mapping.spec, mapping.params, starts, degrees, unit_ptr):
        return _block_bound(block, mapping.geometry, int(degrees.sum()))
    return 0, 0


def expansion_jobs(graph, levels, stamp, level, front, mapping, layout, warps: int,
                   buffer: JobBuffer | None = None, split: SplitFill | None = None) -> JobTrace:
    """JobTrace of the expansion of frontier `front` (level `level`) by `mapping` on `warps` launched warps.

    `stamp` marks the vertices stored this round (see `_jobs.expand_edges`); it is updated. With a
    `buffer` the jobs go there and the trace is a view of it, valid until the buffer is used again.
    With `split` a large block of units is made by two CPUs at once (the same jobs).
    """
    reused = buffer is not None
    geometry = mapping.geometry
    slots = warps // geometry.unit_warps
    if slots < 1:
        raise InputError(f"{mapping.label} needs at least {geometry.unit_warps} warps a launch, got {warps}")
    front = np.asarray(front)
    starts = graph.indptr[front]
    degrees = graph.indptr[front + 1] - starts
    unit_ptr = queue_units(front.size, geometry.unit_entries)
    edges_total = int(degrees.sum())
    base = layout.base_sector
    sized = False
    blocks = schedules(mapping.spec, mapping.params, starts, degrees, unit_ptr)
    for block in ahead(blocks, several_blocks(degrees, unit_ptr)):
        if not sized:
            need = _block_bound(block, geometry, edges_total)
            if buffer is None:
                buffer = JobBuffer(*need)
            else:
                buffer.reuse(*need)
            sized = True
        first_step = unit_steps(block.step_warp, geometry.unit_warps, block.units)

        def args_of(mark, before, block=block, first_step=first_step):
            return (graph.indptr, graph.indices, levels, stamp, level, mark, before, front, block.unit_ptr,
                    block.first_unit, geometry.unit_warps, geometry.warp_entries, slots, first_step, block.step_warp,
                    block.step_end, block.edges, base["row_start"], base["edge_dst"], base["level"], base["queue"],
                    *lane_buffers())

        if split is not None and split.splits(block.steps, block.units):
            split.generate(_fill, args_of, *split.cut(first_step, block.step_end), buffer, graph.indices, block.edges)
        else:
            generate(_fill, args_of(*UNMARKED), 0, block.units, buffer)
    if not sized:  # an empty frontier
        buffer = JobBuffer(0, 0)
    return buffer.trace(warps, views=reused)
