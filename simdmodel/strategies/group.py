"""Group mapping sm-S: each frontier vertex gets a group of S lanes, floor(32/S) groups a warp.

Seed 000 §4, Eqs. 1-2 and Fig. 4: frontier position i goes to warp i // g, group i % g (g =
floor(32/S)); a warp runs T = max_k ceil(d_k/S) iterations; UA_k = S*ceil(d_k/S) - d_k;
UR_k = S*(T - ceil(d_k/S)), counting empty groups of a partial last warp; idle = (32 - g*S)*T.
"""
import numba
import numpy as np

from ..errors import InputError
from .fields import WARP_SIZE
from .registry import Geometry, Param, Strategy, register


@numba.njit(cache=True, nogil=True)
def _warp_sums(degrees, lo, hi, groups, S, shift):
    """(sum over warps of T, sum over vertices of ceil(d/S), sum of d) for one level.

    `shift` = log2(S) when S is a power of two (a shift instead of a division), else -1.
    Written as plain reductions so LLVM vectorises them; one group per warp needs no max.
    """
    iterations = 0
    chunks = 0
    useful = 0
    if groups == 1:
        for i in range(lo, hi):
            d = degrees[i]
            chunks += (d + S - 1) >> shift if shift >= 0 else (d + S - 1) // S
            useful += d
        return chunks, chunks, useful
    full_end = lo + (hi - lo) // groups * groups
    for first in range(lo, hi, groups):
        last = first + groups if first < full_end else hi
        longest = 0
        if shift >= 0:
            for i in range(first, last):
                d = degrees[i]
                c = (d + S - 1) >> shift
                chunks += c
                useful += d
                longest = max(longest, c)
        else:
            for i in range(first, last):
                d = degrees[i]
                c = (d + S - 1) // S
                chunks += c
                useful += d
                longest = max(longest, c)
        iterations += longest
    return iterations, chunks, useful


@numba.njit(cache=True, nogil=True)
def decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges):
    """Strategy.decompose for sm-S: unit u holds at most g = 32 // S vertices, one group each.

    Step `it` of a unit: group k's lanes take edges it*S .. it*S + S - 1 of its vertex (UA: the
    lanes past its last edge); a group whose vertex is done, or a group with no vertex, waits (UR).
    """
    S = params[0]
    groups = WARP_SIZE // S
    alive = np.empty(WARP_SIZE, dtype=np.int64)  # the unit's vertices with edges left, in lane order
    s = 0
    e = 0
    for u in range(unit_ptr.size - 1):
        lo = unit_ptr[u]
        hi = unit_ptr[u + 1]
        rounds = 0
        count = 0
        for i in range(lo, hi):
            rounds = max(rounds, (degrees[i] + S - 1) // S)
            alive[count] = i
            count += 1
        for it in range(rounds):
            ua = 0
            begin = it * S
            left = 0
            for a in range(count):  # a hub's unit runs long after its other vertices are done: skip them
                i = alive[a]
                d = degrees[i]
                if begin < d:
                    take = min(S, d - begin)
                    for k in range(take):
                        edges[e] = starts[i] + begin + k
                        e += 1
                    ua += S - take
                    alive[left] = i
                    left += 1
            count = left
            ur = S * (groups - count)  # groups without a vertex or whose vertex is done
            step_warp[s] = u
            step_end[s] = e
            step_ua[s] = ua
            step_ur[s] = ur
            s += 1
    return s


@numba.njit(cache=True, nogil=True)
def count_lanes(degrees, level_ptr, group_size):
    """Per-level (warp_iterations, total, useful, UA, UR, idle) lanes for group size S."""
    S = group_size
    groups = WARP_SIZE // S
    shift = -1
    if S & (S - 1) == 0:
        shift = 0
        while (1 << shift) < S:
            shift += 1
    levels = level_ptr.size - 1
    out = np.zeros((levels, 6), dtype=np.int64)
    for level in range(levels):
        iterations, chunks, useful = _warp_sums(degrees, level_ptr[level], level_ptr[level + 1], groups, S, shift)
        out[level, 0] = iterations
        out[level, 1] = WARP_SIZE * iterations
        out[level, 2] = useful
        out[level, 3] = S * chunks - useful
        out[level, 4] = S * groups * iterations - S * chunks
        out[level, 5] = (WARP_SIZE - groups * S) * iterations
    return out


def _parse(label: str):
    if not label.startswith("sm-"):
        return None
    try:
        return (int(label[3:]),)
    except ValueError:
        raise InputError(f"kernel {label!r}: sm-S needs an integer group size S") from None


GROUP = register(Strategy(
    name="group",
    params=(Param("group_size", "group size", "S", None, 1, WARP_SIZE),),
    description=__doc__.strip().splitlines()[0],
    geometry=lambda p: Geometry(WARP_SIZE // p[0], 1, WARP_SIZE // p[0]),
    decompose=decompose,
    label=lambda p: f"sm-{p[0]}",
    parse_label=_parse,
    fast_lanes=count_lanes,
))
