"""Graph file readers: exact CSR from hand-written files, round trips, and exact error lines."""
from __future__ import annotations

import gzip
import zipfile

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdmodel.errors import GraphFormatError, InputError
from simdmodel.graph import CSRGraph, EdgeList, csr_from_edges
from simdmodel.readers import EXTENSIONS, read, write_npz

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def write(path, text, gz=False):
    data = text.encode() if isinstance(text, str) else text
    if gz:
        path = path.with_name(path.name + ".gz")
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    return path


def csr_of(path):
    result = read(path)
    assert isinstance(result, EdgeList)
    return csr_from_edges(result)


def assert_csr(graph, indptr, indices):
    assert graph.indptr.tolist() == indptr
    assert graph.indices.tolist() == indices
    assert graph.n == len(indptr) - 1
    assert graph.m == len(indices)


def assert_same_csr(a, b):
    assert a.indptr.tolist() == b.indptr.tolist()
    assert a.indices.tolist() == b.indices.tolist()


def expect_error(path, line, *fragments):
    with pytest.raises(GraphFormatError) as info:
        read(path)
    err = info.value
    assert err.line == line, str(err)
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err).startswith(prefix), str(err)
    for fragment in fragments:
        assert fragment in str(err), str(err)
    return err


# --- small hand-written files, exact CSR ----------------------------------------------------------

MTX_GENERAL = """%%MatrixMarket matrix coordinate real general
% a comment
4 4 5
1 2 0.5
3 1 -2
1 4 1e3
2 2 7
4 3 1
"""


@pytest.mark.parametrize("gz", [False, True])
def test_mtx_general(tmp_path, gz):
    path = write(tmp_path / "small.mtx", MTX_GENERAL, gz)
    edges = read(path)
    assert edges.name == "small" and edges.n == 4 and not edges.undirected
    assert edges.src.tolist() == [0, 2, 0, 1, 3]
    assert edges.dst.tolist() == [1, 0, 3, 1, 2]
    assert_csr(csr_from_edges(edges), [0, 2, 3, 4, 5], [1, 3, 1, 0, 2])


@pytest.mark.parametrize("gz", [False, True])
def test_mtx_symmetric_stores_both_directions_and_diagonal_once(tmp_path, gz):
    text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n2 2\n3 1\n"
    path = write(tmp_path / "sym.mtx", text, gz)
    edges = read(path)
    assert edges.undirected
    graph = csr_from_edges(edges)
    assert_csr(graph, [0, 2, 4, 5], [1, 2, 0, 1, 0])
    assert graph.report.self_loops == 1


@pytest.mark.parametrize("field,entry", [("integer", "2 3 -4"), ("complex", "2 3 1.5 -2"),
                                          ("pattern", "2 3")])
@pytest.mark.parametrize("symmetry", ["skew-symmetric", "hermitian"])
def test_mtx_fields_and_symmetries(tmp_path, field, entry, symmetry):
    path = write(tmp_path / "f.mtx", f"%%MatrixMarket matrix coordinate {field} {symmetry}\n3 3 1\n{entry}\n")
    assert_csr(csr_of(path), [0, 0, 1, 2], [2, 1])


@pytest.mark.parametrize("gz", [False, True])
def test_snap_edge_list(tmp_path, gz):
    text = "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n\n1 2 0.5\n  5\t0\n% other comment\n1 0 3\n"
    path = write(tmp_path / "web.txt", text, gz)
    with pytest.warns(UserWarning, match="read without weights"):  # only some lines have a weight
        edges = read(path)
    assert edges.name == "web" and edges.n == 6 and not edges.undirected
    assert_csr(csr_from_edges(edges), [0, 1, 3, 3, 3, 3, 4], [1, 2, 0, 0])


@pytest.mark.parametrize("suffix", [".el", ".edges", ".el.gz"])
def test_snap_suffixes(tmp_path, suffix):
    data = b"2 0\r\n0 2\r\n"
    path = tmp_path / f"g{suffix}"
    path.write_bytes(gzip.compress(data) if suffix.endswith(".gz") else data)
    assert_csr(csr_of(path), [0, 1, 1, 2], [2, 0])


@pytest.mark.parametrize("gz", [False, True])
def test_dimacs_with_comments(tmp_path, gz):
    text = ("c 9th DIMACS Implementation Challenge\nc\np sp 4 5\nc graph contains 4 nodes\n"
            "a 1 2 10\na 2 1 10\n\na 4 1 3\nc mid-file comment\na 2 3 0\na 1 4 2\n")
    path = write(tmp_path / "road.gr", text, gz)
    edges = read(path)
    assert edges.name == "road" and edges.n == 4 and not edges.undirected
    assert_csr(csr_from_edges(edges), [0, 2, 4, 4, 5], [1, 3, 0, 2, 0])


@pytest.mark.parametrize("gz", [False, True])
def test_metis_plain_with_isolated_vertex(tmp_path, gz):
    # vertex 3 is isolated: its line is empty and still counts
    text = "% METIS graph\n5 3\n2 4\n1\n\n1 5\n4\n"
    path = write(tmp_path / "mesh.graph", text, gz)
    edges = read(path)
    assert edges.name == "mesh" and edges.n == 5 and not edges.undirected
    assert_csr(csr_from_edges(edges), [0, 2, 3, 3, 5, 6], [1, 3, 0, 0, 4, 3])


def test_metis_edge_weights_fmt_1(tmp_path):
    text = "3 2 1\n2 7 3 8\n1 7\n1 8\n\n\n"
    path = write(tmp_path / "w.graph", text)
    assert_csr(csr_of(path), [0, 2, 3, 4], [1, 2, 0, 0])


def test_metis_vertex_and_edge_weights_fmt_11_ncon_2(tmp_path):
    # each line: 2 vertex weights, then (neighbour, edge weight) pairs
    text = "%c\n4 3 11 2\n5 6 2 1 3 1\n1 1 1 1\n1 1 1 1 4 9\n0 0 3 9\n"
    path = write(tmp_path / "vw.metis", text)
    assert_csr(csr_of(path), [0, 2, 3, 5, 6], [1, 2, 0, 0, 3, 2])


def test_metis_vertex_sizes_fmt_100(tmp_path):
    text = "2 1 100\n9 2\n4 1\n"
    path = write(tmp_path / "s.graph", text)
    assert_csr(csr_of(path), [0, 1, 2], [1, 0])


def test_npz_reads_csr_directly(tmp_path):
    graph = CSRGraph(np.array([0, 2, 2, 3]), np.array([2, 1, 0]), name="x")
    path = tmp_path / "native.npz"
    write_npz(graph, path)
    loaded = read(path)
    assert isinstance(loaded, CSRGraph)
    assert loaded.name == "native"
    assert loaded.indptr.dtype == np.int64 and loaded.indices.dtype == np.int32
    assert_csr(loaded, [0, 2, 2, 3], [2, 1, 0])
    with np.load(path) as archive:
        assert sorted(archive.files) == ["format_version", "indices", "indptr"]
        assert int(archive["format_version"]) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["native.npz"]


def test_load_graph_goes_through_readers(tmp_path):
    from simdmodel.load import load_graph

    path = write(tmp_path / "sym.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 1\n2 1\n")
    assert_csr(load_graph(path), [0, 1, 2], [1, 0])


def test_extensions_cover_the_documented_suffixes():
    for ext in (".mtx", ".mtx.gz", ".txt", ".el", ".txt.gz", ".el.gz", ".edges", ".gr", ".gr.gz",
                ".graph", ".graph.gz", ".metis", ".npz"):
        assert ext in EXTENSIONS


# --- round trips ---------------------------------------------------------------------------------

def random_csr(rng, n, m):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    return csr_from_edges(EdgeList(src, dst, n, name="r"))


@pytest.mark.parametrize("seed", range(5))
def test_npz_round_trip_random(tmp_path, seed):
    rng = np.random.default_rng(seed)
    graph = random_csr(rng, int(rng.integers(1, 200)), int(rng.integers(0, 2000)))
    path = tmp_path / f"g{seed}.npz"
    write_npz(graph, path)
    write_npz(graph, path)  # overwriting works too
    assert_same_csr(read(path), graph)


def test_write_npz_failure_leaves_nothing(tmp_path, monkeypatch):
    graph = CSRGraph(np.array([0, 1, 1]), np.array([1]))
    target = tmp_path / "keep.npz"
    write_npz(graph, target)
    before = target.read_bytes()

    def boom(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(np, "savez", boom)
    with pytest.raises(RuntimeError):
        write_npz(CSRGraph(np.array([0, 0]), np.array([], dtype=np.int32)), target)
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["keep.npz"]


edge_lists = st.integers(1, 12).flatmap(
    lambda n: st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=40)
)


def text_mtx(pairs, n, symmetry="general"):
    lines = [f"%%MatrixMarket matrix coordinate pattern {symmetry}", f"{n} {n} {len(pairs)}"]
    return "\n".join(lines + [f"{u + 1} {v + 1}" for u, v in pairs]) + "\n"


def text_el(pairs):
    return "# edge list\n" + "".join(f"{u}\t{v}\n" for u, v in pairs)


def text_gr(pairs, n):
    return f"c x\np sp {n} {len(pairs)}\n" + "".join(f"a {u + 1} {v + 1} 1\n" for u, v in pairs)


def text_metis(graph):
    lines = [f"{graph.n} {graph.m // 2}"]
    lines += [" ".join(str(v + 1) for v in graph.neighbors(u)) for u in range(graph.n)]
    return "\n".join(lines) + "\n"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=edge_lists)
def test_text_formats_round_trip(tmp_path, pairs):
    n = max(max(p) for p in pairs) + 1  # a SNAP file cannot express trailing isolated vertices
    src = np.array([u for u, _ in pairs])
    dst = np.array([v for _, v in pairs])
    expected = csr_from_edges(EdgeList(src, dst, n))
    for name, text in (("g.mtx", text_mtx(pairs, n)), ("g.el", text_el(pairs)),
                       ("g.gr", text_gr(pairs, n))):
        for gz in (False, True):
            path = write(tmp_path / name, text, gz)
            assert_same_csr(csr_of(path), expected)
    npz_path = tmp_path / "g.npz"
    write_npz(expected, npz_path)
    assert_same_csr(read(npz_path), expected)

    undirected = csr_from_edges(EdgeList(src, dst, n, undirected=True), drop_self_loops=True)
    assert_same_csr(csr_of(write(tmp_path / "g.graph", text_metis(undirected))), undirected)
    with_loops = csr_from_edges(EdgeList(src, dst, n, undirected=True))
    assert_same_csr(csr_of(write(tmp_path / "s.mtx", text_mtx(pairs, n, "symmetric"))), with_loops)


# --- bad input: exact line numbers ---------------------------------------------------------------

BANNER = "%%MatrixMarket matrix coordinate pattern general\n"


@pytest.mark.parametrize("text,line,fragments", [
    (BANNER + "3 3 2\n1 2\n2 x\n", 4, ["column index 'x' is not an integer"]),
    (BANNER + "3 3 2\n1 2\n2\n", 4, ["expected 2 fields"]),
    (BANNER + "3 3 2\n1 2\n2 3 1\n", 4, ["expected 2 fields", "'2 3 1'"]),
    (BANNER + "3 3 2\n1 2\n2 3x\n", 4, ["column index '3x'"]),  # fast_matrix_market reads this as 3
    (BANNER + "% c\n3 3 2\n1 2\n2 4\n", 5, ["column index '4' outside 1..3"]),
    (BANNER + "3 3 2\n0 2\n2 3\n", 3, ["row index '0' outside 1..3"]),
    (BANNER + "3 3 2\n1 2\n-1 2\n", 4, ["row index '-1' outside"]),
    (BANNER + "3 3 3\n1 2\n2 3\n", 2, ["header mismatch", "declares 3 entries", "only 2"]),
    (BANNER + "3 3 1\n1 2\n\n2 3\n3 1\n", 5, ["header mismatch", "declares 1 entries", "has 3"]),
    ("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 1.5\n", 3, ["not an integer"]),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2 abc\n", 3, ["value 'abc' is not a number"]),
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n1 2\n", 3, ["expected 3 fields"]),
    ("3 3 1\n1 2\n", 1, ["missing Matrix Market banner"]),
    ("%%MatrixMarket matrix coordinate\n3 3 1\n1 2\n", 1, ["incomplete banner"]),
    ("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n", 1, ["'array'"]),
    ("%%MatrixMarket matrix coordinate boolean general\n2 2 0\n", 1, ["unknown field"]),
    (BANNER + "3 4 1\n1 2\n", 2, ["3 x 4", "square"]),
    (BANNER + "% only comments\n", 3, ["missing size line"]),
    (BANNER + "3 3\n", 2, ["expected size line"]),
    (BANNER + "3 -3 1\n", 2, ["column count"]),
    (BANNER + "3000000000 3000000000 0\n", 2, ["32-bit"]),
    (BANNER + "3 3 99999999999999999999\n", 2, ["entry count", "too large"]),
    (BANNER + "3 3 1\n1 \xff\n", 3, ["not an integer"]),
])
def test_mtx_errors(tmp_path, text, line, fragments):
    path = write(tmp_path / "bad.mtx", text.encode("latin-1"))
    expect_error(path, line, *fragments)


@pytest.mark.parametrize("text,line,fragments", [
    ("0 1\na b\n", 2, ["expected 2 or 3 integer fields", "'a b'"]),
    ("# c\n0 1\n\n1 2 3 4\n", 4, ["expected 2 or 3 integer fields"]),
    ("0 1\n7\n", 2, ["expected 2 or 3 integer fields", "'7'"]),
    ("0 1\n2 -3\n", 2, ["negative vertex id -3"]),
    ("0 1\n1.5 2\n", 2, ["integer fields"]),
    ("0 1\n1 2 w\n", 2, ["weight 'w' is not a number"]),
    ("0 2147483647\n", 1, ["32-bit"]),
    ("0 1\n1 99999999999999999999999\n", 2, ["32-bit"]),
    ("# only\n% comments\n\n", None, ["no edges"]),
    (b"0 1\n\xff\xfe 1\n", 2, ["integer fields", "\\xff"]),
])
def test_snap_errors(tmp_path, text, line, fragments):
    path = write(tmp_path / "bad.txt", text)
    expect_error(path, line, *fragments)


@pytest.mark.parametrize("text,line,fragments", [
    ("c x\na 1 2 3\np sp 2 1\n", 2, ["arc line before the problem line"]),
    ("c x\nc y\n", 3, ["missing problem line"]),
    ("p sp 3 1\np sp 3 1\na 1 2 3\n", 2, ["second problem line", "line 1"]),
    ("p sp 3 2\na 1 2 3\nq 1 2\n", 3, ["unknown line type"]),
    ("p sp 3 2\na 1 2 3\na 1 2\n", 3, ["expected arc line 'a U V W'"]),
    ("p sp 3 2\na 1 2 3\na 1 2 3 4\n", 3, ["expected arc line"]),
    ("p sp 3 2\na 1 2 3\na 1 x 3\n", 3, ["expected an integer, got 'x'"]),
    ("p sp 3 2\na 1 2 3\na 1 4 3\n", 3, ["arc head '4' outside 1..3"]),
    ("c\np sp 3 2\na 0 2 3\n", 3, ["arc tail '0' outside 1..3"]),
    ("c\np sp 3 3\na 1 2 3\nc\na 2 3 1\n", 2, ["header mismatch", "M=3", "only 2"]),
    ("c\np sp 3 1\na 1 2 3\na 2 3 1\na 3 1 1\n", 4, ["header mismatch", "M=1", "has 3"]),
    ("p max 3 1\na 1 2 3\n", 1, ["expected problem line 'p sp N M'"]),
    ("p sp 3 x\n", 1, ["arc count M"]),
])
def test_dimacs_errors(tmp_path, text, line, fragments):
    path = write(tmp_path / "bad.gr", text)
    expect_error(path, line, *fragments)


@pytest.mark.parametrize("text,line,fragments", [
    ("3 2\n2\n1 x\n\n", 3, ["expected an integer, got 'x'"]),
    ("% c\n3 2\n2\n1 4\n\n", 4, ["neighbour '4' outside 1..3"]),
    ("3 2\n2\n0\n\n", 3, ["neighbour '0' outside"]),
    ("3 2 1\n2 5 3\n1 5\n1 1\n", 2, ["do not fit fmt layout"]),
    ("3 2 11 2\n1 2 1\n", 2, ["do not fit fmt layout"]),
    ("3 2\n2 3\n1\n", 4, ["file ends after 2 of the n=3 vertex lines"]),
    ("3 1\n2\n1\n\n5\n", 5, ["after the n=3 vertex lines"]),
    ("% c\n3 2\n2\n1\n\n", 2, ["header mismatch", "m=2", "4 adjacency entries", "list 2"]),
    ("3 1\n2 3\n1\n1\n", 1, ["header mismatch", "list 4"]),
    ("3\n", 1, ["expected header"]),
    ("3 2 21\n", 1, ["fmt"]),
    ("3 2 0 2\n", 1, ["ncon given"]),
    ("%only\n", 2, ["missing header"]),
    ("0 99999999999999999999\n", 1, ["edge count m", "too large"]),
])
def test_metis_errors(tmp_path, text, line, fragments):
    path = write(tmp_path / "bad.graph", text)
    expect_error(path, line, *fragments)


@pytest.mark.parametrize("name", ["e.mtx", "e.txt", "e.gr", "e.graph", "e.el.gz"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(b"") if name.endswith(".gz") else b"  \n")
    expect_error(path, None, "empty file")


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "c.mtx.gz"
    path.write_bytes(gzip.compress(MTX_GENERAL.encode())[:30])
    expect_error(path, None, "corrupt gzip data")


def test_unknown_suffix(tmp_path):
    path = write(tmp_path / "graph.csv", "0,1\n")
    err = expect_error(path, None, "unknown graph file suffix", ".mtx.gz", ".graph", ".npz")
    assert isinstance(err, InputError)


def test_truncated_npz(tmp_path):
    path = tmp_path / "t.npz"
    write_npz(CSRGraph(np.array([0, 1, 2]), np.array([1, 0])), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    expect_error(path, None, "t.npz")


@pytest.mark.parametrize("arrays,fragment", [
    (dict(indptr=np.array([0, 1]), indices=np.array([0], dtype=np.int32)), "missing arrays format_version"),
    (dict(indptr=np.array([0, 1.0]), indices=np.array([0]), format_version=np.array(1)), "integer array"),
    (dict(indptr=np.array([0, 2]), indices=np.array([0]), format_version=np.array(1)), "bad CSR structure"),
    (dict(indptr=np.array([0, 1]), indices=np.array([5]), format_version=np.array(1)), "bad CSR structure"),
    (dict(indptr=np.array([0, 1]), indices=np.array([0]), format_version=np.array(2)), "format_version"),
])
def test_bad_npz_contents(tmp_path, arrays, fragment):
    path = tmp_path / "b.npz"
    np.savez(path, **arrays)
    expect_error(path, None, fragment)


def test_npz_that_is_not_a_zip(tmp_path):
    path = write(tmp_path / "z.npz", "hello")
    expect_error(path, None, "z.npz")
    with zipfile.ZipFile(tmp_path / "y.npz", "w") as archive:
        archive.writestr("other.txt", "x")
    expect_error(tmp_path / "y.npz", None, "missing arrays")


# --- fuzz: never anything but an EdgeList or GraphFormatError ------------------------------------

TEXT_SUFFIXES = [".mtx", ".txt", ".gr", ".graph"]
HEADERS = {
    ".mtx": ["%%MatrixMarket matrix coordinate pattern general\n3 3 2\n",
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n",
             "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n",
             "%%MatrixMarket matrix coordinate complex general\n2 2 1\n"],
    ".txt": ["", "# comment\n"],
    ".gr": ["p sp 3 2\n", "c x\np sp 4 3\n"],
    ".graph": ["3 2\n", "3 2 1\n", "3 2 11 2\n", "4 3 100\n"],
}
TOKENS = ["0", "1", "2", "3", "4", "-1", "+2", "1.5", "1e3", "nan", "x", "a", "c", "p", "sp", "%", "#",
          "%%MatrixMarket", "2147483647", "99999999999999999999", "\xe9", "\t", "",
          "inf", "1e400", "0.12345678901234567", "9223372036854775808"]


def check_reader_outcome(path):
    try:
        result = read(path)
    except GraphFormatError:
        return
    assert isinstance(result, EdgeList)
    assert result.src.dtype.kind == "i" and result.dst.dtype.kind == "i"
    assert result.src.shape == result.dst.shape
    if result.weights is not None:
        assert result.weights.dtype in (np.int64, np.float64) and result.weights.shape == result.src.shape
        assert np.isfinite(result.weights).all()
    if result.src.size:
        assert 0 <= min(result.src.min(), result.dst.min())
        assert max(result.src.max(), result.dst.max()) < result.n
    csr_from_edges(result)  # the builder accepts whatever a reader returns


@FUZZ
@given(text=st.text(max_size=200), suffix=st.sampled_from(TEXT_SUFFIXES))
def test_fuzz_arbitrary_text(tmp_path, text, suffix):
    check_reader_outcome(write(tmp_path / f"f{suffix}", text))


@FUZZ
@given(data=st.binary(max_size=100), suffix=st.sampled_from(TEXT_SUFFIXES))
def test_fuzz_arbitrary_bytes(tmp_path, data, suffix):
    check_reader_outcome(write(tmp_path / f"f{suffix}", data))


@FUZZ
@given(suffix=st.sampled_from(TEXT_SUFFIXES), data=st.data())
def test_fuzz_token_lines(tmp_path, suffix, data):
    header = data.draw(st.sampled_from(HEADERS[suffix] + [""]))
    lines = data.draw(st.lists(st.lists(st.sampled_from(TOKENS), max_size=6), max_size=8))
    body = "".join(" ".join(tokens) + "\n" for tokens in lines)
    gz = data.draw(st.booleans())
    check_reader_outcome(write(tmp_path / f"f{suffix}", header + body, gz))
