"""Regular lattices: 2D 5- and 9-point grids, the 6-point triangular mesh, the 3D 7-point grid."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import INDEX_LIMIT, EdgeList


def lattice(shape: tuple[int, ...], steps: list[tuple[int, ...]]) -> EdgeList:
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


def check_vertices(name: str, n: int, what: str) -> None:
    if n > INDEX_LIMIT:
        raise InputError(f"generator {name!r}: {what} gives {n} vertices, more than {INDEX_LIMIT} (int32 ids)")


def grid2d(side: int, stencil: int) -> EdgeList:
    """2D lattice, 5- or 9-point stencil: seed 000 ecology (5-point), seed 001 grid5pt.5000."""
    steps = [(0, 1), (1, 0)] if stencil == 5 else [(0, 1), (1, -1), (1, 0), (1, 1)]
    return lattice((side, side), steps)


def mesh6(side: int) -> EdgeList:
    """Triangular lattice, interior degree 6: seed 000 'mesh' (6-point 2D mesh)."""
    return lattice((side, side), [(0, 1), (1, 0), (1, 1)])


def grid3d(side: int) -> EdgeList:
    """3D 7-point lattice, interior degree 6: seed 000 thermal, seed 001 grid7pt.300."""
    return lattice((side, side, side), [(0, 0, 1), (0, 1, 0), (1, 0, 0)])


def resolve_grid2d(p: dict[str, Any]) -> dict[str, Any]:
    if p["stencil"] not in (5, 9):
        raise InputError(f"generator 'grid2d': stencil={p['stencil']} must be 5 (4 neighbours) or 9 (8 neighbours)")
    check_vertices("grid2d", p["side"] ** 2, f"side={p['side']}")
    return p


def resolve_mesh6(p: dict[str, Any]) -> dict[str, Any]:
    check_vertices("mesh6", p["side"] ** 2, f"side={p['side']}")
    return p


def resolve_grid3d(p: dict[str, Any]) -> dict[str, Any]:
    check_vertices("grid3d", p["side"] ** 3, f"side={p['side']}")
    return p
