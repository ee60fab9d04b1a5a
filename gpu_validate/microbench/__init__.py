"""Measure a GPU's service curves S(m) and write them into a hardware profile (seed 003 §6.5, Fig. 6).

S(m) is the time per memory request when m requests are in flight: elapsed time / requests served.
A request is one 32-byte sector load (the model's visits are sectors). Four request classes:

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
must be this GPU's) and keeps its hardware section.

    python -m gpu_validate.microbench --instructions --base h200 --out opmachine/profiles/h200.toml [--raw-instructions RAW.csv]

measures the instruction side instead (`instructions`: ALU, shuffle and shared-load latencies, the
issue rate, shared-memory wavefronts and bank conflicts, barriers, a block scan; in SM cycles with
the SM clock) and writes --base's profile, every line of it kept, with its [instructions] section
added or replaced. A whole profile for a GPU, hardware and
per-launch constants included, is `python -m gpu_validate.profile_gpu`, which runs this sweep.

Modules: `raw` (the raw table's checks, curve extraction and the profile text; pandas/numpy, no
GPU), `sweep` (the measurement on the GPU; CuPy is imported only to measure), `instructions` (the
instruction-side measurement, its raw table and derived numbers), `cli` (the command). The public
names of `raw` and `sweep` are re-exported here; `instructions` is used as a module.
"""
from . import instructions
from .cli import main
from .raw import (CURVES, ONE_WARP, RAW_COLUMNS, SECTOR_BYTES, SIDE_CURVES, _one_line, check_raw, config_medians,
                  curve_provenance, curve_samples, curve_summary, hardware_notes, method_comment, one_warp_samples, read_raw,
                  side_numbers)
from .sweep import (CHAIN_KERNELS, L1_BYTES, PER_WARP_FULL, PER_WARP_QUICK, SAME_PER_WARP, WORDS_PER_SECTOR, Setup,
                    check_device, make_setup, measure)

__all__ = ["CHAIN_KERNELS", "CURVES", "L1_BYTES", "ONE_WARP", "PER_WARP_FULL", "PER_WARP_QUICK", "RAW_COLUMNS",
           "SAME_PER_WARP", "SECTOR_BYTES", "SIDE_CURVES", "WORDS_PER_SECTOR", "Setup", "check_device", "check_raw",
           "config_medians", "curve_provenance", "curve_samples", "curve_summary", "hardware_notes", "instructions", "main",
           "make_setup", "measure",
           "method_comment", "one_warp_samples", "read_raw", "side_numbers"]
