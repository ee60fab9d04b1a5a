"""The CPU model's loop costs: the round events read off the trace, the warm caches, the prediction
that prices them, the `[loop]` table of a CPU profile and the microbenchmark that measures it; the
multi-threaded loop: its schedule, its threads' traces, its prediction and its timing; counters mode:
the process's own event counters, and the prediction from measured cache counts.

The references are a plain-Python Listing 1 that counts the events as it runs, and Figure 2 of
seed 003 worked by hand.
"""
from __future__ import annotations

import dataclasses
import json
import mmap
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from opmachine import cpu_microbench
from opmachine.cpu import (cache_levels, cpu_trace, measure_cpu_rounds, predict_cpu, predict_cpu_threads,
                           thread_traces)
from opmachine.cpu import hierarchy
from opmachine.cpu.events import EVENT_NAMES, round_events
from opmachine.cpu.kernel import EDL, ERL, NF1, NF2, OP, chunk_bounds
from opmachine.cpu.loop_costs import measure_loop_costs, parallel_loop_costs
from opmachine.cpu.measure import measure_cpu_counters
from opmachine.cpu.perf_events import CountersUnavailable, PerfCounters
from opmachine.cpu.predict import miss_errors, predict_cpu_counted
from opmachine.profile import LoopCosts, load_profile
from opmachine.profile.loading import parse_profile_bytes
from simdmodel.errors import InputError
from simdmodel.frontier import bfs
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.load import load_graph
from test_cpu import figure2_graph, measured_box, random_graph, some_source, tiny_profile

LOOP = LoopCosts(call_ns=100.0, scan_ns=1.0, vertex_ns=10.0, branch_ns=1000.0, gather_ns=(2.0, 20.0, 200.0, 2000.0),
                 store_ns=5.0, store_branch_ns=300.0)


def random_bfs(n: int, density: float, seed: int):
    """A random graph of n nodes and about n x density edges (undirected for odd seeds) and its BFS from a
    seeded node with edges; (graph, None) when no node has one."""
    graph = random_graph(n, max(1, int(n * density)), seed, undirected=bool(seed % 2))
    source = some_source(graph, seed)
    return graph, None if source is None else bfs(graph, source)


def naive_events(indptr, indices, source, rounds):
    """Listing 1 in plain Python, counting per round the `EVENT_NAMES` events as it goes."""
    n = len(indptr) - 1
    level = [-1] * n
    level[source] = 0
    out = []
    for r in range(1, rounds + 1):
        counts = dict.fromkeys(EVENT_NAMES, 0)
        was_frontier, stored_last, last_degree = False, False, -1
        for v in range(n):
            counts["nodes"] += 1
            frontier = level[v] == r - 1
            counts["frontier_switches"] += frontier != was_frontier
            was_frontier = frontier
            if not frontier:
                continue
            counts["frontier"] += 1
            degree = int(indptr[v + 1] - indptr[v])
            for e in range(int(indptr[v]), int(indptr[v + 1])):
                dst = int(indices[e])
                stores = level[dst] == -1
                counts["store_switches"] += stores != stored_last
                stored_last = stores
                if stores:
                    level[dst] = r
                    counts["stores"] += 1
            counts["edges"] += degree
            counts["exit_switches"] += degree > 0 and degree != last_degree
            last_degree = degree
        out.append([counts[name] for name in EVENT_NAMES])
    return np.array(out, dtype=np.int64)


def test_figure2_events_by_hand():
    graph = figure2_graph()
    trace = cpu_trace(graph, bfs(graph, 0))
    events, gathers, starts = round_events(trace, cache_levels(trace, tiny_profile(), warm=True), 4)
    # Round 1: frontier {A}: the test switches at A and after it; A's two edges both store (one
    # switch, to "stores"); A's degree 2 is new. Round 2: {B, E} switch four times; B->E finds E
    # labelled, B->C, B->D, E->F store (one switch); degrees 3 then 1. Round 3: {C, D, F}, no edges.
    assert events.tolist() == [[6, 1, 2, 2, 2, 1, 1], [6, 2, 4, 3, 4, 2, 1], [6, 3, 0, 0, 3, 0, 0]]
    # Warm, the three lines of the layout fit the one 4-way set of L1: every access is an L1 hit.
    assert gathers.tolist() == [[2, 0, 0, 0], [4, 0, 0, 0], [0, 0, 0, 0]]
    assert starts.tolist() == [[2, 0, 0, 0], [4, 0, 0, 0], [3, 0, 0, 0]]


def test_figure2_loop_prediction_by_hand():
    graph = figure2_graph()
    profile = dataclasses.replace(tiny_profile(), loop=LOOP)
    warm = predict_cpu(graph, bfs(graph, 0), profile, warm=True)
    # core = call + nodes x scan + frontier x vertex + (frontier + exit switches) x branch
    #        + stores x store + store switches x store branch; L1 = edges x 2.
    # Round 1: 100 + 6 + 10 + 3 x 1000 + 2 x 5 + 300 = 3426, L1 4. Round 2: 100 + 6 + 20 + 6000
    # + 15 + 300 = 6441, L1 8. Round 3: 100 + 6 + 30 + 3000 = 3136.
    assert warm["core_ns"].tolist() == [3426.0, 6441.0, 3136.0]
    assert warm["l1_ns"].tolist() == [4.0, 8.0, 0.0]
    assert warm["predicted_ns"].tolist() == [3430.0, 6449.0, 3136.0]
    assert warm["bound_ns"].tolist() == [3426.0, 6441.0, 3136.0]
    assert warm["bottleneck"].tolist() == ["core", "core", "core"]
    # Cold, round 1's first touches of row_start and edge_dst are its two stream starts, from memory:
    # 2 x (2000 - 2) = 3996 > the core's 3426. Level was touched first by the scan (NF1).
    cold = predict_cpu(graph, bfs(graph, 0), profile)
    assert cold["mem_ns"].tolist() == [3996.0, 0.0, 0.0]
    assert cold["predicted_ns"].tolist()[0] == 3426.0 + 4.0 + 3996.0
    assert cold["bottleneck"].tolist() == ["MEM", "core", "core"]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 90), density=st.floats(0.3, 5.0), seed=st.integers(0, 10_000), warm=st.booleans())
def test_events_match_a_plain_listing1(n, density, seed, warm):
    graph, front = random_bfs(n, density, seed)
    if front is None:
        return
    source = front.source
    trace = cpu_trace(graph, front)
    profile = tiny_profile(((128, 2, 1.0), (512, 4, 3.0), (2048, 8, 9.0)), memory_ns=30.0)
    served = cache_levels(trace, profile, warm=warm)
    events, gathers, starts = round_events(trace, served, 4)
    assert events.tolist() == naive_events(graph.indptr, graph.indices, source, front.depth).tolist()
    for r in range(trace.rounds):  # every edge's level load once, by the level serving it
        part = trace.round(r + 1)
        servers, levels = trace.servers[part], served[part]
        assert gathers[r].tolist() == np.bincount(levels[servers == NF2], minlength=4).tolist()
        first_erl = (servers == ERL) & (np.r_[-1, servers[:-1]] != ERL)
        first_edl = (servers == EDL) & (np.r_[-1, servers[:-1]] == ERL)
        assert starts[r].tolist() == np.bincount(levels[first_erl | first_edl], minlength=4).tolist()
    switches = events[:, [EVENT_NAMES.index("frontier_switches")]]
    assert (switches <= events[:, [0]]).all()


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 60), density=st.floats(0.5, 4.0), seed=st.integers(0, 10_000))
def test_loop_prediction_is_the_sum_of_its_demands(n, density, seed):
    graph = random_graph(n, max(1, int(n * density)), seed)
    source = some_source(graph, seed)
    if source is None:
        return
    profile = dataclasses.replace(tiny_profile(((128, 2, 1.0), (512, 4, 3.0), (2048, 8, 9.0)), memory_ns=30.0),
                                  loop=LOOP)
    table = predict_cpu(graph, bfs(graph, source), profile, warm=bool(seed % 2))
    demands = table[["core_ns", "l1_ns", "l2_ns", "l3_ns", "mem_ns"]].to_numpy()
    assert np.allclose(table["predicted_ns"], demands.sum(axis=1))
    assert np.allclose(table["bound_ns"], demands.max(axis=1)) and (demands >= 0).all()
    assert (table["edges"] == table["jobs_nf2"]).all() and (table["edges"] == table["jobs_edl"]).all()
    assert (table["stores"] == table["jobs_op"]).all() and (table["frontier"] * 2 == table["jobs_erl"]).all()


def test_a_warm_cache_holds_what_the_previous_run_left():
    graph = figure2_graph()
    trace = cpu_trace(graph, bfs(graph, 0))
    cold = cache_levels(trace, tiny_profile())
    warm = cache_levels(trace, tiny_profile(), warm=True)
    assert (cold == 3).sum() == 3 and (warm == 0).all()  # three first touches from memory, then none
    with pytest.raises(InputError, match="warm start needs the CPUTrace"):
        cache_levels(trace.line_ids, tiny_profile(), warm=True)
    lru = cache_levels(trace, tiny_profile(), "lru", warm=True)
    assert (lru == 0).all()


def loop_toml(**changes) -> bytes:
    loop = {"call_ns": 300.0, "scan_ns": 0.24, "vertex_ns": 0.1, "branch_ns": 6.0, "gather_ns": [0.6, 0.7, 2.0, 12.0],
            "store_ns": 0.1, "store_branch_ns": 8.0, **changes}
    lines = [f"{key} = {value!r}" if not isinstance(value, str) else f"{key} = {value}" for key, value in loop.items()
             if value is not None]
    return ("""name = "box"
kind = "cpu"
description = "toy"
[hardware]
clock_ghz = 2.0
line_bytes = 64
[[levels]]
name = "L1"
bytes = 32768
ways = 8
service_ns = 1.5
[[levels]]
name = "L2"
bytes = 1048576
ways = 8
service_ns = 5.0
[[levels]]
name = "L3"
bytes = 33554432
ways = 16
service_ns = 20.0
[memory]
service_ns = 90.0
[service]
measured = true
provenance = "test"
[loop]
""" + "\n".join(lines) + "\n").encode()


def test_a_parallel_loop_table_needs_its_threads():
    table = loop_toml().decode() + "[parallel_loop]\n" + loop_toml().decode().split("[loop]\n")[1]
    with pytest.raises(InputError, match="parallel_loop.threads: missing key"):
        parse_profile_bytes(table.encode(), "box", "box.toml")
    profile = parse_profile_bytes((table + "threads = 4\n").encode(), "box", "box.toml")
    assert profile.parallel_loop == dataclasses.replace(profile.loop, threads=4) and profile.loop.threads is None
    with pytest.raises(InputError, match="loop.threads: unknown key"):
        parse_profile_bytes(loop_toml(threads=4), "box", "box.toml")


def test_a_profile_with_loop_costs_loads():
    profile = parse_profile_bytes(loop_toml(), "box", "box.toml")
    assert profile.loop == LoopCosts(300.0, 0.24, 0.1, 6.0, (0.6, 0.7, 2.0, 12.0), 0.1, 8.0)
    assert load_profile("westmere", kind="cpu").loop is None


@pytest.mark.parametrize("change, message", [
    ({"gather_ns": [0.6, 0.7, 2.0]}, "loop.gather_ns: must be an array of 4 numbers"),
    ({"scan_ns": -1.0}, "loop.scan_ns: must be > 0"),
    ({"branch_ns": None}, "loop.branch_ns: missing key"),
    ({"extra_ns": 1.0}, "loop.extra_ns: unknown key"),
    ({"store_ns": '"fast"'}, "loop.store_ns: must be a number"),
    ({"gather_ns": [0.6, 0.7, 2.0, 0.0]}, r"loop.gather_ns\[3\]: must be > 0"),
])
def test_bad_loop_tables_are_one_clear_error(change, message):
    with pytest.raises(InputError, match=message) as raised:
        parse_profile_bytes(loop_toml(**change), "box", "box.toml")
    assert "\n" not in str(raised.value)


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(["call_ns", "scan_ns", "vertex_ns", "branch_ns", "store_ns", "store_branch_ns",
                            "gather_ns"]),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10, 10), st.text(max_size=5),
                       st.lists(st.floats(-1, 50), max_size=6)))
def test_loop_values_either_load_or_fail_in_one_line(key, value):
    text = repr(value) if not isinstance(value, str) else '"' + value.replace("\\", "").replace('"', "") + '"'
    text = text.replace("inf", "inf").replace("nan", "nan")
    try:
        profile = parse_profile_bytes(loop_toml(**{key: text}), "box", "box.toml")
    except InputError as error:
        assert "\n" not in str(error)
        return
    got = getattr(profile.loop, key)
    assert np.all(np.isfinite(got)) and np.all(np.asarray(got) >= 0)


def test_measured_profile_carries_its_loop_costs(tmp_path):
    measured = {
        **measured_box("Some CPU"),
        "loop": {"call_ns": 310.0, "scan_ns": 0.2385, "vertex_ns": -0.01, "branch_ns": 6.3,
                 "gather_ns": [0.58, 0.69, 1.96, 12.57], "store_ns": -0.02, "store_branch_ns": 8.2},
        "loop_working_sets": [16384, 524288, 16777216, 2**29],
    }
    path = tmp_path / "box.toml"
    measured["parallel_loop"] = {**measured["loop"], "call_ns": 1400.0, "scan_ns": 0.3, "threads": 2}
    path.write_text(cpu_microbench.profile_toml(measured, "box", "python -m opmachine.cpu_microbench --out box.toml"))
    profile = load_profile(str(path), kind="cpu")
    # a cost the timer cannot tell from zero is written as the floor (0.001 ns), a store cost as 0
    assert profile.loop == LoopCosts(310.0, 0.2385, 0.001, 6.3, (0.58, 0.69, 1.96, 12.57), 0.0, 8.2)
    assert profile.parallel_loop == LoopCosts(1400.0, 0.3, 0.001, 6.3, (0.58, 0.69, 1.96, 12.57), 0.0, 8.2, threads=2)


def test_loop_costs_are_measured_positive_and_finite():
    costs = measure_loop_costs([4096, 16384, 65536], 1 << 20, repeats=3)
    assert costs["working_sets"] == [2048, 8192, 32768, 1 << 20]
    assert len(costs["gather_ns"]) == 4 and all(np.isfinite(costs["gather_ns"]))
    for key in ("call_ns", "scan_ns", "vertex_ns", "branch_ns", "store_ns", "store_branch_ns"):
        assert np.isfinite(costs[key])
    assert costs["scan_ns"] > 0 and costs["branch_ns"] > 0  # a mispredicted branch costs the pipeline's refill
    parallel = parallel_loop_costs([4096, 16384, 65536], 1 << 20, repeats=3)
    assert parallel["threads"] == numba.get_num_threads() and np.isfinite(parallel["call_ns"])
    assert parallel["scan_ns"] > 0 and len(parallel["gather_ns"]) == 4


def test_validate_cpu_prints_one_json_object():
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, str(root / "bench" / "validate_cpu.py"), "--profile", "epyc-kvm",
                           "--no-sweep", "--json", "--repeats", "1", "rmat:scale=10,ef=8", "grid2d:side=20"],
                          capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert [g["graph"] for g in summary["graphs"]] == ["rmat:scale=10,ef=8", "grid2d:side=20"]
    for graph in summary["graphs"]:
        assert -1 < graph["whole"] < 10 and graph["mape"] >= 0  # signed error of a positive prediction
    assert "== rmat:scale=10,ef=8" in done.stderr  # the tables go to stderr, so stdout stays one object


# ----------------------------------------------------------------------------------------------
# The multi-threaded loop

def test_chunk_bounds_are_numbas_static_schedule():
    threads = min(2, numba.config.NUMBA_NUM_THREADS)
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        for n in (1, 2, 5, 20, 21, 1001):
            owner = _thread_of_each_node(np.zeros(n, dtype=np.int64))
            expected = np.concatenate([np.full(end - first, t) for t, (first, end) in enumerate(chunk_bounds(n, threads))])
            assert owner.tolist() == expected.tolist(), n
    finally:
        numba.set_num_threads(previous)


@numba.njit(parallel=True)
def _thread_of_each_node(out):
    for v in numba.prange(out.size):
        out[v] = numba.get_thread_id()
    return out


def test_one_thread_issues_the_serial_trace():
    graph = random_graph(50, 200, 3, undirected=True)
    front = bfs(graph, some_source(graph, 3))
    serial, (alone,) = cpu_trace(graph, front), thread_traces(graph, front, 1)
    assert np.array_equal(serial.line_ids, alone.line_ids) and np.array_equal(serial.servers, alone.servers)
    assert np.array_equal(serial.round_ptr, alone.round_ptr)


def test_a_thread_does_not_see_the_other_threads_stores():
    # 1 -> 0, 1 -> 5, then 0 -> 3 and 5 -> 3: nodes 0 and 5 expand in round 2 on threads 0 and 1.
    graph = csr_from_edges(EdgeList(np.array([1, 1, 0, 5]), np.array([0, 5, 3, 3]), 6))
    front = bfs(graph, 1)
    stores = [np.add.reduceat(trace.servers == OP, trace.round_ptr[:-1]) for trace in thread_traces(graph, front, 2)]
    serial = cpu_trace(graph, front)
    assert np.add.reduceat(serial.servers == OP, serial.round_ptr[:-1]).tolist() == [2, 1, 0]
    assert (stores[0] + stores[1]).tolist() == [2, 2, 0]  # node 3 stored by both threads in round 2


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 80), density=st.floats(0.3, 5.0), seed=st.integers(0, 10_000), threads=st.integers(1, 5))
def test_threads_split_the_rounds_work(n, density, seed, threads):
    graph, front = random_bfs(n, density, seed)
    if front is None:
        return
    serial = cpu_trace(graph, front)

    def per_round(trace, server):
        return np.array([np.count_nonzero(trace.servers[trace.round(r)] == server) for r in range(1, trace.rounds + 1)])

    traces = thread_traces(graph, front, threads)
    for server in (NF1, ERL, EDL, NF2):  # every node tested once, every frontier node expanded once
        assert sum(per_round(trace, server) for trace in traces).tolist() == per_round(serial, server).tolist()
    assert (sum(per_round(trace, OP) for trace in traces) >= per_round(serial, OP)).all()


def test_one_thread_predicts_the_serial_loop_with_the_parallel_call():
    graph = random_graph(60, 240, 5, undirected=True)
    front = bfs(graph, some_source(graph, 5))
    profile = dataclasses.replace(tiny_profile(), loop=LOOP, parallel_loop=dataclasses.replace(LOOP, call_ns=777.0, threads=2))
    serial = predict_cpu(graph, front, profile, warm=True)
    alone = predict_cpu_threads(graph, front, profile, 1, warm=True)
    assert np.allclose(alone["predicted_ns"], serial["predicted_ns"] - LOOP.call_ns + 777.0)
    assert (alone["slowest"] == 0).all() and np.allclose(alone["imbalance"], 1.0)
    two = predict_cpu_threads(graph, front, profile, 2, warm=True)
    demands = two[["thread0_ns", "thread1_ns"]].to_numpy()
    assert np.allclose(two["predicted_ns"], 777.0 + demands.max(axis=1))
    assert two["slowest"].tolist() == demands.argmax(axis=1).tolist()
    with pytest.raises(InputError, match="no measured costs of the multi-threaded loop"):
        predict_cpu_threads(graph, front, dataclasses.replace(tiny_profile(), loop=LOOP), 2)
    with pytest.raises(InputError, match="threads must be at least 1"):
        predict_cpu_threads(graph, front, profile, 0)


def test_the_multi_threaded_loop_is_timed_and_checked():
    graph = load_graph("rmat:scale=10,ef=8")
    source = some_source(graph, 1)
    rounds = measure_cpu_rounds(graph, source, repeats=2, threads=min(2, numba.config.NUMBA_NUM_THREADS))
    assert len(rounds) == bfs(graph, source).depth and (rounds["measured_ns"] > 0).all()
    with pytest.raises(InputError, match="threads must be 1.."):
        measure_cpu_rounds(graph, source, threads=10_000)


# ----------------------------------------------------------------------------------------------
# Counters mode

def test_software_events_count_this_process():
    with PerfCounters(["page-faults", "task-clock"]) as counters:
        with counters.counting():  # 32 MiB of fresh anonymous pages (malloc might hand back touched ones)
            pages = mmap.mmap(-1, 1 << 25)
            touched = np.frombuffer(pages, dtype=np.uint8)
            touched[::4096] = 1
        counts = counters.read()
    assert int(touched.sum()) == (1 << 25) // 4096
    del touched
    pages.close()
    assert counts["page-faults"] > 0 and counts["task-clock"] > 0
    with pytest.raises(InputError, match="unknown event 'cycles-ish'"):
        PerfCounters(["cycles-ish"])


def test_round_counters_are_measured_or_refused_in_one_line():
    graph = load_graph("rmat:scale=8,ef=8")
    source = some_source(graph, 1)
    try:
        counts = measure_cpu_counters(graph, source)
    except CountersUnavailable as error:  # a VM without cache events, like this project's CI machine
        assert "\n" not in str(error) and str(error).startswith("hardware counter ")
        return
    assert counts.columns.tolist() == ["round", "level", "loads", "l1_misses", "llc_misses"]
    assert len(counts) == bfs(graph, source).depth and (counts["loads"] >= counts["l1_misses"]).all()


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 70), density=st.floats(0.3, 4.0), seed=st.integers(0, 10_000))
def test_counters_equal_to_the_simulation_give_its_prediction(n, density, seed):
    graph, front = random_bfs(n, density, seed)
    if front is None:
        return
    profile = dataclasses.replace(tiny_profile(((128, 2, 1.0), (512, 4, 3.0), (2048, 8, 9.0)), memory_ns=30.0),
                                  loop=LOOP)
    rounds = pd.DataFrame({"round": range(1, front.depth + 1), "loads": 1, "l1_misses": 0, "llc_misses": 0})
    simulated = predict_cpu_counted(graph, front, profile, rounds)
    own = rounds.assign(l1_misses=simulated["sim_l1_misses"].to_numpy(), llc_misses=simulated["sim_llc_misses"].to_numpy())
    counted = predict_cpu_counted(graph, front, profile, own)
    assert np.allclose(counted["predicted_ns"], predict_cpu(graph, front, profile, warm=True)["predicted_ns"])
    assert all(error == 0 or np.isnan(error) for error in miss_errors(counted).values())  # nan: none measured


def test_figure2_counters_mode_by_hand():
    graph = figure2_graph()
    profile = dataclasses.replace(tiny_profile(), loop=LOOP)
    # Cold, round 1's loads beyond L1 are the first touches of level, row_start and edge_dst, all
    # from memory (3). Measured: 6 L1 misses, all LLC misses: memory counts double, so round 1's two
    # stream starts from memory count 4: 4 x (2000 - 2) = 7992 ns, on top of the core's 3426 and the
    # edges' 4 L1 loads (2 x 2).
    counts = pd.DataFrame({"round": [1, 2, 3], "loads": [12, 18, 12], "l1_misses": [6, 0, 0], "llc_misses": [6, 0, 0]})
    counted = predict_cpu_counted(graph, bfs(graph, 0), profile, counts, warm=False)
    assert counted["sim_l1_misses"].tolist() == [3, 0, 0] and counted["sim_llc_misses"].tolist() == [3, 0, 0]
    assert counted["mem_ns"].tolist() == [7992.0, 0.0, 0.0]
    assert counted["predicted_ns"].tolist() == [3426.0 + 4.0 + 7992.0, 6449.0, 3136.0]
    assert miss_errors(counted) == {"l1_misses": -0.5, "llc_misses": -0.5}


def test_counters_mode_refuses_bad_tables():
    graph = figure2_graph()
    front = bfs(graph, 0)
    profile = dataclasses.replace(tiny_profile(), loop=LOOP)
    good = pd.DataFrame({"round": [1, 2, 3], "loads": 1, "l1_misses": 0, "llc_misses": 0})
    with pytest.raises(InputError, match="missing column 'llc_misses'"):
        predict_cpu_counted(graph, front, profile, good.drop(columns="llc_misses"))
    with pytest.raises(InputError, match=r"rounds must be 1..3"):
        predict_cpu_counted(graph, front, profile, good.iloc[:2])
    with pytest.raises(InputError, match="has no \\[loop\\] costs"):
        predict_cpu_counted(graph, front, tiny_profile(), good)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(2, 60), density=st.floats(0.3, 4.0), seed=st.integers(0, 10_000), chunk=st.integers(1, 50),
       warm=st.booleans())
def test_a_trace_run_through_the_caches_in_chunks_is_served_alike(n, density, seed, chunk, warm):
    graph, front = random_bfs(n, density, seed)
    if front is None:
        return
    trace = cpu_trace(graph, front)
    profile = tiny_profile(((128, 2, 1.0), (512, 4, 3.0), (2048, 8, 9.0)), memory_ns=30.0)
    whole = cache_levels(trace, profile, warm=warm)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(hierarchy, "SERIES_CHUNK", chunk)
        assert cache_levels(trace, profile, warm=warm).tolist() == whole.tolist()


# ----------------------------------------------------------------------------------------------
# Service curves: k independent chases at once

def test_independent_chases_are_timed_per_load():
    values = cpu_microbench.chains_ns(1 << 16, 64, chains=(1, 4), target_s=0.002)
    assert len(values) == 2 and all(0 < v < 1000 for v in values)


def test_an_mlp_table_loads_and_gives_the_achieved_mlp():
    text = loop_toml().decode() + ("[mlp]\nchains = [1, 2, 4]\nL1 = [1.6, 1.6, 0.8]\nL2 = [4.4, 3.0, 1.5]\n"
                                   "L3 = [16.0, 9.0, 4.0]\nmemory = [160.0, 80.0, 40.0]\n")
    profile = parse_profile_bytes(text.encode(), "box", "box.toml")
    assert profile.chains == (1, 2, 4) and profile.chains_ns["memory"] == (160.0, 80.0, 40.0)
    assert profile.achieved_mlp() == {"L1": 2.0, "L2": 4.4 / 1.5, "L3": 4.0, "memory": 4.0}
    assert parse_profile_bytes(loop_toml(), "box", "box.toml").achieved_mlp() is None
    for bad, message in ((text.replace("chains = [1, 2, 4]", "chains = [2, 4, 8]"), "mlp.chains: must be ascending"),
                         (text.replace("L2 = [4.4, 3.0, 1.5]", "L2 = [4.4, 3.0]"), "mlp.L2: must be an array of 3"),
                         (text.replace("memory = [160.0, 80.0, 40.0]\n", ""), "mlp.memory: missing key"),
                         (text.replace("L1 = [1.6, 1.6, 0.8]", "L1 = [1.6, -1.0, 0.8]"), r"mlp.L1\[1\]: must be > 0")):
        with pytest.raises(InputError, match=message):
            parse_profile_bytes(bad.encode(), "box", "box.toml")


def test_opm_prints_the_serial_and_the_multi_threaded_cpu_bfs(capsys):
    from simdreport.cli import main

    assert main(["opm", "rmat:scale=9,ef=8", "--cpu", "epyc-kvm", "--cpu-threads", "2", "--format", "json",
                 "--per-level"]) == 0
    out = json.loads(capsys.readouterr().out)
    graph = load_graph("rmat:scale=9,ef=8")
    front = bfs(graph, pick_source_of(graph))
    cpu = load_profile("epyc-kvm", kind="cpu")
    assert out["summary"]["threads"] == 2
    assert out["summary"]["threads_predicted_ns"] == pytest.approx(predict_cpu_threads(graph, front, cpu, 2, warm=True)
                                                                   ["predicted_ns"].sum())
    assert out["summary"]["predicted_ns"] == pytest.approx(predict_cpu(graph, front, cpu, warm=True)["predicted_ns"].sum())
    assert [row["threads_slowest"] in (0, 1) for row in out["per_round"]] == [True] * front.depth
    assert main(["opm", "rmat:scale=9,ef=8", "--cpu", "epyc-kvm", "--cpu-threads", "2"]) == 0
    assert "on 2 threads (multi-threaded loop" in capsys.readouterr().out


def pick_source_of(graph) -> int:
    """The source `opm` picks by default (seed 1)."""
    from simdmodel.frontier import pick_sources

    return int(pick_sources(graph, 1, 1)[0])
