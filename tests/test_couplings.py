"""Seed 001's couplings (simdmodel.couplings): queues, traffic and the formulas 5n+2m, 3n+4m, 5n+4m.

A tree has no race that can let a duplicate through (an unvisited vertex appears once in its level's
edge frontier), so without culling every coupling moves exactly its formula's words. With the atomic
lookup (the default) no race lets a duplicate through on any graph: every queue is the logical frontier.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine.profile import load_profile
import simdmodel as sm
from simdmodel.couplings import (BIG_LIST, COUPLINGS, FORMULA_TRAFFIC, PIECE, SPREAD_LIST, TRAFFIC, Coupling,
                                 QueueOverflow, big_list, coupled_launches, explicit_words, has_long_lists, is_coupling,
                                 parse_coupling, redundant_expansion, with_pieces)
from simdmodel.errors import InputError
from simdmodel.graph import EdgeList, csr_from_edges

GRID, RESIDENT = 4, 4 * 256


def tree(parents) -> sm.CSRGraph:
    """The undirected tree where vertex i + 1 hangs from parents[i] (< i + 1)."""
    n = len(parents) + 1
    return csr_from_edges(EdgeList(np.arange(1, n), np.asarray(parents, dtype=np.int64), n, True, "tree"))


trees = st.integers(1, 120).flatmap(lambda n: st.tuples(*[st.integers(0, i) for i in range(n)]))


@settings(max_examples=40, deadline=None)
@given(parents=trees, pick=st.integers(0, 10**6))
def test_formulas_hold_exactly_on_a_tree_without_culling(parents, pick):
    graph = tree(parents)
    source = pick % graph.n
    for name in COUPLINGS:
        coupling = Coupling(name, "label")
        launches = coupled_launches(graph, source, coupling, GRID, RESIDENT)
        assert explicit_words(launches) == coupling.formula_words(graph.n, graph.m)
        assert redundant_expansion(launches) == 1.0


def test_formulas_are_seed_001s_and_a_hub_goes_through_pieces():
    graph = tree([0] * 3000 + list(range(1, 40)))  # a hub of 3000 leaves: its list leaves as pieces
    assert has_long_lists(graph) and graph.degrees()[0] > BIG_LIST
    n, m = graph.n, graph.m
    assert Coupling("expand-contract").formula_words(n, m) == 5 * n + 2 * m
    assert Coupling("contract-expand").formula_words(n, m) == 3 * n + 4 * m + 2
    assert Coupling("two-phase").formula_words(n, m) == 5 * n + 4 * m
    for name in COUPLINGS:  # (hybrid as contract-expand: no edge queue outgrows 10**9 resident threads)
        launches = coupled_launches(graph, 0, Coupling(name, "label"), GRID, 10**9)
        assert explicit_words(launches) == Coupling(name).formula_words(n, m)
        pieces = launches[launches["phase"] == "pieces"]
        assert pieces["input"].sum() == -(-3000 // PIECE) and pieces["column"].sum() == 3000
    # With 1024 resident threads the hub's 3000-id edge queue runs two-phase: the vertices of that
    # iteration pass through a vertex queue (2 words each), and the next level's 39 too (3039 ids).
    hybrid = explicit_words(coupled_launches(graph, 0, Coupling("hybrid", "label"), GRID, RESIDENT))
    assert hybrid == 3 * n + 4 * m + 2 + 2 * (3000 + 39) <= 5 * n + 4 * m


def test_a_launch_short_of_a_full_wave_leaves_lists_longer_than_a_warp_as_pieces():
    # Hub 0 has 2000 leaves, two of which have 100 and 500 children. The source's list (2000 > BIG_LIST)
    # leaves its expansion as pieces either way; the next launch looks up 2000 ids on 8 of GRID's CTAs.
    graph = tree([0] * 2000 + [1] * 100 + [2] * 500)
    assert big_list(1, 132 * 8, True, True) == SPREAD_LIST == 32
    assert big_list(132 * 8 * 256, 132 * 8, True, True) == BIG_LIST
    assert big_list(1, 132 * 8, False, True) == big_list(1, 132 * 8, True, False) == BIG_LIST
    for spread in (True, False):
        launches = coupled_launches(graph, 0, Coupling("contract-expand", "label"), 16, 16 * 256, spread=spread)
        rows = launches[launches["level"] == 0][["phase", "input", "column"]].values.tolist()
        spread_edges = 101 + 501 if spread else 0  # (their parent too)
        assert rows == [["setup", 0, 0], ["expand", 1, 0], ["pieces", 2, 2000],
                        ["contract-expand", 2000, 1998 + 602 - spread_edges],
                        ["pieces", 2 if spread else 0, spread_edges]]
        assert explicit_words(launches) == Coupling("contract-expand").formula_words(graph.n, graph.m)


def _random_graph(n, pairs):
    src, dst = zip(*pairs) if pairs else ((), ())
    return csr_from_edges(EdgeList(np.array(src, dtype=np.int64) % n, np.array(dst, dtype=np.int64) % n, n, True,
                                   "random"))


graphs = st.integers(2, 60).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1, max_size=300)))


@settings(max_examples=40, deadline=None)
@given(case=graphs, grid=st.integers(1, 3))
def test_the_atomic_lookup_makes_every_queue_the_logical_frontier(case, grid):
    graph = _random_graph(*case)
    source = int(np.flatnonzero(graph.degrees())[0])
    front = sm.bfs(graph, source)
    for name in COUPLINGS:
        launches = coupled_launches(graph, source, Coupling(name), grid, RESIDENT)
        assert redundant_expansion(launches) == 1.0
        lookups = launches[launches["phase"].isin(["contract", "expand-contract"])]
        for row in lookups.itertuples():
            assert row.output == (front.vertex_frontier_sizes()[row.level + 1] if row.level + 1 < front.depth else 0)
        assert launches["label_write"].sum() == front.reached  # each vertex labelled once (the source by the host)


@settings(max_examples=40, deadline=None)
@given(case=graphs, grid=st.integers(1, 3))
def test_the_claim_build_runs_the_same_queues_with_one_bitmask_store_per_claim(case, grid):
    graph = _random_graph(*case)
    source = int(np.flatnonzero(graph.degrees())[0])
    for name in COUPLINGS:
        plain = coupled_launches(graph, source, Coupling(name), grid, RESIDENT)
        claim = coupled_launches(graph, source, Coupling(name), grid, RESIDENT, claim=True)
        assert claim["output"].tolist() == plain["output"].tolist()
        assert claim["mask_write"].tolist() == claim["label_write"].tolist()  # the claims, the host's set-up aside
        # the lane that claims a vertex is the same in both builds; the plain one also stores where a claim fails
        assert claim["mask_write"].sum() <= plain["mask_write"].sum()
    # each launch tells the model how its lookups store: atomic ORs in the claim build's atomic lookup only
    seen = []
    for mode in ("atomic", "history"):
        for claim in (False, True):
            coupled_launches(graph, source, Coupling("two-phase", mode), grid, RESIDENT, claim=claim,
                             observe=lambda work: seen.append((mode, claim, work.atomic_or)))
    assert {(mode, claim) for mode, claim, atomic_or in seen if atomic_or} == {("atomic", True)}


@settings(max_examples=40, deadline=None)
@given(case=graphs, grid=st.integers(1, 3), mode=st.sampled_from(["label", "warp", "history"]))
def test_races_only_add_work_and_every_launch_balances_its_traffic(case, grid, mode):
    graph = _random_graph(*case)
    source = int(np.flatnonzero(graph.degrees())[0])
    for name in COUPLINGS:
        try:
            launches = coupled_launches(graph, source, Coupling(name, mode), grid, RESIDENT)
        except QueueOverflow:  # duplicate edges race through a small queue: seed 001's runaway case
            continue
        assert redundant_expansion(launches) >= 1.0
        assert explicit_words(launches) >= 0 and (launches[list(TRAFFIC)] >= 0).all().all()
        expand = launches[launches["phase"] == "expand"]
        assert (expand["row"] == 2 * expand["vertex_read"]).all() and (expand["column"] == expand["edge_write"]).all()
        contract = launches[launches["phase"] == "contract"]
        assert (contract["edge_read"] == contract["input"]).all()
        assert (contract["vertex_write"] == contract["output"]).all()
        assert (contract["mask_read"] <= contract["input"]).all()
        lookups = launches[launches["phase"] != "setup"]
        assert (lookups["label_write"] <= lookups["mask_write"]).all()


def test_hybrid_runs_two_phase_where_the_edge_queue_outgrows_the_resident_threads():
    hybrid = Coupling("hybrid")
    assert hybrid.start() == ("expand",)
    assert hybrid.iteration(RESIDENT + 1, RESIDENT) == ("contract", "expand")
    assert hybrid.iteration(RESIDENT, RESIDENT) == ("contract-expand",)
    assert Coupling("two-phase").iteration(1, RESIDENT) == ("expand", "contract")
    assert with_pieces(("contract", "expand"), True) == ("contract", "expand", "pieces")
    assert with_pieces(("contract", "expand"), False) == ("contract", "expand")
    graph = sm.load_graph("kron:scale=12,ef=8")
    launches = coupled_launches(graph, int(sm.pick_sources(graph, 1, 1)[0]), hybrid, GRID, RESIDENT)
    big = launches[launches["phase"] == "contract"]
    assert len(big) and (big["input"] > RESIDENT).all()
    assert (launches[launches["phase"] == "contract-expand"]["input"] <= RESIDENT).all()


def test_runaway_redundant_expansion_is_a_queue_overflow():
    graph = sm.load_graph("kron:scale=14,ef=16")
    with pytest.raises(QueueOverflow, match="outgrow its 1,047,922 slots"):
        coupled_launches(graph, 6998, Coupling("two-phase", "label"), 1056, 1056 * 256)


@pytest.mark.parametrize("text, label", [("hybrid", "hybrid"), ("Two-Phase-History", "two-phase-history"),
                                         ("expand-contract-atomic", "expand-contract"),
                                         ("contract-expand-warp", "contract-expand-warp")])
def test_labels_round_trip(text, label):
    assert parse_coupling(text).label == label and is_coupling(text)


@pytest.mark.parametrize("text, message", [("sm-32", "unknown coupling 'sm-32'"),
                                           ("two-phase-bitmask", "lookup mode 'bitmask' is not one a coupling runs"),
                                           ("hybrid-cas", "lookup mode 'cas'"), ("expand", "unknown coupling")])
def test_bad_couplings_are_one_clear_error(text, message):
    with pytest.raises(InputError, match=message):
        parse_coupling(text)
    assert not is_coupling("sm-32") and not is_coupling("swc")


def test_the_couplings_command_prints_traffic_and_overflow(tmp_path, capsys):
    from simdreport.cli import main

    assert main(["couplings", "kron:scale=14", "--kernels", "two-phase-label,hybrid", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "two-phase-label" in out and "True" in out and "formula_words" in out
    assert main(["couplings", "grid2d:side=30", "--per-level", "--out", str(tmp_path / "l.csv"), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "l.csv")
    assert set(table["kernel"]) == set(COUPLINGS) and set(FORMULA_TRAFFIC) <= set(table.columns)
    assert main(["couplings", "grid2d:side=30", "--kernels", "hybrid", "--format", "json", "--out",
                 str(tmp_path / "s.json"), "--quiet"]) == 0
    rows = json.loads((tmp_path / "s.json").read_text())["rows"]
    assert rows[0]["redundant_expansion"] == 1.0 and not rows[0]["overflow"]


def test_the_couplings_command_predicts_each_bfs_and_launch(tmp_path, capsys):
    from simdreport.cli import main

    assert main(["couplings", "grid2d:side=30", "--kernels", "hybrid,two-phase", "--time", "--format", "json",
                 "--out", str(tmp_path / "s.json"), "--quiet"]) == 0
    document = json.loads((tmp_path / "s.json").read_text())
    rows = document["rows"]
    assert all(row["predicted_ms"] > 0 and row["predicted_gteps"] > 0 for row in rows)
    assert document["bitmask_rates"] is (load_profile(document["profile"]).bitmask is not None)
    capsys.readouterr()
    assert main(["couplings", "grid2d:side=30", "--kernels", "hybrid", "--time", "--gpu", "h100"]) == 0
    assert "no [bitmask] rates" not in capsys.readouterr().out
    assert main(["couplings", "grid2d:side=30", "--kernels", "hybrid", "--time", "--gpu", "k40c"]) == 0
    assert "profile k40c has no [bitmask] rates" in capsys.readouterr().out
    assert main(["couplings", "grid2d:side=30", "--kernels", "hybrid", "--time", "--per-level", "--out",
                 str(tmp_path / "l.csv"), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "l.csv")
    timed = table[table["phase"] != "setup"]
    assert timed["predicted_ns"].gt(0).all() and table.loc[table["phase"] == "setup", "predicted_ns"].isna().all()
    assert rows[0]["kernel"] == "hybrid"  # the BFS's time is its launches' (the table keeps 6 digits)
    assert rows[0]["predicted_ms"] * 1e6 == pytest.approx(timed["predicted_ns"].sum(), rel=1e-5)


def test_the_couplings_command_times_each_launch_as_predict_coupled_bfs_does(tmp_path):
    # the command follows each BFS with its own predictors: they start from the L2 the GPU's run starts from too
    from opmachine.coupled import predict_coupled_bfs
    from simdreport.cli import main

    assert main(["couplings", "kron:scale=9,ef=8", "--source", "0", "--kernels", "expand-contract", "--gpu", "h200",
                 "--time", "--per-level", "--out", str(tmp_path / "l.csv"), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "l.csv")
    timed = table[table["phase"] != "setup"]
    expected = predict_coupled_bfs(sm.load_graph("kron:scale=9,ef=8"), 0, parse_coupling("expand-contract"),
                                   load_profile("h200"))
    assert timed["predicted_ns"].to_numpy() == pytest.approx(expected["predicted_ns"].to_numpy(), rel=1e-5)


def test_the_couplings_command_follows_the_claim_build(tmp_path, capsys):
    from simdreport.cli import main

    for build in ("plain", "claim"):
        assert main(["couplings", "kron:scale=12", "--kernels", "two-phase", "--bitmask-stores", build, "--per-level",
                     "--format", "json", "--out", str(tmp_path / f"{build}.json"), "--quiet"]) == 0
    plain, claim = (json.loads((tmp_path / f"{build}.json").read_text()) for build in ("plain", "claim"))
    assert (plain["bitmask_stores"], claim["bitmask_stores"]) == ("plain", "claim")
    launches = [row for row in claim["rows"] if row["phase"] != "setup"]
    assert all(row["mask_write"] == row["label_write"] for row in launches)  # one bit per claim
    assert [row["output"] for row in claim["rows"]] == [row["output"] for row in plain["rows"]]
    assert sum(row["mask_write"] for row in launches) < sum(row["mask_write"] for row in plain["rows"])


def test_the_couplings_command_spreads_small_launches_lists_unless_told_not_to(tmp_path):
    from simdreport.cli import main

    for flag in ([], ["--no-spread"]):
        out = tmp_path / f"{len(flag)}.json"
        assert main(["couplings", "rmat:scale=12,ef=16", "--kernels", "contract-expand", "--per-level", "--format",
                     "json", "--out", str(out), "--quiet", *flag]) == 0
    spread, kept = (json.loads((tmp_path / f"{k}.json").read_text()) for k in (0, 1))
    assert (spread["spread"], kept["spread"]) == (True, False)
    pieces = [sum(row["input"] for row in table["rows"] if row["phase"] == "pieces") for table in (spread, kept)]
    assert pieces[0] > pieces[1] > 0  # the first launches are small: their lists longer than a warp leave as pieces
    words = [sum(row[key] for row in table["rows"] for key in FORMULA_TRAFFIC) for table in (spread, kept)]
    assert words[0] == words[1] and [r["output"] for r in spread["rows"]] == [r["output"] for r in kept["rows"]]


@pytest.mark.parametrize("args, message", [(["--kernels", "sm-32"], "unknown coupling 'sm-32'"),
                                           (["--kernels", "hybrid-bitmask"], "'bitmask' is not one a coupling runs"),
                                           (["--kernels", "hybrid,hybrid-atomic"], "lists a coupling twice")])
def test_bad_couplings_options_are_one_line(args, message, capsys):
    from simdreport.cli import main

    assert main(["couplings", "grid2d:side=30", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_the_couplings_command_offers_the_gpu_builds_with_their_default_first():
    from gpu_validate.modules import BITMASK_STORES, DEFAULT_BUILD
    from simdreport.arguments import build_parser

    args = build_parser().parse_args(["couplings", "grid2d:side=30"])
    assert args.bitmask_stores == DEFAULT_BUILD[1]
    for build in BITMASK_STORES:
        args = build_parser().parse_args(["couplings", "grid2d:side=30", "--bitmask-stores", build])
        assert args.bitmask_stores == build


def test_the_couplings_command_follows_the_l1_when_asked(tmp_path, capsys):
    from simdreport.cli import main

    assert main(["couplings", "kron:scale=11,ef=16", "--kernels", "two-phase", "--time", "--l1", "--per-level",
                 "--out", str(tmp_path / "l.csv"), "--quiet"]) == 0
    table = pd.read_csv(tmp_path / "l.csv")
    timed = table[table["phase"] != "setup"]
    assert (timed["l1_hits"] <= timed["l1_sectors"]).all() and timed.loc[timed["mask_read"] == 0, "l1_hits"].eq(0).all()
    assert timed.loc[timed["phase"] == "contract", "l1_hits"].gt(0).any()
    assert main(["couplings", "kron:scale=11,ef=16", "--kernels", "two-phase", "--time", "--l1", "--format", "json",
                 "--out", str(tmp_path / "s.json"), "--quiet"]) == 0
    rate = json.loads((tmp_path / "s.json").read_text())["rows"][0]["l1_hit_rate"]
    assert rate == pytest.approx(timed["l1_hits"].sum() / timed["l1_sectors"].sum(), rel=1e-5)
    assert main(["couplings", "kron:scale=11,ef=16", "--kernels", "two-phase", "--time", "--l1", "--gpu", "k40c"]) == 0
    assert "profile k40c has no [l1_carveout]" in capsys.readouterr().out
    assert main(["couplings", "kron:scale=11,ef=16", "--l1"]) == 2
    assert capsys.readouterr().err == ("simdmodel: error: --l1 needs --time (the L1 is followed as the operator "
                                       "machine times each launch)\n")
