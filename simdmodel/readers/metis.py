"""METIS / DIMACS 10th challenge graphs (`.graph`, `.metis`, optionally `.gz`).

Header `n m [fmt [ncon]]` (m counts undirected edges), then exactly n vertex lines: line i lists
the 1-based neighbours of vertex i, so an empty line is an isolated vertex and blank lines after
the header are significant (only `%` lines are skipped; blank lines after the n-th vertex are
allowed). fmt "abc": a=1 a vertex size comes first, b=1 ncon vertex weights follow, c=1 each
neighbour is followed by an edge weight. The file already lists both directions, so the result is
a directed edge list of every listed (vertex, neighbour) entry, and their number must be 2m.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _text
from ._text import INT_BAD, INT_OK, line_end, parse_int, skip_space, token_end

_OK, _BAD_INT, _RANGE, _COUNT, _MISSING, _EXTRA, _MISMATCH = range(7)


@numba.njit(cache=True)
def _scan_vertices(buf, pos, line, n, entries, cap, head, step):
    """Vertex lines after the header. Returns (src, dst, count, code, line, line_start, token).

    `head` numbers (size, weights) open each line; then neighbours, each followed by `step - 1`
    edge weights. Entries beyond `cap` are counted but not stored.
    """
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    vertex = np.int64(0)
    while pos < size and vertex < n:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] == 37:
            pos = eol + 1
            line += 1
            continue
        t = np.int64(0)
        q = p
        while True:
            q = skip_space(buf, q, eol)
            if q == eol:
                break
            e = token_end(buf, q, eol)
            status, value = parse_int(buf, q, e)
            if status == INT_BAD:
                return src, dst, count, _BAD_INT, line, pos, t
            if t >= head and (t - head) % step == 0:
                if status != INT_OK or value < 1 or value > n:
                    return src, dst, count, _RANGE, line, pos, t
                if count < cap:
                    src[count] = vertex
                    dst[count] = value - 1
                count += 1
            t += 1
            q = e
        if t < head or (t - head) % step != 0:
            return src, dst, count, _COUNT, line, pos, t
        vertex += 1
        pos = eol + 1
        line += 1
    if vertex < n:
        return src, dst, count, _MISSING, line, pos, vertex
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 37:
            return src, dst, count, _EXTRA, line, pos, 0
        pos = eol + 1
        line += 1
    if count != entries:
        return src, dst, count, _MISMATCH, line, pos, 0
    return src, dst, count, _OK, line, pos, 0


def _parse_header(path, data: bytes):
    """-> (n, m, has_sizes, ncon, has_edge_weights, header_line, body_pos)."""
    pos, line = 0, 1
    while pos < len(data):
        text, after = _text.next_line(data, pos)
        stripped = text.strip()
        if stripped and not stripped.startswith(b"%"):
            break
        pos, line = after, line + 1
    else:
        raise GraphFormatError(path, "missing header line 'n m [fmt [ncon]]'", line)
    tokens = text.split()
    if len(tokens) > 4:
        raise GraphFormatError(path, f"expected header 'n m [fmt [ncon]]', got {_text.show(text)}", line)
    if len(tokens) < 2:
        raise GraphFormatError(path, f"expected header 'n m [fmt [ncon]]', got {_text.show(text)}", line)
    n = _text.header_int(path, tokens[0], "vertex count n", line)
    m = _text.header_int(path, tokens[1], "edge count m", line)
    _text.check_vertex_count(path, n, line)
    fmt = tokens[2] if len(tokens) > 2 else b"0"
    if len(fmt) > 3 or fmt.strip(b"01"):
        raise GraphFormatError(path, f"fmt must be up to 3 binary digits like 011, got {_text.show(fmt)}", line)
    fmt = fmt.rjust(3, b"0")
    has_sizes, has_vweights, has_eweights = (fmt[i] == ord("1") for i in range(3))
    ncon = 1 if has_vweights else 0
    if len(tokens) == 4:
        ncon = _text.header_int(path, tokens[3], "ncon", line)
        if not has_vweights:
            raise GraphFormatError(path, "ncon given but fmt says there are no vertex weights", line)
        if ncon < 1:
            raise GraphFormatError(path, "ncon must be at least 1", line)
    return n, m, has_sizes, ncon, has_eweights, line, after


def read(path) -> EdgeList:
    """Read a METIS graph as a directed EdgeList of every listed (vertex, neighbour) entry."""
    data = _text.load_bytes(path)
    n, m, has_sizes, ncon, has_eweights, head_line, pos = _parse_header(path, data)
    head = int(has_sizes) + ncon
    step = 2 if has_eweights else 1
    cap = _text.capacity(data, pos, 2 * m)
    src, dst, count, err, line, start, token = _scan_vertices(
        _text.as_buffer(data), pos, head_line + 1, n, 2 * m, cap, head, step
    )
    if err != _OK:
        line = int(line)
        text = _text.show(_text.line_at(data, start))
        tok = _text.show(_text.token_at(data, start, token))
        if err == _BAD_INT:
            raise GraphFormatError(path, f"expected an integer, got {tok} in {text}", line)
        if err == _RANGE:
            raise GraphFormatError(path, f"neighbour {tok} outside 1..{n}", line)
        if err == _COUNT:
            layout = " ".join(filter(None, ["[size]" if has_sizes else "", f"[{ncon} weights]" if ncon else "",
                                             "(neighbour weight)*" if has_eweights else "neighbour*"]))
            raise GraphFormatError(path, f"{token} numbers do not fit fmt layout '{layout}' in {text}", line)
        if err == _MISSING:
            raise GraphFormatError(path, f"file ends after {token} of the n={n} vertex lines", line)
        if err == _EXTRA:
            raise GraphFormatError(path, f"non-blank line {text} after the n={n} vertex lines", line)
        raise GraphFormatError(path, f"header mismatch: m={m} edges means {2 * m} adjacency entries, "
                               f"but the vertex lines list {count}", head_line)
    return EdgeList(src[:count], dst[:count], n, undirected=False, name=_text.stem_name(path))
