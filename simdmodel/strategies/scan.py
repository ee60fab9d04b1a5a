"""Scan-based gathering scan-C: a CTA of C threads strides over its C entries' concatenated edges.

Seed 001 §4.1 ("fine-grained, scan-based gathering"): after a CTA-wide prefix sum the CTA runs
`for i = tid; i < E; i += C`, so warp j runs round r only when 32*j + r*C < E. Lane slots are
32 x rounds actually run, useful = E, UA = slots - E, UR = 0. The prefix sum is an overhead.
"""
import numba
import numpy as np

from .concatenated import concatenated_steps
from .fields import WARP_SIZE
from .registry import Geometry, Param, Strategy, register

DEFAULT_CTA_SIZE = 256
CTA_SIZE = Param("cta_size", "CTA size", "C", DEFAULT_CTA_SIZE, WARP_SIZE, 1024, WARP_SIZE, binds_block=True)
"""The CTA size C of a strategy whose CTA is the launch's block (scan, swc)."""



@numba.njit(cache=True, nogil=True)
def decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges):
    """Strategy.decompose for scan-C: a unit is a CTA's C entries, run by its C/32 warps. Round r
    of warp j takes edges r*C + 32j .. r*C + 32j + 31 of the CTA's concatenated edges, so in
    issue order (rounds, then warps) the steps take consecutive 32-edge blocks, block k on warp
    k % (C/32). All idle lanes are UA."""
    return concatenated_steps(starts, degrees, unit_ptr, params[0] // WARP_SIZE, step_warp, step_end, step_ua,
                              step_ur, edges)


@numba.njit(cache=True, nogil=True)
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


SCAN = register(Strategy(
    name="scan",
    params=(CTA_SIZE,),
    description=__doc__.strip().splitlines()[0],
    geometry=lambda p: Geometry(p[0], p[0] // WARP_SIZE, WARP_SIZE),
    decompose=decompose,
    label=lambda p: "scan",
    parse_label=lambda label: () if label == "scan" else None,
    fast_lanes=count_lanes,
))
