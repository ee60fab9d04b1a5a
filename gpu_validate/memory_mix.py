"""Measure the profile's [memory_mix]: launches of one sector class and of two, to tell whether the memory
system serves a launch's classes side by side or in turn.

`cuda/memory_mix.cu` runs every warp of one full wave of 256-thread blocks for ROUNDS rounds of independent
ld.global.cg loads and stores (no access waits for another): per round, PER_ROUND's accesses of each class it
runs: loads of a random sector of a 16 MiB table (L2 hits), of a random sector of a 1 GiB table (row misses),
of the warp's next 128 bytes of that table in order (row hits), and stores of 128 bytes to a 1 GiB stream
(stores beyond the L2). Each class is timed alone and each pair of classes together (CUDA events around one
launch after a warm-up, median over `repeats`); `opmachine.profile.memory_mix` says what the model takes from
them.

    python -m gpu_validate.memory_mix --gpu h200 [--repeats 7] [--write opmachine/profiles/h200.toml]

Prints one JSON object (device, driver, date, command and the launches); `--write` puts them into that copy of
the --gpu profile as its [memory_mix] section, every other line kept.
"""
from __future__ import annotations

import itertools
import sys

import numpy as np

ROUNDS = 64
PER_ROUND = {"l2_hit": 4, "row_miss": 1, "row_hit": 8, "store": 8}
"""Accesses of each class a warp makes a round: about 0.2-0.5 ms of each class alone on an H200."""
SECTORS_EACH = {"l2_hit": 32, "row_miss": 32, "row_hit": 4, "store": 4}
"""Sectors one warp-level access of each class moves: a random sector a lane, or 128 contiguous bytes."""
SMALL_WORDS = 1 << 22  # 16 MiB: L2-resident
BIG_WORDS = 1 << 28  # 1 GiB: far beyond the L2, each random sector in another DRAM row


def launches() -> list[dict]:
    """Each class alone, then each pair: accesses a round per class (MIX_CLASSES order)."""
    from opmachine.profile.memory_mix import MIX_CLASSES

    alone = [{name: PER_ROUND[name]} for name in MIX_CLASSES]
    pairs = [{a: PER_ROUND[a], b: PER_ROUND[b]} for a, b in itertools.combinations(MIX_CLASSES, 2)]
    return alone + pairs


def measure(profile, repeats: int = 7) -> list[dict]:
    """Per launch of `launches()`: its sectors of each class and its median ns."""
    from opmachine.kernels import DEFAULT_BLOCK
    from opmachine.profile.memory_mix import MIX_CLASSES

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("memory-mix")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    warps = grid * DEFAULT_BLOCK // 32
    small, big = cp.zeros(SMALL_WORDS, dtype=cp.int32), cp.zeros(BIG_WORDS, dtype=cp.int32)
    stream, sink = cp.zeros(BIG_WORDS, dtype=cp.int32), cp.zeros(1, dtype=cp.int32)
    rows = []
    for launch in launches():
        counts = [launch.get(name, 0) for name in MIX_CLASSES]
        args = (small, np.uint64(SMALL_WORDS // 8 - 1), big, np.uint64(BIG_WORDS // 8 - 1), stream,
                np.uint64(BIG_WORDS - 1), np.int32(ROUNDS), *(np.int32(c) for c in counts), sink)
        ns = median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
        rows.append({**{f"{name}_sectors": float(warps * ROUNDS * c * SECTORS_EACH[name])
                        for name, c in zip(MIX_CLASSES, counts)}, "ns": round(ns, 1)})
    return rows


def memory_mix(record: dict):
    """The profile's [memory_mix] (opmachine.profile.MemoryMix) from a measuring record."""
    from opmachine.profile import MemoryMix
    from opmachine.profile.memory_mix import MIX_CLASSES

    from .device import run_of

    rows = record["launches"]
    return MemoryMix(tuple(tuple(row[f"{name}_sectors"] for name in MIX_CLASSES) for row in rows),
                     tuple(row["ns"] for row in rows), run_of(record))


def main(argv=None) -> int:
    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.memory_mix", __doc__.splitlines()[0], ("memory_mix",),
                           lambda profile, repeats: {"launches": measure(profile, repeats)},
                           lambda record: (memory_mix(record),))


if __name__ == "__main__":
    sys.exit(main())
