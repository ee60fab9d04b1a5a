"""The fused launch pass (`memory.simulate_launch_loads`) against the whole stream: the interleaved
sectors through the L2 and row buffers first (`stream_outcomes`), then counted per server (here, with
bincounts) and per slot (`slot_loads_by_class`), the L2 partitions' copies followed by both where the
profile has [l2_partitions]. Every count and every float must be equal."""
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from opmachine import memory
from opmachine.cache import SetAssocState
from opmachine.critical import CriticalPathModel
from opmachine.kernels import OP, JobTrace, expansion_jobs, parse_kernel, topo_jobs
from opmachine.layout import layout_for
from opmachine.memory import (LaunchScratch, l2_geometry, pass_through_l2, simulate_launch_loads, slot_loads_by_class,
                              stream_outcomes)
from opmachine.predict import expansion_launch
from opmachine.profile import L2Partitions, load_profile
from simdmodel.algorithms import BFS
from simdmodel.load import load_graph


def _profile(sets, ways, sectors_per_line, row_buffers, physical_warps, block_sectors=8, partitions=False):
    l2_bytes = sets * ways * 32 * sectors_per_line
    return SimpleNamespace(l2_bytes=l2_bytes, l2_model_bytes=l2_bytes, l2_ways=ways,
                           l2_line_bytes=32 * sectors_per_line, sector_bytes=32, dram_block_bytes=32 * block_sectors,
                           row_buffers=row_buffers, physical_warps=physical_warps,
                           l2_partitions=L2Partitions(2, (1,), (100.0,), (190.0,)) if partitions else None)


def _model(seed):
    """Seed 0: every class the same latency (ties decide the slowest class); else random tables."""
    rng = np.random.default_rng(seed)
    latency = np.zeros((3, 33))
    latency[:, 1:] = 100.0 if seed == 0 else np.sort(rng.uniform(50.0, 900.0, (3, 32)), axis=1)
    far = latency[0] + (90.0 if seed == 0 else rng.uniform(0.0, 300.0, 33))
    return CriticalPathModel(("L2H", "RBH", "RBM"), np.array([0, 1, 2]), latency, np.ones(3), 0.0, far_ns=far)


def _server_counts(trace, outcomes):
    """Jobs, sectors, L2 hits, DRAM sectors, row hits and misses per server, by bincounts over the stream."""
    order, _, outcome = outcomes
    servers = np.repeat(trace.server[order], np.diff(trace.ptr)[order]).astype(np.int64)
    counts = np.zeros((6, 6), dtype=np.int64)
    counts[:, 0] = np.bincount(trace.server, minlength=6)
    counts[:, 1] = np.bincount(servers, minlength=6)
    for column, kept in ((2, outcome == 0), (3, outcome > 0), (4, outcome == 1), (5, outcome == 2)):
        counts[:, column] = np.bincount(servers[kept], minlength=6)
    return counts


def _reference(trace, layout, profile, state, models):
    """The stream's outcomes, then each model's slot loads from the partitions' copies as the launch found
    them (the state's, left as the launch leaves them)."""
    outcomes, _ = stream_outcomes(trace, layout, profile, "setassoc", state)
    counter = np.zeros(layout.total_sectors, dtype=np.int32)
    holders = state.follow_partitions() if profile.l2_partitions is not None else np.zeros(0, np.uint8)
    loads, before = [], holders.copy()
    for m in models:
        holders[:] = before
        loads.append(slot_loads_by_class(trace, outcomes, profile.physical_warps, m, counter, holders))
    return _server_counts(trace, outcomes), loads


def _assert_same(fused, reference):
    counts, _, loads = fused
    assert counts.tolist() == reference[0].tolist()
    assert len(loads) == len(reference[1])
    for got, expected in zip(loads, reference[1]):
        for a, b in zip(got, expected):
            assert np.array_equal(a, b)


jobs = st.lists(st.tuples(st.sampled_from([0, 1, 2, 3, 4, OP]), st.integers(0, 11),
                          st.lists(st.integers(0, 399), min_size=0, max_size=9)), min_size=0, max_size=60)


def _trace(launch, warps):
    ptr = np.cumsum([0] + [len(set(s)) for _, _, s in launch]).astype(np.int64)
    sectors = [np.unique(np.asarray(s, dtype=np.int32)) for _, _, s in launch]
    return JobTrace(np.array([j[0] for j in launch], dtype=np.int8), np.array([j[1] for j in launch], dtype=np.int32),
                    ptr, np.concatenate(sectors) if sectors else np.zeros(0, dtype=np.int32), warps)


@settings(max_examples=150, deadline=None)
@given(st.lists(jobs, min_size=1, max_size=3), st.sampled_from([2, 4, 8]), st.integers(1, 16),
       st.sampled_from([1, 2, 4]), st.integers(1, 6), st.integers(1, 12), st.integers(0, 2), st.booleans())
def test_fused_pass_equals_stream_then_slot_count(launches, sets, ways, sectors_per_line, rows, slots, models,
                                                  partitions):
    layout = SimpleNamespace(total_sectors=400)
    profile = _profile(sets, ways, sectors_per_line, rows, slots, partitions=partitions)
    chosen = [_model(seed) for seed in range(models)]
    fused_state = SetAssocState(l2_geometry(profile), 400)
    reference_state = SetAssocState(l2_geometry(profile), 400)
    scratch = LaunchScratch(layout, profile)  # kept from launch to launch, as a prediction keeps it
    for launch in launches:  # a warm L2 carried from launch to launch; the row buffers start empty each time
        trace = _trace(launch, 12)
        fused = simulate_launch_loads(trace, layout, profile, "setassoc", fused_state, chosen, scratch)
        _assert_same(fused, _reference(trace, layout, profile, reference_state, chosen))
        if chosen:  # the reference follows the partitions through its models' passes
            assert np.array_equal(fused_state.holders, reference_state.holders)
    trace = _trace(launches[0], 12)  # and cold
    _assert_same(simulate_launch_loads(trace, layout, profile, "setassoc", None, chosen),
                 _reference(trace, layout, profile, SetAssocState(l2_geometry(profile), 400), chosen))


@settings(max_examples=100, deadline=None)
@given(st.lists(jobs, min_size=1, max_size=3), st.sampled_from([1, 2, 4]), st.integers(1, 12), st.integers(0, 2),
       st.booleans())
# sector 4's home is partition 1: warp 8 (partition 1) reads it, warp 0 (partition 0) writes it, warp 8 reads it
# again, a far hit only if the write left partition 0 alone holding it
@example([[(0, 8, [4]), (OP, 0, [4]), (0, 8, [4])]], 1, 12, 1, True)
def test_a_filled_l2_gives_what_a_run_that_never_evicts_gives(launches, sectors_per_line, slots, models, partitions):
    # 128 sets x 16 ways hold every line of the 400 sectors: a run through the cold cache, then the same
    # launches again, counts and times exactly as the filled cache does after the prior run through the
    # partitions alone (`memory._holders_pass`), and leaves the partitions' copies alike
    profile = _profile(128, 16, sectors_per_line, 3, slots, partitions=partitions)
    layout = SimpleNamespace(total_sectors=400)
    chosen = [_model(seed) for seed in range(models)]
    cold, filled = (SetAssocState(l2_geometry(profile), 400) for _ in range(2))
    assert filled.holds_universe()
    filled.fill()
    for launch in launches:
        trace = _trace(launch, 12)
        pass_through_l2(trace, cold, profile=profile)
        pass_through_l2(trace, filled, profile=profile)
    assert np.array_equal(cold.holders, filled.holders)
    for launch in launches:
        trace = _trace(launch, 12)
        counts, misses, loads = simulate_launch_loads(trace, layout, profile, "setassoc", filled, chosen)
        _assert_same((counts, misses, loads), simulate_launch_loads(trace, layout, profile, "setassoc", cold,
                                                                    chosen)[::2])
        assert counts[:, 3].sum() == 0  # no sector went to DRAM
    assert np.array_equal(cold.holders, filled.holders)


@pytest.mark.parametrize("beside", ["thread", "in turn"])
@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-8", "ws", "scan"])
def test_fused_pass_equals_stream_on_bfs_launches(label, beside, monkeypatch):
    # the hot-sector count on a thread of its own for every launch, or for none
    monkeypatch.setattr(memory, "BESIDE_SECTORS", 0 if beside == "thread" else 1 << 62)
    graph = load_graph("rmat:scale=11,ef=8,seed=4")
    profiles = [load_profile("h100", kind="gpu"), load_profile("h200", kind="gpu")]
    profile = profiles[0]
    models = [CriticalPathModel.from_profile(p) for p in profiles]
    kernel = parse_kernel(label)
    frontiers = BFS.rounds(graph, 0, "sorted")
    layout = layout_for(graph.n, graph.m)
    stamp = np.full(graph.n, -1, dtype=np.int32)
    fused_state = SetAssocState(l2_geometry(profile), layout.total_sectors)
    reference_state = SetAssocState(l2_geometry(profile), layout.total_sectors)
    scratch = LaunchScratch(layout, profile)
    for level in range(frontiers.depth):
        front = frontiers.frontier(level)
        if kernel.data_driven:
            launch = expansion_launch(kernel, profile, front.size)
            trace = expansion_jobs(graph, frontiers.levels, stamp, level, front, kernel.expansion, layout,
                                   launch.warps)
        else:
            trace = topo_jobs(graph, frontiers.levels, stamp, level, layout, profile.full_wave_grid(256) * 8)
        fused = simulate_launch_loads(trace, layout, profile, "setassoc", fused_state, models, scratch)
        _assert_same(fused, _reference(trace, layout, profile, reference_state, models))
        assert not scratch.counter.any()  # the scratch counter is handed back zeroed


@settings(max_examples=100, deadline=None)
@given(st.lists(jobs, min_size=1, max_size=3), st.sampled_from([2, 4, 8]), st.integers(1, 20),
       st.sampled_from([1, 2, 4]), st.booleans())
def test_a_prior_run_leaves_the_l2_as_the_full_pass_does(launches, sets, ways, sectors_per_line, partitions):
    # ways > 16 takes the general cache, which the L2-only pass drives through the sector stream
    profile = _profile(sets, ways, sectors_per_line, 3, 12, partitions=partitions)
    layout = SimpleNamespace(total_sectors=400)
    full, prior = (SetAssocState(l2_geometry(profile), 400) for _ in range(2))
    for launch in launches:
        trace = _trace(launch, 12)
        simulate_launch_loads(trace, layout, profile, "setassoc", full)
        pass_through_l2(trace, prior, profile=profile)
    if full.small:  # the partitions' copies as well
        assert np.array_equal(full.holders, prior.holders)
    probe = np.arange(400, dtype=np.int64)
    assert [a.tolist() for a in full.hits(probe)] == [b.tolist() for b in prior.hits(probe)]


def _hot_reference(trace, slots):
    """Requests per slot to the first sector of the interleaved stream to be read as often as the most read
    one, counted in plain Python."""
    order = memory.interleaved_order(trace.warp, trace.warps)
    seen, hottest, most = {}, -1, 0
    for j in order:
        for sector in trace.sectors[trace.ptr[j]:trace.ptr[j + 1]].tolist():
            seen[sector] = seen.get(sector, 0) + 1
            if seen[sector] > most:
                most, hottest = seen[sector], sector
    hot = np.zeros(slots)
    for j in range(trace.server.size):
        hot[trace.warp[j] % slots] += int(np.count_nonzero(trace.sectors[trace.ptr[j]:trace.ptr[j + 1]] == hottest))
    return hot


@settings(max_examples=300, deadline=None)
@given(jobs, st.integers(1, 12))
@example([(1, 0, [5]), (1, 0, [7]), (1, 0, [7]), (1, 1, [5])], 2)  # a tie that generation order breaks otherwise
@example([(1, 3, [9, 10]), (4, 3, [9]), (1, 0, [10, 11]), (1, 0, [9])], 4)  # one sector read the most
def test_hot_requests_equal_a_count_over_the_interleaved_stream(launch, slots):
    trace = _trace(launch, 12)
    counter = np.zeros(400, dtype=np.int32)
    packed = memory.interleaved_jobs(trace.warp, trace.server, trace.ptr, trace.warps, slots)
    assert np.array_equal(memory.hot_requests(trace, packed, slots, counter), _hot_reference(trace, slots))
    assert not counter.any()  # handed back zeroed
