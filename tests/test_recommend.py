"""Which mapping to use: every candidate ranked by predicted BFS time (`opmachine.rank_mappings`), the
`recommend` command, and the rank checked against the committed H200 measurements."""
import importlib.util
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import opmachine as om
import simdmodel as sm
from opmachine.recommend import candidate_kernels, rank_mappings
from simdmodel.strategies import STRATEGIES, mappings
from simdreport.cli import main
from simdreport.defaults import GpuChoice, default_gpu as DETECT

ROOT = Path(__file__).resolve().parents[1]
H200 = om.load_profile("h200")
SMALL = "rmat:scale=9,ef=8"


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch):
    """The defaults as on a machine without a GPU (CI), wherever these tests run."""
    from simdreport import defaults

    monkeypatch.setattr(defaults, "default_gpu", lambda: defaults.GpuChoice("h200", "the default: no GPU detected"))


def test_without_cupy_the_default_profile_is_h200():
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here: the default follows the GPU")
    assert DETECT.__wrapped__() == GpuChoice("h200", "the default: no GPU detected")  # uncached


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def graph():
    return sm.load_graph(SMALL)


@pytest.fixture(scope="module")
def ranking(graph):
    return rank_mappings(graph, sm.pick_sources(graph, 2, 1), H200)


def test_candidates_are_topo_and_every_registered_mapping():
    assert candidate_kernels() == ["topo", "sm-1", "sm-2", "sm-4", "sm-8", "sm-16", "sm-32", "ws", "scan", "swc"]
    assert candidate_kernels()[1:] == [m.label for m in mappings(tuple(STRATEGIES))]


def test_rank_is_by_predicted_time_and_equals_predict_bfs(graph, ranking):
    table = ranking.mappings
    assert sorted(table["mapping"]) == sorted(candidate_kernels())
    assert table["rank"].tolist() == list(range(1, 11))
    assert (np.diff(table["predicted_ns"]) >= 0).all()
    assert table["vs_best"].iloc[0] == 1.0 and (table["vs_best"] >= 1.0).all()
    # the mean over the two sources of the very prediction `opm` makes (warm set-associative L2, critical)
    sources = ranking.sources
    for label in ("topo", "sm-8", "scan"):
        times = [om.predict_bfs(graph, s, om.parse_kernel(label), H200, l2_model="setassoc", warm_l2=True).predicted_ns
                 for s in sources]
        assert table.set_index("mapping").loc[label, "predicted_ns"] == pytest.approx(np.mean(times), rel=1e-12)
    assert ranking.pick["mapping"] == table.loc[table["predicted_ns"].idxmin(), "mapping"]
    second = table["predicted_ns"].iloc[1] / table["predicted_ns"].iloc[0] - 1
    assert ranking.margin == pytest.approx(second) and ranking.margin >= 0



def test_predictions_run_at_once_rank_alike(graph, ranking):
    threaded = rank_mappings(graph, ranking.sources, H200, threads=3)
    pd.testing.assert_frame_equal(threaded.mappings, ranking.mappings)
    pd.testing.assert_frame_equal(threaded.levels, ranking.levels)
    for label, result in ranking.results.items():
        pd.testing.assert_frame_equal(threaded.results[label].per_level, result.per_level)

def test_lane_rates_are_the_lane_accounting_of_the_same_runs(graph, ranking):
    lanes = sm.analyze(graph, list(ranking.sources)).summary().set_index("mapping")
    table = ranking.mappings.set_index("mapping")
    for label in lanes.index:
        assert table.loc[label, "me"] == pytest.approx(lanes.loc[label, "me"], rel=1e-12)
        assert table.loc[label, "ua"] == pytest.approx(lanes.loc[label, "ua"], rel=1e-12)
    rates = table[["me", "ua", "ur", "idle"]].to_numpy()
    assert np.allclose(rates.sum(axis=1), 1.0) and ((rates >= 0) & (rates <= 1)).all()


def test_level_picks_are_each_levels_fastest(ranking):
    picks = ranking.level_picks()
    for row in picks.itertuples():
        level = ranking.levels[(ranking.levels["source"] == row.source) & (ranking.levels["level"] == row.level)]
        assert row.predicted_ns == level["predicted_ns"].min() and row.mapping == level.loc[
            level["predicted_ns"].idxmin(), "mapping"]
        assert row.predicted_ns <= row.pick_ns
    assert ranking.adaptive_gain() >= 1.0


def test_why_names_the_margin_the_waste_and_the_bottleneck(ranking):
    why = ranking.why()
    pick, second = ranking.pick, ranking.runner_up
    assert why.startswith(f"{pick['mapping']} is predicted {1 + ranking.margin:.2f}x as fast as the runner-up "
                          f"{second['mapping']}")
    assert f"{pick['bottleneck']} bounds {pick['bottleneck_share']:.0%}" in why
    assert ("avoids" in why) or ("wastes more lanes" in why) or ("alike" in why)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 39), st.integers(0, 39)), min_size=1, max_size=120))
def test_ranking_invariants_on_any_graph(pairs):
    edges = np.array(pairs, dtype=np.int64)
    graph = sm.csr_from_edges(sm.EdgeList(edges[:, 0], edges[:, 1], 40), undirected=True)
    ranking = rank_mappings(graph, sm.pick_sources(graph, 1, 3), H200, kernels=["topo", "sm-1", "sm-32", "ws"])
    table = ranking.mappings
    assert table["rank"].tolist() == [1, 2, 3, 4] and (np.diff(table["predicted_ns"]) >= 0).all()
    assert ((table["me"] > 0) & (table["me"] <= 1)).all()
    assert ranking.adaptive_gain() >= 1.0 - 1e-12
    assert set(ranking.levels["rank"]) <= {1, 2, 3, 4}


def test_recommend_command_table_csv_and_json(tmp_path, capsys):
    code, out, _ = run(capsys, "recommend", SMALL, "--quiet")
    assert code == 0
    assert "profile h200 (the default: no GPU detected; measured on" in out
    assert "L2 set-associative warm from launch to launch, time model critical" in out
    assert "pick: " in out and "is predicted" in out
    target = tmp_path / "ranked.csv"
    assert run(capsys, "recommend", SMALL, "--out", str(target), "--quiet")[0] == 0
    table = pd.read_csv(target)
    assert table["rank"].tolist() == list(range(1, 11)) and table["mapping"].iloc[0] in out.split("pick: ")[1]
    assert {"graph", "mapping", "predicted_bfs_ms", "rank", "me", "bottleneck", "profile", "time_model"} <= set(
        table.columns)
    code, out, _ = run(capsys, "recommend", SMALL, "--format", "json", "--per-level", "--quiet")
    document = json.loads(out)
    assert document["pick"] == table["mapping"].iloc[0] and document["adaptive_gain"] >= 1.0
    assert document["mappings"][0]["rank"] == 1 and document["level_picks"]


def test_recommend_progress_lines_when_piped_and_none_when_quiet(capsys):
    code, _, err = run(capsys, "recommend", SMALL, "--kernels", "topo,ws")
    assert code == 0 and err.splitlines() == ["simdmodel: [1/2] predicting topo", "simdmodel: [2/2] predicting ws"]
    assert run(capsys, "recommend", SMALL, "--kernels", "topo,ws", "--quiet")[2] == ""


@pytest.mark.parametrize("argv, message", [
    (["recommend", SMALL, "--kernels", "sm-33"], "group size 33"),
    (["recommend", SMALL, "--gpu", "nope"], "nope"),
    (["recommend", SMALL, "--source", "100000"], "100000"),
])
def test_recommend_bad_input_is_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1 and message in err


def test_opm_recommend_and_report_share_one_default(tmp_path, capsys):
    """One profile, L2 and source rule everywhere: the same graph and kernel give the same time."""
    spec = "rmat:scale=8,ef=4"
    code, out, _ = run(capsys, "opm", spec, "--kernel", "sm-8", "--format", "json")
    opm = json.loads(out)["summary"]
    assert code == 0 and (opm["gpu"], opm["l2_model"], opm["warm_l2"], opm["time_model"]) == (
        "h200", "setassoc", True, "critical")
    code, out, _ = run(capsys, "recommend", spec, "--format", "csv", "--quiet")
    ranked = pd.read_csv(io.StringIO(out)).set_index("mapping")
    assert ranked.loc["sm-8", "predicted_bfs_ms"] == pytest.approx(opm["predicted_ns"] / 1e6, rel=1e-5)
    assert main(["report", spec, "--sources", "3", "--out", str(tmp_path / "r"), "--quiet"]) == 0
    report = pd.read_csv(tmp_path / "r" / "tables" / "recommendation.csv").set_index("mapping")
    assert report.loc["sm-8", "predicted_bfs_ms"] == pytest.approx(opm["predicted_ns"] / 1e6, rel=1e-5)
    assert report["source"].iloc[0] == opm["source"]
    analyzed = json.loads(run(capsys, "analyze", spec, "--sources", "3", "--format", "json")[1])
    assert analyzed["sources"][0] == opm["source"]


def test_time_ranked_pick_on_the_committed_h200_runs_is_the_measured_best_or_within_5_percent():
    whole = pd.read_csv(ROOT / "gpu_validate" / "results" / "nvidia-h200" / "pooled" / "whole_bfs.csv")
    warm = whole[(whole["mode"] == "warm") & whole["complete"].astype(bool)]
    within = []
    for _, runs in warm.groupby(["graph", "source"]):
        assert len(runs) == 9
        pick = runs.loc[runs["predicted_ns"].idxmin()]
        within.append(pick["measured_ns"] <= 1.05 * runs["measured_ns"].min())
    assert len(within) == 18 and np.mean(within) >= 0.9
