"""GPU microbenchmarks of S(m) (seed 003 §6.5): kernel source, raw table -> curves, profile writing, CLI.

The recorded fixture `fixtures/microbench/h200_raw.csv` is the raw table of the sweep that wrote
`opmachine/profiles/h200.toml`. The host driver is also run against a small NumPy stand-in for
CuPy that executes the pointer chase, so the chain layout (what m counts) is checked without a GPU.
"""
import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fake_cupy import fake_cupy
from gpu_validate import microbench as mb
from opmachine.profile import Curve, load_profile, write_gpu_curves
from simdmodel.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "microbench" / "h200_raw.csv"
SOURCE = ROOT / "gpu_validate" / "cuda" / "microbench.cu"
PROVENANCE = {"provenance": "pointer chases", "device": "NVIDIA H200", "driver": "580.159.04",
              "date": "2026-11-21T00:00:00Z", "command": "python -m gpu_validate.microbench --base h200"}


# --------------------------------------------------------------------------------------------
# Kernel source


def test_source_is_package_data_and_nvrtc_ready():
    import importlib.resources

    text = importlib.resources.files("gpu_validate").joinpath("cuda/microbench.cu").read_text(encoding="utf-8")
    assert text == SOURCE.read_text(encoding="utf-8")
    # NVRTC (cupy.RawModule) has no standard headers: the source must include none
    assert not re.search(r"^\s*#\s*include", text, re.MULTILINE)
    for name in ["mb_chase_1", "mb_chase_2", "mb_chase_4", "mb_chase_8", "mb_chase_1_ca", "mb_touch"]:
        assert re.search(rf"\b{name}\b", text)
    assert "ld.global.cg.u32" in text and "ld.global.ca.u32" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_source_compiles_for_sm90(tmp_path):
    cubin = tmp_path / "microbench.cubin"
    done = subprocess.run(["nvcc", "-arch=sm_90", "-std=c++17", "-cubin", "-o", str(cubin), str(SOURCE)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert cubin.stat().st_size > 0


# --------------------------------------------------------------------------------------------
# Raw table -> curves, on the recorded fixture


@pytest.fixture(scope="module")
def raw():
    return mb.read_raw(FIXTURE)


def test_fixture_is_a_valid_raw_table(raw):
    assert list(raw.columns) == list(mb.RAW_COLUMNS)
    assert set(raw["curve"]) == set(mb.CURVES + mb.SIDE_CURVES)
    for name in mb.CURVES:
        mlp = raw.loc[raw["curve"] == name, "mlp"]
        assert mlp.min() == 1 and mlp.max() >= (2**16 if name == "l2_same" else 2**17)
        assert mlp.nunique() >= 15


def test_curves_from_fixture_load_with_exact_end_points(raw, tmp_path):
    samples = mb.curve_samples(raw)
    for name in mb.CURVES:
        rows = raw[raw["curve"] == name]
        per_config = rows.groupby(["warps", "per_warp"], as_index=False)["ns_per_request"].median()
        per_config["mlp"] = per_config["warps"] * per_config["per_warp"]
        by_mlp = per_config.groupby("mlp")["ns_per_request"].min().sort_index()
        mlp, ns = samples[name]
        assert mlp == [float(m) for m in by_mlp.index]
        assert ns[0] == float(f"{by_mlp.iloc[0]:.6g}")  # S(1): nothing before it to take a minimum with
        assert ns[-1] == float(f"{by_mlp.min():.6g}")  # the running minimum ends at the smallest median
        Curve(mlp, ns)  # positive, strictly increasing m, non-increasing S
    target = tmp_path / "h200_measured.toml"
    write_gpu_curves(target, load_profile("h200"), samples, PROVENANCE, comment="method\nsecond line",
                     hardware_notes={"sms": "spec and device"})
    loaded = load_profile(str(target), kind="gpu")
    assert loaded.measured and loaded.provenance == PROVENANCE and loaded.has_row_split
    assert {k: (c.mlp.tolist(), c.ns.tolist()) for k, c in loaded.curves.items()} == samples
    text = target.read_text(encoding="utf-8")
    assert "# method\n# second line\n" in text and "sms = 132   # spec and device\n" in text


def test_shipped_h200_profile_is_the_fixture_measurement(raw):
    profile = load_profile("h200")
    assert profile.measured
    assert set(profile.provenance) == {"provenance", "device", "driver", "date", "command"}
    assert "H200" in profile.provenance["device"]
    samples = {**mb.curve_samples(raw), **mb.one_warp_samples(raw)}
    assert {k: (c.mlp.tolist(), c.ns.tolist()) for k, c in profile.curves.items()} == samples


def test_one_warp_samples_by_hand():
    rows = [{"curve": "l2_hit", "warps": w, "per_warp": p, "mlp": w * p, "requests": w * p * 10,
             "elapsed_ns": t * w * p * 10, "ns_per_request": t}
            for w, p, t in ((1, 1, 100.0), (1, 2, 60.0), (1, 4, 70.0), (1, 64, 1.0), (2, 1, 50.0))]
    # one warp only, per_warp <= 32; a running minimum over m (70 -> 60)
    assert mb.one_warp_samples(pd.DataFrame(rows)) == {"l2_hit_one_warp": ([1.0, 2.0, 4.0], [100.0, 60.0, 60.0])}


def test_sanity_of_measured_curves(raw):
    samples = mb.curve_samples(raw)
    l2, hit, miss = (samples[k][1] for k in ("l2_hit", "row_hit", "row_miss"))
    assert 50 < l2[0] < 400 and 50 < miss[0] < 1000  # unloaded latencies, ns
    assert miss[0] > l2[0]  # DRAM is further away than L2
    assert l2[-1] < hit[-1] <= miss[-1]  # floors: L2 faster than DRAM, rows help
    side = mb.side_numbers(raw)
    assert side["l1_ca"] < side["l1_cg"]  # an L1 hit is quicker than the L2 round trip


def test_running_minimum_and_median_by_hand():
    rows = []
    for warps, per_warp, values in [(1, 1, [10.0, 12.0, 11.0]), (2, 1, [6.0, 4.0]), (1, 2, [8.0]),
                                    (4, 1, [5.5])]:
        for v in values:
            mlp = warps * per_warp
            rows.append({"curve": "l2_hit", "warps": warps, "per_warp": per_warp, "mlp": mlp,
                         "requests": mlp * 10, "elapsed_ns": v * mlp * 10, "ns_per_request": v})
    for name in ("row_hit", "row_miss"):
        rows += [dict(r, curve=name) for r in rows if r["curve"] == "l2_hit"]
    table = pd.DataFrame(rows)
    # mlp 1: median(10, 12, 11) = 11; mlp 2: configs (2, 1) -> median(6, 4) = 5 and (1, 2) -> 8; mlp 4: 5.5
    assert mb.curve_samples(table, across="median")["l2_hit"] == ([1.0, 2.0, 4.0], [11.0, 6.5, 5.5])
    assert mb.curve_samples(table)["l2_hit"] == ([1.0, 2.0, 4.0], [11.0, 5.0, 5.0])  # min, then running min
    rows.append(dict(rows[0], warps=8, mlp=8, requests=80, elapsed_ns=720.0, ns_per_request=9.0))
    assert mb.curve_samples(pd.DataFrame(rows), across="median")["l2_hit"] == ([1.0, 2.0, 4.0, 8.0],
                                                                              [11.0, 6.5, 5.5, 5.5])
    with pytest.raises(InputError, match="across must be"):
        mb.curve_samples(table, across="mean")


# --------------------------------------------------------------------------------------------
# Bad raw tables


def _good_rows():
    return pd.DataFrame([{"curve": c, "warps": w, "per_warp": 2, "mlp": 2 * w, "requests": 2 * w * 10,
                          "elapsed_ns": 100.0, "ns_per_request": 100.0 / (2 * w * 10)}
                         for c in mb.CURVES for w in (1, 2)])


@pytest.mark.parametrize("change, fragment", [
    (lambda t: t.drop(columns=["mlp"]), "missing column"),
    (lambda t: t.iloc[0:0], "no rows"),
    (lambda t: t.assign(curve="l3_hit"), "row 1: unknown curve"),
    (lambda t: t.assign(warps=0), "row 1: warps must be an integer >= 1"),
    (lambda t: t.assign(per_warp=1.5), "per_warp must be an integer"),
    (lambda t: t.assign(elapsed_ns="fast"), "elapsed_ns must be a number > 0"),
    (lambda t: t.assign(elapsed_ns=math.inf), "elapsed_ns must be a number > 0"),
    (lambda t: t.assign(mlp=3), "mlp must equal warps x per_warp"),
    (lambda t: t.assign(requests=t["requests"] + 1), "requests must be a multiple of mlp"),
    (lambda t: t.assign(ns_per_request=t["ns_per_request"] * 2), "ns_per_request must equal"),
])
def test_bad_raw_table_is_one_line_input_error(change, fragment):
    with pytest.raises(InputError, match=fragment) as info:
        mb.check_raw(change(_good_rows()))
    assert "\n" not in str(info.value)


def test_too_few_points_and_bad_files(tmp_path):
    with pytest.raises(InputError, match="curve row_miss needs at least 2"):
        mb.curve_samples(_good_rows().iloc[:4], curves=("l2_hit", "row_hit", "row_miss"))
    with pytest.raises(InputError, match="no such file"):
        mb.read_raw(tmp_path / "none.csv")
    with pytest.raises(InputError, match="is a directory"):
        mb.read_raw(tmp_path)
    (tmp_path / "bin.csv").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(InputError):
        mb.read_raw(tmp_path / "bin.csv")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.lists(st.lists(st.sampled_from(["l2_hit", "1", "2", "0", "-1", "nan", "x", "1e400", "", '"', "3.5"]),
                      min_size=7, max_size=7), max_size=5)
    .map(lambda rows: ("\n".join([",".join(mb.RAW_COLUMNS)] + [",".join(r) for r in rows])).encode()),
))
def test_any_bad_raw_csv_is_one_line_input_error(tmp_path, data):
    path = tmp_path / "raw.csv"
    path.write_bytes(data)
    try:
        table = mb.read_raw(path)
    except InputError as error:
        assert "\n" not in str(error) and "\r" not in str(error)
    else:
        assert len(table) > 0  # whatever passes is a valid table


# --------------------------------------------------------------------------------------------
# CLI without a GPU


@pytest.mark.parametrize("args, fragment", [
    (["--base", "nope", "--out", "x.toml"], "no such profile"),
    (["--base", "westmere", "--out", "x.toml"], "is a cpu profile"),
    (["--base", "h200", "--out", "x.txt"], "must end in .toml"),
    (["--base", "h200", "--out", "x.toml", "--repeats", "0"], "--repeats must be at least 1"),
    (["--base", "h200", "--out", "x.toml", "--dram-mib", "100"], "--dram-mib must be a power of two"),
    (["--base", "h200", "--out", "x.toml", "--dram-mib", "64"], "not far larger than L2"),
])
def test_cli_bad_options_exit_2(tmp_path, monkeypatch, capsys, args, fragment):
    monkeypatch.chdir(tmp_path)
    assert mb.main(args) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


# --------------------------------------------------------------------------------------------
# The host driver against a NumPy stand-in for CuPy (tests/fake_cupy.py)


def test_host_driver_chain_layout_with_numpy_stand_in(monkeypatch):
    log = []
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(log))
    setup = mb.Setup(l2_bytes=2**15, dram_bytes=2**17, flush_bytes=2**16, warps=(1, 2, 8), per_warp=(1, 4, 32, 64),
                     repeats=2, target_ns=5e4, blocks_limit=4)
    raw = mb.measure(setup, seed=3)
    assert len(raw) == (3 * 3 * 4 + 3 * len(mb.SAME_PER_WARP) + 4) * 2  # + l2_same, + the L1 side runs
    assert set(raw["mlp"]) == {w * p for w in (1, 2, 8) for p in (1, 4, 32, 64)} | {w * p for w in (1, 2, 8)
                                                                                  for p in mb.SAME_PER_WARP}
    # the stand-in's time per step is max(200, 0.01 m) ns: S(m) = elapsed / requests follows it
    expected = np.maximum(200.0, 0.01 * raw["mlp"]) / raw["mlp"]
    assert np.allclose(raw["ns_per_request"], expected, rtol=0.15)
    samples = mb.curve_samples(raw)
    assert samples["l2_hit"][0][0] == 1.0 and 180 < samples["l2_hit"][1][0] < 220
    assert sum(launch["sequential"] for launch in log) == 3 * 4 * (2 + 2)  # row_hit: probe, warm-up, 2 repeats
    for launch in log:
        seen = launch["visited"]  # steps x warps x chains x lanes
        flat = seen.reshape(seen.shape[0], -1)
        if launch["sequential"]:
            lanes = seen.shape[3]
            assert np.all(np.diff(seen, axis=3) == 1)  # the lanes of a warp on adjacent sectors
            assert np.all((seen[1:] - seen[:-1]) % launch["sectors"] == lanes)  # then the next ones
        if launch["sectors"] == 1:  # l2_same: every chain on the one sector
            assert np.all(seen == 0)
            continue
        # every chain has its own sector at every step: m requests in flight, none merged
        assert all(len(np.unique(row)) == flat.shape[1] for row in flat[: min(len(flat), 4)])


def test_shipped_h100_profile_is_the_fixture_measurement():
    # opmachine/profiles/h100.toml was written on an H100 by `python -m gpu_validate.profile_gpu
    # --base h100`; its raw sweep is the fixture h100_raw.csv, so its curves follow from it.
    raw = mb.read_raw(FIXTURE.with_name("h100_raw.csv"))
    profile = load_profile("h100")
    assert profile.measured and profile.device_name == "NVIDIA H100 80GB HBM3" and profile.sms == 132
    assert "H100" in profile.provenance["device"] and "profile_gpu" in profile.provenance["command"]
    samples = {**mb.curve_samples(raw), **mb.one_warp_samples(raw)}
    assert {k: (c.mlp.tolist(), c.ns.tolist()) for k, c in profile.curves.items()} == samples
