"""Matrix Market coordinate files (`.mtx`, `.mtx.gz`): the non-zeros' positions are the edges.

Fields `pattern`, `integer`, `real` (also `double`) and `complex` are accepted. The values of an
`integer` file are the edge weights (int64), those of a `real` file too (float64, finite);
`pattern` files have none, and `complex` values are checked to be numbers and not kept (a complex
number is no edge weight). `general` gives a directed edge list; `symmetric`, `skew-symmetric`
and `hermitian` give the stored triangle as an undirected edge list, which the CSR builder stores
in both directions (a diagonal entry once), both with the entry's weight. A weighted
`skew-symmetric` file is the exception: A[j, i] = -A[i, j], so the reader lists both directions
itself, the mirror with the negated weight, as a directed edge list. Ids are 1-based in the file,
0-based out.

Why not fast_matrix_market: it silently accepts lines such as `1 2x` (read as 1 2), `1 2 3` in a
pattern file and `1.5` in an integer file, so a full validation pass over the body is needed
anyway; the numba scanner (`_scan.scan_mtx`) does that pass and parses the indices in the same
sweep, with the exact line of the first problem.
"""
from __future__ import annotations

import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _scan, _text

FIELDS = {"pattern": 0, "real": 1, "double": 1, "integer": 1, "complex": 2}
KEEP = {"real": _scan.KEEP_REAL, "double": _scan.KEEP_REAL, "integer": _scan.KEEP_INT}
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")
BANNER = "%%MatrixMarket matrix coordinate <field> <symmetry>"


def _parse_header(path, data: bytes):
    """Banner and size line -> (field, symmetry, nrows, nnz, size_line, body_pos)."""
    banner, pos = _text.next_line(data, 0)
    tokens = banner.split()
    if not tokens or tokens[0].lower() != b"%%matrixmarket":
        raise GraphFormatError(
            path, f"missing Matrix Market banner {BANNER!r}", 1
        )
    if len(tokens) < 5:
        raise GraphFormatError(
            path, f"incomplete banner {_text.show(banner)}, expected {BANNER!r}", 1
        )
    obj, fmt, field, symmetry = (t.lower().decode("ascii", "replace") for t in tokens[1:5])
    if obj != "matrix":
        raise GraphFormatError(path, f"object {obj!r} is not supported, expected 'matrix'", 1)
    if fmt == "array":
        raise GraphFormatError(path, "dense 'array' format is not a graph; expected 'coordinate'", 1)
    if fmt != "coordinate":
        raise GraphFormatError(path, f"unknown format {fmt!r}, expected 'coordinate'", 1)
    if field not in FIELDS:
        raise GraphFormatError(
            path, f"unknown field {field!r}, expected one of {', '.join(FIELDS)}", 1
        )
    if symmetry not in SYMMETRIES:
        raise GraphFormatError(
            path, f"unknown symmetry {symmetry!r}, expected one of {', '.join(SYMMETRIES)}", 1
        )
    line = 2
    text, after, line = _text.next_content_line(data, pos, line, b"%")
    if text is None:
        raise GraphFormatError(path, "missing size line 'rows cols nnz' after the banner", line)
    sizes = text.split()
    if len(sizes) != 3:
        raise GraphFormatError(
            path, f"expected size line 'rows cols nnz', got {_text.show(text)}", line
        )
    nrows = _text.header_int(path, sizes[0], "row count", line)
    ncols = _text.header_int(path, sizes[1], "column count", line)
    nnz = _text.header_int(path, sizes[2], "entry count", line)
    if nrows != ncols:
        raise GraphFormatError(
            path, f"matrix is {nrows} x {ncols}; an adjacency matrix must be square", line
        )
    _text.check_vertex_count(path, nrows, line)
    return field, symmetry, nrows, nnz, line, after


def read(path) -> EdgeList:
    """Read a Matrix Market coordinate file as an EdgeList (undirected for symmetric files)."""
    data = _text.load_bytes(path)
    field, symmetry, n, nnz, size_line, pos = _parse_header(path, data)
    nvalues = FIELDS[field]
    keep = KEEP.get(field, _scan.KEEP_NONE)
    cap = _text.capacity(data, pos, nnz)
    rows, cols, int_weights, real_weights, nslow, count, err, line, start, token = _scan.scan_mtx(
        _text.as_buffer(data), pos, size_line + 1, n, n, nnz, cap, nvalues, field == "integer", keep
    )
    _text.resolve_slow_weights(path, data, real_weights, pos, b"%", nslow, "value")
    if err != _scan.MTX_OK:
        _raise(path, data, err, line, start, token, field, n, nnz, count, size_line)
    rows, cols = _text.take(rows, count), _text.take(cols, count)
    weights = None
    if keep != _scan.KEEP_NONE:
        weights = _text.take(int_weights if keep == _scan.KEEP_INT else real_weights, count)
    name = _text.stem_name(path)
    if weights is not None and symmetry == "skew-symmetric":
        return _skew_mirrored(rows, cols, weights, n, name)
    return EdgeList(rows, cols, n, undirected=symmetry != "general", name=name, weights=weights)


def _skew_mirrored(rows, cols, weights, n, name) -> EdgeList:
    """Each stored entry followed by its mirror with the negated weight (a diagonal entry once):
    the rows the CSR builder would make of an undirected list, with A[j, i] = -A[i, j]."""
    off = rows != cols
    before = np.cumsum(off) - off  # mirrors placed before entry i
    at = np.arange(rows.size) + before
    mirror = at[off] + 1
    total = rows.size + int(off.sum())
    src = np.empty(total, dtype=np.int32)
    dst = np.empty(total, dtype=np.int32)
    out = np.empty(total, dtype=weights.dtype)
    src[at], dst[at], out[at] = rows, cols, weights
    src[mirror], dst[mirror], out[mirror] = cols[off], rows[off], -weights[off]
    return EdgeList(src, dst, n, undirected=False, name=name, weights=out)


def _raise(path, data, err, line, start, token, field, n, nnz, count, size_line):
    text = _text.line_at(data, start)
    tok = _text.show(_text.token_at(data, start, token))
    which = "row" if token == 0 else "column"
    if err == _scan.MTX_BAD_INDEX:
        raise GraphFormatError(
            path, f"{which} index {tok} is not an integer in {_text.show(text)}", line
        )
    if err == _scan.MTX_RANGE:
        raise GraphFormatError(path, f"{which} index {tok} outside 1..{n}", line)
    if err == _scan.MTX_BAD_VALUE:
        kind = "an integer" if field == "integer" else "a number"
        raise GraphFormatError(path, f"value {tok} is not {kind} in {_text.show(text)}", line)
    if err == _scan.MTX_NONFINITE:
        raise GraphFormatError(path, f"value {tok} is not a finite number (edge weights must be)", line)
    if err == _scan.MTX_BIG_VALUE:
        raise GraphFormatError(path, f"value {tok} does not fit a 64-bit integer", line)
    if err == _scan.MTX_COUNT:
        layout = {"pattern": "row col", "complex": "row col real imag"}.get(field, "row col value")
        raise GraphFormatError(
            path, f"expected {2 + FIELDS[field]} fields '{layout}' for a {field} matrix, "
            f"got {_text.show(text)}", line
        )
    if err == _scan.MTX_TOO_MANY:
        raise GraphFormatError(
            path, f"header mismatch: the size line (line {size_line}) declares {nnz} entries "
            f"but the file has {count}", line
        )
    raise GraphFormatError(
        path, f"header mismatch: the size line declares {nnz} entries but the file has only {count}",
        size_line,
    )
