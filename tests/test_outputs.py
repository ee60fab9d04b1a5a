"""What a command writes and how it stops: outputs that never replace a device, FIFO or symlink,
the format its suffix names, a target checked before any work, errors that name the user's path,
a memory guard on declared sizes, Ctrl-C as one line and exit 130, and the small edges
(`--version`, negative counts, junk archives, options that do not apply)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdmodel as sm
from simdmodel import resources
from simdreport.cli import main, run_command
from simdreport.measured import display_folder

SMALL = "rmat:scale=8,ef=8,seed=3"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_a_fifo_is_refused_and_never_replaced(tmp_path, capsys):
    fifo = tmp_path / "lanes.csv"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "analyze", SMALL, "--out", str(fifo))
    assert code == 2 and out == "" and err.count("\n") == 1 and f"{fifo}: not a regular file" in err
    assert fifo.is_fifo() and sorted(p.name for p in tmp_path.iterdir()) == ["lanes.csv"]


def test_a_symlink_is_written_through_and_kept(tmp_path, capsys):
    real, link = tmp_path / "real.csv", tmp_path / "link.csv"
    real.write_text("old\n")
    link.symlink_to(real)
    assert run(capsys, "analyze", SMALL, "--out", str(link), "--quiet")[0] == 0
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert pd.read_csv(real)["mapping"].tolist()[-1] == "swc"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "real.csv"]


def test_an_unwritable_target_is_refused_before_any_work(monkeypatch, capsys):
    import simdmodel.load

    def no_work(*args, **kwargs):
        raise AssertionError("the graph was loaded before --out was checked")

    monkeypatch.setattr(simdmodel.load, "load_graph", no_work)
    target = "/proc/simdmodel-lanes.csv"  # /proc takes no new files, even for root
    for command in (["analyze"], ["opm", "--kernel", "ws"], ["recommend"]):
        code, _, err = run(capsys, *command, SMALL, "--out", target)
        assert code == 2 and err.startswith(f"simdmodel: error: {target}: cannot write in /proc") and ".part" not in err


def test_a_failed_write_names_the_users_path_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    def full(self, *args, **kwargs):
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", full)
    target = tmp_path / "lanes.csv"
    code, _, err = run(capsys, "analyze", SMALL, "--out", str(target))
    assert code == 2 and err == f"simdmodel: error: {target}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name, fmt, check", [
    ("lanes.json", None, lambda text: json.loads(text)["rows"]),
    ("lanes.CSV", None, lambda text: text.startswith("strategy,group_size")),
    ("lanes.txt", None, lambda text: "ME%" in text),
    ("lanes.txt", "json", lambda text: json.loads(text)["rows"]),
])
def test_the_suffix_picks_the_format_unless_format_says(tmp_path, capsys, name, fmt, check):
    target = tmp_path / name
    argv = ["analyze", SMALL, "--out", str(target), "--quiet"] + (["--format", fmt] if fmt else [])
    assert run(capsys, *argv)[0] == 0 and check(target.read_text())


@pytest.mark.parametrize("command", [["analyze"], ["opm"], ["recommend"]])
def test_a_format_that_contradicts_the_suffix_is_an_error(tmp_path, capsys, command):
    code, _, err = run(capsys, *command, SMALL, "--format", "csv", "--out", str(tmp_path / "x.json"))
    target = tmp_path / "x.json"
    assert code == 2 and err == f"simdmodel: error: --format csv contradicts --out {target} (a .json file)\n"
    assert list(tmp_path.iterdir()) == []


def test_declared_sizes_beyond_memory_are_refused_with_the_bytes_needed(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(resources, "available_bytes", lambda: 4 * 10**9)
    big = tmp_path / "big.mtx"
    big.write_text("%%MatrixMarket matrix coordinate pattern general\n2000000000 2000000000 1\n1 2\n")
    code, _, err = run(capsys, "graph", "info", str(big))
    assert code == 2 and err == (f"simdmodel: error: {big}: 2,000,000,000 vertices and 1 edge entries need about "
                                 "96.0 GB of memory, but 4.0 GB is available\n")
    code, _, err = run(capsys, "analyze", "rmat:scale=30")
    assert code == 2 and "1,073,741,824 vertices" in err and "need about" in err and err.count("\n") == 1
    assert run(capsys, "graph", "info", "rmat:scale=10")[0] == 0  # 1,024 vertices fit


@pytest.mark.parametrize("kernel", ["topo", "sm-32"])
def test_a_simulation_beyond_memory_is_refused_before_it_starts(tmp_path, monkeypatch, capsys, kernel):
    monkeypatch.setattr(resources, "available_bytes", lambda: 900_000)  # the graph fits, its simulation not
    target = tmp_path / "opm.csv"
    code, _, err = run(capsys, "opm", "rmat:scale=10", "--kernel", kernel, "--out", str(target))
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"simdmodel: error: opm {kernel} on rmat:scale=10")
    assert "simulating this BFS needs about" in err and err.endswith("more memory (its largest launch expands level "
                                                                     f"{err.split('level ')[1].split(')')[0]}), "
                                                                     "but 900.0 KB is available\n")
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31), st.integers(0, 2**40))
def test_graph_bytes_grow_with_vertices_and_entries(vertices, entries):
    needed = resources.graph_bytes(vertices, entries)
    assert needed == resources.BYTES_PER_VERTEX * (vertices + 1) + resources.BYTES_PER_ENTRY * entries
    assert resources.graph_bytes(vertices + 1, entries) > needed < resources.graph_bytes(vertices, entries + 1)


def test_ctrl_c_inside_numba_code_is_one_line_and_exit_130(capsys):
    def interrupted_in_numba():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:  # what a numba dispatcher raises when Ctrl-C lands in its code
            raise SystemError("CPUDispatcher(<function bfs_queue>) returned a result with an exception set") \
                from interrupt

    assert run_command(interrupted_in_numba) == 130
    assert capsys.readouterr().err == "simdmodel: interrupted\n"
    with pytest.raises(SystemError):  # a SystemError of another cause is no interrupt
        run_command(lambda: (_ for _ in ()).throw(SystemError("other")))


def test_ctrl_c_in_a_real_run_is_one_line_and_exit_130(tmp_path):
    target = tmp_path / "lanes.csv"  # scale 23: tens of seconds of work, so the Ctrl-C lands mid-run on a fast machine
    process = subprocess.Popen([sys.executable, "-m", "simdreport", "analyze", "kron:scale=23", "--out", str(target)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130 and err == "simdmodel: interrupted\n"
    assert list(tmp_path.iterdir()) == []


def test_the_program_answers_ctrl_c_before_its_heavy_imports():
    loaded = subprocess.run([sys.executable, "-c", "import sys, simdreport.cli, simdreport.interrupt; "
                             "print(sorted({'numba', 'pandas', 'simdmodel'} & set(sys.modules)))"],
                            capture_output=True, text=True, check=True).stdout
    assert loaded == "[]\n"


def test_ctrl_c_after_the_command_is_done_keeps_its_exit_status():
    script = ("import os, signal, sys\n"
              "from simdreport.cli import main\n"
              f"sys.argv = ['simdmodel', 'graph', 'info', {SMALL!r}]\n"
              "status = main()\n"
              "os.kill(os.getpid(), signal.SIGINT)\n"
              "sys.exit(status)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == ""


def test_version(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"simdmodel {sm.__version__}\n"


@pytest.mark.parametrize("argv, message", [
    (["graph", "info", SMALL, "--sources", "-3"], "--sources: must be 0 or more, got -3"),
    (["opm", SMALL, "--cpu", "westmere", "--gpu", "h200"], "--gpu applies to GPU kernels only"),
    (["opm", SMALL, "--cpu", "westmere", "--time-model", "eq4"], "--time-model applies to GPU kernels only"),
    (["opm", SMALL, "--cpu-threads", "2"], "--cpu-threads needs --cpu PROFILE"),
    (["opm", SMALL, "--cpu", "epyc-kvm", "--cpu-threads", "0"], "--cpu-threads: must be 1 or more, got 0"),
    (["opm", SMALL, "--cpu", "westmere", "--cpu-threads", "2"], "has no measured costs of the multi-threaded loop"),
    (["opm", SMALL, "--l2", "lru", "--warm-l2"], "a warm L2 needs the set-associative L2 model"),
])
def test_options_that_cannot_apply_are_refused(capsys, argv, message):
    try:
        code = main(argv)
    except SystemExit as done:  # argparse's own checks exit from the parser
        code = done.code
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("content", [b"junk bytes", b"\x93NUMPY\x01\x00v\x00{'descr': '<i8'}", b"PK\x03\x04 torn"])
def test_a_junk_npz_is_one_plain_line(tmp_path, capsys, content):
    path = tmp_path / "g.npz"
    path.write_bytes(content)
    code, _, err = run(capsys, "graph", "info", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"simdmodel: error: {path}") and "pickle" not in err


def test_sources_are_nested_prefixes_of_one_seeded_sequence():
    graph = sm.load_graph(SMALL)
    ten = sm.pick_sources(graph, 10, 1).tolist()
    assert all(sm.pick_sources(graph, k, 1).tolist() == ten[:k] for k in range(1, 10))
    assert len(set(ten)) == 10 and (graph.degrees()[ten] > 0).all()


def test_measurement_folders_are_shown_without_a_local_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "runs" / "kron"
    assert display_folder(inside) == "runs/kron"
    committed = Path("/somewhere/site-packages/gpu_validate/results/nvidia-h200/kron_scale20_ef16")
    assert display_folder(committed) == "gpu_validate/results/nvidia-h200/kron_scale20_ef16"
    assert display_folder(Path("/elsewhere/private/run7")) == "run7"


def test_remove_temporaries_takes_away_what_an_unfinished_write_left(tmp_path):
    from simdmodel.atomic import atomic_path, remove_temporaries, temporary

    target = tmp_path / "out.csv"
    folder = tmp_path / ".staging"
    folder.mkdir()
    (folder / "a.png").write_bytes(b"x")
    with atomic_path(target) as temp, temporary(folder):
        temp.write_text("half")
        remove_temporaries()  # what the command line's Ctrl-C does before it exits
        assert not temp.exists() and not folder.exists()
        temp.write_text("whole")  # the block goes on here only because this test does
    assert target.read_text() == "whole" and sorted(p.name for p in tmp_path.iterdir()) == ["out.csv"]


def test_ctrl_c_during_a_report_leaves_neither_staging_folder_nor_worker(tmp_path):
    target = tmp_path / "report"
    process = subprocess.Popen([sys.executable, "-m", "simdreport", "report", "kron:scale=20", "rmat:scale=19",
                                "--jobs", "2", "--out", str(target)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".report.*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.glob(".report.*")), "no staging folder appeared"
    time.sleep(3)  # the workers are gathering
    process.send_signal(signal.SIGINT)  # the command only, not its process group
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and err.splitlines()[-1] == "simdmodel: interrupted"
    assert "Traceback" not in err and list(tmp_path.iterdir()) == []
    time.sleep(1)
    workers = subprocess.run(["pgrep", "-f", "simdreport.workers"], capture_output=True, text=True).stdout.split()
    assert workers == []


def test_a_gzipped_table_is_the_same_bytes_each_time_and_nothing_else_is_left(tmp_path):
    import gzip

    from simdmodel.atomic import write_csv_gz

    table = pd.DataFrame({"level": [0, 1, 2], "kernel": ["hybrid"] * 3})
    write_csv_gz(tmp_path / "a.csv.gz", table)
    first = (tmp_path / "a.csv.gz").read_bytes()
    write_csv_gz(tmp_path / "a.csv.gz", table)
    assert (tmp_path / "a.csv.gz").read_bytes() == first and [p.name for p in tmp_path.iterdir()] == ["a.csv.gz"]
    assert first[3] == 0 and first[4:8] == b"\0\0\0\0"  # no file name, no time stamp in the header
    assert gzip.decompress(first).decode() == table.to_csv(index=False)
