"""R-MAT and Graph500 Kronecker generators (seed 000 rmat1/2 and kron20, seed 001 kron_g500-logn20)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InputError
from ..graph import EdgeList
from ._kernels import (TAG_EDGES, TAG_PERM, TAG_SHUFFLE, key, kron_kernel, permutation, relabel, rmat_kernel,
                       shuffle_pairs)


def rmat(scale: int, ef: int, a: float, b: float, c: float, seed: int, directed: int) -> EdgeList:
    """R-MAT (Chakrabarti, Zhan, Faloutsos 2004), ids unpermuted: seed 000 rmat1/2, seed 003 RMAT22."""
    n = 1 << scale
    m = ef * n
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    rmat_kernel(m, scale, a, a + b, a + b + c, key(seed, TAG_EDGES), src, dst)
    return EdgeList(src, dst, n, undirected=not directed)


# Graph500 reference initiator (generator/graph500 octave reference and make_graph).
_G500_A, _G500_B, _G500_C = 0.57, 0.19, 0.19


def kron(scale: int, ef: int, seed: int, directed: int) -> EdgeList:
    """Graph500 Kronecker generator (relabelled, shuffled): seed 000 kron20, seed 001 kron_g500-logn20."""
    n = 1 << scale
    m = ef * n
    src = np.empty(m, dtype=np.int32)
    dst = np.empty(m, dtype=np.int32)
    ab = _G500_A + _G500_B
    kron_kernel(m, scale, ab, _G500_A / ab, _G500_C / (1.0 - ab), key(seed, TAG_EDGES), src, dst)
    relabel(permutation(key(seed, TAG_PERM), n), src, dst)
    shuffle_pairs(key(seed, TAG_SHUFFLE), src, dst)
    return EdgeList(src, dst, n, undirected=not directed)


def resolve_rmat(p: dict[str, Any]) -> dict[str, Any]:
    a, b, c = p["a"], p["b"], p["c"]
    if not all(math.isfinite(x) and x >= 0 for x in (a, b, c)) or not a + b + c < 1:
        raise InputError(f"generator 'rmat': need a, b, c >= 0 and a+b+c < 1 (d = 1-a-b-c > 0), "
                         f"got a={a}, b={b}, c={c}")
    return p
