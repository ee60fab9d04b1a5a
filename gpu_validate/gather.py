"""Measure the GPU's rate of random 4-byte gathers by table size: the profile's [gather] table.

`cuda/gather.cu` runs loads at random indices of a table of each size (a power of two of bytes),
every SM full of 256-thread blocks (a few waves), four independent loads in flight a thread; one
launch is timed with CUDA events after a warm-up launch that also brings a table that fits into
the L2, and the rate is gathers / elapsed, the median over `repeats` launches.
(`opmachine.profile.gather` says what the table is for.)

    python -m gpu_validate.gather --gpu h200 [--repeats 7] [--write opmachine/profiles/h200.toml]

Prints one JSON object (device, driver, date, command and a row per size); `--write` puts the rates
into that copy of the --gpu profile as its [gather] section, every other line kept. The record also holds
`l1_gathers`, which no profile section takes: the same gathers through the SMs' L1s (ld.global.ca, as the
coupled kernels' bitmask reads) from tables of L1_SIZES, whether an L1 serves scattered hits faster than
the L2 serves them.
"""
from __future__ import annotations

import sys

import numpy as np

SIZES = tuple(1 << k for k in (20, 22, 24, 25, 26, 28, 30))  # 1 MiB .. 1 GiB: inside the L2, then well past it
L1_SIZES = tuple(1 << k for k in (14, 16, 20))  # 16 and 64 KiB stay in an SM's L1; 1 MiB does not
PER_THREAD = 256  # gathers per thread: about a million per SM per launch
WAVES = 4


def measure_gathers(profile, sizes=SIZES, repeats: int = 7, seed: int = 1, through_l1: bool = False) -> list[dict]:
    """One row per table size: bytes, gathers per launch, median ns per launch and gathers a ns; `through_l1`:
    the loads go through the SMs' L1s (ld.global.ca), else to the L2 (ld.global.cg)."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("gather-ca" if through_l1 else "gather")
    grid = WAVES * profile.full_wave_grid(DEFAULT_BLOCK)
    gathers = grid * DEFAULT_BLOCK * PER_THREAD
    out = cp.zeros(1, dtype=cp.int32)
    rows = []
    for size in sizes:
        elements = size // 4
        table = cp.arange(elements, dtype=cp.int32)
        args = (table, np.uint32(elements - 1), np.int32(PER_THREAD), np.uint32(seed), out)
        ns = median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
        rows.append({"bytes": int(size), "gathers": int(gathers), "ns": round(ns, 1),
                     "per_ns": round(gathers / ns, 3)})
        del table
    return rows


def gather_rates(record: dict):
    """The profile's [gather] (opmachine.profile.GatherRates) from a measuring record."""
    from opmachine.profile import GatherRates

    from .device import run_of

    rows = record["gathers"]
    return GatherRates(tuple(r["bytes"] for r in rows), tuple(r["per_ns"] for r in rows), run_of(record))


def main(argv=None) -> int:
    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.gather", __doc__.splitlines()[0], ("gather",),
                           lambda profile, repeats: {"gathers": measure_gathers(profile, repeats=repeats),
                                                     "l1_gathers": measure_gathers(profile, L1_SIZES, repeats,
                                                                                   through_l1=True)},
                           lambda record: (gather_rates(record),))


if __name__ == "__main__":
    sys.exit(main())
