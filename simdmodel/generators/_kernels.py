"""Counter-based random numbers and the numba kernels every generator family shares.

Every random draw comes from one counter-based hash (splitmix64 of a seeded key plus a counter), so
the same spec gives bit-identical edges whatever the numba thread count or numpy version. All numba
code of the generators lives in this one module on purpose: numba's on-disk cache (`cache=True`)
revalidates a function only against its own source file, so a kernel cached in another module
would keep a stale copy of an edited helper such as `bits`.
"""
from __future__ import annotations

import numba
import numpy as np

# --------------------------------------------------------------------------------------------
# Counter-based random numbers (splitmix64). Everything is uint64 arithmetic: in numba, mixing
# uint64 with int64 promotes to float64, so every constant below is an explicit np.uint64.
# --------------------------------------------------------------------------------------------
_MASK64 = (1 << 64) - 1
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_S11 = np.uint64(11)
_S27 = np.uint64(27)
_S30 = np.uint64(30)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_TWO = np.uint64(2)
_INV53 = 1.0 / 9007199254740992.0  # 2**-53

# Stream tags: each random purpose of a generator draws from its own key.
TAG_EDGES, TAG_PERM, TAG_SHUFFLE, TAG_POINTS, TAG_PAIRS = 1, 2, 3, 4, 5

SEED_LIMIT = 2**63 - 1


def mix_py(z: int) -> int:
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def key(seed: int, tag: int, sub: int = 0) -> np.uint64:
    """Key of one random stream: a hash of (seed, purpose, round)."""
    return np.uint64(mix_py(mix_py(mix_py(seed) ^ tag) + sub))


@numba.njit(cache=True, nogil=True, inline="always")
def bits(key, counter):
    """64 random bits: element `counter` of the splitmix64 sequence started at `key`."""
    z = key + (counter + _ONE) * _GAMMA
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@numba.njit(cache=True, nogil=True, inline="always")
def unit(key, counter):
    """Uniform double in [0, 1) with 53 random bits."""
    return np.float64(bits(key, counter) >> _S11) * _INV53


@numba.njit(cache=True, nogil=True, inline="always")
def below(key, counter, bound):
    """Integer in [0, bound) as the high word of bits * bound (Lemire; bias <= bound / 2**64)."""
    h = bits(key, counter)
    b = np.uint64(bound)
    h_lo = h & _LOW32
    h_hi = h >> _S32
    b_lo = b & _LOW32
    b_hi = b >> _S32
    p0 = h_lo * b_lo
    p1 = h_lo * b_hi
    p2 = h_hi * b_lo
    p3 = h_hi * b_hi
    mid = (p0 >> _S32) + (p1 & _LOW32) + (p2 & _LOW32)
    return np.int64(p3 + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32))


# --------------------------------------------------------------------------------------------
# Kernels
# --------------------------------------------------------------------------------------------
@numba.njit(cache=True, parallel=True)
def rmat_kernel(m, scale, a, ab, abc, key, src, dst):
    levels = np.uint64(scale)
    for e in numba.prange(m):
        base = np.uint64(e) * levels
        u = 0
        v = 0
        for level in range(scale):
            r = unit(key, base + np.uint64(level))
            bit = 1 << (scale - 1 - level)  # level 0 decides the most significant bit
            if r < a:
                pass
            elif r < ab:
                v |= bit
            elif r < abc:
                u |= bit
            else:
                u |= bit
                v |= bit
        src[e] = u
        dst[e] = v


@numba.njit(cache=True, parallel=True)
def kron_kernel(m, scale, ab, a_norm, c_norm, key, src, dst):
    draws = np.uint64(2 * scale)
    for e in numba.prange(m):
        base = np.uint64(e) * draws
        u = 0
        v = 0
        for level in range(scale):
            r1 = unit(key, base + _TWO * np.uint64(level))
            r2 = unit(key, base + _TWO * np.uint64(level) + _ONE)
            ii = r1 > ab
            jj = r2 > (c_norm if ii else a_norm)
            if ii:
                u |= 1 << level
            if jj:
                v |= 1 << level
        src[e] = u
        dst[e] = v


@numba.njit(cache=True, nogil=True)
def shuffle_pairs(key, src, dst):
    """Fisher-Yates shuffle of two parallel arrays with the same permutation (serial: exact)."""
    for i in range(src.size - 1, 0, -1):
        j = below(key, np.uint64(i), i + 1)
        t = src[i]
        src[i] = src[j]
        src[j] = t
        t = dst[i]
        dst[i] = dst[j]
        dst[j] = t


@numba.njit(cache=True, nogil=True)
def shuffle(key, values, count):
    """Fisher-Yates: after the call values[:count] is a uniform random ordered sample of values."""
    size = values.size
    for i in range(min(count, size - 1)):
        j = i + below(key, np.uint64(i), size - i)
        t = values[i]
        values[i] = values[j]
        values[j] = t


@numba.njit(cache=True, nogil=True)
def permutation(key, n):
    perm = np.arange(n).astype(np.int32)
    shuffle(key, perm, n)
    return perm


@numba.njit(cache=True, parallel=True)
def relabel(perm, src, dst):
    for e in numba.prange(src.size):
        src[e] = perm[src[e]]
        dst[e] = perm[dst[e]]


@numba.njit(cache=True, parallel=True)
def draw_pair_codes(count, n, key, undirected):
    """`count` uniform pairs u != v (unordered when `undirected`) as codes u*n + v (u < v if so)."""
    codes = np.empty(count, dtype=np.int64)
    for i in numba.prange(count):
        c = np.uint64(i) * _TWO
        u = below(key, c, n)
        v = below(key, c + _ONE, n - 1)
        if v >= u:
            v += 1
        if undirected and v < u:
            u, v = v, u
        codes[i] = u * n + v
    return codes


@numba.njit(cache=True, parallel=True)
def decode_codes(codes, n):
    src = np.empty(codes.size, dtype=np.int32)
    dst = np.empty(codes.size, dtype=np.int32)
    for i in numba.prange(codes.size):
        src[i] = codes[i] // n
        dst[i] = codes[i] % n
    return src, dst


@numba.njit(cache=True, parallel=True)
def directed_index_to_code(index, n):
    """Index c of the n(n-1) ordered pairs u != v (row-major, diagonal skipped) -> code u*n + v."""
    out = np.empty(index.size, dtype=np.int64)
    for i in numba.prange(index.size):
        u = index[i] // (n - 1)
        w = index[i] % (n - 1)
        out[i] = u * n + w + (1 if w >= u else 0)
    return out


@numba.njit(cache=True, parallel=True)
def unit_points(n, key):
    points = np.empty((n, 2), dtype=np.float64)
    for i in numba.prange(n):
        c = np.uint64(i) * _TWO
        points[i, 0] = unit(key, c)
        points[i, 1] = unit(key, c + _ONE)
    return points


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.sort + neighbour compare: np.unique is much slower on numpy 2.4)."""
    values = np.sort(values)
    if values.size < 2:
        return values
    keep = np.empty(values.size, dtype=np.bool_)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]
