"""Nsight Compute runner and parser: recorded real logs, hand-written logs, fuzzed logs, errors."""
from __future__ import annotations

import math
import stat
import sys
import textwrap
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_validate import ncu
from gpu_validate.ncu import (
    COUNT_COLUMNS,
    METRICS,
    NcuUnavailable,
    find_ncu,
    kernel_base_name,
    metrics_for,
    ncu_command,
    parse_ncu_csv,
    parse_source_page,
    run_ncu,
    source_counters_commands,
)
from simdmodel.errors import DataWarning, InputError

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
QUIET = pytest.mark.filterwarnings("ignore::simdmodel.errors.DataWarning")  # for logs that lack metrics
SHORT = list(metrics_for())

# The probe's counts by hand (gpu_validate/ncu_probe.py): 32768 threads = 1024 full warps.
# bfs_probe: 4 ld.global.cg + 1 store per thread -> 4096 warp loads, 1024 warp stores; each warp
# access covers 32 x 4 B = 128 contiguous bytes = 4 sectors -> 16384 sectors read through L1 and
# L2 (all L2 misses: ncu flushes L2 first), 4096 sectors written to L2.
# bfs_probe_half: lanes 0..15 load twice -> 2048 loads of 64 B = 2 sectors each -> 4096 sectors.
# bfs_probe_t<S>: S x 1024 loads, 4 sectors each.
# No warp has all its lanes predicated off, so ld_inst = ld_issued and st_inst = st_issued.
PROBE = {"ld_issued": 4096, "st_issued": 1024, "l1_requests": 4096, "l1_sectors": 16384,
         "l2_read_sectors": 16384, "l2_read_hits": 0, "l2_read_misses": 16384,
         "l2_write_sectors": 4096}
MULTI = [  # (kernel_name, signature as ncu printed it, block, grid, warp loads, sectors per load)
    ("bfs_probe", "bfs_probe", 256, 128, 4096, 4),
    ("bfs_probe_half", "bfs_probe_half", 128, 256, 2048, 2),
    ("bfs_probe", "bfs_probe", 256, 128, 4096, 4),
    ("bfs_probe_half", "bfs_probe_half", 128, 256, 2048, 2),
    ("bfs_probe_t", "void bfs_probe_t<4>(const int *, int *, int)", 64, 512, 4096, 4),
    ("bfs_probe_t", "void bfs_probe_t<8>(const int *, int *, int)", 64, 512, 8192, 4),
]


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def header_line(names: list[str]) -> str:
    cols = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
            "Block Size", "Grid Size", "Device", "CC", *names]
    return ",".join(f'"{c}"' for c in cols)


def row_line(id_, kernel, block, grid, values) -> str:
    cells = [str(id_), "77", "python3", "127.0.0.1", kernel, "1", "7", f"({block}, 1, 1)",
             f"({grid}, 1, 1)", "0", "9.0", *values]
    return ",".join(f'"{c}"' for c in cells)


# A log written by hand in ncu's raw CSV layout, with the quirks the parser must survive:
# ncu's own "==" lines, a units row, thousands separators, "n/a", empty cells, IDs out of order.
NAMES = list(metrics_for().values())
HAND_UNITS = {"ld_inst": "inst", "st_inst": "inst", "ld_issued": "inst", "st_issued": "inst",
              "l1_sectors": "sector", "l2_read_sectors": "sector", "l2_read_hits": "sector",
              "l2_read_misses": "sector", "l2_write_sectors": "sector",
              "dram_read_sectors": "sector", "dram_write_sectors": "sector",
              "achieved_occupancy_pct": "%", "duration_ns": "usecond", "inst_executed": "inst",
              "shared_ld_inst": "inst", "shared_st_inst": "inst", "alu_pipe_inst": "inst"}
HAND_ROW1 = {"ld_inst": "1,024", "st_inst": "32", "ld_issued": "1,030", "st_issued": "32",
             "thread_inst_per_inst": "31.5", "l1_requests": "1,024", "l1_sectors": "4,096",
             "l2_read_sectors": "5,000", "l2_read_hits": "1,000", "l2_read_misses": "4,000",
             "l2_write_sectors": "128", "dram_read_sectors": "4,000", "dram_write_sectors": "128",
             "achieved_occupancy_pct": "61.25", "duration_ns": "12.5", "inst_executed": "20,480",
             "shared_ld_inst": "1,024", "shared_st_inst": "256", "alu_pipe_inst": "9,216"}
HAND_ROW0 = {"ld_inst": "10", "st_inst": "2", "ld_issued": "12", "st_issued": "2",
             "thread_inst_per_inst": "32", "l1_requests": "10", "l1_sectors": "40",
             "l2_read_sectors": "40", "l2_read_hits": "n/a", "l2_read_misses": "",
             "l2_write_sectors": "8", "dram_read_sectors": "40", "dram_write_sectors": "8",
             "achieved_occupancy_pct": "50", "duration_ns": "3", "inst_executed": "300",
             "shared_ld_inst": "0", "shared_st_inst": "0", "alu_pipe_inst": "120"}


def cells(row: dict) -> list[str]:
    return [row.get(short, "") for short in SHORT]


HAND = "\n".join([
    "==PROF== Connected to process 77 (/usr/bin/python3.12)",
    '==PROF== Profiling "bfs_expand_group" - 0: 0%....50%....100% - 9 passes',
    "==WARNING== something harmless",
    header_line(NAMES),
    row_line("", "", "", "", cells(HAND_UNITS)).replace('"(, 1, 1)"', '""'),
    row_line(1, "void bfs_expand_group<4>(const int *, int *, int)", 128, 40, cells(HAND_ROW1)),
    row_line(0, "bfs_topo", 256, 8, cells(HAND_ROW0)),
    "==PROF== Disconnected from process 77",
]) + "\n"


# --- metric map and command -----------------------------------------------------------------------
@QUIET  # the input lacks metrics on purpose (or predates them)
def test_metric_map_has_the_contract_columns():
    assert SHORT == ["ld_inst", "st_inst", "ld_issued", "st_issued", "thread_inst_per_inst",
                     "l1_requests", "l1_sectors", "l2_read_sectors", "l2_read_hits",
                     "l2_read_misses", "l2_write_sectors", "dram_read_sectors",
                     "dram_write_sectors", "achieved_occupancy_pct", "duration_ns", "inst_executed",
                     "shared_ld_inst", "shared_st_inst", "alu_pipe_inst"]
    assert METRICS["sm_90"]["alu_pipe_inst"] == "sm__inst_executed_pipe_alu.sum"
    assert METRICS["sm_90"]["ld_inst"] == "smsp__sass_inst_executed_op_global_ld.sum"
    assert METRICS["sm_90"]["inst_executed"] == "smsp__inst_executed.sum"
    assert METRICS["sm_90"]["shared_ld_inst"] == "smsp__inst_executed_op_shared_ld.sum"
    assert METRICS["sm_90"]["shared_st_inst"] == "smsp__inst_executed_op_shared_st.sum"
    assert METRICS["sm_90"]["ld_issued"] == "smsp__inst_executed_op_global_ld.sum"
    assert metrics_for("sm_80") == metrics_for("sm_90") == metrics_for(None)
    assert COUNT_COLUMNS <= set(SHORT)


def test_ncu_command_contents():
    argv = ncu_command(["python3", "-m", "x"], "/tmp/log.csv", "^bfs_expand", extra=("--nvtx",))
    assert argv[0] == "ncu" and argv[-4:] == ["--nvtx", "python3", "-m", "x"]
    pairs = {argv[i]: argv[i + 1] for i in range(1, len(argv) - 5) if argv[i].startswith("--")}
    assert pairs["--page"] == "raw" and pairs["--print-units"] == "base"
    assert pairs["--clock-control"] == "none" and pairs["--cache-control"] == "all"
    assert pairs["--kernel-name-base"] == "function"
    assert pairs["--kernel-name"] == "regex:^bfs_expand"
    assert pairs["--log-file"] == "/tmp/log.csv"
    assert pairs["--metrics"].split(",") == NAMES
    assert "--csv" in argv
    one = ncu_command(["t"], "l", metrics={"ld_inst": "a.sum"}, ncu="/opt/ncu")
    assert one[0] == "/opt/ncu" and one[one.index("--metrics") + 1] == "a.sum"


def test_find_ncu_absent(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(ncu, "_FALLBACKS", [str(tmp_path / "nowhere" / "*" / "ncu")])
    with pytest.raises(NcuUnavailable, match=r"Nsight Compute \(ncu\) not found.*without --counters"):
        find_ncu()
    assert issubclass(NcuUnavailable, InputError)


def test_find_ncu_on_path_and_fallback(monkeypatch, tmp_path):
    tool = make_executable(tmp_path / "bin" / "ncu", "#!/bin/sh\n")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert find_ncu() == str(tool)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    old = make_executable(tmp_path / "nc" / "2024.1" / "ncu", "#!/bin/sh\n")
    new = make_executable(tmp_path / "nc" / "2025.3.1" / "ncu", "#!/bin/sh\n")
    monkeypatch.setattr(ncu, "_FALLBACKS", [str(tmp_path / "nc" / "*" / "ncu")])
    assert find_ncu() == str(new) != str(old)


def make_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# --- parser on hand-written text ------------------------------------------------------------------
@QUIET  # the input lacks metrics on purpose (or predates them)
def test_parse_hand_written_log():
    df = parse_ncu_csv(HAND)
    assert list(df.columns) == ["launch", "kernel_name", "kernel_signature", "block", "grid", *SHORT]
    assert df["launch"].tolist() == [0, 1]
    assert df["kernel_name"].tolist() == ["bfs_topo", "bfs_expand_group"]  # ncu ID order
    assert df["kernel_signature"][1] == "void bfs_expand_group<4>(const int *, int *, int)"
    assert df["block"].tolist() == [256, 128] and df["grid"].tolist() == [8, 40]
    assert df["ld_inst"].tolist() == [10, 1024] and df["ld_inst"].dtype == "int64"  # "1,024"
    assert df["ld_issued"].tolist() == [12, 1030]
    assert df["l1_sectors"].tolist() == [40, 4096]
    assert df["thread_inst_per_inst"].tolist() == [32.0, 31.5]
    assert math.isnan(df["l2_read_hits"][0]) and math.isnan(df["l2_read_misses"][0])  # n/a, empty
    assert df["l2_read_hits"].dtype == "float64" and df["l2_read_hits"][1] == 1000
    assert df["achieved_occupancy_pct"].tolist() == [50.0, 61.25]
    assert df["duration_ns"].tolist() == [3000.0, 12500.0]  # units row says usecond
    assert df["inst_executed"].tolist() == [300, 20480] and df["inst_executed"].dtype == "int64"
    assert df["shared_ld_inst"].tolist() == [0, 1024] and df["shared_st_inst"].tolist() == [0, 256]


def test_a_log_from_before_the_instruction_counts_parses_with_one_warning_each():
    old = [n for n in NAMES if n not in (METRICS["sm_90"][k] for k in ("inst_executed", "shared_ld_inst",
                                                                        "shared_st_inst"))]
    text = header_line(old) + "\n" + row_line(0, "bfs_topo", 256, 8, ["7"] * len(old)) + "\n"
    with pytest.warns(DataWarning) as caught:
        df = parse_ncu_csv(text, source="old.log")
    assert sorted(str(w.message) for w in caught) == sorted(
        f"old.log: ncu reported no {METRICS['sm_90'][k]} ({k}): that counter is missing for every launch"
        for k in ("inst_executed", "shared_ld_inst", "shared_st_inst"))
    assert df[["inst_executed", "shared_ld_inst", "shared_st_inst"]].isna().all().all()
    assert df["ld_inst"].tolist() == [7]


@QUIET  # the input lacks metrics on purpose (or predates them)
def test_parse_without_units_row_and_missing_metric_column():
    names = [n for n in NAMES if n != "dram__sectors_write.sum"]
    text = header_line(names) + "\n" + row_line(3, "bfs_compact", 512, 2, ["7"] * len(names)) + "\n"
    df = parse_ncu_csv(text)
    assert df["launch"].tolist() == [0] and df["duration_ns"][0] == 7.0
    assert df["ld_inst"].dtype == "int64"
    assert math.isnan(df["dram_write_sectors"][0])


def test_parse_header_only_gives_empty_table():
    df = parse_ncu_csv("==PROF== x\n" + header_line(NAMES) + "\n")
    assert df.empty and list(df.columns)[:5] == ["launch", "kernel_name", "kernel_signature",
                                                  "block", "grid"]


@pytest.mark.parametrize("signature, name", [
    ("bfs_probe", "bfs_probe"),
    ("void bfs_expand_group<16>(const int *, int *, int)", "bfs_expand_group"),
    ("bfs_probe_t", "bfs_probe_t"),
    ("void ns::bfs_ws<(int)32>(int)", "bfs_ws"),
    ("void (anonymous namespace)::bfs_scan<256>(int *)", "bfs_scan"),
    ("bfs_compact(const unsigned int *, int)", "bfs_compact"),
])
def test_kernel_base_name(signature, name):
    assert kernel_base_name(signature) == name


def expect_error(text, line, *fragments):
    with pytest.raises(InputError) as info:
        parse_ncu_csv(text, source="run.log")
    msg = str(info.value)
    assert msg.startswith(f"run.log:{line}: "), msg
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment in msg, msg


def test_parse_errors_name_source_and_line():
    expect_error("", 1, "no ncu CSV header")
    expect_error("==PROF== nothing profiled\nhello\n", 1, "no ncu CSV header")
    lines = HAND.splitlines()
    expect_error("\n".join(lines[:6] + [lines[6][:-10]]), 7, "fields where the header (line 4)")
    bad = lines[6].replace('"10"', '"ten"')
    expect_error("\n".join(lines[:6] + [bad]), 7, metrics_for()["ld_inst"], "'ten'")
    expect_error("\n".join(lines[:5] + [lines[5].replace('"1"', '"x"', 1)]), 6, "ID")
    expect_error('"ID","Kernel Name"\n', 1, "lacks column 'Block Size'")
    expect_error("\n".join(lines[:6] + [lines[6].replace("(256, 1, 1)", "(big, 1, 1)")]), 7,
                 "Block Size")


def test_bad_numbers_are_input_errors():
    lines = HAND.splitlines()
    for bad in ("E604", "1,02", "12,3456", ".", "1..2"):
        expect_error("\n".join(lines[:6] + [lines[6].replace('"40"', f'"{bad}"', 1)]), 7, repr(bad))


# --- fuzzing: parse or InputError, nothing else ---------------------------------------------------
def base_texts():
    texts = [HAND]
    texts += [fixture(p.name) for p in sorted(FIXTURES.glob("*.csv"))]
    return texts


JUNK = st.text(alphabet=st.sampled_from(list('",\n =0123456789.-+eE()naID/<>x\r\t%') + ["\x00"]),
               max_size=12)


@QUIET
@FUZZ
@given(st.data())
def test_fuzzed_logs_parse_or_raise_input_error(data):
    text = data.draw(st.sampled_from(base_texts()))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 12))
        text = text[:at] + data.draw(JUNK) + text[at + cut:]
    check_parse_or_input_error(text)


@QUIET
@FUZZ
@given(st.lists(st.sampled_from(HAND.splitlines()), max_size=10))
def test_shuffled_lines_parse_or_raise_input_error(lines):
    check_parse_or_input_error("\n".join(lines))


@QUIET
@FUZZ
@given(st.text(max_size=300))
def test_garbage_parses_or_raises_input_error(text):
    check_parse_or_input_error(text)
    check_parse_or_input_error(header_line(NAMES) + "\n" + text)


def check_parse_or_input_error(text):
    try:
        df = parse_ncu_csv(text)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(df, pd.DataFrame)
    assert df["launch"].tolist() == list(range(len(df)))


# --- run_ncu against a stand-in ncu (no GPU, no Nsight Compute needed) ----------------------------
FAKE = textwrap.dedent("""\
    #!{python}
    import os, sys
    log = sys.argv[sys.argv.index("--log-file") + 1]
    open(log, "w").write(open(os.environ["FAKE_LOG"]).read())
    sys.stdout.write(os.environ.get("FAKE_STDOUT", ""))
    sys.stderr.write(os.environ.get("FAKE_STDERR", ""))
    sys.exit(int(os.environ.get("FAKE_RC", "0")))
    """)


@pytest.fixture
def fake_ncu(monkeypatch, tmp_path):
    tool = make_executable(tmp_path / "ncu", FAKE.format(python=sys.executable))
    monkeypatch.setattr(ncu, "find_ncu", lambda: str(tool))

    def run(log_text, rc=0, stderr="", stdout="", **kw):
        (tmp_path / "fake.log").write_text(log_text)
        env = {"FAKE_LOG": str(tmp_path / "fake.log"), "FAKE_RC": str(rc), "FAKE_STDERR": stderr,
               "FAKE_STDOUT": stdout}
        return run_ncu(["target"], "^bfs_", env=env, **kw)
    return run


@QUIET  # the input lacks metrics on purpose (or predates them)
def test_run_ncu_success(fake_ncu, tmp_path):
    df = fake_ncu(HAND, stdout="target says hi\n", log_path=tmp_path / "kept.csv")
    assert df["kernel_name"].tolist() == ["bfs_topo", "bfs_expand_group"]
    assert df.attrs["stdout"] == "target says hi\n"
    assert (tmp_path / "kept.csv").read_text() == HAND


def test_run_ncu_no_permission(fake_ncu):
    log = "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access counters.\n"
    with pytest.raises(InputError, match="ERR_NVGPUCTRPERM.*NVreg_RestrictProfilingToAdminUsers"):
        fake_ncu(log, rc=1)


def test_run_ncu_target_fails(fake_ncu):
    log = "==PROF== Connected\n==ERROR== The application returned an error code (1).\n"
    with pytest.raises(InputError, match=r"program failed under ncu: ValueError: bad graph$"):
        fake_ncu(log, rc=1, stderr="Traceback (most recent call last):\nValueError: bad graph\n")


def test_run_ncu_own_error(fake_ncu):
    with pytest.raises(InputError, match=r"^ncu failed: Failed to find metric foo__x.sum$"):
        fake_ncu("==ERROR== Failed to find metric foo__x.sum\n", rc=1)


def test_run_ncu_no_kernel(fake_ncu):
    with pytest.raises(InputError, match=r"no kernel whose name matches '\^bfs_'"):
        fake_ncu("==PROF== Connected\n==WARNING== No kernels were profiled.\n")
    with pytest.raises(InputError, match=r"no kernel whose name matches"):
        fake_ncu(header_line(NAMES) + "\n")


def test_run_ncu_timeout(monkeypatch, tmp_path):
    tool = make_executable(tmp_path / "ncu", f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    monkeypatch.setattr(ncu, "find_ncu", lambda: str(tool))
    with pytest.raises(InputError, match="ran past the 0.5 s limit"):
        run_ncu(["t"], timeout=0.5)


# --- recorded real outputs (tests/fixtures/ncu/README.txt says where and how) ---------------------
@QUIET  # the input lacks metrics on purpose (or predates them)
def test_fixture_probe():
    df = parse_ncu_csv(fixture("probe.csv"), source="probe.csv")
    assert len(df) == 1
    row = df.iloc[0]
    assert (row["kernel_name"], row["kernel_signature"]) == ("bfs_probe", "bfs_probe")
    assert (row["block"], row["grid"]) == (256, 128)
    for column, value in PROBE.items():
        assert row[column] == value, column
    assert math.isnan(row["ld_inst"]) and math.isnan(row["st_inst"])  # not in the recorded set
    # Measured, as recorded (not derivable by hand): 96 DRAM sectors beyond the 16384 the loads
    # need, no DRAM writes yet (written sectors stay in L2), all lanes active, 2464 ns.
    assert (row["dram_read_sectors"], row["dram_write_sectors"]) == (16480, 0)
    assert row["thread_inst_per_inst"] == 32.0
    assert row["achieved_occupancy_pct"] == 11.73 and row["duration_ns"] == 2464.0


@QUIET  # the input lacks metrics on purpose (or predates them)
def test_fixture_multi():
    df = parse_ncu_csv(fixture("multi.csv"), source="multi.csv")
    assert df["launch"].tolist() == list(range(len(MULTI)))
    for (name, sig, block, grid, ld, per_load), (_, row) in zip(MULTI, df.iterrows()):
        assert (row["kernel_name"], row["kernel_signature"]) == (name, sig)
        assert (row["block"], row["grid"]) == (block, grid)
        assert (row["ld_issued"], row["st_issued"], row["l1_requests"]) == (ld, 1024, ld)
        assert row["l1_sectors"] == row["l2_read_sectors"] == row["l2_read_misses"] == ld * per_load
        assert (row["l2_read_hits"], row["l2_write_sectors"]) == (0, 4096)
        assert row["dram_read_sectors"] == ld * per_load + 96  # the same 96 extra as the probe
    assert df["duration_ns"].tolist() == [2432.0, 2528.0, 2464.0, 2496.0, 2496.0, 2592.0]


def test_fixture_failure_logs_have_no_rows():
    for name in ("fail.log", "nokernel.log"):
        with pytest.raises(InputError, match="no ncu CSV header"):
            parse_ncu_csv(fixture(name), source=name)


@QUIET  # the input lacks metrics on purpose (or predates them)
def test_run_ncu_on_recorded_failures(fake_ncu):
    with pytest.raises(InputError, match=r"program failed under ncu: probe target failed on purpose$"):
        fake_ncu(fixture("fail.log"), rc=1, stderr="probe target failed on purpose\n")
    with pytest.raises(InputError, match=r"^ncu profiled no kernel whose name matches '\^bfs_'$"):
        fake_ncu(fixture("nokernel.log"), stdout="45\n")
    df = fake_ncu(fixture("multi.csv"))
    assert df["kernel_name"].tolist() == [m[0] for m in MULTI]


# --- on a GPU with Nsight Compute -----------------------------------------------------------------
def need_ncu():
    pytest.importorskip("cupy")
    try:
        find_ncu()
    except NcuUnavailable as exc:
        pytest.skip(str(exc))


@pytest.mark.gpu
def test_run_ncu_on_probe():
    need_ncu()
    df = run_ncu([sys.executable, "-m", "gpu_validate.ncu_probe"], "^bfs_probe", timeout=120)
    assert df["kernel_name"].tolist() == ["bfs_probe"]
    for column, value in {**PROBE, "ld_inst": 4096, "st_inst": 1024}.items():
        assert df[column][0] == value, column
    # the probe uses no shared memory; every warp runs more instructions than its loads and stores
    assert df["shared_ld_inst"][0] == df["shared_st_inst"][0] == 0
    assert df["inst_executed"][0] > 4096 + 1024
    assert "bfs_probe #0: ok" in df.attrs["stdout"]


@pytest.mark.gpu
def test_run_ncu_errors_for_real():
    need_ncu()
    with pytest.raises(InputError, match="program failed under ncu: .*on purpose"):
        run_ncu([sys.executable, "-c", "import sys; sys.exit('failed on purpose')"], timeout=60)
    with pytest.raises(InputError, match="no kernel whose name matches"):
        run_ncu([sys.executable, "-c", "import cupy; cupy.arange(3).sum()"], timeout=60)



# --- missing metrics are said out loud -------------------------------------------------------------
def test_an_architecture_without_recorded_names_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert metrics_for("sm_90") == METRICS["sm_90"]  # recorded: no warning
    with pytest.warns(DataWarning, match=r"no Nsight Compute metric names recorded for sm_120; using sm_90's"):
        assert metrics_for("sm_120") == METRICS["sm_90"]


def test_a_metric_ncu_did_not_report_warns_by_name():
    names = [n for n in NAMES if n != "dram__sectors_write.sum"]
    text = header_line(names) + "\n" + row_line(3, "bfs_compact", 512, 2, ["7"] * len(names)) + "\n"
    with pytest.warns(DataWarning) as caught:
        parse_ncu_csv(text, source="run.log")
    assert [str(w.message) for w in caught] == [
        "run.log: ncu reported no dram__sectors_write.sum (dram_write_sectors): that counter is missing for "
        "every launch"]


def test_values_ncu_did_not_print_warn_with_their_count():
    with pytest.warns(DataWarning) as caught:
        parse_ncu_csv(HAND, source="hand.log")
    # HAND's first launch has "n/a" for l2_read_hits and an empty l2_read_misses; the second has both
    assert sorted(str(w.message) for w in caught) == [
        f"hand.log: ncu printed no value of {METRICS['sm_90']['l2_read_hits']} (l2_read_hits) for 1 of 2 launches",
        f"hand.log: ncu printed no value of {METRICS['sm_90']['l2_read_misses']} (l2_read_misses) for 1 of 2 "
        "launches"]


def test_a_complete_log_parses_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # multi.csv was recorded before the two smsp__sass_* metrics and the instruction counts joined the set
        later = ("ld_inst", "st_inst", "inst_executed", "shared_ld_inst", "shared_st_inst", "alu_pipe_inst")
        df = parse_ncu_csv(fixture("multi.csv"), source="multi.csv",
                           metrics={k: v for k, v in METRICS["sm_90"].items() if k not in later})
    assert len(df) == len(MULTI)


SOURCE_PAGE = Path(__file__).parent / "fixtures" / "instructions" / "h100_ws_divergence" / "ncu_source_page.csv"


def test_source_page_of_a_recorded_launch():
    """The divergence probe's first launch (case all1) as ncu 2025.3 printed its SASS source page."""
    table = parse_source_page(SOURCE_PAGE.read_text())
    assert set(table["launch"]) == {0} and set(table["kernel_name"]) == {"bfs_expand_ws"}
    assert table["offset"].tolist() == list(range(0, 16 * len(table), 16))
    assert table["sass"].iloc[0] == "LDC R1, c[0x0][0x28]"
    assert table["inst_executed"].sum() == 220  # ws_divergence.csv: all1's inst_executed_by_line
    assert table["inst_executed"].iloc[0] == 8  # every launched warp of the one block


def test_source_page_launches_and_offsets_by_hand():
    text = textwrap.dedent('''\
        "Kernel Name","bfs_a<4>",
        "Address","Source","Instructions Executed","Other"
        "0x7f0000000110","      EXIT","1,024","x"
        "0x7f0000000100","      LDC R1, c[0x0][0x28]","8","y"
        "Kernel Name","bfs_b",
        "Address","Source","Instructions Executed"
        "0xa00","  NOP","0"
        ''')
    table = parse_source_page(text)
    assert table[["launch", "kernel_name", "offset", "sass", "inst_executed"]].values.tolist() == [
        [0, "bfs_a", 16, "EXIT", 1024], [0, "bfs_a", 0, "LDC R1, c[0x0][0x28]", 8], [1, "bfs_b", 0, "NOP", 0]]


@pytest.mark.parametrize("text, message", [
    ('"Address","Source","Instructions Executed"\n', "before any"),
    ('"Kernel Name","k"\n"0x10","NOP","1"\n', "before its launch's header"),
    ('"Kernel Name","k"\n"Address","Source"\n', "lacks column 'Instructions Executed'"),
    ('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n"0x10","NOP"\n', "2 fields"),
    ('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n"16","NOP","1"\n', "not a hexadecimal"),
    ('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n"0x10","NOP","1.5"\n', "not an integer"),
    ('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n"0x10","NOP","-1"\n', "negative"),
    ('"Kernel Name",""\n', "without a name"),
    ("==PROF== nothing\n", "no instruction rows"),
])
def test_source_page_errors_name_the_line(text, message):
    with pytest.raises(InputError, match=message) as error:
        parse_source_page(text, source="page.csv")
    assert str(error.value).startswith("page.csv") and "\n" not in str(error.value)


@FUZZ
@given(st.data())
def test_fuzzed_source_pages_parse_or_raise_input_error(data):
    text = "\n".join(SOURCE_PAGE.read_text().splitlines()[:8])
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 12))
        text = text[:at] + data.draw(JUNK) + text[at + cut:]
    try:
        table = parse_source_page(text)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert (table["offset"] >= 0).all() and (table["inst_executed"] >= 0).all()


def test_source_counters_commands():
    profile, page = source_counters_commands(["python", "-m", "probe"], "/tmp/r", "^bfs_expand_ws$", ncu="ncu")
    assert profile[:3] == ["ncu", "--section", "SourceCounters"] and profile[-3:] == ["python", "-m", "probe"]
    assert "regex:^bfs_expand_ws$" in profile and "/tmp/r" in profile
    assert page == ["ncu", "--import", "/tmp/r.ncu-rep", "--page", "source", "--csv", "--print-source", "sass"]
