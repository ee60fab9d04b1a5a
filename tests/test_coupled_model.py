"""The operator machine's coupled BFS (opmachine.kernels.couple, opmachine.coupled): seed 001's launches as
warp-level jobs, their trips through the compiled code, and their predicted time.

Hand cases count a launch's jobs exactly (a contraction of 512 new ids, a hub's pieces); on random graphs
every launch's jobs touch exactly the sectors its work names (the gathered lists' column indices, the
queue slots it fills, the status of the ids whose flags say they were read or stored).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdmodel as sm
from opmachine.coupled import (TIME_COLUMNS, _QueueSlots, bitmask_store_jobs, claim_jobs, l2_sectors,
                               predict_coupled_bfs)
from opmachine.instructions import coupled_trips, has_listing
from opmachine.kernels import ANI, EDL, ERL, NF1, NF2, OP, JobTrace
from opmachine.kernels.couple import (CTA_WARPS, coupled_jobs, launch_shape, listing_name,
                                      listing_phase)
from opmachine.layout import ELEMENTS_PER_SECTOR, coupled_layout_for
from opmachine.profile import load_profile
from simdmodel.couplings import COUPLINGS, LaunchWork, QueueOverflow, coupled_launches, parse_coupling
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.lookup import KEPT, LABEL_CLAIM, LABEL_READ, LABEL_WRITE, MASK_READ, MASK_WRITE, MODES

H200 = load_profile("h200")
FULL_WAVE = H200.full_wave_grid(256)


def star(leaves: int) -> sm.CSRGraph:
    """Vertex 0 joined to vertices 1 .. leaves (undirected)."""
    return csr_from_edges(EdgeList(np.zeros(leaves, dtype=np.int64), np.arange(1, leaves + 1), leaves + 1, True,
                                   "star"))


def per_server(trace) -> list[int]:
    return np.bincount(trace.server, minlength=6).tolist()


def sectors_of(trace, server=None, lo=0, hi=None) -> set[int]:
    """Sectors the jobs (of `server`) touch within [lo, hi)."""
    out = set()
    for j in range(trace.jobs):
        if server is None or trace.server[j] == server:
            out.update(int(s) for s in trace.sectors[trace.ptr[j]:trace.ptr[j + 1]])
    return {s for s in out if s >= lo and (hi is None or s < hi)}


def array_sectors(layout, name, elements) -> set[int]:
    return {layout.base_sector[name] + int(e) // ELEMENTS_PER_SECTOR for e in np.asarray(elements).ravel()}


def within(layout, name) -> tuple[int, int]:
    """The sectors array `name` spans (up to the next array's base)."""
    bases = sorted(layout.base_sector.values())
    lo = layout.base_sector[name]
    return lo, next((b for b in bases if b > lo), layout.total_sectors)


def test_a_contraction_of_512_new_ids_is_97_jobs():
    # One group of two tiles on one CTA: each of its 8 warps reads 32 ids of each tile (ANI), and for each
    # tile reads their bitmask bytes (NF1), their labels and claims them (NF2 x 2), stores their bytes and
    # enqueues them (OP x 2); the group's survivors take one atomic on the queue-size counter (ANI).
    graph = star(600)
    ids = np.arange(1, 513, dtype=np.int64)
    flags = np.full(512, MASK_READ | LABEL_READ | LABEL_CLAIM | MASK_WRITE | KEPT, dtype=np.uint8)
    work = LaunchWork(0, "contract", queue=ids, looked_up=ids, flags=flags)
    layout = coupled_layout_for(graph.n, graph.m)
    trace = coupled_jobs(graph, work, layout, 1, "edge_queue", "vertex_queue")
    assert per_server(trace) == [16 + 1, 16, 0, 0, 32, 32] and trace.jobs == 97
    assert sectors_of(trace, OP, layout.base_sector["vertex_queue"]) == array_sectors(layout, "vertex_queue",
                                                                                       range(512))
    assert sectors_of(trace, NF1) == array_sectors(layout, "bitmask", ids >> 5)
    assert set(trace.warp.tolist()) == set(range(CTA_WARPS))
    # the lookup's regions run once per warp instruction whose jobs hold them: 2 a warp, one each tile
    for jobs in (bitmask_store_jobs(trace, layout), claim_jobs(trace), (trace.server == NF2) & ~claim_jobs(trace)):
        assert np.bincount(trace.warp[jobs], minlength=CTA_WARPS).tolist() == [2] * CTA_WARPS


def test_a_hubs_list_goes_as_pieces_of_1024_edges_over_the_grid():
    # A 3000-edge list leaves its expansion as pieces of 1024, 1024 and 952 edges on CTAs 0, 1, 2: each
    # warp step copies 32 column indices (EDL) to 32 queue slots (OP): 32 + 32 + 30 steps.
    graph = star(3000)
    layout = coupled_layout_for(graph.n, graph.m)
    work = LaunchWork(0, "pieces", expanded=np.array([0]), out_at=np.array([0]))
    assert launch_shape(graph, work).input == 3 and launch_shape(graph, work).grid(FULL_WAVE) == 3
    trace = coupled_jobs(graph, work, layout, 3, None, "edge_queue")
    assert per_server(trace) == [0, 0, 0, 94, 0, 94]
    assert sectors_of(trace, EDL) == array_sectors(layout, "edge_dst", range(3000))
    assert sectors_of(trace, OP) == array_sectors(layout, "edge_queue", range(3000))
    assert sorted(set(trace.warp.tolist())) == list(range(3 * CTA_WARPS))
    trips = coupled_trips("pieces", 3 * CTA_WARPS, 3, 256, piece_len=np.array([1024, 1024, 952]))
    assert trips["round"].sum() == 94 and trips["entered"].tolist() == [1.0] * 24


def test_contraction_groups_are_dealt_to_ctas_in_turn():
    trips = coupled_trips("contract", 2 * CTA_WARPS, 3, 256, looked_up=1300)
    assert trips["step"].tolist() == [2.0] * 8 + [1.0] * 8 and trips["active"].tolist() == [1.0] * 16
    # The CTA's first warp reserves the group's slots; a warp looks up where its lanes of the group's
    # first tile have ids: groups 0 and 1 are full, group 2 (ids 1024..1299, on CTA 0 again) has ids
    # from 1024 + 32 j < 1300 for every j of 0..7.
    assert trips["reserve"].tolist() == [2.0] + [0.0] * 7 + [1.0] + [0.0] * 7
    assert trips["lookup"].tolist() == [2.0] * 8 + [1.0] * 8


def test_a_contractions_warps_store_in_the_groups_where_they_kept_an_id():
    from opmachine.coupled import _groups_kept

    flags = np.zeros(1300, dtype=np.uint8)
    flags[[0, 5, 40, 300, 700, 1299]] = KEPT
    kept = _groups_kept(LaunchWork(0, "contract", flags=flags), 2 * CTA_WARPS)
    # group 0 on CTA 0: warp 0 (ids 0, 5), warp 1 (ids 40 and 300: one group); group 1 (700: lane 188, warp 5)
    # on CTA 1; group 2 (1299: lane 19 of tile 5, warp 0) on CTA 0 again
    assert kept.tolist() == [2.0, 1.0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0]


def random_graph(n, pairs):
    src = np.array([p[0] for p in pairs], dtype=np.int64)
    dst = np.array([p[1] for p in pairs], dtype=np.int64)
    return csr_from_edges(EdgeList(src, dst, n, True, "random"))


graphs = st.integers(2, 400).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=6 * n)))


def _launch_sectors_are_its_work(graph, work, layout, trace, queue_in, queue_out, start):
    """The sectors each kind of job touches are exactly those the launch's work names."""
    indptr = graph.indptr
    entries = np.asarray(work.expanded, dtype=np.int64)
    degrees = indptr[entries + 1] - indptr[entries]
    long = np.ones(entries.size, dtype=bool) if work.phase == "pieces" else degrees > work.big_list
    lists = entries if work.phase == "pieces" else entries[~long]
    columns = np.concatenate([np.arange(indptr[v], indptr[v + 1]) for v in lists]) if lists.size else []
    if work.phase in ("expand", "expand-contract", "contract-expand", "pieces"):
        assert sectors_of(trace, EDL) == array_sectors(layout, "edge_dst", columns)
    if work.phase in ("expand", "contract-expand") or (work.phase == "pieces" and not work.flags.size):
        slots = np.concatenate([np.arange(a, a + d) for a, d, piece in zip(work.out_at, degrees, long)
                                if piece == (work.phase == "pieces")] + [np.zeros(0, dtype=np.int64)])
        assert sectors_of(trace, OP, *within(layout, queue_out)) == array_sectors(layout, queue_out, slots)
    if work.flags.size:
        ids, flags = np.asarray(work.looked_up), work.flags
        assert sectors_of(trace, NF1) == array_sectors(layout, "bitmask", ids[(flags & MASK_READ) > 0] >> 5)
        read = ids[(flags & (LABEL_READ | LABEL_CLAIM)) > 0]
        assert sectors_of(trace, NF2) == array_sectors(layout, "level", read)
        stored = array_sectors(layout, "bitmask", ids[(flags & MASK_WRITE) > 0] >> 5) | \
            array_sectors(layout, "level", ids[(flags & LABEL_WRITE) > 0])
        status = sectors_of(trace, OP, *within(layout, "level")) | sectors_of(trace, OP, *within(layout, "bitmask"))
        assert status == stored
        if work.phase != "contract-expand":
            kept = int(np.count_nonzero(flags & KEPT))
            # a fused lookup's pieces append after the `start` entries the launch before them stored
            assert sectors_of(trace, OP, *within(layout, queue_out)) == \
                array_sectors(layout, queue_out, range(start, start + kept))
    if work.phase in ("expand", "expand-contract"):
        assert sectors_of(trace, ANI, *within(layout, queue_in)) == array_sectors(layout, queue_in, range(entries.size))
        assert sectors_of(trace, ERL) == array_sectors(layout, "row_start", np.concatenate((entries, entries + 1)))
    assert trace.warp.max(initial=0) < trace.warps
    assert trace.sectors.max(initial=0) < layout.total_sectors


@settings(max_examples=25, deadline=None)
@given(case=graphs, pick=st.integers(0, 10**6), name=st.sampled_from(COUPLINGS),
       mode=st.sampled_from(["atomic", "history", "label"]), hub=st.booleans(), spread=st.booleans())
def test_every_launchs_jobs_touch_exactly_the_sectors_its_work_names(case, pick, name, mode, hub, spread):
    n, pairs = case
    if hub:  # vertex n with 1100 leaves and an edge to each of the first vertices, vertex 0 with 60 leaves
        # more: the hub's list leaves its launch as pieces, and a small launch (spread) leaves vertex 0's too
        pairs = pairs + [(n, n + 1 + k) for k in range(1100)] + [(n, v) for v in range(min(n, 40))] + \
            [(0, n + 1101 + k) for k in range(60)]
        n += 1161
    grid = 8 if hub else 4  # (a launch of the hub's 1100 leaves is then short of a full wave)
    graph = random_graph(n, pairs)
    degrees = np.diff(graph.indptr)
    if not degrees.any():
        return
    source = int(np.flatnonzero(degrees)[pick % np.count_nonzero(degrees)])
    layout = coupled_layout_for(graph.n, graph.m)
    queues = _QueueSlots()
    enqueued = [0]

    def check(work):
        queue_in, queue_out = queues.step(work.phase)
        start = enqueued[0] if work.phase == "pieces" else 0
        trace = coupled_jobs(graph, work, layout, launch_shape(graph, work).grid(grid), queue_in, queue_out, start)
        _launch_sectors_are_its_work(graph, work, layout, trace, queue_in, queue_out, start)
        lo, hi = within(layout, "bitmask")  # the bitmask's stores: the OP jobs whose sectors lie in it
        stores = [trace.server[j] == OP and lo <= trace.sectors[trace.ptr[j]:trace.ptr[j + 1]].min() and
                  trace.sectors[trace.ptr[j]:trace.ptr[j + 1]].max() < hi for j in range(trace.jobs)]
        assert bitmask_store_jobs(trace, layout).tolist() == stores
        if work.flags.size and work.phase != "contract-expand":
            enqueued[0] = start + int(np.count_nonzero(work.flags & KEPT))

    try:
        coupled_launches(graph, source, parse_coupling(f"{name}-{mode}"), grid, grid * 256, observe=check,
                         spread=spread)
    except QueueOverflow:
        pass


def test_the_queues_take_turns_as_on_the_gpu():
    slots = _QueueSlots()
    steps = [slots.step(p) for p in ("expand", "pieces", "contract", "expand", "contract-expand", "contract")]
    # An output of the input's kind goes to that kind's other queue; of the other kind, to the queue its kind
    # used last (gpu_validate.couplings.GpuCoupledBfs.plan); pieces go into the expanding launch's output.
    assert steps == [("vertex_queue", "edge_queue"), (None, "edge_queue"), ("edge_queue", "vertex_queue"),
                     ("vertex_queue", "edge_queue"), ("edge_queue", "edge_queue_next"),
                     ("edge_queue_next", "vertex_queue")]


@pytest.mark.parametrize("label", ["hybrid", "two-phase", "expand-contract-history"])
def test_a_predicted_bfs_has_one_timed_row_per_launch(label):
    graph = sm.load_graph("kron:scale=10,ef=8")
    source = sm.pick_sources(graph, 1, 1)[0]
    coupling = parse_coupling(label)
    table = predict_coupled_bfs(graph, source, coupling, H200)
    launches = coupled_launches(graph, source, coupling, FULL_WAVE, FULL_WAVE * 256)
    launches = launches[launches["phase"] != "setup"].reset_index(drop=True)
    pd.testing.assert_frame_equal(table[list(launches.columns)], launches)
    assert list(table.columns) == [*launches.columns, *TIME_COLUMNS]
    assert (table["predicted_ns"] >= table["fixed_ns"]).all() and (table["fixed_ns"] > 0).all()
    assert table["predicted_ns"].to_numpy() == pytest.approx(
        (table["memory_ns"] + table["fixed_ns"] + table["store_flush_ns"]).to_numpy())
    # a launch that stores (queue entries, labels, bitmask bytes) pays [store_flush] for at least one block
    flush = table["store_flush_ns"]
    assert ((flush == 0) | (flush >= min(H200.store_flush.ns))).all() and (flush <= max(H200.store_flush.ns)).all()
    assert (flush > 0).sum() > len(table) / 2
    assert (table["grid"] <= FULL_WAVE).all()
    listed = coupling.mode == "atomic"  # the package lists the default lookup's kernels only
    assert table["inst_executed"].notna().all() == listed and table["inst_executed"].isna().all() != listed


def test_a_timed_run_finds_what_the_reset_wrote_in_the_l2(monkeypatch):
    # The GPU's run writes the labels, the bitmask, the source's queue entry and the counters before its first
    # launch. On a graph whose arrays the L2 holds at once nothing is evicted, so with those sectors resident
    # exactly the first access of each of them that the BFS makes turns from a miss into a hit.
    import opmachine.coupled as coupled

    graph = sm.load_graph("kron:scale=10,ef=8")
    source = sm.pick_sources(graph, 1, 1)[0]
    coupling = parse_coupling("expand-contract")
    layout = coupled_layout_for(graph.n, graph.m)
    touched: set[int] = set()
    simulate = coupled.simulate_launch_loads

    def following(trace, *args, **kwargs):
        touched.update(trace.sectors.tolist())
        return simulate(trace, *args, **kwargs)

    monkeypatch.setattr(coupled, "simulate_launch_loads", following)
    reset = predict_coupled_bfs(graph, source, coupling, H200)
    monkeypatch.setattr(coupled.CoupledPredictor, "reset", lambda self: None)
    cold = predict_coupled_bfs(graph, source, coupling, H200)
    written = set()
    for name, elements in (("level", graph.n), ("bitmask", -(-graph.n // 32)), ("vertex_queue", 1),
                           ("counters", 9)):
        lo = layout.base_sector[name]
        written.update(range(lo, lo + -(-elements // ELEMENTS_PER_SECTOR)))
    assert (reset["l2_hits"] >= cold["l2_hits"]).all()
    assert int((reset["l2_hits"] - cold["l2_hits"]).sum()) == len(touched & written) > 0
    assert reset["predicted_ns"].iloc[0] < cold["predicted_ns"].iloc[0]


def test_the_l1s_hits_do_not_reach_the_counters_slice_by_hand():
    # warps 0, 1 and 2 on two slots (warp 2 on slot 0): jobs of 2, 1 and 3 sectors, the L1 serving the
    # second sector of warp 0's job and two of warp 2's
    trace = JobTrace(np.array([NF1, NF1, NF1], dtype=np.int8), np.array([0, 1, 2], dtype=np.int32),
                     np.array([0, 2, 3, 6]), np.arange(6, dtype=np.int32), 3)
    sectors = np.array([[3.0, 1.0], [1.0, 0.0], [1.0, 0.0]])  # per outcome x slot: 5 on slot 0, 1 on slot 1
    hits = np.array([False, True, False, True, False, True])
    assert l2_sectors(trace, sectors, hits).tolist() == [2.0, 1.0]
    assert l2_sectors(trace, sectors, None).tolist() == l2_sectors(trace, sectors, 0 * hits).tolist() == [5.0, 1.0]


def test_bitmask_reads_that_reach_the_l2_hold_the_counters_slice_longer():
    # read from the L2 only, every bitmask read reaches the slice that serves the queue counter's atomics: no
    # launch is faster than through the L1, and those whose phases the slice bounds are slower
    graph = sm.load_graph("rmat:scale=14,ef=16")
    source = sm.pick_sources(graph, 1, 1)[0]
    coupling = parse_coupling("expand-contract")
    l1, l2 = (predict_coupled_bfs(graph, source, coupling, H200, bitmask_l1=on) for on in (True, False))
    assert (l1["predicted_ns"] <= l2["predicted_ns"]).all() and (l2["predicted_ns"] > l1["predicted_ns"]).any()


def test_the_l1_is_followed_only_where_the_counters_slice_could_change_the_time():
    # l1_counts follows every launch's L1s; without it, a launch whose time is the same with every sector and with
    # none at the slice is timed without them: the times must not change, and a launch the slice bounds exists
    graph = sm.load_graph("kron:scale=16,ef=16")
    source = sm.pick_sources(graph, 1, 1)[0]
    coupling = parse_coupling("expand-contract")
    lazy, everywhere = (predict_coupled_bfs(graph, source, coupling, H200, l1_counts=on) for on in (False, True))
    assert lazy["predicted_ns"].tolist() == everywhere["predicted_ns"].tolist()
    assert lazy["bottleneck"].tolist() == everywhere["bottleneck"].tolist() and "L2A" in set(lazy["bottleneck"])
    assert lazy["l1_hits"].isna().all() and everywhere["l1_hits"].notna().all()


@pytest.mark.parametrize("phase", ["expand", "pieces", "contract", "expand-contract", "contract-expand",
                                   "lookup-pieces"])
def test_every_coupled_kernel_has_a_listing_whose_loops_all_have_trips(phase):
    from opmachine.instructions import kernel_code

    assert has_listing(listing_name(phase), "sm_90")
    code = kernel_code(listing_name(phase), "sm_90")
    assert {"warp", "step"} <= set(code.events)


def test_a_fused_lookups_pieces_run_the_lookup_kernel():
    fused = LaunchWork(0, "pieces", expanded=np.array([0]), out_at=np.array([-1]))
    copied = LaunchWork(0, "pieces", expanded=np.array([0]), out_at=np.array([0]))
    assert listing_phase(fused) == "lookup-pieces" and listing_phase(copied) == "pieces"
    assert MODES[-1] == "atomic"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4)), max_size=12))
def test_positions_lay_each_list_out_from_its_start(lists):
    from opmachine.kernels.couple import _positions

    indptr = np.arange(0, 1000, 7, dtype=np.int64)
    entries = np.arange(len(lists), dtype=np.int64) * 3 % (indptr.size - 1)
    lengths = np.array([length for length, _ in lists], dtype=np.int64)
    starts = np.cumsum([0] + [length + gap for length, gap in lists])[:-1].astype(np.int64)
    expected = np.zeros(int((starts + lengths).max()) if lists else 0, dtype=np.int64)
    for entry, length, start in zip(entries, lengths, starts):
        for k in range(length):
            expected[start + k] = indptr[entry] + k
    assert _positions(indptr, entries, lengths, starts).tolist() == expected.tolist()
