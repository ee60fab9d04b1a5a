"""Scan+warp+CTA gathering swc-C: each list goes to the coarsest gatherer it fills (seed 001 §4.1).

A CTA of C threads takes C frontier entries. An adjacency list longer than the CTA (degree > C) is
strip-mined by the whole CTA (`for i = tid; i < d; i += C`, the lists one after another in thread
order); one longer than a warp (32 < degree <= C) by its own warp (`for i = lane; i < d; i += 32`,
in lane order); the loose ends (degree <= 32) by scan-based gathering over their concatenation, as
`scan`. Every idle lane of a step is UA (each phase's group owns the whole warp or CTA), so UR = 0;
the waste splits by the phase that causes it (`PHASES`, `phase_lanes`). The prefix sums, the
election of lists and the searches are overheads, not lanes.
"""
import numba
import numpy as np

from .concatenated import block_steps
from .fields import WARP_SIZE
from .registry import Geometry, Strategy, register
from .scan import CTA_SIZE

PHASES = ("cta", "warp", "scan")
CTA, WARP, SCAN = range(3)


@numba.njit(cache=True, nogil=True, inline="always")
def phase_of(degree, cta_size):
    """The gatherer of a list: CTA (degree > C), WARP (32 < degree <= C) or SCAN (degree <= 32)."""
    if degree > cta_size:
        return CTA
    if degree > WARP_SIZE:
        return WARP
    return SCAN


@numba.njit(cache=True, nogil=True, inline="always")
def _strided_steps(start, count, warps, stride, first_warp, s, e, step_warp, step_end, step_ua, step_ur, edges):
    """Steps of `warps` warps striding over edges start .. start + count - 1 by `stride` lanes (round r of
    warp j takes edges r * stride + 32 j .. + 31), rounds then warps; returns (steps, edges) written."""
    for lo in range(0, count, stride):
        for j in range(warps):
            first = lo + WARP_SIZE * j
            if first >= count:
                break
            lanes = min(WARP_SIZE, count - first)
            for k in range(lanes):
                edges[e] = start + first + k
                e += 1
            step_warp[s] = first_warp + j
            step_end[s] = e
            step_ua[s] = WARP_SIZE - lanes
            step_ur[s] = 0
            s += 1
    return s, e


@numba.njit(cache=True, nogil=True)
def decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges):
    """Strategy.decompose for swc-C: a unit is a CTA's C entries on its C/32 warps. In issue order: the
    CTA lists in entry order (rounds, then warps); each warp's warp lists in lane order, warp by warp;
    then the loose ends' concatenation in 32-edge blocks, block k on warp k % (C/32)."""
    cta_size = params[0]
    warps = cta_size // WARP_SIZE
    s = 0
    e = 0
    for u in range(unit_ptr.size - 1):
        lo, hi = unit_ptr[u], unit_ptr[u + 1]
        for i in range(lo, hi):
            if phase_of(degrees[i], cta_size) == CTA:
                s, e = _strided_steps(starts[i], degrees[i], warps, cta_size, u * warps, s, e, step_warp, step_end,
                                      step_ua, step_ur, edges)
        for i in range(lo, hi):
            if phase_of(degrees[i], cta_size) == WARP:
                s, e = _strided_steps(starts[i], degrees[i], 1, WARP_SIZE, u * warps + (i - lo) // WARP_SIZE, s, e,
                                      step_warp, step_end, step_ua, step_ur, edges)
        first = e
        for i in range(lo, hi):
            if phase_of(degrees[i], cta_size) == SCAN:
                for k in range(degrees[i]):
                    edges[e] = starts[i] + k
                    e += 1
        s = block_steps(first, e, u * warps, warps, s, step_warp, step_end, step_ua, step_ur)
    return s


@numba.njit(cache=True, nogil=True, inline="always")
def strided_rounds(count, warps, stride):
    """Warp steps of `warps` warps striding over `count` edges by `stride` lanes: warp j runs
    ceil((count - 32 j) / stride) rounds when 32 j < count."""
    rounds = 0
    for j in range(warps):
        if WARP_SIZE * j >= count:
            break
        rounds += (count - WARP_SIZE * j + stride - 1) // stride
    return rounds


@numba.njit(cache=True, nogil=True)
def count_phase_lanes(degrees, level_ptr, cta_size):
    """Per level and phase (levels x 3 x LANE_FIELDS) lane sums for CTA size C, in closed form."""
    warps = cta_size // WARP_SIZE
    levels = level_ptr.size - 1
    out = np.zeros((levels, 3, 6), dtype=np.int64)
    for level in range(levels):
        lo = level_ptr[level]
        hi = level_ptr[level + 1]
        for first in range(lo, hi, cta_size):
            loose = 0
            for i in range(first, min(first + cta_size, hi)):
                d = degrees[i]
                phase = phase_of(d, cta_size)
                if phase == CTA:
                    out[level, CTA, 0] += strided_rounds(d, warps, cta_size)
                    out[level, CTA, 2] += d
                elif phase == WARP:
                    out[level, WARP, 0] += (d + WARP_SIZE - 1) // WARP_SIZE
                    out[level, WARP, 2] += d
                else:
                    loose += d
            out[level, SCAN, 0] += strided_rounds(loose, warps, cta_size)
            out[level, SCAN, 2] += loose
        for p in range(3):
            out[level, p, 1] = WARP_SIZE * out[level, p, 0]
            out[level, p, 3] = out[level, p, 1] - out[level, p, 2]
    return out


@numba.njit(cache=True, nogil=True)
def count_lanes(degrees, level_ptr, cta_size):
    """Per-level (warp_iterations, total, useful, UA, UR, idle) lanes for CTA size C: the phases' sum."""
    return count_phase_lanes(degrees, level_ptr, cta_size).sum(axis=1)


SWC = register(Strategy(
    name="swc",
    params=(CTA_SIZE,),
    description=__doc__.strip().splitlines()[0],
    geometry=lambda p: Geometry(p[0], p[0] // WARP_SIZE, WARP_SIZE),
    decompose=decompose,
    label=lambda p: "swc",
    parse_label=lambda label: () if label == "swc" else None,
    fast_lanes=count_lanes,
    phases=PHASES,
    phase_lanes=count_phase_lanes,
))
