"""A fully associative LRU cache of a few thousand entries, one access at a time, in O(1).

`stack.lru_hits` answers a whole stream at once; the fused launch pass (`opmachine.memory`)
needs each row-buffer outcome as the access happens, so this keeps the cache itself: a doubly
linked recency list of at most `capacity` blocks and, per block id, its list node (-1: absent).
An access hits iff its block is in the list, which is the stack-distance rule d < capacity. A block can
also be dropped (`lru_drop`: each SM's L1, `cache.l1`, loses a line its SM's atomic writes): its node stays in
the list, empty, as the least recent, so the next miss that finds the list full takes it first.
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.errors import InputError

HEAD, TAIL, SIZE = range(3)  # fields of the `meta` array


class LruList:
    """An empty LRU cache of `capacity` entries over block ids 0 .. universe-1 (numba arrays; node_of has one
    entry more, for the id `universe` that an empty node holds, `lru_drop`)."""

    def __init__(self, universe: int, capacity: int):
        if capacity < 1:
            raise InputError(f"LRU capacity must be at least 1, got {capacity}")
        self.node_of = np.full(max(int(universe), 1) + 1, -1, dtype=np.int32)
        self.block = np.zeros(capacity, dtype=np.int64)
        self.newer = np.full(capacity, -1, dtype=np.int32)
        self.older = np.full(capacity, -1, dtype=np.int32)
        self.meta = np.array([-1, -1, 0], dtype=np.int64)

    @property
    def arrays(self) -> tuple:
        return self.node_of, self.block, self.newer, self.older, self.meta


@numba.njit(cache=True, nogil=True, inline="always")
def lru_access(block, node_of, blocks, newer, older, meta):
    """Access `block`: True on a hit. It becomes the most recent; a miss in a full cache evicts the least recent."""
    node = node_of[block]
    hit = node >= 0
    if hit:
        if node == meta[HEAD]:
            return True
        before, after = newer[node], older[node]  # unlink it (it is not the head, so `before` exists)
        older[before] = after
        if after >= 0:
            newer[after] = before
        else:
            meta[TAIL] = before
    elif meta[SIZE] < blocks.size:
        node = meta[SIZE]
        meta[SIZE] += 1
        if meta[TAIL] < 0:
            meta[TAIL] = node
    else:
        node = meta[TAIL]
        node_of[blocks[node]] = -1
        meta[TAIL] = newer[node]
        if meta[TAIL] >= 0:
            older[meta[TAIL]] = -1
        if meta[HEAD] == node:  # a cache of one entry
            meta[HEAD] = -1
    if not hit:
        blocks[node] = block
        node_of[block] = node
    newer[node] = -1
    older[node] = meta[HEAD]
    if meta[HEAD] >= 0:
        newer[meta[HEAD]] = node
    meta[HEAD] = node
    if meta[TAIL] < 0:
        meta[TAIL] = node
    return hit


@numba.njit(cache=True, nogil=True, inline="always")
def lru_drop(block, node_of, blocks, newer, older, meta):
    """Drop `block` if held: its node holds the empty id (node_of.size - 1) and becomes the least recent."""
    node = node_of[block]
    if node < 0:
        return
    node_of[block] = -1
    blocks[node] = node_of.size - 1
    if node == meta[TAIL]:
        return
    before, after = newer[node], older[node]  # unlink it (it is not the tail, so `after` exists)
    newer[after] = before
    if before >= 0:
        older[before] = after
    else:
        meta[HEAD] = after
    newer[node] = meta[TAIL]
    older[node] = -1
    older[meta[TAIL]] = node
    meta[TAIL] = node


@numba.njit(cache=True, nogil=True, inline="always")
def lru_clear(node_of, blocks, newer, older, meta):
    """Empty the cache (only the blocks it holds are touched)."""
    for node in range(meta[SIZE]):
        node_of[blocks[node]] = -1
    meta[HEAD] = -1
    meta[TAIL] = -1
    meta[SIZE] = 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _lru_list_hits(ids, node_of, blocks, newer, older, meta, out):
    for i in range(ids.size):
        out[i] = lru_access(ids[i], node_of, blocks, newer, older, meta)


def lru_list_hits(ids: np.ndarray, universe: int, capacity: int) -> np.ndarray:
    """Hit mask of `ids` through an empty LRU cache of `capacity` entries (equal to `stack.lru_hits`)."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    cache = LruList(universe, capacity)
    out = np.empty(ids.size, dtype=np.bool_)
    _lru_list_hits(ids, *cache.arrays, out)
    return out
