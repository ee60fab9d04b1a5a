"""Graph file readers: pick the reader from the file suffix and return what it read.

Text formats (Matrix Market, SNAP edge lists, CSV/TSV edge lists, DIMACS `.gr`, METIS) return an
`EdgeList` for `csr_from_edges`; the native `.npz` returns a `CSRGraph` directly. Every problem
with a file's contents is a `GraphFormatError` naming the file and, where there is one, the 1-based
line. Every text format may be compressed: gzip, bzip2, xz or zstd data is recognised by its magic
bytes and decompressed, and the suffix may carry one compression suffix after the format's
(`web.mtx.xz`, `edges.csv.bz2`). Edge weights are kept where the file has them: Matrix Market
`integer` / `real`, DIMACS `.gr`, METIS with fmt c=1, a SNAP file whose every edge line has a third
column, a CSV/TSV weight column, and a weighted `.npz` (see each module for the dtype).

`ReadOptions` carries the choices some formats leave open (a CSV header row and columns, SNAP
count lines); an option set for a format that has no use for it is an InputError.
"""
from __future__ import annotations

from pathlib import Path

from ..errors import GraphFormatError, InputError
from ..graph import CSRGraph, EdgeList
from . import csv, dimacs, metis, mtx, npz, snap
from ._text import COMPRESSION_SUFFIXES, split_compression, stem_name
from .npz import write_npz
from .options import ReadOptions

FORMATS = {
    ".mtx": mtx,
    ".txt": snap, ".el": snap, ".edges": snap, ".edgelist": snap,
    ".csv": csv, ".tsv": csv,
    ".gr": dimacs,
    ".graph": metis, ".metis": metis,
    ".npz": npz,
}
"""Format suffix -> reader module; every one but `.npz` may be followed by a compression suffix."""
EXTENSIONS = tuple(FORMATS) + tuple(
    ext + compression for ext, module in FORMATS.items() if module is not npz
    for compression in COMPRESSION_SUFFIXES
)
"""Every file suffix `read` accepts, compressed ones included."""

__all__ = ["COMPRESSION_SUFFIXES", "EXTENSIONS", "FORMATS", "ReadOptions", "read", "reader_for",
           "stem_name", "write_npz"]


def reader_for(path):
    """The reader module for `path`'s suffix (case-insensitive, after one compression suffix), or
    GraphFormatError."""
    base, compression = split_compression(Path(path).name.lower())
    ext = Path(base).suffix
    if ext in FORMATS and len(base) > len(ext):
        if compression and FORMATS[ext] is npz:
            raise GraphFormatError(path, f"an .npz archive is read as it is, not {compression}-"
                                   "compressed; decompress it first")
        return FORMATS[ext]
    raise GraphFormatError(
        path, f"unknown graph file suffix; known suffixes: {', '.join(FORMATS)}, the text formats "
        f"optionally followed by {', '.join(COMPRESSION_SUFFIXES)}"
    )


def read(path, options: ReadOptions | None = None) -> EdgeList | CSRGraph:
    """Read a graph file, dispatching on its suffix; `options` go to readers that take them, and
    one set for a format without that choice is an InputError."""
    module = reader_for(path)
    if options is None:
        return module.read(path)
    if not isinstance(options, ReadOptions):
        raise TypeError(f"options must be a ReadOptions, got {type(options).__name__}")
    used = getattr(module, "OPTIONS", ())
    for name in options.choices():
        if name not in used:
            owners = ", ".join(ext for ext, mod in FORMATS.items()
                               if name in getattr(mod, "OPTIONS", ()))
            ext = Path(split_compression(Path(path).name)[0]).suffix
            raise InputError(f"{path}: {options.flag(name)} applies only to {owners} files, not "
                             f"to this {ext} file")
    return module.read(path, options) if used else module.read(path)
