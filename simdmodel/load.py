"""`load_graph`: one entry point for a path, a generator spec, a scipy.sparse matrix or a networkx graph."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .errors import InputError
from .graph import CSRGraph, EdgeList, csr_from_edges, edges_of
from .resources import check_graph_fits
from . import generators, readers


def load_graph(
    spec,
    *,
    undirected: bool = False,
    drop_self_loops: bool = False,
    drop_duplicates: bool = False,
) -> CSRGraph:
    """Load or generate a graph and build its CSR.

    `spec` is a file path (`.mtx[.gz]`, `.txt/.el[.gz]`, `.gr[.gz]`, `.graph`, `.npz`), a generator
    string such as `rmat:scale=20,ef=16`, a scipy.sparse matrix (square; non-zeros are edges) or a
    networkx graph (nodes relabelled 0..n-1 in iteration order). A file's edge weights, if it has
    them, come along through every option (`CSRGraph.weights`); generated graphs, scipy matrices
    and networkx graphs are loaded without weights.
    """
    options = dict(undirected=undirected, drop_self_loops=drop_self_loops, drop_duplicates=drop_duplicates)
    if isinstance(spec, CSRGraph):
        source = spec
    elif isinstance(spec, (str, os.PathLike)):
        source = _from_text_spec(spec)
    elif hasattr(spec, "tocoo"):
        source = _from_scipy(spec)
    elif hasattr(spec, "nodes") and hasattr(spec, "edges"):
        source = _from_networkx(spec)
    else:
        raise InputError(f"cannot load a graph from {type(spec).__name__}")
    if isinstance(source, CSRGraph):
        if not any(options.values()):
            return source
        source = edges_of(source)
    return csr_from_edges(source, **options)


def _from_text_spec(spec) -> EdgeList | CSRGraph:
    text = os.fspath(spec)
    path = Path(text)
    if not path.exists() and generators.is_generator_spec(text):
        check_graph_fits(text, *generators.declared_size(text))
        return generators.generate(text)
    if not path.exists():
        raise InputError(f"{text}: no such file (and not a generator spec; known generators: "
                         f"{', '.join(generators.GENERATORS)})")
    if path.is_dir():
        raise InputError(f"{text}: is a directory, expected a graph file")
    graph = readers.read(path)
    if isinstance(graph, EdgeList):  # declared sizes: check them before the CSR is built
        check_graph_fits(text, graph.n, graph.src.size * (2 if graph.undirected else 1))
    return graph


def _from_scipy(matrix) -> EdgeList:
    coo = matrix.tocoo()
    if coo.shape[0] != coo.shape[1]:
        raise InputError(f"adjacency matrix must be square, got shape {coo.shape}")
    return EdgeList(coo.row.astype(np.int64), coo.col.astype(np.int64), int(coo.shape[0]))


def _from_networkx(graph) -> EdgeList:
    index = {node: i for i, node in enumerate(graph.nodes)}
    pairs = np.array([(index[u], index[v]) for u, v in graph.edges()], dtype=np.int64).reshape(-1, 2)
    return EdgeList(pairs[:, 0], pairs[:, 1], len(index), undirected=not graph.is_directed(),
                    name=str(getattr(graph, "name", "") or ""))
