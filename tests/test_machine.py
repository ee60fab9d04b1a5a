"""Operator machines and operational analysis (seed 003 §2-3) against hand computation and laws."""
import doctest
import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import opmachine.machine as machine_module
from opmachine.bfs_machine import (
    COLUMNS,
    SERVERS,
    bfs_completions,
    bfs_operator_machine,
    completions_of,
)
from opmachine.machine import (
    OperationalResult,
    OperatorMachine,
    Server,
    littles_law_load,
    response_time_ns,
)
from simdmodel.errors import InputError
from simdmodel.frontier import bfs
from simdmodel.graph import EdgeList, csr_from_edges

A, B, C, D, E, F = range(6)


def figure2_graph():
    """Seed 003 Figure 2: A->B, A->E, B->E, B->C, B->D, E->F (B's edge to E first)."""
    src = np.array([A, A, B, B, B, E])
    dst = np.array([B, E, E, C, D, F])
    return csr_from_edges(EdgeList(src, dst, 6, undirected=False, name="fig2"), undirected=False)


def naive_topology_bfs(indptr, indices, source):
    """Listing 1 of seed 003 as written: every round walks all nodes 0..n-1 in order.

    Returns one (c_erl, c_edl, c_op) per round, the last round being the one that labels nothing.
    """
    n = len(indptr) - 1
    level = [None] * n  # None is INF
    level[source] = 0
    rounds = []
    lev = 1
    while True:
        erl = edl = op = 0
        for node in range(n):
            if level[node] != lev - 1:
                continue
            erl += 1
            for e in range(indptr[node], indptr[node + 1]):
                edl += 1
                dst = int(indices[e])
                if level[dst] is None:
                    level[dst] = lev
                    op += 1
        rounds.append((erl, edl, op))
        if op == 0:
            return rounds
        lev += 1


# --- the worked example of seed 003 §3.2 -------------------------------------------------------

def test_figure2_round_level2_completions():
    graph = figure2_graph()
    table = bfs_completions(graph, bfs(graph, A))
    row = table[table["round"] == 2].iloc[0]
    # N = 6 nodes, every node is a job and visits ANI and NF1 once; only B and E have level 1,
    # so C_ERL = 2; B has 3 edges and E one, so C_EDL = C_NF2 = 4; B's edge to E finds E
    # labelled, B->C, B->D and E->F label, so C_OP = 3.
    assert row["level"] == 1
    assert (row["jobs"], row["c_ani"], row["c_nf1"]) == (6, 6, 6)
    assert (row["c_erl"], row["c_edl"], row["c_nf2"], row["c_op"]) == (2, 4, 4, 3)


def test_figure2_all_rounds():
    graph = figure2_graph()
    table = bfs_completions(graph, bfs(graph, A))
    assert list(table.columns) == list(COLUMNS)
    # levels: A 0; B, E 1; C, D, F 2 -> depth 3, three rounds.
    # round 1 expands {A}: 1 node, 2 edges, labels B and E.
    # round 2 expands {B, E}: 2 nodes, 4 edges, labels C, D, F.
    # round 3 expands {C, D, F}: 3 nodes, no edges, labels nothing (the driver's last round).
    assert table["round"].tolist() == [1, 2, 3]
    assert table["level"].tolist() == [0, 1, 2]
    assert table["c_erl"].tolist() == [1, 2, 3]
    assert table["c_edl"].tolist() == [2, 4, 0]
    assert table["c_op"].tolist() == [2, 3, 0]
    assert (table["jobs"] == 6).all() and (table["c_ani"] == 6).all()


def test_figure2_operational_analysis_unit_service():
    graph = figure2_graph()
    table = bfs_completions(graph, bfs(graph, A))
    row = table[table["round"] == 2].iloc[0]
    result = bfs_operator_machine().analyze(
        row["jobs"], completions_of(row), {name: 1.0 for name in SERVERS})
    # V_i = C_i / 6: ANI 1, NF1 1, ERL 2/6, EDL 4/6, NF2 4/6, OP 3/6.
    assert result.visits == {"ANI": 1.0, "NF1": 1.0, "ERL": 2 / 6, "EDL": 4 / 6,
                             "NF2": 4 / 6, "OP": 0.5}
    assert result.visits["ERL"] == pytest.approx(0.33, abs=0.005)
    # All S_i = 1 cycle: ANI and NF1 tie at V*S = 1; the first in machine order wins.
    assert result.bottleneck == "ANI"
    assert result.throughput_per_ns == 1.0  # X0 = 1 / (V_B S_B) = 1 job per cycle
    assert result.time_ns == 6.0  # N * V_B S_B = 6 * 1
    assert result.utilization["NF1"] == 1.0
    assert result.utilization["OP"] == 0.5
    frame = result.table()
    assert frame["server"].tolist() == list(SERVERS)
    assert frame["bottleneck"].tolist() == [True, False, False, False, False, False]
    assert frame["demand_ns"].tolist() == [1.0, 1.0, 2 / 6, 4 / 6, 4 / 6, 0.5]


def test_figure2_what_if_slow_edge_lookup():
    graph = figure2_graph()
    row = bfs_completions(graph, bfs(graph, A)).iloc[1]
    result = bfs_operator_machine().analyze(6, completions_of(row), dict.fromkeys(SERVERS, 1.0))
    slow = result.what_if(EDL=2.0)
    # D_EDL = 4/6 * 2 = 4/3 > 1: EDL becomes the bottleneck, X0 = 3/4, time = 6 * 4/3 = 8.
    assert slow.bottleneck == "EDL"
    assert slow.throughput_per_ns == pytest.approx(0.75)
    assert slow.time_ns == pytest.approx(8.0)
    assert slow.utilization["ANI"] == pytest.approx(0.75)  # U = X0 * D = 3/4 * 1
    assert slow.completions == result.completions and slow.jobs == result.jobs
    assert result.service_ns["EDL"] == 1.0  # the original is untouched


def test_machine_docstring_example():
    failures, tried = doctest.testmod(machine_module, verbose=False)
    assert tried > 0 and failures == 0


def test_bfs_machine_structure():
    om = bfs_operator_machine()
    assert om.server_names() == SERVERS == ("ANI", "NF1", "ERL", "EDL", "NF2", "OP")
    chain = list(itertools.pairwise(SERVERS))
    assert all(route in om.routes for route in chain)
    assert ("in", "ANI") in om.routes and ("NF1", "out") in om.routes and ("NF2", "out") in om.routes
    assert all(server.description for server in om.servers)


# --- bfs_completions against Listing 1 run literally -------------------------------------------

@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 30), density=st.floats(0.0, 4.0), seed=st.integers(0, 10_000),
       undirected=st.booleans(), pick=st.lists(st.integers(0, 10_000), min_size=1, max_size=3))
def test_bfs_completions_match_naive(n, density, seed, undirected, pick):
    rng = np.random.default_rng(seed)
    m = int(n * density)
    graph = csr_from_edges(EdgeList(rng.integers(0, n, m), rng.integers(0, n, m), n),
                           undirected=undirected)
    candidates = np.flatnonzero(graph.degrees() > 0)
    assume(candidates.size > 0)
    degrees = graph.degrees()
    for p in pick:
        source = int(candidates[p % candidates.size])
        front = bfs(graph, source)
        table = bfs_completions(graph, front)
        expected = naive_topology_bfs(graph.indptr, graph.indices, source)
        assert len(table) == len(expected) == front.depth
        assert list(zip(table["c_erl"], table["c_edl"], table["c_op"])) == expected
        assert (table["jobs"] == n).all() and (table["c_ani"] == n).all()
        assert (table["c_nf1"] == n).all() and (table["c_nf2"] == table["c_edl"]).all()
        # Invariants: every reached vertex is expanded once; all but the source are labelled
        # once; ERL/EDL of a round are the frontier's size and edge count; OP fills the next one.
        assert table["c_erl"].sum() == front.reached
        assert table["c_op"].sum() == front.reached - 1
        for r, row in table.iterrows():
            level = int(row["level"])
            frontier = front.frontier(level)
            assert row["c_erl"] == frontier.size
            assert row["c_edl"] == degrees[frontier].sum()
            nxt = front.frontier(level + 1).size if level + 1 < front.depth else 0
            assert row["c_op"] == nxt
        assert table["c_op"].iloc[-1] == 0
        # The frontiers' walk order does not change the counts.
        assert table.equals(bfs_completions(graph, bfs(graph, source, "discovery")))


def test_bfs_completions_rejects_foreign_frontiers():
    graph = figure2_graph()
    other = csr_from_edges(EdgeList(np.array([0, 1, 2, 3, 4]), np.array([1, 2, 3, 4, 5]), 6))
    with pytest.raises(InputError, match="do not come from a BFS of this graph"):
        bfs_completions(graph, bfs(other, 0))
    seven = csr_from_edges(EdgeList(np.array([0]), np.array([6]), 7))
    with pytest.raises(InputError, match="7 vertices but the graph has 6"):
        bfs_completions(graph, bfs(seven, 0))
    with pytest.raises(InputError, match="CSRGraph"):
        bfs_completions("fig2", bfs(graph, 0))
    with pytest.raises(InputError, match="Frontiers"):
        bfs_completions(graph, [0, 1])


# --- operational laws on random inputs ---------------------------------------------------------

@st.composite
def runs(draw):
    k = draw(st.integers(1, 8))
    names = tuple(f"S{i}" for i in range(k))
    jobs = draw(st.integers(1, 10**6) | st.floats(0.5, 1e6))
    counts = draw(st.lists(st.integers(0, 10**6), min_size=k, max_size=k))
    assume(any(counts))
    times = draw(st.lists(st.floats(1e-3, 1e3), min_size=k, max_size=k))
    return names, jobs, dict(zip(names, counts)), dict(zip(names, times))


@settings(max_examples=200, deadline=None)
@given(run=runs(), factor=st.floats(0.01, 1.0))
def test_operational_laws(run, factor):
    names, jobs, completions, service = run
    om = OperatorMachine("random", tuple(Server(s) for s in names))
    result = om.analyze(jobs, completions, service)
    demands = [completions[s] / jobs * service[s] for s in names]
    top = max(demands)
    assert result.bottleneck == names[demands.index(top)]  # first of the tied
    assert result.utilization[result.bottleneck] == 1.0
    assert all(0.0 <= u <= 1.0 for u in result.utilization.values())
    assert result.time_ns == jobs * top
    assert result.throughput_per_ns == 1.0 / top
    for s in names:  # utilization law U_i = X0 * D_i
        assert result.utilization[s] == pytest.approx(result.throughput_per_ns * result.demand_ns[s])
    assert littles_law_load(result.throughput_per_ns, result.time_ns) == pytest.approx(jobs)
    assert result.what_if() == result
    assert result.what_if(**service) == result
    faster = result.what_if(**{result.bottleneck: service[result.bottleneck] * factor})
    assert faster.time_ns <= result.time_ns
    assert faster.throughput_per_ns >= result.throughput_per_ns
    assert len(result.table()) == len(names)


def test_littles_law():
    assert littles_law_load(0.5, 8.0) == 4.0  # n = X R = 0.5 * 8
    assert response_time_ns(4.0, 0.5) == 8.0  # R = n / X = 4 / 0.5
    with pytest.raises(InputError):
        response_time_ns(4.0, 0.0)
    with pytest.raises(InputError):
        littles_law_load(-1.0, 2.0)


# --- user mistakes -----------------------------------------------------------------------------

def three():
    return OperatorMachine("three", (Server("ANI"), Server("EDL"), Server("OP")),
                           (("in", "ANI"), ("ANI", "EDL"), ("EDL", "OP"), ("OP", "out")))


@pytest.mark.parametrize("servers, routes, message", [
    ((), (), "at least one server"),
    ((Server("A"), Server("A")), (), "appears twice"),
    ((Server("A"), Server("out")), (), "reserved"),
    ((Server(""),), (), "non-empty"),
    (("A",), (), "Server objects"),
    ((Server("A"),), (("A", "Z"),), "unknown server 'Z'"),
    ((Server("A"),), (("A",),), r"\(from, to\) pair"),
])
def test_machine_validation(servers, routes, message):
    with pytest.raises(InputError, match=message):
        OperatorMachine("bad", servers, routes)


@pytest.mark.parametrize("jobs, completions, service, message", [
    (0, {"ANI": 1}, {"ANI": 1.0}, "jobs must be > 0"),
    (-3, {"ANI": 1}, {"ANI": 1.0}, "jobs"),
    (float("nan"), {"ANI": 1}, {"ANI": 1.0}, "jobs"),
    (4, {"XYZ": 1}, {"ANI": 1.0}, "completions given for unknown server 'XYZ'"),
    (4, {"ANI": 1}, {"XYZ": 1.0}, "service time given for unknown server 'XYZ'"),
    (4, {"ANI": 4, "EDL": 2}, {"ANI": 1.0}, "EDL has 2 completions but no service time"),
    (4, {"ANI": -1}, {"ANI": 1.0}, "completions of ANI"),
    (4, {"ANI": 4}, {"ANI": -1.0}, "service time of ANI"),
    (4, {"ANI": 4}, {"ANI": math.inf}, "service time of ANI"),
    (4, {"ANI": "many"}, {"ANI": 1.0}, "must be a number"),
    (4, {"ANI": 4}, {"ANI": 0.0}, "unbounded"),
    (4, {}, {}, "unbounded"),
    (4, [("ANI", 4)], {"ANI": 1.0}, "mapping"),
])
def test_analyze_validation(jobs, completions, service, message):
    with pytest.raises(InputError, match=message):
        three().analyze(jobs, completions, service)


def test_what_if_validation_and_missing_servers():
    result = three().analyze(4, {"ANI": 4, "EDL": 8}, {"ANI": 1.0, "EDL": 1.0})
    # OP left out: C_OP = 0, demand 0, no service time needed; EDL: V = 2, D = 2, bottleneck.
    assert result.completions == {"ANI": 4.0, "EDL": 8.0, "OP": 0.0}
    assert result.bottleneck == "EDL" and result.utilization == {"ANI": 0.5, "EDL": 1.0, "OP": 0.0}
    assert math.isnan(result.table()["service_ns"].iloc[2])
    with pytest.raises(InputError, match="unknown server 'NF9'"):
        result.what_if(NF9=1.0)
    with pytest.raises(InputError, match="service time of EDL"):
        result.what_if(EDL=-2.0)
    assert isinstance(result, OperationalResult)
