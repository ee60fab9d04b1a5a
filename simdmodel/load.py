"""`load_graph`: one entry point for a path, a generator spec, a scipy.sparse matrix or a networkx graph."""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from .errors import InputError
from .identity import FileIdentity, file_sha256
from .graph import CSRGraph, EdgeList, csr_from_edges, edges_of
from .resources import check_graph_fits
from . import generators, readers
from .readers import ReadOptions


def load_graph(
    spec,
    *,
    undirected: bool = False,
    drop_self_loops: bool = False,
    drop_duplicates: bool = False,
    read_options: ReadOptions | None = None,
) -> CSRGraph:
    """Load or generate a graph and build its CSR.

    `spec` is a file path (`.mtx`, `.txt/.el/.edges/.edgelist`, `.csv/.tsv`, `.gr`, `.graph/.metis`,
    each optionally `.gz/.bz2/.xz/.zst`, or `.npz`), a generator string such as
    `rmat:scale=20,ef=16`, a scipy.sparse matrix (square; non-zeros are edges) or a networkx graph
    (nodes relabelled 0..n-1 in iteration order). A file's edge weights, if it has them, come along
    through every option (`CSRGraph.weights`); generated graphs, scipy matrices and networkx graphs
    are loaded without weights. `read_options` go to the file's reader (a CSV header row and
    columns, SNAP count lines); set for anything but a file, they are an InputError.
    """
    options = dict(undirected=undirected, drop_self_loops=drop_self_loops, drop_duplicates=drop_duplicates)
    if read_options is not None and not isinstance(read_options, ReadOptions):
        raise TypeError(f"read_options must be a ReadOptions, got {type(read_options).__name__}")
    if isinstance(spec, (str, os.PathLike)):
        source = _from_text_spec(spec, read_options)
    else:
        _refuse_read_options(read_options, f"a {type(spec).__name__}")
        source = _from_object(spec)
    if isinstance(source, CSRGraph) and not any(options.values()):
        graph = source
    else:
        graph = csr_from_edges(edges_of(source) if isinstance(source, CSRGraph) else source, **options)
    if isinstance(spec, (str, os.PathLike)) and Path(spec).is_file():
        graph = _with_origin(graph, Path(spec), read_options, options)
    return graph


def _with_origin(graph: CSRGraph, path: Path, read_options: ReadOptions | None, options: dict) -> CSRGraph:
    """`graph` with its FileIdentity: the file's sha256 and the loader's choices."""
    report = graph.report
    symmetrized = options["undirected"] or (report is not None and report.symmetrized)
    origin = FileIdentity(
        file=path.name, sha256=file_sha256(path), symmetrized=bool(symmetrized),
        self_loops="dropped" if options["drop_self_loops"] else "kept",
        duplicates="dropped" if options["drop_duplicates"] else "kept",
        read_options=read_options.choices() if read_options is not None else {},
        notes=tuple(report.notes) if report is not None else ())
    return dataclasses.replace(graph, origin=origin)


def _refuse_read_options(read_options: ReadOptions | None, what: str) -> None:
    """Read options set (not defaults) for something that is not a graph file: an InputError."""
    if read_options is not None and read_options.choices():
        flags = ", ".join(read_options.flag(name) for name in read_options.choices())
        raise InputError(f"{flags}: read options apply to graph files, not to {what}")


def _from_object(spec) -> EdgeList | CSRGraph:
    """A CSRGraph as it is, or the edges of a scipy.sparse matrix or a networkx graph."""
    if isinstance(spec, CSRGraph):
        return spec
    if hasattr(spec, "tocoo"):
        return _from_scipy(spec)
    if hasattr(spec, "nodes") and hasattr(spec, "edges"):
        return _from_networkx(spec)
    raise InputError(f"cannot load a graph from {type(spec).__name__}")


def _from_text_spec(spec, read_options: ReadOptions | None = None) -> EdgeList | CSRGraph:
    text = os.fspath(spec)
    path = Path(text)
    if not path.exists() and generators.is_generator_spec(text):
        _refuse_read_options(read_options, f"the generated graph {text!r}")
        check_graph_fits(text, *generators.declared_size(text))
        return generators.generate(text)
    if not path.exists():
        raise InputError(f"{text}: no such file (and not a generator spec; known generators: "
                         f"{', '.join(generators.GENERATORS)})")
    if path.is_dir():
        raise InputError(f"{text}: is a directory, expected a graph file")
    graph = readers.read(path, read_options)
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
