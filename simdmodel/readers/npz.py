"""Native binary format (`.npz`): the CSR arrays as written by `write_npz`, loaded without parsing.

An uncompressed `np.savez` archive with `indptr` (int64, n+1), `indices` (int32, m) and
`format_version` (scalar): version 1 for an unweighted graph (exactly these three arrays), version
2 for a weighted one, which adds `weights` (int64 or float64, m, finite). A weighted graph gets the
new version so that a reader that knows only version 1 refuses it rather than dropping its weights.
Reading returns a CSRGraph directly, so a converted graph loads in the time it takes to read its
bytes. Writing is atomic: a temporary file in the target directory is renamed over the target, so
an interrupted write never leaves a half-written graph.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..atomic import atomic_path
from ..errors import GraphFormatError, InputError
from ..graph import INDEX_LIMIT, CSRGraph

FORMAT_VERSION = 1  # unweighted graphs
WEIGHTED_VERSION = 2  # graphs with a `weights` array
KEYS = ("indptr", "indices", "format_version")


ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""An .npz is a zip archive: a local file header, or the end record of an empty archive."""


def read(path) -> CSRGraph:
    """Load a graph written by `write_npz`; anything else raises GraphFormatError."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise GraphFormatError(path, f"cannot read .npz archive: {exc.strerror or exc}") from None
    if magic not in ZIP_MAGIC:
        raise GraphFormatError(path, "not an .npz archive (a zip of arrays, as `simdmodel graph convert` writes)")
    try:
        with np.load(path, allow_pickle=False) as archive:
            if not hasattr(archive, "files"):
                raise GraphFormatError(path, "not an .npz archive")
            missing = [key for key in KEYS if key not in archive.files]
            if missing:
                raise GraphFormatError(
                    path, f"missing arrays {', '.join(missing)} (expected {', '.join(KEYS)})"
                )
            version = archive["format_version"]
            indptr = archive["indptr"]
            indices = archive["indices"]
            weights = archive["weights"] if "weights" in archive.files else None
    except GraphFormatError:
        raise
    except OSError as exc:  # also zipfile.BadZipFile's relatives and unreadable files
        raise GraphFormatError(path, f"cannot read .npz archive: {exc.strerror or exc}") from None
    except Exception as exc:  # noqa: BLE001 -- any failure to decode untrusted bytes is a format error
        detail = "an array holds Python objects" if "pickle" in str(exc) else f"{type(exc).__name__}: {exc}"
        raise GraphFormatError(path, f"not a valid .npz graph archive ({detail})") from None
    if version.shape != () or version.dtype.kind not in "iu" or int(version) not in (
            FORMAT_VERSION, WEIGHTED_VERSION):
        raise GraphFormatError(
            path, f"unsupported format_version {version.tolist()!r}, expected {FORMAT_VERSION} "
            f"(unweighted) or {WEIGHTED_VERSION} (weighted)"
        )
    if int(version) == FORMAT_VERSION and weights is not None:
        raise GraphFormatError(path, f"format_version {FORMAT_VERSION} has no weights array; a "
                               f"weighted graph is format_version {WEIGHTED_VERSION}")
    if int(version) == WEIGHTED_VERSION and weights is None:
        raise GraphFormatError(path, f"missing array weights (format_version {WEIGHTED_VERSION})")
    if weights is not None and (weights.ndim != 1 or weights.dtype not in (np.int64, np.float64)):
        raise GraphFormatError(
            path, f"weights must be a 1-D int64 or float64 array, got {weights.dtype} of shape "
            f"{weights.shape}"
        )
    for key, array in (("indptr", indptr), ("indices", indices)):
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise GraphFormatError(
                path, f"{key} must be a 1-D integer array, got {array.dtype} of shape {array.shape}"
            )
    if indptr.size - 1 > INDEX_LIMIT:
        raise GraphFormatError(path, f"{indptr.size - 1} vertices do not fit 32-bit vertex ids")
    if indices.size and (int(indices.min()) < 0 or int(indices.max()) > INDEX_LIMIT):
        raise GraphFormatError(path, "indices do not fit 32-bit vertex ids")
    if indptr.size and indptr.dtype.kind == "u" and int(indptr.max()) > np.iinfo(np.int64).max:
        raise GraphFormatError(path, "indptr does not fit int64")
    name = Path(path).name
    name = name[: -len(".npz")] if name.lower().endswith(".npz") else Path(name).stem
    try:
        return CSRGraph(indptr, indices, name=name, weights=weights)
    except InputError as exc:
        raise GraphFormatError(path, f"bad CSR structure: {exc}") from None


def write_npz(graph: CSRGraph, path) -> None:
    """Write `graph` to `path` atomically (temporary file in the same directory, then rename);
    its weights, if any, go along (format_version 2)."""
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"write_npz needs a CSRGraph, got {type(graph).__name__}")
    arrays = dict(
        indptr=np.ascontiguousarray(graph.indptr, dtype=np.int64),
        indices=np.ascontiguousarray(graph.indices, dtype=np.int32),
        format_version=np.array(FORMAT_VERSION, dtype=np.int64),
    )
    if graph.weights is not None:
        arrays["weights"] = graph.weights
        arrays["format_version"] = np.array(WEIGHTED_VERSION, dtype=np.int64)
    with atomic_path(path) as temp:
        with open(temp, "wb") as handle:  # a file object, so numpy does not append ".npz"
            np.savez(handle, **arrays)
