"""Status lookup with culling (simdmodel.lookup, seed 001 §4.2): hand cases, the naive twin, invariants,
the GPU measurement's re-prediction without a GPU, and its bad input."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive
import simdmodel as sm
from simdmodel.errors import InputError
from simdmodel.lookup import (ACCESS_FLAGS, MODES, NO_FLAGS, STATUS_ACCESSES, edge_frontier, false_negative_rates,
                              lookup_launch, lookup_survivors, lookup_table, status_arrays)

BITMASK, LABEL, WARP, HISTORY = range(4)


def survivors(ids, visited, mode, grid=1, waves=True):
    return int(lookup_survivors(np.asarray(ids, dtype=np.int64), np.asarray(visited, dtype=np.bool_), mode, grid,
                                waves))


def test_lanes_of_one_instruction_see_the_same_status():
    # Three lanes of one warp look up unvisited vertex 5: all see it unvisited and all pass, in every
    # order, unless warp culling keeps only the lane that owns its slot.
    unvisited = [False] * 8
    for mode in (BITMASK, LABEL):
        assert survivors([5, 5, 5], unvisited, mode) == survivors([5, 5, 5], unvisited, mode, waves=False) == 3
    assert survivors([5, 5, 5], unvisited, WARP) == 1
    # Ids 5 and 133 share the warp table's slot 5: 133 (the higher lane) owns it, so both 5s pass
    # warp culling and only one 133 survives it.
    assert survivors([5, 133, 5, 133], [False] * 134, WARP) == 3


def test_warps_of_one_wave_miss_each_others_stores():
    # Vertex 7 in lane 0 of warp 0 and of warp 1 (32 ids apart), one tile: the same wave, so both pass;
    # with every warp seeing the warps before it, the second is culled by the label.
    ids = [7] + [0] * 31 + [7]
    visited = [True] + [False] * 7
    assert survivors(ids, visited, LABEL) == 2 and survivors(ids, visited, LABEL, waves=False) == 1
    # A tile of the next wave (grid 1: tile 1 is wave 1) sees it.
    assert survivors([7] + [0] * 255 + [7], visited, LABEL) == 1


def test_atomic_lanes_of_one_wave_that_find_a_vertex_unvisited_all_try_the_swap():
    # Vertex 7 in lane 0 of warps 0 and 1 of one tile: both read its bit and label before either claim
    # lands, both try the compare-and-swap; the first claims it, the second's swap fails. A tile of the
    # next wave reads the claimed label and stops there.
    for ids, claims in (([7] + [0] * 31 + [7], 2), ([7] + [0] * 255 + [7], 1)):
        label, mask = status_arrays(np.array([True] + [False] * 7))
        flags = np.empty(len(ids), dtype=np.uint8)
        accesses = np.zeros(len(STATUS_ACCESSES), dtype=np.int64)
        kept = lookup_launch(np.array(ids, dtype=np.int64), label, mask, len(MODES) - 1, 1, True,
                             np.empty(len(ids), dtype=np.int64), accesses, flags)
        claim, keep = 1 << ACCESS_FLAGS.index("label_claim"), 1 << ACCESS_FLAGS.index("kept")
        assert kept == 1 and accesses[3] == 1 and int(np.count_nonzero(flags & claim)) == claims
        assert flags[0] & keep and not flags[-1] & keep


def test_a_clobbered_bit_lets_a_visited_vertex_through_the_bitmask_only():
    # Vertices 0 and 1 (one byte) are found by lanes 0 and 1 of one warp: lane 1's byte store wins, so
    # bit 0 is lost. A later wave's lookup of 0 passes the bitmask alone; the label catches it.
    ids = [0, 1] + [2] * 254 + [0]
    visited = [False, False, True]
    assert survivors(ids, visited, BITMASK) == 3 and survivors(ids, visited, LABEL) == 2


def test_history_culls_an_id_its_cta_saw_in_an_earlier_wave():
    # Vertex 9 unvisited in tile 0 and tile 2, both on CTA 0 of a 2-CTA grid (waves 0 and 1): the
    # history of CTA 0 holds it, so the second is culled before the status is read.
    ids = [9] + [1] * 511 + [9]
    visited = [False] + [True] * 9
    visited[9] = False
    assert survivors(ids, visited, HISTORY, grid=2) == 1
    # Without history the label culls it too: the first wave's store has landed.
    assert survivors(ids, visited, WARP, grid=2) == 1


small_ids = st.lists(st.integers(0, 299), min_size=1, max_size=1200)


@settings(max_examples=60, deadline=None)
@given(ids=small_ids, seen=st.sets(st.integers(0, 299), max_size=150), grid=st.integers(1, 3),
       waves=st.booleans())
def test_matches_the_naive_lookup_in_every_mode(ids, seen, grid, waves):
    visited = [v in seen for v in range(300)]
    for mode in range(len(MODES)):
        assert survivors(ids, visited, mode, grid, waves) == naive.lookup_survivors(ids, visited, mode, grid, waves)


@settings(max_examples=60, deadline=None)
@given(ids=small_ids, seen=st.sets(st.integers(0, 299), max_size=150), grid=st.integers(1, 3),
       waves=st.booleans(), items=st.integers(1, 2))
def test_each_ids_accesses_match_the_naive_lookup_and_add_up_to_the_counts(ids, seen, grid, waves, items):
    # The flags the operator machine turns into jobs: id by id as the naive twin has them, CTAs taking
    # `items` tiles at once (a contraction's two), and summing to the launch's access counts.
    visited = np.array([v in seen for v in range(300)])
    for mode, claim in [*((m, False) for m in range(len(MODES))), (len(MODES) - 1, True)]:
        label, mask = status_arrays(visited)
        flags = np.empty(len(ids), dtype=np.uint8)
        accesses = np.zeros(len(STATUS_ACCESSES), dtype=np.int64)
        kept = lookup_launch(np.asarray(ids, dtype=np.int64), label, mask, mode, grid, waves,
                             np.empty(len(ids), dtype=np.int64), accesses, flags, items, claim)
        expected_kept, did = naive.lookup_flags(ids, list(visited), mode, grid, waves, items, claim)
        assert kept == expected_kept
        names = [{name for k, name in enumerate(ACCESS_FLAGS) if f & (1 << k)} for f in flags]
        assert names == did
        has = {name: sum(name in d for d in did) for name in ACCESS_FLAGS}
        won = sum({"label_claim", "kept"} <= d for d in did)  # a claim's label store is its swap's success
        assert accesses.tolist() == [has["mask_read"], has["label_read"], has["mask_write"], has["label_write"] + won]


def test_a_claim_sets_its_bit_where_a_plain_byte_store_clobbers_its_neighbours():
    # Vertices 0 and 1 share bitmask byte 0. One warp finds both unset and claims both: plain byte stores of
    # the byte read (0) with each lane's bit land in lane order, so only lane 1's bit 0b10 stays; claims OR
    # both bits in. Looking 0 up again then costs the plain build a label read and another store.
    atomic = len(MODES) - 1
    for claim, byte, again in ((False, 0b10, [1, 1, 1, 0]), (True, 0b11, [1, 0, 0, 0])):
        label, mask = status_arrays(np.zeros(16, dtype=bool))
        accesses = np.zeros(len(STATUS_ACCESSES), dtype=np.int64)
        kept = np.empty(2, dtype=np.int64)
        assert lookup_launch(np.array([0, 1]), label, mask, atomic, 1, True, kept, accesses, NO_FLAGS, 1, claim) == 2
        assert mask[0] == byte and accesses.tolist() == [2, 2, 2, 2]
        accesses[:] = 0
        assert lookup_launch(np.array([0]), label, mask, atomic, 1, True, kept, accesses, NO_FLAGS, 1, claim) == 0
        assert accesses.tolist() == again  # STATUS_ACCESSES: mask reads, label reads, mask stores, label stores


@settings(max_examples=60, deadline=None)
@given(ids=small_ids, seen=st.sets(st.integers(0, 299), max_size=150), grid=st.integers(1, 3),
       waves=st.booleans())
def test_each_filter_lets_through_no_more_and_every_new_vertex_at_least_once(ids, seen, grid, waves):
    visited = [v in seen for v in range(300)]
    counts = [survivors(ids, visited, mode, grid, waves) for mode in range(len(MODES))]
    new = [v for v in ids if v not in seen]
    assert counts[0] >= counts[1] >= counts[2] >= counts[3] >= counts[4] == len(set(new))  # atomic: each new once
    assert counts[1] <= len(new)


def test_a_bfs_table_has_the_next_frontier_as_its_ideal_and_rates_over_m_minus_n():
    graph = sm.load_graph("grid2d:side=30")
    table = lookup_table(graph, 0, grid=4)
    frontiers = sm.bfs(graph, 0)
    assert table["mode"].tolist()[:len(MODES)] == list(MODES)
    by_level = table[table["mode"] == "label"].set_index("level")
    assert by_level["ideal"].tolist() == [frontiers.frontier(d + 1).size for d in range(frontiers.depth - 1)] + [0]
    assert by_level["edges"].tolist() == [edge_frontier(graph, frontiers.frontier(d)).size
                                          for d in range(frontiers.depth)]
    assert (table["false_negatives"] >= 0).all()
    rates = false_negative_rates(table, graph.n, graph.m)
    assert rates["label"] == table[table["mode"] == "label"]["false_negatives"].sum() / (graph.m - graph.n)
    with pytest.raises(InputError, match="unknown lookup mode 'cas'"):
        lookup_table(graph, 0, grid=4, modes=("cas",))
    with pytest.raises(InputError, match="grid of at least one CTA"):
        lookup_table(graph, 0, grid=0)


def test_an_earlier_gpu_run_is_predicted_again_without_a_gpu(tmp_path):
    # A measured folder whose "measurements" are the wave model's own counts: the re-prediction writes
    # false-negative rates equal to them, and the sequential model's beside them.
    from gpu_validate.lookup import main

    graph = sm.load_graph("grid2d:side=20")
    table = lookup_table(graph, 0, grid=2)
    measured = table.rename(columns={"survivors": "measured"}).drop(columns="false_negatives")
    measured = measured.assign(graph=graph.name, source=0, measured_min=measured["measured"],
                               measured_max=measured["measured"])
    measured.to_csv(tmp_path / "lookup.csv.gz", index=False)
    (tmp_path / "summary.json").write_text(json.dumps({"device": "test", "grid": 2, "command": "by hand"}))
    assert main(["--measured", str(tmp_path)]) == 0
    record = json.loads((tmp_path / "summary.json").read_text())
    for row in record["rows"]:
        assert row["fn_rate_predicted"] == pytest.approx(row["fn_rate_measured"])
        assert row["fn_rate_predicted_sequential"] <= row["fn_rate_predicted"] + 1e-12
    assert set(pd.read_csv(tmp_path / "lookup.csv.gz")["predicted"]) <= set(table["survivors"])


def test_a_folder_that_is_no_lookup_run_is_one_line(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gpu_validate.lookup", "--measured", str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "not a lookup run's folder" in done.stderr


def test_the_committed_h200_run_agrees_with_the_wave_model_within_a_point_of_m_minus_n():
    from pathlib import Path

    record = json.loads((Path(__file__).parent.parent / "gpu_validate" / "results" / "nvidia-h200-lookup"
                         / "summary.json").read_text())
    assert record["device"] == "NVIDIA H200" and len(record["rows"]) == 24
    for row in record["rows"]:
        assert abs(row["fn_rate_predicted"] - row["fn_rate_measured"]) <= 0.003, row


def test_the_lookup_command_prints_rates_and_writes_csv_and_json(tmp_path, capsys):
    from simdreport.cli import main

    assert main(["lookup", "grid2d:side=30", "--modes", "label,warp", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "one wave of 1056 CTAs of 256 threads" in out and "fn_rate" in out
    graph = sm.load_graph("grid2d:side=30")
    source = int(sm.pick_sources(graph, 1, 1)[0])
    expected = lookup_table(graph, source, grid=1056, modes=("label", "warp"))
    assert main(["lookup", "grid2d:side=30", "--modes", "label,warp", "--per-level", "--out",
                 str(tmp_path / "levels.csv"), "--quiet"]) == 0
    levels = pd.read_csv(tmp_path / "levels.csv")
    assert levels["survivors"].tolist() == expected["survivors"].tolist()
    assert main(["lookup", "grid2d:side=30", "--race-free", "--out", str(tmp_path / "sum.json"), "--quiet"]) == 0
    record = json.loads((tmp_path / "sum.json").read_text())
    assert record["race_free"] and [r["mode"] for r in record["rows"]] == list(MODES)
    race_free = lookup_table(graph, source, grid=1056, waves=False)
    assert [r["survivors"] for r in record["rows"]] == race_free.groupby("mode", sort=False)["survivors"].sum().tolist()


@pytest.mark.parametrize("args, message", [(["--modes", "cas"], "unknown lookup mode 'cas'"),
                                           (["--modes", "warp,warp"], "--modes lists a mode twice"),
                                           (["--source", "99999"], "source")])
def test_bad_lookup_options_are_one_line(args, message, capsys):
    from simdreport.cli import main

    assert main(["lookup", "grid2d:side=30", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=1, max_size=30), st.data())
def test_edge_frontier_concatenates_the_lists_in_queue_order(degrees, data):
    indptr = np.concatenate(([0], np.cumsum(degrees))).astype(np.int64)
    graph = sm.CSRGraph(indptr, np.arange(indptr[-1], dtype=np.int32) % len(degrees), "lists")
    frontier = np.array(data.draw(st.lists(st.integers(0, len(degrees) - 1), max_size=12)), dtype=np.int32)
    expected = [int(u) for v in frontier for u in graph.indices[indptr[v]:indptr[v + 1]]]
    got = edge_frontier(graph, frontier)
    assert got.dtype == np.int64 and got.tolist() == expected
