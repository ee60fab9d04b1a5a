"""Measure a GPU's service curves S(m) and write them into a hardware profile (seed 003 §6.5, Fig. 6).

S(m) is the time per memory request when m requests are in flight: elapsed time / requests served.
A request is one 32-byte sector load (the model's visits are sectors). Three server classes:

- l2_hit: random sectors of a buffer well inside L2, warmed first;
- row_hit: a sequential walk over a buffer far larger than L2 (the lanes of a warp read adjacent
  sectors and each step moves on to the next ones, so consecutive requests share a DRAM row);
- row_miss: random sectors of a buffer far larger than L2 (each request in another row);
- l2_same: every chain on one and the same sector (one lane per warp), so a single L2 slice serves
  every request: the bandwidth of a hot sector, such as the `num_nodes` word every warp re-reads.

The runs with one warp also give each class's `_one_warp` curve: m = per_warp (1..32) requests from
one warp's lanes, so m x S(m) is the latency of one warp-level load of m distinct sectors.

Every load is a dependent pointer chase (`gpu_validate/cuda/microbench.cu`): the loaded word is the
next sector's index, so each chain has exactly one request in flight. A warp runs `per_warp` chains,
one per active lane (up to 32) and then several per lane, so m = warps x per_warp exactly; m is
varied by the number of resident warps (1 .. the whole GPU, spread over the SMs) and by per_warp.
Each configuration is timed with CUDA events around one launch (after a warm-up launch; L2 is
flushed before every DRAM launch), several repeats. The curve at m is the smallest, over the
configurations with that m, of each one's median over repeats, then a running minimum over m
(more requests in flight never make one slower, which the profile schema requires).

    python -m gpu_validate.microbench --base h200 --out opmachine/profiles/h200.toml [--quick] [--raw RAW.csv]

re-measures the curves of the profile of this very GPU (`--base`, whose [device] name and SM count
must be this GPU's) and keeps its hardware section. A whole profile for a GPU, hardware and
per-launch constants included, is `python -m gpu_validate.profile_gpu`, which runs this sweep.

The raw table (one row per timed launch) and the curve extraction are plain pandas/numpy and run
without a GPU; CuPy is imported only to measure.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.resources
import math
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from simdmodel.atomic import check_target, write_text
from simdmodel.errors import InputError

from .device import device_info, require_gpu

CURVES = ("l2_hit", "row_hit", "row_miss", "l2_same")
"""The curves measured here: the profile's server classes (seed 003 Fig. 6) and the same-sector one."""
ONE_WARP = ("l2_hit", "row_hit", "row_miss")
"""Classes whose one-warp runs (warps = 1, per_warp <= 32) also give a `<class>_one_warp` curve."""
SAME_PER_WARP = (1, 2, 4, 8)  # l2_same: chains of the warp's single active lane
SIDE_CURVES = ("l1_ca", "l1_cg")
"""Side measurement: an L1-resident buffer read with ld.global.ca (through L1) and .cg (L2 only)."""
RAW_COLUMNS = ("curve", "warps", "per_warp", "mlp", "requests", "elapsed_ns", "ns_per_request")
SECTOR_BYTES = 32
WORDS_PER_SECTOR = SECTOR_BYTES // 4
L1_BYTES = 2**14  # the side measurement's buffer: well inside L1 whatever the shared-memory carve-out
CHAIN_KERNELS = (1, 2, 4, 8)  # chains per lane with a kernel (mb_chase_C)

PER_WARP_FULL = (1, 2, 4, 8, 16, 32, 64, 128)
PER_WARP_QUICK = (1, 4, 32, 128)


# ----------------------------------------------------------------------------------------------
# Raw table -> curves (no GPU)


def _one_line(text) -> str:
    return " ".join(str(text).split())


def check_raw(table: pd.DataFrame, label: str = "raw table") -> pd.DataFrame:
    """Validate a raw measurement table and return it typed (ints, floats); InputError names the row.

    Rules: the RAW_COLUMNS are present; curve is a known name; warps, per_warp, requests are
    integers >= 1 with mlp = warps x per_warp and requests a multiple of mlp; elapsed_ns > 0 and
    finite; ns_per_request = elapsed_ns / requests (relative 1e-6).
    """
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"{label}: expected a table, got {type(table).__name__}")
    missing = [c for c in RAW_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(f"{label}: missing column(s) {', '.join(missing)} (needs {', '.join(RAW_COLUMNS)})")
    if table.empty:
        raise InputError(f"{label}: no rows")
    out = pd.DataFrame({"curve": table["curve"].astype(str).str.strip()})
    known = CURVES + SIDE_CURVES
    bad = ~out["curve"].isin(known)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{label}: row {i + 1}: unknown curve {_one_line(out['curve'].iloc[i])[:40]!r} "
                         f"(known: {', '.join(known)})")
    for column in ("warps", "per_warp", "mlp", "requests", "elapsed_ns", "ns_per_request"):
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values) | (values <= 0)
        if column not in ("elapsed_ns", "ns_per_request"):
            bad |= np.isfinite(values) & ((values != np.round(values)) | (values > 2**62))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            kind = "a number > 0" if column in ("elapsed_ns", "ns_per_request") else "an integer >= 1"
            raise InputError(f"{label}: row {i + 1}: {column} must be {kind}, got "
                             f"{_one_line(table[column].iloc[i])[:40]!r}")
        out[column] = values.astype(np.int64) if column not in ("elapsed_ns", "ns_per_request") else values
    checks = (
        (out["mlp"] != out["warps"] * out["per_warp"], "mlp must equal warps x per_warp"),
        (out["requests"] % out["mlp"] != 0, "requests must be a multiple of mlp (steps x chains)"),
        (~np.isclose(out["ns_per_request"], out["elapsed_ns"] / out["requests"], rtol=1e-6, atol=0),
         "ns_per_request must equal elapsed_ns / requests"),
    )
    for bad, message in checks:
        bad = np.asarray(bad, dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{label}: row {i + 1}: {message}")
    return out


def read_raw(path) -> pd.DataFrame:
    """Read and validate a raw measurement CSV (columns RAW_COLUMNS); InputError on any problem."""
    path = Path(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as error:
        raise InputError(f"{path}: not a readable CSV table ({_one_line(error)[:120]})") from None
    return check_raw(table, str(path))


def _round6(x: np.ndarray) -> np.ndarray:
    """Round to 6 significant digits (monotone, so a non-increasing array stays non-increasing)."""
    return np.array([float(f"{v:.6g}") for v in x], dtype=np.float64)


def config_medians(raw: pd.DataFrame) -> pd.DataFrame:
    """Median ns_per_request over repeats for each (curve, warps, per_warp), with its mlp."""
    raw = check_raw(raw)
    return (raw.groupby(["curve", "warps", "per_warp", "mlp"], as_index=False)["ns_per_request"].median()
            .sort_values(["curve", "mlp", "warps"], kind="stable").reset_index(drop=True))


def curve_samples(raw: pd.DataFrame, curves=None, across: str = "min") -> dict[str, tuple[list[float], list[float]]]:
    """S(m) samples (mlp, ns) per curve from a raw table, ready for `write_gpu_curves`.

    For each configuration (warps, per_warp) the median over its repeats; for each m the smallest
    (`across="min"`, the default) or the median (`"median"`) of the configurations with that m;
    then a running minimum over increasing m (S must not increase with m, as the profile requires);
    then 6 significant digits. The smallest is the server's best rate at that m: splits of the
    same m differ in how they use the SMs and, for row_hit, in how many streams share the open
    rows (32 adjacent sectors per warp keep rows open; 8448 one-sector streams do not).
    `curves` defaults to the CURVES the table holds.
    """
    if across not in ("min", "median"):
        raise InputError(f"across must be 'min' or 'median', got {across!r}")
    medians = config_medians(raw)
    if curves is None:
        curves = [name for name in CURVES if (medians["curve"] == name).any()]
    out = {}
    for name in curves:
        rows = medians[medians["curve"] == name]
        by_mlp = rows.groupby("mlp")["ns_per_request"].agg(across).sort_index()
        if len(by_mlp) < 2:
            raise InputError(f"raw table: curve {name} needs at least 2 distinct mlp values, got {len(by_mlp)}")
        ns = _round6(np.minimum.accumulate(by_mlp.to_numpy(dtype=np.float64)))
        out[name] = ([float(m) for m in by_mlp.index], ns.tolist())
    return out


def one_warp_samples(raw: pd.DataFrame) -> dict[str, tuple[list[float], list[float]]]:
    """`<class>_one_warp` samples (mlp = per_warp, 1..32, ns) from the runs with a single warp: the
    median over repeats, a running minimum over m, 6 significant digits. Classes without at least
    two such runs are left out."""
    medians = config_medians(raw)
    out = {}
    for name in ONE_WARP:
        rows = medians[(medians["curve"] == name) & (medians["warps"] == 1) & (medians["per_warp"] <= 32)]
        rows = rows.sort_values("per_warp")
        if len(rows) >= 2:
            ns = _round6(np.minimum.accumulate(rows["ns_per_request"].to_numpy(dtype=np.float64)))
            out[f"{name}_one_warp"] = ([float(m) for m in rows["per_warp"]], ns.tolist())
    return out


def side_numbers(raw: pd.DataFrame) -> dict[str, float]:
    """S(1) in ns for each side curve present (l1_ca, l1_cg): median over repeats at mlp 1."""
    medians = config_medians(raw)
    one = medians[medians["mlp"] == 1]
    return {name: float(one.loc[one["curve"] == name, "ns_per_request"].median())
            for name in SIDE_CURVES if (one["curve"] == name).any()}


def hardware_notes(path) -> dict[str, str]:
    """The trailing `# note` of each key in a profile file's [hardware] table (where a number comes from)."""
    notes, section = {}, None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        header = re.match(r"\s*\[([^\]]*)\]", line)
        if header:
            section = header.group(1).strip()
            continue
        match = re.match(r"\s*([A-Za-z0-9_]+)\s*=\s*[^#\"']*#\s*(.*\S)\s*$", line)
        if section == "hardware" and match:
            notes[match.group(1)] = match.group(2)
    return notes


def method_comment(samples: dict, side: dict, setup: dict) -> str:
    """The profile's header comment: how the curves were measured, and their end points."""
    paragraphs = [
        ("Service curves measured by gpu_validate.microbench (gpu_validate/cuda/microbench.cu). A request "
        "is one 32-byte sector load with ld.global.cg (L2 only: the model has no L1), and every load is "
        "a dependent pointer chase (the loaded word is the next sector), so each chain has exactly one "
        "request in flight. m = warps x per_warp: resident warps (1, 2, 4, ... up to sms x "
        "max_warps_per_sm, one warp per block, two when blocks run out, spread over the SMs) times "
        f"chains per warp (per_warp = {', '.join(map(str, setup['per_warp']))}: one per active lane up to "
        "32, then 2 or 4 per lane). S(m) = elapsed / requests, timed with CUDA events around one launch "
        f"of about {setup['target_ms']:g} ms after a warm-up launch, median of {setup['repeats']} repeats; "
        f"then the {'smallest' if setup.get('across', 'min') == 'min' else 'median'} over the (warps, "
        "per_warp) splits with the same m (splits differ in how they use the SMs and, for row_hit, in "
        "how many streams share the open rows), a running minimum over m (S must not increase with m), "
        "6 significant digits. The raw table keeps every split."),
        (f"l2_hit: random cyclic chase over a warmed {setup['l2_mib']:g} MiB buffer. row_miss: random "
        f"cyclic chase over {setup['dram_mib']:g} MiB (each hop another DRAM row). row_hit: sequential "
        f"walk over {setup['dram_mib']:g} MiB, the lanes of a warp on adjacent sectors and each step the "
        f"next ones, so a DRAM row serves many requests in a row. L2 is flushed (a {setup['flush_mib']:g} "
        "MiB read) before every DRAM launch."),
        ("l2_same: every chain (one lane per warp, per_warp = 1, 2, 4, 8 chains) on the same sector, so "
         "one L2 slice serves them all. <class>_one_warp: the runs with one warp, m = per_warp = 1..32 "
         "lanes on distinct sectors, so m x S(m) is the latency of one warp-level load of m sectors."),
        "Measured: " + "; ".join(f"{k} S(1) = {ns[0]:.4g} ns, S({mlp[-1]:.0f}) = {ns[-1]:.4g} ns "
                                 f"({SECTOR_BYTES / ns[-1]:.0f} GB/s)" for k, (mlp, ns) in samples.items()
                                 if k in CURVES) + ".",
        "One warp, m = 32: " + "; ".join(f"{k.removesuffix('_one_warp')} {mlp[-1] * ns[-1]:.4g} ns"
                                         for k, (mlp, ns) in samples.items() if k.endswith("_one_warp")) + ".",
    ]
    if side:
        paragraphs.append("L1 side number (one lane chasing over an L1-resident 16 KiB buffer): " + ", ".join(
            f"{k.replace('l1_', 'ld.global.')} S(1) = {v:.4g} ns" for k, v in side.items()) + ".")
    return "\n".join(line for text in paragraphs for line in textwrap.wrap(text, 98))


# ----------------------------------------------------------------------------------------------
# Measuring (CuPy, imported lazily)


@dataclass(frozen=True)
class Setup:
    """Sizes and sweep of one measurement run."""

    l2_bytes: int
    dram_bytes: int
    flush_bytes: int
    warps: tuple[int, ...]
    per_warp: tuple[int, ...]
    repeats: int
    target_ns: float
    blocks_limit: int  # blocks resident at once (sms x max_blocks_per_sm)

    def as_comment(self) -> dict:
        return {"l2_mib": self.l2_bytes / 2**20, "dram_mib": self.dram_bytes / 2**20,
                "flush_mib": self.flush_bytes / 2**20, "per_warp": self.per_warp,
                "repeats": self.repeats, "target_ms": self.target_ns / 1e6}


def _pow2_floor(x: float) -> int:
    return 1 << max(math.floor(math.log2(max(x, 1))), 0)


def make_setup(profile, quick: bool = False, repeats: int | None = None, dram_mib: int | None = None,
               l2_mib: int | None = None, target_ms: float | None = None) -> Setup:
    """The sweep for a GPU profile: warps 1, 2, 4, ... up to all physical warps (and that number),
    per_warp PER_WARP_FULL (PER_WARP_QUICK and every fourth power of two with `quick`)."""
    physical = profile.sms * profile.max_warps_per_sm
    warps = [1 << k for k in range(physical.bit_length()) if 1 << k <= physical]
    if quick:
        warps = warps[::2]
    if physical not in warps:
        warps.append(physical)
    l2 = (l2_mib * 2**20) if l2_mib else _pow2_floor(profile.l2_bytes / 3)
    dram = (dram_mib * 2**20) if dram_mib else 2**30
    for name, size in (("--l2-mib", l2), ("--dram-mib", dram)):
        if size & (size - 1) or size < 2**15 or size > 2**36:
            raise InputError(f"{name} must be a power of two between 1/32 and 65536 MiB, got {size / 2**20:g}")
    if dram < 8 * profile.l2_bytes:
        raise InputError(f"--dram-mib {dram // 2**20} is not far larger than L2 ({profile.l2_bytes // 2**20} MiB)")
    if l2 > profile.l2_bytes // 2:
        raise InputError(f"--l2-mib {l2 / 2**20:g} is not well inside L2 ({profile.l2_bytes / 2**20:g} MiB)")
    return Setup(l2_bytes=l2, dram_bytes=dram, flush_bytes=_pow2_floor(8 * profile.l2_bytes),
                 warps=tuple(warps), per_warp=PER_WARP_QUICK if quick else PER_WARP_FULL,
                 repeats=repeats or (3 if quick else 5), target_ns=(target_ms or (0.5 if quick else 2.0)) * 1e6,
                 blocks_limit=profile.sms * profile.max_blocks_per_sm)


class _Bench:
    """Buffers and kernels on the GPU; `time_config` times one (curve, warps, per_warp)."""

    def __init__(self, cupy, setup: Setup, seed: int):
        self.cp = cupy
        self.setup = setup
        self.rng = np.random.default_rng(seed)
        source = importlib.resources.files("gpu_validate").joinpath("cuda/microbench.cu").read_text(encoding="utf-8")
        self.module = cupy.RawModule(code=source, options=("-std=c++17",))
        self.kernels = {(c, False): self.module.get_function(f"mb_chase_{c}") for c in CHAIN_KERNELS}
        self.kernels[(1, True)] = self.module.get_function("mb_chase_1_ca")
        self.touch = self.module.get_function("mb_touch")
        self.sink = cupy.zeros(4, dtype=cupy.uint32)
        gen = cupy.random.RandomState(seed)
        self.cycles = {}  # name -> (buffer, cycle order or None, sectors)
        for name, size in (("l2_hit", setup.l2_bytes), ("row_miss", setup.dram_bytes), ("l1", L1_BYTES),
                           ("l2_same", SECTOR_BYTES)):
            self.cycles[name] = self._random_cycle(gen, size // SECTOR_BYTES)
        sectors = setup.dram_bytes // SECTOR_BYTES
        seq = cupy.zeros(sectors * WORDS_PER_SECTOR, dtype=cupy.uint32)
        seq[::WORDS_PER_SECTOR] = (cupy.arange(1, sectors + 1, dtype=cupy.int64) % sectors).astype(cupy.uint32)
        self.cycles["row_hit"] = (seq, None, sectors)
        self.flush_buf = cupy.ones(setup.flush_bytes // 4, dtype=cupy.uint32)
        cupy.cuda.Device().synchronize()

    def _random_cycle(self, gen, sectors: int):
        cp = self.cp
        order = gen.permutation(sectors).astype(cp.uint32)
        buf = cp.zeros(sectors * WORDS_PER_SECTOR, dtype=cp.uint32)
        buf[order.astype(cp.int64) * WORDS_PER_SECTOR] = cp.roll(order, -1)
        return buf, order, sectors

    def _touch(self, buf):
        words = buf.size // 4
        self.touch((1024,), (256,), (buf, np.int64(words), self.sink))

    def _starts(self, name: str, warps: int, lanes: int, chains: int):
        cp = self.cp
        _, order, sectors = self.cycles[name]
        total = warps * chains * lanes
        if order is None:  # sequential: one region per (warp, chain), lanes adjacent, 1 KiB aligned
            region = max(sectors // (warps * chains) // 32 * 32, 32)
            offset = int(self.rng.integers(sectors // 32)) * 32
            stream = cp.arange(warps * chains, dtype=cp.int64).repeat(lanes)
            lane = cp.tile(cp.arange(lanes, dtype=cp.int64), warps * chains)
            return ((stream * region + lane + offset) % sectors).astype(cp.uint32)
        spacing = max(sectors // total, 1)
        offset = int(self.rng.integers(sectors))
        return order[(cp.arange(total, dtype=cp.int64) * spacing + offset) % sectors]

    def _launch(self, name, warps, lanes, chains, steps, ca, flush) -> float:
        """Time one launch in ns (CUDA events; the flush or warm-up before it is not timed)."""
        cp = self.cp
        buf, _, sectors = self.cycles[name]
        starts = self._starts(name, warps, lanes, chains)
        if flush:
            self._touch(self.flush_buf)
        per_block = -(-warps // self.setup.blocks_limit)
        while warps % per_block:
            per_block += 1
        add = lanes - 1 if name == "row_hit" else 0
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        self.kernels[(chains, ca)]((warps // per_block,), (32 * per_block,),
                                   (buf, starts, np.int32(lanes), np.int64(steps), np.uint32(add),
                                    np.uint32(sectors - 1), self.sink))
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e6

    def time_config(self, curve: str, warps: int, per_warp: int, ca: bool = False) -> list[dict]:
        """Rows (one per timed repeat) for `warps` warps of `per_warp` chains each."""
        lanes = 1 if curve == "l2_same" else min(per_warp, 32)  # lanes on one sector would coalesce
        chains = per_warp // lanes
        if lanes * chains != per_warp or (chains, ca) not in self.kernels:
            raise InputError(f"per_warp {per_warp} is not 1..32 or 32 x {CHAIN_KERNELS}")
        name = "l1" if curve in SIDE_CURVES else curve
        flush = curve in ("row_hit", "row_miss")
        if curve == "l2_hit":
            self._touch(self.cycles["l2_hit"][0])
        steps = 32
        for _ in range(2):  # a short probe, then a warm-up at about the target length
            elapsed = self._launch(name, warps, lanes, chains, steps, ca, flush)
            steps = int(min(max(math.ceil(self.setup.target_ns * steps / max(elapsed, 1.0)), 16), 2**26))
        rows = []
        for _ in range(self.setup.repeats):
            elapsed = self._launch(name, warps, lanes, chains, steps, ca, flush)
            requests = warps * per_warp * steps
            rows.append({"curve": curve, "warps": warps, "per_warp": per_warp, "mlp": warps * per_warp,
                         "requests": requests, "elapsed_ns": elapsed, "ns_per_request": elapsed / requests})
        return rows


def _progress(total: int):
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, desc="microbench", unit="config", disable=not sys.stderr.isatty())


def measure(setup: Setup, seed: int = 1, side: bool = True) -> pd.DataFrame:
    """Run the sweep on the current GPU; returns the raw table (RAW_COLUMNS, one row per timed launch)."""
    bench = _Bench(require_gpu(), setup, seed)
    configs = [(curve, w, p, False) for curve in CURVES
               for p in (SAME_PER_WARP if curve == "l2_same" else setup.per_warp) for w in setup.warps]
    if side:
        configs += [("l1_ca", 1, p, True) for p in (1, 32)] + [("l1_cg", 1, p, False) for p in (1, 32)]
    bar = _progress(len(configs))
    rows = []
    for curve, warps, per_warp, ca in configs:
        rows += bench.time_config(curve, warps, per_warp, ca)
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    return check_raw(pd.DataFrame(rows, columns=list(RAW_COLUMNS)))


def check_device(cupy, profile) -> None:
    """InputError unless GPU 0 is the device the base profile describes (its name and SMs) with its
    warps per SM (the sweep fills them)."""
    from .device import check_profile_device

    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    sms = int(props["multiProcessorCount"])
    warps = int(props["maxThreadsPerMultiProcessor"]) // 32
    if (sms, warps) != (profile.sms, profile.max_warps_per_sm):
        raise InputError(f"{name} has {sms} SMs x {warps} warps but profile {profile.name} has "
                         f"{profile.sms} x {profile.max_warps_per_sm}: pick the matching --base")
    check_profile_device(profile, {"device": name, "sms": sms})


def curve_provenance(across: str, by: str = "gpu_validate.microbench") -> str:
    """[service] provenance text of curves measured by this sweep (`by` names the command's module)."""
    via = "" if by == "gpu_validate.microbench" else " (the gpu_validate.microbench sweep)"
    return (f"measured by {by}{via}: dependent pointer chases of 32-byte sectors (ld.global.cg), "
            f"S(m) = elapsed / requests, median over repeats, {across} over warp/chain splits, running minimum over m")


def main(argv=None) -> int:
    """CLI: measure S(m) on this GPU and write the profile (exit 2 with one line on bad input or no GPU)."""
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.microbench",
                                     description="Measure the GPU's service curves S(m) and write a hardware profile.")
    parser.add_argument("--base", required=True, help="profile whose hardware section is kept (name or .toml)")
    parser.add_argument("--out", required=True, help="profile file to write (.toml)")
    parser.add_argument("--raw", help="also write the raw measurements here (CSV)")
    parser.add_argument("--quick", action="store_true", help="fewer warps, splits and repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, help="timed launches per configuration (default 5, quick 3)")
    parser.add_argument("--dram-mib", type=int, help="DRAM buffer size in MiB, a power of two (default 1024)")
    parser.add_argument("--l2-mib", type=int, help="L2 buffer size in MiB, a power of two (default: about L2/3)")
    parser.add_argument("--target-ms", type=float, help="length of each timed launch (default 2, quick 0.5)")
    parser.add_argument("--across", choices=("min", "median"), default="min",
                        help="how the (warps, per_warp) splits of one m are combined (default min)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random chase orders and offsets")
    args = parser.parse_args(argv)
    try:
        from opmachine.profile import load_profile, write_gpu_curves

        if args.repeats is not None and args.repeats < 1:
            raise InputError(f"--repeats must be at least 1, got {args.repeats}")
        if args.target_ms is not None and not 0.01 <= args.target_ms <= 1000:
            raise InputError(f"--target-ms must be in 0.01..1000, got {args.target_ms}")
        out = Path(args.out)
        if out.suffix != ".toml":
            raise InputError(f"{out}: a profile file must end in .toml")
        check_target(out)
        if args.raw:
            check_target(args.raw)
        base = load_profile(args.base, kind="gpu")
        setup = make_setup(base, args.quick, args.repeats, args.dram_mib, args.l2_mib, args.target_ms)
        check_device(require_gpu(), base)
        info = device_info()
        command = "python -m gpu_validate.microbench " + " ".join(sys.argv[1:] if argv is None else argv)
        started = datetime.datetime.now(datetime.UTC)
        raw = measure(setup, args.seed)
        seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
        if args.raw:
            write_text(args.raw, raw.to_csv(index=False, float_format="%.17g"))
        samples = {**curve_samples(raw, across=args.across), **one_warp_samples(raw)}
        side = side_numbers(raw)
        provenance = {
            "provenance": curve_provenance(args.across),
            "device": info["device"],
            "driver": info["driver"],
            "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": command,
        }
        write_gpu_curves(out, base, samples, provenance, comment=method_comment(samples, side, dict(setup.as_comment(), across=args.across)),
                         hardware_notes=hardware_notes(base.path))
    except InputError as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2
    for name, (mlp, ns) in samples.items():
        print(f"{name}: S(1) = {ns[0]:.4g} ns, S({mlp[-1]:.0f}) = {ns[-1]:.4g} ns "
              f"({SECTOR_BYTES / ns[-1]:.0f} GB/s), {len(mlp)} points")
    for name, value in side.items():
        print(f"{name}: S(1) = {value:.4g} ns")
    print(f"sweep: {len(raw)} timed launches in {seconds:.1f} s; wrote {out}" + (f" and {args.raw}" if args.raw else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
