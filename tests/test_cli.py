"""The `simdmodel` command line: output contracts, and bad input -> one line, exit 2, no file."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from simdreport.cli import main

CSV_COLUMNS = ["strategy", "group_size", "warp_iterations", "total_lanes", "useful_lanes", "ua_lanes",
               "ur_lanes", "idle_lanes", "ua", "ur", "idle", "me", "mapping"]
SMALL = "rmat:scale=8,ef=8,seed=3"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_analyze_csv_columns_and_rows(tmp_path, capsys):
    out_file = tmp_path / "lanes.csv"
    assert run(capsys, "analyze", SMALL, "--format", "csv", "--out", str(out_file))[0] == 0
    table = pd.read_csv(out_file, keep_default_na=True)
    assert list(table.columns) == CSV_COLUMNS
    assert table["strategy"].tolist() == ["group"] * 6 + ["ws", "scan", "swc"]
    assert table["group_size"].tolist()[:6] == [1, 2, 4, 8, 16, 32]
    assert table["group_size"][6:].isna().all()
    lanes = table["useful_lanes"] + table["ua_lanes"] + table["ur_lanes"] + table["idle_lanes"]
    assert (lanes == table["total_lanes"]).all()
    assert ((table["me"] >= 0) & (table["me"] <= 1)).all()
    assert not list(tmp_path.glob(".*part"))


def test_analyze_per_level_with_several_sources_adds_source_and_level(capsys):
    code, out, _ = run(capsys, "analyze", SMALL, "--per-level", "--sources", "3", "--format", "csv",
                       "--strategies", "ws,group", "--group-sizes", "4,32")
    assert code == 0
    table = pd.read_csv(__import__("io").StringIO(out))
    assert list(table.columns) == ["source", "level"] + CSV_COLUMNS
    assert table["source"].nunique() == 3
    assert set(table["strategy"]) == {"ws", "group"}


def test_analyze_single_source_json_and_table(capsys):
    code, out, _ = run(capsys, "analyze", "grid2d:side=20", "--source", "0", "--format", "json", "--per-level")
    document = json.loads(out)
    assert code == 0 and document["sources"] == [0] and document["n"] == 400
    assert "source" not in document["rows"][0] and document["rows"][0]["level"] == 0
    # Level k of a grid BFS from a corner holds the k+1 vertices of one anti-diagonal.
    assert [row["vertices"] for row in document["frontier_sizes"][:4]] == [1, 2, 3, 4]
    assert document["best"]["me"] == max(r["me"] for r in json.loads(
        run(capsys, "analyze", "grid2d:side=20", "--source", "0", "--format", "json")[1])["rows"])
    code, out, _ = run(capsys, "analyze", "grid2d:side=20", "--source", "0")
    assert code == 0 and "best mapping:" in out and "sm-8" in out


@pytest.mark.parametrize("argv, message", [
    (["analyze", SMALL, "--group-sizes", "0,4"], "group size 0 outside 1..32"),
    (["analyze", SMALL, "--group-sizes", "33"], "group size 33 outside 1..32"),
    (["analyze", SMALL, "--source", "999999"], "source 999999 outside"),
    (["analyze", "rmat:scale=8,edgefactor=3"], "unknown key 'edgefactor'"),
    (["analyze", "nosuchgen:n=3"], "no such file"),
    (["analyze", SMALL, "--strategies", "group,foo"], "unknown strategy 'foo'"),
    (["analyze", SMALL, "--cta-size", "100"], "CTA size 100"),
    (["analyze", SMALL, "--sources", "0"], "at least 1"),
])
def test_bad_options_give_one_line_and_exit_2(tmp_path, capsys, argv, message):
    out_file = tmp_path / "out.csv"
    code, out, err = run(capsys, *argv, "--out", str(out_file))
    assert code == 2
    assert err.count("\n") == 1 and message in err and err.startswith("simdmodel: error:")
    assert not out_file.exists() and list(tmp_path.iterdir()) == []


def test_isolated_source_is_rejected(tmp_path, capsys):
    edges = tmp_path / "g.el"
    edges.write_text("0 1\n1 0\n3 0\n")
    code, _, err = run(capsys, "analyze", str(edges), "--source", "2")
    assert code == 2 and "isolated" in err


@pytest.mark.parametrize("content, message", [
    ("0 1\n1 x\n", "g.el:2"),
    ("# only a comment\n", "g.el"),
])
def test_malformed_files_name_file_and_line(tmp_path, capsys, content, message):
    path = tmp_path / "g.el"
    path.write_text(content)
    code, _, err = run(capsys, "analyze", str(path), "--out", str(tmp_path / "o.csv"))
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (tmp_path / "o.csv").exists()


def test_real_process_exit_code_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.gr"
    bad.write_text("p sp 3 2\na 1 2 1\na 1 9 1\n")
    done = subprocess.run([sys.executable, "-m", "simdreport.cli", "analyze", str(bad)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert "bad.gr:3" in done.stderr
    done = subprocess.run([sys.executable, "-m", "simdreport.cli", "analyze", "--group-sizes", "x"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_graph_info_json_keys_and_values(capsys):
    code, out, _ = run(capsys, "graph", "info", "grid2d:side=10", "--sources", "4", "--format", "json")
    info = json.loads(out)
    assert code == 0
    for key in ["n", "m", "degree_min", "degree_q1", "degree_median", "degree_q3", "degree_max",
                "degree_mean", "self_loops", "duplicates", "avg_depth"]:
        assert key in info
    # 10x10 grid: 4 corners of degree 2, 32 border vertices of degree 3, 64 interior of degree 4.
    assert (info["n"], info["m"], info["degree_min"], info["degree_max"]) == (100, 360, 2, 4)
    assert info["degree_mean"] == pytest.approx(3.6) and info["degree_median"] == 4.0
    assert 10 <= info["avg_depth"] <= 19  # levels from any source lie between 10 and 19
    code, out, _ = run(capsys, "graph", "info", "grid2d:side=10")
    assert code == 0 and "avg_depth" in out and "degree_mean" in out


def test_graph_convert_round_trip(tmp_path, capsys):
    out_file = tmp_path / "g.npz"
    assert run(capsys, "graph", "convert", SMALL, str(out_file), "--quiet")[0] == 0
    code_a, a, _ = run(capsys, "analyze", SMALL, "--format", "csv", "--sources", "2")
    code_b, b, _ = run(capsys, "analyze", str(out_file), "--format", "csv", "--sources", "2")
    assert code_a == code_b == 0 and a == b
    code, _, err = run(capsys, "graph", "convert", SMALL, str(tmp_path / "g.txt"))
    assert code == 2 and "must end in .npz" in err


def test_output_files_get_the_usual_mode_not_the_temporary_files_0600(tmp_path, capsys):
    import os

    mask = os.umask(0)
    os.umask(mask)
    out_file = tmp_path / "lanes.csv"
    assert run(capsys, "analyze", SMALL, "--quiet", "--out", str(out_file))[0] == 0
    assert out_file.stat().st_mode & 0o777 == 0o666 & ~mask


def test_data_warnings_are_one_line_each_and_others_are_left_alone(capsys):
    import warnings

    from simdmodel.errors import DataWarning
    from simdreport.cli import run_command

    def command():
        warnings.warn("a counter is missing", DataWarning)
        warnings.warn("something else", UserWarning)
        return 0

    with pytest.warns(UserWarning, match="something else"):
        assert run_command(command) == 0
    assert capsys.readouterr().err == "simdmodel: warning: a counter is missing\n"


def test_python_dash_m_simdreport_runs_the_command_line():
    done = subprocess.run([sys.executable, "-m", "simdreport", "analyze", SMALL, "--format", "csv"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == ",".join(CSV_COLUMNS)
