"""SNAP-style edge lists (`.txt`, `.el`, `.edges`, optionally `.gz`): one `src dst [weight]` per line.

Ids are 0-based non-negative integers separated by spaces or tabs; `#` and `%` start comment
lines; blank lines are skipped; a third column (a weight) is checked to be a number and ignored.
The graph has n = max id + 1 vertices and is directed (SNAP lists each undirected edge as it
pleases, so symmetrizing is the caller's choice). A numba scanner parses and validates in one pass
and reports the first bad line.
"""
from __future__ import annotations

import numba
import numpy as np

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT, EdgeList
from . import _text
from ._text import INT_BAD, INT_OK, is_number, line_end, parse_int, skip_space, token_end

_OK, _FIELDS, _NEGATIVE, _TOO_BIG, _WEIGHT = range(5)


@numba.njit(cache=True)
def _scan(buf, cap, max_id):
    """Returns (src, dst, count, largest id, code, line, line_start, token)."""
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    largest = np.int64(-1)
    pos = np.int64(0)
    line = np.int64(1)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 35 and buf[p] != 37:
            t = 0
            q = p
            u = np.int64(0)
            v = np.int64(0)
            while True:
                q = skip_space(buf, q, eol)
                if q == eol:
                    break
                if t == 3:
                    return src, dst, count, largest, _FIELDS, line, pos, t
                e = token_end(buf, q, eol)
                if t < 2:
                    status, value = parse_int(buf, q, e)
                    if status == INT_BAD:
                        return src, dst, count, largest, _FIELDS, line, pos, t
                    if status == INT_OK and value < 0:
                        return src, dst, count, largest, _NEGATIVE, line, pos, t
                    if status != INT_OK or value > max_id:
                        return src, dst, count, largest, _TOO_BIG, line, pos, t
                    if t == 0:
                        u = value
                    else:
                        v = value
                elif not is_number(buf, q, e):
                    return src, dst, count, largest, _WEIGHT, line, pos, t
                t += 1
                q = e
            if t < 2:
                return src, dst, count, largest, _FIELDS, line, pos, t
            src[count] = u
            dst[count] = v
            largest = max(largest, max(u, v))
            count += 1
        pos = eol + 1
        line += 1
    return src, dst, count, largest, _OK, line, pos, 0


def read(path) -> EdgeList:
    """Read a SNAP edge list as a directed EdgeList with n = max id + 1."""
    data = _text.load_bytes(path)
    cap = _text.capacity(data, 0, len(data))
    src, dst, count, largest, err, line, start, token = _scan(_text.as_buffer(data), cap, INDEX_LIMIT - 1)
    if err != _OK:
        text = _text.line_at(data, start)
        tok = _text.show(_text.token_at(data, start, token))
        if err == _FIELDS:
            message = f"expected 2 or 3 integer fields 'src dst [weight]', got {_text.show(text)}"
        elif err == _NEGATIVE:
            message = f"negative vertex id {tok[1:-1]}"
        elif err == _TOO_BIG:
            message = f"vertex id {tok[1:-1]} does not fit 32-bit ids (at most {INDEX_LIMIT - 1})"
        else:
            message = f"weight {tok} is not a number in {_text.show(text)}"
        raise GraphFormatError(path, message, int(line))
    if count == 0:
        raise GraphFormatError(path, "no edges (only comments or blank lines)")
    return EdgeList(src[:count], dst[:count], int(largest) + 1, undirected=False,
                    name=_text.stem_name(path))
