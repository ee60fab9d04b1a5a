"""A strategy is a plug-in: registered from this file alone, it gets lanes, jobs and analyze / opm tables.

The toy `blocked` strategy has two parameters (no table-schema change needed): a warp takes E
consecutive frontier entries and splits their concatenated edges into L contiguous chunks of
c = ceil(edges / L); at step r lane l < L takes edge l*c + r while that lies in its chunk. Lanes
whose chunk is used up are UA; lanes L..31 are idle. Also here: every registered strategy's
closed-form lane counter equals its own decomposition, step by step identities hold, and the
registry refuses bad names and parameters.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
import naive_opm
import opmachine as om
import simdmodel as sm
from simdmodel.errors import InputError
from simdmodel.strategies import (LANE_FIELDS, STRATEGIES, Geometry, Mapping, Param, Strategy, queue_units,
                                  register, schedules, unregister)
from test_opm_jobs import _replay_all, graph_of, graphs, jobs_of


@numba.njit(cache=True)
def _blocked_decompose(starts, degrees, unit_ptr, params, step_warp, step_end, step_ua, step_ur, edges):
    lanes_used = params[1]
    s = 0
    e = 0
    for u in range(unit_ptr.size - 1):
        total = 0
        for i in range(unit_ptr[u], unit_ptr[u + 1]):
            total += degrees[i]
        chunk = (total + lanes_used - 1) // lanes_used
        for r in range(chunk):
            active = 0
            for lane in range(lanes_used):
                k = lane * chunk + r  # the k-th edge of the warp's concatenation
                if k >= total:
                    break
                i = unit_ptr[u]
                while k >= degrees[i]:
                    k -= degrees[i]
                    i += 1
                edges[e] = starts[i] + k
                e += 1
                active += 1
            step_warp[s] = u
            step_end[s] = e
            step_ua[s] = lanes_used - active
            step_ur[s] = 0
            s += 1
    return s


def _parse(label):
    if not label.startswith("blocked-"):
        return None
    entries, _, lanes = label[len("blocked-"):].partition("x")
    return int(entries), int(lanes)


BLOCKED = Strategy(
    name="blocked",
    params=(Param("entries", "entries per warp", "E", 32, 1, 32), Param("lanes", "lanes used", "L", 32, 1, 32)),
    description="Blocked: a warp's concatenated edges in L contiguous chunks, one per lane",
    geometry=lambda p: Geometry(p[0], 1, p[0]),
    decompose=_blocked_decompose,
    label=lambda p: f"blocked-{p[0]}x{p[1]}",
    parse_label=_parse,
)


@pytest.fixture
def blocked():
    register(BLOCKED)
    yield BLOCKED
    unregister("blocked")


def naive_blocked_lanes(degrees, entries, lanes_used):
    """Lane-by-lane reference of the toy strategy (per-warp identity checked)."""
    total = dict.fromkeys(LANE_FIELDS, 0)
    for first in range(0, len(degrees), entries):
        edges = sum(degrees[first:first + entries])
        chunk = -(-edges // lanes_used)
        for r in range(chunk):
            active = sum(1 for lane in range(lanes_used) if lane * chunk + r < edges)
            total["warp_iterations"] += 1
            total["total_lanes"] += 32
            total["useful_lanes"] += active
            total["ua_lanes"] += lanes_used - active
            total["idle_lanes"] += 32 - lanes_used
    return total


def naive_blocked_jobs(replay, front, entries, lanes_used, warps):
    """The toy strategy's expansion replayed lane by lane (seed 003 Fig. 4 jobs)."""
    for unit, first in enumerate(range(0, len(front), entries)):
        warp = unit % warps
        positions = list(range(first, min(first + entries, len(front))))
        vertices = [int(front[p]) for p in positions]
        replay.job(naive_opm.ANI, warp, "queue", positions)
        replay.job(naive_opm.ERL, warp, "row_start", vertices)
        replay.job(naive_opm.ERL, warp, "row_start", [v + 1 for v in vertices])
        edges = [e for v in vertices for e in range(*replay.start_end(v))]
        chunk = -(-len(edges) // lanes_used)
        for r in range(chunk):
            lanes = [edges[lane * chunk + r] for lane in range(lanes_used) if lane * chunk + r < len(edges)]
            replay.edge_iteration(warp, lanes)


def test_blocked_by_hand(blocked):
    # E=4, L=8: entries [5, 0, 6, 1 | 3] -> warp 0: 12 edges, chunks of 2: 2 steps, 6 lanes each
    # (lanes 6, 7 UA), idle 24 a step; warp 1: 3 edges, chunk 1: one step, 3 lanes, UA 5, idle 24.
    mapping = Mapping("blocked", 4, 8)
    assert mapping.label == "blocked-4x8"
    row = mapping.count_lanes(np.array([5, 0, 6, 1, 3]), np.array([0, 5]))[0]
    assert dict(zip(LANE_FIELDS, row.tolist())) == {
        "warp_iterations": 3, "total_lanes": 96, "useful_lanes": 15, "ua_lanes": 2 + 2 + 5, "ur_lanes": 0,
        "idle_lanes": 72}


@settings(max_examples=40, deadline=None)
@given(degrees=st.lists(st.integers(0, 60), max_size=120), entries=st.integers(1, 32), lanes=st.integers(1, 32))
def test_blocked_lanes_match_the_naive_twin(degrees, entries, lanes):
    register(BLOCKED)
    try:
        row = Mapping("blocked", entries, lanes).count_lanes(np.array(degrees, dtype=np.int64),
                                                              np.array([0, len(degrees)]))[0]
    finally:
        unregister("blocked")
    assert dict(zip(LANE_FIELDS, row.tolist())) == naive_blocked_lanes(degrees, entries, lanes)


@settings(max_examples=30, deadline=None)
@given(graphs, st.sampled_from([(32, 32), (8, 5), (1, 3)]), st.sampled_from([1, 3]))
def test_blocked_jobs_match_lane_replay_and_lanes(spec, params, warps):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = sm.bfs(graph, int(np.flatnonzero(graph.degrees() > 0)[0]))
    register(BLOCKED)
    try:
        mapping = Mapping("blocked", *params)
        lanes = mapping.count_lanes(graph.degrees()[frontiers.vertices], frontiers.level_ptr)
        for level, trace in _replay_all(
                graph, frontiers,
                lambda layout, stamp, level: om.kernels.expansion_jobs(graph, frontiers.levels, stamp, level,
                                                                       frontiers.frontier(level), mapping, layout,
                                                                       warps),
                lambda replay, level: naive_blocked_jobs(replay, frontiers.frontier(level), *params, warps)):
            assert jobs_of(trace)  # _replay_all compared it job by job already
            assert np.bincount(trace.server, minlength=6)[3] == lanes[level, 0]  # one EDL a warp step
    finally:
        unregister("blocked")


def test_blocked_in_analyze_and_opm_tables(blocked, capsys):
    graph = sm.load_graph("rmat:scale=9,ef=8,seed=2")
    sources = sm.pick_sources(graph, 2, seed=1)
    chosen = [Mapping("blocked", 32, 32), Mapping("blocked", 8, 16), Mapping("group", 4)]
    result = sm.analyze(graph, sources, chosen)
    summary = result.summary()
    assert summary["mapping"].tolist() == ["blocked-32x32", "blocked-8x16", "sm-4"]
    lanes = summary[list(LANE_FIELDS)].to_numpy()
    assert (lanes[:, 1] == lanes[:, 2:].sum(axis=1)).all() and (lanes[:, 1] == 32 * lanes[:, 0]).all()
    assert (summary["useful_lanes"] == summary["useful_lanes"].iloc[0]).all()
    kernel = om.parse_kernel("blocked-8x16")
    assert kernel.label == "blocked-8x16" and kernel.expansion == Mapping("blocked", 8, 16)
    predicted = om.predict_bfs(graph, int(sources[0]), kernel, om.load_profile("h200"), l2_model="setassoc",
                               warm_l2=True)
    expand = predicted.per_level[predicted.per_level["phase"] == "expand"]
    by_level = result.per_level[(result.per_level["mapping"] == "blocked-8x16")
                                & (result.per_level["source"] == int(sources[0]))]
    assert expand["jobs_edl"].tolist() == by_level["warp_iterations"].tolist()
    assert predicted.predicted_ns > 0
    from simdreport.cli import main
    assert main(["analyze", "rmat:scale=8,ef=4", "--strategies", "blocked,ws", "--sources", "1", "--quiet",
                 "--format", "csv"]) == 0
    assert "blocked-32x32" in capsys.readouterr().out
    assert main(["opm", "rmat:scale=8,ef=4", "--kernel", "blocked-4x8", "--gpu", "h200", "--quiet",
                 "--format", "csv"]) == 0
    assert "blocked-4x8" in capsys.readouterr().out


@pytest.mark.parametrize("name", sorted(STRATEGIES))
def test_every_fast_path_equals_its_decomposition(name):
    rng = np.random.default_rng(7)
    spec = STRATEGIES[name]
    if spec.fast_lanes is None:
        pytest.skip(f"{name} has no closed-form lane counter")
    choices = {"group": [(s,) for s in range(1, 33)], "scan": [(c,) for c in (32, 64, 96, 256, 1024)]}
    for params in choices.get(name, [()]):
        mapping = Mapping(name, *params)
        for high in (1, 4, 40, 3000):
            degrees = rng.integers(0, high, size=int(rng.integers(0, 400)))
            level_ptr = np.unique(np.r_[0, rng.integers(0, degrees.size + 1, size=3), degrees.size])
            assert np.array_equal(mapping.count_lanes(degrees, level_ptr), mapping.decomposed_lanes(degrees, level_ptr))


@settings(max_examples=40, deadline=None)
@given(degrees=st.lists(st.one_of(st.integers(0, 5), st.integers(0, 300)), max_size=200),
       label=st.sampled_from(["sm-1", "sm-3", "sm-8", "sm-32", "ws", "scan"]), limit=st.sampled_from([1, 7, 1 << 22]))
def test_decomposition_steps_keep_the_lane_identity_and_cover_every_edge_once(degrees, label, limit):
    mapping = sm.strategies.parse_mapping(label)
    degrees = np.array(degrees, dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(degrees)[:-1])).astype(np.int64)
    unit_ptr = queue_units(degrees.size, mapping.geometry.unit_entries)
    taken, warps_seen = [], []
    for block in schedules(mapping.spec, mapping.params, starts, degrees, unit_ptr, limit):
        lanes = np.diff(np.r_[0, block.step_end])
        assert (lanes >= 1).all() and (lanes <= 32).all()
        assert (lanes + block.step_ua + block.step_ur <= 32).all() and (block.step_ua >= 0).all()
        assert (np.diff(block.step_warp // mapping.geometry.unit_warps) >= 0).all()  # units in order
        taken.extend(block.edges.tolist())
        warps_seen.extend((block.first_unit * mapping.geometry.unit_warps + block.step_warp).tolist())
    assert sorted(taken) == list(range(int(degrees.sum())))
    expected = naive.lanes(degrees.tolist(), mapping.strategy, mapping.param)
    assert mapping.decomposed_lanes(degrees, np.array([0, degrees.size]))[0].tolist() == list(expected.values())


def test_registry_refuses_bad_names_and_parameters(blocked):
    with pytest.raises(ValueError, match="already registered"):
        register(Strategy("blocked", (), "", BLOCKED.geometry, _blocked_decompose, str, _parse))
    with pytest.raises(InputError, match="lanes used 33 outside 1..32"):
        Mapping("blocked", 4, 33)
    with pytest.raises(InputError, match="takes 2 parameter"):
        Mapping("blocked", 4, 8, 1)
    with pytest.raises(InputError, match="unknown strategy 'nope'"):
        Mapping("nope")
    with pytest.raises(InputError, match="unknown kernel 'blocked'"):
        om.parse_kernel("blocked")


def test_mappings_and_kernels_pickle_and_copy_through_the_registry(blocked):
    import copy
    import pickle

    for value in (Mapping("group", 4), Mapping("blocked", 8, 16), om.parse_kernel("scan"), om.parse_kernel("topo")):
        assert pickle.loads(pickle.dumps(value)) == value == copy.deepcopy(value)
    with pytest.raises(AttributeError, match="immutable"):
        Mapping("ws").params = (1,)
