"""Fully associative LRU by stack (reuse) distance: one pass gives the hits of every capacity.

Seed 003 §6.4 approximates L2 and row-buffer hits by simulating the sector trace through a fully
associative LRU cache. An access hits in an LRU cache of C entries iff fewer than C distinct other
ids were touched since the previous access to the same id (Mattson's stack property), so the stack
distances of a trace answer every capacity at once.

Distances are counted with a bitmap over access slots holding a 1 at the latest slot of each id and
a Fenwick tree over blocks of 512 slots (Bennett and Kruskal's method): O(N log U). When the slots
run out the live marks are renumbered in order (compaction), so the bitmap and the tree stay at
about 2 * universe bits and 2 * universe / 512 counters, small enough to stay in cache; the
per-id last-slot table (4 bytes per id) is prefetched ahead of use.
"""
from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from simdmodel.errors import InputError

_BLOCK_SHIFT = 9  # Fenwick leaves are blocks of 512 slots = 8 words = one 64-byte cache line
_BLOCK_BITS = 1 << _BLOCK_SHIFT
_BLOCK_WORDS = _BLOCK_BITS // 64
# Accesses ahead whose last-access entry is prefetched: the table is 4 bytes per id, far larger
# than cache for realistic universes, and the loop body is too long for the CPU to overlap those
# misses by itself (measured: 4x faster on uniform random ids over 5M).
_PREFETCH_AHEAD = 16


@intrinsic
def _popcount(typingctx, word):
    """Number of set bits of a uint64 (one popcnt instruction)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@intrinsic
def prefetch(typingctx, array, index):
    """Ask the CPU to bring array[index] into cache; no effect on results."""
    if not isinstance(array, types.Array) or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        byte_pointer = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        function_type = ir.FunctionType(ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, function_type, "llvm.prefetch.p0")
        # read, highest temporal locality, data cache
        builder.call(function, [builder.bitcast(builder.gep(data, [args[1]]), byte_pointer),
                                i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return types.none(array, index), codegen


@numba.njit(cache=True, nogil=True)
def _fenwick_add(tree, block, delta):
    i = block + 1
    n = tree.size
    while i < n:
        tree[i] += delta
        i += i & -i


@numba.njit(cache=True, nogil=True)
def _fenwick_prefix(tree, block):
    """Sum over blocks [0, block)."""
    total = 0
    i = block
    while i > 0:
        total += tree[i]
        i -= i & -i
    return total


@numba.njit(cache=True, nogil=True)
def _block_marks(words, block):
    total = 0
    for w in range(block * _BLOCK_WORDS, (block + 1) * _BLOCK_WORDS):
        total += np.int64(_popcount(words[w]))
    return total


@numba.njit(cache=True, nogil=True)
def _fenwick_build(tree, words, blocks):
    """Tree over the first `blocks` blocks; later (not yet complete) blocks count as empty."""
    n = tree.size
    tree[:] = 0
    for i in range(1, blocks + 1):
        tree[i] = _block_marks(words, i - 1)
    for i in range(1, n):
        j = i + (i & -i)
        if j < n:
            tree[j] += tree[i]


@numba.njit(cache=True, nogil=True)
def _compact(last, words, tree, live):
    """Renumber the live marks to slots 0..live-1 in the same order; return the next free slot."""
    base = np.empty(words.size, dtype=np.int64)
    running = 0
    for w in range(words.size):
        base[w] = running
        running += np.int64(_popcount(words[w]))
    one = np.uint64(1)
    for x in range(last.size):
        p = np.int64(last[x])
        if p >= 0:
            w = p >> 6
            below = (one << np.uint64(p & 63)) - one
            last[x] = base[w] + np.int64(_popcount(words[w] & below))
    words[:] = 0
    full = live >> 6
    for w in range(full):
        words[w] = ~np.uint64(0)
    if live & 63:
        words[full] = (one << np.uint64(live & 63)) - one
    _fenwick_build(tree, words, live >> _BLOCK_SHIFT)
    return live


@numba.njit(cache=True, nogil=True)
def _stack_distances_njit(ids, last, slots):
    """The Fenwick tree holds the marks of complete 512-slot blocks; the block being filled (the
    tail) is read from the bitmap directly, so appending a mark costs no tree update."""
    n = ids.size
    distances = np.empty(n, dtype=np.int64)
    words = np.zeros(slots // 64, dtype=np.uint64)
    tree = np.zeros(words.size // _BLOCK_WORDS + 1, dtype=np.int64)
    one = np.uint64(1)
    live = 0  # distinct ids seen so far = marks in the bitmap
    slot = 0  # next free slot
    for i in range(n):
        if slot == slots:
            slot = _compact(last, words, tree, live)
        elif slot & (_BLOCK_BITS - 1) == 0 and slot > 0:
            block = (slot >> _BLOCK_SHIFT) - 1
            _fenwick_add(tree, block, _block_marks(words, block))
        if i + _PREFETCH_AHEAD < n:
            prefetch(last, ids[i + _PREFETCH_AHEAD])
        x = ids[i]
        p = np.int64(last[x])
        if p < 0:
            distances[i] = -1
            live += 1
        else:
            w = p >> 6
            block = p >> _BLOCK_SHIFT
            bit = one << np.uint64(p & 63)
            # marks in [0, p] (x's own mark included); the rest lie strictly between p and now
            through_p = _fenwick_prefix(tree, block)
            through_p += np.int64(_popcount(words[w] & (bit | (bit - one))))
            for v in range(block * _BLOCK_WORDS, w):
                through_p += np.int64(_popcount(words[v]))
            distances[i] = live - through_p
            words[w] &= ~bit
            if block < slot >> _BLOCK_SHIFT:
                _fenwick_add(tree, block, -1)
        words[slot >> 6] |= one << np.uint64(slot & 63)
        last[x] = slot
        slot += 1
    return distances


def _as_int64(ids, name: str) -> np.ndarray:
    """A contiguous 1-D int64 view/copy of an integer array; InputError for anything else."""
    array = np.asarray(ids)
    if array.ndim != 1:
        raise InputError(f"{name} must be a 1-D array, got {array.ndim} dimensions")
    if array.size == 0:
        return np.zeros(0, dtype=np.int64)
    if array.dtype.kind not in "iu":
        raise InputError(f"{name} must be integers, got dtype {array.dtype}")
    if array.dtype == np.uint64 and int(array.max()) > np.iinfo(np.int64).max:
        raise InputError(f"{name} contains a value above the int64 range")
    return np.ascontiguousarray(array.astype(np.int64, copy=False))


def _check_nonnegative(array: np.ndarray, name: str) -> None:
    if array.size and int(array.min()) < 0:
        raise InputError(f"{name} must be >= 0, found {int(array.min())}")


def _as_ids(ids, name: str = "ids") -> np.ndarray:
    """A 1-D int64 array of ids >= 0; InputError for anything else."""
    array = _as_int64(ids, name)
    _check_nonnegative(array, name)
    return array


def _as_count(value, name: str, minimum: int) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise InputError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def stack_distances(ids: np.ndarray, universe: int) -> np.ndarray:
    """LRU stack distance of every access (seed 003 §6.4, fully associative LRU).

    ids: integer ids (sector ids, DRAM block ids) in access order, each in [0, universe).
    universe: one more than the largest possible id; sizes the last-access table.
    Returns int64 per access: the number of distinct other ids touched since the previous access
    to the same id, or -1 for the first access to an id (cold miss). Memory: the int64 result plus
    4 bytes per id of the universe plus about universe / 4 bytes of bitmap and tree.
    """
    universe = _as_count(universe, "universe", 0)
    ids = _as_ids(ids)
    if ids.size and int(ids.max()) >= universe:
        raise InputError(f"ids must be < universe = {universe}, found {int(ids.max())}")
    # Enough slots to never compact short traces; otherwise 2 * universe so that each compaction
    # (cost O(universe)) frees at least universe slots.
    slots = min(ids.size, 2 * universe)
    slots = max(_BLOCK_BITS, -(-slots // _BLOCK_BITS) * _BLOCK_BITS)
    last = np.full(universe, -1, dtype=np.int32 if slots < 2**31 else np.int64)
    return _stack_distances_njit(ids, last, slots)


def lru_hits(ids: np.ndarray, universe: int, capacity: int) -> np.ndarray:
    """Hit mask of a fully associative LRU cache of `capacity` entries (seed 003 §6.4).

    An access hits iff its stack distance d satisfies 0 <= d < capacity.
    """
    capacity = _as_count(capacity, "capacity", 1)
    distances = stack_distances(ids, universe)
    return (distances >= 0) & (distances < capacity)


@numba.njit(cache=True, nogil=True)
def _distance_histogram_njit(distances, largest):
    """counts[0]: cold misses; counts[d + 1]: distance d < largest; counts[largest + 1]: rest."""
    counts = np.zeros(largest + 2, dtype=np.int64)
    for d in distances:
        if d < 0:
            counts[0] += 1
        elif d < largest:
            counts[d + 1] += 1
        else:
            counts[largest + 1] += 1
    return counts


def miss_ratio_curve(distances: np.ndarray, capacities) -> np.ndarray:
    """Miss ratio of a fully associative LRU cache for each capacity, from stack distances.

    distances: output of `stack_distances` (-1 = cold miss). capacities: integers >= 1 (scalar or
    array). Misses at capacity C = cold misses + accesses with distance >= C (seed 003 §6.4);
    computed from one histogram of the distances, not by re-simulating. An empty trace gives 0.
    Returns float64 with the shape of `capacities`.
    """
    distances = np.asarray(distances)
    if distances.ndim != 1:
        raise InputError(f"distances must be a 1-D array, got {distances.ndim} dimensions")
    if distances.size and distances.dtype.kind not in "iu":
        raise InputError(f"distances must be integers, got dtype {distances.dtype}")
    distances = distances.astype(np.int64, copy=False)
    caps = np.asarray(capacities)
    if caps.size and caps.dtype.kind not in "iu":
        raise InputError(f"capacities must be integers, got dtype {caps.dtype}")
    caps = caps.astype(np.int64)
    if caps.size and int(caps.min()) < 1:
        raise InputError(f"capacities must be >= 1, found {int(caps.min())}")
    if distances.size == 0 or caps.size == 0:
        return np.zeros(caps.shape, dtype=np.float64)
    if int(distances.min()) < -1:
        raise InputError(f"distances must be >= -1, found {int(distances.min())}")
    # capacities above the largest distance all hit every warm access: no need to count further
    largest = min(int(caps.max()), int(distances.max()) + 1)
    counts = _distance_histogram_njit(np.ascontiguousarray(distances), largest)
    hits_below = np.concatenate(([0], np.cumsum(counts[1:-1])))  # hits_below[C] = #(0 <= d < C)
    return (distances.size - hits_below[np.minimum(caps, largest)]) / distances.size
