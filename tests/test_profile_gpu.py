"""One command writes a GPU's whole profile (gpu_validate.profile_gpu), and a GPU finds its profile by
name and SM count (gpu_validate.device.profile_for_device). The command runs end to end on the
NumPy stand-in for CuPy (tests/fake_cupy.py): fake device attributes, fake timings."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import fake_cupy
from gpu_validate import device as dev
from gpu_validate import microbench as mb
from gpu_validate import modules
from gpu_validate import profile_gpu as pg
from gpu_validate.device import ProfileMismatch, check_profile_device, profile_for_device
from opmachine.profile import GPU_HARDWARE_KEYS, RUN_ORIGINS, hardware_origin, load_profile
from simdmodel.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
# A small GPU: 2 SMs x 32 warps, 2 MiB of L2, compute capability 9.0 (so h200 is a valid --base).
PROPS = {"name": b"Fake GPU", "multiProcessorCount": 2, "maxThreadsPerMultiProcessor": 1024,
         "major": 9, "minor": 0, "l2CacheSize": 2 * 2**20}
ATTRIBUTES = {1: 1024, 10: 32, 13: 1500000, 16: 2, 36: 1000000, 37: 256, 38: 2 * 2**20, 39: 1024,
              75: 9, 76: 0, 106: 16}
DRIVER = "999.99"
# a quick sweep sized for the stand-in: 1 MiB L2 buffer, 16 MiB DRAM buffer (8 x L2), 0.05 ms launches
FAST = ["--quick", "--repeats", "1", "--target-ms", "0.05", "--dram-mib", "16", "--l2-mib", "1", "--launches", "8"]
OPTIONS = ["--l1-bytes", "131072", "--l2-ways", "8", "--l2-line-bytes", "128", "--sector-bytes", "32",
           "--dram-block-bytes", "512", "--row-buffers", "64", "--l2-bandwidth-gbs", "150.5"]


@pytest.fixture
def gpu(monkeypatch):
    """The stand-in CuPy for the small GPU, a fixed driver version, and no compiled module left behind."""
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy.fake_cupy(None, PROPS, ATTRIBUTES))
    monkeypatch.setattr(dev, "_driver_version", lambda: DRIVER)
    modules._module.cache_clear()
    yield
    modules._module.cache_clear()


def run_cli(args, capsys):
    rc = pg.main(args)
    out, err = capsys.readouterr()
    return rc, out, err


# --------------------------------------------------------------------------------------------
# The command, end to end on the stand-in


def test_one_command_writes_a_complete_validated_profile(gpu, tmp_path, capsys):
    out, raw = tmp_path / "fake.toml", tmp_path / "raw.csv"
    argv = ["--out", str(out), "--base", "h200", "--raw", str(raw), *FAST]
    rc, stdout, err = run_cli(argv, capsys)
    assert rc == 0, err
    assert f"wrote {out} and {raw}" in stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fake.toml", "raw.csv"]  # no temporary left
    p = load_profile(str(out), kind="gpu")
    assert (p.name, p.device_name, p.compute_capability, p.measured) == ("fake", "Fake GPU", "9.0", True)
    # [hardware] from the device's attributes, by hand: 1024 threads per SM / 32 = 32 warps per SM;
    # clock 1500000 kHz = 1500 MHz; peak DRAM = 2 x 1 GHz x 256 bits / 8 = 64 GB/s
    assert (p.warp_size, p.sms, p.max_warps_per_sm, p.max_blocks_per_sm, p.max_threads_per_block,
            p.l2_bytes, p.clock_mhz, p.dram_bandwidth_gbs) == (32, 2, 32, 16, 1024, 2 * 2**20, 1500.0, 64.0)
    # what the device cannot report, from the base, with the base's own note
    h200 = load_profile("h200")
    for key in pg.UNREPORTED:
        assert getattr(p, key) == getattr(h200, key)
        assert p.hardware_provenance[key].startswith("base h200: ")
    assert p.hardware_provenance["l2_ways"] == "base h200: assumed: associativity is not published"
    # the per-launch constants: the stand-in's empty launch takes 3000 ns, its compaction 15000 ns
    assert (p.launch_overhead_ns, p.grid_scan_ns) == (fake_cupy.EMPTY_NS, fake_cupy.COMPACT_NS - fake_cupy.EMPTY_NS)
    # provenance on every value: device and measured ones name this run (command, device, driver, date)
    run = {"device": "Fake GPU", "driver": DRIVER, "command": "python -m gpu_validate.profile_gpu " + shlex.join(argv)}
    origins = {}
    for key in GPU_HARDWARE_KEYS:
        source = p.field_provenance(key)
        origins[key] = hardware_origin(source["source"])[0]
        if origins[key] in RUN_ORIGINS:
            assert {k: source[k] for k in run} == run
            assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", source["date"])
    # the compaction by graph size (--quick: three sizes), from this run: the stand-in's takes 15000 ns at any size
    assert p.compaction.sizes == pg.QUICK_COMPACTIONS["compaction_sizes"]
    assert set(p.compaction.ns) == set(p.compaction.p10_ns) == set(p.compaction.p90_ns) == {fake_cupy.COMPACT_NS}
    assert {k: p.compaction.provenance[k] for k in run} == run
    assert {k for k, o in origins.items() if o == "device"} == set(pg.DEVICE_SOURCES)
    assert {k for k, o in origins.items() if o == "measured"} == {"launch_overhead_ns", "grid_scan_ns"}
    assert {k for k, o in origins.items() if o == "base"} == set(pg.UNREPORTED)
    for curve in p.curves:
        assert {k: p.field_provenance(curve)[k] for k in run} == run
    # the curves are those of the raw table it wrote (the microbench sweep's extraction)
    table = mb.read_raw(raw)
    samples = {**mb.curve_samples(table), **mb.one_warp_samples(table)}
    assert {k: (c.mlp.tolist(), c.ns.tolist()) for k, c in p.curves.items()} == samples
    # the instruction costs of the stand-in (fake_cupy.INST_CYCLES, its 1500 MHz clock), from this run:
    # 2 SMs of 32 warps take 4 blocks of 256 threads each
    costs = p.instructions
    assert costs.clock_mhz == pytest.approx(1500.0, rel=1e-4) and costs.sub_partitions == 4
    assert (costs.issue_per_cycle, costs.alu_latency_cycles, costs.block_scan_cycles) == (1.0, 4.5, 400.0)
    assert costs.shared_conflict_cycles == tuple((k, float(k)) for k in mb.instructions.CONFLICT_WAYS)
    assert {k: costs.provenance[k] for k in run} == run and "profile_gpu" in costs.provenance["method"]
    assert costs.provenance["date"] == p.provenance["date"]
    assert "# Throughputs: 4 blocks of 256 threads on every SM" in out.read_text(encoding="utf-8")
    assert "shared: 1 SM cycles per wavefront" in stdout


def test_the_instruction_raw_table_is_kept_on_request(gpu, tmp_path, capsys):
    out, raw, inst = tmp_path / "fake.toml", tmp_path / "raw.csv", tmp_path / "inst.csv"
    rc, stdout, err = run_cli(["--out", str(out), "--base", "h200", "--raw", str(raw), "--raw-instructions", str(inst),
                               "--sub-partitions", "2", *FAST], capsys)
    assert rc == 0, err
    assert f"wrote {out}, {raw} and {inst}" in stdout
    p = load_profile(str(out))
    # the stand-in issues one instruction every 0.25 SM cycles: 4 a cycle, 2 per sub-partition on 2
    assert p.instructions.sub_partitions == 2 and p.instructions.issue_per_cycle == 2.0
    assert mb.instructions.derive(mb.instructions.read_raw(inst), 2) == p.instructions.values()
    assert set(p.curves) == {"l2_hit", "row_hit", "row_miss", "l2_same", "l2_hit_one_warp", "row_hit_one_warp",
                             "row_miss_one_warp"}
    assert 190 < p.curves["l2_hit"](1) < 230  # the stand-in's chase: 200 ns per step, plus its 3 us launch
    # the written profile is the one for this GPU, and no other
    assert profile_for_device({"device": "Fake GPU", "sms": 2}, [out]) == str(out)
    with pytest.raises(ProfileMismatch, match="describes Fake GPU with 2 SMs, but this Fake GPU has 4 SMs"):
        profile_for_device({"device": "Fake GPU", "sms": 4}, [out])


def test_hardware_from_options_without_a_base(gpu, tmp_path, capsys):
    out = tmp_path / "fake.toml"
    rc, _, err = run_cli(["--out", str(out), "--name", "small", "--description", "a small GPU", *OPTIONS,
                          "--dram-bandwidth-gbs", "50", *FAST], capsys)
    assert rc == 0, err
    p = load_profile(str(out))
    assert (p.name, p.description) == ("small", "a small GPU")
    assert (p.l1_bytes, p.l2_ways, p.l2_line_bytes, p.sector_bytes, p.dram_block_bytes, p.row_buffers,
            p.l2_bandwidth_gbs, p.dram_bandwidth_gbs) == (131072, 8, 128, 32, 512, 64, 150.5, 50.0)
    assert p.hardware_provenance["l2_ways"] == "option: --l2-ways 8"
    assert p.hardware_provenance["l2_bandwidth_gbs"] == "option: --l2-bandwidth-gbs 150.5"
    assert p.hardware_provenance["dram_bandwidth_gbs"] == "option: --dram-bandwidth-gbs 50"
    assert p.field_provenance("l2_ways")["command"].endswith("--l2-mib 1 --launches 8")


def test_an_option_wins_over_the_base(gpu, tmp_path, capsys):
    out = tmp_path / "fake.toml"
    assert run_cli(["--out", str(out), "--base", "h200", "--row-buffers", "64", *FAST], capsys)[0] == 0
    p = load_profile(str(out))
    assert p.row_buffers == 64 and p.hardware_provenance["row_buffers"] == "option: --row-buffers 64"
    assert p.l2_ways == 16 and p.hardware_provenance["l2_ways"].startswith("base h200: ")


def _cli_error(args, capsys):
    rc, out, err = run_cli(args, capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize("args, fragment", [
    ([], "the following arguments are required: --out"),
    (["--out", "x.txt"], "must end in .toml"),
    (["--out", "no/x.toml"], "directory no does not exist"),
    (["--out", "x.toml", "--bogus"], "unrecognized arguments: --bogus"),
    (["--out", "x.toml", "--launches", "0"], "argument --launches: must be an integer > 0, got '0'"),
    (["--out", "x.toml", "--l2-ways", "abc"], "argument --l2-ways: must be an integer > 0, got 'abc'"),
    (["--out", "x.toml", "--l2-bandwidth-gbs", "nan"], "argument --l2-bandwidth-gbs: must be a number > 0"),
    (["--out", "x.toml", "--across", "mean"], "argument --across: invalid choice"),
    (["--out", "x.toml", "--name", "a b"], "--name must be letters"),
    (["--out", "x.toml", "--raw", "x.toml"], "is the --out file"),
    (["--out", "x.toml", "--raw", "r.csv", "--raw-instructions", "r.csv"], "is the --out or --raw file"),
    (["--out", "x.toml", "--sub-partitions", "0"], "argument --sub-partitions: must be an integer > 0"),
    (["--out", "x.toml", "--base", "h200", "--sub-partitions", "17"], "sub-partitions must be an integer in 1..16"),
    (["--out", "x.toml", "--target-ms", "5000"], "--target-ms must be in 0.01..1000"),
    (["--out", "x.toml", "--base", "nope"], "no such profile"),
    (["--out", "x.toml", "--base", "westmere"], "is a cpu profile"),
    (["--out", "x.toml", "--base", "k40c"], "--base k40c is for compute capability 3.5, but this Fake GPU is 9.0"),
    (["--out", "x.toml"], "the device cannot report l1_bytes, l2_ways, l2_line_bytes, sector_bytes, "
                          "dram_block_bytes, row_buffers, l2_bandwidth_gbs: pass --base PROFILE of the same "
                          "architecture (h100, h200 for compute capability 9.0)"),
    (["--out", "x.toml", "--base", "h200", "--sector-bytes", "64"], "measure 32-byte sectors"),
    (["--out", "x.toml", "--base", "h200", "--l2-ways", "7"],
     "hardware.l2_bytes: 2097152 is not a multiple of l2_ways x l2_line_bytes = 896"),
    (["--out", "x.toml", "--base", "h200", "--dram-mib", "100"], "--dram-mib must be a power of two"),
    (["--out", "x.toml", "--base", "h200", "--dram-mib", "8"], "not far larger than L2"),
])
def test_bad_options_give_one_line_exit_2_and_write_nothing(gpu, tmp_path, monkeypatch, capsys, args, fragment):
    monkeypatch.chdir(tmp_path)
    assert fragment in _cli_error(args, capsys)
    assert list(tmp_path.iterdir()) == []


def test_a_profile_of_another_gpu_is_never_overwritten(gpu, tmp_path, monkeypatch, capsys):
    target = tmp_path / "h200.toml"
    shutil.copy(load_profile("h200").path, target)
    before = target.read_bytes()
    line = _cli_error(["--out", str(target), "--base", "h200", *FAST], capsys)
    assert "holds profile h200 of NVIDIA H200 with 132 SMs, not of this Fake GPU with 2 SMs" in line
    assert target.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["h200.toml"]
    shutil.copy(load_profile("westmere").path, target)
    assert "holds a cpu profile" in _cli_error(["--out", str(target), "--base", "h200", *FAST], capsys)


def test_check_existing_lets_the_same_gpu_replace_its_profile(tmp_path):
    target = tmp_path / "h200.toml"
    pg.check_existing(target, {"device": "NVIDIA H200", "sms": 132})  # no file: fine
    shutil.copy(load_profile("h200").path, target)
    pg.check_existing(target, {"device": "nvidia  h200", "sms": 132})  # the same GPU: replaced
    target.write_text("not a profile")
    pg.check_existing(target, {"device": "NVIDIA H200", "sms": 132})  # unusable: replaced


def test_a_profile_that_fails_validation_leaves_nothing(gpu, tmp_path, monkeypatch, capsys):
    # a quick stand-in sweep, and a one-warp curve the schema refuses (no dram curve for it to refine):
    # the text is written to a temporary file, fails to load back, and is removed
    rows = [{"curve": c, "warps": w, "per_warp": 1, "mlp": w, "requests": w * 10, "elapsed_ns": 2000.0,
             "ns_per_request": 2000.0 / (w * 10)} for c in mb.CURVES for w in (1, 2)]
    monkeypatch.setattr(pg.microbench, "measure", lambda setup, seed: mb.check_raw(pd.DataFrame(rows)))
    monkeypatch.setattr(pg.microbench, "one_warp_samples", lambda raw: {"dram_one_warp": ([1, 2], [2.0, 1.0])})
    line = _cli_error(["--out", str(tmp_path / "fake.toml"), "--base", "h200", *FAST], capsys)
    assert "service.dram_one_warp: no service.dram curve for it to refine" in line
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("module", ["gpu_validate.profile_gpu", "gpu_validate.microbench"])
def test_without_cupy_exit_2_with_one_line(tmp_path, module):
    # the whole-profile command and its service-curve building block alike
    try:
        import cupy  # noqa: F401
        pytest.skip("CuPy is installed here; the no-GPU path is not reachable")
    except ImportError:
        pass
    target = tmp_path / "out.toml"
    done = subprocess.run([sys.executable, "-m", module, "--out", str(target), "--base", "h200"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "CuPy" in lines[0]
    assert not target.exists()


def test_hardware_from_device_by_hand():
    attrs = {"warp_size": 32, "sms": 15, "max_threads_per_sm": 2048, "max_blocks_per_sm": 16,
             "max_threads_per_block": 1024, "l2_bytes": 1572864, "sm_clock_khz": 745000,
             "memory_clock_khz": 3004000, "memory_bus_bits": 384}
    # a K40c: 2 x 3.004 GHz x 384 / 8 bytes = 288.384 GB/s, the 288 GB/s of its spec
    assert pg.hardware_from_device(attrs) == {
        "warp_size": 32, "sms": 15, "max_warps_per_sm": 64, "max_blocks_per_sm": 16, "max_threads_per_block": 1024,
        "l2_bytes": 1572864, "clock_mhz": 745.0, "dram_bandwidth_gbs": 288.4}


# --------------------------------------------------------------------------------------------
# Device-to-profile matching


SHIPPED_DEVICES = {"c2050": ("Tesla C2050", 14, "2.0"), "h100": ("NVIDIA H100 80GB HBM3", 132, "9.0"),
                   "h200": ("NVIDIA H200", 132, "9.0"), "k40c": ("Tesla K40c", 15, "3.5")}


@pytest.mark.parametrize("name", SHIPPED_DEVICES)
def test_each_shipped_gpu_finds_its_profile(name):
    device, sms, capability = SHIPPED_DEVICES[name]
    profile = load_profile(name)
    assert (profile.device_name, profile.sms, profile.compute_capability) == (device, sms, capability)
    assert profile_for_device({"device": device, "sms": sms}) == name
    assert profile_for_device({"device": f"  {device.upper()} ", "sms": sms}) == name  # case and spaces
    check_profile_device(profile, {"device": device, "sms": sms})


def test_an_h100_pcie_is_refused_the_sxm_profile():
    pcie = {"device": "NVIDIA H100 PCIe", "sms": 114}
    with pytest.raises(ProfileMismatch) as error:
        profile_for_device(pcie)
    message = str(error.value)
    assert message.startswith("no profile describes NVIDIA H100 PCIe with 114 SMs (profiles: c2050: Tesla C2050, 14 "
                              "SMs; h100: NVIDIA H100 80GB HBM3, 132 SMs;")
    assert "python -m gpu_validate.profile_gpu --out opmachine/profiles/NAME.toml" in message and "\n" not in message
    with pytest.raises(ProfileMismatch, match=r"^profile h100 describes NVIDIA H100 80GB HBM3 with 132 SMs, not this "
                                              r"NVIDIA H100 PCIe with 114 SMs: "):
        check_profile_device(load_profile("h100"), pcie)


def test_the_same_name_with_other_sms_is_refused():
    # a MIG slice of an H100 SXM5 reports its name with fewer SMs
    with pytest.raises(ProfileMismatch, match=r"^profile h100 describes NVIDIA H100 80GB HBM3 with 132 SMs, but this "
                                              r"NVIDIA H100 80GB HBM3 has 16 SMs .*--base h100`$"):
        profile_for_device({"device": "NVIDIA H100 80GB HBM3", "sms": 16})


def test_two_profiles_of_one_gpu_are_ambiguous(tmp_path):
    for name in ("a", "b"):
        shutil.copy(load_profile("h200").path, tmp_path / f"{name}.toml")
    paths = [tmp_path / "a.toml", tmp_path / "b.toml"]
    with pytest.raises(ProfileMismatch, match="all describe NVIDIA H200 with 132 SMs: name one explicitly"):
        profile_for_device({"device": "NVIDIA H200", "sms": 132}, paths)
    assert profile_for_device({"device": "NVIDIA H200", "sms": 132}, paths[:1]) == str(paths[0])


@pytest.mark.parametrize("info", [None, {}, {"device": "", "sms": 132}, {"device": "NVIDIA H200"},
                                  {"device": "NVIDIA H200", "sms": 0}, {"device": "NVIDIA H200", "sms": True},
                                  {"device": "NVIDIA H200", "sms": "132"}])
def test_bad_device_info(info):
    with pytest.raises(InputError, match="device info"):
        profile_for_device(info)


def test_microbench_refuses_a_base_of_another_gpu():
    profile = load_profile("h200")
    with pytest.raises(ProfileMismatch, match="profile h200 describes NVIDIA H200 with 132 SMs, not this Fake H200"):
        mb.check_device(fake_cupy.fake_cupy(), profile)  # an H200's geometry under another name
    mb.check_device(fake_cupy.fake_cupy(props=dict(fake_cupy.PROPS, name=b"NVIDIA H200")), profile)


def _naive_match(name: str, sms: int) -> list[str]:
    """Shipped GPU profiles whose file's [device] name equals `name` after case-folding and joining
    white space, and whose [hardware] sms is `sms`: read straight from the TOML text."""
    found = []
    for path in sorted((ROOT / "opmachine" / "profiles").glob("*.toml")):
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
        if doc["kind"] == "gpu" and doc["hardware"]["sms"] == sms and \
                " ".join(doc["device"]["name"].casefold().split()) == " ".join(name.casefold().split()):
            found.append(path.stem)
    return found


NAMES = [d for d, _, _ in SHIPPED_DEVICES.values()] + ["NVIDIA H100 PCIe", "NVIDIA H200 NVL", "Tesla K40m", "GPU"]


@settings(max_examples=80, deadline=None)
@given(st.one_of(st.sampled_from(NAMES), st.text(min_size=1, max_size=20)).filter(str.strip),
       st.sampled_from([x for x in ("upper", "lower", "spaces", "same")]),
       st.one_of(st.sampled_from([14, 15, 16, 114, 132]), st.integers(1, 10**6)))
def test_matching_agrees_with_the_naive_reading_of_the_files(name, variant, sms):
    name = {"upper": name.upper(), "lower": name.lower(), "spaces": f" {name.replace(' ', '   ')}\t",
            "same": name}[variant]
    assume(name.strip())
    expected = _naive_match(name, sms)
    try:
        found = profile_for_device({"device": name, "sms": sms})
    except ProfileMismatch as error:
        assert "\n" not in str(error) and expected == []
    else:
        assert [found] == expected


# --------------------------------------------------------------------------------------------
# On a real GPU (skipped where there is none)


@pytest.mark.gpu
def test_real_device_attributes_and_its_profile():
    attrs = dev.device_attributes()
    assert all(attrs[key] > 0 for key in dev.ATTRIBUTES if key in attrs)
    assert re.fullmatch(r"\d+\.\d+", attrs["compute_capability"])
    info = dev.device_info()
    assert (info["device"], info["sms"]) == (attrs["device"], attrs["sms"])
    try:
        name = profile_for_device(info)
    except ProfileMismatch as error:
        assert "\n" not in str(error)
    else:
        assert load_profile(name).describes(info["device"], info["sms"])


@pytest.mark.gpu
@pytest.mark.slow
def test_real_gpu_quick_profile(tmp_path, capsys):
    attrs = dev.device_attributes()
    same = [n for n in pg.available_profiles("gpu")
            if load_profile(n).compute_capability == attrs["compute_capability"]]
    if not same:
        pytest.skip(f"no shipped profile of compute capability {attrs['compute_capability']} to stand in as --base")
    out = tmp_path / "quick.toml"
    rc, _, err = run_cli(["--out", str(out), "--base", same[0], "--quick", "--repeats", "1", "--target-ms", "0.2",
                          "--launches", "64"], capsys)
    assert rc == 0, err
    profile = load_profile(str(out))
    assert profile.describes(attrs["device"], attrs["sms"]) and profile.launch_overhead_ns > 0
    assert all(profile.field_provenance(key)["source"] for key in GPU_HARDWARE_KEYS)
