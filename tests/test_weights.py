"""Edge weights through the readers: exact values from hand-written files, exact real parsing,
round trips through files and `.npz`, one error line for a bad weight, and the shared real graphs."""
from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdmodel.errors import GraphFormatError
from simdmodel.graph import CSRGraph, EdgeList, csr_from_edges
from simdmodel.load import load_graph
from simdmodel.readers import ReadOptions, _scan, read, reader_for, write_npz
from simdmodel.render import render_info
from simdmodel.stats import graph_info

import naive
from shared_graphs import SHARED, needs_shared
from test_graph import weighted
from test_readers import write

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def exact(values):
    """Floats as their bit patterns, so -0.0 != 0.0 and every last bit counts."""
    return np.asarray(values, dtype=np.float64).view(np.int64).tolist()


# --- each reader keeps the file's weights ---------------------------------------------------------

@pytest.mark.parametrize("gz", [False, True])
def test_mtx_real_general(tmp_path, gz):
    text = ("%%MatrixMarket matrix coordinate real general\n% c\n4 4 5\n"
            "1 2 0.5\n3 1 -2\n1 4 1e3\n2 2 7\n4 3 0.12345678901234567\n")
    edges = read(write(tmp_path / "r.mtx", text, gz))
    assert edges.weights.dtype == np.float64
    assert exact(edges.weights) == exact([0.5, -2.0, 1000.0, 7.0, 0.12345678901234567])
    assert weighted(csr_from_edges(edges)) == [[(1, 0.5), (3, 1000.0)], [(1, 7.0)], [(0, -2.0)],
                                           [(2, 0.12345678901234567)]]


def test_mtx_integer_symmetric_fills_both_directions(tmp_path):
    text = "%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n2 1 5\n2 2 -6\n3 1 9223372036854775807\n"
    graph = load_graph(write(tmp_path / "s.mtx", text))
    assert graph.weights.dtype == np.int64
    big = 2**63 - 1
    assert weighted(graph) == [[(1, 5), (2, big)], [(0, 5), (1, -6)], [(0, big)]]


def test_mtx_hermitian_real_is_symmetric_and_skew_negates_the_mirror(tmp_path):
    herm = load_graph(write(tmp_path / "h.mtx", "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 1.5\n"))
    assert weighted(herm) == [[(1, 1.5)], [(0, 1.5)]]
    text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 3\n2 1 5\n3 1 -7.5\n3 2 0\n"
    skew = load_graph(write(tmp_path / "k.mtx", text))
    # A[j, i] = -A[i, j]: row 0 gets the mirrors of (2,1) and (3,1); -0.0 is the mirror of 0
    assert weighted(skew) == [[(1, -5.0), (2, 7.5)], [(0, 5.0), (2, -0.0)], [(0, -7.5), (1, 0.0)]]
    assert exact(skew.neighbor_weights(1)) == exact([5.0, -0.0])
    ints = load_graph(write(tmp_path / "ki.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n"
                                                  "2 2 1\n2 1 4\n"))
    assert weighted(ints) == [[(1, -4)], [(0, 4)]]


@pytest.mark.parametrize("field,entry", [("pattern", "2 1"), ("complex", "2 1 1.5 -2")])
def test_mtx_pattern_and_complex_have_no_weights(tmp_path, field, entry):
    edges = read(write(tmp_path / "p.mtx", f"%%MatrixMarket matrix coordinate {field} general\n2 2 1\n{entry}\n"))
    assert edges.weights is None
    assert csr_from_edges(edges).weights is None


@pytest.mark.parametrize("gz", [False, True])
def test_dimacs_weights(tmp_path, gz):
    text = ("c 9th DIMACS\np sp 4 5\na 1 2 10\na 2 1 10\nc mid\na 4 1 3\na 2 3 0\n"
            "a 1 4 -9223372036854775807\n")
    graph = load_graph(write(tmp_path / "road.gr", text, gz))
    assert graph.weights.dtype == np.int64
    assert weighted(graph) == [[(1, 10), (3, -(2**63 - 1))], [(0, 10), (2, 0)], [], [(0, 3)]]


def test_metis_edge_weights_fmt_1_and_011(tmp_path):
    graph = load_graph(write(tmp_path / "w.graph", "3 2 1\n2 7 3 8\n1 7\n1 8\n\n\n"))
    assert graph.weights.dtype == np.int64
    assert weighted(graph) == [[(1, 7), (2, 8)], [(0, 7)], [(0, 8)]]
    # fmt 011, ncon 2: two vertex weights open each line and are not kept
    text = "%c\n4 3 11 2\n5 6 2 1 3 1\n1 1 1 4\n1 1 1 1 4 9\n0 0 3 9\n"
    assert weighted(load_graph(write(tmp_path / "vw.metis", text))) == [
        [(1, 1), (2, 1)], [(0, 4)], [(0, 1), (3, 9)], [(2, 9)]]


@pytest.mark.parametrize("fmt", ["", " 0", " 100", " 10"])
def test_metis_without_edge_weights(tmp_path, fmt):
    body = {"": "2\n1\n", " 0": "2\n1\n", " 100": "9 2\n4 1\n", " 10": "3 2\n4 1\n"}[fmt]
    assert read(write(tmp_path / "u.graph", f"2 1{fmt}\n{body}")).weights is None


@pytest.mark.parametrize("gz", [False, True])
def test_snap_third_column(tmp_path, gz):
    text = "# weighted\n0\t1\t2.5\n\n1 2 -3\n% c\n  5\t0 1e-3\n"
    graph = load_graph(write(tmp_path / "w.txt", text, gz))
    assert graph.weights.dtype == np.float64
    assert weighted(graph) == [[(1, 2.5)], [(2, -3.0)], [], [], [], [(0, 0.001)]]
    assert read(write(tmp_path / "u.el", "0 1\n1 0\n")).weights is None


def test_snap_mixed_file_is_read_without_weights_and_says_so(tmp_path):
    path = write(tmp_path / "m.txt", "# c\n0 1 2\n1 2\n2 0 4\n")
    with pytest.warns(UserWarning, match=r"line 2 has one, line 3 has none\); the graph is read without weights"):
        edges = read(path)
    assert edges.weights is None and edges.src.tolist() == [0, 1, 2]
    with pytest.warns(UserWarning, match="line 3 has one, line 2 has none"):
        assert read(write(tmp_path / "n.txt", "# c\n0 1\n1 2 3\n")).weights is None


def test_npz_round_trip_keeps_weights_and_versions(tmp_path):
    graph = CSRGraph(np.array([0, 2, 2, 3]), np.array([2, 1, 0]), weights=np.array([1.5, -0.0, 1e300]))
    path = tmp_path / "w.npz"
    write_npz(graph, path)
    loaded = read(path)
    assert exact(loaded.weights) == exact(graph.weights)
    with np.load(path) as archive:
        assert sorted(archive.files) == ["format_version", "indices", "indptr", "weights"]
        assert int(archive["format_version"]) == 2
    ints = CSRGraph(np.array([0, 1, 1]), np.array([1]), weights=np.array([7]))
    write_npz(ints, path)
    assert read(path).weights.dtype == np.int64 and read(path).weights.tolist() == [7]
    write_npz(CSRGraph(np.array([0, 1, 1]), np.array([1])), path)
    with np.load(path) as archive:  # an unweighted graph is written exactly as before
        assert sorted(archive.files) == ["format_version", "indices", "indptr"]
        assert int(archive["format_version"]) == 1
    assert read(path).weights is None


@pytest.mark.parametrize("arrays,fragment", [
    (dict(weights=np.array([1.0])), "format_version 1 has no weights array"),
    (dict(format_version=np.array(2)), "missing array weights (format_version 2)"),
    (dict(format_version=np.array(3)), "expected 1 (unweighted) or 2 (weighted)"),
    (dict(format_version=np.array(2), weights=np.array([1.0, 2.0])), "bad CSR structure"),
    (dict(format_version=np.array(2), weights=np.array([np.nan])), "finite, got nan on edge 0 (0 -> 1)"),
    (dict(format_version=np.array(2), weights=np.array([1], dtype=np.int32)), "int64 or float64"),
    (dict(format_version=np.array(2), weights=np.array([[1.0]])), "1-D"),
])
def test_bad_npz_weights(tmp_path, arrays, fragment):
    path = tmp_path / "b.npz"
    base = dict(indptr=np.array([0, 1, 1]), indices=np.array([1], dtype=np.int32), format_version=np.array(1))
    np.savez(path, **{**base, **arrays})
    with pytest.raises(GraphFormatError) as info:
        read(path)
    assert str(info.value).startswith(f"{path}: ") and fragment in str(info.value)


def test_graph_info_reports_weighted(tmp_path):
    weighted = load_graph(write(tmp_path / "w.gr", "p sp 2 1\na 1 2 3\n"))
    info = graph_info(weighted)
    assert info["weighted"] is True and list(info)[:4] == ["name", "n", "m", "weighted"]
    assert "weighted           yes\n" in render_info(info)
    plain = graph_info(load_graph("grid2d:side=3"))
    assert plain["weighted"] is False and "weighted           no\n" in render_info(plain)


# --- bad weights: one error line, naming file and line -----------------------------------------

REAL = "%%MatrixMarket matrix coordinate real general\n3 3 2\n"
INTEGER = "%%MatrixMarket matrix coordinate integer general\n3 3 2\n"


@pytest.mark.parametrize("name,text,line,fragment", [
    ("a.mtx", REAL + "1 2 1\n1 3 nan\n", 4, "value 'nan' is not a finite number"),
    ("b.mtx", REAL + "1 2 -inf\n1 3 1\n", 3, "value '-inf' is not a finite number"),
    ("c.mtx", REAL + "1 2 Infinity\n1 3 1\n", 3, "not a finite number"),
    ("d.mtx", REAL + "% c\n1 2 1\n1 3 1e309\n", 5, "value '1e309' is not finite (beyond the float64 range)"),
    ("e.mtx", REAL + "1 2 -1.7976931348623159e308\n1 3 1\n", 3, "beyond the float64 range"),
    ("f.mtx", INTEGER + "1 2 9223372036854775808\n1 3 1\n", 3, "does not fit a 64-bit integer"),
    ("g.mtx", INTEGER + "1 2 1\n1 3 -99999999999999999999\n", 4, "does not fit a 64-bit integer"),
    ("h.txt", "0 1 2\n\n1 2 NaN\n", 3, "weight 'NaN' is not a finite number"),
    ("i.txt", "0 1 1e999\n1 2 3\n", 1, "weight '1e999' is not finite"),
    ("j.txt", "0 1\n1 2 inf\n", 2, "not a finite number"),  # a mixed file checks its weights too
    ("k.gr", "p sp 3 2\na 1 2 3\na 2 3 9223372036854775808\n", 3, "arc weight '9223372036854775808' does not fit"),
    ("l.graph", "2 1 1\n2 5\n1 99999999999999999999\n", 3, "edge weight '99999999999999999999' does not fit"),
])
def test_bad_weights_give_one_error_line(tmp_path, name, text, line, fragment):
    path = write(tmp_path / name, text)
    with pytest.raises(GraphFormatError) as info:
        read(path)
    message = str(info.value)
    assert info.value.line == line and message.startswith(f"{path}:{line}: "), message
    assert fragment in message and "\n" not in message


def test_an_overflowing_weight_is_reported_before_a_later_bad_line(tmp_path):
    path = write(tmp_path / "o.mtx", REAL + "1 2 1e400\n1 x 2\n")
    with pytest.raises(GraphFormatError, match=r"o.mtx:3: value '1e400'"):
        read(path)


# --- the real-number parser is exact -------------------------------------------------------------

def parse(text: str):
    buf = np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
    return _scan.parse_number(buf, 0, buf.size)


def float_or_none(text):
    try:
        return float(text)
    except ValueError:
        return None


@pytest.mark.parametrize("text,value", [
    ("0.5", 0.5), ("-2", -2.0), ("1e3", 1000.0), ("+1.5E-2", 0.015), (".25", 0.25), ("3.", 3.0),
    ("-0", -0.0), ("0e999999", 0.0), ("1e22", 1e22), ("1e30", 1e30), ("123456789e-22", 123456789e-22),
    ("9007199254740992", 9007199254740992.0), ("1.0000000000000000e+00", 1.0),
])
def test_parse_number_fast_path(text, value):
    status, parsed = parse(text)
    assert status == _scan.NUM_OK and exact([parsed]) == exact([value])


@pytest.mark.parametrize("text", ["9007199254740993", "0.12345678901234567", "1e-300", "1e400",
                                  "123456789012345678901234567890", "1e99999999999"])
def test_parse_number_slow_path(text):
    assert parse(text)[0] == _scan.NUM_SLOW


@pytest.mark.parametrize("text", ["nan", "-Inf", "+infinity", "NAN"])
def test_parse_number_nonfinite(text):
    assert parse(text)[0] == _scan.NUM_NONFINITE


@settings(max_examples=400, deadline=None)
@given(st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda x: f"{x:.6e}"),
    st.integers(-(10**20), 10**20).map(str),
    st.tuples(st.integers(0, 10**17), st.integers(0, 40), st.integers(-40, 40)).map(
        lambda t: f"{str(t[0])[:max(1, len(str(t[0])) - t[1] % 5)]}.{t[1]}e{t[2]}"),
    st.text(alphabet="0123456789.eE+-naifINFty", min_size=1, max_size=12),
))
def test_parse_number_agrees_with_float_and_is_number(text):
    buf = np.frombuffer(text.encode(), dtype=np.uint8)
    status, value = _scan.parse_number(buf, 0, buf.size)
    assert (status != _scan.NUM_BAD) == _scan.is_number(buf, 0, buf.size)
    if status != _scan.NUM_BAD:
        assert float_or_none(text) is not None  # what is_number accepts, Python's float reads
    if status == _scan.NUM_OK:
        assert exact([value]) == exact([float(text)])
    if status == _scan.NUM_NONFINITE:
        assert not np.isfinite(float(text))


# --- round trips through files --------------------------------------------------------------------

weighted_edges = st.integers(1, 10).flatmap(lambda n: st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.floats(allow_nan=False, allow_infinity=False)),
    min_size=1, max_size=30))
integer_weight = st.integers(-(2**63) + 1, 2**63 - 1)


def expected_csr(edges, n, dtype, undirected=False, **options):
    src = np.array([u for u, _, _ in edges])
    dst = np.array([v for _, v, _ in edges])
    weights = np.array([w for _, _, w in edges], dtype=dtype)
    return csr_from_edges(EdgeList(src, dst, n, undirected=undirected, weights=weights), **options)


def assert_same(a, b):
    assert a.indptr.tolist() == b.indptr.tolist() and a.indices.tolist() == b.indices.tolist()
    assert a.weights.dtype == b.weights.dtype
    assert a.weights.view(np.int64).tolist() == b.weights.view(np.int64).tolist()


@SETTINGS
@given(edges=weighted_edges, gz=st.booleans())
def test_real_weights_round_trip_through_mtx_snap_and_npz(tmp_path, edges, gz):
    n = max(max(u, v) for u, v, _ in edges) + 1
    expected = expected_csr(edges, n, np.float64)
    mtx = [f"%%MatrixMarket matrix coordinate real general\n{n} {n} {len(edges)}\n"]
    mtx += [f"{u + 1} {v + 1} {w!r}\n" for u, v, w in edges]
    assert_same(load_graph(write(tmp_path / "g.mtx", "".join(mtx), gz)), expected)
    snap = "".join(f"{u}\t{v}\t{w!r}\n" for u, v, w in edges)
    assert_same(load_graph(write(tmp_path / "g.txt", snap, gz)), expected)
    write_npz(expected, tmp_path / "g.npz")
    assert_same(read(tmp_path / "g.npz"), expected)
    symmetric = [f"%%MatrixMarket matrix coordinate real symmetric\n{n} {n} {len(edges)}\n"]
    symmetric += [f"{u + 1} {v + 1} {w!r}\n" for u, v, w in edges]
    assert_same(load_graph(write(tmp_path / "s.mtx", "".join(symmetric))),
                expected_csr(edges, n, np.float64, undirected=True))


@SETTINGS
@given(n=st.integers(1, 10), data=st.data())
def test_integer_weights_round_trip_through_gr_mtx_metis_and_npz(tmp_path, n, data):
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), integer_weight),
                               min_size=1, max_size=30))
    expected = expected_csr(edges, n, np.int64)
    gr = f"p sp {n} {len(edges)}\n" + "".join(f"a {u + 1} {v + 1} {w}\n" for u, v, w in edges)
    assert_same(load_graph(write(tmp_path / "g.gr", gr)), expected)
    mtx = f"%%MatrixMarket matrix coordinate integer general\n{n} {n} {len(edges)}\n"
    assert_same(load_graph(write(tmp_path / "g.mtx", mtx + "".join(f"{u + 1} {v + 1} {w}\n" for u, v, w in edges))),
                expected)
    write_npz(expected, tmp_path / "g.npz")
    assert_same(read(tmp_path / "g.npz"), expected)
    # METIS lists both directions with their weights: an undirected graph without self loops
    undirected = expected_csr(edges, n, np.int64, undirected=True, drop_self_loops=True)
    lines = [f"{n} {undirected.m // 2} 1"]
    lines += [" ".join(f"{v + 1} {w}" for v, w in zip(undirected.neighbors(u).tolist(),
                                                      undirected.neighbor_weights(u).tolist()))
              for u in range(n)]
    assert_same(load_graph(write(tmp_path / "g.graph", "\n".join(lines) + "\n")), undirected)


@SETTINGS
@given(edges=weighted_edges, undirected=st.booleans(), drop_loops=st.booleans(), drop_dups=st.booleans())
def test_loaded_weights_match_the_naive_builder(tmp_path, edges, undirected, drop_loops, drop_dups):
    n = max(max(u, v) for u, v, _ in edges) + 1
    path = write(tmp_path / "g.el", "".join(f"{u} {v} {w!r}\n" for u, v, w in edges))
    graph = load_graph(path, undirected=undirected, drop_self_loops=drop_loops, drop_duplicates=drop_dups)
    pairs = [(u, v) for u, v, _ in edges]
    expected = naive.weighted_rows(pairs, [w for _, _, w in edges], n, undirected, drop_loops, drop_dups)
    assert [[(v, exact([w])[0]) for v, w in row] for row in weighted(graph)] == \
        [[(v, exact([w])[0]) for v, w in row] for row in expected]


# --- the shared real graphs: weights exactly when the file has them ---------------------------------

COUNT_LINES = {"snap_wiki-Vote.txt.gz", "snap_email-Enron.txt.gz"}  # their MANIFEST.md says so
SHARED_FILES = sorted(p.name for p in SHARED.iterdir() if p.name != "MANIFEST.md") if SHARED else []


def _file_has_weights(path: Path) -> bool:
    """Read from the file's own header or first edge line, independently of the readers."""
    with gzip.open(path, "rt") if path.name.endswith(".gz") else open(path) as handle:
        lines = [line.split() for line in handle.read(1 << 16).splitlines()]
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".mtx"):
        return lines[0][3].lower() in ("real", "double", "integer")
    if name.endswith(".gr"):
        return True
    if name.endswith((".graph", ".metis")):
        header = next(tokens for tokens in lines if tokens and not tokens[0].startswith("%"))
        return len(header) > 2 and header[2].rjust(3, "0")[2] == "1"
    first = next(tokens for tokens in lines if tokens and tokens[0][0] not in "#%")
    return len(first) == 3


@needs_shared
@pytest.mark.parametrize("name", SHARED_FILES)
def test_shared_graphs_have_weights_exactly_when_the_file_does(name):
    path = SHARED / name
    try:
        reader_for(path)
    except GraphFormatError:
        pytest.skip(f"{name}: not a supported graph suffix")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no shared file is a mixed SNAP file
            graph = load_graph(path, read_options=ReadOptions(count_lines=name in COUNT_LINES))
    except GraphFormatError as error:
        pytest.skip(f"{name}: not loadable ({error.reason})")
    assert graph.weighted == _file_has_weights(path)
    if graph.weighted:
        assert graph.weights.size == graph.m and np.isfinite(graph.weights).all()
