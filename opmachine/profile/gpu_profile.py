"""A GPU profile (seed 003 §6): the device it describes, its geometry, clocks, bandwidths, per-launch
constants, S(m) per server class and, when measured, its instruction costs, checked from the TOML
tables of `schema` (and `instructions`)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError

from .compaction import CompactionCosts, parse_compaction
from .atomic_latency import AtomicLatency, parse_atomic_latency
from .atomics import AtomicCosts, parse_atomics
from .bitmask import BitmaskRates, parse_bitmask
from .gather import GatherRates, parse_gather
from .l1_carveout import L1Carveout, parse_l1_carveout
from .l2_capacity import L2Capacity, parse_l2_capacity
from .l2_partitions import L2Partitions, parse_l2_partitions
from .memory_mix import MemoryMix, parse_memory_mix
from .store_flush import StoreFlush, parse_store_flush
from .curve import Curve
from .instructions import InstructionCosts, parse_instructions
from .schema import (
    CURVE_NAMES,
    GPU_FLOAT_KEYS,
    GPU_INT_KEYS,
    GPU_ZERO_ALLOWED,
    ONE_WARP_CURVES,
    RUN_KEYS,
    RUN_ORIGINS,
    Checker,
    hardware_origin,
    same_device_name,
)

__all__ = ["GPUProfile", "parse_gpu"]


_MEASURED_PARSERS = {"compaction": parse_compaction, "gather": parse_gather, "atomics": parse_atomics,
                     "bitmask": parse_bitmask, "atomic_latency": parse_atomic_latency,
                     "l2_capacity": parse_l2_capacity, "l2_partitions": parse_l2_partitions,
                     "store_flush": parse_store_flush, "memory_mix": parse_memory_mix,
                     "l1_carveout": parse_l1_carveout}
MEASURED_SECTIONS = tuple(_MEASURED_PARSERS)
"""The optional tables a microbenchmark measures, each with its own [TABLE.provenance] and a GPUProfile
field of its name: the order a rendered profile writes them in."""


@dataclass(frozen=True)
class GPUProfile:
    """A GPU for the operator machine (seed 003 §6): geometry, clocks, bandwidths and S(m) per server class.

    `device_name` (as CUDA reports it) and `sms` say which GPU the profile describes (`describes`).
    `provenance` is [service]'s: what the curves are and, when `measured`, the run that measured
    them. `hardware_provenance` maps each [hardware] key to where its value comes from, when the
    file records it (`field_provenance` joins the two). `instructions` holds the measured costs of
    warp instructions and shared-memory accesses ([instructions]), or None where none were measured;
    `compaction` the measured compaction time by graph size ([compaction]), or None; `store_flush` what a
    launch whose blocks store adds at its end ([store_flush]), or None (no such cost); `memory_mix` launches
    of one and two sector classes ([memory_mix]), or None (the classes' servers side by side); `l1_carveout`
    the shared memory configured for each coupled kernel ([l1_carveout]), or None (their bitmask reads all go
    to the L2).
    """

    name: str
    description: str
    path: str
    device_name: str
    compute_capability: str
    warp_size: int
    sms: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    l1_bytes: int
    l2_bytes: int
    l2_ways: int
    l2_line_bytes: int
    sector_bytes: int
    dram_block_bytes: int
    row_buffers: int
    clock_mhz: float
    dram_bandwidth_gbs: float
    l2_bandwidth_gbs: float
    launch_overhead_ns: float
    grid_scan_ns: float
    curves: dict[str, Curve]
    measured: bool
    provenance: dict[str, str]
    hardware_provenance: dict[str, str] = field(default_factory=dict)
    instructions: InstructionCosts | None = None
    compaction: CompactionCosts | None = None
    gather: GatherRates | None = None
    atomics: AtomicCosts | None = None
    bitmask: BitmaskRates | None = None
    atomic_latency: AtomicLatency | None = None
    l2_capacity: L2Capacity | None = None
    l2_partitions: L2Partitions | None = None
    store_flush: StoreFlush | None = None
    memory_mix: MemoryMix | None = None
    l1_carveout: L1Carveout | None = None

    @property
    def physical_warps(self) -> int:
        """Warps resident at once on the whole GPU: 960 on the K40c (seed 003 §6.5)."""
        return self.sms * self.max_warps_per_sm

    @property
    def l2_model_bytes(self) -> int:
        """The L2 capacity the model simulates: [l2_capacity]'s effective bytes where measured (what data
        that every SM reads can fill), rounded down to a whole number of sets and at most l2_bytes; else
        l2_bytes."""
        if self.l2_capacity is None:
            return self.l2_bytes
        set_bytes = self.l2_ways * self.l2_line_bytes
        return max(1, min(self.l2_capacity.effective_bytes, self.l2_bytes) // set_bytes) * set_bytes

    @property
    def has_row_split(self) -> bool:
        """True when DRAM is split into row-buffer hits and misses (seed 003 §6.4), False for one `dram` curve."""
        return "row_hit" in self.curves

    def describes(self, device_name: str, sms: int) -> bool:
        """True when this profile is for a GPU named `device_name` (up to case and spaces) with `sms` SMs."""
        return same_device_name(self.device_name, str(device_name)) and self.sms == sms

    def field_provenance(self, key: str) -> dict[str, str]:
        """Where one value comes from: for a [hardware] key, its [provenance] entry (`source`) and, when
        that names the run in [service] (device, measured, option), the run's device, driver, date and
        command; for a curve name, [service]'s provenance; for `instructions` or `instructions.KEY`,
        [instructions.provenance], and likewise for `compaction`. Empty when the file records none."""
        if key in CURVE_NAMES:
            return dict(self.provenance) if key in self.curves else {}
        for part in ("instructions", *MEASURED_SECTIONS):
            if key == part or key.startswith(part + "."):
                costs = getattr(self, part)
                return dict(costs.provenance) if costs is not None else {}
        source = self.hardware_provenance.get(key)
        if source is None:
            return {}
        out = {"source": source}
        if hardware_origin(source)[0] in RUN_ORIGINS:
            out.update({k: self.provenance[k] for k in RUN_KEYS})
        return out

    def blocks_per_sm(self, block_threads: int) -> int:
        """Blocks of `block_threads` threads resident on one SM, limited by warps and blocks per SM.

        Registers and shared memory are ignored (the BFS kernels use little of either), so this is
        the occupancy upper bound; the load n of seed 003 §6.5 can only be lower.
        """
        block_threads = self._check_block(block_threads)
        warps_per_block = -(-block_threads // self.warp_size)
        return min(self.max_blocks_per_sm, self.max_warps_per_sm // warps_per_block)

    def full_wave_grid(self, block_threads: int) -> int:
        """Blocks in one full wave: sms x blocks_per_sm(block_threads), the grid that fills the GPU once."""
        return self.sms * self.blocks_per_sm(block_threads)

    def _check_block(self, block_threads) -> int:
        if isinstance(block_threads, bool) or not isinstance(block_threads, (int, np.integer)):
            raise InputError(f"block size must be an integer, got {block_threads!r}")
        block_threads = int(block_threads)
        if not 1 <= block_threads <= self.max_threads_per_block:
            raise InputError(f"block size {block_threads} outside 1..{self.max_threads_per_block} on {self.name}")
        return block_threads


GPU_TOP_KEYS = ("name", "kind", "description", "device", "hardware", "service")
GPU_OPTIONAL_KEYS = ("provenance", "instructions", *MEASURED_SECTIONS)


def parse_gpu(check: Checker, doc: dict, name: str, description: str, where: str) -> GPUProfile:
    """The GPUProfile of a parsed TOML document whose top-level keys `check` has already checked."""
    device_name, capability = check.device(doc["device"])
    hardware = check.table(doc["hardware"], "hardware")
    service = check.table(doc["service"], "service")
    check.keys(hardware, "hardware", GPU_INT_KEYS + GPU_FLOAT_KEYS)
    values = {key: check.positive_int(hardware[key], f"hardware.{key}") for key in GPU_INT_KEYS}
    for key in GPU_FLOAT_KEYS:
        values[key] = check.number(hardware[key], f"hardware.{key}", allow_zero=key in GPU_ZERO_ALLOWED)
    set_bytes = values["l2_ways"] * values["l2_line_bytes"]
    if values["l2_bytes"] % set_bytes:
        check.fail("hardware.l2_bytes",
                   f"{values['l2_bytes']} is not a multiple of l2_ways x l2_line_bytes = {set_bytes}")
    for key in ("l2_line_bytes", "dram_block_bytes"):
        if values[key] % values["sector_bytes"]:
            check.fail(f"hardware.{key}", f"{values[key]} is not a multiple of sector_bytes = {values['sector_bytes']}")
    sm_threads = values["max_warps_per_sm"] * values["warp_size"]
    if values["max_threads_per_block"] > sm_threads:
        check.fail("hardware.max_threads_per_block",
                   f"{values['max_threads_per_block']} exceeds max_warps_per_sm x warp_size = {sm_threads}")

    measured, provenance = check.service(service, CURVE_NAMES, run_required=True)
    if measured and not same_device_name(provenance["device"], device_name):
        check.fail("service.device", f"{provenance['device']!r} is not [device] name {device_name!r}: a measured "
                                     "profile describes the device it was measured on")
    curves = {key: check.curve(service[key], f"service.{key}") for key in CURVE_NAMES if key in service}
    if "l2_hit" not in curves:
        check.fail("service.l2_hit", "missing key (a GPU profile needs an L2-hit curve)")
    split = [key for key in ("row_hit", "row_miss") if key in curves]
    if "dram" in curves and split:
        check.fail(f"service.{split[0]}", "a profile has either row_hit and row_miss, or dram, not both")
    if len(split) == 1:
        other = "row_miss" if split[0] == "row_hit" else "row_hit"
        check.fail(f"service.{other}", f"missing key (service.{split[0]} needs it)")
    if "dram" not in curves and not split:
        check.fail("service", "needs row_hit and row_miss curves, or one dram curve")
    for key in ONE_WARP_CURVES:
        if key in curves and key.removesuffix("_one_warp") not in curves:
            check.fail(f"service.{key}", f"no service.{key.removesuffix('_one_warp')} curve for it to refine")
    sources = check.hardware_provenance(doc["provenance"], measured) if "provenance" in doc else {}
    instructions = (parse_instructions(check, doc["instructions"], device_name, values["warp_size"])
                    if "instructions" in doc else None)
    sections = {table: parse(check, doc[table], device_name) if table in doc else None
                for table, parse in _MEASURED_PARSERS.items()}
    return GPUProfile(name=name, description=description, path=where, device_name=device_name,
                      compute_capability=capability, **values, curves=curves, measured=measured,
                      provenance=provenance, hardware_provenance=sources, instructions=instructions, **sections)
