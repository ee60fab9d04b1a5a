"""The GPU sweep of the microbenchmarks: sizes, configurations and timed launches (CuPy, imported lazily).

`make_setup` picks the sweep for a GPU profile (resident warps 1, 2, 4, ... up to the whole GPU,
chains per warp, buffer sizes, repeats, launch length); `measure` runs it on the current GPU
(`gpu_validate/cuda/microbench.cu`: dependent pointer chases, CUDA events around one launch after a
warm-up, L2 flushed before every DRAM launch) and returns the raw table that `raw` checks and turns
into curves; `check_device` refuses a base profile of another GPU.
"""
from __future__ import annotations

import importlib.resources
import math
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simdmodel.errors import InputError

from ..device import require_gpu
from .raw import CURVES, RAW_COLUMNS, SECTOR_BYTES, SIDE_CURVES, check_raw

SAME_PER_WARP = (1, 2, 4, 8)  # l2_same: chains of the warp's single active lane
WORDS_PER_SECTOR = SECTOR_BYTES // 4
L1_BYTES = 2**14  # the side measurement's buffer: well inside L1 whatever the shared-memory carve-out
CHAIN_KERNELS = (1, 2, 4, 8)  # chains per lane with a kernel (mb_chase_C)

PER_WARP_FULL = (1, 2, 4, 8, 16, 32, 64, 128)
PER_WARP_QUICK = (1, 4, 32, 128)


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



def microbench_module(cupy):
    """`gpu_validate/cuda/microbench.cu` built with NVRTC as it is (no include paths): the chase and touch
    kernels of the sweep and of `gpu_validate.l2_probe`."""
    source = importlib.resources.files("gpu_validate").joinpath("cuda/microbench.cu").read_text(encoding="utf-8")
    return cupy.RawModule(code=source, options=("-std=c++17",))


def cycle_buffer(cupy, order):
    """The sector words of a random cyclic chase through `order` (a permutation of the sectors, NumPy or
    CuPy): the first word of sector order[i] holds order[i + 1], the last points back to the first."""
    order = cupy.asarray(order)
    buf = cupy.zeros(order.size * WORDS_PER_SECTOR, dtype=cupy.uint32)
    buf[order.astype(cupy.int64) * WORDS_PER_SECTOR] = cupy.roll(order, -1)
    return buf


class _Bench:
    """Buffers and kernels on the GPU; `time_config` times one (curve, warps, per_warp)."""

    def __init__(self, cupy, setup: Setup, seed: int):
        self.cp = cupy
        self.setup = setup
        self.rng = np.random.default_rng(seed)
        self.module = microbench_module(cupy)
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
        order = gen.permutation(sectors).astype(self.cp.uint32)
        return cycle_buffer(self.cp, order), order, sectors

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
    from ..device import check_profile_device

    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    sms = int(props["multiProcessorCount"])
    warps = int(props["maxThreadsPerMultiProcessor"]) // 32
    if (sms, warps) != (profile.sms, profile.max_warps_per_sm):
        raise InputError(f"{name} has {sms} SMs x {warps} warps but profile {profile.name} has "
                         f"{profile.sms} x {profile.max_warps_per_sm}: pick the matching --base")
    check_profile_device(profile, {"device": name, "sms": sms})

