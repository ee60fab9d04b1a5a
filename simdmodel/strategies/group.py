"""Group mapping sm-S: each frontier vertex gets a group of S lanes, floor(32/S) groups a warp.

Seed 000 §4, Eqs. 1-2 and Fig. 4: frontier position i goes to warp i // g, group i % g (g =
floor(32/S)); a warp runs T = max_k ceil(d_k/S) iterations; UA_k = S*ceil(d_k/S) - d_k;
UR_k = S*(T - ceil(d_k/S)), counting empty groups of a partial last warp; idle = (32 - g*S)*T.
"""
import numba
import numpy as np

from .lanes import WARP_SIZE


@numba.njit(cache=True)
def count_lanes(degrees, level_ptr, group_size):
    """Per-level (warp_iterations, total, useful, UA, UR, idle) lanes for group size S."""
    S = group_size
    groups = WARP_SIZE // S
    levels = level_ptr.size - 1
    out = np.zeros((levels, 6), dtype=np.int64)
    for level in range(levels):
        lo = level_ptr[level]
        hi = level_ptr[level + 1]
        iterations = 0  # sum over warps of T
        chunks = 0  # sum over vertices of ceil(d/S)
        useful = 0
        for first in range(lo, hi, groups):
            last = min(first + groups, hi)
            longest = 0
            for i in range(first, last):
                d = degrees[i]
                c = (d + S - 1) // S
                chunks += c
                useful += d
                if c > longest:
                    longest = c
            iterations += longest
        out[level, 0] = iterations
        out[level, 1] = WARP_SIZE * iterations
        out[level, 2] = useful
        out[level, 3] = S * chunks - useful
        out[level, 4] = S * groups * iterations - S * chunks
        out[level, 5] = (WARP_SIZE - groups * S) * iterations
    return out
