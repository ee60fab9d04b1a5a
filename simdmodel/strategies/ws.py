"""Warp segmentation ws: a warp strides over the concatenated edge lists of 32 frontier entries.

Seed 004 §2.1.2: a warp takes 32 consecutive entries and its lanes walk the E_w concatenated
edges, T = ceil(E_w/32), useful = E_w; the whole warp is one group, so UA = 32*T - E_w and UR = 0.
The binary searches and segmented reductions it needs are overheads, not lanes.
"""
import numba
import numpy as np

from .concatenated import concatenated_steps
from .fields import WARP_SIZE
from .registry import Geometry, Strategy, register


@numba.njit(cache=True, nogil=True)
def decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges):
    """Strategy.decompose for ws: a unit is a warp's (at most) 32 entries; step r takes the r-th
    32 of their concatenated edges, lane l the (32r + l)-th. All idle lanes are UA."""
    return concatenated_steps(starts, degrees, unit_ptr, 1, step_warp, step_end, step_ua, step_ur, edges)


@numba.njit(cache=True, nogil=True)
def count_lanes(degrees, level_ptr):
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


WS = register(Strategy(
    name="ws",
    params=(),
    description=__doc__.strip().splitlines()[0],
    geometry=lambda p: Geometry(WARP_SIZE, 1, WARP_SIZE),
    decompose=decompose,
    label=lambda p: "ws",
    parse_label=lambda label: () if label == "ws" else None,
    fast_lanes=count_lanes,
))
