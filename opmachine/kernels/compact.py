"""`compact`: the second phase of a data-driven round, the level array compacted into the sorted queue.

One thread per node over warp-sized chunks, one full wave: launched warp w walks the K =
`compact_chunks_per_warp` consecutive chunks from w * K (so every chunk is held at once, and chunk
c is on warp c // K). Per warp step ANI re-reads `num_nodes` (the loop test, as in `topo`), NF1
reads `level[node]` and keeps nodes labelled this round; when any lane of a chunk passes, one OP
job stores its passing nodes at consecutive queue positions (their rank in the next frontier).
The offsets come from a prefix sum over the warps' counts that this model does not count, like
simdmodel's scan overheads (the CUDA kernel does it with atomics, which are not loads or stores;
its time is the profile's `grid_scan_ns`).

Every access is a streaming one, so with a launch-cold L2 the counts are closed forms
(`compact_counts`): each `level` sector and each queue sector misses once, a queue sector split
between two warp steps hits on its second touch, and DRAM rows are walked in order, so the first
sector of each DRAM block misses the row buffer and the rest hit. A warm L2 decides each sector's
fate by what it holds, so there the launch is a trace (`compact_jobs`) run through the L2 model.
"""
from __future__ import annotations

import numba
import numpy as np

from ..layout import ELEMENTS_PER_SECTOR
from ._jobs import ANI, NF1, OP, SERVER_FIELDS, JobTrace, push_run


def _ceil(a, b):
    return -(-a // b)


@numba.njit(cache=True, nogil=True)
def _ascending_chunks(front):
    """`_passing_chunks` of a front in one pass, and whether it was in ascending order (if not, the arrays
    are empty)."""
    chunks = np.empty(front.size, dtype=np.int64)
    passing = np.empty(front.size, dtype=np.int64)
    first = np.empty(front.size, dtype=np.int64)
    k = -1
    for i in range(front.size):
        if i and front[i] < front[i - 1]:
            return chunks[:0], passing[:0], first[:0], False
        chunk = np.int64(front[i]) // 32
        if k < 0 or chunk != chunks[k]:
            k += 1
            chunks[k], passing[k], first[k] = chunk, 0, i
        passing[k] += 1
    return chunks[:k + 1], passing[:k + 1], first[:k + 1], True


def _passing_chunks(next_front: np.ndarray):
    """The chunks holding nodes of `next_front` (ascending), their passing counts and first ranks. A frontier
    comes sorted, and then its chunks are its runs (`_ascending_chunks`, 8x faster than sorting them again)."""
    front = np.asarray(next_front)
    if front.size:
        chunks, passing, first, ascending = _ascending_chunks(front)
        if ascending:
            return chunks, passing, first
    chunks, passing = np.unique(front.astype(np.int64) // 32, return_counts=True)
    return chunks, passing, np.concatenate(([0], np.cumsum(passing)[:-1])).astype(np.int64)


def compact_chunks_per_warp(n: int, warps: int) -> int:
    """Consecutive 32-node chunks per launched warp: ceil(ceil(n / 32) / warps), at least 1."""
    return max(1, _ceil(_ceil(n, 32), warps))


def _warp_chunks(n: int, passing_chunks: np.ndarray, warps: int) -> tuple[np.ndarray, np.ndarray]:
    """Per launched warp: the chunks it walks and those of them with a passing node."""
    per_chunk_warp = compact_chunks_per_warp(n, warps)
    return (np.bincount(np.arange(_ceil(n, 32)) // per_chunk_warp, minlength=warps),
            np.bincount(passing_chunks // per_chunk_warp, minlength=warps))


def compact_warp_steps(n: int, next_front: np.ndarray, warps: int) -> tuple[np.ndarray, np.ndarray]:
    """Per launched warp: its steps (one NF1 and one ANI job each) and its stores (one OP job each)."""
    return _warp_chunks(n, _passing_chunks(next_front)[0], warps)


def compact_counts(n: int, next_front: np.ndarray, warps: int, block_bytes: int):
    """Per-server counts (6 servers x SERVER_FIELDS, int64) and jobs per launched warp of one launch.

    `next_front` holds the vertices labelled this round in ascending order.
    """
    counts = np.zeros((6, len(SERVER_FIELDS)), dtype=np.int64)
    steps = _ceil(n, 32)
    sectors_per_block = block_bytes // (4 * ELEMENTS_PER_SECTOR)
    counts[ANI] = (steps, steps, steps - 1, 1, 0, 1)
    level_sectors = _ceil(n, ELEMENTS_PER_SECTOR)
    level_blocks = _ceil(level_sectors, sectors_per_block)
    counts[NF1] = (steps, level_sectors, 0, level_sectors, level_sectors - level_blocks, level_blocks)
    passing_chunks, per_chunk, first = _passing_chunks(next_front)
    if passing_chunks.size:
        touched = int(np.sum((first + per_chunk - 1) // ELEMENTS_PER_SECTOR - first // ELEMENTS_PER_SECTOR + 1))
        distinct = _ceil(next_front.size, ELEMENTS_PER_SECTOR)
        blocks = _ceil(distinct, sectors_per_block)
        counts[OP] = (passing_chunks.size, touched, touched - distinct, distinct, distinct - blocks, blocks)
    walked, stores = _warp_chunks(n, passing_chunks, warps)
    return counts, 2 * walked + stores


@numba.njit(cache=True, nogil=True)
def _compact_trace_njit(n, passing_chunks, first_rank, passing, warps, per_warp, level_base, ani_sector,
                        queue_base):
    steps = (n + 31) // 32
    jobs = 2 * steps + passing_chunks.size
    server = np.empty(jobs, dtype=np.int8)
    warp = np.empty(jobs, dtype=np.int32)
    ptr = np.zeros(jobs + 1, dtype=np.int64)
    # NF1 + ANI: at most 5 sectors a chunk; OP: a run of k ranks spans at most k // 8 + 2 sectors
    sectors = np.empty(5 * steps + passing.sum() // ELEMENTS_PER_SECTOR + 2 * passing_chunks.size, dtype=np.int32)
    nj = 0
    ns = 0
    p = 0  # next passing chunk
    for w in range(min(warps, -(-steps // per_warp))):
        first, end = w * per_warp, min(w * per_warp + per_warp, steps)
        for c in range(first, end):  # NF1 of the chunk, then the loop test's ANI
            nj, ns = push_run(NF1, w, 32 * c, min(32 * c + 32, n) - 32 * c, level_base, server, warp, ptr, sectors,
                              nj, ns)
            nj, ns = push_run(ANI, w, 0, 1, ani_sector, server, warp, ptr, sectors, nj, ns)
        while p < passing_chunks.size and passing_chunks[p] < end:  # the OP stores, once the offset is known
            nj, ns = push_run(OP, w, first_rank[p], passing[p], queue_base, server, warp, ptr, sectors, nj, ns)
            p += 1
    return server, warp, ptr, sectors[:ns]


def compact_jobs(n: int, next_front: np.ndarray, warps: int, layout) -> JobTrace:
    """The compaction's jobs as a trace, for a warm L2 whose contents decide each sector's fate.

    Warp w's jobs in program order: per chunk NF1 (the chunk's `level` sectors) then ANI (the
    `num_nodes` sector), for its `compact_chunks_per_warp` chunks; then one OP per passing chunk
    (the queue sectors of its ranks). Cold, it gives `compact_counts`' jobs, L2 sectors, L2 hits
    and DRAM sectors (its row-buffer split is the closed form's only approximation).
    """
    passing_chunks, passing, first_rank = _passing_chunks(next_front)
    base = layout.base_sector
    server, warp, ptr, sectors = _compact_trace_njit(
        n, passing_chunks, first_rank, passing, warps, compact_chunks_per_warp(n, warps), base["level"],
        base["num_nodes"], base["queue"])
    return JobTrace(server, warp, ptr, sectors, warps)
