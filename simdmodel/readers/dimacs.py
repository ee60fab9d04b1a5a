"""DIMACS 9th challenge shortest-path graphs (`.gr`, `.gr.gz`), e.g. the USA road networks.

`c` lines are comments, one `p sp N M` problem line comes before any arc, and each `a U V W` line
is an arc U -> V with 1-based ids and an integer weight W (int64). The result is a directed,
weighted edge list (the road files already list both directions). The header is read in Python,
the arcs by a numba scanner (`_scan.scan_dimacs`) that reports the first bad line.
"""
from __future__ import annotations

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _scan, _text


def _parse_problem(path, data: bytes):
    """Skip leading comments; the first other line must be `p sp N M`. -> (n, m, p_line, pos)."""
    text, after, line = _text.next_content_line(data, 0, 1, b"c")
    if text is None:
        raise GraphFormatError(path, "missing problem line 'p sp N M'", line)
    tokens = text.split()
    if tokens[0] == b"a":
        raise GraphFormatError(path, "arc line before the problem line 'p sp N M'", line)
    if tokens[0] != b"p":
        raise GraphFormatError(path, f"unknown line type {_text.show(tokens[0])}, expected "
                               "'c' (comment) or 'p sp N M' before the arcs", line)
    if len(tokens) != 4 or tokens[1] != b"sp":
        raise GraphFormatError(
            path, f"expected problem line 'p sp N M', got {_text.show(text)}", line
        )
    n = _text.header_int(path, tokens[2], "node count N", line)
    m = _text.header_int(path, tokens[3], "arc count M", line)
    _text.check_vertex_count(path, n, line)
    return n, m, line, after


def read(path) -> EdgeList:
    """Read a DIMACS `.gr` file as a directed EdgeList with int64 weights."""
    data = _text.load_bytes(path)
    n, m, p_line, pos = _parse_problem(path, data)
    cap = _text.capacity(data, pos, m)
    src, dst, weights, count, err, line, start, token = _scan.scan_dimacs(
        _text.as_buffer(data), pos, p_line + 1, n, m, cap
    )
    if err != _scan.DIMACS_OK:
        text = _text.show(_text.line_at(data, start))
        tok = _text.show(_text.token_at(data, start, token))
        line = int(line)
        if err == _scan.DIMACS_BAD_INT:
            raise GraphFormatError(path, f"expected an integer, got {tok} in {text}", line)
        if err == _scan.DIMACS_RANGE:
            which = "tail" if token == 1 else "head"
            raise GraphFormatError(path, f"arc {which} {tok} outside 1..{n}", line)
        if err == _scan.DIMACS_BIG_WEIGHT:
            raise GraphFormatError(path, f"arc weight {tok} does not fit a 64-bit integer", line)
        if err == _scan.DIMACS_COUNT:
            raise GraphFormatError(path, f"expected arc line 'a U V W', got {text}", line)
        if err == _scan.DIMACS_DUP_P:
            raise GraphFormatError(path, f"second problem line (the first is line {p_line})", line)
        if err == _scan.DIMACS_UNKNOWN:
            raise GraphFormatError(path, f"unknown line type in {text}, expected 'c' or 'a'", line)
        if err == _scan.DIMACS_TOO_MANY:
            raise GraphFormatError(
                path, f"header mismatch: the problem line (line {p_line}) declares M={m} arcs "
                f"but the file has {count}", line
            )
        raise GraphFormatError(
            path, f"header mismatch: the problem line declares M={m} arcs but the file has only "
            f"{count}", p_line
        )
    src, dst, weights = (_text.take(a, count) for a in (src, dst, weights))
    return EdgeList(src, dst, n, undirected=False, name=_text.stem_name(path), weights=weights)
