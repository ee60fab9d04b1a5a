"""Measure the GPU's rate of bitmask lookups that store their byte back: the profile's [bitmask] table.

`cuda/bitmask.cu` reads random bytes of a table of each size (a power of two of bytes: a bitmask of 8x
as many vertices) with ld.global.ca, every SM full of 256-thread blocks (a few waves), four loads in
flight a thread, and stores each byte back with its bit set with the probability of each write fraction,
as the status lookup does where it finds a bit unset; and again (`stores` "or") with the bit set by an atomic
OR on the word instead, as the couplings' claim build does. One launch is timed with CUDA events after a
warm-up launch (`timing.median_launch_ns`), and the rate is lookups / elapsed, the median over `repeats`
launches. (`opmachine.profile.bitmask` says what the table is for.)

    python -m gpu_validate.bitmask --gpu h200 [--repeats 7] [--write opmachine/profiles/h200.toml]

Prints one JSON object (device, driver, date, command and a row per size and fraction); `--write` puts the
rates into that copy of the --gpu profile as its [bitmask] section, every other line kept.
"""
from __future__ import annotations

import sys

import numpy as np

SIZES = tuple(1 << k for k in (14, 16, 17, 18, 20, 22, 24))  # 16 KiB .. 16 MiB: 128 K .. 128 M vertices
WRITE_FRACTIONS = (0.0, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
PER_THREAD = 64  # lookups per thread
WAVES = 4


STORES = {"byte": "bitmask-rmw", "or": "bitmask-or"}
"""How the storing lookups set their bit, and the kernel that does it so (`modules.FIXED_SOURCES`)."""


def measure_lookups(profile, sizes=SIZES, fractions=WRITE_FRACTIONS, repeats: int = 7, seed: int = 1,
                    stores: str = "byte") -> list[dict]:
    """One row per table size and write fraction: how the bits are stored (STORES), bytes, write fraction,
    lookups per launch, median ns per launch and lookups a ns."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function(STORES[stores])
    grid = WAVES * profile.full_wave_grid(DEFAULT_BLOCK)
    lookups = grid * DEFAULT_BLOCK * PER_THREAD
    out = cp.zeros(1, dtype=cp.int32)
    rows = []
    for size in sizes:
        for fraction in fractions:
            table = cp.zeros(size, dtype=cp.uint8)
            args = (table, np.uint32(size - 1), np.int32(PER_THREAD), np.uint32(seed),
                    np.uint32(round(fraction * 1024)), out)
            ns = median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
            rows.append({"stores": stores, "bytes": int(size), "write_fraction": fraction, "lookups": int(lookups),
                         "ns": round(ns, 1), "per_ns": round(lookups / ns, 3)})
            del table
    return rows


def bitmask_rates(record: dict):
    """The profile's [bitmask] (opmachine.profile.BitmaskRates) from a measuring record (a row without
    `stores`, recorded before the atomic ORs were measured, is of byte stores)."""
    from opmachine.profile import BitmaskRates

    from .device import run_of

    rows = record["lookups"]
    sizes = tuple(dict.fromkeys(r["bytes"] for r in rows))
    fractions = tuple(dict.fromkeys(r["write_fraction"] for r in rows))
    rate = {(r.get("stores", "byte"), r["bytes"], r["write_fraction"]): r["per_ns"] for r in rows}
    grid = {how: tuple(rate[how, s, f] for s in sizes for f in fractions)
            for how in STORES if any(key[0] == how for key in rate)}
    return BitmaskRates(sizes, fractions, grid["byte"], grid.get("or", ()), run_of(record))


def main(argv=None) -> int:
    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.bitmask", __doc__.splitlines()[0], ("bitmask",),
                           lambda profile, repeats: {"lookups": [
                               row for how in STORES for row in measure_lookups(profile, repeats=repeats, stores=how)]},
                           lambda record: (bitmask_rates(record),))


if __name__ == "__main__":
    sys.exit(main())
