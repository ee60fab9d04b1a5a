"""DIMACS 9th challenge shortest-path graphs (`.gr`, `.gr.gz`), e.g. the USA road networks.

`c` lines are comments, one `p sp N M` problem line comes before any arc, and each `a U V W` line
is an arc U -> V with 1-based ids and an integer weight W (checked, then ignored). The result is a
directed edge list (the road files already list both directions). The header is read in Python,
the arcs by a numba scanner that reports the first bad line.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _text
from ._text import INT_BAD, INT_OK, is_space, line_end, parse_int, skip_space, token_end

_OK, _BAD_INT, _RANGE, _COUNT, _DUP_P, _UNKNOWN, _TOO_MANY, _TOO_FEW = range(8)


@numba.njit(cache=True)
def _tag(buf, p, eol):
    """The line's type letter if it is a one-letter first token, else 0 (c: any line starting with c)."""
    c = buf[p]
    if c == 99:
        return c
    if p + 1 == eol or is_space(buf[p + 1]):
        return c
    return 0


@numba.njit(cache=True)
def _scan_arcs(buf, pos, line, n, m, cap):
    """Arcs after the problem line. Returns (src, dst, count, code, line, line_start, token)."""
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    err = _OK
    err_line = np.int64(0)
    err_pos = np.int64(0)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol:
            tag = _tag(buf, p, eol)
            if tag == 99:
                pass
            elif tag == 97:
                if count >= m:
                    if err == _OK:
                        err = _TOO_MANY
                        err_line = line
                        err_pos = pos
                else:
                    t = 0
                    q = p + 1
                    u = np.int64(0)
                    v = np.int64(0)
                    while True:
                        q = skip_space(buf, q, eol)
                        if q == eol:
                            break
                        if t == 3:
                            t += 1
                            break
                        e = token_end(buf, q, eol)
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return src, dst, count, _BAD_INT, line, pos, t + 1
                        if t < 2:
                            if status != INT_OK or value < 1 or value > n:
                                return src, dst, count, _RANGE, line, pos, t + 1
                            if t == 0:
                                u = value
                            else:
                                v = value
                        t += 1
                        q = e
                    if t != 3:
                        return src, dst, count, _COUNT, line, pos, t
                    src[count] = u - 1
                    dst[count] = v - 1
                count += 1
            elif tag == 112:
                if err == _OK:
                    return src, dst, count, _DUP_P, line, pos, 0
            elif err == _OK:
                return src, dst, count, _UNKNOWN, line, pos, 0
        pos = eol + 1
        line += 1
    if err == _OK and count < m:
        err = _TOO_FEW
    return src, dst, count, err, err_line, err_pos, 0


def _parse_problem(path, data: bytes):
    """Skip leading comments; the first other line must be `p sp N M`. -> (n, m, p_line, pos)."""
    pos, line = 0, 1
    while pos < len(data):
        text, after = _text.next_line(data, pos)
        stripped = text.strip()
        if stripped and not stripped.startswith(b"c"):
            break
        pos, line = after, line + 1
    else:
        raise GraphFormatError(path, "missing problem line 'p sp N M'", line)
    tokens = stripped.split()
    if tokens[0] == b"a":
        raise GraphFormatError(path, "arc line before the problem line 'p sp N M'", line)
    if tokens[0] != b"p":
        raise GraphFormatError(path, f"unknown line type {_text.show(tokens[0])}, expected "
                               "'c' (comment) or 'p sp N M' before the arcs", line)
    if len(tokens) != 4 or tokens[1] != b"sp":
        raise GraphFormatError(path, f"expected problem line 'p sp N M', got {_text.show(text)}", line)
    n = _text.header_int(path, tokens[2], "node count N", line)
    m = _text.header_int(path, tokens[3], "arc count M", line)
    _text.check_vertex_count(path, n, line)
    return n, m, line, after


def read(path) -> EdgeList:
    """Read a DIMACS `.gr` file as a directed EdgeList."""
    data = _text.load_bytes(path)
    n, m, p_line, pos = _parse_problem(path, data)
    cap = _text.capacity(data, pos, m)
    src, dst, count, err, line, start, token = _scan_arcs(_text.as_buffer(data), pos, p_line + 1, n, m, cap)
    if err != _OK:
        text = _text.show(_text.line_at(data, start))
        tok = _text.show(_text.token_at(data, start, token))
        line = int(line)
        if err == _BAD_INT:
            raise GraphFormatError(path, f"expected an integer, got {tok} in {text}", line)
        if err == _RANGE:
            which = "tail" if token == 1 else "head"
            raise GraphFormatError(path, f"arc {which} {tok} outside 1..{n}", line)
        if err == _COUNT:
            raise GraphFormatError(path, f"expected arc line 'a U V W', got {text}", line)
        if err == _DUP_P:
            raise GraphFormatError(path, f"second problem line (the first is line {p_line})", line)
        if err == _UNKNOWN:
            raise GraphFormatError(path, f"unknown line type in {text}, expected 'c' or 'a'", line)
        if err == _TOO_MANY:
            raise GraphFormatError(path, f"header mismatch: the problem line (line {p_line}) declares "
                                   f"M={m} arcs but the file has {count}", line)
        raise GraphFormatError(path, f"header mismatch: the problem line declares M={m} arcs but "
                               f"the file has only {count}", p_line)
    return EdgeList(src[:count], dst[:count], n, undirected=False, name=_text.stem_name(path))
