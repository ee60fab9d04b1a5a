"""Measure what a CTA barrier costs when its warps wait on loaded memory: fork-join rounds at full load.

`cuda/barrier.cu` has every warp of one full wave of 256-thread blocks run ROUNDS rounds of `loads` dependent
random ld.global.cg loads by its first `lanes` lanes (LANES; as many sectors an instruction), from an L2-resident table (`l2`, 8 MiB)
or one far larger than the L2 (`dram`, 1 GiB), and ends each round with nothing (`free`: a warp runs on at
its own pace), with __syncthreads() (`barrier`: a round lasts as long as its block's slowest warp), with
thread 0's atomicAdd on one word before it (`reserve`: the coupled kernels' queue reservation a tile), or
on a word of its block's own (`reserve_own`: the atomic's round trip without the one word's queue). Per
table, lane count, load count and ending: the median ns of one launch over `repeats` (`timing.median_launch_ns`) and
ns a round (the launch over ROUNDS). A barrier's cost a round is then `barrier` - `free` (the wait for
the block's slowest warp), a reservation's `reserve` - `barrier`, of which `reserve_own` - `barrier` is the
atomic's round trip that every warp of the block waits for and `reserve` - `reserve_own` the queue at the word.

    python -m gpu_validate.barrier --gpu h200 [--repeats 7]

Prints one JSON object (device, driver, date, command and the rows).
"""
from __future__ import annotations

import sys

import numpy as np

ROUNDS = 64
TABLES = {"l2": 1 << 21, "dram": 1 << 28}  # words: 8 MiB (inside any L2 here), 1 GiB (far beyond it)
LOADS = (1, 2, 4, 8)
LANES = (1, 4, 32)
ENDINGS = {"free": 0, "barrier": 1, "reserve": 2, "reserve_own": 3}


def measure_rounds(profile, repeats: int = 7, seed: int = 1) -> list[dict]:
    """One row per table, lane count, load count and ending: ns of a launch and ns a round."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("barrier-rounds")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    counters, out = cp.zeros(32 * grid, dtype=cp.int32), cp.zeros(1, dtype=cp.int32)  # a sector a block
    rows = []
    for name, words in TABLES.items():
        table = cp.random.default_rng(seed).integers(0, words, words, dtype=cp.int32)
        for lanes in LANES:
            for loads in LOADS:
                for ending, mode in ENDINGS.items():
                    args = (table, np.int32(words - 1), np.int32(ROUNDS), np.int32(loads), np.int32(lanes),
                            np.int32(mode), counters, out)
                    ns = median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
                    rows.append({"table": name, "lanes": lanes, "loads": loads, "ending": ending, "ns": round(ns, 1),
                                 "round_ns": round(ns / ROUNDS, 2)})
        del table
    return rows


def main(argv=None) -> int:
    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.barrier", __doc__.splitlines()[0], (),
                           lambda profile, repeats: {"rounds": ROUNDS, "rows": measure_rounds(profile, repeats)},
                           lambda record: ())


if __name__ == "__main__":
    sys.exit(main())
