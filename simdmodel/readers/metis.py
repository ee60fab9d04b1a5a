"""METIS / DIMACS 10th challenge graphs (`.graph`, `.metis`, optionally `.gz`).

Header `n m [fmt [ncon]]` (m counts undirected edges), then exactly n vertex lines: line i lists
the 1-based neighbours of vertex i, so an empty line is an isolated vertex and blank lines after
the header are significant (only `%` lines are skipped; blank lines after the n-th vertex are
allowed). fmt "abc": a=1 a vertex size comes first, b=1 ncon vertex weights follow, c=1 each
neighbour is followed by an edge weight. The file already lists both directions, so the result is
a directed edge list of every listed (vertex, neighbour) entry, and their number must be 2m. With
c=1 the edge list carries each entry's weight (int64, as listed: the file gives both directions'
weights); vertex sizes and vertex weights are checked to be integers and not kept.
"""
from __future__ import annotations

from ..errors import GraphFormatError
from ..graph import EdgeList
from . import _scan, _text


def _parse_header(path, data: bytes):
    """-> (n, m, has_sizes, ncon, has_edge_weights, header_line, body_pos)."""
    text, after, line = _text.next_content_line(data, 0, 1, b"%")
    if text is None:
        raise GraphFormatError(path, "missing header line 'n m [fmt [ncon]]'", line)
    tokens = text.split()
    if not 2 <= len(tokens) <= 4:
        raise GraphFormatError(
            path, f"expected header 'n m [fmt [ncon]]', got {_text.show(text)}", line
        )
    n = _text.header_int(path, tokens[0], "vertex count n", line)
    m = _text.header_int(path, tokens[1], "edge count m", line)
    _text.check_vertex_count(path, n, line)
    fmt = tokens[2] if len(tokens) > 2 else b"0"
    if len(fmt) > 3 or fmt.strip(b"01"):
        raise GraphFormatError(
            path, f"fmt must be up to 3 binary digits like 011, got {_text.show(fmt)}", line
        )
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
    """Read a METIS graph as a directed EdgeList of every listed (vertex, neighbour) entry, with
    int64 edge weights when fmt says the file has them."""
    data = _text.load_bytes(path)
    n, m, has_sizes, ncon, has_eweights, head_line, pos = _parse_header(path, data)
    head = int(has_sizes) + ncon
    step = 2 if has_eweights else 1
    cap = _text.capacity(data, pos, 2 * m, per_line=False)
    src, dst, weights, count, err, line, start, token = _scan.scan_metis(
        _text.as_buffer(data), pos, head_line + 1, n, 2 * m, cap, head, step
    )
    if err != _scan.METIS_OK:
        line = int(line)
        text = _text.show(_text.line_at(data, start))
        tok = _text.show(_text.token_at(data, start, token))
        if err == _scan.METIS_BAD_INT:
            raise GraphFormatError(path, f"expected an integer, got {tok} in {text}", line)
        if err == _scan.METIS_BIG_WEIGHT:
            raise GraphFormatError(path, f"edge weight {tok} does not fit a 64-bit integer", line)
        if err == _scan.METIS_RANGE:
            raise GraphFormatError(path, f"neighbour {tok} outside 1..{n}", line)
        if err == _scan.METIS_COUNT:
            parts = ["size"] if has_sizes else []
            parts += [f"{ncon} weight(s)"] if ncon else []
            parts += ["(neighbour weight)*" if has_eweights else "neighbour*"]
            raise GraphFormatError(
                path, f"{token} numbers do not fit fmt layout '{' '.join(parts)}' in {text}", line
            )
        if err == _scan.METIS_MISSING:
            raise GraphFormatError(path, f"file ends after {token} of the n={n} vertex lines", line)
        if err == _scan.METIS_EXTRA:
            raise GraphFormatError(path, f"non-blank line {text} after the n={n} vertex lines", line)
        raise GraphFormatError(
            path, f"header mismatch: m={m} edges means {2 * m} adjacency entries, "
            f"but the vertex lines list {count}", head_line
        )
    src, dst = _text.take(src, count), _text.take(dst, count)
    weights = _text.take(weights, count) if has_eweights else None
    return EdgeList(src, dst, n, undirected=False, name=_text.stem_name(path), weights=weights)
