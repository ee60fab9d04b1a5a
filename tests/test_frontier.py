"""BFS levels and frontier orders against scipy.sparse.csgraph and a textbook BFS."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st
from scipy.sparse.csgraph import connected_components, shortest_path

import naive
from simdmodel.components import largest_component
from simdmodel.errors import InputError
from simdmodel.frontier import bfs, pick_sources
from simdmodel.graph import EdgeList, csr_from_edges


def random_graph(n, m, seed, undirected=False):
    rng = np.random.default_rng(seed)
    return csr_from_edges(EdgeList(rng.integers(0, n, m), rng.integers(0, n, m), n, undirected=undirected))


def scipy_levels(graph, source):
    matrix = sp.coo_matrix((np.ones(graph.m), (np.repeat(np.arange(graph.n), graph.degrees()), graph.indices)),
                           shape=(graph.n, graph.n)).tocsr()
    dist = shortest_path(matrix, unweighted=True, indices=source, directed=True)
    return np.where(np.isinf(dist), -1, dist).astype(np.int64)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), density=st.floats(0.5, 4.0), seed=st.integers(0, 10_000),
       undirected=st.booleans())
def test_levels_match_scipy_and_orders_are_exact(n, density, seed, undirected):
    graph = random_graph(n, int(n * density), seed, undirected)
    candidates = np.flatnonzero(graph.degrees() > 0)
    if candidates.size == 0:
        return
    source = int(candidates[seed % candidates.size])
    expected = scipy_levels(graph, source)
    for order in ("sorted", "discovery"):
        front = bfs(graph, source, order)
        assert np.array_equal(front.levels, expected)
        reference = naive.frontiers(graph.indptr, graph.indices, source, order)
        assert front.depth == len(reference)
        for level, vertices in enumerate(reference):
            assert front.frontier(level).tolist() == vertices
        assert front.reached == int((expected >= 0).sum())


def test_hand_built_frontiers_and_sizes():
    # 0 -> 3, 0 -> 1; 3 -> 2; 1 -> 2; 2 -> 4.  Levels: {0}, {1, 3}, {2}, {4}.
    graph = csr_from_edges(EdgeList(np.array([0, 0, 3, 1, 2]), np.array([3, 1, 2, 2, 4]), 5))
    sorted_front = bfs(graph, 0, "sorted")
    assert [sorted_front.frontier(k).tolist() for k in range(4)] == [[0], [1, 3], [2], [4]]
    assert bfs(graph, 0, "discovery").frontier(1).tolist() == [3, 1]  # file order of 0's edges
    assert sorted_front.vertex_frontier_sizes().tolist() == [1, 2, 1, 1]
    assert sorted_front.edge_frontier_sizes(graph).tolist() == [2, 2, 1, 0]


def test_bad_sources_are_rejected():
    graph = csr_from_edges(EdgeList(np.array([0]), np.array([1]), 3))
    with pytest.raises(InputError, match="outside 0..2"):
        bfs(graph, 3)
    with pytest.raises(InputError, match="isolated"):
        bfs(graph, 2)
    with pytest.raises(InputError, match="frontier order"):
        bfs(graph, 0, "random")


def test_pick_sources_is_seeded_and_skips_isolated_vertices():
    graph = random_graph(500, 1500, 3, undirected=True)
    a = pick_sources(graph, 10, seed=7)
    assert np.array_equal(a, pick_sources(graph, 10, seed=7))
    assert not np.array_equal(a, pick_sources(graph, 10, seed=8))
    assert len(set(a.tolist())) == 10 and (graph.degrees()[a] > 0).all()
    empty = csr_from_edges(EdgeList(np.array([], int), np.array([], int), 4))
    with pytest.raises(InputError, match="no edges"):
        pick_sources(empty, 1, 0)


def scipy_components(graph, connection):
    matrix = sp.coo_matrix((np.ones(graph.m), (np.repeat(np.arange(graph.n), graph.degrees()), graph.indices)),
                           shape=(graph.n, graph.n)).tocsr()
    return connected_components(matrix, directed=True, connection=connection)[1]


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), m=st.integers(1, 150), seed=st.integers(0, 2**16), undirected=st.booleans())
def test_sources_lie_in_the_largest_component_and_reach_all_of_it(n, m, seed, undirected):
    graph = random_graph(n, m, seed, undirected)
    labels = scipy_components(graph, "strong")
    sizes = np.bincount(labels)
    component = largest_component(graph)
    assert component.size == sizes.max() and component.mask.sum() == component.size
    assert len(set(labels[component.mask])) == 1
    sources = pick_sources(graph, 5, seed)
    if component.size > 1:
        assert component.mask[sources].all()
        assert len(sources) == min(5, int((component.mask & (graph.degrees() > 0)).sum()))
        for s in sources:  # every source reaches the whole component
            assert component.mask[bfs(graph, int(s)).vertices].sum() == component.size
    assert np.array_equal(sources[:2], pick_sources(graph, 2, seed))


def test_a_directed_graph_draws_sources_from_its_largest_strong_component():
    # 0 -> 1 -> 2 -> 0 is the cycle; 3 -> 0 and 2 -> 4 hang off it: 3 reaches everything, 4 nothing
    graph = csr_from_edges(EdgeList(np.array([0, 1, 2, 3, 2]), np.array([1, 2, 0, 0, 4]), 5))
    component = largest_component(graph)
    assert component.kind == "strongly connected" and component.mask.tolist() == [1, 1, 1, 0, 0]
    assert component.describe(5) == "largest strongly connected component: 3 of 5 vertices (60.0%)"
    assert sorted(pick_sources(graph, 10, 1).tolist()) == [0, 1, 2]
    dag = csr_from_edges(EdgeList(np.array([0, 1, 3]), np.array([1, 2, 2]), 4))
    assert sorted(pick_sources(dag, 10, 1).tolist()) == [0, 1, 3]  # no cycle: every vertex with edges
    undirected = csr_from_edges(EdgeList(np.array([0, 1, 3]), np.array([1, 2, 4]), 6, undirected=True))
    component = largest_component(undirected)
    assert component.kind == "connected" and component.mask.tolist() == [1, 1, 1, 0, 0, 0]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 200), density=st.floats(1.0, 12.0), seed=st.integers(0, 10_000))
def test_levels_bottom_up_through_large_frontiers_equal_a_serial_bfs(n, density, seed):
    # a symmetric graph lets bfs_levels expand a large frontier bottom-up (each unreached vertex looks for a
    # parent in it); the levels, and the vertices per level, must be the serial FIFO BFS's all the same
    from simdmodel.frontier import bfs_levels, bfs_queue

    graph = random_graph(n, int(n * density), seed, undirected=True)
    candidates = np.flatnonzero(graph.degrees() > 0)
    if candidates.size == 0:
        return
    source = int(candidates[seed % candidates.size])
    expected, _, _ = bfs_queue(graph.indptr, graph.indices, source)
    for symmetric in (True, False):
        levels, level_ptr = bfs_levels(graph.indptr, graph.indices, source, symmetric)
        assert np.array_equal(levels, expected)
        assert np.diff(level_ptr).tolist() == np.bincount(expected[expected >= 0]).tolist()


def test_a_path_deeper_than_the_first_level_count_capacity_keeps_every_level():
    from simdmodel.frontier import bfs_levels

    n = 300
    path = csr_from_edges(EdgeList(np.arange(n - 1), np.arange(1, n), n, undirected=True))
    levels, level_ptr = bfs_levels(path.indptr, path.indices, 0, True)
    assert levels.tolist() == list(range(n)) and level_ptr.tolist() == list(range(n + 1))
    assert bfs(path, 150).depth == 151
