"""Uniform random graphs G(n, M): seed 000 random1-3, seed 001 random.2Mv.128Me."""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..graph import EdgeList
from ._kernels import (TAG_PAIRS, TAG_SHUFFLE, decode_codes, directed_index_to_code, draw_pair_codes, key,
                       shuffle, sorted_distinct)


def gnm(n: int, m: int, seed: int, directed: int) -> EdgeList:
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
            codes = directed_index_to_code(np.arange(possible, dtype=np.int64), n)
        else:
            rows, cols = np.triu_indices(n, 1)
            codes = rows * n + cols
            del rows, cols
        shuffle(key(seed, TAG_SHUFFLE), codes, m)
        codes = codes[:m]
    else:
        # Sparse: draw exactly the missing number of pairs, keep distinct ones, repeat. The set of
        # the first m distinct values of an i.i.d. uniform sequence is a uniform m-subset.
        codes = sorted_distinct(draw_pair_codes(m, n, key(seed, TAG_PAIRS, 0), undirected))
        rounds = 1
        while codes.size < m:
            fresh = sorted_distinct(draw_pair_codes(m - codes.size, n, key(seed, TAG_PAIRS, rounds), undirected))
            pos = np.searchsorted(codes, fresh)
            known = np.zeros(fresh.size, dtype=np.bool_)
            inside = pos < codes.size
            known[inside] = codes[pos[inside]] == fresh[inside]
            codes = np.insert(codes, pos[~known], fresh[~known])
            rounds += 1
        shuffle(key(seed, TAG_SHUFFLE), codes, m)
    src, dst = decode_codes(codes, n)
    return EdgeList(src, dst, n, undirected=undirected)
