"""The decomposition shared by strategies that stride over a unit's concatenated edge lists."""
import numba

from .fields import WARP_SIZE


@numba.njit(cache=True, nogil=True, inline="always")
def block_steps(first, end, first_warp, warps, s, step_warp, step_end, step_ua, step_ur):
    """Steps of `warps` warps striding over edges[first:end], the concatenation already written: its k-th
    32-edge block is one step of warp first_warp + k % warps. Every idle lane is UA; returns the next step."""
    block = 0
    for lo in range(first, end, WARP_SIZE):
        lanes = min(WARP_SIZE, end - lo)
        step_warp[s] = first_warp + block % warps
        step_end[s] = lo + lanes
        step_ua[s] = WARP_SIZE - lanes
        step_ur[s] = 0
        s += 1
        block += 1
    return s


@numba.njit(cache=True, nogil=True)
def concatenated_steps(starts, degrees, unit_ptr, warps, step_warp, step_end, step_ua, step_ur, edges):
    """Steps of units run by `warps` warps striding over their concatenated edges (Strategy.decompose).

    The k-th 32-edge block of a unit's concatenation is one step of warp k % warps: warp segmentation
    (one warp, seed 004 §2.1) and CTA scan-based gathering (`for i = tid; i < E; i += C`, seed 001
    §4.1, issue order rounds then warps). Every idle lane is UA.
    """
    s = 0
    e = 0
    for u in range(unit_ptr.size - 1):
        first = e
        for i in range(unit_ptr[u], unit_ptr[u + 1]):
            for k in range(degrees[i]):
                edges[e] = starts[i] + k
                e += 1
        s = block_steps(first, e, u * warps, warps, s, step_warp, step_end, step_ua, step_ur)
    return s
