"""Algorithms are registered objects: BFS's rounds, reference and per-edge operator."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

import naive
import opmachine as om
from opmachine.bfs_machine import SERVERS
from opmachine.layout import layout_for
from simdmodel.algorithms import ALGORITHMS, BFS, get_algorithm
from simdmodel.errors import InputError
from test_opm_jobs import figure2_graph, graph_of, graphs


def test_bfs_is_registered_and_unknown_names_are_refused():
    assert ALGORITHMS["bfs"] is BFS and get_algorithm("bfs") is BFS
    with pytest.raises(InputError, match="unknown algorithm 'sssp'"):
        get_algorithm("sssp")


@settings(max_examples=40, deadline=None)
@given(graphs)
def test_bfs_reference_and_rounds_equal_the_textbook_bfs(spec):
    graph = graph_of(*spec)
    source = int(np.flatnonzero(graph.degrees() > 0)[0])
    levels, _ = naive.bfs_levels(graph.indptr, graph.indices, source)
    rounds = BFS.rounds(graph, source, "sorted")
    assert BFS.reference(rounds).tolist() == levels
    assert [rounds.frontier(r).tolist() for r in range(rounds.depth)] == naive.frontiers(
        graph.indptr, graph.indices, source)


def test_bfs_edge_operator_is_what_the_job_generators_issue_per_edge_step():
    # Seed 003 Fig. 2 expanded by sm-32 from B (degree 3) at level 1: after ANI and the two ERL
    # jobs every warp step is the operator's loads in order, then its store when a lane labels.
    graph = figure2_graph()
    frontiers = BFS.rounds(graph, 0, "sorted")
    stamp = np.full(graph.n, -1, dtype=np.int32)
    trace = om.kernels.expansion_jobs(graph, frontiers.levels, stamp, 1, np.array([1], dtype=np.int32),
                                      om.parse_kernel("sm-32").expansion, layout_for(graph.n, graph.m), 1)
    names = [SERVERS[s] for s in trace.server]
    assert names[:3] == ["ANI", "ERL", "ERL"]
    operator = BFS.edge_operator
    assert names[3:] == [*operator.loads, operator.store]  # B -> E, C, D in one step; C and D are new
