"""Graph file readers: exact CSR from hand-written files, round trips, and exact error lines."""
from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from simdmodel.errors import GraphFormatError, InputError
from simdmodel.graph import CSRGraph, EdgeList, csr_from_edges
from simdmodel.load import load_graph
from simdmodel.readers import EXTENSIONS, ReadOptions, read, reader_for, write_npz
from shared_graphs import SHARED, needs_shared
from simdmodel.readers import csv as csv_reader

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": lambda data: zstandard.ZstdCompressor().compress(data)}
COMPRESSIONS = list(COMPRESS)


def write(path, text, gz=False):
    """Write `text` to `path`; `gz` True (gzip) or a compression suffix compresses it and appends
    the suffix to the name."""
    data = text.encode() if isinstance(text, str) else text
    suffix = ".gz" if gz is True else gz or ""
    if suffix:
        path = path.with_name(path.name + suffix)
        path.write_bytes(COMPRESS[suffix](data))
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


def expect_error(path, line, *fragments, options=None):
    with pytest.raises(GraphFormatError) as info:
        read(path, options)
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
                ".graph", ".graph.gz", ".metis", ".npz", ".edgelist", ".csv", ".tsv", ".csv.gz",
                ".tsv.bz2", ".mtx.xz", ".el.zst", ".edgelist.zst", ".metis.bz2"):
        assert ext in EXTENSIONS
    assert ".npz.gz" not in EXTENSIONS and ".gz" not in EXTENSIONS
    assert len(set(EXTENSIONS)) == len(EXTENSIONS) == 10 * 5 + 1
    for ext in EXTENSIONS:  # every listed suffix dispatches, in any case
        assert reader_for(f"g{ext}") is reader_for(f"G{ext.upper()}")


# --- CSV / TSV edge lists ------------------------------------------------------------------------

@pytest.mark.parametrize("header", ["node_1,node_2", "from,to", "id1,id2", '"from","to"', "Source , Target"])
@pytest.mark.parametrize("gz", [False, True])
def test_csv_with_header_row(tmp_path, header, gz):
    text = f"{header}\n0,24\n0,3\n3,1\n"
    path = write(tmp_path / "musae_x_edges.csv", text, gz)
    edges = read(path)
    assert edges.name == "musae_x_edges" and edges.n == 25 and not edges.undirected
    assert edges.src.tolist() == [0, 0, 3] and edges.dst.tolist() == [24, 3, 1]
    assert edges.weights is None
    names = [part.strip().strip('"') for part in header.split(",")]
    assert edges.notes == (f"header row {header!r} detected", f"columns {names[0]},{names[1]}")


def test_csv_without_header_comments_blank_lines_and_crlf(tmp_path):
    text = "# exported\r\n% by hand\r\n\r\n2,0\r\n  \r\n 1 , +3 \r\n# mid-file\r\n0,2"
    edges = read(write(tmp_path / "g.csv", text))
    assert edges.n == 4
    assert edges.src.tolist() == [2, 1, 0] and edges.dst.tolist() == [0, 3, 2]
    assert edges.notes == ("no header row", "columns 0,1")
    assert_csr(csr_from_edges(edges), [0, 1, 2, 3, 3], [2, 3, 0])


@pytest.mark.parametrize("text", ["src\tdst\n0\t2\n2\t1\n", "0\t2\n2\t1\n", "0\t2\n\t\n2\t1\n"])
def test_tsv(tmp_path, text):
    edges = read(write(tmp_path / "g.tsv", text))
    assert edges.src.tolist() == [0, 2] and edges.dst.tolist() == [2, 1] and edges.n == 3


def test_csv_weights(tmp_path):
    text = "a,b,weight\n0,1,0.5\n1,2,-3\n2,0,1e3\n0,2,0.1\n1,1,.25\n"
    edges = read(write(tmp_path / "w.csv", text))
    assert edges.weights.dtype == np.float64
    assert edges.weights.tolist() == [0.5, -3.0, 1000.0, 0.1, 0.25]
    assert edges.notes[1] == "columns a,b,weight (weight)"
    graph = load_graph(tmp_path / "w.csv")
    assert graph.weights.tolist() == [0.5, 0.1, -3.0, 0.25, 1000.0]


@pytest.mark.parametrize("columns,header", [
    (("to", "from"), None), (("2", "0"), None), ("2,0", True), (("to", "0"), None),
    (("to", "from", "w"), None), (("2", "0", "3"), None),
])
def test_csv_columns(tmp_path, columns, header):
    text = "from,label,to,w\n0,x y,5,1.5\n3,\"a, b\",1,2\n"
    edges = read(write(tmp_path / "c.csv", text), ReadOptions(header=header, columns=columns))
    assert edges.src.tolist() == [5, 1] and edges.dst.tolist() == [0, 3] and edges.n == 6
    picked = ReadOptions(columns=columns).columns
    if len(picked) == 3:
        assert edges.weights.tolist() == [1.5, 2.0]
    else:
        assert edges.weights is None
    assert edges.notes[1].startswith("columns to,from")


def test_csv_columns_by_index_without_header(tmp_path):
    text = "7,x,0\n8,y,1\n"
    edges = read(write(tmp_path / "c.csv", text), ReadOptions(columns=("2", "0")))
    assert edges.src.tolist() == [0, 1] and edges.dst.tolist() == [7, 8]
    assert edges.notes == ("no header row", "columns 2,0")


def test_csv_header_option(tmp_path):
    path = write(tmp_path / "h.csv", "0,1\n2,3\n")
    assert read(path).src.tolist() == [0, 2]
    forced = read(path, ReadOptions(header=True))
    assert forced.src.tolist() == [2] and forced.notes[0] == "header row '0,1' (--header)"
    expect_error(write(tmp_path / "n.csv", "a,b\n0,1\n"), 1, "vertex id 'a' is not an integer",
                 options=ReadOptions(header=False))


def test_csv_byte_order_mark_and_compound_suffixes(tmp_path):
    path = write(tmp_path / "musae_deezer_HU_edges.csv", b"\xef\xbb\xbfnode_1,node_2\n0,1\n", ".bz2")
    edges = read(path)
    assert edges.name == "musae_deezer_HU_edges" and edges.src.tolist() == [0]
    assert edges.notes[0] == "header row 'node_1,node_2' detected"
    upper = write(tmp_path / "G.CSV", "1,0\n", ".zst")
    assert upper.name == "G.CSV.zst" and read(upper).src.tolist() == [1]


@pytest.mark.parametrize("text,line,fragments", [
    ("a,b\n0,1\n2,x\n", 3, ["vertex id 'x' is not an integer in '2,x'"]),
    ("# c\r\n\r\nfrom,to\r\n0,1\r\n% c\r\n\r\n2,x\r\n3,y\r\n", 7, ["vertex id 'x'"]),
    ("0\t1\n", 1, ["expected 2 or 3 fields", "separated by commas", "'0\\t1'"]),  # a TSV named .csv
    ("0,1\n2,1.0\n", 2, ["vertex id '1.0' is not an integer"]),  # pandas reads 1.0 as the id 1
    ("0,1\n2,1e3\n", 2, ["vertex id '1e3' is not an integer"]),  # ... and 1e3 as 1000
    ("0,1\n2,3\x0b\n", 2, ["vertex id '3\\x0b' is not an integer"]),  # ... and '3\v' as 3
    ("0,1\n\n2,-1\n", 3, ["negative vertex id -1"]),
    ("0,1\n2,2147483647\n", 2, ["vertex id 2147483647 does not fit 32-bit ids"]),
    ("0,1\n2,99999999999999999999999\n", 2, ["does not fit 32-bit ids"]),
    ("a,b\n0,1\n2,3,4\n", 3, ["expected 2 fields separated by commas (as on line 1), got 3 in '2,3,4'"]),
    ("0,1,2\n3,4\n", 2, ["expected 3 fields", "got 2 in '3,4'"]),  # 3 columns: the third a weight
    ("0,1\n2\n", 2, ["expected 2 fields", "got 1"]),
    ("0,1\n2,3,\n", 2, ["expected 2 fields", "got 3"]),
    ("a,b,w\n0,1,1\n2,3,x\n", 3, ["weight 'x' is not a number in '2,3,x'"]),
    ("a,b,w\n0,1,1\n2,3,nan\n", 3, ["weight 'nan' is not a finite number"]),
    ("a,b,w\n0,1,1\n2,3,-inf\n", 3, ["weight '-inf' is not a finite number"]),
    ("a,b,w\n0,1,1\n2,3,1e400\n", 3, ["weight '1e400' is not finite"]),
    ("a,b,w\n0,1,1\n2,3,\n", 3, ["weight '' is not a number"]),
    ("a,b,w\n0,1,1\n2,3,+1e 1\n", 3, ["weight '+1e 1' is not a number"]),  # pandas reads 10
    ("a,b,c,d\n0,1,2,3\n", 1, ["4 fields in 'a,b,c,d'", "--columns"]),
    ("7\n0,1\n", 1, ["expected 2 or 3 fields (src, dst [, weight]) separated by commas, got '7'"]),
    ("0,1\n\"2,3\n", 2, ["malformed line", "a quoted field must end on its line"]),
    ("0,1\n2,3\r4,5\n", 2, ["carriage return inside the line"]),
    ("0,1\n\xff,3\n", 2, ["vertex id '\\\\xff' is not an integer"]),  # as _text.show escapes
    ("node_1,node_2\n", None, ["no edges (only a header row"]),
    ("# only\n\n", None, ["no edges (only comments or blank lines)"]),
])
def test_csv_errors(tmp_path, text, line, fragments):
    path = write(tmp_path / "bad.csv", text.encode("latin-1"))
    expect_error(path, line, *fragments)


def test_csv_first_bad_line_is_reported_after_a_fast_path_failure(tmp_path):
    # pandas sees the big id first (a post-check); the slow pass finds the earlier bad line
    lines = ["0,1"] * 50 + ["2,x"] + ["3,4"] * 50 + ["5,3000000000"]
    expect_error(write(tmp_path / "b.csv", "\n".join(lines) + "\n"), 51, "vertex id 'x'")
    lines = ["0,1"] * 50 + ["2,-3"] + ["3,4"] * 50 + ["5,3000000000"]
    expect_error(write(tmp_path / "b.csv", "\n".join(lines) + "\n"), 51, "negative vertex id -3")


@pytest.mark.parametrize("columns,header,line,fragments", [
    (("x", "to"), None, 1, ["--columns: no column 'x' in the header row 'from,to' (columns: from, to)"]),
    (("0", "5"), None, 1, ["--columns: no column 5 in 'from,to' (2 fields, indices 0..1)"]),
    (("from", "0"), None, 1, ["names column from twice"]),
    (("from", "to"), False, 1, ["--columns 'from' is a column name, but --no-header"]),
])
def test_csv_column_errors(tmp_path, columns, header, line, fragments):
    path = write(tmp_path / "c.csv", "from,to\n0,1\n")
    expect_error(path, line, *fragments, options=ReadOptions(header=header, columns=columns))


def test_csv_short_rows_in_unused_columns_are_errors(tmp_path):
    # pandas fills a missing unused field with NaN and, with index_col=False, drops an extra one
    path = write(tmp_path / "c.csv", "a,b,c\n0,1,x\n2,3\n")
    expect_error(path, 3, "expected 3 fields", options=ReadOptions(columns=("a", "b")))
    path = write(tmp_path / "d.csv", "0,1,2\n3,4,5,6\n")
    expect_error(path, 2, "expected 3 fields", options=ReadOptions(columns=("0", "1")))


def test_csv_fast_and_slow_paths_agree_on_a_large_file(tmp_path):
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 10**6, 20_000), rng.integers(0, 10**6, 20_000)
    weights = rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000)
    text = "s,d,w\n" + "".join(f"{u},{v},{w!r}\n" for u, v, w in zip(src, dst, weights.tolist()))
    path = write(tmp_path / "big.csv", text)
    with mock.patch.object(csv_reader, "_slow", side_effect=AssertionError("slow path taken")):
        fast = read(path)
    with mock.patch.object(csv_reader, "_fast", return_value=None):
        slow = read(path)
    for edges in (fast, slow):
        assert edges.src.tolist() == src.tolist() and edges.dst.tolist() == dst.tolist()
        assert edges.weights.tolist() == weights.tolist()  # exactly: repr round-trips


# --- SNAP count lines ----------------------------------------------------------------------------

WIKI_VOTE_LIKE = "7\r\n3\r\n30\t1\r\n30\t5\r\n2\t1\r\n"
ENRON_LIKE = "# SNAP-like\n6 \n4\n0\t1\n1\t0\n\n0\t2\n2\t0\n"


def test_count_lines_are_refused_without_the_option(tmp_path):
    for text, line, count in ((WIKI_VOTE_LIKE, 1, "'7'"), (ENRON_LIKE, 2, "'6'")):
        err = expect_error(write(tmp_path / "c.txt", text), line,
                           f"the file starts with a bare count line {count} (SNAP-like files that "
                           "open with vertex/edge counts load with --count-lines)")
        assert "\n" not in str(err)


@pytest.mark.parametrize("suffix", [".txt", ".el", ".edges", ".edgelist"])
def test_count_lines_with_the_option(tmp_path, suffix):
    options = ReadOptions(count_lines=True)
    edges = read(write(tmp_path / f"w{suffix}", WIKI_VOTE_LIKE, ".gz"), options)
    assert edges.n == 31  # the vertex count (7) is below max id + 1, as in wiki-Vote
    assert edges.src.tolist() == [30, 30, 2] and edges.dst.tolist() == [1, 5, 1]
    assert edges.notes == ("2 count lines: 7 vertices, 3 edges",)
    edges = read(write(tmp_path / f"e{suffix}", ENRON_LIKE), options)
    assert edges.n == 6 and edges.src.tolist() == [0, 1, 0, 2]  # declared 6 > max id + 1 = 3
    one = read(write(tmp_path / f"o{suffix}", "9\n0 1 2.5\n1 2 3\n"), options)
    assert one.n == 9 and one.weights.tolist() == [2.5, 3.0]
    assert one.notes == ("1 count line: 9 vertices",)
    plain = read(write(tmp_path / f"p{suffix}", "0 1\n"), options)  # the lines are optional
    assert plain.n == 2 and plain.notes == ()
    graph = load_graph(tmp_path / f"e{suffix}", read_options=options)
    assert graph.n == 6 and graph.m == 4 and graph.report.notes == ("2 count lines: 6 vertices, 4 edges",)


@pytest.mark.parametrize("text,line,fragments", [
    ("5\n3\n0 1\n1 2\n", 2, ["header mismatch: the second count line declares 3 edges but the "
                             "file has 2 edge lines"]),
    ("5\n1\n0 1\n1 2\n", 2, ["declares 1 edges", "has 2 edge lines"]),
    ("5\n2\n4\n0 1\n1 2\n", 3, ["a third bare count line '4'", "lines 1 and 2"]),
    ("3000000000\n0 1\n", 1, ["3000000000 vertices do not fit 32-bit vertex ids"]),
    ("5\n2\n# no edges\n", None, ["no edges"]),
    ("5\n2\n0 1\n1\n", 4, ["expected 2 or 3 integer fields", "'1'"]),
])
def test_count_line_errors(tmp_path, text, line, fragments):
    expect_error(write(tmp_path / "c.txt", text), line, *fragments,
                 options=ReadOptions(count_lines=True))


# --- compression ---------------------------------------------------------------------------------

@pytest.mark.parametrize("compression", COMPRESSIONS)
@pytest.mark.parametrize("name,text", [
    ("g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n3 1\n"),
    ("g.el", "0 1\n2 0\n"), ("g.edgelist", "# c\n0 1\n2 0\n"), ("g.csv", "a,b\n0,1\n2,0\n"),
    ("g.tsv", "0\t1\n2\t0\n"), ("g.gr", "p sp 3 2\na 1 2 1\na 3 1 1\n"),
    ("g.graph", "3 2\n2 3\n1\n1\n"),
])
def test_every_text_format_reads_every_compression(tmp_path, compression, name, text):
    path = write(tmp_path / name, text, compression)
    assert path.name == name + compression
    expected = [0, 1, 1, 2] if name != "g.graph" else [0, 2, 3, 4]
    graph = csr_of(path)
    assert graph.indptr.tolist() == expected
    assert read(path).name == "g"


def test_compression_is_recognised_by_its_magic_not_the_suffix(tmp_path):
    path = tmp_path / "g.csv.gz"
    path.write_bytes(lzma.compress(b"0,1\n"))  # xz data behind a .gz suffix
    assert read(path).src.tolist() == [0]
    plain = tmp_path / "p.el.zst"
    plain.write_bytes(b"1 0\n")  # not compressed at all
    assert read(plain).src.tolist() == [1]


@pytest.mark.parametrize("compression,kind", [(".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz"),
                                              (".zst", "zstd")])
def test_concatenated_streams_and_trailing_garbage(tmp_path, compression, kind):
    compress = COMPRESS[compression]
    path = tmp_path / f"f.el{compression}"
    path.write_bytes(compress(b"0 1\n") + compress(b"1 2\n"))  # as `cat a.gz b.gz` makes
    assert read(path).src.tolist() == [0, 1]
    path.write_bytes(compress(b"0 1\n") + b"trailing garbage")  # never dropped silently
    expect_error(path, None, f"corrupt {kind} data")


@pytest.mark.parametrize("compression,kind", [(".gz", "gzip"), (".bz2", "bzip2"), (".xz", "xz"),
                                              (".zst", "zstd")])
@pytest.mark.parametrize("damage", ["truncate", "corrupt"])
def test_corrupt_compressed_data(tmp_path, compression, kind, damage):
    data = COMPRESS[compression](MTX_GENERAL.encode() * 20)
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data = data[:12] + bytes(b ^ 0x5A for b in data[12:])
    path = tmp_path / f"c.mtx{compression}"
    path.write_bytes(data)
    expect_error(path, None, f"corrupt {kind} data")


# --- read options --------------------------------------------------------------------------------

def test_read_options_record_their_choices():
    assert ReadOptions().choices() == {}
    options = ReadOptions(header=False, columns="node_1, node_2", count_lines=True)
    assert options.columns == ("node_1", "node_2")
    assert options.choices() == {"header": False, "columns": ["node_1", "node_2"], "count_lines": True}
    assert [options.flag(name) for name in options.choices()] == ["--no-header", "--columns", "--count-lines"]
    assert ReadOptions(columns=(2, 0, 1)).columns == ("2", "0", "1")


@pytest.mark.parametrize("kwargs,fragment", [
    (dict(columns=("a",)), "2 or 3"), (dict(columns=("a", "b", "c", "d")), "2 or 3"),
    (dict(columns=("a", "a")), "different columns"), (dict(columns=("a", "")), "2 or 3"),
    (dict(header="yes"), "header must be"), (dict(count_lines=1), "count_lines must be"),
])
def test_bad_read_options(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        ReadOptions(**kwargs)


@pytest.mark.parametrize("name,text,options,flag,owners", [
    ("g.mtx", MTX_GENERAL, ReadOptions(header=True), "--header", ".csv, .tsv"),
    ("g.mtx.gz", MTX_GENERAL, ReadOptions(header=False), "--no-header", ".csv, .tsv"),
    ("g.txt", "0 1\n", ReadOptions(columns=("0", "1")), "--columns", ".csv, .tsv"),
    ("g.csv", "0,1\n", ReadOptions(count_lines=True), "--count-lines", ".txt, .el, .edges, .edgelist"),
    ("g.gr", "p sp 2 1\na 1 2 1\n", ReadOptions(count_lines=True), "--count-lines", ".txt"),
])
def test_options_for_another_format_are_errors(tmp_path, name, text, options, flag, owners):
    path = tmp_path / name
    path.write_bytes(gzip.compress(text.encode()) if name.endswith(".gz") else text.encode())
    with pytest.raises(InputError) as info:
        read(path, options)
    assert not isinstance(info.value, GraphFormatError)
    assert str(info.value).startswith(f"{path}: {flag} applies only to {owners}")
    with pytest.raises(InputError, match=flag):
        load_graph(path, read_options=options)
    assert read(path, ReadOptions()).n > 0  # default options are fine anywhere


def test_read_options_for_what_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="--count-lines: read options apply to graph files"):
        load_graph("grid2d:side=3", read_options=ReadOptions(count_lines=True))
    graph = load_graph("grid2d:side=3", read_options=ReadOptions())
    with pytest.raises(InputError, match="--header"):
        load_graph(graph, read_options=ReadOptions(header=True))
    assert load_graph(graph, read_options=ReadOptions()) is graph


def test_load_graph_carries_csv_notes(tmp_path):
    graph = load_graph(write(tmp_path / "e.csv", "from,to\n0,1\n1,2\n"), undirected=True)
    assert graph.n == 3 and graph.m == 4
    assert graph.report.notes == ("header row 'from,to' detected", "columns from,to")
    assert load_graph(write(tmp_path / "m.mtx", MTX_GENERAL)).report.notes == ()


# --- the real graphs in the shared folder --------------------------------------------------------

SHARED_GRAPHS = SHARED


@needs_shared
@pytest.mark.parametrize("name,n,m,header", [
    ("musae_deezer_HU_edges.csv.gz", 47_538, 222_887, "node_1,node_2"),
    ("musae_twitch_DE_edges.csv.gz", 9_498, 153_138, "from,to"),
    ("gemsec_facebook_media_edges.csv.gz", 27_917, 206_259, "node_1,node_2"),
    ("musae_wikipedia_squirrel_edges.csv.gz", 5_201, 217_073, "id1,id2"),
])
def test_shared_csv_graphs(name, n, m, header):
    path = SHARED_GRAPHS / name
    edges = read(path)
    assert edges.n == n == int(max(edges.src.max(), edges.dst.max())) + 1
    assert edges.src.size == m and edges.name == name.removesuffix(".csv.gz")
    assert edges.notes[0] == f"header row {header!r} detected"
    graph = load_graph(path)
    assert (graph.n, graph.m) == (n, m)


@needs_shared
@pytest.mark.parametrize("name,n,m,counts", [
    ("snap_wiki-Vote.txt.gz", 8_298, 103_689, "7115 vertices, 103689 edges"),
    ("snap_email-Enron.txt.gz", 36_692, 367_662, "36692 vertices, 367662 edges"),
])
def test_shared_snap_graphs_with_count_lines(name, n, m, counts):
    path = SHARED_GRAPHS / name
    with pytest.raises(GraphFormatError, match="--count-lines") as info:
        load_graph(path)
    assert info.value.line == 1
    graph = load_graph(path, read_options=ReadOptions(count_lines=True))
    assert (graph.n, graph.m) == (n, m)
    assert graph.report.notes == (f"2 count lines: {counts}",)


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


CSV_HEADERS = [None, "node_1,node_2", "from,to", "id1,id2", "Source,Target", '"u","v"']


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=edge_lists, data=st.data())
def test_csv_round_trip(tmp_path, pairs, data):
    """Random edge lists written as CSV/TSV in random dress load back to the same CSR (and weights)."""
    n = max(max(p) for p in pairs) + 1
    suffix = data.draw(st.sampled_from([".csv", ".tsv"]))
    sep = "," if suffix == ".csv" else "\t"
    header = data.draw(st.sampled_from(CSV_HEADERS))
    weights = data.draw(st.one_of(st.none(), st.lists(
        st.floats(allow_nan=False, allow_infinity=False), min_size=len(pairs), max_size=len(pairs))))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    pad = data.draw(st.sampled_from(["", " "]))
    header_line = None if header is None else header.replace(",", sep) + (sep + "w" if weights else "")
    lines = [] if header is None else [header_line]
    lines += [f"{pad}{u}{pad}{sep}{v}{pad}" + (f"{sep}{w!r}" if weights else "")
              for (u, v), w in zip(pairs, weights or [None] * len(pairs))]
    if data.draw(st.booleans()):
        lines.insert(data.draw(st.integers(0, len(lines))), data.draw(st.sampled_from(["# c", "", "% x"])))
    text = newline.join(lines) + data.draw(st.sampled_from(["", newline]))
    path = write(tmp_path / f"g{suffix}", text, data.draw(st.sampled_from([False] + COMPRESSIONS)))
    src = np.array([u for u, _ in pairs])
    dst = np.array([v for _, v in pairs])
    expected = csr_from_edges(EdgeList(src, dst, n, weights=weights))
    edges = read(path)
    assert edges.n == n and edges.name == "g"
    graph = csr_from_edges(edges)
    assert_same_csr(graph, expected)
    assert (graph.weights is None) == (weights is None)
    if weights is not None:
        assert graph.weights.tolist() == expected.weights.tolist()
    assert edges.notes[0] == ("no header row" if header is None else f"header row {header_line!r} detected")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pairs=edge_lists, extra=st.integers(0, 5), both=st.booleans())
def test_snap_count_lines_round_trip(tmp_path, pairs, extra, both):
    n = max(max(p) for p in pairs) + 1 + extra
    counts = f"{n}\n{len(pairs)}\n" if both else f"{n}\n"
    path = write(tmp_path / "c.el", counts + text_el(pairs))
    edges = read(path, ReadOptions(count_lines=True))
    src = np.array([u for u, _ in pairs])
    dst = np.array([v for _, v in pairs])
    assert edges.n == n
    assert_same_csr(csr_from_edges(edges), csr_from_edges(EdgeList(src, dst, n)))


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


@pytest.mark.parametrize("name", ["e.mtx", "e.txt", "e.gr", "e.graph", "e.el.gz", "e.csv", "e.tsv.bz2",
                                  "e.edgelist.xz", "e.mtx.zst"])
def test_empty_file(tmp_path, name):
    path = tmp_path / name
    compress = COMPRESS.get(path.suffix)
    path.write_bytes(compress(b"") if compress else b"  \n")
    expect_error(path, None, "empty file")


def test_corrupt_gzip(tmp_path):
    path = tmp_path / "c.mtx.gz"
    path.write_bytes(gzip.compress(MTX_GENERAL.encode())[:30])
    expect_error(path, None, "corrupt gzip data")


@pytest.mark.parametrize("name", ["graph.json", "graph.gz", "graph.csv.gz.gz", ".csv", "graph.tar.xz"])
def test_unknown_suffix(tmp_path, name):
    path = write(tmp_path / name, "0,1\n")
    err = expect_error(path, None, "unknown graph file suffix", ".mtx", ".csv", ".graph", ".npz",
                       ".gz, .bz2, .xz, .zst")
    assert isinstance(err, InputError)


def test_compressed_npz_is_refused(tmp_path):
    path = tmp_path / "native.npz"
    write_npz(CSRGraph(np.array([0, 1]), np.array([0])), path)
    packed = write(tmp_path / "native.npz", path.read_bytes(), ".gz")
    expect_error(packed, None, "an .npz archive is read as it is", "decompress it first")


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

TEXT_SUFFIXES = [".mtx", ".txt", ".edgelist", ".csv", ".tsv", ".gr", ".graph"]
HEADERS = {
    ".mtx": ["%%MatrixMarket matrix coordinate pattern general\n3 3 2\n",
             "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n",
             "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n",
             "%%MatrixMarket matrix coordinate complex general\n2 2 1\n"],
    ".txt": ["", "# comment\n", "5\n3\n", "4\n"],
    ".edgelist": ["", "% comment\n", "7 \r\n2\r\n"],
    ".csv": ["", "node_1,node_2\n", "from,to,w\n", "# c\nid1,id2\n", '"a","b"\n', "a,b,c,d\n"],
    ".tsv": ["", "src\tdst\n", "a\tb\tw\n"],
    ".gr": ["p sp 3 2\n", "c x\np sp 4 3\n"],
    ".graph": ["3 2\n", "3 2 1\n", "3 2 11 2\n", "4 3 100\n"],
}
SEPARATORS = {".csv": ",", ".tsv": "\t"}
TOKENS = ["0", "1", "2", "3", "4", "-1", "+2", "1.5", "1e3", "nan", "x", "a", "c", "p", "sp", "%", "#",
          "%%MatrixMarket", "2147483647", "99999999999999999999", "\xe9", "\t", "",
          "inf", "1e400", "0.12345678901234567", "9223372036854775808",
          ",", '"', '"1"', "1.0", "1.", " 7 ", "\r", "\x0b", "+1e 1", "-0", "NA", "node_1"]
OPTIONS = {  # read options each format takes, for the fuzz
    ".txt": [ReadOptions(count_lines=True)], ".edgelist": [ReadOptions(count_lines=True)],
    ".csv": [ReadOptions(header=True), ReadOptions(header=False), ReadOptions(columns=("0", "1")),
             ReadOptions(columns=("1", "0", "2")), ReadOptions(columns=("a", "b"))],
    ".tsv": [ReadOptions(header=False), ReadOptions(columns=("0", "2"))],
}


def check_reader_outcome(path, options=None):
    """`read` returns a valid EdgeList or raises GraphFormatError, nothing else; a CSV file gives
    the same result (edges or the same error) on the fast path as on the slow path."""
    try:
        result = read(path, options)
    except GraphFormatError as err:
        result = err
    if reader_for(path) is csv_reader:
        with mock.patch.object(csv_reader, "_fast", return_value=None):
            try:
                slow = read(path, options)
            except GraphFormatError as err:
                slow = err
        if isinstance(result, GraphFormatError) or isinstance(slow, GraphFormatError):
            assert str(result) == str(slow)
        else:
            assert result.src.tolist() == slow.src.tolist() and result.dst.tolist() == slow.dst.tolist()
            assert result.n == slow.n and result.notes == slow.notes
            assert (result.weights is None and slow.weights is None) or (
                result.weights.tolist() == slow.weights.tolist())
    if isinstance(result, GraphFormatError):
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
    if result.n <= 10**6:  # (an id near 2**31 is valid, but its CSR is 16 GiB)
        csr_from_edges(result)  # the builder accepts whatever a reader returns


@FUZZ
@given(text=st.text(max_size=200), suffix=st.sampled_from(TEXT_SUFFIXES))
def test_fuzz_arbitrary_text(tmp_path, text, suffix):
    check_reader_outcome(write(tmp_path / f"f{suffix}", text))


@FUZZ
@given(data=st.binary(max_size=100), suffix=st.sampled_from(TEXT_SUFFIXES),
       compression=st.sampled_from([False] + COMPRESSIONS))
def test_fuzz_arbitrary_bytes(tmp_path, data, suffix, compression):
    check_reader_outcome(write(tmp_path / f"f{suffix}", data, compression))


@FUZZ
@given(suffix=st.sampled_from(TEXT_SUFFIXES), data=st.data())
def test_fuzz_token_lines(tmp_path, suffix, data):
    header = data.draw(st.sampled_from(HEADERS[suffix] + [""]))
    lines = data.draw(st.lists(st.lists(st.sampled_from(TOKENS), max_size=6), max_size=8))
    sep = data.draw(st.sampled_from([SEPARATORS.get(suffix, " "), " "]))
    newline = data.draw(st.sampled_from(["\n", "\r\n"]))
    body = "".join(sep.join(tokens) + newline for tokens in lines)
    compression = data.draw(st.sampled_from([False] + COMPRESSIONS))
    options = data.draw(st.sampled_from([None] + OPTIONS.get(suffix, [])))
    check_reader_outcome(write(tmp_path / f"f{suffix}", header + body, compression), options)


@FUZZ
@given(data=st.data())
def test_fuzz_csv_fields(tmp_path, data):
    """Edge-list-shaped CSV files with odd fields: the fast path agrees with the slow one."""
    field = st.one_of(st.integers(-3, 40).map(str), st.sampled_from(TOKENS + ["2147483646"]),
                      st.text("0123456789+-.eE \t", max_size=6))
    ncols = data.draw(st.integers(2, 4))
    rows = data.draw(st.lists(st.lists(field, min_size=ncols, max_size=ncols), min_size=1, max_size=6))
    if data.draw(st.booleans()):  # a row of another length
        rows.insert(data.draw(st.integers(0, len(rows))), data.draw(st.lists(field, max_size=5)))
    text = "".join(",".join(row) + "\n" for row in rows)
    options = ReadOptions(columns=("0", "1")) if ncols == 4 else None
    check_reader_outcome(write(tmp_path / "f.csv", text), options)
