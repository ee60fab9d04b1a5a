"""The largest connected component, where BFS sources are drawn.

A source outside it traverses a sliver of the graph: on a real directed graph (a web crawl, a
vote network) most vertices reach only part of it, and on an undirected one a source in a small
component gives a BFS of a few levels. Sources therefore come from the largest strongly connected
component: every one of them reaches that whole component, so TEPS and per-level figures mean the
same for every source. A graph the builder symmetrized is undirected, and its components come
from a numba BFS labelling (O(n + m), a fraction of a second on 33 M edges); any other graph goes
through scipy's strongly connected components.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numba
import numpy as np

from .frontier import is_symmetric
from .graph import CSRGraph


@dataclass(frozen=True)
class Component:
    """The largest component: a boolean mask over the vertices, its size and its kind."""

    mask: np.ndarray
    size: int
    kind: str  # "connected" (a symmetrized graph) or "strongly connected"

    def describe(self, n: int) -> str:
        """E.g. 'largest strongly connected component: 7,066 of 8,298 vertices (85.2%)'."""
        share = 100.0 * self.size / n if n else 0.0
        return f"largest {self.kind} component: {self.size:,} of {n:,} vertices ({share:.1f}%)"


@numba.njit(cache=True, nogil=True)
def _component_labels(indptr, indices):
    """Label of each vertex's component, by BFS, for a graph that stores both directions."""
    n = indptr.size - 1
    labels = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    count = 0
    for start in range(n):
        if labels[start] >= 0:
            continue
        labels[start] = count
        queue[0] = start
        head, tail = 0, 1
        while head < tail:
            u = queue[head]
            head += 1
            for k in range(indptr[u], indptr[u + 1]):
                v = indices[k]
                if labels[v] < 0:
                    labels[v] = count
                    queue[tail] = v
                    tail += 1
        count += 1
    return labels


_FOUND: "weakref.WeakKeyDictionary[CSRGraph, Component]" = weakref.WeakKeyDictionary()
"""Each graph's component, kept while the graph lives: `graph info`, the depth sources and the
command's own sources all ask for it (CSRGraph is immutable and hashed by identity)."""


def largest_component(graph: CSRGraph) -> Component:
    """The largest (strongly) connected component of `graph`; ties go to the lowest vertex id.
    Computed once per graph object."""
    found = _FOUND.get(graph)
    if found is None:
        found = _FOUND[graph] = _largest_component(graph)
    return found


def _largest_component(graph: CSRGraph) -> Component:
    symmetric = is_symmetric(graph)
    if symmetric:
        labels = _component_labels(graph.indptr, graph.indices)
    else:
        import scipy.sparse as sp
        from scipy.sparse.csgraph import connected_components

        # through COO: a copy in canonical form (scipy's strong components go wrong on unsorted or
        # repeated entries, and a CSR built on graph.indices would sort them in place)
        rows = np.repeat(np.arange(graph.n, dtype=np.int32), graph.degrees())
        matrix = sp.coo_matrix((np.ones(graph.m, dtype=np.float32), (rows, graph.indices)),
                               shape=(graph.n, graph.n)).tocsr()
        labels = connected_components(matrix, directed=True, connection="strong")[1]
    sizes = np.bincount(labels)
    biggest = int(labels[np.flatnonzero(sizes[labels] == sizes.max())[0]])
    mask = labels == biggest
    mask.flags.writeable = False  # shared by every caller (largest_component keeps it)
    return Component(mask, int(sizes[biggest]), "connected" if symmetric else "strongly connected")
