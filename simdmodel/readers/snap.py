"""SNAP edge lists (`.txt`, `.el`, `.edges`, `.edgelist`, optionally compressed): one
`src dst [weight]` per line.

Ids are 0-based non-negative integers separated by spaces or tabs; `#` and `%` start comment
lines; blank lines are skipped; a third column is a weight, a finite number. The graph has
n = max id + 1 vertices and is directed (SNAP lists each undirected edge as it pleases, so
symmetrizing is the caller's choice). When every edge line has a weight the edge list carries
them (float64); a file where only some lines have one is read without weights, with a warning
naming the first line of each kind. A numba scanner (`_scan.scan_snap`) parses and validates in
one pass and reports the first bad line.

Some SNAP-like files (wiki-Vote, email-Enron) open with bare count lines: the vertex count, then
the edge count, one integer a line. They are read only with `ReadOptions(count_lines=True)`
(`--count-lines`): the edge count must match the edge lines, and n is the larger of the vertex
count and max id + 1 (wiki-Vote's count is of distinct ids, below its largest id). Without the
option such a file is refused at its first count line, so a count is never read as an edge.
"""
from __future__ import annotations

import re
import warnings

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT, EdgeList
from . import _scan, _text
from .options import ReadOptions

OPTIONS = ("count_lines",)
COMMENTS = (b"#", b"%")
_BARE_COUNT = re.compile(rb"\+?[0-9]+")


def read(path, options: ReadOptions | None = None) -> EdgeList:
    """Read a SNAP edge list as a directed EdgeList with n = max id + 1 (weighted when every edge
    line has a third column); leading count lines only with `options.count_lines`."""
    options = options or ReadOptions()
    data = _text.load_bytes(path)
    body, body_line, counts = _count_lines(path, data, options.count_lines)
    cap = _text.capacity(data, body, len(data))
    (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest, err, line, start,
     token) = _scan.scan_snap(_text.as_buffer(data), body, body_line, cap, INDEX_LIMIT - 1)
    _text.resolve_slow_weights(path, data, weights, body, b"#%", nslow, "weight")
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
    n = int(largest) + 1
    notes = ()
    if counts:
        n = max(n, counts[0][0])
        notes = (_counts_note(counts),)
    if len(counts) == 2 and counts[1][0] != count:
        raise GraphFormatError(
            path, f"header mismatch: the second count line declares {counts[1][0]} edges but the "
            f"file has {int(count)} edge lines", counts[1][1]
        )
    src, dst = _text.take(src, count), _text.take(dst, count)
    kept = None
    if weighted_line and unweighted_line:
        warnings.warn(
            f"{path}: only some edge lines have a weight (line {int(weighted_line)} has one, line "
            f"{int(unweighted_line)} has none); the graph is read without weights", stacklevel=2,
        )
    elif weighted_line:
        kept = _text.take(weights, count)
    return EdgeList(src, dst, n, undirected=False, name=_text.stem_name(path), weights=kept,
                    notes=notes)


def _count_lines(path, data: bytes, allowed: bool) -> tuple[int, int, list[tuple[int, int]]]:
    """The leading bare count lines: (body offset, body line number, [(count, line), ...]).

    A first content line holding one integer is refused unless `allowed`; with it, at most two
    such lines are read (vertices, then edges) and a third is an error, as it cannot be an edge.
    """
    counts = []
    pos, line = 0, 1
    while True:
        text, after, at = _text.next_content_line(data, pos, line, COMMENTS)
        if text is None or not _BARE_COUNT.fullmatch(text):
            return pos, line, counts
        if not allowed:
            raise GraphFormatError(
                path, f"the file starts with a bare count line {_text.show(text)} (SNAP-like files "
                "that open with vertex/edge counts load with --count-lines)", at
            )
        if len(counts) == 2:
            raise GraphFormatError(
                path, f"a third bare count line {_text.show(text)} (at most two: the vertex count, "
                f"then the edge count, on lines {counts[0][1]} and {counts[1][1]})", at
            )
        what = "vertex count" if not counts else "edge count"
        value = _text.header_int(path, text, what, at)
        if not counts:
            _text.check_vertex_count(path, value, at)
        counts.append((value, at))
        pos, line = after, at + 1


def _counts_note(counts: list[tuple[int, int]]) -> str:
    """What the count lines declared, for the graph's notes."""
    if len(counts) == 1:
        return f"1 count line: {counts[0][0]} vertices"
    return f"2 count lines: {counts[0][0]} vertices, {counts[1][0]} edges"
