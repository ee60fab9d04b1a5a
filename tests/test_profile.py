"""Hardware profiles (seed 003 §5, §6.5): shipped files, S(m) interpolation, occupancy, validation, writing."""
import json
import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.profile import (
    GPU_HARDWARE_KEYS,
    CPUProfile,
    Curve,
    GPUProfile,
    ProfileError,
    ProfileKindError,
    available_profiles,
    closed_queue_curve,
    hardware_origin,
    load_profile,
    render_gpu_profile,
    write_gpu_curves,
    write_gpu_profile,
    write_profile_text,
)
from simdmodel.errors import InputError

SHIPPED = ["c2050", "epyc-kvm", "h100", "h200", "k40c", "westmere"]
GPUS = ["c2050", "h100", "h200", "k40c"]
MEASURED_GPUS = ["h100", "h200"]
MEASURED_CPUS = ["epyc-kvm"]  # this project's CI machine kind, by opmachine.cpu_microbench  # curves written by gpu_validate.microbench (h100 through profile_gpu)
K40C_TEXT = Path(load_profile("k40c").path).read_text(encoding="utf-8")
WESTMERE_TEXT = Path(load_profile("westmere").path).read_text(encoding="utf-8")
MEASURED = {"provenance": "pointer chase and streams", "device": "NVIDIA H100 80GB HBM3",
            "driver": "580.159.04", "date": "2026-11-21", "command": "gpu_validate microbench --out x.toml"}


# --------------------------------------------------------------------------------------------
# Naive references: a small TOML writer (enough for the profile schema) and a slow interpolator.

def naive_dumps(doc: dict) -> str:
    """TOML text for a dict of scalars, arrays, tables and arrays of tables."""
    lines: list[str] = []

    def key(k):
        return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k)

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) else repr(v)
        if isinstance(v, str):
            return json.dumps(v)  # test strings are ASCII, where JSON escapes are TOML escapes
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{" + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + "}"

    def is_table_array(v):
        return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)

    def emit(table, prefix):
        for k, v in table.items():
            if not isinstance(v, dict) and not is_table_array(v):
                lines.append(f"{key(k)} = {value(v)}")
        for k, v in table.items():
            name = f"{prefix}.{key(k)}" if prefix else key(k)
            if isinstance(v, dict):
                lines.append(f"[{name}]")
                emit(v, name)
            elif is_table_array(v):
                for item in v:
                    lines.append(f"[[{name}]]")
                    emit(item, name)

    emit(doc, "")
    return "\n".join(lines) + "\n"


def naive_interp(mlp, ns, m):
    """S(m): clamp, find the segment by a linear scan, interpolate in log(m)."""
    if m <= mlp[0]:
        return ns[0]
    if m >= mlp[-1]:
        return ns[-1]
    for i in range(len(mlp) - 1):
        if mlp[i] <= m <= mlp[i + 1]:
            t = (math.log(m) - math.log(mlp[i])) / (math.log(mlp[i + 1]) - math.log(mlp[i]))
            return ns[i] + t * (ns[i + 1] - ns[i])
    raise AssertionError("unreachable")


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Shipped profiles

@pytest.mark.parametrize("name", SHIPPED)
def test_every_shipped_profile_loads_by_name_and_by_path(name):
    profile = load_profile(name)
    assert profile.name == name and Path(profile.path).name == f"{name}.toml"
    assert load_profile(profile.path) == profile
    if name in MEASURED_GPUS:  # curves from gpu_validate.microbench on the device named in the provenance
        assert profile.measured is True and profile.provenance["device"] and profile.provenance["command"]
    elif name in MEASURED_CPUS:  # latencies and loop costs from opmachine.cpu_microbench on the machine named
        assert profile.measured is True and profile.loop is not None
        assert profile.provenance["command"] == f"python -m opmachine.cpu_microbench --out opmachine/profiles/{name}.toml"
    else:
        assert profile.measured is False and "not measured" in profile.provenance["provenance"]
    assert isinstance(profile, GPUProfile if name in GPUS else CPUProfile)


@pytest.mark.parametrize("name", MEASURED_GPUS)
def test_measured_curves_never_rise_and_a_row_miss_is_never_cheaper(name):
    profile = load_profile(name)
    for key, curve in profile.curves.items():
        assert np.all(np.diff(curve.ns) <= 0), key
    m = np.geomspace(1, 1e6, 200)
    assert np.all(profile.curves["row_miss"](m) >= profile.curves["row_hit"](m))


def test_available_profiles_by_kind():
    assert available_profiles() == SHIPPED
    assert available_profiles("gpu") == GPUS
    assert available_profiles("cpu") == ["epyc-kvm", "westmere"]


def test_k40c_figures_from_the_paper():
    k40c = load_profile("k40c", kind="gpu")
    assert k40c.physical_warps == 960  # 15 SMs x 64 warps (seed 003 §6.5)
    assert k40c.dram_bandwidth_gbs == 288.0 and k40c.has_row_split
    # Row hit at m = 1 is seed 003 §7.3's 600 cycles at 745 MHz: 600 / 0.745 = 805.369 ns.
    assert k40c.curves["row_hit"](1) == pytest.approx(805.369)
    # Saturated: one 32-byte sector per 32 / 288 = 0.111111 ns; 805.369 x 9 = 7248 requests to get there.
    assert k40c.curves["row_hit"](8192) == pytest.approx(0.111111)
    assert k40c.curves["row_hit"](4096) == pytest.approx(805.369 / 4096, rel=1e-5)


def test_c2050_and_westmere_figures():
    assert load_profile("c2050").physical_warps == 672  # 14 SMs x 48 warps
    westmere = load_profile("westmere", kind="cpu")
    # seed 003 §5: L1 4 cycles (1.33 ns), L2 10 cycles (4.5 ns), L3 46 cycles (20.5 ns)
    assert [(lv.name, lv.bytes, lv.service_ns) for lv in westmere.levels] == [
        ("L1", 32768, 1.33), ("L2", 262144, 4.5), ("L3", 25165824, 20.5)]
    assert westmere.clock_ghz == 2.2 and westmere.line_bytes == 64 and westmere.memory_ns > 20.5


@pytest.mark.parametrize("name", [gpu for gpu in GPUS if gpu not in MEASURED_GPUS])
def test_shipped_curves_are_the_closed_queue_form_of_the_hardware_numbers(name):
    profile = load_profile(name)
    floors = {"l2_hit": profile.sector_bytes / profile.l2_bandwidth_gbs,
              "row_hit": profile.sector_bytes / profile.dram_bandwidth_gbs}
    for key, curve in profile.curves.items():
        rebuilt = closed_queue_curve(curve.ns[0], 1 / curve.ns[-1], curve.mlp)
        np.testing.assert_allclose(curve.ns, rebuilt.ns, rtol=2e-5)
        assert curve.ns[-2] == curve.ns[-1], f"{key}: sampled past saturation"
        if key in floors:
            assert curve.ns[-1] == pytest.approx(floors[key], rel=1e-5)
    # a row miss is never cheaper than a row hit, at any load
    m = np.geomspace(0.5, 1e6, 200)
    assert np.all(profile.curves["row_miss"](m) >= profile.curves["row_hit"](m))


# --------------------------------------------------------------------------------------------
# Curves

def test_curve_interpolates_in_log_m_and_clamps():
    curve = Curve([1, 4, 16], [8.0, 2.0, 1.0])
    assert curve(1) == 8.0 and curve(4) == 2.0 and curve(16) == 1.0  # exact at samples
    assert curve(2) == pytest.approx(5.0)  # log-midpoint of 1..4: (8 + 2) / 2
    assert curve(math.sqrt(2)) == pytest.approx(6.5)  # a quarter of the way: 8 - 0.25 x 6
    assert curve(8) == pytest.approx(1.5)  # log-midpoint of 4..16: (2 + 1) / 2
    assert curve(0.01) == 8.0 and curve(1e9) == 1.0 and curve(math.inf) == 1.0  # clamped
    out = curve(np.array([1.0, 2.0, 100.0]))
    assert isinstance(out, np.ndarray) and out.tolist() == pytest.approx([8.0, 5.0, 1.0])
    assert isinstance(curve(np.float32(4)), float)


@pytest.mark.parametrize("m", [0, -1.0, math.nan, [1.0, 0.0], "x"])
def test_curve_rejects_non_positive_mlp(m):
    with pytest.raises(InputError, match="MLP must be"):
        Curve([1, 2], [2.0, 1.0])(m)


@pytest.mark.parametrize("mlp, ns, fragment", [
    ([1, 2, 3], [3.0, 2.0], "mlp has 3 points but ns has 2"),
    ([1], [3.0], "at least 2 points"),
    ([1, 1], [3.0, 2.0], "strictly increasing"),
    ([2, 1], [3.0, 2.0], "strictly increasing"),
    ([0, 1], [3.0, 2.0], r"mlp\[0\] must be > 0"),
    ([1, 2], [3.0, 0.0], r"ns\[1\] must be > 0"),
    ([1, 2], [3.0, 4.0], "must not increase"),
    ([1, 2], [3.0, math.inf], "must be finite"),
    ([[1, 2]], [[3.0, 2.0]], "flat arrays"),
    (["a", 2], [3.0, 2.0], "arrays of numbers"),
])
def test_curve_validation(mlp, ns, fragment):
    with pytest.raises(InputError, match=fragment):
        Curve(mlp, ns)


def test_curve_is_read_only_and_compares_by_value():
    curve = Curve([1, 2], [2, 1])
    assert curve.mlp.dtype == np.float64 and not curve.ns.flags.writeable
    with pytest.raises(ValueError):
        curve.ns[0] = 5.0
    assert curve == Curve([1.0, 2.0], [2.0, 1.0]) and curve != Curve([1, 2], [2, 2])


def test_closed_queue_curve_by_hand():
    # latency 800 ns, 0.5 requests/ns: S = max(800 / m, 2) saturates at m = 800 x 0.5 = 400
    curve = closed_queue_curve(800.0, 0.5, [1, 100, 400, 1000])
    assert curve.ns.tolist() == [800.0, 8.0, 2.0, 2.0]
    assert closed_queue_curve(1.0, 1.0).mlp.tolist() == [2.0**k for k in range(19)]
    with pytest.raises(InputError):
        closed_queue_curve(0.0, 1.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1e4), min_size=2, max_size=8, unique=True),
       st.lists(st.floats(0.001, 1e3), min_size=8, max_size=8),
       st.lists(st.floats(1e-3, 1e7), min_size=1, max_size=10))
def test_curve_matches_naive_interpolation_and_stays_in_range(mlp, ns, ms):
    mlp = sorted(mlp)
    ns = sorted(ns[: len(mlp)], reverse=True)
    curve = Curve(mlp, ns)
    for m in ms:
        got = curve(m)
        assert got == pytest.approx(naive_interp(mlp, ns, m), rel=1e-9, abs=1e-12)
        assert min(ns) - 1e-12 <= got <= max(ns) + 1e-12
    values = curve(np.sort(np.array(ms)))
    assert np.all(np.diff(values) <= 1e-12)  # non-increasing in m, like the samples


# --------------------------------------------------------------------------------------------
# Occupancy

@pytest.mark.parametrize("name, block, per_sm, grid", [
    ("k40c", 256, 8, 120),   # 8 warps/block: 64 // 8 = 8 blocks (< 16); 15 x 8 = 120
    ("k40c", 32, 16, 240),   # 1 warp/block: 64 warps allow 64, the block limit 16 wins; 15 x 16
    ("k40c", 33, 16, 240),   # 2 warps/block (rounded up): 32 by warps, 16 by blocks
    ("k40c", 1024, 2, 30),   # 32 warps/block: 64 // 32 = 2; 15 x 2
    ("c2050", 256, 6, 84),   # 8 warps/block: 48 // 8 = 6 (< 8); 14 x 6
    ("c2050", 192, 8, 112),  # 6 warps/block: 48 // 6 = 8 = block limit; 14 x 8
    ("c2050", 1024, 1, 14),  # 32 warps/block: 48 // 32 = 1
    ("h100", 256, 8, 1056),  # 64 // 8 = 8 (< 32); 132 x 8
    ("h100", 64, 32, 4224),  # 64 // 2 = 32 = block limit; 132 x 32
])
def test_blocks_per_sm_and_full_wave(name, block, per_sm, grid):
    profile = load_profile(name)
    assert profile.blocks_per_sm(block) == per_sm and profile.full_wave_grid(block) == grid


@pytest.mark.parametrize("block", [0, -32, 1025, 2.5, True, "256"])
def test_bad_block_size(block):
    with pytest.raises(InputError, match="block size"):
        load_profile("k40c").blocks_per_sm(block)


# --------------------------------------------------------------------------------------------
# Finding profiles

def test_kind_mismatch_messages():
    with pytest.raises(ProfileKindError) as error:
        load_profile("westmere", kind="gpu")
    assert str(error.value) == "profile westmere is a cpu profile; --gpu needs a gpu profile"
    with pytest.raises(ProfileError, match=r"^profile k40c is a gpu profile; --cpu needs a cpu profile$"):
        load_profile("k40c", kind="cpu")
    with pytest.raises(InputError, match="'gpu' or 'cpu'"):
        load_profile("k40c", kind="GPU")


def test_unknown_name_lists_the_available_ones():
    expected = r"^profile k80: no such profile \(available: c2050, epyc-kvm, h100, h200, k40c, westmere\)$"
    with pytest.raises(ProfileError, match=expected):
        load_profile("k80")


def test_path_problems(tmp_path):
    with pytest.raises(ProfileError, match="no such file"):
        load_profile(str(tmp_path / "missing.toml"))
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ProfileError, match="is a directory"):
        load_profile(tmp_path / "dir.toml")
    with pytest.raises(ProfileError, match="must end in .toml"):
        load_profile(str(tmp_path / "k40c.txt"))
    with pytest.raises(InputError):
        load_profile(42)
    copy = write(tmp_path, K40C_TEXT, "mine.toml")
    assert load_profile(str(copy)).physical_warps == 960 and load_profile(copy).path == str(copy)


# --------------------------------------------------------------------------------------------
# Validation: each mistake in a copy of a good profile gives one line naming the key.

def drop_table(text, header):
    """Remove `[header]` and its lines up to the next blank line."""
    start = text.index(f"[{header}]\n")
    end = text.find("\n\n", start)
    return text[:start] + (text[end + 2:] if end >= 0 else "")


def rep(old, new, count=-1):
    """A mutation: replace `old` by `new` in the profile text."""
    return lambda text: text.replace(old, new, count)


def sub(pattern, new):
    """A mutation: regular-expression substitution in the profile text."""
    return lambda text: re.sub(pattern, new, text)


def drop(*headers):
    """A mutation: remove whole tables."""
    def mutate(text):
        for header in headers:
            text = drop_table(text, header)
        return text
    return mutate


def append(extra):
    return lambda text: text + extra


SMS_LINE = 1 + [line.startswith("sms =") for line in K40C_TEXT.splitlines()].index(True)
TWO_POINTS = "mlp = [1, 2]\nns = [2.0, 1.0]\n"
GPU_CASES = [
    ("syntax", rep("sms = 15 ", "sms = = 15 "), rf"TOML syntax error: .*\(at line {SMS_LINE}, column"),
    ("missing key", sub(r"\nl2_ways = 16 .*", ""), "hardware.l2_ways: missing key"),
    ("unknown key", rep("l2_ways = 16", "l2_ways = 16\nl2_way = 16"), "hardware.l2_way: unknown key"),
    ("unknown top key", rep('kind = "gpu"', 'kind = "gpu"\ncolour = "red"'), "colour: unknown key"),
    ("float for int", rep("sms = 15 ", "sms = 15.0 "), "hardware.sms: must be an integer, got float 15.0"),
    ("bool for int", rep("sms = 15 ", "sms = true "), "hardware.sms: must be an integer, got boolean True"),
    ("string for float", rep("clock_mhz = 745.0", 'clock_mhz = "745"'),
     "hardware.clock_mhz: must be a number, got string '745'"),
    ("bool for float", rep("clock_mhz = 745.0", "clock_mhz = false"),
     "hardware.clock_mhz: must be a number, got boolean"),
    ("zero size", rep("sms = 15 ", "sms = 0 "), "hardware.sms: must be > 0, got 0"),
    ("negative size", rep("l1_bytes = 16384", "l1_bytes = -16384"), "hardware.l1_bytes: must be > 0"),
    ("huge size", rep("l1_bytes = 16384", "l1_bytes = 9223372036854775807"), "hardware.l1_bytes: is too large"),
    ("zero clock", rep("clock_mhz = 745.0", "clock_mhz = 0.0"), "hardware.clock_mhz: must be > 0"),
    ("nan bandwidth", rep("dram_bandwidth_gbs = 288.0", "dram_bandwidth_gbs = nan"),
     "hardware.dram_bandwidth_gbs: must be finite"),
    ("negative launch", rep("launch_overhead_ns = 5000.0", "launch_overhead_ns = -1.0"),
     "hardware.launch_overhead_ns: must be >= 0"),
    ("l2 sets", rep("l2_bytes = 1572864", "l2_bytes = 1572865"),
     "hardware.l2_bytes: 1572865 is not a multiple of l2_ways x l2_line_bytes = 2048"),
    ("line vs sector", rep("sector_bytes = 32", "sector_bytes = 48"),
     "hardware.l2_line_bytes: 128 is not a multiple of sector_bytes = 48"),
    ("block vs sector", rep("dram_block_bytes = 256", "dram_block_bytes = 200"),
     "hardware.dram_block_bytes: 200 is not a multiple"),
    ("block too big", rep("max_threads_per_block = 1024", "max_threads_per_block = 4096"),
     "hardware.max_threads_per_block: 4096 exceeds max_warps_per_sm x warp_size = 2048"),
    ("lengths differ", rep("ns = [268.456, ", "ns = ["), "service.l2_hit: mlp has 19 points but ns has 18"),
    ("one point", sub(r"(\[service.l2_hit\]\n)mlp = .*\nns = .*\n", r"\1mlp = [1]\nns = [5.0]\n"),
     "service.l2_hit: needs at least 2 points, got 1"),
    ("mlp order", rep("mlp = [1, 2, 4,", "mlp = [1, 4, 2,", 1),
     r"service.l2_hit: mlp must be strictly increasing \(mlp\[2\] = 2 after 4\)"),
    ("mlp zero", rep("mlp = [1, 2, 4,", "mlp = [0, 2, 4,", 1), r"service.l2_hit: mlp\[0\] must be > 0, got 0"),
    ("ns zero", rep("0.5, 0.5]", "0.5, 0.0]"), r"service.row_miss: ns\[18\] must be > 0"),
    ("ns rises", rep("[805.369, 402.685", "[805.369, 902.685"),
     r"service.row_hit: ns must not increase with mlp \(ns\[1\] = 902.685 after 805.369\)"),
    ("ns string", rep("[805.369,", '["805.369",'), r"service.row_hit.ns\[0\]: must be a number, got string"),
    ("ns not array", sub(r"(\[service.row_hit\]\nmlp = .*\n)ns = .*\n", r"\1ns = 5.0\n"),
     "service.row_hit.ns: must be an array"),
    ("curve key typo", rep("[service.l2_hit]\n", "[service.l2_hit]\nmpl = [1, 2]\n"),
     "service.l2_hit.mpl: unknown key"),
    ("no l2 curve", drop("service.l2_hit"), "service.l2_hit: missing key"),
    ("half a split", drop("service.row_miss"), r"service.row_miss: missing key \(service.row_hit needs it\)"),
    ("split and dram", append("\n[service.dram]\n" + TWO_POINTS), "either row_hit and row_miss, or dram"),
    ("no dram curve", drop("service.row_miss", "service.row_hit"), "service: needs row_hit and row_miss"),
    ("unknown curve", append("\n[service.l3_hit]\n" + TWO_POINTS), "service.l3_hit: unknown key"),
    ("measured string", rep("measured = false", 'measured = "no"'), "service.measured: must be true or false"),
    ("device unmeasured", rep("measured = false", 'measured = false\ndevice = "K40c"'),
     "service.device: only belongs to a measured profile"),
    ("date type", rep("measured = false", "measured = true\ndate = 2024-05-01"),
     "service.date: must be a string, got date"),
    ("empty provenance", sub(r"\nprovenance = .*", '\nprovenance = "  "'), "service.provenance: must not be empty"),
    ("no kind", rep('kind = "gpu"\n', ""), "kind: missing key"),
    ("bad kind", rep('kind = "gpu"', 'kind = "tpu"'), "kind: must be \"gpu\" or \"cpu\", got string 'tpu'"),
    ("bad name", rep('name = "k40c"', 'name = "k 40c"'), "name: must be letters"),
    ("hardware not a table", lambda t: drop_table(t, "hardware").replace('kind = "gpu"', 'kind = "gpu"\nhardware = 5'),
     "hardware: must be a table, got integer 5"),
    ("not utf-8", lambda t: t.encode() + b"# \xff\n", "not UTF-8 text"),
    ("no device", drop("device"), "device: missing key"),
    ("device not a table", lambda t: drop_table(t, "device").replace('kind = "gpu"', 'kind = "gpu"\ndevice = "K40c"'),
     "device: must be a table, got string 'K40c'"),
    ("device key", rep('compute_capability = "3.5"', 'compute_capability = "3.5"\nsms = 15'),
     "device.sms: unknown key"),
    ("capability form", rep('compute_capability = "3.5"', 'compute_capability = "sm_35"'),
     r"device.compute_capability: must be MAJOR.MINOR such as \"9.0\", got 'sm_35'"),
    ("capability number", rep('compute_capability = "3.5"', "compute_capability = 3.5"),
     "device.compute_capability: must be a string, got float 3.5"),
    ("empty device name", rep('name = "Tesla K40c"', 'name = " "'), "device.name: must not be empty"),
    ("no grid scan", sub(r"\ngrid_scan_ns = .*", ""), "hardware.grid_scan_ns: missing key"),
    ("negative grid scan", rep("grid_scan_ns = 0.0", "grid_scan_ns = -5.0"),
     "hardware.grid_scan_ns: must be >= 0, got -5"),
    ("measured without its run", rep("measured = false", "measured = true"),
     r"service.device: missing key \(a measured profile names the device, driver, date and command"),
    ("run origin unmeasured", append("\n[provenance]\n" + "".join(f'{k} = "device"\n' for k in GPU_HARDWARE_KEYS)),
     r"provenance.warp_size: 'device' names the run in \[service\], which only a measured profile"),
    ("provenance incomplete", append('\n[provenance]\nsms = "spec"\n'), "provenance.warp_size: missing key"),
]

CPU_CASES = [
    ("levels shrink", rep("bytes = 262144", "bytes = 16384"),
     r"levels\[1\].bytes: 16384 must be larger than levels\[0\].bytes = 32768"),
    ("level sets", rep("bytes = 25165824", "bytes = 25165825"),
     r"levels\[2\].bytes: 25165825 is not a multiple of ways x line_bytes = 1536"),
    ("level key", rep("ways = 24", "ways = 24\nassoc = 24"), r"levels\[2\].assoc: unknown key"),
    ("level missing", rep("service_ns = 1.33", ""), r"levels\[0\].service_ns: missing key"),
    ("level names", rep('name = "L2"', 'name = "L1"'), r"levels\[1\].name: 'L1' appears twice"),
    ("no memory", drop("memory"), "memory: missing key"),
    ("no levels", sub(r"\[\[levels\]\]\n(.+\n)+\n", ""), "levels: missing key"),
    ("zero line", rep("line_bytes = 64", "line_bytes = 0"), "hardware.line_bytes: must be > 0"),
    ("gpu key", rep("line_bytes = 64", "line_bytes = 64\nsms = 4"), "hardware.sms: unknown key"),
    ("curve in cpu", append("\n[service.l2_hit]\n" + TWO_POINTS), "service.l2_hit: unknown key"),
    ("memory zero", sub(r"\[memory\]\nservice_ns = .*", "[memory]\nservice_ns = 0"), "memory.service_ns: must be > 0"),
]


@pytest.mark.parametrize("base, mutate, fragment",
                         [pytest.param(K40C_TEXT, m, f, id=f"gpu-{i}") for i, m, f in GPU_CASES]
                         + [pytest.param(WESTMERE_TEXT, m, f, id=f"cpu-{i}") for i, m, f in CPU_CASES])
def test_each_mistake_is_one_line_naming_the_key(tmp_path, base, mutate, fragment):
    text = mutate(base)
    assert text != base, "the mutation did not apply"
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as error:
        load_profile(str(path))
    message = str(error.value)
    assert message.startswith(f"profile {path}: ") and "\n" not in message
    assert re.search(fragment, message), message


def test_a_profile_without_the_row_split_loads(tmp_path):
    text = drop_table(drop_table(K40C_TEXT, "service.row_miss"), "service.row_hit")
    text += "\n[service.dram]\nmlp = [1, 8192]\nns = [805.0, 0.111]\n"
    profile = load_profile(write(tmp_path, text))
    assert not profile.has_row_split and sorted(profile.curves) == ["dram", "l2_hit"]
    assert profile.curves["dram"](1) == 805.0


# --------------------------------------------------------------------------------------------
# Robustness: garbage and mutations either load or raise ProfileError, never anything else.

@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "p.toml"


def load_or_profile_error(path, data):
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass"))
    try:
        return load_profile(str(path))
    except ProfileError as error:
        assert "\n" not in str(error)
        return None


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200),
                 st.text(alphabet="[]=\"'.,{}#\n 0123456789abcdefghijklmnopqrstuvwxyz_-+e", max_size=300)))
def test_garbage_never_escapes_as_another_error(scratch, data):
    load_or_profile_error(scratch, data)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([K40C_TEXT, WESTMERE_TEXT]), st.data())
def test_text_mutations_load_or_raise_profile_error(scratch, base, data):
    text = base
    for _ in range(data.draw(st.integers(1, 3))):
        start = data.draw(st.integers(0, len(text)))
        end = data.draw(st.integers(start, min(len(text), start + 40)))
        tokens = ["0", "-1", "1e400", "nan", "true", '"x"', "[]", "{}", "\n[x]\n", "=", "1_0"]
        insert = data.draw(st.one_of(st.just(""), st.text(max_size=12), st.sampled_from(tokens)))
        text = text[:start] + insert + text[end:]
    load_or_profile_error(scratch, text)


SCALARS = st.one_of(
    st.integers(-3, 2**70), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
    st.text(alphabet="abc xyz-1.", max_size=8),
    st.lists(st.one_of(st.integers(-2, 10), st.floats(-1, 1e3)), max_size=4),
)
VALUES = st.one_of(SCALARS, st.dictionaries(st.sampled_from(["mlp", "ns", "x"]), SCALARS, max_size=3))


def paths_of(doc, prefix=()):
    for key, value in doc.items():
        yield prefix + (key,)
        if isinstance(value, dict):
            yield from paths_of(value, prefix + (key,))
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    yield from paths_of(item, prefix + (key, i))


def mutate(doc: dict, data, values, new_keys) -> dict:
    """1-3 random edits of a parsed profile: set a value (drawn from `values`), delete one, or add
    a key of `new_keys`; stops early if the document empties."""
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(list(paths_of(doc))))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["set", "delete", "add"]))
        if action == "set":
            parent[path[-1]] = data.draw(values)
        elif action == "delete":
            del parent[path[-1]]
        else:
            parent[data.draw(st.sampled_from(new_keys))] = data.draw(VALUES)
        if not doc:
            break
    return doc


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([K40C_TEXT, WESTMERE_TEXT]), st.data())
def test_structured_mutations_load_or_raise_profile_error(scratch, base, data):
    doc = mutate(tomllib.loads(base), data, VALUES, ["extra", "mlp", "dram", "row_hit", "ways"])
    load_or_profile_error(scratch, naive_dumps(doc))


def test_naive_dumps_round_trips_the_shipped_files():
    for text in (K40C_TEXT, WESTMERE_TEXT):
        assert tomllib.loads(naive_dumps(tomllib.loads(text))) == tomllib.loads(text)


# --------------------------------------------------------------------------------------------
# Writing measured curves

def test_write_gpu_curves_round_trip(tmp_path):
    base = load_profile("k40c")
    target = tmp_path / "k40c_measured.toml"
    provenance = dict(MEASURED, command='bench --name "k40c" C:\\tmp\\x', device="Tesla K40c — ECC off\tfan 40%")
    curves = {"l2_hit": ([1, 2, 4], [268.5, 134.25, 0.1 + 0.2]),
              "dram": (np.array([1.0, 3.5, 4096.0]), [805.0, 230.0, 0.111])}
    write_gpu_curves(target, base, curves, provenance)
    loaded = load_profile(str(target), kind="gpu")
    assert loaded.measured is True and loaded.provenance == provenance and loaded.path == str(target)
    assert loaded.curves == {"l2_hit": Curve([1, 2, 4], [268.5, 134.25, 0.1 + 0.2]),
                             "dram": Curve([1, 3.5, 4096], [805, 230, 0.111])}
    assert not loaded.has_row_split
    same = ("name", "description", "warp_size", "sms", "max_warps_per_sm", "max_blocks_per_sm", "max_threads_per_block",
            "l1_bytes", "l2_bytes", "l2_ways", "l2_line_bytes", "sector_bytes", "dram_block_bytes", "row_buffers",
            "clock_mhz", "dram_bandwidth_gbs", "l2_bandwidth_gbs", "launch_overhead_ns")
    assert all(getattr(loaded, key) == getattr(base, key) for key in same)
    # writing again over the file replaces it
    write_gpu_curves(target, loaded, {key: (c.mlp, c.ns) for key, c in base.curves.items()}, MEASURED)
    assert load_profile(target).curves == base.curves and load_profile(target).has_row_split


@settings(max_examples=40, deadline=None)
@given(st.dictionaries(st.sampled_from(["provenance", "device", "driver", "date", "command"]),
                       st.text(min_size=1, max_size=30).filter(str.strip), min_size=5, max_size=5),
       st.lists(st.floats(1e-3, 1e6), min_size=2, max_size=6, unique=True),
       st.lists(st.floats(1e-4, 1e4), min_size=6, max_size=6))
def test_write_gpu_curves_round_trips_any_text_and_numbers(scratch, provenance, mlp, ns):
    mlp = sorted(mlp)
    ns = sorted(ns[: len(mlp)], reverse=True)
    curves = {"l2_hit": (mlp, ns), "row_hit": (mlp, ns), "row_miss": (mlp, ns)}
    write_gpu_curves(scratch, load_profile("h100"), curves, provenance)
    loaded = load_profile(scratch)
    assert loaded.provenance == provenance
    assert loaded.curves["row_miss"].mlp.tolist() == mlp and loaded.curves["row_miss"].ns.tolist() == ns


GOOD_CURVES = {"l2_hit": ([1, 2], [2.0, 1.0]), "dram": ([1, 2], [2.0, 1.0])}


@pytest.mark.parametrize("curves, provenance, fragment", [
    ({"l2_hit": ([1, 2], [1.0, 2.0]), "dram": ([1, 2], [2.0, 1.0])}, MEASURED, "service.l2_hit: ns must not increase"),
    ({"l2_hit": ([1, 2], [2.0, 1.0])}, MEASURED, "service: needs row_hit and row_miss"),
    (dict(GOOD_CURVES, l3=([1, 2], [2.0, 1.0])), MEASURED, "service.l3: unknown curve"),
    (GOOD_CURVES, {"provenance": "x"}, "service.device: a measured profile needs it"),
    (GOOD_CURVES, dict(MEASURED, host="x"), "service.host: unknown provenance key"),
    (GOOD_CURVES, dict(MEASURED, date="\ud800"), "lone surrogate"),
])
def test_write_gpu_curves_refuses_bad_input_and_writes_nothing(tmp_path, curves, provenance, fragment):
    target = tmp_path / "out.toml"
    with pytest.raises(ProfileError, match=fragment):
        write_gpu_curves(target, load_profile("k40c"), curves, provenance)
    assert list(tmp_path.iterdir()) == []


def test_write_gpu_curves_target_problems(tmp_path):
    good = GOOD_CURVES
    with pytest.raises(ProfileError, match="must end in .toml"):
        write_gpu_curves(tmp_path / "out.txt", load_profile("k40c"), good, MEASURED)
    with pytest.raises(InputError, match="does not exist"):
        write_gpu_curves(tmp_path / "no" / "out.toml", load_profile("k40c"), good, MEASURED)
    with pytest.raises(InputError, match="needs a GPUProfile"):
        write_gpu_curves(tmp_path / "out.toml", load_profile("westmere"), good, MEASURED)


def test_an_unmeasured_profile_may_say_where_each_value_comes_from(tmp_path):
    table = "".join(f'{k} = "spec"\n' for k in GPU_HARDWARE_KEYS)
    table = table.replace('l2_ways = "spec"', 'l2_ways = "assumed: unpublished"')
    profile = load_profile(write(tmp_path, K40C_TEXT + "\n[provenance]\n" + table))
    assert profile.field_provenance("sms") == {"source": "spec"}  # no run to name: measured = false
    assert profile.field_provenance("l2_ways") == {"source": "assumed: unpublished"}
    assert load_profile("k40c").field_provenance("sms") == {}  # the shipped files note it in comments


# --------------------------------------------------------------------------------------------
# Shipped GPU profiles: the device each describes, and the per-launch constants said outright

def test_every_gpu_profile_states_its_per_launch_constants():
    for name in GPUS:
        profile = load_profile(name)
        lines = [line for line in Path(profile.path).read_text(encoding="utf-8").splitlines()
                 if line.startswith(("grid_scan_ns =", "launch_overhead_ns =")) and '"' not in line]  # not [provenance]
        assert len(lines) == 2, name  # never a silent default
        if profile.grid_scan_ns == 0.0:  # the papers' profiles: not measured there
            assert "# unknown: not measured on this GPU" in lines[1], name
    assert load_profile("h200").grid_scan_ns == 5080.0  # measured (tests/fixtures/overheads/h200.json)
    assert load_profile("h100").grid_scan_ns == 5120.0  # measured (tests/fixtures/overheads/h100.json)


def test_opmachine_exports_curve():
    import opmachine

    assert opmachine.Curve is Curve and "Curve" in opmachine.__all__


def test_measured_h200_provenance_of_curves():
    h200 = load_profile("h200")
    assert h200.field_provenance("l2_hit") == h200.provenance and h200.field_provenance("dram") == {}
    assert h200.field_provenance("sms") == {}  # its [hardware] notes are comments


# --------------------------------------------------------------------------------------------
# A measured profile with a [provenance] table (what gpu_validate.profile_gpu writes)

K40C = load_profile("k40c")
RUN = dict(MEASURED, device="Tesla K40c")
SOURCES = {key: "spec" for key in GPU_HARDWARE_KEYS} | {
    "sms": "device: cudaDevAttrMultiProcessorCount", "launch_overhead_ns": "measured: empty launches",
    "l2_ways": "base k40c: assumed", "row_buffers": "option: --row-buffers 192", "grid_scan_ns": "unknown"}
GPU_FIELDS = dict(name="k40c_measured", description="a K40c, measured", device_name="Tesla K40c",
                  compute_capability="3.5", hardware={key: getattr(K40C, key) for key in GPU_HARDWARE_KEYS},
                  curves={key: (c.mlp, c.ns) for key, c in K40C.curves.items()}, provenance=RUN)
MEASURED_TEXT = render_gpu_profile(label="x.toml", hardware_provenance=SOURCES, **GPU_FIELDS)

MEASURED_CASES = [
    ("service device differs", rep('device = "Tesla K40c"', 'device = "Tesla K80"'),
     r"service.device: 'Tesla K80' is not \[device\] name 'Tesla K40c': a measured profile describes the device"),
    ("no driver", sub(r"\ndriver = .*", ""), "service.driver: missing key"),
    ("bad origin", rep('sms = "device: cudaDevAttrMultiProcessorCount"', 'sms = "guess"'),
     "provenance.sms: must start with one of device, measured, option, base, spec, assumed, unknown, got 'guess'"),
    ("base without name", rep('"base k40c: assumed"', '"base: assumed"'), "provenance.l2_ways: 'base' must name"),
    ("base bad name", rep('"base k40c: assumed"', '"base k 40c: assumed"'), "provenance.l2_ways: 'base' must name"),
    ("words before colon", rep('"option: --row-buffers 192"', '"option given: 192"'),
     "provenance.row_buffers: 'option' takes no words before ':'"),
    ("empty note", rep('"measured: empty launches"', '"measured:  "'),
     "provenance.launch_overhead_ns: has ':' but no note"),
    ("unknown key", rep("[provenance]\n", '[provenance]\ncolour = "spec"\n'), "provenance.colour: unknown key"),
    ("missing key", sub(r'\nl2_line_bytes = "spec"', ""), "provenance.l2_line_bytes: missing key"),
    ("not a string", rep('l2_line_bytes = "spec"', "l2_line_bytes = 5"),
     "provenance.l2_line_bytes: must be a string, got integer 5"),
    ("not a table", lambda t: drop_table(t, "provenance").replace('kind = "gpu"', 'kind = "gpu"\nprovenance = "spec"'),
     "provenance: must be a table"),
]


def test_measured_text_loads_with_every_source(tmp_path):
    profile = load_profile(write_profile_text(tmp_path / "m.toml", MEASURED_TEXT).path)
    assert profile.hardware_provenance == SOURCES and profile.device_name == "Tesla K40c"
    assert profile.field_provenance("sms") == {"source": SOURCES["sms"], **{k: RUN[k] for k in
                                                                           ("device", "driver", "date", "command")}}
    assert profile.field_provenance("l2_ways") == {"source": "base k40c: assumed"}  # not from this run
    assert profile.field_provenance("grid_scan_ns") == {"source": "unknown"}


@pytest.mark.parametrize("mutate, fragment", [pytest.param(m, f, id=i) for i, m, f in MEASURED_CASES])
def test_each_provenance_mistake_is_one_line_naming_the_key(tmp_path, mutate, fragment):
    text = mutate(MEASURED_TEXT)
    assert text != MEASURED_TEXT, "the mutation did not apply"
    with pytest.raises(ProfileError) as error:
        load_profile(str(write(tmp_path, text)))
    assert "\n" not in str(error.value) and re.search(fragment, str(error.value)), str(error.value)


def naive_origin(text: str):
    """(origin, base name, note) of a [provenance] entry by one regular expression, or None."""
    match = re.fullmatch(r"\s*(device|measured|option|spec|assumed|unknown|base\s+([A-Za-z0-9][A-Za-z0-9_.+-]*))"
                         r"\s*(?::(.*))?", text, re.S)
    if match is None or (match.group(3) is not None and not match.group(3).strip()):
        return None
    origin = "base" if match.group(1).startswith("base") else match.group(1)
    return origin, match.group(2), (match.group(3) or "").strip()


ORIGIN_TOKENS = ["device", "measured", "option", "base", "spec", "assumed", "unknown", "h200", "guess", ":", " ",
                 "\t", "x", "a.b", "-1", "::", "base h100"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ORIGIN_TOKENS), max_size=6).map("".join))
def test_origin_grammar_matches_the_naive_expression(text):
    expected = naive_origin(text)
    if expected is None:
        with pytest.raises(ValueError):
            hardware_origin(text)
    else:
        assert hardware_origin(text) == expected


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_measured_profile_mutations_load_or_raise_profile_error(scratch, data):
    values = st.one_of(VALUES, st.sampled_from(ORIGIN_TOKENS + ["spec: x", "base h200"]))
    doc = mutate(tomllib.loads(MEASURED_TEXT), data, values, ["extra", "sms", "device", "provenance",
                                                               "compute_capability"])
    load_or_profile_error(scratch, naive_dumps(doc))


NOTES = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["device", "measured", "option", "base k40c", "spec", "assumed", "unknown"]),
                          NOTES), min_size=len(GPU_HARDWARE_KEYS), max_size=len(GPU_HARDWARE_KEYS)))
def test_hardware_provenance_round_trips_any_note(scratch, entries):
    sources = {key: origin + (f": {note}" if note.strip() else "")
               for key, (origin, note) in zip(GPU_HARDWARE_KEYS, entries)}
    profile = write_gpu_profile(scratch, hardware_provenance=sources, **GPU_FIELDS)
    assert profile.hardware_provenance == sources and load_profile(scratch) == profile


def test_write_profile_text_validates_before_it_replaces(tmp_path):
    target = tmp_path / "p.toml"
    write_profile_text(target, MEASURED_TEXT)
    with pytest.raises(ProfileError, match=r"service.driver: missing key"):
        write_profile_text(target, re.sub(r"\ndriver = .*", "", MEASURED_TEXT))
    assert target.read_text(encoding="utf-8") == MEASURED_TEXT and [p.name for p in tmp_path.iterdir()] == ["p.toml"]
    with pytest.raises(ProfileError, match="must end in .toml"):
        write_profile_text(tmp_path / "p.txt", MEASURED_TEXT)


@pytest.mark.parametrize("change, fragment", [
    (dict(hardware={k: v for k, v in GPU_FIELDS["hardware"].items() if k != "grid_scan_ns"}),
     "hardware.grid_scan_ns: missing key"),
    (dict(hardware=dict(GPU_FIELDS["hardware"], sms=2.5)), "hardware.sms: must be an integer"),
    (dict(hardware=dict(GPU_FIELDS["hardware"], clock_mhz="fast")), "hardware.clock_mhz: must be a number"),
    (dict(hardware=dict(GPU_FIELDS["hardware"], colour=1)), "hardware.colour: unknown key"),
    (dict(compute_capability="9"), "device.compute_capability: must be MAJOR.MINOR"),
    (dict(device_name="Tesla K80"), r"service.device: 'Tesla K40c' is not \[device\] name 'Tesla K80'"),
])
def test_write_gpu_profile_refuses_bad_fields_and_writes_nothing(tmp_path, change, fragment):
    with pytest.raises(ProfileError, match=fragment):
        write_gpu_profile(tmp_path / "p.toml", **dict(GPU_FIELDS, **change))
    assert list(tmp_path.iterdir()) == []


def test_write_gpu_curves_passes_a_base_provenance_on(tmp_path):
    base = write_profile_text(tmp_path / "base.toml", MEASURED_TEXT)
    write_gpu_curves(tmp_path / "again.toml", base, GPU_FIELDS["curves"], RUN)
    again = load_profile(tmp_path / "again.toml")
    assert again.hardware_provenance == {k: f"base k40c_measured: {v}" for k, v in SOURCES.items()}
    assert again.field_provenance("sms") == {"source": "base k40c_measured: device: cudaDevAttrMultiProcessorCount"}
