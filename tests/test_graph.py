"""The CSR builder: file order, symmetrising, counting and dropping self loops and duplicates."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from simdmodel.errors import InputError
from simdmodel.graph import CSRGraph, EdgeList, count_duplicates, count_self_loops, csr_from_edges


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
