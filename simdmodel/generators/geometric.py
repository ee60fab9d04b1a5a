"""DIMACS10-style planar and geometric graphs: Delaunay triangulations and random geometric graphs."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import EdgeList
from ._kernels import TAG_POINTS, decode_codes, key, sorted_distinct, unit_points


def sorted_unique_pairs(a: np.ndarray, b: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    lo = np.minimum(a, b).astype(np.int64)
    hi = np.maximum(a, b).astype(np.int64)
    codes = sorted_distinct(lo * n + hi)
    return decode_codes(codes, n)


def spread_bits(x: np.ndarray) -> np.ndarray:
    """Interleave zeros between the low 16 bits of x (for Morton codes)."""
    x = (x | (x << 8)) & 0x00FF00FF
    x = (x | (x << 4)) & 0x0F0F0F0F
    x = (x | (x << 2)) & 0x33333333
    return (x | (x << 1)) & 0x55555555


def morton_order(points: np.ndarray) -> np.ndarray:
    """Indices of unit-square points sorted along a Z-curve of about one point per cell."""
    bits = min(16, max(1, math.ceil(math.log2(max(points.shape[0], 2)) / 2)))
    cells = np.minimum((points * (1 << bits)).astype(np.int64), (1 << bits) - 1)
    return np.argsort(spread_bits(cells[:, 0]) | (spread_bits(cells[:, 1]) << 1), kind="stable")


def delaunay(n: int, seed: int) -> EdgeList:
    """Delaunay triangulation of n uniform points (DIMACS10 delaunay_nXX), ids in point order."""
    from scipy.spatial import Delaunay, QhullError

    if n < 3:  # no triangle: two points make one segment
        ids = np.array([0] if n == 2 else [], dtype=np.int32)
        return EdgeList(ids, ids + 1, n, undirected=True)
    points = unit_points(n, key(seed, TAG_POINTS))
    # Qhull runs ~1.7x faster on points in Morton (Z-curve) order; the triangulation of points in
    # general position is unique, so mapping the simplices back through `order` changes nothing.
    order = morton_order(points)
    try:
        simplices = Delaunay(points[order]).simplices
    except QhullError as exc:  # only for degenerate point sets, which uniform points never are
        raise InputError(f"generator 'delaunay': Qhull failed: {str(exc).splitlines()[0]}") from None
    del points
    simplices = order.astype(np.int32)[simplices]
    a = simplices[:, [0, 1, 2]].ravel()
    b = simplices[:, [1, 2, 0]].ravel()
    src, dst = sorted_unique_pairs(a, b, n)
    return EdgeList(src, dst, n, undirected=True)


def rgg(n: int, seed: int, r: float) -> EdgeList:
    """Random geometric graph in the unit square, radius r (DIMACS10 rgg_n_2_XX)."""
    from scipy.spatial import cKDTree

    points = unit_points(n, key(seed, TAG_POINTS))
    pairs = cKDTree(points).query_pairs(r, output_type="ndarray")
    del points
    src, dst = sorted_unique_pairs(pairs[:, 0], pairs[:, 1], n)
    return EdgeList(src, dst, n, undirected=True)


def resolve_rgg(p: dict[str, Any]) -> dict[str, Any]:
    r = p["r"]
    if not math.isfinite(r):
        raise InputError(f"generator 'rgg': r={r} must be a finite radius")
    if r == 0:  # the DIMACS10 rgg_n_2_XX radius
        n = p["n"]
        p = dict(p, r=0.55 * math.sqrt(math.log(n) / n) if n > 1 else 0.55)
    return p
