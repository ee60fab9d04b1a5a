"""`topo`: the topology-driven BFS kernel of seed 003 Listing 2, one thread per node, grid-stride.

Round LEVEL = L+1 expands the frontier of level L. Thread t of a launch with T threads visits nodes
t, t+T, ...; with T a multiple of 32, warp w's k-th step covers the 32 nodes of chunk w + k*(T/32).
Per warp step (Fig. 4): ANI re-reads `num_nodes`, NF1 reads `level[node]`; if any lane passes the
filter, ERL reads `row_start[node]` and `row_start[node+1]`; the inner loop runs max(active
degrees) times, each an EDL, an NF2 and, when a lane stores, an OP job.

The active nodes of a chunk are one work unit of the `group` strategy with S = 1 (one lane per
node, inactive lanes idle as empty groups): `topology_units` cuts the frontier so, and the jobs
and `simdmodel.topology_lanes` both take the inner loop from that one decomposition.
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.strategies import schedules, several_blocks
from simdmodel.topology import THREAD_PER_NODE, topology_units

from ..alongside import ahead
from ._jobs import (ANI, ERL, NF1, STEPS_AHEAD, JobBuffer, JobTrace, fits, generate, inner_iteration, lane_buffers,
                    prefetch_step, push_job, push_run)
from .expand import INPUT_SECTORS_PER_WARP, unit_steps
from .split import UNMARKED, SplitFill


@numba.njit(cache=True, nogil=True, _nrt=False)
def _fill(indptr, indices, levels, stamp, level, mark, before, warps, front, unit_ptr, unit_chunk, first_step,
          step_end, edges, b_ani, b_row, b_edge, b_level, elements, dst, stores, keys, chunk, chunks, job_server,
          job_warp, job_ptr, sectors, n_jobs, n_sectors):
    n = levels.size
    units = unit_chunk.size
    unit = np.searchsorted(unit_chunk, chunk)  # the first unit at or after `chunk`
    while chunk < chunks:
        active = unit < units and unit_chunk[unit] == chunk
        need_jobs = 2
        need_sectors = 1 + INPUT_SECTORS_PER_WARP
        s0 = 0
        s1 = 0
        if active:
            s0 = first_step[unit]
            s1 = first_step[unit + 1]
            need_jobs += 2 + 3 * (s1 - s0)
            if s1 > s0:
                need_sectors += 3 * (step_end[s1 - 1] - (step_end[s0 - 1] if s0 > 0 else 0))
        if not fits(n_jobs, n_sectors, need_jobs, need_sectors, job_server, sectors):
            return chunk, n_jobs, n_sectors, need_jobs, need_sectors
        warp = chunk % warps
        first = chunk * 32
        last = min(first + 32, n)
        n_jobs, n_sectors = push_run(ANI, warp, 0, 1, b_ani, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
        n_jobs, n_sectors = push_run(NF1, warp, first, last - first, b_level, job_server, job_warp, job_ptr, sectors,
                                     n_jobs, n_sectors)
        if active:
            lo = unit_ptr[unit]
            count = unit_ptr[unit + 1] - lo
            for i in range(count):
                elements[i] = front[lo + i]
            n_jobs, n_sectors = push_job(ERL, warp, elements, 0, count, b_row, keys, job_server, job_warp, job_ptr,
                                         sectors, n_jobs, n_sectors)
            for i in range(count):
                elements[i] = front[lo + i] + 1
            n_jobs, n_sectors = push_job(ERL, warp, elements, 0, count, b_row, keys, job_server, job_warp, job_ptr,
                                         sectors, n_jobs, n_sectors)
            for s in range(s0, s1):
                if s + STEPS_AHEAD < s1:
                    prefetch_step(edges, step_end[s + STEPS_AHEAD - 1], step_end[s + STEPS_AHEAD], indices, levels,
                                  stamp, mark, before)
                e0 = step_end[s - 1] if s > 0 else 0
                n_jobs, n_sectors = inner_iteration(warp, edges, e0, step_end[s] - e0, indices, levels,
                                                    stamp, level, mark, before, b_edge, b_level, dst, stores, keys,
                                                    job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
            unit += 1
        chunk += 1
    return chunk, n_jobs, n_sectors, 0, 0


def _bound(chunks: int, degrees: np.ndarray, unit_ptr: np.ndarray) -> tuple[int, int]:
    """Every chunk's ANI and NF1 (<= 6 sectors), per active chunk two ERL and max(degrees) steps of three
    jobs (one lane a node)."""
    units = unit_ptr.size - 1
    steps = int(np.maximum.reduceat(degrees, unit_ptr[:-1]).sum()) if units else 0
    return 2 * chunks + 2 * units + 3 * steps, 6 * chunks + INPUT_SECTORS_PER_WARP * units + 3 * int(degrees.sum())


def topo_size(graph, front: np.ndarray) -> tuple[int, int]:
    """The jobs and sectors `topo_jobs` reserves for the launch that expands `front` (sorted): a bound
    the jobs fit in, so the buffers never regrow."""
    return _bound(-(-graph.n // 32), graph.indptr[front + 1] - graph.indptr[front], topology_units(front))


def topo_jobs(graph, levels: np.ndarray, stamp: np.ndarray, level: int, layout, warps: int,
              buffer: JobBuffer | None = None, split: SplitFill | None = None) -> JobTrace:
    """JobTrace of the topo launch that expands frontier `level` with `warps` launched warps (into
    `buffer` if given, and with `split` by two CPUs at once, as `expand.expansion_jobs` does)."""
    reused = buffer is not None
    chunks = -(-graph.n // 32)
    front = np.flatnonzero(levels == level).astype(np.int32)
    starts = graph.indptr[front]
    degrees = graph.indptr[front + 1] - starts
    unit_ptr = topology_units(front)
    base = layout.base_sector
    units = unit_ptr.size - 1
    need = _bound(chunks, degrees, unit_ptr)
    if buffer is None:
        buffer = JobBuffer(*need)
    else:
        buffer.reuse(*need)
    chunk = 0
    blocks = schedules(THREAD_PER_NODE.spec, THREAD_PER_NODE.params, starts, degrees, unit_ptr)
    for block in ahead(blocks, several_blocks(degrees, unit_ptr)):
        unit_chunk = (front[block.unit_ptr[:-1]] // 32).astype(np.int64)
        last = block.first_unit + block.units == units
        stop = chunks if last else int(unit_chunk[-1]) + 1
        first_step = unit_steps(block.step_warp, 1, block.units)

        def args_of(mark, before, block=block, unit_chunk=unit_chunk, first_step=first_step):
            return (graph.indptr, graph.indices, levels, stamp, level, mark, before, warps, front, block.unit_ptr,
                    unit_chunk, first_step, block.step_end, block.edges, base["num_nodes"], base["row_start"],
                    base["edge_dst"], base["level"], *lane_buffers())

        if split is not None and split.splits(block.steps, block.units):
            units_at, edge_at = split.cut(first_step, block.step_end)
            bounds = np.concatenate(([chunk], unit_chunk[units_at[1:-1]], [stop]))  # a piece's chunks
            split.generate(_fill, args_of, bounds, edge_at, buffer, graph.indices, block.edges)
        else:
            generate(_fill, args_of(*UNMARKED), chunk, stop, buffer)
        chunk = stop
    if chunk < chunks:  # no active node at all: every chunk only loads and tests
        empty = np.zeros(0, dtype=np.int64)
        args = (graph.indptr, graph.indices, levels, stamp, level, *UNMARKED, warps, front, np.zeros(1, dtype=np.int64),
                empty, np.zeros(1, dtype=np.int64), empty, np.zeros(0, dtype=np.int32), base["num_nodes"],
                base["row_start"], base["edge_dst"], base["level"], *lane_buffers())
        generate(_fill, args, chunk, chunks, buffer)
    return buffer.trace(warps, views=reused)
