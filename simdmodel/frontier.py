"""BFS levels and per-level frontiers in the order a kernel would walk them (DESIGN.md "Frontier").

`sorted` (ascending vertex id, what a bitmask-then-compact kernel produces, seed 000 §5.1) and
`discovery` (the queue order of a serial FIFO BFS, what an atomic-queue kernel approximates).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .errors import InputError
from .graph import CSRGraph

ORDERS = ("sorted", "discovery")


@numba.njit(cache=True, nogil=True)
def bfs_queue(indptr, indices, source):
    """Serial FIFO BFS. Returns (level per vertex, -1 if unreached; the queue; vertices reached)."""
    n = indptr.size - 1
    levels = np.full(n, -1, dtype=np.int32)
    queue = np.empty(n, dtype=np.int32)
    levels[source] = 0
    queue[0] = source
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        next_level = levels[u] + 1
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if levels[v] < 0:
                levels[v] = next_level
                queue[tail] = v
                tail += 1
    return levels, queue, tail


# Direction switches of a level-synchronous BFS (Beamer et al., SC 2012): go bottom-up when the frontier's
# edges exceed the unexplored ones / ALPHA, back top-down when it holds fewer than n / BETA vertices.
_ALPHA, _BETA = 14, 24


@numba.njit(cache=True, nogil=True)
def bfs_levels(indptr, indices, source, symmetric):
    """BFS levels (-1 if unreached) and vertices per level, level by level. With `symmetric` (every edge
    stored both ways, so out-neighbours are in-neighbours) a large frontier is expanded bottom-up: each
    unreached vertex looks for a parent in it and stops at the first. The levels are a BFS's whatever the
    direction; only the order found within a level differs, and `sorted` frontiers do not keep it."""
    n = indptr.size - 1
    levels = np.full(n, -1, dtype=np.int32)
    frontier = np.empty(n, dtype=np.int32)
    following = np.empty(n, dtype=np.int32)
    counts = np.empty(64, dtype=np.int64)  # vertices per level, grown as levels come
    levels[source] = 0
    frontier[0] = source
    size = 1
    level = 0
    frontier_edges = indptr[source + 1] - indptr[source]
    unexplored = indptr[n] - frontier_edges
    bottom_up = False
    while size > 0:
        if level == counts.size:
            grown = np.empty(2 * counts.size, dtype=np.int64)
            grown[:level] = counts
            counts = grown
        counts[level] = size
        if symmetric:
            if not bottom_up and frontier_edges * _ALPHA > unexplored:
                bottom_up = True
            elif bottom_up and size * _BETA < n:
                bottom_up = False
        found = 0
        found_edges = 0
        if bottom_up:
            for v in range(n):
                if levels[v] < 0:
                    for k in range(indptr[v], indptr[v + 1]):
                        if levels[indices[k]] == level:
                            levels[v] = level + 1
                            following[found] = v
                            found += 1
                            found_edges += indptr[v + 1] - indptr[v]
                            break
        else:
            for i in range(size):
                u = frontier[i]
                for k in range(indptr[u], indptr[u + 1]):
                    v = indices[k]
                    if levels[v] < 0:
                        levels[v] = level + 1
                        following[found] = v
                        found += 1
                        found_edges += indptr[v + 1] - indptr[v]
        unexplored -= found_edges
        frontier_edges = found_edges
        frontier, following = following, frontier
        size = found
        level += 1
    level_ptr = np.zeros(level + 1, dtype=np.int64)
    for k in range(level):
        level_ptr[k + 1] = level_ptr[k] + counts[k]
    return levels, level_ptr


@numba.njit(cache=True, nogil=True)
def _level_ptr_of_queue(levels, queue, reached):
    depth = levels[queue[reached - 1]] + 1
    level_ptr = np.zeros(depth + 1, dtype=np.int64)
    for i in range(reached):
        level_ptr[levels[queue[i]] + 1] += 1
    for level in range(depth):
        level_ptr[level + 1] += level_ptr[level]
    return level_ptr


@numba.njit(cache=True, nogil=True)
def _sorted_frontiers(levels, level_ptr):
    # Counting sort by level; scanning ids upwards leaves each level in ascending id order.
    cursor = level_ptr[:-1].copy()
    vertices = np.empty(level_ptr[-1], dtype=np.int32)
    for v in range(levels.size):
        level = levels[v]
        if level >= 0:
            vertices[cursor[level]] = v
            cursor[level] += 1
    return vertices


@numba.njit(cache=True, nogil=True)
def _edge_frontier_sizes(indptr, vertices, level_ptr):
    sizes = np.zeros(level_ptr.size - 1, dtype=np.int64)
    for level in range(sizes.size):
        total = 0
        for i in range(level_ptr[level], level_ptr[level + 1]):
            v = vertices[i]
            total += indptr[v + 1] - indptr[v]
        sizes[level] = total
    return sizes


@dataclass(frozen=True, eq=False)
class Frontiers:
    """All frontiers of one BFS: `vertices[level_ptr[L]:level_ptr[L+1]]` is level L in `order`."""

    source: int
    order: str
    levels: np.ndarray
    vertices: np.ndarray
    level_ptr: np.ndarray

    @property
    def depth(self) -> int:
        """Number of BFS levels (non-empty frontiers), the source's level 0 included."""
        return self.level_ptr.size - 1

    @property
    def reached(self) -> int:
        """Vertices reached from the source, the source included."""
        return int(self.level_ptr[-1])

    def frontier(self, level: int) -> np.ndarray:
        """Vertices of `level` in this object's order."""
        return self.vertices[self.level_ptr[level] : self.level_ptr[level + 1]]

    def vertex_frontier_sizes(self) -> np.ndarray:
        """Vertices per level."""
        return np.diff(self.level_ptr)

    def edge_frontier_sizes(self, graph: CSRGraph) -> np.ndarray:
        """Sum of out-degrees of each level's vertices (seed 000 §3.2, Fig. 2)."""
        return _edge_frontier_sizes(graph.indptr, self.vertices, self.level_ptr)


def check_source(graph: CSRGraph, source: int) -> int:
    """Return `source` as int if it is a vertex with out-degree > 0, else raise InputError."""
    if not 0 <= int(source) < graph.n:
        raise InputError(f"source {source} outside 0..{graph.n - 1}")
    source = int(source)
    if graph.indptr[source + 1] == graph.indptr[source]:
        raise InputError(f"source {source} is isolated (out-degree 0); pick another")
    return source


def _check_order(order: str) -> None:
    if order not in ORDERS:
        raise InputError(f"unknown frontier order {order!r} (choose from {', '.join(ORDERS)})")


def extract_frontiers(levels: np.ndarray, queue: np.ndarray, reached: int, source: int,
                      order: str = "sorted") -> Frontiers:
    """Group `bfs_queue`'s output into per-level frontiers in `order`."""
    _check_order(order)
    level_ptr = _level_ptr_of_queue(levels, queue, reached)
    if order == "discovery":
        vertices = queue[:reached].copy()
    else:
        vertices = _sorted_frontiers(levels, level_ptr)
    return Frontiers(int(source), order, levels, vertices, level_ptr)


def bfs(graph: CSRGraph, source: int, order: str = "sorted") -> Frontiers:
    """Run BFS from `source` and return its frontiers in `order` ("sorted" or "discovery"). Sorted frontiers
    need only the levels (`bfs_levels`, bottom-up through large frontiers of a symmetric graph);
    discovery order is the serial FIFO queue's (`bfs_queue`)."""
    _check_order(order)
    source = check_source(graph, source)
    if order == "sorted":
        levels, level_ptr = bfs_levels(graph.indptr, graph.indices, source, is_symmetric(graph))
        return Frontiers(source, order, levels, _sorted_frontiers(levels, level_ptr), level_ptr)
    levels, queue, reached = bfs_queue(graph.indptr, graph.indices, source)
    return extract_frontiers(levels, queue, reached, source, order)


def is_symmetric(graph: CSRGraph) -> bool:
    """Whether the graph is known to store every edge both ways (symmetrized when it was loaded or built)."""
    return bool(graph.report is not None and graph.report.symmetrized)


def pick_sources(graph: CSRGraph, count: int, seed: int) -> np.ndarray:
    """`count` distinct pseudo-random vertices of the largest (strongly) connected component
    (seed 000 §5.1 uses 10; `components.largest_component` says why that component).

    They are the first `count` of one seeded permutation of the vertices with out-degree > 0 that
    lie in that component, so a smaller count gives a prefix of a larger one (the default source
    of every command is the first). Fewer are returned if the component is smaller than `count`.
    A graph without a cycle has only one-vertex strong components; its sources are then drawn
    from every vertex with out-degree > 0.
    """
    from .components import largest_component

    if count < 1:
        raise InputError(f"--sources must be at least 1, got {count}")
    candidates = np.flatnonzero(graph.degrees() > 0)
    if candidates.size == 0:
        raise InputError("graph has no edges: no source with out-degree > 0")
    rng = np.random.default_rng(seed)
    permuted = candidates[rng.permutation(candidates.size)]
    component = largest_component(graph)
    if component.size > 1:
        permuted = permuted[component.mask[permuted]]
    return permuted[:count].astype(np.int64)
