"""`simdmodel sweep`: tasks planned and checked up front, run on a 2-worker local Dask cluster,
kept as one Parquet dataset that a rerun resumes, failures recorded without losing the others."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from opmachine.kernels import parse_kernel
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from opmachine.profile.whatif import derive_profile
from simdmodel import load_graph
from simdmodel.errors import InputError
from simdmodel.frontier import pick_sources
from simdreport.cli import main
from simdreport.suites import SuiteGraph, suite_for
from simdreport.sweep import run_sweep
from simdreport.sweep_figure import knob_tables
from simdreport.sweep_plan import plan_sweep, profile_specs, split_profile_spec
from simdreport.sweep_store import SweepStore
from simdreport.sweep_table import fastest_table, whole_bfs
from simdreport.sweep_task import COLUMNS, level_rows, run_task

GRAPHS = suite_for(["rmat:scale=11,ef=8", "grid2d:side=40"])


def test_the_plan_is_every_combination_with_stable_ids():
    plan = plan_sweep(GRAPHS, ["topo", "sm-4", "ws"], ["h200"], [("l2", (0.5, 1.0, 2.0)), ("dram", (0.5,))], sources=2)
    assert plan.profiles == ("h200", "h200:l2*0.5", "h200:l2*2", "h200:dram*0.5")  # factor 1 is the base
    assert len(plan.tasks) == 2 * 3 * 4 * 2
    ids = [task.task_id for task in plan.tasks]
    assert len(set(ids)) == len(ids)
    again = plan_sweep(GRAPHS, ["topo", "sm-4", "ws"], ["h200"], [("l2", (0.5, 1.0, 2.0)), ("dram", (0.5,))], sources=2)
    assert [task.task_id for task in again.tasks] == ids
    assert [t.graph.spec for t in plan.tasks[:24]] == [GRAPHS[0].spec] * 24  # graph-major


def test_profile_specs_combine_a_base_with_each_what_if():
    assert profile_specs(["h200:dram*0.5"], [("l2", (2.0,))]) == ("h200:dram*0.5", "h200:l2*2,dram*0.5")
    assert profile_specs(["h200:l2*2"], [("l2", (2.0,))]) == ("h200:l2*2", "h200:l2*4")
    assert split_profile_spec("dir:a/my.toml:sms*2") == ("dir:a/my.toml", {"sms": 2.0})
    assert split_profile_spec("dir:a/my.toml") == ("dir:a/my.toml", {})


@pytest.mark.parametrize("kwargs, message", [
    ({"kernels": ["sm-33"]}, "group size"),
    ({"kernels": ["ws", "ws"]}, "listed twice"),
    ({"bases": ["nope"]}, "no such profile"),
    ({"bases": ["h200:l2*0"]}, "positive"),
    ({"bases": ["westmere"]}, "needs a gpu profile"),
    ({"sources": 0}, "--sources"),
    ({"what_ifs": [("l2", (2.0,)), ("l2", (4.0,))]}, "twice"),
    ({"graphs": [SuiteGraph("/no/such/file.mtx", "x", "")]}, "no such file"),
    ({"graphs": [SuiteGraph("rmat:scal=3", "x", "")]}, "unknown key"),
    ({"time_model": "fast"}, "time model"),
])
def test_bad_inputs_fail_before_any_task(kwargs, message):
    arguments = {"graphs": GRAPHS, "kernels": ["topo"], "bases": ["h200"], "what_ifs": []} | kwargs
    with pytest.raises(InputError, match=message):
        plan_sweep(arguments.pop("graphs"), arguments.pop("kernels"), arguments.pop("bases"), arguments.pop("what_ifs"),
                   **arguments)


def test_a_tasks_rows_are_its_prediction_folded_by_level():
    plan = plan_sweep(GRAPHS[:1], ["sm-4"], ["h200:l2*0.5"], sources=2)
    task = plan.tasks[1]
    rows = run_task(task)
    assert list(rows.columns) == list(COLUMNS) and rows.dtypes.astype(str).tolist() == list(COLUMNS.values())
    graph = load_graph(GRAPHS[0].spec)
    source = int(pick_sources(graph, 2, 1)[1])
    result = predict_bfs(graph, source, parse_kernel("sm-4"), derive_profile(load_profile("h200"), {"l2": 0.5}),
                         l2_model="setassoc", warm_l2=True)
    assert (rows["source"] == source).all() and (rows["l2_factor"] == 0.5).all()
    assert rows["predicted_ns"].sum() == pytest.approx(result.predicted_ns, rel=1e-12)
    per_level = result.per_level.groupby("level")
    assert np.array_equal(rows["launches"], per_level.size())
    assert np.allclose(rows["expand_ns"] + rows["compact_ns"], rows["predicted_ns"])
    assert np.array_equal(rows["dram_sectors"], per_level["dram_sectors"].sum())


def test_level_rows_by_hand():
    launches = pd.DataFrame({
        "level": [0, 0, 1], "phase": ["expand", "compact", "expand"], "frontier_vertices": [1, 5, 5],
        "frontier_edges": [4, 0, 9], "predicted_ns": [10.0, 30.0, 20.0], "fixed_ns": [1.0, 2.0, 1.0],
        "jobs_total": [3, 4, 5], "l2_sectors": [1, 1, 1], "l2_hits": [0, 1, 1], "dram_sectors": [1, 0, 0],
        "inst_executed": [7.0, 8.0, 9.0], "bottleneck": ["L2H", "latency", "RBM"]})
    rows = level_rows(launches)
    assert rows["predicted_ns"].tolist() == [40.0, 20.0]
    assert rows["expand_ns"].tolist() == [10.0, 20.0] and rows["compact_ns"].tolist() == [30.0, 0.0]
    assert rows["frontier_vertices"].tolist() == [1, 5] and rows["frontier_edges"].tolist() == [4, 9]
    assert rows["bottleneck"].tolist() == ["latency", "RBM"] and rows["launches"].tolist() == [2, 1]


def test_fastest_table_by_hand():
    whole = pd.DataFrame({"graph_label": ["g"] * 4, "base_profile": ["h"] * 4,
                          "profile": ["h", "h", "h:l2*2", "h:l2*2"], "mapping": ["a", "b", "a", "b"],
                          "predicted_ms": [2.0, 3.0, 1.5, 1.0]})
    table = fastest_table(whole)
    assert table["fastest"].tolist() == ["a", "b"] and table["runner_up"].tolist() == ["b", "a"]
    assert table["margin"].tolist() == pytest.approx([0.5, 0.5])
    assert table["vs_base"].tolist() == pytest.approx([0.0, -0.5])


def test_knob_tables_take_only_profiles_that_change_that_knob_alone():
    plan = plan_sweep(GRAPHS[:1], ["sm-4"], ["h200", "h200:l2*2,dram*2"], [("l2", (0.5,))])
    whole = pd.DataFrame([{"task_id": t.task_id, "graph_label": t.graph.label, "mapping": t.kernel,
                           "base_profile": split_profile_spec(t.profile)[0], "predicted_ms": 1.0,
                           **{f"{k}_factor": split_profile_spec(t.profile)[1].get(k, 1.0)
                              for k in ("l2", "dram", "l2bw", "sms", "launch")},
                           "l2_bytes": 1, "dram_bandwidth_gbs": 1.0, "l2_bandwidth_gbs": 1.0, "sms": 1,
                           "launch_overhead_ns": 1.0} for t in plan.tasks])
    tables = knob_tables(whole)
    # h200:l2*2,dram*2 changes two knobs: in neither figure; with l2 x0.5 it is h200:dram*2, a dram point
    assert plan.profiles == ("h200", "h200:l2*0.5", "h200:l2*2,dram*2", "h200:dram*2")
    assert list(tables) == ["l2", "dram"]
    assert tables["l2"]["factor"].tolist() == [0.5, 1.0] and tables["dram"]["factor"].tolist() == [1.0, 2.0]


def test_the_store_refuses_a_folder_that_is_not_a_sweeps(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="not a sweep's"):
        SweepStore(tmp_path)
    with pytest.raises(InputError, match="not a directory"):
        SweepStore(tmp_path / "notes.txt")
    with pytest.raises(InputError, match="does not exist"):
        SweepStore(tmp_path / "a" / "b")
    SweepStore(tmp_path / "new")
    assert not (tmp_path / "new").exists()  # made on the first write, not before


@pytest.mark.slow
def test_a_sweep_on_two_local_workers_resumes_and_keeps_what_failed_apart(tmp_path):
    bad = tmp_path / "bad.el"
    bad.write_text("0 1\n1 x\n")
    graphs = (*GRAPHS, SuiteGraph(str(bad), "bad", ""))
    plan = plan_sweep(graphs, ["topo", "sm-8", "scan"], ["h200"], [("l2", (0.25,))])
    out = tmp_path / "sweep"
    outcome = run_sweep(plan, out, workers=2)
    assert outcome.ran == 12 and outcome.skipped == 0 and len(outcome.failed) == 6
    assert {task.graph.label for task, _ in outcome.failed} == {"bad"}
    assert all("bad.el:2" in message for _, message in outcome.failed)
    records = [json.loads(p.read_text()) for p in sorted((out / "failed").iterdir())]
    assert len(records) == 6 and {r["graph"] for r in records} == {str(bad)}
    assert {r["kernel"] for r in records} == {"topo", "sm-8", "scan"} and "error" in records[0]

    dataset = pd.read_parquet(out / "levels")
    assert dataset["task_id"].nunique() == 12 and list(dataset.columns) == list(COLUMNS)
    # bit-identical to predicting in this process
    task = next(t for t in plan.tasks if t.kernel == "scan" and t.profile == "h200:l2*0.25")
    theirs = dataset.loc[dataset["task_id"] == task.task_id].sort_values("level").reset_index(drop=True)
    mine = run_task(task, theirs["code_version"].iloc[0])
    pd.testing.assert_frame_equal(mine, theirs)
    whole = pd.read_csv(out / "whole_bfs.csv")
    assert len(whole) == 12 and np.allclose(whole.sort_values("task_id")["predicted_ms"],
                                            whole_bfs(dataset).sort_values("task_id")["predicted_ms"])
    assert (out / "figures" / "time_vs_l2.png").stat().st_size > 1000
    record = json.loads((out / "sweep.json").read_text())
    assert sorted(record["failed"]) == sorted(r["task_id"] for r in records)
    assert record["ran"] == 12 and record["tasks"] == 18 and record["kernels"] == ["topo", "sm-8", "scan"]

    before = {p.name: p.stat().st_mtime_ns for p in (out / "levels").iterdir()}
    bad.write_text("0 1\n1 2\n2 0\n")  # mended: a rerun retries only the failed tasks
    again = run_sweep(plan, out, workers=2)
    assert again.ran == 6 and again.skipped == 12 and not again.failed
    assert not list((out / "failed").iterdir())
    after = {p.name: p.stat().st_mtime_ns for p in (out / "levels").iterdir()}
    assert len(after) == 18 and all(after[name] == stamp for name, stamp in before.items())


@pytest.mark.slow
def test_a_sweep_runs_on_an_existing_cluster(tmp_path):
    from distributed import LocalCluster

    plan = plan_sweep(GRAPHS[:1], ["sm-2", "ws"], ["h200"])
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
        outcome = run_sweep(plan, tmp_path / "s", scheduler=cluster.scheduler_address)
    assert outcome.ran == 2 and not outcome.failed
    with pytest.raises(InputError, match="cannot connect"):
        run_sweep(plan, tmp_path / "t", scheduler="tcp://127.0.0.1:9")
    assert not (tmp_path / "t").exists()


def _sweep_command(out: Path) -> list[str]:
    return [sys.executable, "-m", "simdreport", "sweep", "rmat:scale=15,ef=8", "random:n=30000,m=300000",
            "grid2d:side=120", "--what-if", "l2=0.5,2", "--workers", "2", "--out", str(out)]


def _wait_for_parts(out: Path, count: int, process) -> int:
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        done = len(list((out / "levels").glob("part-*.parquet"))) if (out / "levels").is_dir() else 0
        if done >= count:
            return done
        assert process.poll() is None, "the sweep ended before it could be stopped"
        time.sleep(0.05)
    raise AssertionError("no task finished in time")


@pytest.mark.slow
def test_a_sweep_killed_halfway_resumes_without_redoing_finished_tasks(tmp_path):
    out = tmp_path / "sweep"
    process = subprocess.Popen(_sweep_command(out), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    try:
        _wait_for_parts(out, 5, process)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    kept = {p.name: p.stat().st_mtime_ns for p in (out / "levels").glob("part-*.parquet")}
    total = 3 * 10 * 3
    assert 5 <= len(kept) < total
    for part in kept:  # whole files only
        pd.read_parquet(out / "levels" / part)
    done = subprocess.run(_sweep_command(out), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert f"({total - len(kept)} run now, {len(kept)} already there, 0 failed)" in done.stderr
    after = {p.name: p.stat().st_mtime_ns for p in (out / "levels").glob("part-*.parquet")}
    assert len(after) == total and all(after[name] == stamp for name, stamp in kept.items())


@pytest.mark.slow
def test_ctrl_c_stops_a_sweep_with_one_line_and_keeps_its_finished_tasks(tmp_path):
    out = tmp_path / "sweep"
    process = subprocess.Popen(_sweep_command(out), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    _wait_for_parts(out, 2, process)
    os.killpg(process.pid, signal.SIGINT)  # as a terminal does: the whole process group
    out_text, err = process.communicate(timeout=120)
    assert process.returncode == 130
    assert err.splitlines()[-1] == "simdmodel: interrupted" and "Traceback" not in err
    assert len(list((out / "levels").glob("part-*.parquet"))) >= 2
    assert not list((out / "levels").glob(".*"))  # no temporary file left


class _Finaliser:
    """An object whose finaliser calls `then`: what that raises is an exception Python drops."""

    def __init__(self, then):
        self.then = then

    def __del__(self):
        self.then()


def _fail():
    raise ValueError("in a finaliser")


def test_a_ctrl_c_that_python_drops_is_still_seen_and_not_printed(monkeypatch):
    from simdreport.interrupt import check_interrupted, unwinding

    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: dropped.append(type(unraisable.exc_value)))
    with unwinding():
        check_interrupted()  # none yet
        _Finaliser(lambda: signal.raise_signal(signal.SIGINT))  # collected at once: its KeyboardInterrupt is dropped
        with pytest.raises(KeyboardInterrupt):
            check_interrupted()
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)  # an ordinary one still unwinds
        _Finaliser(_fail)  # other dropped exceptions are reported as before
    check_interrupted()  # forgotten once the block is left
    assert dropped == [ValueError]


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as done:
        code = done.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv, message", [
    (["--what-if", "l3=2"], "unknown what-if knob 'l3'"),
    (["--what-if", "l2=0"], "factor '0' must be a positive finite number"),
    (["--gpu", "h200:l2"], "is not KNOB*FACTOR"),
    (["--workers", "0"], "must be at least 1"),
    (["--sources", "0"], "must be at least 1"),
    (["--kernels", "sm-0"], "group size"),
    (["--workers", "2", "--scheduler", "tcp://x:1"], "not allowed with argument"),
    (["--suite", "real"], "--suite needs --graphs-dir"),
])
def test_sweep_options_are_checked_in_one_line(capsys, tmp_path, argv, message):
    code, _, err = run(capsys, "sweep", "rmat:scale=8", "--out", str(tmp_path / "s"), *argv)
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "s").exists()


def test_the_cli_prints_the_fastest_kernel_per_graph_and_profile(capsys, tmp_path):
    code, out, err = run(capsys, "sweep", "rmat:scale=9,ef=8", "--kernels", "sm-2,sm-32", "--what-if", "launch=2",
                         "--workers", "1", "--out", str(tmp_path / "s"), "--quiet")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["graph", "profile", "fastest", "predicted_ms", "runner_up", "margin", "vs_base"]
    assert [line.split()[1] for line in lines[1:]] == ["h200", "h200:launch*2"]
    fastest = pd.read_csv(tmp_path / "s" / "fastest.csv")
    assert fastest["vs_base"].iloc[1] > 0  # dearer launches, slower BFS


def test_a_rerun_after_a_code_change_says_which_tasks_older_code_computed(tmp_path, monkeypatch):
    from simdmodel.errors import DataWarning

    plan = plan_sweep(GRAPHS[:1], ["sm-2", "sm-4"], ["h200"])
    monkeypatch.setattr("gpu_validate.provenance.code_version", lambda: "aaaa")
    first = run_sweep(plan, tmp_path / "s", workers=1)
    assert (first.whole["code_version"] == "aaaa").all()
    monkeypatch.setattr("gpu_validate.provenance.code_version", lambda: "bbbb")
    with pytest.warns(DataWarning, match="2 of the 2 tasks .* code version aaaa, not this one \\(bbbb\\)"):
        again = run_sweep(plan, tmp_path / "s", workers=1)
    assert again.skipped == 2 and again.ran == 0


def test_a_manifest_graphs_loader_options_are_part_of_its_task(tmp_path):
    from simdmodel.readers import ReadOptions

    edges = tmp_path / "g.csv"
    edges.write_text("a,b\n0,1\n1,2\n2,0\n")
    plain = SuiteGraph(str(edges), "g", "", loader={"undirected": True, "read_options": ReadOptions()})
    named = SuiteGraph(str(edges), "g", "", loader={"undirected": True, "read_options": ReadOptions(header=True)})
    first, second = (plan_sweep([g], ["sm-1"], ["h200"]).tasks[0] for g in (plain, named))
    assert first.task_id != second.task_id
    assert json.loads(json.dumps(second.inputs()))["loader"]["read_options"]["header"] is True
    store = SweepStore(tmp_path / "s")
    store.fail(second, "an error")  # the failure record is JSON too
    assert json.loads((tmp_path / "s" / "failed" / f"{second.task_id}.json").read_text())["error"] == "an error"
    assert run_task(first)["n"].iloc[0] == 3


def test_block_sizes_are_a_sweep_axis(tmp_path):
    plan = plan_sweep(GRAPHS[:1], ["sm-4", "scan"], ["h200"], blocks=[128, 512])
    assert len(plan.tasks) == 4 and len({t.task_id for t in plan.tasks}) == 4
    assert plan_sweep(GRAPHS[:1], ["sm-4"], ["h200"]).tasks[0].task_id not in {t.task_id for t in plan.tasks}
    rows = run_task(plan.tasks[1])  # sm-4 at 512 threads a block
    assert (rows["block"] == 512).all() and (rows["mapping"] == "sm-4 b512").all()
    graph = load_graph(GRAPHS[0].spec)
    direct = predict_bfs(graph, int(pick_sources(graph, 1, 1)[0]), parse_kernel("sm-4"), load_profile("h200"),
                         l2_model="setassoc", warm_l2=True, block=512)
    assert rows["predicted_ns"].sum() == pytest.approx(direct.predicted_ns, rel=1e-12)
    with pytest.raises(InputError):
        plan_sweep(GRAPHS[:1], ["sm-4"], ["h200"], blocks=[100])
    with pytest.raises(InputError, match="each listed once"):
        plan_sweep(GRAPHS[:1], ["sm-4"], ["h200"], blocks=[128, 128])


def test_a_profile_files_content_is_part_of_its_tasks(tmp_path):
    from opmachine.profile import profiles_dir

    mine = tmp_path / "mine.toml"
    mine.write_bytes((profiles_dir() / "h200.toml").read_bytes())
    before = plan_sweep(GRAPHS[:1], ["sm-4"], [f"{mine}:l2*2"]).tasks
    assert len(before) == 1 and "profile_sha256" in before[0].inputs()
    mine.write_text(mine.read_text().replace("clock_mhz = 1980.0", "clock_mhz = 1700.0", 1))
    after = plan_sweep(GRAPHS[:1], ["sm-4"], [f"{mine}:l2*2"]).tasks
    assert after[0].task_id != before[0].task_id  # an edited profile makes new tasks
    assert "profile_sha256" not in plan_sweep(GRAPHS[:1], ["sm-4"], ["h200"]).tasks[0].inputs()


def test_tasks_that_differ_only_in_time_share_one_simulation_and_give_the_same_rows(tmp_path):
    from simdreport.sweep_task import group_key

    plan = plan_sweep(GRAPHS[:1], ["sm-8", "ws"], ["h200"], [("dram", (0.5,)), ("launch", (2.0,)), ("l2", (0.5,))])
    groups = {}
    for task in plan.tasks:
        groups.setdefault(group_key(task), []).append(task.profile)
    # h200, dram and launch share one simulation per kernel; the smaller L2 needs its own
    assert sorted(map(len, groups.values())) == [1, 1, 3, 3]
    outcome = run_sweep(plan, tmp_path / "s", workers=1)
    assert outcome.ran == len(plan.tasks) == 8 and not outcome.failed
    dataset = pd.read_parquet(tmp_path / "s" / "levels")
    for task in plan.tasks:
        theirs = dataset.loc[dataset["task_id"] == task.task_id].sort_values("level").reset_index(drop=True)
        pd.testing.assert_frame_equal(run_task(task, theirs["code_version"].iloc[0]), theirs)
