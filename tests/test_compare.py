"""Comparison arithmetic of gpu_validate.compare on hand-built tables with hand-computed answers."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_validate.compare import (
    BEST_COLUMNS,
    KEY,
    best_mapping,
    counter_errors,
    exact_checks,
    pearson_r,
    round_times,
    summarize,
    time_errors,
    whole_bfs,
)
from simdmodel.errors import DataWarning, InputError

SERVERS = ("ani", "nf1", "erl", "edl", "nf2", "op")
NA = pd.NA


def launch(level, phase, **values):
    return {"graph": "g", "kernel": "sm-2", "source": 0, "level": level, "phase": phase, **values}


def jobs(prefix, ani, nf1, erl, edl, nf2, op):
    return {f"{prefix}{s}": v for s, v in zip(SERVERS, (ani, nf1, erl, edl, nf2, op))}


def hand_tables():
    measured = pd.DataFrame([
        launch(0, "expand", lane_slots=64, useful_lanes=10, time_ns=100, **jobs("gpu_jobs_", 0, 2, 2, 5, 5, 4)),
        launch(0, "compact", lane_slots=0, useful_lanes=0, time_ns=28, **jobs("gpu_jobs_", 4, 0, 0, 0, 0, 1)),
        launch(1, "expand", lane_slots=96, useful_lanes=40, time_ns=200, **jobs("gpu_jobs_", 0, 4, 4, 8, 8, 6)),
        launch(1, "compact", lane_slots=0, useful_lanes=0, time_ns=56, **jobs("gpu_jobs_", 4, 0, 0, 0, 0, 0)),
    ])
    lanes = pd.DataFrame([launch(0, "expand", lane_slots=64, useful_lanes=10),
                          launch(1, "expand", lane_slots=96, useful_lanes=41)])
    predicted = pd.DataFrame([
        launch(0, "expand", mode="simulation", predicted_ns=150, l2_sectors=100, l2_hits=60, dram_sectors=40,
               load=96, **jobs("jobs_", 0, 2, 2, 5, 5, 5)),
        launch(0, "compact", mode="simulation", predicted_ns=10, l2_sectors=8, l2_hits=0, dram_sectors=5,
               load=4, **jobs("jobs_", 4, 0, 0, 0, 0, 1)),
        launch(1, "expand", mode="simulation", predicted_ns=190, l2_sectors=1, l2_hits=1, dram_sectors=0,
               load=1, **jobs("jobs_", 0, 4, 4, 8, 9, 6)),
        # the counters-mode row carries other jobs: exact checks must ignore it
        launch(0, "expand", mode="counters", predicted_ns=140, l2_sectors=80, l2_hits=50, dram_sectors=40,
               load=64, **jobs("jobs_", 9, 9, 9, 9, 9, 9)),
    ])
    ncu = pd.DataFrame([
        launch(0, "expand", ld_inst=14, st_inst=4, l2_read_sectors=60, l2_read_hits=30, l2_read_misses=30,
               l2_write_sectors=20, dram_read_sectors=30, dram_write_sectors=10, achieved_occupancy_pct=50.0),
        launch(0, "compact", ld_inst=5, st_inst=1, l2_read_sectors=4, l2_read_hits=4, l2_read_misses=0,
               l2_write_sectors=4, dram_read_sectors=0, dram_write_sectors=0, achieved_occupancy_pct=3.125),
    ])
    return measured, predicted, lanes, ncu


def flags(series):
    return [None if v is NA else bool(v) for v in series]


def test_exact_checks_by_hand():
    measured, predicted, lanes, ncu = hand_tables()
    out = exact_checks(measured, predicted, lanes, ncu)
    assert list(out.columns[:5]) == list(KEY)
    assert flags(out["lane_exact"]) == [True, None, False, None]
    assert out["lane_slots_measured"].isna().tolist() == [False, True, False, True]
    assert out["useful_lanes_model"].tolist()[2] == 41
    assert out["jobs_nf2_diff"].tolist()[:3] == [0, 0, -1]
    assert math.isnan(out["jobs_nf2_diff"].iloc[3])
    assert flags(out["loads_exact"]) == [True, True, False, None]
    assert out["op_error"].tolist()[:3] == [0.25, 0.0, 0.0]  # (5-4)/4; equal; equal
    assert math.isnan(out["op_error"].iloc[3])
    assert out["predicted_loads"].tolist()[:3] == [14, 4, 25]  # 0+4+4+8+9 at level 1
    assert out["ld_diff"].tolist()[:2] == [0, 1]
    assert out["st_diff"].tolist()[:2] == [-1, 0]
    assert flags(out["ncu_loads_exact"]) == [True, False, None, None]
    assert flags(out["jobs_exact"]) == [True, False, False, None]


@pytest.mark.parametrize("ncu", [None, "empty"])
def test_exact_checks_without_ncu(ncu):
    measured, predicted, lanes, full = hand_tables()
    out = exact_checks(measured, predicted, lanes, full.iloc[:0] if ncu == "empty" else None)
    assert flags(out["ncu_loads_exact"]) == [None] * 4
    assert out["ld_inst"].isna().all()
    assert flags(out["jobs_exact"]) == flags(out["loads_exact"]) == [True, True, False, None]


def test_exact_checks_without_predictions_or_lanes():
    measured, *_ = hand_tables()
    out = exact_checks(measured, None, None)
    assert flags(out["lane_exact"]) == flags(out["jobs_exact"]) == [None] * 4


def test_counter_errors_by_hand():
    _, predicted, _, ncu = hand_tables()
    out = counter_errors(predicted, ncu, physical_warps=128)
    assert list(out.columns) == [*KEY, "metric", "predicted", "measured", "error"]
    first = out[out["phase"] == "expand"].set_index("metric")
    assert first["measured"].to_dict() == {"l2_sectors": 80, "l2_hits": 50, "dram_sectors": 40, "load": 64}
    assert first["error"].to_dict() == {"l2_sectors": 0.25, "l2_hits": 0.2, "dram_sectors": 0.0, "load": 0.5}
    second = out[out["phase"] == "compact"].set_index("metric")
    # 8 sectors, 8 "hits" (no read missed), dram 5 predicted against 0 measured: no relative error
    assert second["measured"].to_dict() == {"l2_sectors": 8, "l2_hits": 8, "dram_sectors": 0, "load": 4}
    assert second.loc["l2_sectors", "error"] == 0.0 and second.loc["l2_hits", "error"] == -1.0
    assert math.isnan(second.loc["dram_sectors", "error"]) and second.loc["load", "error"] == 0.0
    assert len(out) == 8  # only launches ncu profiled, only simulation mode


def test_counter_errors_empty_and_bad_input():
    _, predicted, _, ncu = hand_tables()
    assert counter_errors(predicted, None, 128).empty
    assert counter_errors(predicted, ncu.iloc[:0], 128).empty
    assert counter_errors(None, ncu, 128).empty
    with pytest.raises(InputError, match="physical_warps"):
        counter_errors(predicted, ncu, 0)
    with pytest.raises(InputError, match="l2_read_misses"):
        counter_errors(predicted, ncu.drop(columns="l2_read_misses"), 128)


def test_round_times_by_hand():
    measured, predicted, _, _ = hand_tables()
    predicted = pd.concat([predicted, pd.DataFrame([launch(1, "compact", mode="simulation", predicted_ns=2)])])
    rounds = round_times(measured, predicted)
    sim = rounds[rounds["mode"] == "simulation"]
    assert sim["measured_ns"].tolist() == [128, 256]
    assert sim["predicted_ns"].tolist() == [160, 192]
    assert sim["error"].tolist() == [0.25, -0.25]
    assert sim["launches"].tolist() == [2, 2]
    counters = rounds[rounds["mode"] == "counters"]  # only level 0's expansion predicted
    assert counters["predicted"].tolist() == [False, False]
    assert counters["predicted_ns"].isna().all() and counters["error"].isna().all()
    assert rounds.attrs["unpredicted_rounds"] == 2


def expand_rounds(times, source=0, kernel="sm-2", graph="g"):
    """measured and predicted tables of one BFS whose rounds are single expansion launches."""
    measured = pd.DataFrame([{"graph": graph, "kernel": kernel, "source": source, "level": lvl, "phase": "expand",
                              "time_ns": m} for lvl, (m, _) in enumerate(times)])
    predicted = pd.DataFrame([{"graph": graph, "kernel": kernel, "source": source, "level": lvl, "phase": "expand",
                               "mode": "simulation", "predicted_ns": p}
                              for lvl, (_, p) in enumerate(times) if p is not None])
    return measured, predicted


def test_time_errors_by_hand():
    measured, predicted = expand_rounds([(100, 125), (200, 150), (400, 600), (800, 800)])
    table = time_errors(round_times(measured, predicted))
    row = table.iloc[0]
    assert (row["rounds"], row["levels"], row["mape"]) == (4, 4, 0.25)
    assert (row["worst_error"], row["max_error"], row["min_error"]) == (0.5, 0.5, -0.25)
    assert row["pearson_r"] == pytest.approx(np.corrcoef([125, 150, 600, 800], [100, 200, 400, 800])[0, 1], rel=1e-12)
    assert row["bfs_time_error"] == 175 / 1500 and bool(row["complete"])
    assert (row["measured_bfs_ns"], row["predicted_bfs_ns"]) == (1500, 1675)


def test_incomplete_source_is_left_out_of_whole_bfs():
    m0, p0 = expand_rounds([(100, 125), (200, 150), (400, 600), (800, 800)], source=0)
    m1, p1 = expand_rounds([(100, 100), (200, 200), (400, 400), (800, None)], source=1)
    rounds = round_times(pd.concat([m0, m1]), pd.concat([p0, p1]))
    row = time_errors(rounds).iloc[0]
    assert (row["rounds"], row["levels"], row["sources"], row["complete_sources"]) == (8, 7, 2, 1)
    assert not row["complete"]
    assert row["mape"] == 1.0 / 7 and row["worst_error"] == 0.5
    assert row["bfs_time_error"] == 175 / 1500
    assert (row["measured_bfs_ns"], row["predicted_bfs_ns"]) == (1500, 1675)
    whole = whole_bfs(rounds)
    assert whole["complete"].tolist() == [True, False] and math.isnan(whole["predicted_ns"].iloc[1])
    # the predicted rounds' total: source 1 covers its first three rounds exactly
    assert whole["rounds_error"].tolist() == [175 / 1500, 0.0]
    assert row["rounds_time_error"] == pytest.approx((175 / 1500) / 2)


def test_pearson_r_edge_cases():
    assert math.isnan(pearson_r([1, 2], [1, 2]))
    assert math.isnan(pearson_r([1, 1, 1], [1, 2, 3]))
    assert pearson_r([1, 2, 3], [3, 2, 1]) == -1.0


def whole_table(rows):
    return pd.DataFrame([{"graph": "g", "source": s, "kernel": k, "mode": "simulation", "levels": 3,
                          "predicted_levels": 3 if p is not None else 2, "measured_ns": m,
                          "predicted_ns": p if p is not None else np.nan, "error": np.nan, "complete": p is not None}
                         for s, k, m, p in rows])


def test_best_mapping_by_hand():
    whole = whole_table([(0, "a", 100, 70), (0, "b", 80, 75), (0, "c", 90, 60), (1, "a", 50, 40), (1, "b", 40, None)])
    best = best_mapping(whole)
    assert list(best.columns) == BEST_COLUMNS
    first, second = best.to_dict(orient="records")
    assert (first["kernels"], first["measured_best"], first["predicted_best"]) == (3, "b", "c")
    assert (first["slowdown"], first["agree"]) == (1.125, False)
    assert (second["kernels"], second["measured_best"], second["agree"]) == (1, "a", True)


def test_summarize_by_hand_is_json():
    measured, predicted, lanes, ncu = hand_tables()
    exact = exact_checks(measured, predicted, lanes, ncu)
    counters = counter_errors(predicted, ncu, 128)
    m0, p0 = expand_rounds([(100, 125), (200, 150), (400, 600), (800, 800)], kernel="a")
    m1, p1 = expand_rounds([(100, 100), (200, 200), (400, 400), (800, 800)], kernel="b")
    rounds = round_times(pd.concat([m0, m1]), pd.concat([p0, p1]))
    table = time_errors(rounds)
    best = best_mapping(rounds)
    meta = {"device": "NVIDIA H200", "driver": "580", "date": "2025-01-01", "command": "simdmodel validate x",
            "graphs": ["g"], "kernels": ("a", "b"), "extra": np.int64(3)}
    summary = summarize(exact, counters, table, best, meta)
    text = json.dumps(summary, allow_nan=False)
    assert json.loads(text) == summary
    assert summary["kernels"] == ["a", "b"] and summary["extra"] == 3
    assert summary["lane_exact_fraction"] == 0.5 and summary["lane_exact_checked"] == 2
    assert summary["jobs_exact_fraction"] == 1 / 3 and summary["jobs_exact_checked"] == 3
    assert summary["l2_sector_error_median"] == 0.125  # median of 0.25 and 0.0
    assert summary["dram_sector_error_median"] == 0.0  # the 0-measured launch has no error
    assert summary["load_error_median"] == 0.25 and summary["load_error_abs_median"] == 0.25
    assert summary["time_mape_per_level"] == 0.125  # 4 rounds at 0.25 mean, 4 at 0
    assert summary["time_max_error_per_level"] == 0.5
    assert summary["best_mapping_agreement"] == 1.0  # a and b tie at 1500 measured; b is predicted fastest
    assert summary["per_kernel"]["b"]["time_mape_per_level"] == 0.0
    assert summary["per_kernel"]["b"]["time_pearson_r"] == pytest.approx(1.0)
    assert summary["per_graph"]["g"]["a"]["bfs_time_error_median"] == 175 / 1500
    assert "counters_mode" not in summary
    for key in ("device", "driver", "date", "command", "graphs", "kernels", "lane_exact_fraction",
                "jobs_exact_fraction", "l2_sector_error_median", "dram_sector_error_median", "time_mape_per_level",
                "time_max_error_per_level", "time_pearson_r", "bfs_time_error_median", "best_mapping_agreement"):
        assert key in summary


def test_summarize_with_nothing_is_json():
    summary = summarize(None, None, None, None, {})
    json.dumps(summary, allow_nan=False)
    assert summary["device"] is None and summary["lane_exact_fraction"] is None
    assert summary["time_mape_per_level"] is None and summary["best_mapping_agreement"] is None


def test_bad_tables_raise_input_error():
    measured, predicted, lanes, _ = hand_tables()
    with pytest.raises(InputError, match="measured table lacks column"):
        exact_checks(measured.drop(columns="lane_slots"), predicted, lanes)
    with pytest.raises(InputError, match="two rows"):
        exact_checks(pd.concat([measured, measured.iloc[:1]]), predicted, lanes)


# --- invariants -------------------------------------------------------------------------------

times = st.floats(min_value=1.0, max_value=1e7, allow_nan=False)


@st.composite
def runs(draw):
    """Random measured/predicted tables: kernels x sources x levels, expand + compact launches."""
    kernels = draw(st.lists(st.sampled_from(["topo", "sm-1", "sm-8", "ws", "scan"]), min_size=1, max_size=3,
                            unique=True))
    measured, predicted = [], []
    for kernel in kernels:
        for source in range(draw(st.integers(1, 2))):
            for level in range(draw(st.integers(1, 5))):
                for phase in ("expand", "compact"):
                    key = {"graph": "g", "kernel": kernel, "source": source, "level": level, "phase": phase}
                    measured.append({**key, "time_ns": draw(times)})
                    predicted.append({**key, "mode": "simulation", "predicted_ns": draw(times)})
    return pd.DataFrame(measured), pd.DataFrame(predicted)


@settings(max_examples=60, deadline=None)
@given(runs())
def test_time_statistics_are_in_range(tables):
    measured, predicted = tables
    rounds = round_times(measured, predicted)
    table = time_errors(rounds)
    assert (table["mape"] >= 0).all()
    assert (table["worst_error"].abs() >= table["mape"] - 1e-12).all()
    r = table["pearson_r"].dropna()
    assert ((r >= -1) & (r <= 1)).all()
    best = best_mapping(rounds)
    assert (best["slowdown"] >= 1).all() and (best["agree"] == (best["slowdown"] == 1)).all()
    summary = summarize(None, None, table, best, {"device": "x"})
    json.dumps(summary, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(runs())
def test_perfect_prediction(tables):
    measured, _ = tables
    predicted = measured.assign(mode="simulation", predicted_ns=measured["time_ns"]).drop(columns="time_ns")
    rounds = round_times(measured, predicted)
    assert (rounds["error"] == 0).all()
    table = time_errors(rounds)
    assert (table["mape"] == 0).all() and (table["bfs_time_error"] == 0).all() and table["complete"].all()
    for r, levels in zip(table["pearson_r"], table["levels"]):
        assert math.isnan(r) or r == pytest.approx(1.0)
        if levels < 3:
            assert math.isnan(r)
    assert best_mapping(rounds)["agree"].all()


@settings(max_examples=60, deadline=None)
@given(runs(), st.data())
def test_dropping_a_prediction_makes_it_incomplete(tables, data):
    measured, predicted = tables
    drop = data.draw(st.integers(0, len(predicted) - 1))
    gone = predicted.iloc[drop]
    rounds = round_times(measured, predicted.drop(index=predicted.index[drop]))
    assert (~rounds["predicted"]).sum() == 1
    row = time_errors(rounds).set_index(["graph", "kernel"]).loc[(gone["graph"], gone["kernel"])]
    assert not row["complete"] and row["levels"] == row["rounds"] - 1
    whole = whole_bfs(rounds).set_index(["kernel", "source"])
    assert not whole.loc[(gone["kernel"], gone["source"]), "complete"]
    best = best_mapping(rounds)
    picks = best[best["source"] == gone["source"]][["measured_best", "predicted_best"]].to_numpy().ravel()
    assert gone["kernel"] not in set(picks)  # an incomplete kernel takes no part in the choice


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 100)), min_size=1, max_size=6))
def test_exact_when_counts_match(counts):
    rows, lanes, preds = [], [], []
    for level, (slots, useful) in enumerate(counts):
        key = launch(level, "expand")
        jobs_ = jobs("", level, slots, useful, slots, useful, level)
        rows.append({**key, "lane_slots": slots, "useful_lanes": useful,
                     **{f"gpu_jobs_{k}": v for k, v in jobs_.items()}})
        lanes.append({**key, "lane_slots": slots, "useful_lanes": useful})
        preds.append({**key, "mode": "simulation", **{f"jobs_{k}": v for k, v in jobs_.items()}})
    out = exact_checks(pd.DataFrame(rows), pd.DataFrame(preds), pd.DataFrame(lanes))
    summary = summarize(out, None, None, None, {})
    assert summary["lane_exact_fraction"] == summary["jobs_exact_fraction"] == 1.0
    assert (out["op_error"] == 0).all()


def test_phase_errors_split_expansion_from_compaction():
    from gpu_validate.compare import phase_errors

    key = {"graph": "g", "kernel": "ws", "source": 0}
    measured = pd.DataFrame([{**key, "level": lv, "phase": ph, "time_ns": t}
                             for lv, ph, t in [(0, "expand", 100.0), (0, "compact", 50.0), (1, "expand", 200.0),
                                               (1, "compact", 50.0)]])
    predicted = measured.rename(columns={"time_ns": "predicted_ns"}).assign(mode="simulation")
    predicted.loc[predicted["phase"] == "compact", "predicted_ns"] = 25.0  # half: error -0.5 each
    table = phase_errors(measured, predicted).set_index("phase")
    assert table.loc["expand", "mape"] == 0 and table.loc["expand", "error"] == 0
    assert table.loc["compact", "mape"] == 0.5 and table.loc["compact", "worst_error"] == -0.5
    assert table.loc["compact", "error"] == -0.5 and table.loc["expand", "launches"] == 2


# --- a missing counter is said out loud, never silently dropped from a median ----------------------
def test_a_missing_counter_warns_and_is_left_out_of_the_medians():
    _, predicted, _, ncu = hand_tables()
    ncu.loc[1, "dram_write_sectors"] = np.nan  # ncu printed no value for the compaction launch
    with pytest.warns(DataWarning) as caught:
        out = counter_errors(predicted, ncu, physical_warps=128)
    assert [str(w.message) for w in caught] == [
        "ncu table: 1 of 2 profiled launches have no measured dram_sectors (a counter missing from Nsight "
        "Compute's output); their errors are left out of the dram_sectors figures"]
    dram = out[out["metric"] == "dram_sectors"].set_index("phase")
    assert dram.loc["expand", "error"] == 0.0 and math.isnan(dram.loc["compact", "measured"])
    summary = summarize(None, out, None, None, {})
    assert summary["dram_sector_error_median"] == 0.0  # the one launch with a measurement


def test_complete_counters_give_no_warning():
    measured, predicted, lanes, ncu = hand_tables()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        counter_errors(predicted, ncu, physical_warps=128)
        exact_checks(measured, predicted, lanes, ncu)


def test_a_missing_load_count_warns_in_the_exact_checks():
    measured, predicted, lanes, ncu = hand_tables()
    ncu.loc[1, "ld_inst"] = np.nan
    with pytest.warns(DataWarning, match=r"^ncu table: 1 of 2 profiled launches have no ld_inst"):
        out = exact_checks(measured, predicted, lanes, ncu)
    assert flags(out["ncu_loads_exact"]) == [True, None, None, None]


# --- variable-cost time: the profile's fixed per-launch constants taken off both sides ---------------
FIXED = {"expand": 10.0, "compact": 30.0}  # launch overhead 10 ns, a compaction's grid scan 20 ns more


def variable_tables():
    """Two sources of one kernel, rounds of an expansion and a compaction: (level, phase, measured,
    predicted). Variable-cost times (minus FIXED) by hand, per round: source 0 level 0: measured
    70 + 30 = 100, predicted 90 + 35 = 125; level 1: 40 + 0 = 40 against 10 + 10 = 20; level 2:
    -2 + 0 = -2 (noise below the constant: excluded) against 2 + 0 = 2; source 1 level 0: 200 + 0
    against 150 + 0."""
    launches = {0: [(0, "expand", 80, 100), (0, "compact", 60, 65), (1, "expand", 50, 20), (1, "compact", 30, 40),
                    (2, "expand", 8, 12), (2, "compact", 30, 30)],
                1: [(0, "expand", 210, 160), (0, "compact", 30, 30)]}
    key = {"graph": "g", "kernel": "ws"}
    measured = pd.DataFrame([{**key, "source": s, "level": lv, "phase": ph, "time_ns": m}
                             for s, rows in launches.items() for lv, ph, m, _ in rows])
    predicted = pd.DataFrame([{**key, "source": s, "level": lv, "phase": ph, "mode": "warm", "predicted_ns": p}
                              for s, rows in launches.items() for lv, ph, _, p in rows])
    return measured, predicted


def test_variable_cost_rounds_by_hand():
    rounds = round_times(*variable_tables(), fixed=FIXED)
    assert rounds["measured_ns"].tolist() == [140, 80, 38, 240]
    assert rounds["predicted_ns"].tolist() == [165, 60, 42, 190]
    assert rounds["fixed_ns"].tolist() == [40, 40, 40, 40]
    assert rounds["measured_variable_ns"].tolist() == [100, 40, -2, 200]
    assert rounds["predicted_variable_ns"].tolist() == [125, 20, 2, 150]
    assert rounds["variable_excluded"].tolist() == [False, False, True, False]
    variable = rounds["error_variable"].tolist()
    assert variable[0] == 0.25 and variable[1] == -0.5 and math.isnan(variable[2]) and variable[3] == -0.25
    assert rounds["error"].tolist() == [25 / 140, -20 / 80, 4 / 38, -50 / 240]  # total time: unchanged


def test_variable_cost_whole_bfs_and_statistics_by_hand():
    rounds = round_times(*variable_tables(), fixed=FIXED)
    whole = whole_bfs(rounds)
    assert whole["fixed_ns"].tolist() == [120, 40]
    # the excluded round still counts in the sums: the whole BFS minus its constants
    assert whole["measured_variable_ns"].tolist() == [138, 200]
    assert whole["predicted_variable_ns"].tolist() == [147, 150]
    assert whole["error_variable"].tolist() == [9 / 138, -0.25]
    assert whole["error"].tolist() == [9 / 258, -50 / 240]
    row = time_errors(rounds).iloc[0]
    assert (row["levels"], row["variable_rounds_excluded"]) == (4, 1)
    assert row["mape_variable"] == 1 / 3  # (0.25 + 0.5 + 0.25) / 3 over the rounds not excluded
    assert (row["worst_error_variable"], row["max_error_variable"], row["min_error_variable"]) == (-0.5, 0.25, -0.5)
    assert row["bfs_time_error_variable"] == (9 / 138 - 0.25) / 2  # median of the two sources
    assert row["fixed_bfs_ns"] == 80  # median of 120 and 40
    assert row["mape"] == np.mean([25 / 140, 0.25, 4 / 38, 50 / 240])  # the total-time figures stay as they were
    summary = summarize(None, None, time_errors(rounds), None, {})
    assert summary["time_mape_variable_per_level"] == 1 / 3
    assert summary["time_max_error_variable_per_level"] == -0.5
    assert summary["bfs_time_error_variable_median"] == (9 / 138 - 0.25) / 2
    assert summary["bfs_time_error_variable_abs_median"] == abs(9 / 138 - 0.25) / 2
    assert summary["variable_rounds_excluded"] == 1
    assert summary["per_kernel"]["ws"]["time_mape_variable_per_level"] == 1 / 3


def test_the_variable_mape_weights_graphs_by_their_rounds_not_excluded():
    measured, predicted = variable_tables()
    other = measured.assign(graph="h").iloc[:2], predicted.assign(graph="h").iloc[:2]  # source 0 level 0 only
    rounds = round_times(pd.concat([measured, other[0]]), pd.concat([predicted, other[1]]), fixed=FIXED)
    summary = summarize(None, None, time_errors(rounds), None, {})
    assert summary["time_mape_variable_per_level"] == (1.0 + 0.25) / 4  # 3 rounds of g and 1 of h


def test_without_fixed_costs_the_variable_figures_are_missing():
    rounds = round_times(*variable_tables())
    assert rounds[["fixed_ns", "measured_variable_ns", "predicted_variable_ns", "error_variable"]].isna().all().all()
    assert not rounds["variable_excluded"].any()
    row = time_errors(rounds).iloc[0]
    assert math.isnan(row["mape_variable"]) and math.isnan(row["bfs_time_error_variable"])
    assert row["variable_rounds_excluded"] == 0
    summary = summarize(None, None, time_errors(rounds), None, {})
    assert summary["time_mape_variable_per_level"] is None and summary["variable_rounds_excluded"] == 0


def test_fixed_costs_must_name_every_phase():
    with pytest.raises(InputError, match="name no phase 'compact'"):
        round_times(*variable_tables(), fixed={"expand": 10.0})


def test_a_rounds_table_from_before_the_variable_columns_still_pools():
    rounds = round_times(*variable_tables(), fixed=FIXED)
    old = rounds.drop(columns=["fixed_ns", "measured_variable_ns", "predicted_variable_ns", "error_variable",
                               "variable_excluded"])
    row = time_errors(old).iloc[0]
    assert row["bfs_time_error"] == time_errors(rounds).iloc[0]["bfs_time_error"]
    assert math.isnan(row["mape_variable"]) and row["variable_rounds_excluded"] == 0
    assert best_mapping(old)["measured_best"].tolist() == ["ws", "ws"]


@settings(max_examples=60, deadline=None)
@given(runs(), st.floats(0, 1e6), st.floats(0, 1e6))
def test_variable_cost_invariants(tables, overhead, scan):
    measured, predicted = tables
    fixed = {"expand": overhead, "compact": overhead + scan}
    rounds = round_times(measured, predicted, fixed)
    # the constants cancel in the difference: only the denominator changes
    assert np.allclose(rounds["predicted_variable_ns"] - rounds["measured_variable_ns"],
                       rounds["predicted_ns"] - rounds["measured_ns"], rtol=1e-9, atol=1e-3)
    assert np.allclose(rounds["fixed_ns"], rounds["launches"] / 2 * (2 * overhead + scan))
    assert (rounds["variable_excluded"] == (rounds["measured_variable_ns"] <= 0)).all()
    assert rounds.loc[rounds["variable_excluded"], "error_variable"].isna().all()
    table = time_errors(rounds)
    assert (table["variable_rounds_excluded"] <= table["levels"]).all()
    assert ((table["mape_variable"] >= 0) | table["mape_variable"].isna()).all()
    json.dumps(summarize(None, None, table, best_mapping(rounds), {}), allow_nan=False)
    if overhead == scan == 0:  # no constants: the variable figures are the total ones
        assert np.allclose(table["mape_variable"], table["mape"], rtol=1e-12)
        assert np.allclose(table["bfs_time_error_variable"], table["bfs_time_error"], rtol=1e-12, equal_nan=True)


@settings(max_examples=60, deadline=None)
@given(runs(), st.floats(0, 0.99))
def test_a_perfect_prediction_has_no_variable_error(tables, share):
    measured, _ = tables
    predicted = measured.assign(mode="simulation", predicted_ns=measured["time_ns"]).drop(columns="time_ns")
    least = float(measured["time_ns"].min())
    rounds = round_times(measured, predicted, {"expand": share * least / 2, "compact": share * least / 2})
    assert not rounds["variable_excluded"].any() and (rounds["error_variable"] == 0).all()
    assert (time_errors(rounds)["mape_variable"] == 0).all()


# --- instruction counts, optional on both sides --------------------------------------------------------
def inst_tables():
    _, predicted, _, ncu = hand_tables()
    sim = predicted["mode"] == "simulation"
    predicted.loc[sim, "inst_executed"] = [110.0, 40.0, np.nan]  # the model does not count level 1's
    predicted.loc[sim, "shared_ld_inst"] = [8.0, 0.0, np.nan]
    predicted.loc[sim, "shared_st_inst"] = [0.0, 3.0, np.nan]
    ncu = ncu.assign(inst_executed=[100, 50], shared_ld_inst=[10, 0], shared_st_inst=[0, 0])
    return predicted, ncu


def test_instruction_counts_by_hand():
    predicted, ncu = inst_tables()
    out = counter_errors(predicted, ncu, physical_warps=128)
    inst = out[out["metric"].isin(["inst_executed", "shared_ld_inst", "shared_st_inst"])]
    errors = inst.set_index(["phase", "metric"])["error"]
    assert errors[("expand", "inst_executed")] == 0.1 and errors[("compact", "inst_executed")] == -0.2
    assert errors[("expand", "shared_ld_inst")] == -0.2 and errors[("compact", "shared_ld_inst")] == 0.0
    assert errors[("expand", "shared_st_inst")] == 0.0 and math.isnan(errors[("compact", "shared_st_inst")])
    assert len(out) == 2 * 7  # four counters and three instruction counts per profiled launch
    summary = summarize(None, out, None, None, {})
    assert summary["inst_error_abs_max"] == 0.2
    assert summary["shared_ld_error_abs_max"] == 0.2
    assert summary["shared_st_error_abs_max"] == 0.0  # 3 against 0 has no relative error
    assert summary["l2_sector_error_median"] == 0.125  # the other figures are untouched


@pytest.mark.parametrize("side", ["ncu", "predicted", "all-nan"])
def test_instruction_counts_are_optional(side):
    predicted, ncu = inst_tables()
    columns = ["inst_executed", "shared_ld_inst", "shared_st_inst"]
    if side == "ncu":  # an ncu.csv from before the counts: it still loads
        ncu = ncu.drop(columns=columns)
    elif side == "predicted":
        predicted = predicted.drop(columns=columns)
    else:
        predicted[columns] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = counter_errors(predicted, ncu, physical_warps=128)
    assert set(out["metric"]) == {"l2_sectors", "l2_hits", "dram_sectors", "load"}
    summary = summarize(None, out, None, None, {})
    assert summary["inst_error_abs_max"] is None and summary["shared_st_error_abs_max"] is None


def test_a_missing_measured_instruction_count_warns():
    predicted, ncu = inst_tables()
    ncu["inst_executed"] = [100, np.nan]
    with pytest.warns(DataWarning, match="1 of 2 profiled launches have no measured inst_executed"):
        out = counter_errors(predicted, ncu, physical_warps=128)
    assert summarize(None, out, None, None, {})["inst_error_abs_max"] == pytest.approx(0.1)


# --- the time model each mode's predictions came from ---------------------------------------------------
def test_time_models_are_read_from_the_predictions():
    from gpu_validate.compare import time_models

    m0, p0 = expand_rounds([(100, 125), (200, 150), (400, 600), (800, 800)])
    warm = p0.assign(mode="warm", time_model="critical")
    counted = p0.assign(mode="counters", time_model="eq4")
    predicted = pd.concat([warm, counted])
    assert time_models(predicted) == {"counters": "eq4", "warm": "critical"}
    assert time_models(predicted.drop(columns="time_model")) == {} and time_models(None) == {}
    table = time_errors(round_times(m0, predicted))
    summary = summarize(None, None, table, None, {"time_model": "ignored"}, time_models=time_models(predicted))
    assert summary["time_mode"] == "warm" and summary["time_model"] == "critical"
    assert summary["counters_mode"]["time_model"] == "eq4"
    assert summarize(None, None, table, None, {"time_model": "given"})["time_model"] == "given"
