"""Matrix Market coordinate files (`.mtx`, `.mtx.gz`): the non-zeros' positions are the edges.

Fields `pattern`, `integer`, `real` and `complex` are accepted and their values ignored (but
checked to be numbers). `general` gives a directed edge list; `symmetric`, `skew-symmetric` and
`hermitian` give the stored triangle as an undirected edge list, which the CSR builder stores in
both directions (a diagonal entry once). Ids are 1-based in the file, 0-based out.

Why not fast_matrix_market: it silently accepts lines such as `1 2x` (read as 1 2), `1 2 3` in a
pattern file and `1.5` in an integer file, so a full validation pass over the body is needed
anyway; the numba scanner here does that pass and parses the indices in the same sweep, with the
exact line of the first problem.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _text
from ._text import INT_BAD, INT_OK, is_number, line_end, parse_int, skip_space, token_end

FIELDS = {"pattern": 0, "real": 1, "double": 1, "integer": 1, "complex": 2}
SYMMETRIES = ("general", "symmetric", "skew-symmetric", "hermitian")

_OK, _BAD_INDEX, _RANGE, _BAD_VALUE, _COUNT, _TOO_MANY, _TOO_FEW = range(7)


@numba.njit(cache=True)
def _scan_body(buf, pos, line, nrows, ncols, nnz, cap, nvalues, int_values):
    """Parse entry lines `row col [value [imag]]` after the size line.

    Returns (rows, cols, count, code, line, line_start, token). Blank and `%` lines are skipped.
    After `nnz` entries, further entry lines are only counted (a TOO_MANY error at the first).
    """
    rows = np.empty(cap, dtype=np.int32)
    cols = np.empty(cap, dtype=np.int32)
    expected = 2 + nvalues
    size = buf.size
    count = np.int64(0)
    err = _OK
    err_line = np.int64(0)
    err_pos = np.int64(0)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 37:
            if count >= nnz:
                if err == _OK:
                    err = _TOO_MANY
                    err_line = line
                    err_pos = pos
            else:
                t = 0
                q = p
                r = np.int64(0)
                c = np.int64(0)
                while True:
                    q = skip_space(buf, q, eol)
                    if q == eol:
                        break
                    if t == expected:
                        t += 1
                        break
                    e = token_end(buf, q, eol)
                    if t < 2:
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return rows, cols, count, _BAD_INDEX, line, pos, t
                        limit = nrows if t == 0 else ncols
                        if status != INT_OK or value < 1 or value > limit:
                            return rows, cols, count, _RANGE, line, pos, t
                        if t == 0:
                            r = value
                        else:
                            c = value
                    elif int_values:
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return rows, cols, count, _BAD_VALUE, line, pos, t
                    elif not is_number(buf, q, e):
                        return rows, cols, count, _BAD_VALUE, line, pos, t
                    t += 1
                    q = e
                if t != expected:
                    return rows, cols, count, _COUNT, line, pos, t
                rows[count] = r - 1
                cols[count] = c - 1
            count += 1
        pos = eol + 1
        line += 1
    if err == _OK and count < nnz:
        err = _TOO_FEW
    return rows, cols, count, err, err_line, err_pos, 0


def _parse_header(path, data: bytes):
    """Banner and size line -> (field, symmetry, nrows, nnz, size_line, body_pos)."""
    banner, pos = _text.next_line(data, 0)
    tokens = banner.split()
    if not tokens or tokens[0].lower() != b"%%matrixmarket":
        raise GraphFormatError(
            path, "missing Matrix Market banner '%%MatrixMarket matrix coordinate <field> <symmetry>'", 1
        )
    if len(tokens) < 5:
        raise GraphFormatError(
            path, f"incomplete banner {_text.show(banner)}, expected "
            "'%%MatrixMarket matrix coordinate <field> <symmetry>'", 1
        )
    obj, fmt, field, symmetry = (t.lower().decode("ascii", "replace") for t in tokens[1:5])
    if obj != "matrix":
        raise GraphFormatError(path, f"object {obj!r} is not supported, expected 'matrix'", 1)
    if fmt == "array":
        raise GraphFormatError(path, "dense 'array' format is not a graph; expected 'coordinate'", 1)
    if fmt != "coordinate":
        raise GraphFormatError(path, f"unknown format {fmt!r}, expected 'coordinate'", 1)
    if field not in FIELDS:
        raise GraphFormatError(path, f"unknown field {field!r}, expected one of {', '.join(FIELDS)}", 1)
    if symmetry not in SYMMETRIES:
        raise GraphFormatError(
            path, f"unknown symmetry {symmetry!r}, expected one of {', '.join(SYMMETRIES)}", 1
        )
    line = 2
    while pos < len(data):
        text, after = _text.next_line(data, pos)
        stripped = text.strip()
        if stripped and not stripped.startswith(b"%"):
            break
        pos, line = after, line + 1
    else:
        raise GraphFormatError(path, "missing size line 'rows cols nnz' after the banner", line)
    sizes = text.split()
    if len(sizes) != 3:
        raise GraphFormatError(path, f"expected size line 'rows cols nnz', got {_text.show(text)}", line)
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
    cap = _text.capacity(data, pos, nnz)
    rows, cols, count, err, line, start, token = _scan_body(
        _text.as_buffer(data), pos, size_line + 1, n, n, nnz, cap, nvalues, field == "integer"
    )
    if err != _OK:
        _raise(path, data, err, line, start, token, field, n, nnz, count, size_line)
    return EdgeList(rows[:count], cols[:count], n, undirected=symmetry != "general", name=_text.stem_name(path))


def _raise(path, data, err, line, start, token, field, n, nnz, count, size_line):
    text = _text.line_at(data, start)
    tok = _text.show(_text.token_at(data, start, token))
    which = "row" if token == 0 else "column"
    if err == _BAD_INDEX:
        raise GraphFormatError(path, f"{which} index {tok} is not an integer in {_text.show(text)}", line)
    if err == _RANGE:
        raise GraphFormatError(path, f"{which} index {tok} outside 1..{n}", line)
    if err == _BAD_VALUE:
        kind = "an integer" if field == "integer" else "a number"
        raise GraphFormatError(path, f"value {tok} is not {kind} in {_text.show(text)}", line)
    if err == _COUNT:
        layout = {"pattern": "row col", "complex": "row col real imag"}.get(field, "row col value")
        raise GraphFormatError(
            path, f"expected {2 + FIELDS[field]} fields '{layout}' for a {field} matrix, "
            f"got {_text.show(text)}", line
        )
    if err == _TOO_MANY:
        raise GraphFormatError(
            path, f"header mismatch: the size line (line {size_line}) declares {nnz} entries "
            f"but the file has {count}", line
        )
    raise GraphFormatError(
        path, f"header mismatch: the size line declares {nnz} entries but the file has only {count}",
        size_line,
    )
