"""Measure the time of atomics that all hit one word: the profile's [atomics] table.

`cuda/atomics.cu` has lane 0 of every warp of one full wave of 256-thread blocks add to the same word
ATOMICS_PER_WARP times; one launch is timed with CUDA events after a warm-up launch (`timing.median_launch_ns`), and the time per
atomic is the elapsed time over the atomics, the median over `repeats` launches.
(`opmachine.profile.atomics` says what the table is for.)

    python -m gpu_validate.atomics --gpu h200 [--repeats 7] [--write opmachine/profiles/h200.toml]

Prints one JSON object (device, driver, date, command and the measurement); `--write` puts the time into
that copy of the --gpu profile as its [atomics] section, every other line kept.
"""
from __future__ import annotations

import sys

import numpy as np

ATOMICS_PER_WARP = 64  # about half a million atomics a launch on an H200


def measure_same_word(profile, repeats: int = 7) -> dict:
    """Atomics a launch, median ns per launch and ns per atomic when every warp adds to one word."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("atomic-same")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    word, out = cp.zeros(1, dtype=cp.int32), cp.zeros(1, dtype=cp.int32)
    atomics = grid * (DEFAULT_BLOCK // 32) * ATOMICS_PER_WARP
    args = (word, np.int32(ATOMICS_PER_WARP), out)
    ns = median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
    return {"atomics": int(atomics), "ns": round(ns, 1), "same_word_ns": round(ns / atomics, 6)}


def atomic_costs(record: dict):
    """The profile's [atomics] (opmachine.profile.AtomicCosts) from a measuring record."""
    from opmachine.profile import AtomicCosts

    return AtomicCosts(record["same_word"]["same_word_ns"],
                       {key: record[key] for key in ("device", "driver", "date", "command")})


def main(argv=None) -> int:
    from opmachine.profile import write_gpu_atomics

    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.atomics", __doc__.splitlines()[0], "atomics",
                           lambda profile, repeats: {"same_word": measure_same_word(profile, repeats=repeats)},
                           lambda path, profile, record: write_gpu_atomics(path, profile, atomic_costs(record)))


if __name__ == "__main__":
    sys.exit(main())
