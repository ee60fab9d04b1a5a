"""Memory simulation, prediction arithmetic, counters mode and the `opm` command (seed 003 §6.4-6.5)."""
from __future__ import annotations

import dataclasses
import json
from unittest import mock
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opmachine.predict as opm_predict
from opmachine.counters import counted_result, read_counters, scale_slots
from opmachine.kernels import JobTrace, compact_counts, compact_jobs, parse_kernel, topo_jobs
from opmachine.layout import layout_for
from opmachine.cache import SetAssocState
from opmachine import memory
from opmachine.memory import l2_geometry, simulate_launch
from opmachine.predict import memory_prediction, predict_bfs
from opmachine.profile import Curve, load_profile
from simdreport.cli import main
from simdmodel.errors import InputError
from simdmodel.frontier import bfs
from simdmodel.load import load_graph
from test_opm_jobs import figure2_graph, graph_of, graphs

K40C = load_profile("k40c", kind="gpu")
H200 = load_profile("h200", kind="gpu")
ONE_PARTITION = dataclasses.replace(H200, l2_partitions=None)  # an L2 whose every hit is alike


def test_table2_memory_counts_of_figure4():
    # Seed 003 Table 2 for Fig. 4: C_L2 = 13 transactions, C_DRAM = 4, C_L2H = 9, C_RBM = 4, C_RBH = 0.
    # Each array fits in one sector at its own 256-byte base (its own DRAM block), so only the
    # first touch of num_nodes (ANI), level (NF1), row_start (ERL) and edge_dst (EDL) misses.
    graph = figure2_graph()
    frontiers = bfs(graph, 0)
    layout = layout_for(6, 6)
    trace = topo_jobs(graph, frontiers.levels, np.full(6, -1, dtype=np.int32), 1, layout, warps=1)
    for model in ("lru", "setassoc"):
        counts, _ = simulate_launch(trace, layout, K40C, model)
        l2_sectors, l2_hits, dram, row_hits, row_misses = counts[:, 1:].sum(axis=0)
        assert (l2_sectors, l2_hits, dram, row_hits, row_misses) == (13, 9, 4, 0, 4)
        # misses by server: ANI 1, NF1 1, ERL 1, EDL 1 (seed 003 §6.4)
        assert counts[:, 3].tolist() == [1, 1, 1, 1, 0, 0]


def _compaction_trace(n, next_front, warps):
    """Lane-by-lane compaction launch as the CUDA kernel runs it: warp w takes K consecutive chunks
    (K = ceil(chunks / warps)); per chunk NF1 then ANI, then an OP per chunk with passing nodes,
    storing them at their queue rank."""
    base = layout_for(n, 1).base_sector
    rank = {v: i for i, v in enumerate(next_front)}
    chunks = -(-n // 32)
    per_warp = max(1, -(-chunks // warps))
    server, warp, ptr, sectors = [], [], [0], []
    for w in range(warps):
        mine = range(w * per_warp, min(w * per_warp + per_warp, chunks))
        jobs = []
        for chunk in mine:
            nodes = range(chunk * 32, min(chunk * 32 + 32, n))
            jobs += [(1, sorted({base["level"] + v // 8 for v in nodes})), (0, [base["num_nodes"]])]
        for chunk in mine:
            passing = [v for v in range(chunk * 32, min(chunk * 32 + 32, n)) if v in rank]
            if passing:
                jobs.append((5, sorted({base["queue"] + rank[v] // 8 for v in passing})))
        for s, secs in jobs:
            server.append(s)
            warp.append(w)
            sectors.extend(secs)
            ptr.append(len(sectors))
    return JobTrace(np.array(server, np.int8), np.array(warp, np.int32), np.array(ptr, np.int64),
                    np.array(sectors, np.int32), warps)


compaction_cases = st.integers(1, 400).flatmap(lambda n: st.tuples(st.just(n), st.sets(st.integers(0, n - 1))))


@settings(max_examples=40, deadline=None)
@given(compaction_cases, st.sampled_from([1, 3, 8]))
def test_compaction_closed_form_equals_simulation(spec, warps):
    # With an L2 and a row buffer large enough to keep every stream, the streaming argument of
    # kernels/compact.py is exact.
    n, chosen = spec
    next_front = np.array(sorted(chosen), dtype=np.int64)
    big = dataclasses.replace(K40C, row_buffers=4096)
    trace = _compaction_trace(n, next_front.tolist(), warps)
    simulated, _ = simulate_launch(trace, layout_for(n, 1), big, "lru")
    closed, per_warp = compact_counts(n, next_front, warps, big.dram_block_bytes)
    assert closed.tolist() == simulated.tolist()
    assert per_warp.tolist() == np.bincount(trace.warp, minlength=warps).tolist()


@settings(max_examples=60, deadline=None)
@given(compaction_cases, st.sampled_from([1, 2, 3, 8, 40]))
def test_compaction_trace_equals_lane_by_lane_kernel(spec, warps):
    n, chosen = spec
    next_front = np.array(sorted(chosen), dtype=np.int64)
    fast = compact_jobs(n, next_front, warps, layout_for(n, 1))
    naive = _compaction_trace(n, next_front.tolist(), warps)
    for name in ("server", "warp", "ptr", "sectors"):
        assert getattr(fast, name).tolist() == getattr(naive, name).tolist(), name
    assert fast.warps == warps


def _flat_profile(**service):
    curves = {name: Curve(np.array([1.0, 1e6]), np.array([ns, ns])) for name, ns in service.items()}
    return dataclasses.replace(K40C, curves=curves, launch_overhead_ns=100.0)


def test_prediction_is_bottleneck_demand_plus_launch_overhead():
    # N = 100 jobs: 50 L2 hits x 1 ns, 20 row hits x 2 ns, 30 row misses x 3 ns: demands (per job)
    # 0.5, 0.4, 0.9 -> RBM is the bottleneck, time = 100 x 0.9 + 100 ns of launch overhead.
    profile = _flat_profile(l2_hit=1.0, row_hit=2.0, row_miss=3.0)
    out = memory_prediction(100, 50, 20, 30, w_max=10, profile=profile)
    assert out["bottleneck"] == "RBM"
    assert out["predicted_ns"] == pytest.approx(190.0)
    assert out["load"] == 10  # n_est = N_G / W_max
    assert out["mlp_rbm"] == pytest.approx(3.0)  # V_RBM * n = 0.3 * 10


def test_service_time_follows_mlp():
    # S_L2H(m) falls from 10 ns at m = 1 to 1 ns at m = 100, linear in log m: S(10) = 5.5 ns.
    profile = dataclasses.replace(_flat_profile(l2_hit=1.0, dram=1.0),
                                  curves={"l2_hit": Curve(np.array([1.0, 100.0]), np.array([10.0, 1.0])),
                                          "dram": Curve(np.array([1.0, 100.0]), np.array([1.0, 1.0]))})
    assert not profile.has_row_split
    out = memory_prediction(10, 10, 0, 0, w_max=1, profile=profile)  # n = 10, V_L2H = 1, m = 10
    assert out["predicted_ns"] == pytest.approx(10 * 5.5 + 100)
    assert memory_prediction(10, 10, 0, 0, w_max=1, profile=profile, load=100)["predicted_ns"] == pytest.approx(110)


@settings(max_examples=25, deadline=None)
@given(graphs, st.sampled_from(["topo", "sm-1", "sm-8", "ws", "scan"]), st.sampled_from(["lru", "setassoc"]))
def test_prediction_invariants(spec, kernel, l2):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    source = int(np.flatnonzero(graph.degrees() > 0)[0])
    result = predict_bfs(graph, source, parse_kernel(kernel), K40C, l2_model=l2, block=64)
    table = result.per_level
    jobs = table[[c for c in table.columns if c.startswith("jobs_") and c != "jobs_total"]].sum(axis=1)
    assert (jobs == table["jobs_total"]).all()
    assert (table["l2_hits"] <= table["l2_sectors"]).all()
    assert (table["dram_sectors"] == table["l2_sectors"] - table["l2_hits"]).all()
    assert (table["row_hits"] + table["row_misses"] == table["dram_sectors"]).all()
    assert (table["predicted_ns"] > K40C.launch_overhead_ns).all()
    assert (table["load"] > 0).all() and (table["load"] <= K40C.physical_warps).all()
    by_server = result.per_server.groupby(["level", "phase"], sort=False)[["jobs", "l2_sectors", "l2_hits"]].sum()
    assert by_server["jobs"].tolist() == table["jobs_total"].tolist()
    assert by_server["l2_hits"].tolist() == table["l2_hits"].tolist()
    expand = table[table["phase"] != "compact"]
    assert expand["frontier_edges"].sum() == graph.degrees()[bfs(graph, source).vertices].sum()


@settings(max_examples=20, deadline=None)
@given(graphs, st.sampled_from(["topo", "sm-1", "sm-4", "ws", "scan"]))
def test_warm_l2_changes_only_hits_and_never_loses_one(spec, kernel):
    # A warm L2 holds everything a cold one would (LRU keeps the stream's own lines in the same
    # order) plus what earlier launches left: per launch the same jobs and sectors, at least as
    # many hits; without an earlier run the first launch starts empty either way.
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    source = int(np.flatnonzero(graph.degrees() > 0)[0])
    small = dataclasses.replace(H200, l2_bytes=16 * 128 * 4, l2_ways=16)  # 4 sets: evictions happen
    cold = predict_bfs(graph, source, parse_kernel(kernel), small, l2_model="setassoc", block=64).per_level
    with mock.patch.object(opm_predict, "WARM_PRIOR_RUNS", 0):
        warm = predict_bfs(graph, source, parse_kernel(kernel), small, l2_model="setassoc", block=64,
                           warm_l2=True).per_level
    assert (cold["mode"] == "simulation").all() and (warm["mode"] == "warm").all()
    same = ["level", "phase", "jobs_total", "w_max", "l2_sectors", "frontier_vertices"]
    assert warm[same].equals(cold[same])
    assert (warm["l2_hits"] >= cold["l2_hits"]).all()
    assert warm.iloc[0].drop("mode").equals(cold.iloc[0].drop("mode"))


@pytest.mark.parametrize("kernel", ["topo", "sm-4", "scan"])
def test_a_warm_prediction_starts_from_the_l2_a_previous_run_left(kernel):
    # the graph fits in the L2 many times over: after one earlier run of the same BFS (and the
    # level array's reset) the first launch hits on every sector, where a cold start misses
    graph = figure2_graph()
    cold = predict_bfs(graph, 0, parse_kernel(kernel), H200, l2_model="setassoc").per_level
    warm = predict_bfs(graph, 0, parse_kernel(kernel), H200, l2_model="setassoc", warm_l2=True).per_level
    assert opm_predict.WARM_PRIOR_RUNS == 1
    assert (warm["l2_hits"] == warm["l2_sectors"]).all() and cold["l2_hits"].iloc[0] < cold["l2_sectors"].iloc[0]
    assert warm["jobs_total"].tolist() == cold["jobs_total"].tolist()  # the same launches, only their hits differ
    assert (warm["predicted_ns"] <= cold["predicted_ns"] + 1e-9).all()


@pytest.mark.parametrize("kernel", ["topo", "sm-2", "ws", "scan"])
def test_the_prior_runs_traces_used_again_give_the_same_prediction(kernel):
    # the predicted run takes the prior run's job traces instead of generating them again; with
    # no budget (all generated twice) or a budget that keeps only some, the tables are identical
    graph = load_graph("rmat:scale=11,ef=8")
    source = int(bfs(graph, 5).levels.argmax())  # a deep source: many launches
    small = dataclasses.replace(H200, l2_bytes=64 * 1024)  # the arrays do not fit: the prior run is simulated

    def predict(budget):
        with mock.patch.object(opm_predict, "TRACE_REUSE_BYTES", budget):
            return predict_bfs(graph, source, parse_kernel(kernel), small, l2_model="setassoc", warm_l2=True).per_level

    kept = predict(2**30)
    pd.testing.assert_frame_equal(predict(0), kept)
    pd.testing.assert_frame_equal(predict(60_000), kept)



@pytest.mark.parametrize("kernel", ["topo", "sm-8", "ws"])
@pytest.mark.parametrize("partitions", [False, True])
def test_an_l2_that_holds_every_array_gives_the_prior_runs_state_without_its_lookups(kernel, partitions):
    # rmat-11's arrays fit the H200's L2: nothing is ever evicted, so the filled cache that replaces the
    # prior run must give the very tables the simulated prior run gives. With one partition the prior run
    # is not run at all; with [l2_partitions] it runs through the partitions alone (which partition holds a
    # line is only known from it), and no access is looked up in the L2's sets
    graph = load_graph("rmat:scale=11,ef=8")
    source = int(bfs(graph, 5).levels.argmax())
    profile = H200 if partitions else ONE_PARTITION
    assert (profile.l2_partitions is not None) == partitions
    assert SetAssocState(l2_geometry(H200), layout_for(graph.n, graph.m).total_sectors).holds_universe()
    fills, fill = [], SetAssocState.fill
    prior_lookups, l2_pass = [], memory._l2_pass
    with mock.patch.object(SetAssocState, "fill", lambda self: (fills.append(self), fill(self))), \
            mock.patch.object(memory, "_l2_pass", lambda *args: (prior_lookups.append(1), l2_pass(*args))):
        filled = predict_bfs(graph, source, parse_kernel(kernel), profile, l2_model="setassoc", warm_l2=True)
    assert len(fills) == 1 and not prior_lookups
    with mock.patch.object(SetAssocState, "holds_universe", lambda self: False):
        simulated = predict_bfs(graph, source, parse_kernel(kernel), profile, l2_model="setassoc", warm_l2=True)
    pd.testing.assert_frame_equal(filled.per_level, simulated.per_level)
    pd.testing.assert_frame_equal(filled.per_server, simulated.per_server)
    assert (filled.per_level["l2_hits"] == filled.per_level["l2_sectors"]).all()

def test_a_compaction_is_charged_its_time_less_the_launch_its_constant_was_measured_on():
    # grid_scan_ns is a one-node compaction measured whole: its scan, barriers and offset wait are in
    # it, so the model takes its own time for that launch off every compaction, and nothing else
    from opmachine.critical import CriticalPathModel
    from opmachine.instructions import LaunchCode

    kernel = parse_kernel("ws")
    base = opm_predict.compaction_baseline_ns(H200, LaunchCode.for_kernel(kernel, H200),
                                              CriticalPathModel.from_profile(H200))
    assert 0 < base < H200.grid_scan_ns
    graph = figure2_graph()
    charged = predict_bfs(graph, 0, kernel, H200, l2_model="setassoc").per_level
    with mock.patch.object(opm_predict, "compaction_baseline_ns", lambda *args: 0.0):
        whole = predict_bfs(graph, 0, kernel, H200, l2_model="setassoc").per_level
    compact = charged["phase"] == "compact"
    np.testing.assert_allclose(whole.loc[compact, "predicted_ns"] - charged.loc[compact, "predicted_ns"], base)
    assert whole.loc[~compact, "predicted_ns"].tolist() == charged.loc[~compact, "predicted_ns"].tolist()


def test_warm_l2_needs_the_setassoc_model():
    with pytest.raises(InputError, match="warm L2 needs the set-associative"):
        predict_bfs(figure2_graph(), 0, parse_kernel("topo"), H200, l2_model="lru", warm_l2=True)


def test_compaction_pays_the_grid_scan():
    # memory_prediction adds the profile's grid_scan_ns to a compaction launch only.
    profile = dataclasses.replace(_flat_profile(l2_hit=1.0, row_hit=2.0, row_miss=3.0), grid_scan_ns=1000.0)
    expand = memory_prediction(100, 50, 20, 30, w_max=10, profile=profile, phase="expand")
    compact = memory_prediction(100, 50, 20, 30, w_max=10, profile=profile, phase="compact")
    assert expand["predicted_ns"] == pytest.approx(190.0)
    assert compact["predicted_ns"] == pytest.approx(1190.0)


def test_lru_and_setassoc_agree_when_everything_fits():
    # 300 vertices: every array fits in the K40c's 1.5 MB L2, so both models miss only cold sectors.
    graph = graph_of(300, [(i, (7 * i + 1) % 300) for i in range(300)], True)
    a = predict_bfs(graph, 0, parse_kernel("sm-4"), K40C, l2_model="lru").per_level
    b = predict_bfs(graph, 0, parse_kernel("sm-4"), K40C, l2_model="setassoc").per_level
    assert a["dram_sectors"].tolist() == b["dram_sectors"].tolist()


def _counters_of(result, profile):
    table = result.per_level
    return pd.DataFrame({
        "level": table["level"], "phase": table["phase"], "jobs_total": table["jobs_total"],
        "l2_sectors": table["l2_sectors"], "l2_hits": table["l2_hits"], "dram_sectors": table["dram_sectors"],
        "achieved_occupancy_pct": table["load"] / profile.physical_warps * 100,
        "row_hits": table["row_hits"], "row_misses": table["row_misses"]})


def _with_instructions(table, result):
    per_level = result.per_level
    return table.assign(**{c: per_level[c].astype(np.int64) for c in ("inst_executed", "shared_ld_inst",
                                                                        "shared_st_inst")})


@pytest.mark.parametrize("time_model", ["critical", "eq4"])
def test_counters_mode_with_simulated_counts_reproduces_simulation(tmp_path, time_model):
    graph = graph_of(200, [(i, (i * i + 3) % 200) for i in range(200)], True)
    profile = load_profile("h200", "gpu")
    result = predict_bfs(graph, 3, parse_kernel("ws"), profile, l2_model="setassoc", time_model=time_model)
    path = tmp_path / "counters.csv"
    _with_instructions(_counters_of(result, profile), result).to_csv(path, index=False)
    again = counted_result(predict_bfs(graph, 3, parse_kernel("ws"), profile, l2_model="setassoc",
                                       time_model=time_model, counters=read_counters(path)))
    assert again.per_level["predicted_ns"].to_numpy() == pytest.approx(result.per_level["predicted_ns"].to_numpy())
    assert set(again.per_level["mode"]) == {"counters"}
    # without the row columns the simulated row-hit fraction splits the measured DRAM sectors
    _counters_of(result, profile).drop(columns=["row_hits", "row_misses"]).to_csv(path, index=False)
    split = counted_result(predict_bfs(graph, 3, parse_kernel("ws"), profile, l2_model="setassoc",
                                       time_model=time_model, counters=read_counters(path)))
    assert split.per_level["predicted_ns"].to_numpy() == pytest.approx(result.per_level["predicted_ns"].to_numpy())


def test_warm_counters_take_the_cold_simulation_error_out():
    # counts measured cold equal to the cold simulation: the warm counters prediction is the warm one;
    # twice the cold DRAM sectors: the warm prediction's DRAM classes double too
    graph = load_graph("rmat:scale=10,ef=8")
    profile = load_profile("h200", "gpu")
    kernel = parse_kernel("sm-4")
    cold = predict_bfs(graph, 0, kernel, profile, l2_model="setassoc")
    counters = _counters_of(cold, profile)
    warm = predict_bfs(graph, 0, kernel, profile, l2_model="setassoc", warm_l2=True, counters=counters,
                       counters_reference=cold.per_level)
    assert warm.counted["predicted_ns"].to_numpy() == pytest.approx(warm.per_level["predicted_ns"].to_numpy())
    doubled = counters.assign(dram_sectors=2 * counters["dram_sectors"], row_hits=2 * counters["row_hits"],
                              row_misses=2 * counters["row_misses"],
                              l2_sectors=counters["l2_sectors"] + counters["dram_sectors"])
    more = predict_bfs(graph, 0, kernel, profile, l2_model="setassoc", warm_l2=True, counters=doubled,
                       counters_reference=cold.per_level).counted
    own = warm.per_level
    assert more["dram_sectors"].to_numpy() == pytest.approx(2 * own["dram_sectors"].to_numpy(), abs=1)
    assert (more["predicted_ns"].to_numpy() >= own["predicted_ns"].to_numpy() * (1 - 1e-12)).all()
    with pytest.raises(InputError, match="needs the cold prediction"):
        predict_bfs(graph, 0, kernel, profile, l2_model="setassoc", warm_l2=True, counters=counters)


def _slots(jobs, sectors, waiting, waited, hot):
    return tuple(np.asarray(x, dtype=np.float64) for x in (jobs, sectors, waiting, waited, hot))


def test_scale_slots_by_hand():
    # two slots; slot 0: 4 loads, 3 wait on the L2 (100 ns each), 1 on a row miss (300 ns);
    # slot 1: 2 loads on the L2 (120 ns each). The measurement doubles the row misses, adds row hits
    # the simulation never saw (one load per sector at the 200 ns one-sector latency) and halves the
    # instructions.
    loads = _slots([4, 2], [[6, 2], [0, 0], [1, 0]], [[3, 2], [0, 0], [1, 0]], [[300, 240], [0, 0], [300, 0]], [1, 0])
    path = tuple(np.asarray(x, dtype=np.float64) for x in ([40, 20], [400, 200], [2, 2], [24, 6]))
    targets = {"jobs": 6.0, "classes": np.array([8.0, 3.0, 2.0]), "inst": 30.0, "shared": 8.0}
    (jobs, sectors, latency, hot), (count, stall, shared, alu) = scale_slots(loads, path, targets,
                                                                              np.array([90.0, 200.0, 250.0]))
    assert jobs.tolist() == [4, 2] and hot.tolist() == [1, 0]
    assert sectors.tolist() == [[6, 2], [2, 1], [2, 0]]  # row hits spread by jobs: 2/3 and 1/3 of 3
    # slot 0: 2 row-miss loads (600 ns) + 2 row-hit loads (400 ns) fill its 4 loads; slot 1: 1 row hit + 1 L2
    assert latency.tolist() == pytest.approx([1000.0, 200.0 + 120.0])
    assert count.tolist() == [20, 10] and stall.tolist() == [200, 100] and shared.tolist() == [4, 4]
    assert alu.tolist() == [12, 3]  # the ALU pipe's as the instructions


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 20), st.integers(0, 20), st.integers(0, 5), st.integers(0, 5)),
                min_size=1, max_size=8),
       st.floats(0.1, 3.0), st.floats(0.0, 3.0), st.floats(0.0, 3.0))
def test_scale_slots_keeps_the_counts_and_the_loads(slots, f_jobs, f_hit, f_miss):
    # whatever the targets, each class's sectors add up to its target and no slot waits on more loads than it ran
    l2, miss, l2_loads, miss_loads = (np.array(c, dtype=np.float64) for c in zip(*slots))
    jobs = l2_loads + miss_loads + 1
    loads = _slots(jobs, [l2, 0 * l2, miss], [l2_loads, 0 * l2, miss_loads], [100 * l2_loads, 0 * l2, 300 * miss_loads],
                   0 * l2)
    targets = {"jobs": f_jobs * jobs.sum(), "classes": np.array([f_hit * l2.sum(), 2.0, f_miss * miss.sum()]),
               "inst": 1.0, "shared": 1.0}
    (new_jobs, sectors, latency, _), none = scale_slots(loads, None, targets, np.array([100.0, 200.0, 300.0]))
    assert none is None
    assert new_jobs.sum() == pytest.approx(targets["jobs"])
    assert sectors.sum(axis=1) == pytest.approx(targets["classes"])
    assert (latency >= -1e-9).all()
    assert (latency <= (l2_loads + miss_loads) * f_jobs * 300 + 1e-6).all()


def test_counters_must_cover_every_launch(tmp_path):
    graph = graph_of(50, [(i, i + 1) for i in range(49)], True)
    result = predict_bfs(graph, 0, parse_kernel("topo"), K40C)
    counters = _counters_of(result, K40C)
    with pytest.raises(InputError, match="has no row for level"):
        counted_result(predict_bfs(graph, 0, parse_kernel("topo"), K40C, counters=counters.iloc[:-1]))
    extra = pd.concat([counters, counters.iloc[:1].assign(level=99)])
    with pytest.raises(InputError, match="matches no launch"):
        predict_bfs(graph, 0, parse_kernel("topo"), K40C, counters=extra)
    with pytest.raises(InputError, match="without a counters table"):
        counted_result(result)


@pytest.mark.parametrize("text, message", [
    ("level,phase\n0,topo\n", "missing column"),
    ("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n0,topo,5,4,3,1,50\n"
     "1,fast,5,4,3,1,50\n", ":3: phase"),
    ("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n0,topo,x,4,3,1,50\n", ":2: jobs_total"),
    ("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n0,topo,5,4,3,1,150\n", "(0, 100]"),
    ("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n0,topo,5,4,9,1,50\n", "exceeds"),
    ("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n0,topo,5,4,3,1,50\n"
     "0,topo,5,4,3,1,50\n", "second row"),
    ("", "not a readable CSV"),
])
def test_read_counters_rejects(tmp_path, text, message):
    path = tmp_path / "c.csv"
    path.write_text(text)
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        read_counters(path)


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("0123456789,.-\nabcdeflnopst_ \"")), max_size=200))
def test_read_counters_fuzz(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "c.csv"
    header = "level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n"
    for body in (text, header + text):
        path.write_text(body)
        try:
            table = read_counters(path)
        except InputError as error:
            assert "\n" not in str(error)
        else:
            assert len(table) > 0 and (table["jobs_total"] > 0).all()


# --- the optional instruction counts of a counters file ---------------------------------------------
COUNTS_HEADER = "level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct"
INST = ("inst_executed", "shared_ld_inst", "shared_st_inst")


def test_read_counters_carries_the_instruction_counts(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(f"{COUNTS_HEADER},{','.join(INST)}\n0,expand,5,4,3,1,50,120,8,2\n0,compact,6,4,3,1,25, 40 ,0,0\n")
    table = read_counters(path)
    assert table["inst_executed"].tolist() == [120, 40] and table["inst_executed"].dtype == np.int64
    assert table["shared_ld_inst"].tolist() == [8, 0] and table["shared_st_inst"].tolist() == [2, 0]
    path.write_text(f"{COUNTS_HEADER}\n0,expand,5,4,3,1,50\n")  # optional: a file without them still reads
    assert not set(INST) & set(read_counters(path).columns)


@pytest.mark.parametrize("columns, values, message", [
    (INST[:2], "1,2", "give all of inst_executed, shared_ld_inst, shared_st_inst, or none (missing shared_st_inst)"),
    (INST[1:], "1,2", "or none (missing inst_executed)"),
    (INST, "-1,0,0", ":2: inst_executed must be a non-negative integer"),
    (INST, "1,2.5,0", ":2: shared_ld_inst must be a non-negative integer"),
    (INST, "1,2,", ":2: shared_st_inst must be a non-negative integer"),
    (INST, "1,2,x", ":2: shared_st_inst must be a non-negative integer"),
    (INST, "1e30,0,0", ":2: inst_executed must be a non-negative integer"),
])
def test_read_counters_rejects_bad_instruction_counts(tmp_path, columns, values, message):
    path = tmp_path / "c.csv"
    path.write_text(f"{COUNTS_HEADER},{','.join(columns)}\n0,topo,5,4,3,1,50,{values}\n")
    with pytest.raises(InputError) as caught:
        read_counters(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


bad_counts = st.one_of(st.integers(max_value=-1).map(str), st.sampled_from(["", "x", "nan", "inf", "-0.5", "1.5",
                                                                              "1e300", "2e16", "0x10", "--1"]),
                       st.floats(0.01, 1e6).filter(lambda v: v != int(v)).map(repr))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(*[st.integers(0, 2**40)] * 3), min_size=1, max_size=5), st.data())
def test_read_counters_names_the_first_bad_instruction_count(tmp_path_factory, rows, data):
    path = tmp_path_factory.mktemp("inst") / "c.csv"
    cells = [[str(v) for v in row] for row in rows]
    line = f"{COUNTS_HEADER},{','.join(INST)}\n" + "".join(
        f"{level},topo,5,4,3,1,50,{','.join(row)}\n" for level, row in enumerate(cells))
    path.write_text(line)
    table = read_counters(path)  # every row valid: carried through exactly
    assert table[list(INST)].to_numpy().tolist() == [list(row) for row in rows]
    at, column = data.draw(st.integers(0, len(rows) - 1)), data.draw(st.integers(0, 2))
    cells[at][column] = data.draw(bad_counts)
    path.write_text(f"{COUNTS_HEADER},{','.join(INST)}\n" + "".join(
        f"{level},topo,5,4,3,1,50,{','.join(row)}\n" for level, row in enumerate(cells)))
    with pytest.raises(InputError) as caught:
        read_counters(path)
    message = str(caught.value)
    assert "\n" not in message
    assert message.endswith(f":{at + 2}: {INST[column]} must be a non-negative integer"), message


def test_opm_cli_json(capsys):
    # k40c is a derived profile (published figures): its predictions carry a note saying so
    assert main(["opm", "rmat:scale=8,ef=8,seed=2", "--kernel", "sm-4", "--gpu", "k40c", "--per-level",
                 "--format", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["summary"]["kernel"] == "sm-4"
    assert "not yet measured" in out["note"]
    assert {"level", "jobs_ani", "jobs_total", "w_max", "l2_sectors", "v_l2h", "v_rbh", "v_rbm", "load",
            "bottleneck", "predicted_ns"} <= set(out["per_level"][0])


def test_opm_cli_csv_columns(tmp_path):
    out = tmp_path / "levels.csv"
    assert main(["opm", "grid2d:side=20", "--kernel", "topo", "--threads", "512", "--per-level", "--format", "csv",
                 "--out", str(out), "--quiet", "--l2", "setassoc"]) == 0
    table = pd.read_csv(out)
    required = ("level, kernel, jobs_ani, jobs_nf1, jobs_erl, jobs_edl, jobs_nf2, jobs_op, jobs_total, w_max, "
                "l2_sectors, l2_hits, dram_sectors, row_hits, row_misses, v_l2h, v_rbh, v_rbm, load, bottleneck, "
                "predicted_ns").split(", ")
    assert set(required) <= set(table.columns)
    assert (table["grid"] * table["block"] == 512).all()


@pytest.mark.parametrize("warm", [False, True])
def test_opm_cli_counters(tmp_path, warm):
    # counts written from the cold prediction give back the cold (or the warm) prediction, mode counters
    graph, options = "rmat:scale=8,ef=8,seed=2", ["--kernel", "ws", "--gpu", "h200", "--l2", "setassoc"]
    plain, counted = tmp_path / "plain.csv", tmp_path / "counted.csv"
    assert main(["opm", graph, *options, "--cold-l2", "--per-level", "--format", "csv", "--out", str(plain),
                 "--quiet"]) == 0
    cold = pd.read_csv(plain)
    counters = tmp_path / "counters.csv"
    cold.assign(achieved_occupancy_pct=50.0)[["level", "phase", "jobs_total", "l2_sectors", "l2_hits", "dram_sectors",
                                             "achieved_occupancy_pct"]].to_csv(counters, index=False)
    warm_flag = ["--warm-l2"] if warm else ["--cold-l2"]
    if warm:
        assert main(["opm", graph, *options, "--warm-l2", "--per-level", "--format", "csv", "--out", str(plain),
                     "--quiet"]) == 0
    assert main(["opm", graph, *options, *warm_flag, "--counters", str(counters), "--per-level", "--format", "csv",
                 "--out", str(counted), "--quiet"]) == 0
    expected, table = pd.read_csv(plain), pd.read_csv(counted)
    assert set(table["mode"]) == {"counters"}
    assert table["predicted_ns"].to_numpy() == pytest.approx(expected["predicted_ns"].to_numpy())


def test_opm_cli_warm_counters_need_the_set_associative_l2(tmp_path, capsys):
    counters = tmp_path / "counters.csv"
    counters.write_text("level,phase,jobs_total,l2_sectors,l2_hits,dram_sectors,achieved_occupancy_pct\n"
                        "0,topo,5,4,3,1,50\n")
    assert main(["opm", "rmat:scale=6,ef=4", "--kernel", "topo", "--l2", "lru", "--warm-l2", "--counters",
                 str(counters), "--quiet"]) == 2
    assert capsys.readouterr().err == "simdmodel: error: a warm L2 needs the set-associative L2 model (--l2 setassoc)\n"


def test_opm_cli_cpu(capsys):
    assert main(["opm", "grid2d:side=30", "--cpu", "westmere", "--per-level", "--format", "csv", "--quiet"]) == 0
    table = pd.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert {"round", "c_l1", "predicted_ns", "bottleneck"} <= set(table.columns)


@pytest.mark.parametrize("args, message", [
    (["--kernel", "sm-40"], "group size 40"),
    (["--gpu", "nope"], "nope"),
    (["--gpu", "westmere"], "cpu profile"),
    (["--threads", "100"], "multiple of 32"),
    (["--threads", "64", "--block", "32"], "cannot be combined"),
    (["--block", "48"], "multiple of 32"),
    (["--grid", "0"], "at least 1"),
    (["--source", "99999"], "source 99999"),
    (["--occupancy", "1.5"], "occupancy"),
    (["--counters", "/nonexistent/c.csv"], "c.csv"),
    (["--cpu", "westmere", "--kernel", "ws"], "--kernel applies to GPU kernels only"),
    (["--cpu", "h100"], "gpu profile"),
])
def test_opm_cli_errors(capsys, args, message):
    assert main(["opm", "rmat:scale=6,ef=4", *args, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("simdmodel: error:") and message in err and err.count("\n") == 1


def test_opm_cli_bad_out_writes_nothing(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "simdreport.cli", "opm", "rmat:scale=6,ef=4", "--out",
                           str(tmp_path / "missing" / "x.csv")], capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kernel", ["topo", "sm-4", "ws", "scan"])
@pytest.mark.parametrize("warm, time_model", [(True, "critical"), (False, "critical"), (False, "eq4")])
def test_one_simulation_timed_on_several_profiles_equals_each_prediction(kernel, warm, time_model):
    from opmachine.predict import predict_bfs_profiles
    from opmachine.profile.whatif import derive_profile

    graph = load_graph("rmat:scale=11,ef=8")
    profiles = [H200, *(derive_profile(H200, changes) for changes in
                        ({"dram": 0.5}, {"l2bw": 2.0}, {"launch": 0.25}, {"dram": 2.0, "launch": 3.0}))]
    options = dict(l2_model="setassoc", warm_l2=warm, time_model=time_model)
    together = predict_bfs_profiles(graph, 3, parse_kernel(kernel), profiles, **options)
    for profile, result in zip(profiles, together, strict=True):
        alone = predict_bfs(graph, 3, parse_kernel(kernel), profile, **options)
        assert result.profile is profile
        pd.testing.assert_frame_equal(result.per_level, alone.per_level)
        pd.testing.assert_frame_equal(result.per_server, alone.per_server)
    assert together[3].predicted_ns < together[0].predicted_ns < together[4].predicted_ns  # cheaper, dearer launches


def test_profiles_that_change_the_simulation_are_predicted_apart():
    from opmachine.predict import predict_bfs_profiles
    from opmachine.profile.whatif import derive_profile

    graph = figure2_graph()
    for changes in ({"l2": 2.0}, {"sms": 2.0}):
        with pytest.raises(InputError, match="differ in what the simulation needs"):
            predict_bfs_profiles(graph, 0, parse_kernel("ws"), [H200, derive_profile(H200, changes)])
    with pytest.raises(InputError, match="differ"):
        predict_bfs_profiles(graph, 0, parse_kernel("ws"), [H200, load_profile("k40c")])
    with pytest.raises(InputError, match="differ"):  # one follows the L2's partitions, the other not
        predict_bfs_profiles(graph, 0, parse_kernel("ws"), [H200, ONE_PARTITION])


def test_compaction_rows_shared_between_kernels_are_the_ones_each_kernel_computes():
    # with a filled L2 (of one partition) every data-driven kernel's compaction of a level gives the same
    # row but for the kernel's name: the second kernel takes the first one's, and its whole table is what
    # it gets alone
    graph = load_graph("rmat:scale=11,ef=8")
    source = int(bfs(graph, 5).levels.argmax())
    shared = opm_predict.SharedCompactions()
    options = dict(l2_model="setassoc", warm_l2=True)
    first = predict_bfs(graph, source, parse_kernel("ws"), ONE_PARTITION, shared=shared, **options)
    compactions = int((first.per_level["phase"] == "compact").sum())
    assert len(shared.rows) == compactions > 1
    for kernel in ("sm-8", "scan"):
        with mock.patch.object(opm_predict, "compact_jobs", wraps=opm_predict.compact_jobs) as simulated:
            together = predict_bfs(graph, source, parse_kernel(kernel), ONE_PARTITION, shared=shared, **options)
        assert simulated.call_count == 1  # only the empty compaction its fixed_ns is measured on
        alone = predict_bfs(graph, source, parse_kernel(kernel), ONE_PARTITION, **options)
        pd.testing.assert_frame_equal(together.per_level, alone.per_level)
        pd.testing.assert_frame_equal(together.per_server, alone.per_server)
    with pytest.raises(ValueError, match="one BFS predicted with one set of settings"):
        predict_bfs(graph, 0, parse_kernel("ws"), ONE_PARTITION, shared=shared, **options)


@pytest.mark.parametrize("setting", ["two partitions", "evicting", "cold", "eq4", "no room"])
def test_compaction_launches_shared_between_kernels_give_each_kernel_its_own_table(setting):
    # where rows cannot be shared, a compaction's jobs, interleaved order and warp steps still are: the
    # kernels after the first make none of their own (but the empty compaction of their fixed_ns), and each
    # table is what the kernel gets alone; with no room left nothing is kept, and the tables are the same
    graph = load_graph("rmat:scale=11,ef=8")
    source = int(bfs(graph, 5).levels.argmax())
    profile = dataclasses.replace(ONE_PARTITION, l2_bytes=64 * 1024) if setting == "evicting" else H200
    options = dict(l2_model="setassoc", warm_l2=setting != "cold", time_model="eq4" if setting == "eq4" else "critical")
    shared = opm_predict.SharedCompactions(0 if setting == "no room" else opm_predict.SHARED_COMPACTION_BYTES)
    first = predict_bfs(graph, source, parse_kernel("ws"), profile, shared=shared, **options)
    compactions = int((first.per_level["phase"] == "compact").sum())
    assert shared.rows == {}
    assert len(shared.launches) == (0 if setting == "no room" else compactions) and compactions > 1
    budget = 0 if setting == "no room" else opm_predict.SHARED_COMPACTION_BYTES  # every byte kept is counted
    assert shared.left == budget - sum(launch.nbytes for launch in shared.launches.values())
    for kernel in ("sm-8", "scan"):
        with mock.patch.object(opm_predict, "compact_jobs", wraps=opm_predict.compact_jobs) as simulated:
            together = predict_bfs(graph, source, parse_kernel(kernel), profile, shared=shared, **options)
        baseline = 1 if options["time_model"] == "critical" else 0  # the empty compaction fixed_ns is measured on
        assert simulated.call_count == baseline + (compactions if setting == "no room" else 0)
        alone = predict_bfs(graph, source, parse_kernel(kernel), profile, **options)
        pd.testing.assert_frame_equal(together.per_level, alone.per_level, check_exact=True)
        pd.testing.assert_frame_equal(together.per_server, alone.per_server, check_exact=True)


def test_compaction_rows_are_not_shared_where_the_l2_is_not_filled():
    # a cold L2, or one too small for the arrays, leaves each compaction's hits to what came before it, and
    # so does an L2 of two partitions (which one holds a line is what came before)
    graph = load_graph("rmat:scale=11,ef=8")
    small = dataclasses.replace(ONE_PARTITION, l2_bytes=64 * 1024)
    for profile, warm in ((ONE_PARTITION, False), (small, True), (H200, True)):
        shared = opm_predict.SharedCompactions()
        predict_bfs(graph, 5, parse_kernel("ws"), profile, l2_model="setassoc", warm_l2=warm, shared=shared)
        assert shared.rows == {}
