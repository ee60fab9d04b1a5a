"""The CSR builder: file order, symmetrising, counting and dropping self loops and duplicates, and
edge weights carried through all of it."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simdmodel.errors import InputError
from simdmodel.graph import CSRGraph, EdgeList, count_duplicates, count_self_loops, csr_from_edges

import naive


def build(pairs, n, **options):
    src, dst = (np.array(x, dtype=np.int64) for x in zip(*pairs)) if pairs else (np.array([], int),) * 2
    return csr_from_edges(EdgeList(src, dst, n), **options)


def rows(graph):
    return [graph.neighbors(v).tolist() for v in range(graph.n)]


def test_rows_keep_file_order():
    graph = build([(0, 2), (1, 0), (0, 1), (0, 2), (2, 2)], 3)
    assert rows(graph) == [[2, 1, 2], [0], [2]]
    assert graph.indptr.dtype == np.int64 and graph.indices.dtype == np.int32
    assert (graph.report.self_loops, graph.report.duplicates, graph.m) == (1, 1, 5)


def test_undirected_stores_both_directions_and_a_self_loop_once():
    graph = build([(0, 1), (2, 2), (1, 2)], 3, undirected=True)
    assert rows(graph) == [[1], [0, 2], [2, 1]]
    assert graph.m == 5 and graph.report.symmetrized


def test_drop_options():
    pairs = [(0, 1), (0, 1), (1, 1), (1, 0), (0, 1)]
    graph = build(pairs, 2, drop_duplicates=True, drop_self_loops=True)
    assert rows(graph) == [[1], [0]]
    assert (graph.report.self_loops, graph.report.duplicates) == (1, 2)
    assert count_self_loops(graph) == count_duplicates(graph) == 0


def test_ids_out_of_range_are_rejected():
    with pytest.raises(InputError, match="vertex id 5 outside 0..2"):
        build([(0, 5)], 3)
    with pytest.raises(InputError, match="vertex id -1"):
        build([(-1, 0)], 3)


def test_csr_validation():
    with pytest.raises(InputError):
        CSRGraph(np.array([0, 2, 1]), np.array([0, 1]))
    with pytest.raises(InputError):
        CSRGraph(np.array([0, 1]), np.array([3]))


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=60), st.booleans())
def test_counts_match_a_plain_python_count(pairs, undirected):
    graph = build(pairs, 10, undirected=undirected)
    expected_rows = [[] for _ in range(10)]
    for u, v in pairs:
        expected_rows[u].append(v)
        if undirected and u != v:
            expected_rows[v].append(u)
    assert rows(graph) == expected_rows
    assert count_self_loops(graph) == sum(r.count(v) for v, r in enumerate(expected_rows))
    assert count_duplicates(graph) == sum(len(r) - len(set(r)) for r in expected_rows)
    deduped = build(pairs, 10, undirected=undirected, drop_duplicates=True)
    assert rows(deduped) == [list(dict.fromkeys(r)) for r in expected_rows]


# --- edge weights ---------------------------------------------------------------------------------

def build_weighted(pairs, weights, n, undirected=False, **options):
    src, dst = (np.array(x, dtype=np.int64) for x in zip(*pairs))
    return csr_from_edges(EdgeList(src, dst, n, undirected=undirected, weights=np.array(weights)), **options)


def weighted(graph):
    return [list(zip(graph.neighbors(v).tolist(), graph.neighbor_weights(v).tolist())) for v in range(graph.n)]


def test_weights_follow_symmetrising_and_both_drops():
    # edges (u, v, w): 0-1 w5, 1-1 w7 (loop), 1-2 w9, 0-1 w11 (duplicate of the first), 2-1 w13
    pairs, weights = [(0, 1), (1, 1), (1, 2), (0, 1), (2, 1)], [5, 7, 9, 11, 13]
    graph = build_weighted(pairs, weights, 3, undirected=True)
    # row 1 in input order: 0 (from 0-1), 1 (the loop, once), 2 (1-2), 0 (second 0-1), 2 (from 2-1)
    assert weighted(graph) == [[(1, 5), (1, 11)], [(0, 5), (1, 7), (2, 9), (0, 11), (2, 13)],
                               [(1, 9), (1, 13)]]
    assert graph.weights.dtype == np.int64 and graph.weighted
    both = build_weighted(pairs, weights, 3, undirected=True, drop_self_loops=True, drop_duplicates=True)
    assert weighted(both) == [[(1, 5)], [(0, 5), (2, 9)], [(1, 9)]]  # first copies keep their weights
    assert (both.report.self_loops, both.report.duplicates) == (1, 4)


def test_unweighted_graphs_have_no_weight_array():
    graph = build([(0, 1), (1, 0)], 2, undirected=True, drop_duplicates=True)
    assert graph.weights is None and not graph.weighted
    assert graph.nbytes == graph.indptr.nbytes + graph.indices.nbytes
    with pytest.raises(InputError, match="no edge weights"):
        graph.neighbor_weights(0)


def test_weight_dtypes_and_repr():
    ints = build_weighted([(0, 1)], np.array([3], dtype=np.int32), 2)
    reals = build_weighted([(0, 1)], np.array([0.5], dtype=np.float32), 2)
    assert ints.weights.dtype == np.int64 and reals.weights.dtype == np.float64
    assert reals.nbytes == reals.indptr.nbytes + reals.indices.nbytes + 8
    assert repr(reals) == "CSRGraph(unnamed, n=2, m=1, weights float64)"


@pytest.mark.parametrize("weights,match", [
    ([1.0, float("nan")], r"weight nan of edge 1 \(1 -> 0\) is not finite"),
    ([float("inf"), 1.0], r"weight inf of edge 0 \(0 -> 1\)"),
    ([1.0], r"1-D array of 2 values"),
    ([True, False], "integers or real numbers"),
    (np.array([1, 2**64 - 1], dtype=np.uint64), "do not fit int64"),
])
def test_bad_edge_list_weights(weights, match):
    with pytest.raises(InputError, match=match):
        csr_from_edges(EdgeList(np.array([0, 1]), np.array([1, 0]), 2, weights=np.array(weights)))


def test_csr_weight_validation():
    indptr, indices = np.array([0, 1, 2]), np.array([1, 0])
    with pytest.raises(InputError, match=r"finite, got nan on edge 1 \(1 -> 0\)"):
        CSRGraph(indptr, indices, weights=np.array([1.0, np.nan]))
    with pytest.raises(InputError, match="2 values"):
        CSRGraph(indptr, indices, weights=np.array([1.0, 2.0, 3.0]))
    assert CSRGraph(indptr, indices, weights=[4, 5]).weights.tolist() == [4, 5]


def test_load_graph_options_keep_weights_of_a_csr():
    from simdmodel.graph import edges_of
    from simdmodel.load import load_graph

    graph = build_weighted([(0, 1), (0, 1), (1, 1)], [2.5, 3.5, 4.5], 2)
    assert load_graph(graph) is graph
    assert weighted(load_graph(graph, drop_duplicates=True, drop_self_loops=True)) == [[(1, 2.5)], []]
    # symmetrising a stored graph: the stored 0 -> 1 entries also give 1 -> 0 with their weights
    assert weighted(load_graph(graph, undirected=True)) == [[(1, 2.5), (1, 3.5)], [(0, 2.5), (0, 3.5), (1, 4.5)]]
    edges = edges_of(graph)
    assert edges.weights.tolist() == [2.5, 3.5, 4.5] and edges.weights is not graph.weights


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7), st.integers(-50, 50)), min_size=1, max_size=50),
       st.booleans(), st.booleans(), st.booleans())
def test_weights_match_the_naive_builder(edges, undirected, drop_loops, drop_dups):
    pairs = [(u, v) for u, v, _ in edges]
    weights = [w for _, _, w in edges]
    graph = build_weighted(pairs, weights, 8, undirected=undirected, drop_self_loops=drop_loops,
                           drop_duplicates=drop_dups)
    assert weighted(graph) == naive.weighted_rows(pairs, weights, 8, undirected, drop_loops, drop_dups)
    unweighted = build(pairs, 8, undirected=undirected, drop_self_loops=drop_loops, drop_duplicates=drop_dups)
    assert graph.indptr.tolist() == unweighted.indptr.tolist()
    assert graph.indices.tolist() == unweighted.indices.tolist()
