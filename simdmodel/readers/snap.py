"""SNAP edge lists (`.txt`, `.el`, `.edges`, optionally `.gz`): one `src dst [weight]` per line.

Ids are 0-based non-negative integers separated by spaces or tabs; `#` and `%` start comment
lines; blank lines are skipped; a third column is a weight, a finite number. The graph has
n = max id + 1 vertices and is directed (SNAP lists each undirected edge as it pleases, so
symmetrizing is the caller's choice). When every edge line has a weight the edge list carries
them (float64); a file where only some lines have one is read without weights, with a warning
naming the first line of each kind. A numba scanner (`_scan.scan_snap`) parses and validates in
one pass and reports the first bad line.
"""
from __future__ import annotations

import warnings

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT, EdgeList
from . import _scan, _text


def read(path) -> EdgeList:
    """Read a SNAP edge list as a directed EdgeList with n = max id + 1 (weighted when every edge
    line has a third column)."""
    data = _text.load_bytes(path)
    cap = _text.capacity(data, 0, len(data))
    (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest, err, line, start,
     token) = _scan.scan_snap(_text.as_buffer(data), cap, INDEX_LIMIT - 1)
    _text.resolve_slow_weights(path, data, weights, 0, b"#%", nslow, "weight")
    if err != _scan.SNAP_OK:
        text = _text.line_at(data, start)
        tok = _text.show(_text.token_at(data, start, token))
        if err == _scan.SNAP_FIELDS:
            message = f"expected 2 or 3 integer fields 'src dst [weight]', got {_text.show(text)}"
        elif err == _scan.SNAP_NEGATIVE:
            message = f"negative vertex id {tok[1:-1]}"
        elif err == _scan.SNAP_TOO_BIG:
            message = f"vertex id {tok[1:-1]} does not fit 32-bit ids (at most {INDEX_LIMIT - 1})"
        elif err == _scan.SNAP_NONFINITE:
            message = f"weight {tok} is not a finite number (edge weights must be)"
        else:
            message = f"weight {tok} is not a number in {_text.show(text)}"
        raise GraphFormatError(path, message, int(line))
    if count == 0:
        raise GraphFormatError(path, "no edges (only comments or blank lines)")
    src, dst = _text.take(src, count), _text.take(dst, count)
    kept = None
    if weighted_line and unweighted_line:
        warnings.warn(
            f"{path}: only some edge lines have a weight (line {int(weighted_line)} has one, line "
            f"{int(unweighted_line)} has none); the graph is read without weights", stacklevel=2,
        )
    elif weighted_line:
        kept = _text.take(weights, count)
    return EdgeList(src, dst, int(largest) + 1, undirected=False, name=_text.stem_name(path),
                    weights=kept)
