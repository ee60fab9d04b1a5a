"""`compact`: the second phase of a data-driven round, the level array compacted into the sorted queue.

One thread per node over warp-sized chunks (like `topo`'s outer loop; the CUDA kernel hands the
chunks out in ascending order by an atomic ticket, which this model, counting jobs per launched
warp as chunk c on warp c % warps, treats like a grid stride): per warp step ANI re-reads
`num_nodes`, NF1 reads `level[node]` and keeps nodes labelled this round, and when any lane
passes, one OP job stores the passing nodes at consecutive queue positions (their rank in the
next frontier; the per-warp offsets come from a prefix sum this model does not count, like
simdmodel's scan overheads). Every access is a streaming one, so its counts are closed forms
instead of a trace: each `level` sector and each queue sector misses once in a launch-cold L2, a
queue sector split between two warp steps hits on its second touch, and DRAM rows are walked in
order, so the first sector of each DRAM block misses the row buffer and the rest hit.
"""
from __future__ import annotations

import numpy as np

from ..layout import ELEMENTS_PER_SECTOR
from ._jobs import ANI, NF1, OP, SERVER_FIELDS


def _ceil(a, b):
    return -(-a // b)


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
    chunk_of = np.asarray(next_front, dtype=np.int64) // 32
    passing_chunks, per_chunk = np.unique(chunk_of, return_counts=True)
    if passing_chunks.size:
        first = np.concatenate(([0], np.cumsum(per_chunk)[:-1]))
        touched = int(np.sum((first + per_chunk - 1) // ELEMENTS_PER_SECTOR - first // ELEMENTS_PER_SECTOR + 1))
        distinct = _ceil(next_front.size, ELEMENTS_PER_SECTOR)
        blocks = _ceil(distinct, sectors_per_block)
        counts[OP] = (passing_chunks.size, touched, touched - distinct, distinct, distinct - blocks, blocks)
    per_warp = 2 * np.bincount(np.arange(steps) % warps, minlength=warps)
    per_warp += np.bincount(passing_chunks % warps, minlength=warps)
    return counts, per_warp
