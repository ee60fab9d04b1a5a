"""Graph file readers: pick the reader from the file suffix and return what it read.

Text formats (Matrix Market, SNAP edge lists, DIMACS `.gr`, METIS) return an `EdgeList` for
`csr_from_edges`; the native `.npz` returns a `CSRGraph` directly. Every problem with a file's
contents is a `GraphFormatError` naming the file and, where there is one, the 1-based line.
`.gz` is read transparently for every text format. Edge weights are kept where the file has them:
Matrix Market `integer` / `real`, DIMACS `.gr`, METIS with fmt c=1, a SNAP file whose every edge
line has a third column, and a weighted `.npz` (see each module for the dtype).
"""
from __future__ import annotations

from pathlib import Path

from ..errors import GraphFormatError
from ..graph import CSRGraph, EdgeList
from . import dimacs, metis, mtx, npz, snap
from .npz import write_npz

FORMATS = {
    ".mtx": mtx, ".mtx.gz": mtx,
    ".txt": snap, ".txt.gz": snap, ".el": snap, ".el.gz": snap, ".edges": snap, ".edges.gz": snap,
    ".gr": dimacs, ".gr.gz": dimacs,
    ".graph": metis, ".graph.gz": metis, ".metis": metis, ".metis.gz": metis,
    ".npz": npz,
}
EXTENSIONS = tuple(FORMATS)

__all__ = ["EXTENSIONS", "FORMATS", "read", "write_npz", "reader_for"]


def reader_for(path):
    """The reader module for `path`'s suffix (case-insensitive), or GraphFormatError."""
    name = Path(path).name.lower()
    for ext in sorted(EXTENSIONS, key=len, reverse=True):
        if name.endswith(ext) and len(name) > len(ext):
            return FORMATS[ext]
    known = ", ".join(EXTENSIONS)
    raise GraphFormatError(path, f"unknown graph file suffix; known suffixes: {known}")


def read(path) -> EdgeList | CSRGraph:
    """Read a graph file, dispatching on its suffix."""
    return reader_for(path).read(path)
