"""Hardware profiles: the machine parameters and service curves S(m) of seed 003 §5 and §6.5.

A profile is a TOML file, one per machine (`opmachine/profiles/NAME.toml`). A GPU profile names the
device it describes (CUDA's name, compute capability; with its SM count that picks the profile for
a GPU), holds the numbers the operator machine needs (warp size, physical warps, L2 and row-buffer
geometry, clocks, bandwidths, the per-launch constants) and the service time per memory request as
a function of memory-level parallelism, S(m), for L2 hits and DRAM row-buffer hits and misses
(seed 003 §6.5, Eq. 4), each with its provenance, and optionally the measured costs of warp
instructions and shared-memory accesses (`[instructions]`, `InstructionCosts`). A CPU profile holds the cache hierarchy and
per-level service times of seed 003 §5. Every key is checked on load; a mistake raises
`ProfileError`, one line naming the profile and the key.

One concept per module: `curve` (S(m)), `schema` (key names, typed checks, provenance rules),
`gpu_profile` and `cpu_profile` (the profile records), `instructions` (the [instructions] costs),
`compaction` (the [compaction] times by graph size), `gather` (the [gather] rates of random 4-byte
loads), `atomics` (the [atomics] time of atomics on one word), `atomic_latency` (the
[atomic_latency] wait of an atomic beyond a load's), `bitmask` (the [bitmask] rates of
lookups that store their byte back), `l2_capacity` (the [l2_capacity] the model's L2 simulates),
`l2_partitions` (the [l2_partitions]: a warp's L2 hit within and across the L2's partitions),
`store_flush` (the [store_flush] a launch whose blocks store adds at its end), `memory_mix` (the
[memory_mix] launches of one and two sector classes: whether their times add), `l1_carveout` (the
[l1_carveout] shared memory configured for each coupled kernel: the L1 its bitmask reads find),
`loading` (shipped names and paths),
`writing` (measured profiles written, validated and moved into place), `errors`.
"""
from .atomic_latency import AtomicLatency
from .atomics import AtomicCosts
from .bitmask import BitmaskRates
from .compaction import CompactionCosts
from .gather import GatherRates
from .l2_capacity import L2Capacity
from .l2_partitions import L2Partitions
from .l1_carveout import L1Carveout
from .memory_mix import MemoryMix
from .store_flush import StoreFlush
from .cpu_profile import CacheLevel, CPUProfile, LoopCosts
from .curve import Curve, closed_queue_curve
from .errors import ProfileError, ProfileKindError
from .gpu_profile import MEASURED_SECTIONS, GPUProfile
from .instructions import INSTRUCTION_KEYS, INSTRUCTION_NOTES, INSTRUCTION_RUN_KEYS, InstructionCosts
from .loading import available_profiles, load_profile, parse_profile_bytes, profiles_dir
from .schema import (
    CURVE_NAMES,
    GPU_HARDWARE_KEYS,
    HARDWARE_ORIGINS,
    ONE_WARP_CURVES,
    PROVENANCE_KEYS,
    RUN_ORIGINS,
    SAME_SECTOR_CURVE,
    SERVER_CURVES,
    hardware_origin,
    same_device_name,
)
from .writing import (
    instruction_section,
    measured_section,
    render_gpu_profile,
    toml_string,
    with_instruction_section,
    with_section,
    write_gpu_curves,
    write_gpu_instructions,
    write_gpu_profile,
    write_gpu_section,
    write_profile_text,
)

__all__ = [
    "AtomicCosts",
    "AtomicLatency",
    "BitmaskRates",
    "CURVE_NAMES",
    "CPUProfile",
    "CacheLevel",
    "CompactionCosts",
    "Curve",
    "GatherRates",
    "L2Capacity",
    "L2Partitions",
    "LoopCosts",
    "MEASURED_SECTIONS",
    "MemoryMix",
    "L1Carveout",
    "GPUProfile",
    "GPU_HARDWARE_KEYS",
    "HARDWARE_ORIGINS",
    "INSTRUCTION_KEYS",
    "INSTRUCTION_NOTES",
    "INSTRUCTION_RUN_KEYS",
    "InstructionCosts",
    "ONE_WARP_CURVES",
    "PROVENANCE_KEYS",
    "ProfileError",
    "ProfileKindError",
    "RUN_ORIGINS",
    "SAME_SECTOR_CURVE",
    "SERVER_CURVES",
    "StoreFlush",
    "available_profiles",
    "closed_queue_curve",
    "hardware_origin",
    "instruction_section",
    "measured_section",
    "load_profile",
    "parse_profile_bytes",
    "profiles_dir",
    "render_gpu_profile",
    "same_device_name",
    "toml_string",
    "with_instruction_section",
    "with_section",
    "write_gpu_curves",
    "write_gpu_instructions",
    "write_gpu_profile",
    "write_gpu_section",
    "write_profile_text",
]
