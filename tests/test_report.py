"""`simdmodel report`: the numbers it gathers, the files it writes, and bad input -> one line, exit 2, no files."""
import base64
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from synthetic_measured import write_measured_folder

import opmachine as om
import simdmodel as sm
from simdreport.cli import main
from simdreport import DEFAULT_SUITE, SuiteGraph, build_report, collect_graph, committed_runs, suite_for
from simdreport.measured import pick_run
from simdreport.defaults import FALLBACK_GPU as DEFAULT_GPU

TINY = "rmat:scale=8,ef=4"
GRID = "grid2d:side=12"
H200 = om.load_profile("h200")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def leftovers(folder: Path) -> list[str]:
    """Staging folders a report run may leave beside its output (none after success or failure)."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture(scope="module")
def star(tmp_path_factory):
    """A star: vertex 0 joined both ways to 1..5 (n = 6, m = 10 directed edges)."""
    path = tmp_path_factory.mktemp("graphs") / "star.el"
    path.write_text("".join(f"0 {v}\n{v} 0\n" for v in range(1, 6)))
    return str(path)


@pytest.fixture(scope="module")
def star_data(star):
    return collect_graph(SuiteGraph(star, "star", "a hand-checked star"), H200, sources=6)


def test_star_lane_totals_match_a_hand_count(star_data):
    # Six sources = every vertex. From the centre: levels {0} (degree 5), {1..5} (degree 1 each). From a leaf:
    # {leaf} (1), {0} (5), the other four leaves (1 each). Every BFS sees each vertex once: 60 useful lanes.
    lanes = star_data.lanes.set_index("mapping")
    # sm-32: a warp per vertex, T = 1: 32 slots per vertex, 6 vertices x 6 BFS.
    assert lanes.loc["sm-32", "total_lanes"] == 32 * 36 and lanes.loc["sm-32", "ua_lanes"] == 32 * 36 - 60
    # sm-1: degree 5 alone in a warp costs 5 x 32 slots, any other level 32: centre 160 + 32, leaf 32 + 160 + 32.
    assert lanes.loc["sm-1", "total_lanes"] == (160 + 32) + 5 * (32 + 160 + 32)
    assert lanes.loc["sm-1", "ur_lanes"] == lanes.loc["sm-1", "total_lanes"] - 60 and lanes.loc["sm-1", "ua_lanes"] == 0
    # ws: one warp per level with at most 5 edges, T = 1: centre 2 levels, leaf 3 levels.
    assert lanes.loc["ws", "total_lanes"] == 32 * (2 + 5 * 3) and lanes.loc["ws", "me"] == pytest.approx(60 / 544)
    assert (lanes["useful_lanes"] == 60).all()
    assert star_data.best["mapping"] == "ws" and star_data.best_group["mapping"] == "sm-8"
    # Depth: 2 levels from the centre, 3 from each leaf.
    assert star_data.info["avg_depth"] == pytest.approx((2 + 5 * 3) / 6)
    frontier = star_data.frontiers.groupby("level")["vertices"].sum().tolist()
    assert frontier == [6, 5 + 5, 4 * 5]


@pytest.fixture(scope="module")
def tiny_data():
    return collect_graph(SuiteGraph(TINY, "tiny", "test"), H200, sources=3)


def test_collected_tables_equal_the_public_apis(tiny_data):
    graph = sm.load_graph(TINY)
    sources = sm.pick_sources(graph, 3, 1)
    assert tiny_data.sources == tuple(int(s) for s in sources)
    analysis = sm.analyze(graph, sources)
    summary = analysis.summary()
    lanes = tiny_data.lanes[list(summary.columns)]  # the report puts `mapping` beside `group_size`
    pd.testing.assert_frame_equal(lanes.reset_index(drop=True), summary.reset_index(drop=True))
    assert tiny_data.best["mapping"] == analysis.best()["mapping"].iloc[0]
    # every mapping ranked by predicted time; the figures follow the pick (the fastest) and topo
    ranking = om.rank_mappings(graph, [int(sources[0])], H200)
    pd.testing.assert_frame_equal(tiny_data.ranking.mappings, ranking.mappings)
    assert tiny_data.kernels == (ranking.pick["mapping"], "topo")
    for kernel in tiny_data.kernels:
        expected = om.predict_bfs(graph, int(sources[0]), om.parse_kernel(kernel), H200, l2_model="setassoc",
                                  warm_l2=True)
        mine = tiny_data.launches[tiny_data.launches["kernel"] == kernel].drop(columns="source")
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), expected.per_level.reset_index(drop=True))
        assert tiny_data.opm_summary[kernel]["predicted_ns"] == expected.predicted_ns


def test_round_and_server_tables_add_up(tiny_data):
    launches, rounds, servers = tiny_data.launches, tiny_data.rounds, tiny_data.server_rounds
    by_round = launches.groupby(["kernel", "level"])
    assert np.allclose(rounds.set_index(["kernel", "level"])["predicted_ns"], by_round["predicted_ns"].sum())
    longest = launches.loc[by_round["predicted_ns"].idxmax()].set_index(["kernel", "level"])["bottleneck"]
    assert (rounds.set_index(["kernel", "level"])["bottleneck"] == longest).all()
    # Jobs and sectors by server add up to the launches' totals in every round.
    summed = servers.groupby(["kernel", "level"])[["jobs", "l2_sectors", "dram_sectors"]].sum()
    totals = by_round[["jobs_total", "l2_sectors", "dram_sectors"]].sum()
    assert (summed.to_numpy() == totals.to_numpy()).all()
    assert set(servers["server"]) == set(om.SERVERS)
    shares = servers.groupby(["kernel", "level"])["row_miss_share"].sum()
    has_misses = servers.groupby(["kernel", "level"])["row_misses"].sum() > 0
    assert np.allclose(shares[has_misses], 1.0)
    visits = servers.dropna(subset=["sectors_per_job"])
    assert np.allclose(visits["sectors_per_job"], visits["l2_sectors"] / visits["jobs"])


def test_lane_identity_and_rates(tiny_data):
    for table in (tiny_data.lanes, tiny_data.lanes_per_level):
        lanes = table["useful_lanes"] + table["ua_lanes"] + table["ur_lanes"] + table["idle_lanes"]
        assert (lanes == table["total_lanes"]).all()
        rated = table.dropna(subset=["me"])
        assert ((rated["me"] >= 0) & (rated["me"] <= 1)).all()
        assert np.allclose(rated["me"] + rated["ua"] + rated["ur"] + rated["idle"], 1.0)


def test_swc_lanes_by_phase_add_up_to_its_lanes_in_the_report(report_dir):
    tables = report_dir / "tables"
    phases = pd.read_csv(tables / "lanes_by_phase.csv")
    lanes = pd.read_csv(tables / "lanes.csv").set_index(["graph", "mapping"])
    assert set(phases["mapping"]) == {"swc"} and set(phases["phase"]) == {"cta", "warp", "scan"}
    for graph, rows in phases.groupby("graph"):
        whole = lanes.loc[(graph, "swc")]
        for field in ("warp_iterations", "total_lanes", "useful_lanes", "ua_lanes"):
            assert rows[field].sum() == whole[field]
        assert rows["ua"].sum() == pytest.approx(whole["ua"]) and rows["share"].sum() == pytest.approx(1.0)
    assert "swc's lanes by phase: " in (report_dir / "report.md").read_text()


def test_default_suite_stands_for_seed_000_classes():
    specs = [g.spec for g in DEFAULT_SUITE]
    assert len(set(specs)) == len(specs) == 9
    kinds = [s.split(":")[0] for s in specs]
    assert kinds.count("random") == 3 and kinds.count("rmat") == 2 and "kron" in kinds and "delaunay" in kinds
    assert suite_for(None) == DEFAULT_SUITE
    given_specs = suite_for([TINY, TINY, DEFAULT_SUITE[0].spec])
    assert [g.label for g in given_specs] == [TINY, f"{TINY} (2)", DEFAULT_SUITE[0].label]
    assert DEFAULT_GPU in om.available_profiles() and om.load_profile(DEFAULT_GPU).measured


@pytest.fixture(scope="module")
def measured_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("measured") / "tiny"
    info = write_measured_folder(folder, TINY, time_factor=1.5, slot_factor=2)
    return folder, info


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory, measured_dir):
    out = tmp_path_factory.mktemp("report") / "out"
    code = main(["report", TINY, GRID, "--sources", "3", "--measured", str(measured_dir[0]), "--out", str(out),
                 "--quiet"])
    assert code == 0
    return out


def test_report_folder_holds_page_markdown_figures_and_tables(report_dir):
    assert sorted(p.name for p in report_dir.iterdir()) == ["figures", "index.html", "report.md", "tables"]
    assert leftovers(report_dir.parent) == []
    figures = sorted(p.name for p in (report_dir / "figures").iterdir())
    # Suite boxplot, the committed H200 couplings run's Figs. 7 and 10 + 9 per graph + 3 measured figures
    # (time, CTE, ME) for the graph with measurements.
    assert len(figures) == 3 + 2 * 9 + 3
    assert {"00-suite-redundant-expansion.png", "00-suite-couplings.png"} <= set(figures)
    levels = pd.read_csv(report_dir / "tables" / "queue_levels_measured.csv")
    done = levels[~levels["overflow"]]
    assert (done["edge_queue"] >= done["logical_edges"]).all() and levels["overflow"].any()
    fig10 = pd.read_csv(report_dir / "tables" / "couplings.csv")
    base = fig10[fig10["kernel"] == "expand-contract"]
    assert (base["vs_expand_contract"] == 1.0).all() and (base["predicted_vs_expand_contract"] == 1.0).all()
    assert (fig10["predicted_gteps"] > 0).all()  # the committed run is predicted (pooled/time.csv)
    cte = pd.read_csv(report_dir / "tables" / "measured_rounds.csv")
    assert cte["cte_model_ns"].notna().all() and (cte["cte_model_ns"] > 0).all()
    equations = cte.groupby("kernel")["cte_model"].unique()
    assert equations.map(len).eq(1).all() and equations["topo"].tolist() == ["1D"]
    page = (report_dir / "index.html").read_text()
    images = re.findall(r'<img src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == len(figures)
    assert all(base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n" for data in images)
    assert "src=\"http" not in page and "<script" not in page
    markdown = (report_dir / "report.md").read_text()
    linked = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\)", markdown)
    assert sorted(linked) == figures
    summary = pd.read_csv(report_dir / "tables" / "summary.csv")
    assert summary["graph"].tolist() == [TINY, GRID]
    grid = summary.set_index("graph").loc[GRID]
    assert grid["n"] == 144 and grid["m"] == 2 * 2 * 11 * 12 and grid["mean_degree"] == pytest.approx(528 / 144)
    for column in ("pick", "pick_me", "best_mapping", "best_me", "depth", "bottleneck", "predicted_bfs_ms"):
        assert summary[column].notna().all()
    # the pick is the mapping with the lowest predicted time, one recommendation row per graph and mapping
    ranked = pd.read_csv(report_dir / "tables" / "recommendation.csv")
    assert list(ranked.columns[:6]) == ["graph", "mapping", "predicted_bfs_ms", "rank", "me", "bottleneck"]
    for graph, rows in ranked.groupby("graph"):
        assert sorted(rows["mapping"]) == sorted(om.candidate_kernels())
        fastest = rows.loc[rows["predicted_bfs_ms"].idxmin()]
        assert fastest["rank"] == 1 and summary.set_index("graph").loc[graph, "pick"] == fastest["mapping"]
        assert summary.set_index("graph").loc[graph, "predicted_bfs_ms"] == pytest.approx(fastest["predicted_bfs_ms"])
    for name in ("| graph |", "## " + TINY, "Prediction beside measurement"):
        assert name in markdown


def test_every_figure_names_a_csv_with_its_rows(report_dir):
    markdown = (report_dir / "report.md").read_text()
    captions = re.findall(r"!\[[^\]]*\]\(figures/([^)]+)\.png\)\n\n\*[^*]+\*.*?Numbers: `tables/([a-z_]+)\.csv`",
                          markdown)
    assert len(captions) == len(list((report_dir / "figures").iterdir()))
    labels = {"01": TINY, "02": GRID}
    for key, table in captions:
        frame = pd.read_csv(report_dir / "tables" / f"{table}.csv")
        assert len(frame) > 0
        if key[:2] in labels:
            assert (frame["graph"] == labels[key[:2]]).any(), (key, table)



def test_a_graphs_own_tables_are_its_rows_of_the_report_tables(tmp_path, measured_dir):
    # each worker draws its graph's figures from report_tables([its data]) before the others are done: those
    # rows must be the very rows the report's CSVs hold for it, so every plotted number is in tables/*.csv
    from simdreport.report import _graph_tables, build_report, saturation_mlp
    from simdreport.tables import report_tables

    report = build_report([TINY, GRID], sources=3, out=tmp_path / "out", measured=[measured_dir[0]])
    mlp = saturation_mlp(om.load_profile(report.settings["gpu"]))
    assert any(data.measured is not None for data in report.graphs)
    for data in report.graphs:
        own, rows = _graph_tables(report_tables([data], mlp), data.label), _graph_tables(report.tables, data.label)
        assert set(own) <= set(rows) and all(rows[name].empty for name in set(rows) - set(own))  # unmeasured
        for name in own:
            pd.testing.assert_frame_equal(own[name], rows[name], check_dtype=False)

def test_measured_comparison_has_the_planted_errors(report_dir, measured_dir):
    tables = report_dir / "tables"
    rounds = pd.read_csv(tables / "measured_rounds.csv")
    assert set(rounds["graph"]) == {TINY} and set(rounds["kernel"]) <= {"scan", "ws", "sm-4", "topo"}
    assert "topo" in set(rounds["kernel"])
    # Measured time = predicted x 1.5 in every launch: error 1/1.5 - 1 in every round.
    assert np.allclose(rounds["error"], 1 / 1.5 - 1)
    assert np.allclose(rounds["band_low_ns"], 0.8 * rounds["measured_ns"])
    assert rounds["source"].nunique() == 1 and rounds["source"].iloc[0] == measured_dir[1]["sources"][0]
    measured = pd.read_csv(measured_dir[0] / "measured.csv")
    mine = measured[(measured["source"] == measured_dir[1]["sources"][0]) & measured["kernel"].isin(rounds["kernel"])]
    assert np.allclose(rounds.sort_values(["kernel", "level"])["measured_ns"],
                       mine.groupby(["kernel", "level"])["time_ns"].sum())
    errors = pd.read_csv(tables / "measured_time_errors.csv")
    assert np.allclose(errors["mape"], 1 - 1 / 1.5) and np.allclose(errors["pearson_r"], 1.0)
    # Lane slots doubled: measured ME is half the model's, which is simdmodel's over the measured sources.
    me = pd.read_csv(tables / "measured_me.csv").set_index("kernel")
    assert list(me.index) == ["sm-4", "ws", "scan"]
    assert np.allclose(me["me_measured"], me["me_model"] / 2)
    graph = sm.load_graph(TINY)
    model = sm.analyze(graph, measured_dir[1]["sources"]).summary()
    ws = model[model["strategy"] == "ws"].iloc[0]
    assert me.loc["ws", "useful_lanes_model"] == ws["useful_lanes"] and me.loc["ws", "me_model"] == ws["me"]


def test_committed_runs_are_found_by_graph_and_profile(tmp_path, measured_dir):
    root = tmp_path / "results"
    write_measured_folder(root / "test-gpu" / "rmat_scale8_ef4", TINY, kernels=("scan",), sources=1)
    (root / "test-gpu" / "pooled").mkdir()
    (root / "test-gpu" / "pooled" / "device.json").write_text("{}")
    runs = committed_runs([root])
    assert len(runs) == 1 and not runs[0].explicit
    graph = sm.load_graph(TINY)
    run_found, note = pick_run(runs, graph.name, graph.n, graph.m, "h200")
    assert run_found is runs[0] and note is None
    # The spec as typed and in canonical form name the same graph; another size does not.
    assert runs[0].matches("rmat:scale=8,ef=4,seed=1", graph.n, graph.m)
    assert not runs[0].matches(TINY, graph.n + 1, graph.m)
    assert pick_run(runs, "rmat:scale=9,ef=4", graph.n, graph.m, "h200") == (None, None)
    other, note = pick_run(runs, graph.name, graph.n, graph.m, "h100")
    assert other is None and "--gpu h200" in note


def test_committed_run_under_the_working_directory_is_used(tmp_path, monkeypatch, capsys):
    write_measured_folder(tmp_path / "gpu_validate" / "results" / "test-gpu" / "x", TINY, kernels=("topo",),
                          sources=1, time_factor=2.0)
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "report", TINY, "--sources", "2", "--out", "rep", "--quiet")
    assert code == 0 and err == ""
    rounds = pd.read_csv(tmp_path / "rep" / "tables" / "measured_rounds.csv")
    assert set(rounds["kernel"]) == {"topo"} and np.allclose(rounds["error"], -0.5)
    code, _, _ = run(capsys, "report", TINY, "--sources", "2", "--gpu", "h100", "--out", "rep", "--quiet")
    assert code == 0 and not (tmp_path / "rep" / "tables" / "measured_rounds.csv").exists()
    assert "use --gpu h200 to compare" in (tmp_path / "rep" / "report.md").read_text()


def one_error_line(err: str) -> str:
    """The error line, after any progress lines (`simdmodel: [i/n] ...`, printed when stderr is no terminal)."""
    lines = [line for line in err.strip().splitlines() if not line.startswith("simdmodel: [")]
    assert len(lines) == 1 and lines[0].startswith("simdmodel: error: "), err
    return lines[0]


@pytest.mark.parametrize("argv, message", [
    (["nosuch:scale=3"], "no such file"),
    (["rmat:scale=3,bogus=1"], "unknown key 'bogus'"),
    ([TINY, "--gpu", "nosuchgpu"], "nosuchgpu"),
    ([TINY, "--gpu", "westmere"], "cpu profile"),
    ([TINY, "--sources", "0"], "--sources must be at least 1"),
    ([TINY, "--measured", "/nonexistent/measurements"], "no such directory"),
    ([TINY, "--cpu", "h200"], "gpu profile"),
    ([TINY, "--cpu", "nosuchcpu"], "nosuchcpu"),
])
def test_bad_input_is_one_line_exit_2_and_no_folder(tmp_path, capsys, argv, message):
    out = tmp_path / "rep"
    code, stdout, err = run(capsys, "report", *argv, "--out", str(out))
    assert code == 2 and stdout == ""
    assert message in one_error_line(err)
    assert not out.exists() and leftovers(tmp_path) == []


def test_unwritable_out_is_refused_before_any_work(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    for out, message in ((tmp_path / "missing" / "rep", "does not exist"), (afile, "not a directory"),
                         (afile / "rep", "does not exist"), (busy, "not a report's (notes.txt)")):
        code, _, err = run(capsys, "report", TINY, "--out", str(out))
        assert code == 2 and message in one_error_line(err)
    assert (busy / "notes.txt").read_text() == "mine" and afile.read_text() == "x"
    assert leftovers(tmp_path) == []


def test_measurements_of_another_graph_are_refused(tmp_path, capsys, measured_dir):
    code, _, err = run(capsys, "report", GRID, "--sources", "2", "--measured", str(measured_dir[0]),
                       "--out", str(tmp_path / "rep"))
    assert code == 2 and "is not in this report" in one_error_line(err)
    assert not (tmp_path / "rep").exists() and leftovers(tmp_path) == []


def test_failure_midway_leaves_the_previous_report_untouched(tmp_path, capsys):
    out = tmp_path / "rep"
    assert run(capsys, "report", GRID, "--sources", "2", "--out", str(out), "--quiet")[0] == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    broken = tmp_path / "broken.mtx"
    broken.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n9 1\n")
    code, _, err = run(capsys, "report", GRID, str(broken), "--sources", "2", "--out", str(out))
    assert code == 2 and "broken.mtx" in one_error_line(err)
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before and leftovers(tmp_path) == []
    # A second run over a finished report replaces it.
    assert run(capsys, "report", TINY, "--sources", "2", "--out", str(out), "--quiet")[0] == 0
    assert pd.read_csv(out / "tables" / "summary.csv")["graph"].tolist() == [TINY]


@settings(max_examples=25, deadline=None)
@given(sources=st.integers(max_value=0), junk=st.text(alphabet="abcxyz_-.", min_size=1, max_size=12))
def test_any_bad_count_or_unknown_spec_is_refused(tmp_path_factory, sources, junk):
    base = tmp_path_factory.mktemp("bad")
    for argv in (["report", TINY, "--sources", str(sources)], ["report", f"g{junk}.nosuchfile"]):
        assert main([*argv, "--out", str(base / "rep"), "--quiet"]) == 2
        assert list(base.iterdir()) == []


def test_progress_bars_only_when_asked(tmp_path, capsys):
    from simdreport import build_report

    build_report([GRID], sources=2, out=tmp_path / "a", progress=True)
    assert "graphs" in capsys.readouterr().err
    build_report([GRID], sources=2, out=tmp_path / "b", progress=False)
    assert capsys.readouterr().err == ""


def test_progress_lines_per_graph_and_phase_when_piped_none_when_quiet(tmp_path, capsys):
    code, _, err = run(capsys, "report", GRID, "--sources", "2", "--out", str(tmp_path / "a"))
    lines = err.splitlines()
    assert code == 0 and lines[0] == f"simdmodel: [1/1] {GRID}: loading and lane accounting"
    assert f"simdmodel: [1/1] {GRID}: predicting swc [10/10]" in lines
    assert f"simdmodel: [1/1] {GRID}: drawing its figures" in lines
    assert lines[-1].startswith(f"wrote {tmp_path / 'a'}/index.html") and " for 1 graph in " in lines[-1]
    assert run(capsys, "report", GRID, "--sources", "2", "--out", str(tmp_path / "b"), "--quiet")[2] == ""


def test_the_frontier_figure_follows_the_predicted_source(report_dir, measured_dir):
    """With measurements the prediction follows their first source: the frontier figure shows that BFS."""
    summary = pd.read_csv(report_dir / "tables" / "summary.csv").set_index("graph")
    source = int(summary.loc[TINY, "opm_source"])
    frontiers = pd.read_csv(report_dir / "tables" / "frontiers.csv")
    assert ((frontiers["graph"] == TINY) & (frontiers["source"] == source)).any()
    markdown = (report_dir / "report.md").read_text()
    assert f"frontier from source {source}, the BFS the predictions below follow" in markdown
    headings = [line for line in markdown.splitlines() if line.startswith("### Prediction beside measurement")]
    page = (report_dir / "index.html").read_text()
    assert headings and all(str(measured_dir[0]) not in h and "`tiny`" in h for h in headings)
    assert re.search(r"<h3>Prediction beside measurement \([^)]*<code>tiny</code>\)</h3>", page)


def test_importing_the_report_does_not_import_cupy():
    import subprocess
    import sys

    code = "import sys, simdreport, simdreport.report; sys.exit('cupy' in sys.modules)"
    root = Path(__file__).resolve().parents[1]
    assert subprocess.run([sys.executable, "-c", code], check=False, cwd=root).returncode == 0


def test_a_measurement_folder_without_device_json_is_refused(tmp_path, capsys):
    folder = tmp_path / "m"
    write_measured_folder(folder, TINY, kernels=("ws",), sources=1)
    (folder / "device.json").unlink()
    code, _, err = run(capsys, "report", TINY, "--sources", "2", "--measured", str(folder), "--out",
                       str(tmp_path / "rep"))
    assert code == 2 and "missing device.json" in one_error_line(err)
    assert not (tmp_path / "rep").exists()


def test_unreadable_committed_runs_are_skipped_with_a_warning(tmp_path):
    root = tmp_path / "results"
    good = root / "test-gpu" / "good"
    write_measured_folder(good, TINY, kernels=("scan",), sources=1)
    for name, text in (("garbled", "{half"), ("nameless", '{"device": "Test GPU"}')):
        write_measured_folder(root / "test-gpu" / name, TINY, kernels=("scan",), sources=1)
        (root / "test-gpu" / name / "device.json").write_text(text)
    with pytest.warns(sm.DataWarning) as caught:
        runs = committed_runs([root])
    assert [run.folder for run in runs] == [good]
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert messages[0].startswith(f"{root / 'test-gpu' / 'garbled' / 'device.json'}: unreadable (")
    assert messages[0].endswith(f"the measurements in {root / 'test-gpu' / 'garbled'} are left out")
    assert messages[1] == (f"{root / 'test-gpu' / 'nameless' / 'device.json'}: names no graph; the measurements in "
                           f"{root / 'test-gpu' / 'nameless'} are left out")


def test_a_report_shows_a_skipped_committed_run_as_one_warning_line(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "gpu_validate" / "results" / "test-gpu" / "x"
    write_measured_folder(folder, TINY, kernels=("topo",), sources=1)
    (folder / "device.json").write_text("{half")
    monkeypatch.chdir(tmp_path)
    code, _, err = run(capsys, "report", TINY, "--sources", "2", "--out", "rep", "--quiet")
    assert code == 0 and err.startswith("simdmodel: warning: ") and err.count("\n") == 1
    assert not (tmp_path / "rep" / "tables" / "measured_rounds.csv").exists()


def test_worker_processes_give_the_same_tables_and_pass_errors_back(tmp_path, capsys):
    from simdreport import build_report

    specs = [TINY, GRID, "mesh6:side=9"]
    one = build_report(specs, sources=2, out=tmp_path / "one", jobs=1)
    three = build_report(specs, sources=2, out=tmp_path / "three", jobs=3)
    for name, table in one.tables.items():
        pd.testing.assert_frame_equal(three.tables[name], table, check_exact=True)
    broken = tmp_path / "broken.mtx"
    broken.write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n9 1\n")
    code, _, err = run(capsys, "report", GRID, str(broken), "--sources", "2", "--jobs", "2", "--out",
                       str(tmp_path / "bad"), "--quiet")
    assert code == 2 and err == f"simdmodel: error: {broken}:4: row index '9' outside 1..3\n"
    assert not (tmp_path / "bad").exists()


def test_size_hints_start_the_largest_graph_first(tmp_path):
    from simdreport.suites import SuiteGraph, size_hint

    graph_file = tmp_path / "g.el"
    graph_file.write_text("0 1\n1 2\n")
    assert size_hint(SuiteGraph("rmat:scale=10,ef=8", "r", "")) == 2 * 8 * 1024  # declared edge entries
    assert size_hint(SuiteGraph(str(graph_file), "g", "")) == 8  # a file: its bytes
    assert size_hint(SuiteGraph(str(tmp_path / "missing.el"), "x", "")) == 0


def test_a_cpu_profile_puts_the_cpus_bfs_beside_the_gpus(star, tmp_path):
    from opmachine.cpu import predict_cpu, predict_cpu_threads
    from simdmodel.frontier import bfs

    cpu = om.load_profile("epyc-kvm", kind="cpu")
    report = build_report([star, GRID], sources=2, out=tmp_path / "out", cpu="epyc-kvm")
    summary = report.tables["summary"]
    for data, row in zip(report.graphs, summary.itertuples(), strict=True):
        graph = data.graph.load()
        front = bfs(graph, data.opm_source)
        serial = predict_cpu(graph, front, cpu, warm=True)["predicted_ns"].sum()
        threaded = predict_cpu_threads(graph, front, cpu, 2, warm=True)["predicted_ns"].sum()
        assert row.cpu == "epyc-kvm" and row.cpu_threads == 2
        assert row.cpu_serial_ms == pytest.approx(serial / 1e6) and row.cpu_threads_ms == pytest.approx(threaded / 1e6)
        assert row.gpu_speedup_over_cpu == pytest.approx(min(serial, threaded) / data.ranking.pick["predicted_ns"])
    text = (tmp_path / "out" / "report.md").read_text()
    assert "CPU profile epyc-kvm" in text and text.count("On CPU epyc-kvm the same BFS") == 2
    assert "figures/01-suite-gpu-cpu.png" in text and (tmp_path / "out" / "figures" / "01-suite-gpu-cpu.png").is_file()
    plain = build_report([GRID], sources=2, out=tmp_path / "plain").tables["summary"]
    assert plain["cpu"].tolist() == [""] and plain["cpu_serial_ms"].isna().all()
    assert "CPU" not in (tmp_path / "plain" / "report.md").read_text().split("### How to read")[0]
    assert not (tmp_path / "plain" / "figures" / "01-suite-gpu-cpu.png").exists()
