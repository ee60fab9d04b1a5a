"""CPU mapping of the BFS operator machine (seed 003 §4-5): trace, cache levels, prediction,
measurement, perf support and the microbenchmark's profile writing.

Slow, obviously-correct references (a pure-Python Listing 1 with addresses, a per-set LRU list, an
LRU stack) live at the top of this file.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from opmachine import cpu, cpu_microbench
from opmachine.cpu import kernel
from opmachine.bfs_machine import SERVERS, bfs_completions
from opmachine.cpu import cache_levels, cpu_trace, measure_cpu_rounds, perf_support, predict_cpu
from opmachine.profile import CacheLevel, CPUProfile, load_profile
from simdmodel.errors import InputError
from simdmodel.frontier import Frontiers, bfs
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.load import load_graph


# ----------------------------------------------------------------------------------------------
# Naive references

def naive_bases(n, m):
    """row_start at 0, then edge_dst, then level, each rounded up to a 4096-byte boundary."""
    up = lambda nbytes: -(-nbytes // 4096) * 4096  # noqa: E731
    dst = up(4 * (n + 1))
    return {"row_start": 0, "edge_dst": dst, "level": dst + up(4 * m)}


def naive_trace(indptr, indices, source, rounds):
    """Listing 1 run round by round in plain Python: per round a list of (byte address, server name)."""
    n = len(indptr) - 1
    base = naive_bases(n, len(indices))
    level = [-1] * n
    level[source] = 0
    out = []
    for r in range(1, rounds + 1):
        accesses = []
        for v in range(n):
            accesses.append((base["level"] + 4 * v, "NF1"))
            if level[v] != r - 1:
                continue
            accesses.append((base["row_start"] + 4 * v, "ERL"))
            accesses.append((base["row_start"] + 4 * (v + 1), "ERL"))
            for e in range(int(indptr[v]), int(indptr[v + 1])):
                dst = int(indices[e])
                accesses.append((base["edge_dst"] + 4 * e, "EDL"))
                accesses.append((base["level"] + 4 * dst, "NF2"))
                if level[dst] == -1:
                    level[dst] = r
                    accesses.append((base["level"] + 4 * dst, "OP"))
        out.append(accesses)
    return out


def naive_setassoc_hits(lines, sets, ways):
    """One set-associative LRU cache: per set a list of lines, most recently used last."""
    content = [[] for _ in range(sets)]
    hits = []
    for line in lines:
        ways_of_set = content[line % sets]
        hit = line in ways_of_set
        hits.append(hit)
        if hit:
            ways_of_set.remove(line)
        elif len(ways_of_set) == ways:
            ways_of_set.pop(0)
        ways_of_set.append(line)
    return hits


def naive_series_levels(lines, geometry):
    """Levels in series: level k sees only the misses of level k-1; len(geometry) = memory."""
    served = [len(geometry)] * len(lines)
    reaching = list(range(len(lines)))
    for k, (sets, ways) in enumerate(geometry):
        hits = naive_setassoc_hits([lines[i] for i in reaching], sets, ways)
        for i, hit in zip(reaching, hits, strict=True):
            if hit:
                served[i] = k
        reaching = [i for i, hit in zip(reaching, hits, strict=True) if not hit]
    return served


def naive_inclusive_lru_levels(lines, capacities):
    """Inclusive fully associative LRU: an LRU stack; served by the first capacity > depth in it."""
    stack = []  # most recently used first
    served = []
    for line in lines:
        if line in stack:
            depth = stack.index(line)  # distinct other lines used since this one
            stack.remove(line)
            served.append(next((k for k, c in enumerate(capacities) if depth < c), len(capacities)))
        else:
            served.append(len(capacities))
        stack.insert(0, line)
    return served


# ----------------------------------------------------------------------------------------------
# Fixtures

def tiny_profile(levels=((256, 4, 1.0), (1024, 4, 4.0), (4096, 8, 20.0)), memory_ns=100.0,
                 line_bytes=64):
    """A toy CPU profile: (bytes, ways, service_ns) per level."""
    return CPUProfile(
        name="tiny", description="toy caches for tests", path="", clock_ghz=1.0,
        line_bytes=line_bytes,
        levels=tuple(CacheLevel(f"L{k + 1}", b, w, s) for k, (b, w, s) in enumerate(levels)),
        memory_ns=memory_ns, measured=False, provenance={"provenance": "test"},
    )


def figure2_graph():
    # Seed 003 Figure 2: A..F = 0..5; edges A->B, A->E, B->E, B->C, B->D, E->F (in this order).
    src = np.array([0, 0, 1, 1, 1, 4])
    dst = np.array([1, 4, 4, 2, 3, 5])
    return csr_from_edges(EdgeList(src, dst, 6))


def random_graph(n, m, seed, undirected=False):
    rng = np.random.default_rng(seed)
    return csr_from_edges(EdgeList(rng.integers(0, n, m), rng.integers(0, n, m), n, undirected=undirected))


def some_source(graph, seed):
    candidates = np.flatnonzero(graph.degrees() > 0)
    return None if candidates.size == 0 else int(candidates[seed % candidates.size])


# ----------------------------------------------------------------------------------------------
# Trace

def test_figure2_trace_by_hand():
    graph = figure2_graph()
    front = bfs(graph, 0)  # levels A0 B1 C2 D2 E1 F2: depth 3, so 3 rounds
    trace = cpu_trace(graph, front, line_bytes=1)
    # Layout: row_start (7 x 4 B) at 0, edge_dst (6 x 4 B) at 4096, level (6 x 4 B) at 8192.
    assert trace.bases_bytes == {"row_start": 0, "edge_dst": 4096, "level": 8192, "end": 12288}
    # Round 1 (LEVEL 1, expands {A}): NF1 6; ERL 2 (row_start[0], [1]); EDL 2, NF2 2 (A->B,
    #   A->E); OP 2 (B, E labelled) -> 14.
    # Round 2 (expands {B, E}): NF1 6; ERL 2 x 2 = 4; EDL = NF2 = 3 (B) + 1 (E) = 4; OP 3 (C, D,
    #   F; E already labelled, as in §3.2's C_OP = 3) -> 21.
    # Round 3 (expands {C, D, F}, no out-edges): NF1 6; ERL 3 x 2 = 6 -> 12.  Whole BFS: 47.
    assert trace.rounds == 3
    assert np.diff(trace.round_ptr).tolist() == [14, 21, 12]
    per_round = [np.bincount(trace.servers[trace.round(r)], minlength=6).tolist() for r in (1, 2, 3)]
    #                ANI NF1 ERL EDL NF2 OP
    assert per_round == [[0, 6, 2, 2, 2, 2], [0, 6, 4, 4, 4, 3], [0, 6, 6, 0, 0, 0]]
    # Round 1 in program order: level[0]; row_start[0], row_start[1]; edge_dst[0], level[1],
    # store level[1]; edge_dst[1], level[4], store level[4]; then level[1..5].
    assert trace.line_ids[trace.round(1)].tolist() == [
        8192, 0, 4, 4096, 8196, 8196, 4100, 8208, 8208, 8196, 8200, 8204, 8208, 8212]
    assert [SERVERS[s] for s in trace.servers[trace.round(1)]] == [
        "NF1", "ERL", "ERL", "EDL", "NF2", "OP", "EDL", "NF2", "OP", "NF1", "NF1", "NF1", "NF1", "NF1"]
    # With 64-byte lines every array is one line: ids 0 (row_start), 64 (edge_dst), 128 (level).
    lines = cpu_trace(graph, front, line_bytes=64)
    assert set(lines.line_ids.tolist()) == {0, 64, 128}
    assert lines.line_ids.dtype == np.int32 and lines.servers.dtype == np.int8


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 40), density=st.floats(0.5, 4.0), seed=st.integers(0, 10_000),
       undirected=st.booleans(), line_bytes=st.sampled_from([1, 4, 64, 128]))
def test_trace_matches_naive_listing1(n, density, seed, undirected, line_bytes):
    graph = random_graph(n, max(1, int(n * density)), seed, undirected)
    source = some_source(graph, seed)
    if source is None:
        return
    front = bfs(graph, source)
    trace = cpu_trace(graph, front, line_bytes=line_bytes)
    reference = naive_trace(graph.indptr, graph.indices, source, front.depth)
    assert trace.rounds == front.depth == len(reference)
    for r, accesses in enumerate(reference, start=1):
        part = trace.round(r)
        assert trace.line_ids[part].tolist() == [address // line_bytes for address, _ in accesses]
        assert [SERVERS[s] for s in trace.servers[part]] == [server for _, server in accesses]
    # Per-server job counts agree with the abstract machine's completions (ERL: two loads per node).
    table = bfs_completions(graph, front)
    counts = np.stack([np.bincount(trace.servers[trace.round(r)], minlength=6) for r in range(1, trace.rounds + 1)])
    assert counts[:, 0].sum() == 0  # ANI issues no memory instruction on the CPU
    assert counts[:, 1].tolist() == table["c_nf1"].tolist()
    assert counts[:, 2].tolist() == (2 * table["c_erl"]).tolist()
    assert counts[:, 3].tolist() == table["c_edl"].tolist()
    assert counts[:, 4].tolist() == table["c_nf2"].tolist()
    assert counts[:, 5].tolist() == table["c_op"].tolist()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 60), density=st.floats(0.5, 4.0), seed=st.integers(0, 10_000), undirected=st.booleans())
def test_timed_kernel_and_traced_twin_agree(n, density, seed, undirected):
    # The timed kernel (listing1_round, on the aligned kernel arrays) and its recording twin behind
    # cpu_trace label the same vertices in every round, and both end at simdmodel's BFS levels.
    graph = random_graph(n, max(1, int(n * density)), seed, undirected)
    source = some_source(graph, seed)
    if source is None:
        return
    front = bfs(graph, source)
    row_start, edge_dst, level = cpu.kernel_arrays(graph)
    kernel.reset_levels(level, source)
    labelled = [kernel.listing1_round(row_start, edge_dst, level, r) for r in range(1, front.depth + 1)]
    trace = cpu_trace(graph, front, line_bytes=1)
    stores = [int((trace.servers[trace.round(r)] == SERVERS.index("OP")).sum()) for r in range(1, trace.rounds + 1)]
    assert labelled == stores
    assert labelled[-1] == 0 and np.array_equal(level, front.levels)
    assert kernel.bfs_all_rounds(row_start, edge_dst, level, source) == front.depth


def test_trace_rejects_levels_that_are_not_this_graphs_bfs():
    graph = figure2_graph()
    front = bfs(graph, 0)  # levels A0 B1 C2 D2 E1 F2
    wrong = Frontiers(0, "sorted", np.array([0, 1, 2, 2, 2, 2], dtype=np.int32), front.vertices, front.level_ptr)
    with pytest.raises(InputError, match="levels differ"):
        cpu_trace(graph, wrong)
    with pytest.raises(InputError, match="levels differ"):
        bfs_completions(graph, wrong)


def test_trace_rejects_foreign_frontiers_and_bad_line_size():
    graph = figure2_graph()
    other = random_graph(6, 12, 3)
    with pytest.raises(InputError, match="levels differ"):
        cpu_trace(other, bfs(graph, 0))
    with pytest.raises(InputError, match="label 6 vertices"):
        cpu_trace(random_graph(7, 10, 1), bfs(graph, 0))
    with pytest.raises(InputError, match="power of two"):
        cpu_trace(graph, bfs(graph, 0), line_bytes=48)
    with pytest.raises(InputError, match="Frontiers"):
        cpu_trace(graph, None)


# ----------------------------------------------------------------------------------------------
# Cache levels

def test_cache_levels_by_hand():
    # L1: 128 B, 1 way -> 2 direct-mapped sets; L2: 256 B, 2 ways -> 2 sets; L3: 1024 B, 16 ways.
    profile = tiny_profile(((128, 1, 1.0), (256, 2, 4.0), (1024, 16, 20.0)))
    lines = np.array([0, 2, 0, 1, 3, 1, 2])
    # setassoc: L1 (set = line % 2) misses all 7 (0/2 and 1/3 evict each other). L2 sees all 7:
    # set 0 holds {0, 2}: the 3rd and 7th hit; set 1 holds {1, 3}: the 6th hits. L3 sees
    # 0, 2, 1, 3, all cold -> memory.
    assert cache_levels(lines, profile, "setassoc").tolist() == [3, 3, 1, 3, 3, 1, 1]
    # lru (capacities 2, 4, 16 lines): distances -1, -1, 1, -1, -1, 1, 3 -> L1, L1, L2 for the reuses.
    assert cache_levels(lines, profile, "lru").tolist() == [3, 3, 0, 3, 3, 0, 1]


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, 40), min_size=0, max_size=300),
       shape=st.sampled_from([((128, 1), (512, 2), (2048, 4)), ((256, 4), (1024, 4), (4096, 8)),
                              ((192, 3), (768, 4), (3072, 6))]))
def test_setassoc_levels_match_naive_series(ids, shape):
    profile = tiny_profile(tuple((b, w, 1.0 + k) for k, (b, w) in enumerate(shape)))
    geometry = [(b // (w * 64), w) for b, w in shape]
    got = cache_levels(np.array(ids, dtype=np.int64), profile, "setassoc")
    assert got.dtype == np.int8
    assert got.tolist() == naive_series_levels(ids, geometry)


@settings(max_examples=60, deadline=None)
@given(ids=st.lists(st.integers(0, 40), min_size=0, max_size=300))
def test_lru_levels_match_naive_inclusive_lru(ids):
    profile = tiny_profile(((128, 2, 1.0), (512, 4, 2.0), (2048, 8, 3.0)))  # 2, 8, 32 lines
    got = cache_levels(np.array(ids, dtype=np.int32), profile, "lru")
    assert got.tolist() == naive_inclusive_lru_levels(ids, [2, 8, 32])


def test_cache_levels_input_errors():
    profile = tiny_profile()
    with pytest.raises(InputError, match="unknown cache model"):
        cache_levels(np.array([1, 2]), profile, "fifo")
    with pytest.raises(InputError, match=">= 0"):
        cache_levels(np.array([1, -2]), profile)
    graph = figure2_graph()
    with pytest.raises(InputError, match="64-byte lines"):
        cache_levels(cpu_trace(graph, bfs(graph, 0), line_bytes=128), profile)


# ----------------------------------------------------------------------------------------------
# Prediction

def test_predict_figure2_by_hand():
    graph = figure2_graph()
    # L1: 256 B, 4 ways -> one set of 4 lines: the three lines 0, 64, 128 of the whole BFS fit.
    profile = tiny_profile(((256, 4, 1.0), (1024, 4, 4.0), (4096, 8, 20.0)), memory_ns=100.0)
    for model in ("setassoc", "lru"):
        table = predict_cpu(graph, bfs(graph, 0), profile, model)
        # Round 1: first touches of level (128), row_start (0), edge_dst (64) go to memory: C_MEM
        #   = 3, C_L1 = 14 - 3 = 11; predicted = max(11 x 1, 3 x 100) = 300 (MEM); serial = 311.
        # Round 2: 21 L1 hits -> 21 x 1 = 21 (L1). Round 3: 12 L1 hits -> 12 (L1).
        assert table["round"].tolist() == [1, 2, 3] and table["level"].tolist() == [0, 1, 2]
        assert table["jobs"].tolist() == [14, 21, 12]
        assert table["c_l1"].tolist() == [11, 21, 12]
        assert table["c_mem"].tolist() == [3, 0, 0]
        assert table["c_l2"].tolist() == table["c_l3"].tolist() == [0, 0, 0]
        assert table["bottleneck"].tolist() == ["MEM", "L1", "L1"]
        assert table["predicted_ns"].tolist() == [300.0, 21.0, 12.0]
        assert table["serial_ns"].tolist() == [311.0, 21.0, 12.0]
        assert table["v_mem"].tolist()[0] == pytest.approx(3 / 14)
        assert table["jobs_erl"].tolist() == [2, 4, 6] and table["jobs_op"].tolist() == [2, 3, 0]


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 120), density=st.floats(0.5, 6.0), seed=st.integers(0, 10_000),
       model=st.sampled_from(cpu.MODELS))
def test_predict_invariants(n, density, seed, model):
    graph = random_graph(n, max(1, int(n * density)), seed, undirected=bool(seed % 2))
    source = some_source(graph, seed)
    if source is None:
        return
    profile = tiny_profile(((128, 2, 1.0), (512, 4, 3.0), (2048, 8, 9.0)), memory_ns=30.0)
    table = predict_cpu(graph, bfs(graph, source), profile, model)
    counts = table[["c_l1", "c_l2", "c_l3", "c_mem"]].to_numpy()
    assert (counts.sum(axis=1) == table["jobs"]).all()
    servers = table[["jobs_nf1", "jobs_erl", "jobs_edl", "jobs_nf2", "jobs_op"]].to_numpy()
    assert (servers.sum(axis=1) == table["jobs"]).all()
    demand = counts * np.array([1.0, 3.0, 9.0, 30.0])
    assert table["bottleneck"].tolist() == [cpu.LEVEL_NAMES[k] for k in demand.argmax(axis=1)]
    assert np.allclose(table["predicted_ns"], demand.max(axis=1))
    assert np.allclose(table["serial_ns"], demand.sum(axis=1))
    assert np.allclose(table["predicted_ns"], table["jobs"] * (table[["v_l1", "v_l2", "v_l3", "v_mem"]].to_numpy()
                                                             * [1.0, 3.0, 9.0, 30.0]).max(axis=1))
    # Every line is first touched in memory: cold misses = distinct lines of the trace.
    trace = cpu_trace(graph, bfs(graph, source), line_bytes=64)
    assert table["c_mem"].sum() >= np.unique(trace.line_ids).size


def test_predict_with_westmere_profile_runs_on_a_generated_graph():
    graph = load_graph("rmat:scale=8,ef=8,seed=2")
    source = int(np.argmax(graph.degrees()))
    profile = load_profile("westmere", kind="cpu")
    table = predict_cpu(graph, bfs(graph, source), profile)
    assert len(table) == bfs(graph, source).depth
    assert set(table["bottleneck"]) <= set(cpu.LEVEL_NAMES)
    assert (table["predicted_ns"] <= table["serial_ns"]).all()


def test_predict_needs_three_levels():
    profile = tiny_profile(((256, 4, 1.0), (1024, 4, 4.0)))
    graph = figure2_graph()
    with pytest.raises(InputError, match="needs L1, L2 and L3"):
        predict_cpu(graph, bfs(graph, 0), profile)


# ----------------------------------------------------------------------------------------------
# Measurement and counters

def test_measure_rounds_gives_one_positive_time_per_round():
    graph = load_graph("grid2d:side=20")
    front = bfs(graph, 0)
    table = measure_cpu_rounds(graph, 0, repeats=3)
    assert table["round"].tolist() == list(range(1, front.depth + 1))
    assert table["level"].tolist() == list(range(front.depth))
    assert (table["measured_ns"] > 0).all()


def test_measure_rejects_bad_input():
    graph = figure2_graph()
    with pytest.raises(InputError, match="outside"):
        measure_cpu_rounds(graph, 17)
    with pytest.raises(InputError, match="repeats"):
        measure_cpu_rounds(graph, 0, repeats=0)


def test_kernel_arrays_are_page_aligned_4_byte():
    row_start, edge_dst, level = cpu.kernel_arrays(load_graph("grid2d:side=30"))
    for array in (row_start, edge_dst, level):
        assert array.dtype == np.int32 and array.ctypes.data % 4096 == 0


def test_run_one_bfs_from_the_command_line(capsys):
    assert cpu.main(["--graph", "grid2d:side=5", "--source", "0"]) == 0
    assert capsys.readouterr().out.strip() == "rounds 9 reached 25"  # corner of a 5x5 grid: levels 0..8
    assert cpu.main(["--graph", "grid2d:side=5", "--source", "99"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_perf_support_answers_with_a_reason():
    supported, reason = perf_support()
    assert isinstance(supported, bool)
    assert isinstance(reason, str) and reason.strip()


def test_perf_support_without_perf(monkeypatch):
    monkeypatch.setattr(cpu.measure.shutil, "which", lambda name: None)
    assert perf_support() == (False, "perf is not installed (no `perf` on PATH)")
    with pytest.raises(InputError, match="counters unavailable"):
        cpu.perf_cache_counts("grid2d:side=5", 0)


FAKE_PERF = """#!{python}
# Stands in for `perf stat -x, -e EVENTS -- COMMAND`: runs COMMAND, reports made-up counts on stderr.
import subprocess, sys
args = sys.argv[1:]
command = args[args.index("--") + 1:]
status = subprocess.run(command, stdout=subprocess.DEVNULL).returncode
base = 1000 if "--skip-bfs" in command else 5000
for k, event in enumerate(args[args.index("-e") + 1].split(",")):
    print(f"{{base + k}},,{{event}},100,100.00,,", file=sys.stderr)
sys.exit(status)
"""


def test_perf_cache_counts_subtracts_the_baseline_run(tmp_path, monkeypatch):
    perf = tmp_path / "perf"
    perf.write_text(FAKE_PERF.format(python=sys.executable))
    perf.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("PYTHONPATH", str(Path(cpu.__file__).resolve().parents[2]))
    assert perf_support() == (True, "perf stat counts " + ", ".join(cpu.PERF_EVENTS))
    # BFS run reports 5000 + k, the --skip-bfs baseline 1000 + k: 4000 per event.
    assert cpu.perf_cache_counts("grid2d:side=5", 0) == {event: 4000 for event in cpu.PERF_EVENTS}
    with pytest.raises(InputError, match="exit 2"):
        cpu.perf_cache_counts("grid2d:side=5", 99)  # the BFS command itself rejects the source


def test_perf_output_parsing():
    text = ("<not supported>,,L1-dcache-loads,0,100.00,,\n"
            "123,,L1-dcache-load-misses,1000,100.00,,\n")
    assert cpu.measure._parse_perf_csv(text) == {"L1-dcache-loads": "<not supported>", "L1-dcache-load-misses": "123"}


# ----------------------------------------------------------------------------------------------
# Microbenchmark

def make_sysfs(root, entries):
    for k, (level, kind, size, ways, line) in enumerate(entries):
        index = root / f"index{k}"
        index.mkdir()
        for name, value in (("level", level), ("type", kind), ("size", size),
                            ("ways_of_associativity", ways), ("coherency_line_size", line)):
            (index / name).write_text(f"{value}\n")


def test_read_sysfs_caches_skips_instruction_caches(tmp_path):
    make_sysfs(tmp_path, [(1, "Data", "32K", 8, 64), (1, "Instruction", "32K", 8, 64),
                          (2, "Unified", "1024K", 8, 64), (3, "Unified", "32M", 16, 64)])
    caches = cpu_microbench.read_sysfs_caches(tmp_path)
    assert [(c.level, c.type, c.size_bytes, c.ways, c.line_bytes) for c in caches] == [
        (1, "Data", 32768, 8, 64), (2, "Unified", 1048576, 8, 64), (3, "Unified", 33554432, 16, 64)]
    assert cpu_microbench.working_sets(caches)["L2"] == 524288
    with pytest.raises(InputError, match="no data or unified"):
        cpu_microbench.read_sysfs_caches(tmp_path / "index1")


def test_chase_array_is_one_cycle_through_every_line():
    next_slot = cpu_microbench.chase_array(64 * 100, 64, seed=5)
    assert next_slot.size == 800  # 100 lines x 8 pointers
    seen, p = set(), 0
    for _ in range(100):
        assert p % 8 == 0 and p not in seen
        seen.add(p)
        p = int(next_slot[p])
    assert p == 0 and len(seen) == 100


def test_load_latency_is_positive_for_a_small_working_set():
    assert 0 < cpu_microbench.load_latency_ns(16384, 64, repeats=1, target_s=0.01) < 1000


def measured_box(cpu: str = 'Some "CPU"') -> dict:
    """What `cpu_microbench.measure_profile` returns for a made-up machine, without the loop's costs."""
    return {
        "line_bytes": 64, "clock_ghz": 2.5, "cpu": cpu,
        "levels": [{"name": "L1", "bytes": 32768, "ways": 8, "service_ns": 1.5, "working_set_bytes": 16384},
                   {"name": "L2", "bytes": 1048576, "ways": 8, "service_ns": 5.0, "working_set_bytes": 524288},
                   {"name": "L3", "bytes": 33554432, "ways": 16, "service_ns": 20.0,
                    "working_set_bytes": 16777216}],
        "memory_ns": 90.0, "memory_working_set_bytes": 2**29,
    }


def test_profile_toml_loads_back(tmp_path):
    measured = measured_box()
    path = tmp_path / "box.toml"
    path.write_text(cpu_microbench.profile_toml(measured, "box", "python -m opmachine.cpu_microbench --out box.toml",
                                                date="2025-01-01T00:00:00Z"))
    profile = load_profile(str(path), kind="cpu")
    assert profile.measured and profile.line_bytes == 64 and profile.memory_ns == 90.0
    assert [(l.name, l.bytes, l.ways, l.service_ns) for l in profile.levels] == [
        ("L1", 32768, 8, 1.5), ("L2", 1048576, 8, 5.0), ("L3", 33554432, 16, 20.0)]
    assert profile.provenance["device"] == 'Some "CPU"'
    assert profile.provenance["date"] == "2025-01-01T00:00:00Z"


def test_microbench_bad_path_is_one_line_exit_2(tmp_path, capsys):
    assert cpu_microbench.main(["--out", str(tmp_path / "missing" / "p.toml")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1
    assert cpu_microbench.main(["--out", str(tmp_path / "p.txt")]) == 2
    assert ".toml" in capsys.readouterr().err


def test_gpu_profile_is_refused():
    graph = figure2_graph()
    with pytest.raises(InputError, match="needs a CPU profile"):
        predict_cpu(graph, bfs(graph, 0), load_profile("k40c"))
