"""`simdmodel validate` without a GPU: the clear error, and predict + compare from saved measurements.

The saved measurements here are synthetic (built from the model itself, times scaled by a known
factor), so every comparison figure is known by hand: a prediction 1/1.25 of the measured time
has per-level error exactly -0.2, r = 1, and lanes and jobs match exactly.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import opmachine as om
import simdmodel as sm
from gpu_validate.lanes import lanes_model
from gpu_validate.validate import sample_levels, throughput, write_tables
from simdmodel.errors import InputError

SPEC = "rmat:scale=9,ef=8,seed=5"
KERNELS = ("topo", "sm-4", "ws", "scan")


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "simdreport.cli", *args], check=False, capture_output=True, text=True)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    return _write_saved(tmp_path_factory.mktemp("measured"), KERNELS)


def _write_saved(folder, kernels):
    """A measured folder whose times are 1.25 x the warm prediction and whose counters are the model's."""
    folder.mkdir(parents=True, exist_ok=True)
    graph = sm.load_graph(SPEC)
    profile = om.load_profile("h200")
    sources = [int(s) for s in sm.pick_sources(graph, 2, seed=1)]
    measured, lanes = [], []
    for label in kernels:
        kernel = om.parse_kernel(label)
        for source in sources:
            # times 1.25 x the warm-L2 prediction, the mode the comparison judges times by
            p = om.predict_bfs(graph, source, kernel, profile, l2_model="setassoc", warm_l2=True).per_level
            table = p[["level", "phase", "block", "grid", "frontier_vertices"]].assign(
                graph=graph.name, kernel=label, source=source, time_ns=1.25 * p["predicted_ns"],
                time_ns_min=p["predicted_ns"], repeats=3,
                lane_slots=np.where(p["phase"] == "compact", 0, 32 * p["jobs_edl"]),
                useful_lanes=np.where(p["phase"] == "compact", 0, p["frontier_edges"]))
            for server in ("ani", "nf1", "erl", "edl", "nf2", "op"):
                table[f"gpu_jobs_{server}"] = p[f"jobs_{server}"]
            measured.append(table)
            expected = lanes_model(graph, kernel, source, sm.frontier.bfs(graph, source))
            lanes.append(expected.assign(graph=graph.name))
    pd.concat(measured).to_csv(folder / "measured.csv", index=False)
    pd.concat(lanes).to_csv(folder / "lanes_model.csv", index=False)
    (folder / "device.json").write_text(json.dumps({"device": "synthetic", "driver": "none", "date": "2026-11-21",
                                                    "profile": "h200", "graph_n": graph.n, "graph_m": graph.m}))
    return folder


def test_without_a_gpu_validate_exits_2_with_one_line(tmp_path):
    pytest.importorskip("pytest")
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here")
    except ImportError:
        pass
    out = _cli("validate", SPEC, "--out", str(tmp_path / "v"))
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "CuPy" in out.stderr
    assert not (tmp_path / "v").exists()


def test_compare_from_saved_measurements(saved, tmp_path):
    out_dir = tmp_path / "v"
    out = _cli("validate", SPEC, "--kernels", ",".join(KERNELS), "--measured", str(saved), "--out", str(out_dir))
    assert out.returncode == 0, out.stderr
    summary = json.loads((out_dir / "summary.json").read_text())
    assert summary["lane_exact_fraction"] == 1.0 and summary["jobs_exact_fraction"] == 1.0
    assert summary["time_mape_per_level"] == pytest.approx(0.2)
    assert summary["time_max_error_per_level"] == pytest.approx(-0.2)
    assert summary["bfs_time_error_median"] == pytest.approx(-0.2)
    assert summary["time_pearson_r"] == pytest.approx(1.0)
    assert summary["best_mapping_agreement"] == 1.0
    assert summary["time_mode"] == "warm" and summary["cold_l2_mode"]["per_kernel"].keys() == set(KERNELS)
    # the console shows the rows summary.json judges (warm), not the cold-L2 ones
    lines = out.stdout.splitlines()
    assert "mode warm" in lines[1]
    kernel_lines = [line for line in lines if "per-level MAPE" in line]
    assert len(kernel_lines) == len(KERNELS)
    assert all("per-level MAPE  20.0%" in line and "whole BFS  -20.0%" in line for line in kernel_lines)
    for key in ("device", "driver", "date", "command", "graphs", "kernels"):
        assert summary[key]
    rounds = pd.read_csv(out_dir / "rounds.csv")
    warm = rounds[rounds["mode"] == "warm"]
    assert warm["predicted"].all() and np.allclose(warm["error"], -0.2)
    # the cold L2 mode covers the first source only (the one Nsight Compute profiles)
    assert rounds.loc[(rounds["mode"] == "simulation") & rounds["predicted"], "source"].nunique() == 1
    assert {"throughput.csv", "exact.csv", "predicted.csv", "time_errors.csv"} <= {p.name for p in out_dir.iterdir()}


def test_saved_measurements_of_another_graph_are_refused(saved, tmp_path):
    out = _cli("validate", "rmat:scale=10,ef=8", "--measured", str(saved), "--out", str(tmp_path / "v"))
    assert out.returncode == 2 and "measured on a graph" in out.stderr
    assert not (tmp_path / "v").exists()


@pytest.mark.parametrize("args, message", [
    (["--measured", "/nonexistent/dir"], "no such directory"),
    (["--repeats", "0"], "--repeats must be at least 1"),
    (["--kernels", "sm-33"], "group size 33"),
    (["--measured", ".", "--counters"], "cannot be combined"),
])
def test_bad_options_get_one_line(args, message, tmp_path):
    out = _cli("validate", SPEC, *args, "--out", str(tmp_path / "v"))
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1


def test_sample_levels():
    assert sample_levels(5, 24) == [0, 1, 2, 3, 4]
    picked = sample_levels(1000, 24)
    assert len(picked) == 24 and picked[0] == 0 and picked[-1] == 999 and picked == sorted(picked)


def test_write_tables_is_all_or_nothing(tmp_path):
    target = tmp_path / "out"
    write_tables(target, {"a": pd.DataFrame({"x": [1]})}, {"k": 1}, {"device": "d"})
    assert sorted(p.name for p in target.iterdir()) == ["a.csv", "device.json", "summary.json"]
    write_tables(target, {"b": pd.DataFrame({"x": [2]})}, None, None)  # an earlier run is replaced
    assert sorted(p.name for p in target.iterdir()) == ["b.csv"]
    (target / "notes.txt").write_text("mine")
    with pytest.raises(InputError, match="holds other files"):
        write_tables(target, {"c": pd.DataFrame({"x": [3]})}, None, None)
    assert (target / "b.csv").exists() and not any(p.name.startswith(".out") for p in tmp_path.iterdir())


def test_throughput_and_bound_by_hand():
    measured = pd.DataFrame({"graph": "g", "kernel": "ws", "source": 0, "time_ns": [600.0, 400.0, 50.0],
                             "phase": ["expand", "compact", "expand"], "frontier_vertices": [1, 7, 30]})
    lanes = pd.DataFrame({"graph": "g", "kernel": "ws", "source": 0, "useful_lanes": [1500, 500]})
    table = throughput(measured, lanes, n=99, m=1000, bandwidth_gbs=1000.0)
    # 2000 edges in 1050 ns; streamed bytes 4*100 + 4*1000 = 4400 -> 4.4 ns at 1000 GB/s.
    assert table["gteps"].iloc[0] == pytest.approx(2000 / 1050)
    # reached: the expansions' frontiers (1 + 30; a compaction's frontier is not a level) and their edges
    assert table[["reached_vertices", "edges"]].iloc[0].tolist() == [31, 2000]
    assert table["bound_gteps"].iloc[0] == pytest.approx(2000 / 4.4) and np.isnan(table["gather_bound_gteps"].iloc[0])
    # With a gather rate the lookups bound it: 99 ints = 396 bytes, between the 256- and 1024-byte points
    # (log2 396 = 8.63: 40 + 0.63 * (20 - 40) = 27.4 a ns), so 2000 lookups take 73 ns > 4.4 ns.
    rates = om.profile.GatherRates((256, 1024), (40.0, 20.0))
    gathered = throughput(measured, lanes, n=99, m=1000, bandwidth_gbs=1000.0, gather=rates)
    per_ns = 40.0 + (np.log2(396) - 8) / 2 * (20.0 - 40.0)
    assert gathered["gather_bound_gteps"].iloc[0] == pytest.approx(per_ns)
    assert gathered["bound_gteps"].iloc[0] == pytest.approx(per_ns)
    assert gathered["fraction_of_bound"].iloc[0] == pytest.approx(2000 / 1050 / per_ns)


def test_committed_validation_summary_has_every_figure():
    from pathlib import Path

    results = Path(__file__).parent.parent / "gpu_validate" / "results" / "nvidia-h200"
    summary = json.loads((results / "summary.json").read_text())
    for key in ("device", "driver", "date", "command", "graphs", "kernels", "lane_exact_fraction",
                "jobs_exact_fraction", "l2_sector_error_median", "dram_sector_error_median", "time_mape_per_level",
                "time_max_error_per_level", "time_pearson_r", "bfs_time_error_median", "best_mapping_agreement"):
        assert summary[key] is not None, key
    for key in ("lane_exact_fraction", "jobs_exact_fraction", "best_mapping_agreement"):
        assert 0 <= summary[key] <= 1
    assert -1 <= summary["time_pearson_r"] <= 1 and summary["time_mape_per_level"] >= 0
    assert len(summary["kernels"]) == 9 and summary["device"] == "NVIDIA H200"
    for spec in summary["graphs"]:  # each pooled graph has its measured tables beside the summary
        from simdreport.suites import graph_slug
        from gpu_validate.validate import table_path

        assert table_path(results / graph_slug(spec), "measured") is not None


# --- the measured folder's honesty: device.json required, lanes recomputed --------------------------
def copy_of(saved, tmp_path):
    import shutil

    return Path(shutil.copytree(saved, tmp_path / "measured"))


@pytest.mark.parametrize("damage, message", [
    ("delete", "missing device.json"),
    ("garble", "device.json: not readable JSON"),
    ("list", "device.json: not a JSON object"),
])
def test_a_measured_folder_without_a_readable_device_json_is_refused(saved, tmp_path, damage, message):
    folder = copy_of(saved, tmp_path)
    device = folder / "device.json"
    if damage == "delete":
        device.unlink()
    else:
        device.write_text("{not json" if damage == "garble" else "[1, 2]")
    out = _cli("validate", SPEC, "--measured", str(folder), "--gpu", "h200", "--out", str(tmp_path / "v"))
    assert out.returncode == 2 and message in out.stderr and out.stderr.count("\n") == 1, out.stderr
    assert not (tmp_path / "v").exists()


def test_lanes_are_recomputed_and_a_stale_record_is_reported(saved, tmp_path):
    folder = copy_of(saved, tmp_path)
    lanes = pd.read_csv(folder / "lanes_model.csv")
    lanes.loc[lanes.index[:3], "lane_slots"] += 32  # a record from other lane accounting
    lanes.to_csv(folder / "lanes_model.csv", index=False)
    out = _cli("validate", SPEC, "--kernels", ",".join(KERNELS), "--measured", str(folder), "--out",
               str(tmp_path / "v"))
    assert out.returncode == 0, out.stderr
    assert out.stderr == (f"simdmodel: warning: {folder}: lanes_model.csv differs from the current lane accounting "
                          f"in 3 of {len(lanes)} launches; the comparison uses the current code's\n")
    summary = json.loads((tmp_path / "v" / "summary.json").read_text())
    assert summary["lane_exact_fraction"] == 1.0  # the measured counters equal the current accounting
    written = pd.read_csv(tmp_path / "v" / "lanes_model.csv")
    assert len(written) == len(lanes) and not written["lane_slots"].equals(lanes["lane_slots"])


def test_counters_that_only_match_a_stale_record_are_not_exact(saved, tmp_path):
    folder = copy_of(saved, tmp_path)
    lanes = pd.read_csv(folder / "lanes_model.csv")
    measured = pd.read_csv(folder / "measured.csv")
    expand = measured.index[measured["phase"] == "expand"][:2]
    key = ["graph", "kernel", "source", "level", "phase"]
    for i in expand:  # measured counters and the recorded model agree with each other, not with the code
        measured.loc[i, "lane_slots"] += 32
        row = (lanes[key] == measured.loc[i, key]).all(axis=1)
        lanes.loc[row, "lane_slots"] += 32
    measured.to_csv(folder / "measured.csv", index=False)
    lanes.to_csv(folder / "lanes_model.csv", index=False)
    out = _cli("validate", SPEC, "--kernels", ",".join(KERNELS), "--measured", str(folder), "--out",
               str(tmp_path / "v"))
    assert out.returncode == 0 and "differs from the current lane accounting in 2 of" in out.stderr
    exact = pd.read_csv(tmp_path / "v" / "exact.csv")
    checked = exact["lane_exact"].dropna()
    assert (~checked.astype(bool)).sum() == 2
    summary = json.loads((tmp_path / "v" / "summary.json").read_text())
    assert summary["lane_exact_fraction"] == pytest.approx((len(checked) - 2) / len(checked))


def test_a_folder_without_its_lanes_record_is_compared(saved, tmp_path):
    folder = copy_of(saved, tmp_path)
    (folder / "lanes_model.csv").unlink()
    out = _cli("validate", SPEC, "--kernels", ",".join(KERNELS), "--measured", str(folder), "--out",
               str(tmp_path / "v"))
    assert out.returncode == 0 and out.stderr == ""
    assert json.loads((tmp_path / "v" / "summary.json").read_text())["lane_exact_fraction"] == 1.0


# --- the pipeline as a library, and the validation suite that calls it ---------------------------------
def test_validate_graph_returns_what_it_wrote(saved, tmp_path):
    from gpu_validate.pipeline import validate_graph

    run = validate_graph(sm.load_graph(SPEC), ["ws", "topo", "ws"], None, out=tmp_path / "v", measured_dir=saved,
                         command="by hand")
    assert run.kernels == ("ws", "topo") and run.graph == sm.load_graph(SPEC).name
    assert run.summary == json.loads((tmp_path / "v" / "summary.json").read_text())
    assert run.summary["command"] == "by hand" and run.summary["kernels"] == ["ws", "topo"]
    assert {f"{name}.csv" for name in run.tables} == {p.name for p in (tmp_path / "v").glob("*.csv")}
    with pytest.raises(InputError, match="takes no sources"):
        validate_graph(sm.load_graph(SPEC), ["ws"], 2, out=tmp_path / "w", measured_dir=saved)


def test_the_validation_suite_compares_and_pools_without_a_gpu(saved, tmp_path, capsys):
    import shutil

    from simdreport import validation_suite as vs
    from simdreport.suites import graph_slug

    folder = tmp_path / "suite" / graph_slug(SPEC)
    shutil.copytree(saved, folder)
    summary = vs.compare_all(tmp_path / "suite", [SPEC], "setassoc", quiet=True)
    assert summary["time_mape_per_level"] == pytest.approx(0.2) and summary["graphs"] == [SPEC]
    assert summary["command"].startswith("python -m simdreport.validation_suite measure ")
    graph_summary = json.loads((folder / "summary.json").read_text())
    assert graph_summary["command"] == f"simdmodel validate {SPEC} --measured {folder} --l2 setassoc --out {folder}"
    assert json.loads((tmp_path / "suite" / "summary.json").read_text()) == summary
    assert {"time_errors.csv", "summary.json", "device.json"} <= {p.name for p in (tmp_path / "suite" / "pooled")
                                                                   .iterdir()}
    # --reuse pools the earlier comparison; a graph folder that lost a table is an error, not a gap
    from simdreport.cli import run_command

    (folder / "predicted.csv").unlink()
    code = run_command(vs.compare_all, tmp_path / "suite", [SPEC], "setassoc", True, True)
    err = capsys.readouterr().err
    assert code == 2 and err == f"simdmodel: error: {folder}: missing predicted.csv; compare it again (without --reuse)\n"


def test_the_validation_suite_compares_a_subset_of_kernels_and_records_it(tmp_path):
    from simdreport import validation_suite as vs
    from simdreport.suites import graph_slug

    folder = _write_saved(tmp_path / "suite" / graph_slug(SPEC), ("swc", "scan"))
    summary = vs.compare_all(tmp_path / "suite", [SPEC], "setassoc", quiet=True, kernels=("swc", "scan"))
    assert summary["kernels"] == ["scan", "swc"] and summary["time_mape_per_level"] == pytest.approx(0.2)
    assert "--kernels swc,scan" in summary["compare_command"]
    graph_summary = json.loads((folder / "summary.json").read_text())
    assert graph_summary["command"].startswith(f"simdmodel validate {SPEC} --kernels swc,scan --measured")
    assert graph_summary["lane_exact_fraction"] == 1.0


@pytest.mark.parametrize("kernels, message", [("swc,bogus", "unknown kernel 'bogus'"),
                                              ("swc,swc", "lists a kernel twice"), (",", "names no kernel")])
def test_the_validation_suite_refuses_bad_kernels_in_one_line(tmp_path, kernels, message):
    out = subprocess.run([sys.executable, "-m", "simdreport.validation_suite", "compare", str(tmp_path / "s"),
                          "--kernels", kernels], check=False, capture_output=True, text=True)
    assert out.returncode == 2 and out.stderr.count("\n") == 1 and message in out.stderr


# --- what the summaries say about the run, and the variable-cost columns written ----------------------
def test_the_summary_names_its_time_model_code_and_variable_cost_errors(saved, tmp_path):
    from gpu_validate.pipeline import validate_graph
    from gpu_validate.provenance import code_version
    from opmachine.predict import fixed_ns

    run = validate_graph(sm.load_graph(SPEC), list(KERNELS), None, out=tmp_path / "v", measured_dir=saved,
                         command="by hand")
    summary = run.summary
    assert summary["time_model"] == "critical" and summary["cold_l2_mode"]["time_model"] == "critical"
    assert summary["code_version"] == code_version()  # the working tree's; the output folder is outside it
    assert summary["measure_command"] is None  # the saved folder's device.json predates it
    predicted = pd.read_csv(tmp_path / "v" / "predicted.csv")
    assert set(predicted.loc[predicted["mode"] != "cte", "time_model"]) == {"critical"}
    assert set(predicted.loc[predicted["mode"] == "cte", "time_model"]) == {"cte"}
    assert summary["cte_mode"]["time_model"] == "cte"
    # measured = 1.25 x predicted, constants included: the variable-cost error is by hand per whole BFS
    profile = om.load_profile("h200")
    measured = pd.read_csv(saved / "measured.csv")
    whole = pd.read_csv(tmp_path / "v" / "whole_bfs.csv")
    warm = whole[whole["mode"] == "warm"].set_index(["kernel", "source"])
    for (kernel, source), launches in measured.groupby(["kernel", "source"]):
        # the constants that do not depend on the graph: a compaction's at one vertex
        constants = sum(fixed_ns(profile, phase) for phase in launches["phase"])
        row = warm.loc[(kernel, source)]
        assert row["fixed_ns"] == pytest.approx(constants, rel=1e-12)
        p, m = row["predicted_ns"], row["measured_ns"]
        assert row["error_variable"] == pytest.approx((p - constants) / (m - constants) - 1, rel=1e-9)
        assert row["error_variable"] < row["error"] == pytest.approx(-0.2)  # the constants hid part of the error
    table = pd.read_csv(tmp_path / "v" / "time_errors.csv")
    for column in ("mape_variable", "bfs_time_error_variable", "worst_error_variable", "variable_rounds_excluded"):
        assert column in table.columns
    assert (table["variable_rounds_excluded"] == 0).all()  # 1.25 x (fixed + positive) stays above the constants
    for key in ("time_mape_variable_per_level", "bfs_time_error_variable_median", "variable_rounds_excluded"):
        assert summary[key] is not None and key in summary["per_kernel"]["ws"]
    assert summary["inst_error_abs_max"] is None  # no ncu table


def test_a_measuring_run_records_its_command_for_the_comparison(saved, tmp_path):
    from simdreport import validation_suite as vs
    from simdreport.suites import graph_slug

    folder = copy_of(saved, tmp_path)
    device = json.loads((folder / "device.json").read_text())
    measure = vs.stage_command(["measure", "results dir", "--graphs", graph_slug(SPEC)])
    assert measure == f"python -m simdreport.validation_suite measure 'results dir' --graphs {graph_slug(SPEC)}"
    (folder / "device.json").write_text(json.dumps({**device, "measure_command": measure}))
    suite = tmp_path / "suite"
    (suite / graph_slug(SPEC)).parent.mkdir()
    folder.rename(suite / graph_slug(SPEC))
    summary = vs.compare_all(suite, [SPEC], "setassoc", quiet=True, command="python -m x compare here")
    graph_summary = json.loads((suite / graph_slug(SPEC) / "summary.json").read_text())
    for found in (summary, graph_summary):
        assert found["measure_command"] == measure and found["compare_command"] == "python -m x compare here"
        assert found["code_version"] and found["time_model"] == "critical"
    assert summary["command"].startswith("python -m simdreport.validation_suite measure ")  # kept as it was
    assert "measure_command" not in json.loads((suite / "pooled" / "device.json").read_text())  # per graph
    assert json.loads((suite / graph_slug(SPEC) / "device.json").read_text())["measure_command"] == measure
    pooled = pd.read_csv(suite / "pooled" / "time_errors.csv")
    assert {"mape_variable", "bfs_time_error_variable", "variable_rounds_excluded"} <= set(pooled.columns)
    # called as a library with no command, the comparison records the equivalent command line
    again = vs.compare_all(suite, [SPEC], "setassoc", quiet=True, reuse=True)
    assert again["compare_command"] == (f"python -m simdreport.validation_suite compare {suite} --graphs {graph_slug(SPEC)} "
                                        "--l2 setassoc --reuse")
    two = vs.stage_command(["compare", "d", "--graphs", "a;b"])
    assert two == "python -m simdreport.validation_suite compare d --graphs 'a;b'"


def test_counters_table_carries_the_instruction_counts_ncu_measured(tmp_path):
    from gpu_validate.validate import counters_table
    from opmachine.counters import read_counters

    ncu = pd.DataFrame({"level": [0, 1], "phase": ["expand", "compact"], "ld_inst": [10, 4], "st_inst": [2, 1],
                        "l2_read_sectors": [40, 8], "l2_read_misses": [30, 0], "l2_write_sectors": [8, 4],
                        "dram_read_sectors": [30, 0], "dram_write_sectors": [8, 0],
                        "achieved_occupancy_pct": [50.0, 3.125], "inst_executed": [300.0, 90.0],
                        "shared_ld_inst": [16.0, 0.0], "shared_st_inst": [4.0, 0.0]})
    path = tmp_path / "counters.csv"
    counters_table(ncu).to_csv(path, index=False)
    read = read_counters(path)  # the format opmachine reads
    assert read["inst_executed"].tolist() == [300, 90] and read["shared_ld_inst"].tolist() == [16, 0]
    assert read["jobs_total"].tolist() == [12, 5] and read["l2_hits"].tolist() == [18, 12]
    missing = ncu.assign(shared_st_inst=[4.0, np.nan])  # not measured for every launch: none of the three
    assert not {"inst_executed", "shared_st_inst"} & set(counters_table(missing).columns)
    old = ncu.drop(columns=["inst_executed", "shared_ld_inst", "shared_st_inst"])  # an ncu.csv from before
    counters_table(old).to_csv(path, index=False)
    assert "inst_executed" not in read_counters(path).columns


def test_the_suite_records_its_own_command_line(saved, tmp_path, monkeypatch, capsys):
    import shutil

    from simdreport import validation_suite as vs
    from simdreport.suites import graph_slug

    monkeypatch.setattr(vs, "VALIDATION_SUITE", (SPEC,))
    shutil.copytree(saved, tmp_path / "suite" / graph_slug(SPEC))
    argv = ["compare", str(tmp_path / "suite"), "--graphs", graph_slug(SPEC), "--quiet"]
    assert vs.main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = f"python -m simdreport.validation_suite compare {tmp_path / 'suite'} --graphs {graph_slug(SPEC)} --quiet"
    assert printed["compare_command"] == expected and printed["measure_command"] is None
    assert json.loads((tmp_path / "suite" / "summary.json").read_text())["compare_command"] == expected


def test_a_recompare_refuses_a_file_whose_hash_is_not_the_one_measured(saved, tmp_path):
    from gpu_validate.pipeline import validate_graph
    from simdmodel.identity import file_sha256
    from simdmodel.readers import write_npz

    path = tmp_path / "graph.npz"
    write_npz(sm.load_graph(SPEC), path)
    folder = copy_of(saved, tmp_path)
    device = json.loads((folder / "device.json").read_text())
    (folder / "device.json").write_text(json.dumps({**device, "graph_file": {"file": "graph.npz", "sha256": "0" * 64}}))
    with pytest.raises(InputError, match=f"measured on a file with sha256 {'0' * 64}, not this file"):
        validate_graph(lambda: sm.load_graph(path), ["topo"], out=tmp_path / "v", measured_dir=folder)
    with pytest.raises(InputError, match="not this graph \\(not read from a file\\)"):
        validate_graph(sm.load_graph(SPEC), ["topo"], out=tmp_path / "v", measured_dir=folder)
    assert not (tmp_path / "v").exists()
    (folder / "device.json").write_text(json.dumps({**device, "graph_file": {"sha256": file_sha256(path)}}))
    run = validate_graph(lambda: sm.load_graph(path), ["topo"], out=tmp_path / "v", measured_dir=folder)
    assert run.summary["launches"] > 0 and (tmp_path / "v" / "predicted.csv").is_file()
