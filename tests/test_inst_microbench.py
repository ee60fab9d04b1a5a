"""Instruction-side microbenchmarks (gpu_validate.microbench.instructions): kernel source and its SASS,
block records -> a launch's cycles, raw table -> [instructions] values, the command.

`fixtures/microbench/instructions_example_raw.csv` is a synthetic example made by hand (its header
says so), not a measurement: the derivation below is checked against a hand computation on it. The
host driver also runs against the NumPy stand-in for CuPy (tests/fake_cupy.py), whose instruction
kernels write the block records of a GPU with known costs (fake_cupy.INST_CYCLES).
"""
from __future__ import annotations

import collections
import math
import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fake_cupy
from gpu_validate import device as dev
from gpu_validate import microbench as mb
from gpu_validate import modules
from gpu_validate.microbench import instructions as im
from opmachine.profile import load_profile
from simdmodel.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "gpu_validate" / "cuda" / "inst_microbench.cu"
EXAMPLE = Path(__file__).parent / "fixtures" / "microbench" / "instructions_example_raw.csv"
NVCC = shutil.which("nvcc")


# --------------------------------------------------------------------------------------------
# Kernel source


def test_source_is_package_data_with_the_drivers_constants():
    import importlib.resources

    text = importlib.resources.files("gpu_validate").joinpath("cuda/inst_microbench.cu").read_text(encoding="utf-8")
    assert text == SOURCE.read_text(encoding="utf-8")
    assert re.findall(r"^\s*#\s*include\s+(\S+)", text, re.MULTILINE) == ['"bfs_common.cuh"']
    defines = dict(re.findall(r"^#define (IM_\w+) (\d+)", text, re.MULTILINE))
    assert {k: int(v) for k, v in defines.items() if k.endswith("_UNROLL")} == {
        "IM_ALU_UNROLL": im.ALU_UNROLL, "IM_SHFL_UNROLL": im.SHFL_UNROLL, "IM_SHARED_UNROLL": im.SHARED_UNROLL,
        "IM_BARRIER_UNROLL": im.BARRIER_UNROLL}
    for test in im.TESTS.values():  # every kernel takes (records, steps, ways, sink)
        assert re.search(rf"{test.kernel}\(long long\* records, long long steps, int ways, unsigned\* sink\)", text)
    common = (ROOT / "gpu_validate" / "cuda" / "bfs_common.cuh").read_text(encoding="utf-8")
    assert "#define BFS_BLOCK 256" in common and im.BLOCK_THREADS == 256


def test_block_scan_is_the_scan_kernels_own_code():
    # the timed step calls scan.cu's block prefix sum (bfs_common.cuh) and writes offset[] as scan.cu does
    scan = (ROOT / "gpu_validate" / "cuda" / "scan.cu").read_text(encoding="utf-8")
    ours = SOURCE.read_text(encoding="utf-8").split("im_block_scan(")[1]
    lines = ["int total;", "= block_exclusive_sum(", "warp_total, &total);", "offset[tid] = tid < count ? before : total;",
             "__syncthreads();"]
    for line in lines:
        assert line in scan and line in ours, line
    assert ours.count("__syncthreads();") == scan.split("bfs_expand_scan(")[1].count("__syncthreads();") - 1 == 1


def _sections(cubin: bytes) -> dict[str, bytes]:
    """The `.text.<kernel>` sections of an ELF64 cubin (section headers read by hand)."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    names = headers[shstrndx][4]
    out = {}
    for name, _, _, _, offset, size, *_ in headers:
        label = cubin[names + name: cubin.index(b"\0", names + name)].decode()
        if label.startswith(".text."):
            out[label[6:]] = cubin[offset: offset + size]
    return out


def _opcodes(text: bytes) -> collections.Counter:
    """How often each opcode (the low 12 bits of a 128-bit sm_90 instruction) occurs."""
    return collections.Counter(struct.unpack_from("<Q", text, i)[0] & 0xFFF for i in range(0, len(text), 16))


# sm_90 SASS opcodes (the instruction's low 12 bits): IADD3 and IMAD.SHL (immediate), the two forms of
# an add `x += x`; LOP3.LUT (registers); SHFL.IDX; LDS; BAR.SYNC.
IADD3, IMAD_IMM, LOP3, SHFL, LDS, BAR = 0x210, 0x824, 0xC12, 0x589, 0x984, 0xB1D


@pytest.fixture(scope="module")
def cubin(tmp_path_factory) -> dict[str, bytes]:
    if NVCC is None:
        pytest.skip("nvcc (CUDA toolkit) not installed")
    out = tmp_path_factory.mktemp("inst") / "inst_microbench.cubin"
    done = subprocess.run([NVCC, "-arch=sm_90", "-std=c++17", "-cubin", f"-I{modules.cuda_dir()}", "-Xptxas", "-v",
                           "-o", str(out), str(SOURCE)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    # 8 blocks of 256 threads per SM (every kernel's __launch_bounds__) need <= 32 registers a thread
    registers = [int(n) for n in re.findall(r"Used (\d+) registers", done.stderr)]
    assert len(registers) == len(im.TESTS) and max(registers) <= 32
    return _sections(out.read_bytes())


def test_source_compiles_for_sm90_with_each_step_as_written(cubin):
    assert set(cubin) == {test.kernel for test in im.TESTS.values()}
    # one step of each kernel is exactly its unrolled body (the step loop is not unrolled again)
    for kernel, adds in (("im_alu_1", im.ALU_UNROLL), ("im_alu_8", 8 * im.ALU_UNROLL)):
        ops = _opcodes(cubin[kernel])
        # one SASS instruction per add: ptxas did not fold adds together (it would for `x += y`)
        assert adds <= ops[IADD3] + ops[IMAD_IMM] <= adds + 16, kernel
        assert len(cubin[kernel]) // 16 <= adds + 80, kernel
    # one LOP3 per lop3.b32 of the chains: ptxas merges none of them (the loop's own few instructions aside)
    lops = _opcodes(cubin["im_lop_8"])
    assert lops[LOP3] == 8 * im.ALU_UNROLL and lops[IADD3] + lops[IMAD_IMM] <= 4
    assert len(cubin["im_lop_8"]) // 16 <= 8 * im.ALU_UNROLL + 80
    assert _opcodes(cubin["im_shfl"])[SHFL] == im.SHFL_UNROLL
    assert _opcodes(cubin["im_shared_1"])[LDS] == im.SHARED_UNROLL
    assert _opcodes(cubin["im_shared_4"])[LDS] == 4 * im.SHARED_UNROLL
    assert _opcodes(cubin["im_barrier"])[BAR] == im.BARRIER_UNROLL + 2  # + the two around the timed steps


# --------------------------------------------------------------------------------------------
# Block records -> one launch's SMs, cycles and ns


def _records(rows):
    return np.array(rows, dtype=np.int64)


def test_reduce_records_by_hand():
    # SM 3: blocks span cycles 100..1100 (1000) and ns 10..510 (500); SM 7: 50..2050 (2000), 5..1005 (1000)
    records = _records([[3, 100, 1000, 10, 500], [7, 50, 2050, 5, 1005], [3, 120, 1100, 12, 510],
                        [7, 60, 2000, 6, 1000]])
    assert im.reduce_records(records, 2) == (2, 1500.0, 750.0)  # medians over the two SMs
    assert im.reduce_records(records.ravel(), 2) == (2, 1500.0, 750.0)  # as the kernel writes it: flat
    assert im.reduce_records(_records([[0, 5, 9, 1, 2]]), 1) == (1, 4.0, 1.0)


@pytest.mark.parametrize("rows, per_sm, fragment", [
    ([[3, 100, 1000, 10, 500], [3, 120, 1100, 12, 510], [7, 50, 2050, 5, 1005]], 2, "SM 7 ran 1 blocks, not 2"),
    ([[3, 100, 1000, 10, 500], [3, 1000, 1100, 12, 510]], 2, "the blocks of SM 3 did not all run at once"),
    ([[3, 100, 100, 10, 500]], 1, "clock64 span is not positive"),
    ([[3, 100, 200, 10, 10]], 1, "globaltimer span is not positive"),
])
def test_reduce_records_refuses_a_launch_that_is_not_what_was_asked(rows, per_sm, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        im.reduce_records(_records(rows), per_sm, "issue, repeat 1")
    assert str(info.value).startswith("issue, repeat 1: ") and "\n" not in str(info.value)


# --------------------------------------------------------------------------------------------
# Raw table -> the [instructions] values, on the synthetic example


def test_example_is_marked_synthetic_and_is_a_valid_raw_table():
    head = EXAMPLE.read_text(encoding="utf-8").splitlines()[0]
    assert head.startswith("# SYNTHETIC EXAMPLE") and "NOT a measurement" in head
    raw = im.read_raw(EXAMPLE)
    assert list(raw.columns) == list(im.RAW_COLUMNS) and len(raw) == 13 * 3
    assert set(raw["test"]) == set(im.TESTS)
    assert sorted(raw.loc[raw["test"] == "shared", "ways"].unique()) == list(im.CONFLICT_WAYS)


def test_values_from_the_example_by_hand():
    values = im.derive(im.read_raw(EXAMPLE), 4)
    # medians of the three repeats' cycles / ops: alu 577280 / 128000 = 4.51; shuffle 1472000 / 64000
    # = 23; shared load 1856000 / 64000 = 29; barrier 688000 / 32000 = 21.5; scan 206250 / 500 = 412.5;
    # shared k = 1, 2, 4, 8, 16, 32: 417792, 827392, 1646592, 3293184, 6594560, 13189120 over 409600
    # issue: 1641000 cycles for 6553600 warp instructions per SM on 4 sub-partitions:
    # 6553600 / (4 x 1641000) = 0.99841560 -> 0.998416; alu pipe: 3276800 cycles (the median) for the
    # same: 6553600 / (4 x 3276800) = 0.5
    # clock: 13 rows at each of 1975, 1980, 1985 MHz, the median of 39 is 1980
    assert values == {
        "clock_mhz": 1980.0, "sub_partitions": 4, "issue_per_cycle": 0.998416, "alu_latency_cycles": 4.51,
        "shuffle_latency_cycles": 23.0, "shared_latency_cycles": 29.0, "shared_cycles_per_wavefront": 1.02,
        "shared_conflict_cycles": [[1, 1.02], [2, 2.02], [4, 4.02], [8, 8.04], [16, 16.1], [32, 32.2]],
        "barrier_cycles": 21.5, "block_scan_cycles": 412.5, "alu_per_cycle": 0.5}
    # two sub-partitions issue twice as much each
    assert im.derive(im.read_raw(EXAMPLE), 2)["issue_per_cycle"] == 1.99683  # 6553600 / (2 x 1641000)


def test_values_are_medians_rounded_to_six_digits():
    raw = im.read_raw(EXAMPLE)
    rows = raw[raw["test"] == "alu_latency"].copy()
    rows["ops"] = 3 * rows["ops"]  # cycles / ops = 4.51 / 3 = 1.503333...
    rows["cycles_per_op"] = rows["cycles"] / rows["ops"]
    table = pd.concat([raw[raw["test"] != "alu_latency"], rows])
    assert im.derive(table, 4)["alu_latency_cycles"] == 1.50333


def test_derive_needs_every_test_and_a_conflict():
    raw = im.read_raw(EXAMPLE)
    with pytest.raises(InputError, match="no rows for test.s. barrier, block_scan"):
        im.derive(raw[~raw["test"].isin(["barrier", "block_scan"])], 4)
    with pytest.raises(InputError, match="the shared test needs ways = 1 and at least one conflict"):
        im.derive(raw[(raw["test"] != "shared") | (raw["ways"] == 1)], 4)
    with pytest.raises(InputError, match="the shared test needs ways = 1"):
        im.derive(raw[(raw["test"] != "shared") | (raw["ways"] != 1)], 4)
    with pytest.raises(InputError, match="sub_partitions must be an integer"):
        im.derive(raw, 0)


def _good_rows() -> pd.DataFrame:
    return pd.read_csv(EXAMPLE, comment="#")


@pytest.mark.parametrize("change, fragment", [
    (lambda t: t.drop(columns=["ns"]), "missing column"),
    (lambda t: t.iloc[0:0], "no rows"),
    (lambda t: t.assign(test="fma_latency"), "row 1: unknown test"),
    (lambda t: t.assign(ops=0), "row 1: ops must be an integer >= 1"),
    (lambda t: t.assign(sms=1.5), "row 1: sms must be an integer"),
    (lambda t: t.assign(cycles="many"), "row 1: cycles must be a number > 0"),
    (lambda t: t.assign(ns=-1.0), "row 1: ns must be a number > 0"),
    (lambda t: t.assign(event_ns=math.nan), "row 1: event_ns must be a number > 0"),
    (lambda t: t.assign(ways=2), "row 1: ways must be 1 outside the shared test"),
    (lambda t: t.assign(ways=np.where(t["test"] == "shared", 3, 1)), "row 16: ways of the shared test must be one of"),
    (lambda t: t.assign(cycles_per_op=t["cycles_per_op"] * 1.01), "row 1: cycles_per_op must equal cycles / ops"),
])
def test_bad_raw_table_is_one_line_input_error(change, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        im.check_raw(change(_good_rows()))
    assert "\n" not in str(info.value)


def test_bad_raw_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        im.read_raw(tmp_path / "none.csv")
    with pytest.raises(InputError, match="is a directory"):
        im.read_raw(tmp_path)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.binary(max_size=300),
    st.lists(st.lists(st.sampled_from(["shared", "issue", "1", "2", "0", "-1", "nan", "x", "1e400", "", '"', "#"]),
                      min_size=10, max_size=10), max_size=5)
    .map(lambda rows: ("\n".join([",".join(im.RAW_COLUMNS)] + [",".join(r) for r in rows])).encode()),
))
def test_any_bad_raw_csv_is_one_line_input_error(tmp_path, data):
    path = tmp_path / "raw.csv"
    path.write_bytes(data)
    try:
        table = im.read_raw(path)
    except InputError as error:
        assert "\n" not in str(error) and "\r" not in str(error)
    else:
        assert len(table) > 0


# --------------------------------------------------------------------------------------------
# Setup


def test_make_setup_for_the_bfs_configuration():
    setup = im.make_setup(load_profile("h200"))
    # 256-thread blocks: 64 warps per SM / 8 = 8 blocks per SM (BFS_BLOCK, BFS_MIN_BLOCKS)
    assert (setup.sms, setup.blocks_per_sm, setup.repeats, setup.target_ns, setup.sub_partitions) == (
        132, 8, 5, 2e6, 4)
    quick = im.make_setup(load_profile("h100"), quick=True)
    assert (quick.repeats, quick.target_ns) == (3, 5e5)
    assert im.make_setup(load_profile("k40c"), sub_partitions=4).blocks_per_sm == 8


def test_sub_partitions_from_the_option_the_profile_or_the_spec(tmp_path):
    from opmachine.profile import InstructionCosts, write_gpu_instructions

    costs = InstructionCosts(1980.0, 2, 1.0, 4.5, 23.0, 29.0, 1.0, ((1, 1.0), (2, 2.0)), 20.0, 400.0,
                             provenance={"method": "m", "device": "NVIDIA H200", "driver": "d", "date": "t",
                                         "command": "c"})
    profile = write_gpu_instructions(tmp_path / "h200.toml", load_profile("h200"), costs)
    assert im.make_setup(profile).sub_partitions == 2  # the profile's own constant
    assert im.make_setup(profile, sub_partitions=4).sub_partitions == 4
    assert im.make_setup(load_profile("h200")).sub_partitions == im.SUB_PARTITIONS[9] == 4


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(), "no sub-partition count is known for compute capability 3.5"),
    (dict(sub_partitions=0), "sub-partitions must be an integer in 1..16"),
    (dict(sub_partitions=4, repeats=0), "repeats must be an integer >= 1"),
    (dict(sub_partitions=4, target_ms=0.001), "target_ms must be in 0.01..1000"),
])
def test_make_setup_refuses(kwargs, fragment):
    with pytest.raises(InputError, match=fragment):
        im.make_setup(load_profile("k40c"), **kwargs)


# --------------------------------------------------------------------------------------------
# The host driver and the command on the NumPy stand-in for CuPy

H200_PROPS = dict(fake_cupy.PROPS, name=b"NVIDIA H200")


@pytest.fixture
def h200(monkeypatch):
    """The stand-in CuPy as an H200 (the h200 profile's device), a fixed driver version."""
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy.fake_cupy(None, H200_PROPS))
    monkeypatch.setattr(dev, "_driver_version", lambda: "999.99")


def test_host_driver_on_the_stand_in(h200):
    setup = im.make_setup(load_profile("h200"), repeats=2, target_ms=0.2)
    raw, values = im.run(setup)
    assert len(raw) == 2 * (len(im.TESTS) - 1 + len(im.CONFLICT_WAYS))
    full = raw[raw["test"].isin(["issue", "alu_pipe", "shared", "barrier", "block_scan"])]
    assert set(full["sms"]) == {132} and set(full["blocks_per_sm"]) == {8} and set(full["threads"]) == {256}
    one = raw[raw["test"].str.endswith("_latency")]
    assert set(one["sms"]) == {1} and set(one["threads"]) == {32}
    # each launch is about target_ms long after the probe and the warm-up
    assert np.all((raw["ns"] > 0.1e6) & (raw["ns"] < 0.4e6))
    # the stand-in's costs come back: 4 sub-partitions issuing one a cycle each = 0.25 SM cycles per
    # instruction, ALU-pipe instructions at half that rate;
    # k wavefronts of 1 cycle for a k-way conflict; its clock is 1980 MHz
    cycles = fake_cupy.INST_CYCLES
    assert values["clock_mhz"] == pytest.approx(1980.0, rel=1e-4)
    assert {k: v for k, v in values.items() if k != "clock_mhz"} == {
        "sub_partitions": 4, "issue_per_cycle": 1.0, "alu_latency_cycles": cycles["alu_latency"],
        "shuffle_latency_cycles": cycles["shuffle_latency"], "shared_latency_cycles": cycles["shared_latency"],
        "shared_cycles_per_wavefront": 1.0, "shared_conflict_cycles": [[k, float(k)] for k in im.CONFLICT_WAYS],
        "barrier_cycles": cycles["barrier"], "block_scan_cycles": cycles["block_scan"], "alu_per_cycle": 0.5}


def test_command_adds_the_section_and_keeps_every_other_line(h200, tmp_path, capsys):
    # the shipped profile's own section (if any) is replaced: every line before it is kept
    base_text = Path(load_profile("h200").path).read_text(encoding="utf-8").split("\n\n# [instructions]: ")[0]
    out, raw = tmp_path / "h200.toml", tmp_path / "inst.csv"
    args = ["--instructions", "--base", "h200", "--out", str(out), "--raw-instructions", str(raw), "--quick",
            "--repeats", "1", "--target-ms", "0.05"]
    assert mb.main(args) == 0, capsys.readouterr().err
    stdout = capsys.readouterr().out
    assert f"wrote {out} and {raw}" in stdout and "block scan of 256 400 cycles" in stdout
    text = out.read_text(encoding="utf-8")
    assert text.startswith(base_text.rstrip("\n") + "\n\n# [instructions]: ")
    profile = load_profile(str(out))
    assert profile.curves == load_profile("h200").curves
    costs = profile.instructions
    assert costs.alu_latency_cycles == 4.5 and costs.issue_per_cycle == 1.0
    assert costs.provenance["device"] == "NVIDIA H200" and costs.provenance["driver"] == "999.99"
    assert costs.provenance["command"] == "python -m gpu_validate.microbench " + " ".join(args)
    assert im.derive(im.read_raw(raw), 4) == {k: v for k, v in costs.values().items()}
    # again, with the written file as its own base: the section is replaced, nothing else moves
    assert mb.main(["--instructions", "--base", str(out), "--out", str(out), "--quick", "--target-ms", "0.05"]) == 0
    again = out.read_text(encoding="utf-8")
    assert again.count("\n[instructions]\n") == 1 and again.startswith(base_text.rstrip("\n") + "\n\n# [instructions]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h200.toml", "inst.csv"]


@pytest.mark.parametrize("args, fragment", [
    (["--instructions", "--raw", "r.csv"], "--raw is an option of the service-curve sweep, not of --instructions"),
    (["--instructions", "--dram-mib", "1024"], "--dram-mib is an option of the service-curve sweep"),
    (["--instructions", "--across", "min"], "--across is an option of the service-curve sweep"),
    (["--raw-instructions", "r.csv"], "--raw-instructions is an option of the --instructions run"),
    (["--sub-partitions", "4"], "--sub-partitions is an option of the --instructions run"),
    (["--instructions", "--raw-instructions", "x.toml"], "--raw-instructions x.toml is the --out file"),
    (["--instructions", "--sub-partitions", "0"], "sub-partitions must be an integer in 1..16"),
    (["--instructions", "--repeats", "0"], "--repeats must be at least 1"),
])
def test_command_refuses_with_one_line(tmp_path, monkeypatch, capsys, args, fragment):
    monkeypatch.chdir(tmp_path)
    assert mb.main(["--base", "h200", "--out", "x.toml", *args]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_command_refuses_a_base_of_another_gpu(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy.fake_cupy())  # "Fake H200"
    assert mb.main(["--instructions", "--base", "h200", "--out", str(tmp_path / "x.toml")]) == 2
    assert "profile h200 describes NVIDIA H200 with 132 SMs, not this Fake H200" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------------------------
# On a real GPU (skipped where there is none)


@pytest.mark.gpu
def test_real_gpu_instruction_costs(tmp_path, capsys):
    info = dev.device_info()
    try:
        base = dev.profile_for_device(info)
    except dev.ProfileMismatch:
        pytest.skip(f"no shipped profile describes {info['device']}")
    out, raw = tmp_path / "profile.toml", tmp_path / "inst.csv"
    rc = mb.main(["--instructions", "--base", base, "--out", str(out), "--raw-instructions", str(raw), "--quick"])
    assert rc == 0, capsys.readouterr().err
    costs = load_profile(str(out)).instructions
    assert 0.3 * info["sm_clock_mhz"] < costs.clock_mhz < 1.05 * info["sm_clock_mhz"]
    assert 1 <= costs.alu_latency_cycles < 20 and 0.2 < costs.issue_per_cycle <= 1.05
    assert costs.alu_latency_cycles < costs.shuffle_latency_cycles < 100
    assert costs.alu_latency_cycles < costs.shared_latency_cycles < 100
    # a 32-way conflict costs about 32 wavefronts
    assert 16 < costs.conflict_wavefronts(32) < 40 and costs.barrier_cycles < costs.block_scan_cycles
    table = im.read_raw(raw)
    assert im.derive(table, costs.sub_partitions) == costs.values()
