"""Warp segmentation ws: a warp strides over the concatenated edge lists of 32 frontier entries.

Seed 004 §2.1.2: a warp takes 32 consecutive entries and its lanes walk the E_w concatenated
edges, T = ceil(E_w/32), useful = E_w; the whole warp is one group, so UA = 32*T - E_w and UR = 0.
The binary searches and segmented reductions it needs are overheads, not lanes.
"""
import numba
import numpy as np

from .lanes import WARP_SIZE


@numba.njit(cache=True)
def count_lanes(degrees, level_ptr, unused_param):
    """Per-level (warp_iterations, total, useful, UA, UR, idle) lanes for warp segmentation."""
    levels = level_ptr.size - 1
    out = np.zeros((levels, 6), dtype=np.int64)
    for level in range(levels):
        lo = level_ptr[level]
        hi = level_ptr[level + 1]
        iterations = 0
        useful = 0
        for first in range(lo, hi, WARP_SIZE):
            edges = 0
            for i in range(first, min(first + WARP_SIZE, hi)):
                edges += degrees[i]
            iterations += (edges + WARP_SIZE - 1) // WARP_SIZE
            useful += edges
        out[level, 0] = iterations
        out[level, 1] = WARP_SIZE * iterations
        out[level, 2] = useful
        out[level, 3] = WARP_SIZE * iterations - useful
    return out
