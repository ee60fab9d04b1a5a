"""Which of the L2's two partitions hold a sector, followed access by access (`[l2_partitions]` of a GPU
profile, `opmachine.profile.l2_partitions`).

Each SM reads through one partition. A sector is in its home partition while it is in the L2 at all,
and in the other once an SM of that partition has read it, until it is written again. A load's hit on
a sector that its SM's partition does not hold crosses to the other partition (a `far` hit, slower),
and leaves a copy. Here:

- a sector's home is a hash of its 128-byte line (each partition is home of half the lines, spread
  over the addresses: the hash stands in for the GPU's undocumented one);
- a warp's partition is a hash of its block (2**BLOCK_WARPS_SHIFT warps: the kernels' 256-thread
  blocks), the block of launched warp w on slot w mod slots being slot >> BLOCK_WARPS_SHIFT (blocks go
  to the SMs one after another, and half the SMs read through each partition);
- `holders[sector]` has bit p set when partition p holds a copy (the home is not recorded: it always
  holds the sector);
- a load that misses the L2 fills it through its SM's partition (`holders` = that partition only); a
  store leaves the sector with its home and the storing SM's partition only.
"""
from __future__ import annotations

import numba
import numpy as np

BLOCK_WARPS_SHIFT = 3  # a block of 8 warps (256 threads) runs on one SM
LINE_SECTORS_SHIFT = 2  # 4 sectors (128 bytes) a line
_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bit of the product is the partition


@numba.njit(inline="always", nogil=True)
def _half(key) -> np.int64:
    """0 or 1, half the keys each, spread: the top bit of the key times the 64-bit golden ratio."""
    return np.int64((np.uint64(key) * _MIX) >> np.uint64(63))


@numba.njit(inline="always", nogil=True)
def slot_partition(slot) -> np.int64:
    """The partition that warp slot `slot`'s block reads through."""
    return _half(np.int64(slot) >> BLOCK_WARPS_SHIFT)


@numba.njit(inline="always", nogil=True)
def home_partition(sector) -> np.int64:
    """The partition that is home of `sector`'s line."""
    return _half(np.int64(sector) >> LINE_SECTORS_SHIFT)


@numba.njit(inline="always", nogil=True)
def visit(holders, sector, part, store, hit) -> bool:
    """One access of `sector` from partition `part` (a store, or a load that hit the L2 or not): whether
    it is a far hit (a load's hit that its partition does not hold); `holders` is left as it leaves them."""
    if store or not hit:
        holders[sector] = np.uint8(1 << part)
        return False
    if home_partition(sector) == part or (holders[sector] >> part) & 1:
        return False
    holders[sector] |= np.uint8(1 << part)
    return True

