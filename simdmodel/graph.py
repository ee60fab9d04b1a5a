"""CSRGraph, the graph every module shares, and the one builder that turns edge lists into it.

DESIGN.md "Graph": `indptr` int64 of length n+1, `indices` int32 of length m, out-edges of v in
file order; undirected inputs are stored with both directions (a self loop once); self loops and
duplicate edges are kept unless asked otherwise, and the builder reports how many it saw.

Edge weights, when the input has them, are one more array aligned with `indices` (length m):
int64 when the file's weights are integers (DIMACS `.gr`, METIS, Matrix Market `integer`),
float64 otherwise (Matrix Market `real`, SNAP's third column), always finite; `weights` is None
for an unweighted graph, and no weight array is ever allocated for one. Every step of the builder
carries them along: both stored directions of an undirected edge get its weight, and dropping a
self loop or a later duplicate drops its weight with it (the first copy keeps its own).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numba
import numpy as np

from .errors import InputError

if TYPE_CHECKING:
    from .identity import FileIdentity

INDEX_LIMIT = np.iinfo(np.int32).max


@dataclass(frozen=True)
class LoadReport:
    """What the builder saw in the input, before anything was dropped (directed CSR entries)."""

    entries_read: int
    self_loops: int
    duplicates: int
    symmetrized: bool = False
    self_loops_dropped: bool = False
    duplicates_dropped: bool = False
    notes: tuple[str, ...] = ()  # the reader's choices (EdgeList.notes), for `graph info`


@dataclass(frozen=True)
class EdgeList:
    """Raw edges from a reader or generator: `src[i] -> dst[i]`, ids 0..n-1.

    `undirected` says each pair stands for both directions (Matrix Market `symmetric`, generators
    of undirected graphs); the builder then stores both, each with the pair's weight. `notes` are
    the choices a reader made that the user should see (a detected CSV header row, the columns
    read, SNAP count lines); the builder passes them on in its LoadReport.
    """

    src: np.ndarray
    dst: np.ndarray
    n: int
    undirected: bool = False
    name: str = ""
    weights: np.ndarray | None = None  # weights[i] belongs to src[i] -> dst[i]; None: unweighted
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class CSRGraph:
    """Compressed sparse row graph: out-edges of v are `indices[indptr[v]:indptr[v+1]]`, their
    weights (when the graph has them) `weights[indptr[v]:indptr[v+1]]`."""

    indptr: np.ndarray
    indices: np.ndarray
    name: str = ""
    report: LoadReport | None = field(default=None, compare=False)
    weights: np.ndarray | None = None
    origin: FileIdentity | None = field(default=None, compare=False)  # the file it was read from, if any

    def __post_init__(self):
        indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(self.indices, dtype=np.int32)
        object.__setattr__(self, "indptr", indptr)
        object.__setattr__(self, "indices", indices)
        if self.weights is not None:
            object.__setattr__(self, "weights", _as_weights(self.weights, indices.size, "CSR"))
        if indptr.ndim != 1 or indptr.size < 1:
            raise InputError("CSR indptr must be a 1-D array of length n+1 >= 1")
        if indptr[0] != 0 or indptr[-1] != indices.size:
            raise InputError(
                f"CSR indptr must start at 0 and end at len(indices)={indices.size}, "
                f"got {indptr[0]}..{indptr[-1]}"
            )
        if indptr.size > 1 and np.any(np.diff(indptr) < 0):
            raise InputError("CSR indptr must be non-decreasing")
        n = indptr.size - 1
        if indices.size and (indices.min() < 0 or indices.max() >= n):
            raise InputError(f"CSR indices must lie in 0..{n - 1}")
        if self.weights is not None:
            bad = _first_non_finite(self.weights)
            if bad >= 0:
                u = int(np.searchsorted(indptr, bad, side="right")) - 1
                raise InputError(f"CSR weights must be finite, got {self.weights[bad]} on edge {bad} "
                                 f"({u} -> {indices[bad]})")

    @property
    def n(self) -> int:
        """Number of vertices."""
        return self.indptr.size - 1

    @property
    def m(self) -> int:
        """Number of directed edges (an undirected edge counts twice, as in the papers)."""
        return self.indices.size

    @property
    def weighted(self) -> bool:
        """Whether the graph carries edge weights."""
        return self.weights is not None

    @property
    def nbytes(self) -> int:
        """Bytes held by the CSR arrays (the weights included)."""
        extra = self.weights.nbytes if self.weights is not None else 0
        return self.indptr.nbytes + self.indices.nbytes + extra

    def degrees(self) -> np.ndarray:
        """Out-degree of every vertex (int64)."""
        return np.diff(self.indptr)

    def neighbors(self, v: int) -> np.ndarray:
        """Out-neighbours of v in stored order."""
        return self.indices[self.indptr[v] : self.indptr[v + 1]]

    def neighbor_weights(self, v: int) -> np.ndarray:
        """Weights of v's out-edges, aligned with `neighbors(v)`; InputError for an unweighted graph."""
        if self.weights is None:
            raise InputError(f"{self.name or 'graph'}: has no edge weights")
        return self.weights[self.indptr[v] : self.indptr[v + 1]]

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        weighted = f", weights {self.weights.dtype}" if self.weights is not None else ""
        return f"CSRGraph({label.strip() or 'unnamed'}, n={self.n}, m={self.m}{weighted})"


def _as_weights(weights, count: int, what: str) -> np.ndarray:
    """`weights` as a contiguous int64 (integer input) or float64 (real input) array of `count` values.

    Raises InputError, naming `what`, for another shape or length, or a non-numeric dtype. Finiteness
    is the caller's check (`_first_non_finite`), so it can name the offending edge.
    """
    array = np.asarray(weights)
    if array.ndim != 1 or array.size != count:
        raise InputError(f"{what} weights must be a 1-D array of {count} values (one per edge), "
                         f"got shape {array.shape}")
    if array.dtype.kind == "u" and array.size and int(array.max()) > np.iinfo(np.int64).max:
        raise InputError(f"{what} weights do not fit int64")
    if array.dtype.kind in "iu":
        return np.ascontiguousarray(array, dtype=np.int64)
    if array.dtype.kind == "f":
        return np.ascontiguousarray(array, dtype=np.float64)
    raise InputError(f"{what} weights must be integers or real numbers, got dtype {array.dtype}")


def _first_non_finite(weights: np.ndarray) -> int:
    """Index of the first NaN or infinite weight, or -1 (integer weights are always finite)."""
    if weights.dtype.kind != "f" or weights.size == 0:
        return -1
    finite = np.isfinite(weights)
    return -1 if finite.all() else int(np.argmin(finite))


@numba.njit(cache=True, nogil=True)
def _count_out_degrees(src, dst, n, undirected):
    counts = np.zeros(n + 1, dtype=np.int64)
    for e in range(src.size):
        u = src[e]
        v = dst[e]
        counts[u + 1] += 1
        if undirected and u != v:
            counts[v + 1] += 1
    return counts


@numba.njit(cache=True, nogil=True)
def _fill_indices(src, dst, indptr, undirected):
    # Walk the edges in input order so each row keeps file order (a stable counting sort); an
    # undirected self loop is stored once. Returns the indices and the number of self loops.
    cursor = indptr[:-1].copy()
    indices = np.empty(indptr[-1], dtype=np.int32)
    loops = 0
    for e in range(src.size):
        u = src[e]
        v = dst[e]
        indices[cursor[u]] = v
        cursor[u] += 1
        if u == v:
            loops += 1
        elif undirected:
            indices[cursor[v]] = u
            cursor[v] += 1
    return indices, loops


@numba.njit(cache=True, nogil=True)
def _fill_weights(src, dst, weights, indptr, undirected):
    # The same walk as _fill_indices, so weights[k] belongs to indices[k].
    cursor = indptr[:-1].copy()
    out = np.empty(indptr[-1], dtype=weights.dtype)
    for e in range(src.size):
        u = src[e]
        v = dst[e]
        out[cursor[u]] = weights[e]
        cursor[u] += 1
        if undirected and u != v:
            out[cursor[v]] = weights[e]
            cursor[v] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _duplicate_mask(indptr, indices):
    """True at every entry that repeats an earlier entry of the same row.

    One pass in row order with a per-vertex "last row that listed me" marker: O(m), no sorting,
    and the first occurrence in file order is the one kept.
    """
    n = indptr.size - 1
    last_row = np.full(n, -1, dtype=np.int32)
    mask = np.zeros(indices.size, dtype=np.bool_)
    for v in range(n):
        for k in range(indptr[v], indptr[v + 1]):
            w = indices[k]
            if last_row[w] == v:
                mask[k] = True
            else:
                last_row[w] = v
    return mask


@numba.njit(cache=True, nogil=True)
def _self_loop_mask(indptr, indices):
    """True at every entry v -> v."""
    mask = np.zeros(indices.size, dtype=np.bool_)
    for v in range(indptr.size - 1):
        for k in range(indptr[v], indptr[v + 1]):
            mask[k] = indices[k] == v
    return mask


@numba.njit(cache=True, nogil=True)
def _remove_entries(indptr, indices, mask):
    n = indptr.size - 1
    new_indptr = np.zeros(n + 1, dtype=np.int64)
    new_indices = np.empty(indices.size - mask.sum(), dtype=np.int32)
    out = 0
    for v in range(n):
        for k in range(indptr[v], indptr[v + 1]):
            if not mask[k]:
                new_indices[out] = indices[k]
                out += 1
        new_indptr[v + 1] = out
    return new_indptr, new_indices


def count_self_loops(graph: CSRGraph) -> int:
    """Number of stored entries v -> v."""
    return int(_self_loop_mask(graph.indptr, graph.indices).sum())


def count_duplicates(graph: CSRGraph) -> int:
    """Number of stored entries that repeat an earlier entry of the same row."""
    return int(_duplicate_mask(graph.indptr, graph.indices).sum())


def _check_ids(src: np.ndarray, dst: np.ndarray, n: int, name: str) -> None:
    if n < 0 or n > INDEX_LIMIT:
        raise InputError(f"{name or 'graph'}: vertex count {n} outside 0..{INDEX_LIMIT}")
    if src.shape != dst.shape or src.ndim != 1:
        raise InputError(f"{name or 'graph'}: src and dst must be 1-D arrays of equal length")
    if src.size == 0:
        return
    lo = min(int(src.min()), int(dst.min()))
    hi = max(int(src.max()), int(dst.max()))
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise InputError(f"{name or 'graph'}: vertex id {bad} outside 0..{n - 1}")


def csr_from_edges(
    edges: EdgeList,
    *,
    undirected: bool = False,
    drop_self_loops: bool = False,
    drop_duplicates: bool = False,
) -> CSRGraph:
    """Build a CSRGraph from an edge list, keeping input order within each row.

    `undirected` (or `edges.undirected`) stores every pair in both directions, a self loop once.
    Self loops and duplicates are counted in the returned graph's `report` before being dropped;
    a dropped entry's weight goes with it, so of duplicates the first copy keeps its weight.
    """
    src = np.asarray(edges.src)
    dst = np.asarray(edges.dst)
    if src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
        raise InputError(f"{edges.name or 'graph'}: vertex ids must be integers")
    _check_ids(src, dst, edges.n, edges.name)
    weights = _edge_weights(edges, src, dst)
    symmetrize = bool(undirected or edges.undirected)
    counts = _count_out_degrees(src, dst, edges.n, symmetrize)
    indptr = np.cumsum(counts)
    if indptr[-1] > np.iinfo(np.int64).max // 2:
        raise InputError(f"{edges.name or 'graph'}: too many edges")
    indices, loops = _fill_indices(src, dst, indptr, symmetrize)
    if weights is not None:
        weights = _fill_weights(src, dst, weights, indptr, symmetrize)
    dup_mask = _duplicate_mask(indptr, indices)
    duplicates = int(dup_mask.sum())
    remove = dup_mask if drop_duplicates else np.zeros(indices.size, dtype=np.bool_)
    if drop_self_loops and loops:
        remove |= _self_loop_mask(indptr, indices)
    if remove.any():
        indptr, indices = _remove_entries(indptr, indices, remove)
        if weights is not None:
            weights = weights[~remove]
    report = LoadReport(
        entries_read=int(src.size),
        self_loops=int(loops),
        duplicates=duplicates,
        symmetrized=symmetrize,
        self_loops_dropped=drop_self_loops,
        duplicates_dropped=drop_duplicates,
        notes=tuple(edges.notes),
    )
    return CSRGraph(indptr, indices, name=edges.name, report=report, weights=weights)


def _edge_weights(edges: EdgeList, src: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
    """The edge list's weights checked (one finite number per edge) and typed, or None."""
    if edges.weights is None:
        return None
    name = edges.name or "graph"
    weights = _as_weights(edges.weights, src.size, name)
    bad = _first_non_finite(weights)
    if bad >= 0:
        raise InputError(f"{name}: weight {weights[bad]} of edge {bad} ({src[bad]} -> {dst[bad]}) "
                         "is not finite")
    return weights


def edges_of(graph: CSRGraph) -> EdgeList:
    """The graph's stored entries as an edge list (row by row, stored order), weights included."""
    src = np.repeat(np.arange(graph.n, dtype=np.int32), graph.degrees())
    weights = graph.weights.copy() if graph.weights is not None else None
    return EdgeList(src, graph.indices.copy(), graph.n, undirected=False, name=graph.name,
                    weights=weights)
