"""Scan-based gathering scan-C: a CTA of C threads strides over its C entries' concatenated edges.

Seed 001 §4.1 ("fine-grained, scan-based gathering"): after a CTA-wide prefix sum the CTA runs
`for i = tid; i < E; i += C`, so warp j runs round r only when 32*j + r*C < E. Lane slots are
32 x rounds actually run, useful = E, UA = slots - E, UR = 0. The prefix sum is an overhead.
"""
import numba
import numpy as np

from .lanes import WARP_SIZE


@numba.njit(cache=True)
def count_lanes(degrees, level_ptr, cta_size):
    """Per-level (warp_iterations, total, useful, UA, UR, idle) lanes for CTA size C."""
    C = cta_size
    warps = C // WARP_SIZE
    levels = level_ptr.size - 1
    out = np.zeros((levels, 6), dtype=np.int64)
    for level in range(levels):
        lo = level_ptr[level]
        hi = level_ptr[level + 1]
        rounds = 0
        useful = 0
        for first in range(lo, hi, C):
            edges = 0
            for i in range(first, min(first + C, hi)):
                edges += degrees[i]
            useful += edges
            for j in range(warps):
                start = WARP_SIZE * j
                if edges > start:
                    rounds += (edges - start + C - 1) // C
        out[level, 0] = rounds
        out[level, 1] = WARP_SIZE * rounds
        out[level, 2] = useful
        out[level, 3] = WARP_SIZE * rounds - useful
    return out
