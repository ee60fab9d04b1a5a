"""Seeded graph generators behind specs such as `rmat:scale=20,ef=16,seed=1`.

The suite stands for the graphs of the seed papers (seed 000 Table 1, seed 001 Table 1): R-MAT and
Graph500 Kronecker graphs (rmat1/2, kron_g500-logn20), uniform random graphs (random1-3,
random.2Mv.128Me), regular lattices (ecology = 5-point grid, mesh = 6-point 2D mesh, thermal /
grid7pt = 3D 7-point lattice) and DIMACS10-style planar / geometric graphs (delaunay_nXX, rgg_n_2_XX).

Every random draw comes from one counter-based hash (splitmix64 of a seeded key plus a counter), so
the same spec gives bit-identical edges whatever the numba thread count or numpy version. Undirected
generators return each edge once (`EdgeList(undirected=True)`); the CSR builder stores both
directions. Ids are int32. `EdgeList.name` is the canonical spec with every parameter filled in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable

import numba
import numpy as np

from .errors import InputError
from .graph import INDEX_LIMIT, EdgeList
from .spec import Param, bind_params, parse_spec

__all__ = ["Generator", "GENERATORS", "is_generator_spec", "generate", "canonical_spec"]

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
_TAG_EDGES, _TAG_PERM, _TAG_SHUFFLE, _TAG_POINTS, _TAG_PAIRS = 1, 2, 3, 4, 5

SEED_LIMIT = 2**63 - 1


def _mix_py(z: int) -> int:
    z &= _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _key(seed: int, tag: int, sub: int = 0) -> np.uint64:
    """Key of one random stream: a hash of (seed, purpose, round)."""
    return np.uint64(_mix_py(_mix_py(_mix_py(seed) ^ tag) + sub))


@numba.njit(cache=True, inline="always")
def _bits(key, counter):
    """64 random bits: element `counter` of the splitmix64 sequence started at `key`."""
    z = key + (counter + _ONE) * _GAMMA
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


@numba.njit(cache=True, inline="always")
def _unit(key, counter):
    """Uniform double in [0, 1) with 53 random bits."""
    return np.float64(_bits(key, counter) >> _S11) * _INV53


@numba.njit(cache=True, inline="always")
def _below(key, counter, bound):
    """Integer in [0, bound) as the high word of bits * bound (Lemire; bias <= bound / 2**64)."""
    h = _bits(key, counter)
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
def _rmat_kernel(m, scale, a, ab, abc, key, src, dst):
    levels = np.uint64(scale)
    for e in numba.prange(m):
        base = np.uint64(e) * levels
        u = 0
        v = 0
        for level in range(scale):
            r = _unit(key, base + np.uint64(level))
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
def _kron_kernel(m, scale, ab, a_norm, c_norm, key, src, dst):
    draws = np.uint64(2 * scale)
    for e in numba.prange(m):
        base = np.uint64(e) * draws
        u = 0
        v = 0
        for level in range(scale):
            r1 = _unit(key, base + _TWO * np.uint64(level))
            r2 = _unit(key, base + _TWO * np.uint64(level) + _ONE)
            ii = r1 > ab
            jj = r2 > (c_norm if ii else a_norm)
            if ii:
                u |= 1 << level
            if jj:
                v |= 1 << level
        src[e] = u
        dst[e] = v


@numba.njit(cache=True)
def _shuffle_pairs(key, src, dst):
    """Fisher-Yates shuffle of two parallel arrays with the same permutation (serial: exact)."""
    for i in range(src.size - 1, 0, -1):
        j = _below(key, np.uint64(i), i + 1)
        t = src[i]
        src[i] = src[j]
        src[j] = t
        t = dst[i]
        dst[i] = dst[j]
        dst[j] = t


@numba.njit(cache=True)
def _shuffle(key, values, count):
    """Fisher-Yates: after the call values[:count] is a uniform random ordered sample of values."""
    size = values.size
    for i in range(min(count, size - 1)):
        j = i + _below(key, np.uint64(i), size - i)
        t = values[i]
        values[i] = values[j]
        values[j] = t


@numba.njit(cache=True)
def _permutation(key, n):
    perm = np.arange(n).astype(np.int32)
    _shuffle(key, perm, n)
    return perm


@numba.njit(cache=True, parallel=True)
def _relabel(perm, src, dst):
    for e in numba.prange(src.size):
        src[e] = perm[src[e]]
        dst[e] = perm[dst[e]]


@numba.njit(cache=True, parallel=True)
def _draw_pair_codes(count, n, key, undirected):
    """`count` uniform pairs u != v (unordered when `undirected`) as codes u*n + v (u < v if so)."""
    codes = np.empty(count, dtype=np.int64)
    for i in numba.prange(count):
        c = np.uint64(i) * _TWO
        u = _below(key, c, n)
        v = _below(key, c + _ONE, n - 1)
        if v >= u:
            v += 1
        if undirected and v < u:
            u, v = v, u
        codes[i] = u * n + v
    return codes


@numba.njit(cache=True, parallel=True)
def _decode_codes(codes, n):
    src = np.empty(codes.size, dtype=np.int32)
    dst = np.empty(codes.size, dtype=np.int32)
    for i in numba.prange(codes.size):
        src[i] = codes[i] // n
        dst[i] = codes[i] % n
    return src, dst


@numba.njit(cache=True, parallel=True)
def _directed_index_to_code(index, n):
    """Index c of the n(n-1) ordered pairs u != v (row-major, diagonal skipped) -> code u*n + v."""
    out = np.empty(index.size, dtype=np.int64)
    for i in numba.prange(index.size):
        u = index[i] // (n - 1)
        w = index[i] % (n - 1)
        out[i] = u * n + w + (1 if w >= u else 0)
    return out


@numba.njit(cache=True, parallel=True)
def _unit_points(n, key):
    points = np.empty((n, 2), dtype=np.float64)
    for i in numba.prange(n):
        c = np.uint64(i) * _TWO
        points[i, 0] = _unit(key, c)
        points[i, 1] = _unit(key, c + _ONE)
    return points


# --------------------------------------------------------------------------------------------
# Generators
# --------------------------------------------------------------------------------------------
def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.sort + neighbour compare: np.unique is much slower on numpy 2.4)."""
    values = np.sort(values)
    if values.size < 2:
        return values
    keep = np.empty(values.size, dtype=np.bool_)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def _rmat(scale: int, ef: int, a: float, b: float, c: float, seed: int, directed: int) -> EdgeList:
    """R-MAT (Chakrabarti, Zhan, Faloutsos 2004), ids unpermuted: seed 000 rmat1/2, seed 003 RMAT22."""
    n = 1 << scale
    m = ef * n
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    _rmat_kernel(m, scale, a, a + b, a + b + c, _key(seed, _TAG_EDGES), src, dst)
    return EdgeList(src, dst, n, undirected=not directed)


# Graph500 reference initiator (generator/graph500 octave reference and make_graph).
_G500_A, _G500_B, _G500_C = 0.57, 0.19, 0.19


def _kron(scale: int, ef: int, seed: int, directed: int) -> EdgeList:
    """Graph500 Kronecker generator (relabelled, shuffled): seed 000 kron20, seed 001 kron_g500-logn20."""
    n = 1 << scale
    m = ef * n
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    ab = _G500_A + _G500_B
    _kron_kernel(m, scale, ab, _G500_A / ab, _G500_C / (1.0 - ab), _key(seed, _TAG_EDGES), src, dst)
    _relabel(_permutation(_key(seed, _TAG_PERM), n), src, dst)
    _shuffle_pairs(_key(seed, _TAG_SHUFFLE), src, dst)
    return EdgeList(src, dst, n, undirected=not directed)


def _random(n: int, m: int, seed: int, directed: int) -> EdgeList:
    """Erdos-Renyi G(n, M), m distinct edges in random order: seed 000 random1-3, seed 001 random.2Mv.128Me."""
    undirected = not directed
    possible = n * (n - 1) if directed else n * (n - 1) // 2
    if m > possible:
        kind = "n(n-1)" if directed else "n(n-1)/2"
        raise InputError(f"generator 'random': m={m} is more than the {kind}={possible} possible edges for n={n}")
    if m == 0:
        empty = np.empty(0, dtype=np.int32)
        return EdgeList(empty, empty.copy(), n, undirected=undirected)
    if 2 * m >= possible:
        # Dense: a partial Fisher-Yates over every possible pair is cheaper than rejection.
        if directed:
            codes = _directed_index_to_code(np.arange(possible, dtype=np.int64), n)
        else:
            rows, cols = np.triu_indices(n, 1)
            codes = rows * n + cols
            del rows, cols
        _shuffle(_key(seed, _TAG_SHUFFLE), codes, m)
        codes = codes[:m]
    else:
        # Sparse: draw exactly the missing number of pairs, keep distinct ones, repeat. The set of
        # the first m distinct values of an i.i.d. uniform sequence is a uniform m-subset.
        codes = _sorted_distinct(_draw_pair_codes(m, n, _key(seed, _TAG_PAIRS, 0), undirected))
        rounds = 1
        while codes.size < m:
            fresh = _sorted_distinct(_draw_pair_codes(m - codes.size, n, _key(seed, _TAG_PAIRS, rounds), undirected))
            pos = np.searchsorted(codes, fresh)
            known = np.zeros(fresh.size, dtype=np.bool_)
            inside = pos < codes.size
            known[inside] = codes[pos[inside]] == fresh[inside]
            codes = np.insert(codes, pos[~known], fresh[~known])
            rounds += 1
        _shuffle(_key(seed, _TAG_SHUFFLE), codes, m)
    src, dst = _decode_codes(codes, n)
    return EdgeList(src, dst, n, undirected=undirected)


def _lattice(shape: tuple[int, ...], steps: list[tuple[int, ...]]) -> EdgeList:
    """Edges v -> v + step for every in-range step, ordered by (v, neighbour id): CSR rows sorted.

    `shape` is (..., rows, cols) with the last axis fastest; each step is a coordinate offset
    that must move forward in id order, listed by increasing id offset.
    """
    n = math.prod(shape)
    coords = np.indices(shape, dtype=np.int32).reshape(len(shape), -1) if n else np.zeros((len(shape), 0), np.int32)
    strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
    ids = np.arange(n, dtype=np.int64)
    targets = np.empty((n, len(steps)), dtype=np.int64)
    valid = np.ones((n, len(steps)), dtype=np.bool_)
    for j, step in enumerate(steps):
        offset = 0
        for k, d in enumerate(step):
            if d > 0:
                valid[:, j] &= coords[k] < shape[k] - d
            elif d < 0:
                valid[:, j] &= coords[k] >= -d
            offset += d * strides[k]
        targets[:, j] = ids + offset
    del coords
    src = np.broadcast_to(ids.astype(np.int32)[:, None], targets.shape)[valid]
    dst = targets[valid].astype(np.int32)
    return EdgeList(src, dst, n, undirected=True)


def _check_vertices(name: str, n: int, what: str) -> None:
    if n > INDEX_LIMIT:
        raise InputError(f"generator {name!r}: {what} gives {n} vertices, more than {INDEX_LIMIT} (int32 ids)")


def _grid2d(side: int, stencil: int) -> EdgeList:
    """2D lattice, 5- or 9-point stencil: seed 000 ecology (5-point), seed 001 grid5pt.5000."""
    steps = [(0, 1), (1, 0)] if stencil == 5 else [(0, 1), (1, -1), (1, 0), (1, 1)]
    return _lattice((side, side), steps)


def _mesh6(side: int) -> EdgeList:
    """Triangular lattice, interior degree 6: seed 000 'mesh' (6-point 2D mesh)."""
    return _lattice((side, side), [(0, 1), (1, 0), (1, 1)])


def _grid3d(side: int) -> EdgeList:
    """3D 7-point lattice, interior degree 6: seed 000 thermal, seed 001 grid7pt.300."""
    return _lattice((side, side, side), [(0, 0, 1), (0, 1, 0), (1, 0, 0)])


def _sorted_unique_pairs(a: np.ndarray, b: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.minimum(a, b).astype(np.int64)
    hi = np.maximum(a, b).astype(np.int64)
    codes = _sorted_distinct(lo * n + hi)
    return _decode_codes(codes, n)


def _spread_bits(x: np.ndarray) -> np.ndarray:
    """Interleave zeros between the low 16 bits of x (for Morton codes)."""
    x = (x | (x << 8)) & 0x00FF00FF
    x = (x | (x << 4)) & 0x0F0F0F0F
    x = (x | (x << 2)) & 0x33333333
    return (x | (x << 1)) & 0x55555555


def _morton_order(points: np.ndarray) -> np.ndarray:
    """Indices of unit-square points sorted along a Z-curve of about one point per cell."""
    bits = min(16, max(1, math.ceil(math.log2(max(points.shape[0], 2)) / 2)))
    cells = np.minimum((points * (1 << bits)).astype(np.int64), (1 << bits) - 1)
    return np.argsort(_spread_bits(cells[:, 0]) | (_spread_bits(cells[:, 1]) << 1), kind="stable")


def _delaunay(n: int, seed: int) -> EdgeList:
    """Delaunay triangulation of n uniform points (DIMACS10 delaunay_nXX), ids in point order."""
    from scipy.spatial import Delaunay, QhullError

    if n < 3:  # no triangle: two points make one segment
        ids = np.array([0] if n == 2 else [], dtype=np.int32)
        return EdgeList(ids, ids + 1, n, undirected=True)
    points = _unit_points(n, _key(seed, _TAG_POINTS))
    # Qhull runs ~1.7x faster on points in Morton (Z-curve) order; the triangulation of points in
    # general position is unique, so mapping the simplices back through `order` changes nothing.
    order = _morton_order(points)
    try:
        simplices = Delaunay(points[order]).simplices
    except QhullError as exc:  # only for degenerate point sets, which uniform points never are
        raise InputError(f"generator 'delaunay': Qhull failed: {str(exc).splitlines()[0]}") from None
    del points
    simplices = order.astype(np.int32)[simplices]
    a = simplices[:, [0, 1, 2]].ravel()
    b = simplices[:, [1, 2, 0]].ravel()
    src, dst = _sorted_unique_pairs(a, b, n)
    return EdgeList(src, dst, n, undirected=True)


def _rgg(n: int, seed: int, r: float) -> EdgeList:
    """Random geometric graph in the unit square, radius r (DIMACS10 rgg_n_2_XX)."""
    from scipy.spatial import cKDTree

    points = _unit_points(n, _key(seed, _TAG_POINTS))
    pairs = cKDTree(points).query_pairs(r, output_type="ndarray")
    del points
    src, dst = _sorted_unique_pairs(pairs[:, 0], pairs[:, 1], n)
    return EdgeList(src, dst, n, undirected=True)


# --------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------
def _resolve_rmat(p: dict[str, Any]) -> dict[str, Any]:
    a, b, c = p["a"], p["b"], p["c"]
    if not all(math.isfinite(x) and x >= 0 for x in (a, b, c)) or not a + b + c < 1:
        raise InputError(f"generator 'rmat': need a, b, c >= 0 and a+b+c < 1 (d = 1-a-b-c > 0), got a={a}, b={b}, c={c}")
    return p


def _resolve_grid2d(p: dict[str, Any]) -> dict[str, Any]:
    if p["stencil"] not in (5, 9):
        raise InputError(f"generator 'grid2d': stencil={p['stencil']} must be 5 (4 neighbours) or 9 (8 neighbours)")
    _check_vertices("grid2d", p["side"] ** 2, f"side={p['side']}")
    return p


def _resolve_mesh6(p: dict[str, Any]) -> dict[str, Any]:
    _check_vertices("mesh6", p["side"] ** 2, f"side={p['side']}")
    return p


def _resolve_grid3d(p: dict[str, Any]) -> dict[str, Any]:
    _check_vertices("grid3d", p["side"] ** 3, f"side={p['side']}")
    return p


def _resolve_rgg(p: dict[str, Any]) -> dict[str, Any]:
    r = p["r"]
    if not math.isfinite(r):
        raise InputError(f"generator 'rgg': r={r} must be a finite radius")
    if r == 0:  # the DIMACS10 rgg_n_2_XX radius
        n = p["n"]
        p = dict(p, r=0.55 * math.sqrt(math.log(n) / n) if n > 1 else 0.55)
    return p


@dataclass(frozen=True)
class Generator:
    """A registered generator: its function, its spec keys and a one-line description."""

    func: Callable[..., EdgeList]
    params: dict[str, Param]
    description: str
    resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    omit_defaults: tuple[str, ...] = ()  # keys left out of the canonical name when at their default


_SEED = Param(int, 1, 0, SEED_LIMIT)
_DIRECTED = Param(int, 0, 0, 1)
_SCALE = Param(int, None, 1, 30)
_EF = Param(int, 16, 1, 2**16)
_N = Param(int, None, 1, INDEX_LIMIT)
_SIDE = Param(int, None, 1, INDEX_LIMIT)

GENERATORS: dict[str, Generator] = {
    "rmat": Generator(
        _rmat,
        {"scale": _SCALE, "ef": _EF, "a": Param(float, 0.57, 0.0, 1.0), "b": Param(float, 0.19, 0.0, 1.0),
         "c": Param(float, 0.19, 0.0, 1.0), "seed": _SEED, "directed": _DIRECTED},
        "R-MAT (Chakrabarti et al. 2004): 2**scale vertices, ef*2**scale edges by recursive quadrant "
        "choice a/b/c/d, no relabelling; seed 000's rmat1/2, seed 001's rmat.2Mv.128Me, seed 003's RMAT22",
        _resolve_rmat,
        ("directed",),
    ),
    "kron": Generator(
        _kron,
        {"scale": _SCALE, "ef": _EF, "seed": _SEED, "directed": _DIRECTED},
        "Graph500 Kronecker generator (A=0.57, B=0.19, C=0.19, random vertex relabelling and edge "
        "shuffle); seed 000's kron20 and seed 001's kron_g500-logn20",
        None,
        ("directed",),
    ),
    "random": Generator(
        _random,
        {"n": _N, "m": Param(int, None, 0, 2**62), "seed": _SEED, "directed": _DIRECTED},
        "Erdos-Renyi G(n, M): exactly m distinct uniform edges, no self loops, random order; seed 000's "
        "random1-3 and seed 001's random.2Mv.128Me",
        None,  # m against n(n-1)/2 is checked in _random, with the count in the message
        ("directed",),
    ),
    "grid2d": Generator(
        _grid2d,
        {"side": _SIDE, "stencil": Param(int, 5, 5, 9)},
        "side x side 2D lattice, 5-point (4 neighbours) or 9-point stencil, id = row*side + col; "
        "seed 000's ecology (5-point), seed 001's grid5pt.5000",
        _resolve_grid2d,
    ),
    "mesh6": Generator(
        _mesh6,
        {"side": _SIDE},
        "side x side triangular lattice (4-neighbour grid plus the (r,c)-(r+1,c+1) diagonal, interior "
        "degree 6); seed 000's 'mesh' (6-point 2D mesh)",
        _resolve_mesh6,
    ),
    "grid3d": Generator(
        _grid3d,
        {"side": _SIDE},
        "side**3 3D lattice, 7-point stencil (6 neighbours), id = (z*side + y)*side + x; seed 000's "
        "thermal and seed 001's grid7pt.300",
        _resolve_grid3d,
    ),
    "delaunay": Generator(
        _delaunay,
        {"n": _N, "seed": _SEED},
        "Delaunay triangulation of n uniform points in the unit square (mean degree ~6), ids in point "
        "order; DIMACS10 delaunay_nXX, a planar stand-in for meshes and road maps",
        None,
    ),
    "rgg": Generator(
        _rgg,
        {"n": _N, "seed": _SEED, "r": Param(float, 0.0, 0.0, 1.5)},
        "random geometric graph: n uniform points in the unit square joined within distance r "
        "(r=0: 0.55*sqrt(ln n / n)); DIMACS10 rgg_n_2_XX",
        _resolve_rgg,
    ),
}


def _known() -> str:
    return ", ".join(GENERATORS)


def _format(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def _bind(text: str) -> tuple[str, Generator, dict[str, Any]]:
    name, raw = parse_spec(str(text))
    gen = GENERATORS.get(name)
    if gen is None:
        raise InputError(f"unknown generator {name!r} in {str(text)!r} (known: {_known()})")
    bound = bind_params(name, raw, gen.params)
    if gen.resolve is not None:
        bound = gen.resolve(bound)
    return name, gen, bound


def _canonical(name: str, gen: Generator, bound: dict[str, Any]) -> str:
    items = [
        f"{key}={_format(value)}"
        for key, value in bound.items()
        if not (key in gen.omit_defaults and value == gen.params[key].default)
    ]
    return f"{name}:{','.join(items)}"


def is_generator_spec(text) -> bool:
    """True when the part of `text` before ':' names a registered generator."""
    if not isinstance(text, str):
        return False
    return text.partition(":")[0].strip().lower() in GENERATORS


def canonical_spec(text: str) -> str:
    """The spec with every parameter filled in (defaults, derived radius), as used in names."""
    name, gen, bound = _bind(text)
    return _canonical(name, gen, bound)


def generate(text: str) -> EdgeList:
    """Generate the graph a spec names; its `name` is the canonical spec (every parameter filled in).

    `directed=0` (the default) is left out of the name, so names read like the papers' specs,
    e.g. `rmat:scale=10,ef=16,a=0.57,b=0.19,c=0.19,seed=1`.
    """
    name, gen, bound = _bind(text)
    edges = gen.func(**bound)
    return replace(edges, name=_canonical(name, gen, bound))
