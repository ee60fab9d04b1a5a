"""SNAP edge lists (`.txt`, `.el`, `.edges`, optionally `.gz`): one `src dst [weight]` per line.

Ids are 0-based non-negative integers separated by spaces or tabs; `#` and `%` start comment
lines; blank lines are skipped; a third column (a weight) is checked to be a number and ignored.
The graph has n = max id + 1 vertices and is directed (SNAP lists each undirected edge as it
pleases, so symmetrizing is the caller's choice). A numba scanner (`_scan.scan_snap`) parses and
validates in one pass and reports the first bad line.
"""
from __future__ import annotations

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT, EdgeList
from . import _scan, _text


def read(path) -> EdgeList:
    """Read a SNAP edge list as a directed EdgeList with n = max id + 1."""
    data = _text.load_bytes(path)
    cap = _text.capacity(data, 0, len(data))
    src, dst, count, largest, err, line, start, token = _scan.scan_snap(
        _text.as_buffer(data), cap, INDEX_LIMIT - 1
    )
    if err != _scan.SNAP_OK:
        text = _text.line_at(data, start)
        tok = _text.show(_text.token_at(data, start, token))
        if err == _scan.SNAP_FIELDS:
            message = f"expected 2 or 3 integer fields 'src dst [weight]', got {_text.show(text)}"
        elif err == _scan.SNAP_NEGATIVE:
            message = f"negative vertex id {tok[1:-1]}"
        elif err == _scan.SNAP_TOO_BIG:
            message = f"vertex id {tok[1:-1]} does not fit 32-bit ids (at most {INDEX_LIMIT - 1})"
        else:
            message = f"weight {tok} is not a number in {_text.show(text)}"
        raise GraphFormatError(path, message, int(line))
    if count == 0:
        raise GraphFormatError(path, "no edges (only comments or blank lines)")
    src, dst = _text.take(src, count), _text.take(dst, count)
    return EdgeList(src, dst, int(largest) + 1, undirected=False, name=_text.stem_name(path))
