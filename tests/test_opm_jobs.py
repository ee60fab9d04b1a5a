"""Warp-level job counts and sectors of the modelled kernels (seed 003 §6.3, Fig. 4).

Every generator is checked job by job (server, warp, sectors) against a lane-by-lane replay of the
kernel's pseudo-code in tests/naive_opm.py, and the expansion's inner-loop jobs against simdmodel's
lane accounting for the same mapping.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_opm
from opmachine.kernels import (Kernel, compact_chunks_per_warp, compact_counts, expansion_jobs, parse_kernel,
                               topo_jobs)
from opmachine.kernels._jobs import push_job
from opmachine.kernels.compact import _passing_chunks
from opmachine.kernels._sort32 import sort32
from opmachine.layout import ELEMENTS_PER_SECTOR, layout_for
from opmachine.memory import LaunchScratch, interleaved_jobs, interleaved_order
from opmachine.profile import load_profile
from simdmodel.errors import InputError
from simdmodel.frontier import bfs
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.strategies import Mapping, queue_units, schedules, several_blocks

A, B, C, D, E, F = range(6)


def figure2_graph():
    """Seed 003 Fig. 2: A at level 0; B and E at level 1; B -> E, C, D (E first), E -> F."""
    src = np.array([A, A, B, B, B, E], dtype=np.int64)
    dst = np.array([B, E, E, C, D, F], dtype=np.int64)
    return csr_from_edges(EdgeList(src, dst, 6, undirected=False, name="fig2"), undirected=False)


def graph_of(n, pairs, undirected):
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    return csr_from_edges(EdgeList(src, dst, n, undirected=undirected, name="random"), undirected=undirected)


def jobs_of(trace):
    return [(int(trace.server[j]), int(trace.warp[j]), trace.sectors[trace.ptr[j]:trace.ptr[j + 1]].tolist())
            for j in range(trace.jobs)]


def per_server(trace):
    return np.bincount(trace.server, minlength=6).tolist()


def test_figure4_topo_jobs_of_warp0():
    # Seed 003 §6.3: with 32 threads all six nodes share warp 0. LEVEL = 2 expands B and E:
    # ANI 1, NF1 1, ERL 2, then max(deg B, deg E) = 3 iterations of EDL and NF2; OP stores in all
    # three (iteration 1: E -> F while B -> E finds E labelled; 2: B -> C; 3: B -> D): N_G = 13.
    graph = figure2_graph()
    frontiers = bfs(graph, A)
    stamp = np.full(6, -1, dtype=np.int32)
    trace = topo_jobs(graph, frontiers.levels, stamp, 1, layout_for(6, 6), warps=1)
    assert per_server(trace) == [1, 1, 2, 3, 3, 3]
    assert trace.jobs == 13
    # Every array fits in one sector, so each job touches exactly one.
    assert np.diff(trace.ptr).tolist() == [1] * 13


def test_layout_aligns_each_array_to_256_bytes():
    layout = layout_for(1000, 5000)
    bases = [layout.base_sector[name] for name in ("num_nodes", "row_start", "edge_dst", "level", "queue")]
    assert all(b % 8 == 0 for b in bases)  # 8 sectors = 256 bytes
    # num_nodes: 1 word -> 256 B; row_start 1001 words -> 4096 B (16 x 256); edge_dst 20000 B -> 20224 B
    assert bases == [0, 8, 8 + 128, 8 + 128 + 632, 8 + 128 + 632 + 128]


def test_layout_refuses_edges_beyond_4_byte_offsets():
    with pytest.raises(InputError, match="4-byte row offsets"):
        layout_for(10, 2**31)


@pytest.mark.parametrize("text, label", [("topo", "topo"), ("sm-1", "sm-1"), ("SM-32", "sm-32"), ("ws", "ws"),
                                         ("scan", "scan")])
def test_parse_kernel(text, label):
    assert parse_kernel(text).label == label


@pytest.mark.parametrize("text", ["sm-0", "sm-33", "sm-x", "bfs", ""])
def test_parse_kernel_rejects(text):
    with pytest.raises(InputError):
        parse_kernel(text)


graphs = st.integers(2, 70).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=300),
    st.booleans()))


def _replay_all(graph, frontiers, run_fast, run_naive):
    """Both generators over every level with shared round state; traces must be identical."""
    layout = layout_for(graph.n, graph.m)
    stamp = np.full(graph.n, -1, dtype=np.int32)
    for level in range(frontiers.depth):
        fast = run_fast(layout, stamp, level)
        replay = naive_opm.Replay(graph.indptr, graph.indices, frontiers.levels, level, layout.base_sector)
        run_naive(replay, level)
        assert jobs_of(fast) == replay.jobs, f"level {level}"
        yield level, fast


def _source(graph):
    return int(np.flatnonzero(graph.degrees() > 0)[0])


@settings(max_examples=60, deadline=None)
@given(graphs, st.sampled_from([1, 2, 3, 5]))
def test_topo_matches_lane_replay(spec, warps):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    list(_replay_all(
        graph, frontiers,
        lambda layout, stamp, level: topo_jobs(graph, frontiers.levels, stamp, level, layout, warps),
        lambda replay, level: naive_opm.topo(replay, graph.n, warps)))


@settings(max_examples=60, deadline=None)
@given(graphs, st.sampled_from([1, 2, 3, 4, 7, 8, 16, 32]), st.sampled_from([1, 2, 5]))
def test_group_matches_lane_replay_and_lane_accounting(spec, size, warps):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    degrees = graph.degrees()[frontiers.vertices]
    lanes = Mapping("group", size).count_lanes(degrees, frontiers.level_ptr)
    for level, trace in _replay_all(
            graph, frontiers,
            lambda layout, stamp, level: expansion_jobs(graph, frontiers.levels, stamp, level,
                                                        frontiers.frontier(level), Mapping("group", size), layout,
                                                        warps),
            lambda replay, level: naive_opm.group(replay, frontiers.frontier(level), size, warps)):
        # one EDL and one NF2 job per warp iteration of the lane accounting
        assert per_server(trace)[3] == per_server(trace)[4] == lanes[level, 0]


@settings(max_examples=60, deadline=None)
@given(graphs, st.sampled_from([1, 3]))
def test_ws_matches_lane_replay_and_lane_accounting(spec, warps):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    lanes = Mapping("ws").count_lanes(graph.degrees()[frontiers.vertices], frontiers.level_ptr)
    for level, trace in _replay_all(
            graph, frontiers,
            lambda layout, stamp, level: expansion_jobs(graph, frontiers.levels, stamp, level,
                                                        frontiers.frontier(level), Mapping("ws"), layout, warps),
            lambda replay, level: naive_opm.ws(replay, frontiers.frontier(level), warps)):
        assert per_server(trace)[3] == lanes[level, 0]


@settings(max_examples=60, deadline=None)
@given(graphs, st.sampled_from([32, 64, 96]), st.sampled_from([1, 2]))
def test_scan_matches_lane_replay_and_lane_accounting(spec, cta, grid):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    lanes = Mapping("scan", cta).count_lanes(graph.degrees()[frontiers.vertices], frontiers.level_ptr)
    for level, trace in _replay_all(
            graph, frontiers,
            lambda layout, stamp, level: expansion_jobs(graph, frontiers.levels, stamp, level,
                                                        frontiers.frontier(level), Mapping("scan", cta), layout,
                                                        grid * cta // 32),
            lambda replay, level: naive_opm.scan(replay, frontiers.frontier(level), cta, grid)):
        assert per_server(trace)[3] == lanes[level, 0]


@settings(max_examples=60, deadline=None)
@given(graphs)
def test_op_stores_label_each_next_frontier_vertex(spec):
    # In the documented order every vertex of level L+1 is stored at least once in round L.
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    stamp = np.full(graph.n, -1, dtype=np.int32)
    layout = layout_for(graph.n, graph.m)
    for level in range(frontiers.depth):
        expansion_jobs(graph, frontiers.levels, stamp, level, frontiers.frontier(level), Mapping("group", 4), layout, 2)
        assert set(np.flatnonzero(stamp == level).tolist()) == set(
            frontiers.frontier(level + 1).tolist() if level + 1 < frontiers.depth else [])


@settings(deadline=None)
@given(st.lists(st.integers(0, 4), max_size=60))
def test_interleaved_order_sorts_by_step_then_generation(warps_of_jobs):
    warp = np.array(warps_of_jobs, dtype=np.int32)
    order = interleaved_order(warp, 5).tolist()
    seen = [0] * 5
    keys = []
    for j, w in enumerate(warps_of_jobs):
        keys.append((seen[w], j))
        seen[w] += 1
    assert order == [j for _, j in sorted(keys)]


@settings(deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 5), st.integers(0, 32)), max_size=60),
       st.integers(1, 7))
def test_interleaved_jobs_pack_each_job_of_the_interleaved_order(jobs, slots):
    warp = np.array([w for w, _, _ in jobs], dtype=np.int32)
    server = np.array([s for _, s, _ in jobs], dtype=np.int8)
    ptr = np.concatenate(([0], np.cumsum([n for _, _, n in jobs]))).astype(np.int64)
    packed = interleaved_jobs(warp, server, ptr, 7, slots)
    expected = [(int(ptr[j]), jobs[j][2], jobs[j][1], jobs[j][0] % slots) for j in interleaved_order(warp, 7)]
    assert [(int(p >> 29), int(p >> 23) & 63, int(p >> 20) & 7, int(p) & (2**20 - 1)) for p in packed] == expected
    # into a launch scratch's array, left over from a larger launch: the same jobs, in the same memory
    scratch = LaunchScratch(layout_for(8, 8), load_profile("h100", kind="gpu"))
    larger = scratch.packed_for(len(jobs) + 5)
    larger[:] = 2**64 - 1
    again = interleaved_jobs(warp, server, ptr, 7, slots, scratch)
    assert np.array_equal(again, packed) and again.ctypes.data == larger.ctypes.data


@pytest.mark.parametrize("sectors", [63, 64])
def test_interleaved_jobs_refuse_a_job_the_count_field_cannot_hold(sectors):
    warp, server = np.array([0, 1], dtype=np.int32), np.zeros(2, dtype=np.int8)
    ptr = np.array([0, 1, 1 + sectors], dtype=np.int64)
    if sectors < 64:
        assert int(interleaved_jobs(warp, server, ptr, 2, 2)[1] >> 23) & 63 == sectors
    else:
        with pytest.raises(ValueError, match="more sectors than a packed job holds"):
            interleaved_jobs(warp, server, ptr, 2, 2)

@numba.njit
def _sorted32(values):
    keys = values.copy()
    sort32(keys)
    return keys


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(-2**31, 2**31 - 1), min_size=32, max_size=32))
def test_sort32_sorts_any_32_values(values):
    keys = np.array(values, dtype=np.int32)
    assert _sorted32(keys).tolist() == sorted(values)


@numba.njit
def _push(lanes, first, count, base, filled):
    """push_job onto buffers already holding `filled` sectors of one earlier job."""
    server, warp, ptr = np.zeros(4, np.int8), np.zeros(4, np.int32), np.zeros(5, np.int64)
    sectors = np.full(64 + filled, -7, dtype=np.int32)
    ptr[1] = filled
    keys = np.empty(32, dtype=np.int32)
    jobs, total = push_job(3, 9, lanes, first, count, base, keys, server, warp, ptr, sectors, 1, filled)
    return jobs, total, server[1], warp[1], ptr[2], sectors[filled:total].copy(), sectors[:filled].copy()


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3000), max_size=40), st.data(), st.integers(0, 10**6), st.integers(0, 5))
def test_push_job_coalesces_lanes_into_ascending_distinct_sectors(elements, data, base, filled):
    # lanes in any order (sorted runs take the no-sort path, scattered ones the network), repeats, 0..32 lanes
    first = data.draw(st.integers(0, len(elements)))
    count = data.draw(st.integers(0, min(32, len(elements) - first)))
    if data.draw(st.booleans()):
        elements = sorted(elements)
    lanes = np.array(elements + [0], dtype=np.int64)
    jobs, total, server, warp, end, sectors, before = _push(lanes, first, count, base, filled)
    expected = sorted({base + e // ELEMENTS_PER_SECTOR for e in elements[first:first + count]})
    assert (jobs, server, warp) == (2, 3, 9)
    assert sectors.tolist() == expected and end == total == filled + len(expected)
    assert before.tolist() == [-7] * filled  # the earlier job's sectors are untouched


def test_compaction_counts_by_hand():
    # n = 100 nodes: 4 warp steps (32, 32, 32, 4 nodes); next frontier {3, 5, 40, 99}.
    # ANI 4 jobs, NF1 4 jobs reading ceil(100/8) = 13 level sectors, all cold misses.
    # OP: chunks 0, 1, 3 pass: positions [0,2), [2,3), [3,4) -> queue sector 0 touched 3 times.
    counts, per_warp = compact_counts(100, np.array([3, 5, 40, 99]), warps=2, block_bytes=256)
    ani, nf1, op = counts[0].tolist(), counts[1].tolist(), counts[5].tolist()
    # fields: jobs, l2_sectors, l2_hits, dram_sectors, row_hits, row_misses
    assert ani == [4, 4, 3, 1, 0, 1]
    assert nf1 == [4, 13, 0, 13, 11, 2]  # 13 sectors in 2 DRAM blocks of 8 sectors
    assert op == [3, 3, 2, 1, 0, 1]
    # 4 chunks over 2 warps, 2 consecutive each: warp 0 runs chunks 0, 1 (4 jobs) + OPs of both;
    # warp 1 runs chunks 2, 3 (4 jobs) + the OP of chunk 3 (node 99)
    assert per_warp.tolist() == [6, 5]
    assert counts[2:5].sum() == 0


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=300), st.booleans(), st.sampled_from([np.int32, np.int64]))
def test_passing_chunks_equal_the_unique_chunks_of_any_front(nodes, ascending, dtype):
    # a sorted frontier's chunks are read off its runs; any other order (or none) takes np.unique
    front = np.array(sorted(nodes) if ascending else nodes, dtype=dtype)
    chunks, passing = np.unique(front.astype(np.int64) // 32, return_counts=True)
    expected = chunks, passing, np.concatenate(([0], np.cumsum(passing)[:-1])).astype(np.int64)
    for got, want in zip(_passing_chunks(front), expected):
        assert got.dtype == want.dtype and np.array_equal(got, want)


@pytest.mark.parametrize("n, warps, expected", [(0, 8, 1), (1, 8, 1), (32 * 8, 8, 1), (32 * 8 + 1, 8, 2),
                                                (2_000_000, 8448, 8), (100, 2, 2)])
def test_compact_chunks_per_warp_covers_every_chunk_in_one_wave(n, warps, expected):
    # ceil(ceil(n / 32) / warps): 2,000,000 nodes = 62,500 chunks over 8,448 warps -> 7.4 -> 8
    per_warp = compact_chunks_per_warp(n, warps)
    assert per_warp == expected and per_warp * warps * 32 >= n


def test_kernel_mapping_names_match_simdmodel():
    assert Kernel("group", 8).mapping() == Mapping("group", 8)
    assert Kernel("topo").mapping() is None


def _unit_needs_hold(fill, args, start, stop):
    """Each unit's declared need bounds what it writes: run it in buffers of exactly that size."""
    for unit in range(start, stop):
        empty = (np.zeros(0, np.int8), np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int32))
        _, _, _, need_jobs, need_sectors = fill(*args, unit, unit + 1, *empty, 0, 0)
        buffers = (np.zeros(need_jobs, np.int8), np.zeros(need_jobs, np.int32), np.zeros(need_jobs + 1, np.int64),
                   np.zeros(need_sectors, np.int32))
        done, n_jobs, n_sectors, _, _ = fill(*args, unit, unit + 1, *buffers, 0, 0)
        assert done == unit + 1 and n_jobs <= need_jobs and n_sectors <= need_sectors


@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-7", "sm-32", "ws", "scan"])
def test_declared_unit_needs_bound_the_buffers(label, monkeypatch):
    # Vertex 0 points at 8, 16, ..., 8 x 600, which have no out-edges: each frontier vertex's row
    # offsets lie in a sector of their own (2 x 32 sectors a warp) and there is no edge work, so
    # the bound must not lean on the edges. The generators' numba fills are run unit by unit
    # (chunk by chunk for topo) with exactly the buffers they declare.
    import scipy.sparse

    from opmachine.kernels import _jobs, expand, topo
    from simdmodel.load import load_graph

    targets = 8 * np.arange(1, 601)
    matrix = scipy.sparse.coo_matrix((np.ones(targets.size), (np.zeros(targets.size, int), targets)),
                                     shape=(4900, 4900))
    graph = load_graph(matrix)
    frontiers = bfs(graph, 0)
    layout = layout_for(graph.n, graph.m)
    kernel = parse_kernel(label)
    calls = []

    def recording(fill, args, chunk, chunks, buffer):
        calls.append((fill, args, chunk, chunks))
        real_generate(fill, args, chunk, chunks, buffer)

    real_generate = _jobs.generate
    monkeypatch.setattr(expand, "generate", recording)
    monkeypatch.setattr(topo, "generate", recording)
    stamp = np.full(graph.n, -1, dtype=np.int32)
    for level in range(frontiers.depth):
        if kernel.data_driven:
            expansion_jobs(graph, frontiers.levels, stamp, level, frontiers.frontier(level), kernel.expansion, layout,
                           64)
        else:
            topo_jobs(graph, frontiers.levels, stamp, level, layout, 64)
    assert calls
    for fill, args, start, stop in calls:
        _unit_needs_hold(fill, args, start, stop)


@settings(max_examples=25, deadline=None)
@given(graphs, st.sampled_from(["topo", "sm-1", "sm-5", "ws", "scan"]))
def test_jobs_do_not_depend_on_how_the_decomposition_is_blocked(spec, label):
    # Big levels are decomposed a block of units at a time; cutting after every few edges must
    # give the same trace as one block.
    from simdmodel.strategies import schedule

    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    frontiers = bfs(graph, _source(graph))
    kernel = parse_kernel(label)
    layout = layout_for(graph.n, graph.m)

    def traces():
        stamp = np.full(graph.n, -1, dtype=np.int32)
        for level in range(frontiers.depth):
            if kernel.data_driven:
                yield jobs_of(expansion_jobs(graph, frontiers.levels, stamp, level, frontiers.frontier(level),
                                             kernel.expansion, layout, 3 * 8))
            else:
                yield jobs_of(topo_jobs(graph, frontiers.levels, stamp, level, layout, 3))

    whole = list(traces())
    saved = schedule.BLOCK_EDGES
    try:
        schedule.BLOCK_EDGES = 5
        assert list(traces()) == whole
    finally:
        schedule.BLOCK_EDGES = saved


@settings(max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.integers(1, 8), st.integers(1, 30))
def test_several_blocks_says_whether_the_decomposition_comes_in_more_than_one(degrees, entries, limit):
    degrees = np.asarray(degrees, dtype=np.int64)
    unit_ptr = queue_units(degrees.size, entries)
    mapping = Mapping("group", 1)
    blocks = list(schedules(mapping.spec, mapping.params, np.zeros(degrees.size, dtype=np.int64), degrees, unit_ptr,
                            limit))
    assert several_blocks(degrees, unit_ptr, limit) == (len(blocks) > 1)
