"""Measure the time of atomics: on one word (the profile's [atomics] table), and one warp's wait for them
beside its wait for loads (its [atomic_latency] table).

`cuda/atomics.cu` has lane 0 of every warp of one full wave of 256-thread blocks add to the same word
ATOMICS_PER_WARP times; one launch is timed with CUDA events after a warm-up launch (`timing.median_launch_ns`), and the time per
atomic is the elapsed time over the atomics, the median over `repeats` launches. Its `chase` has one warp
follow a random cycle of an 8 MiB table (L2-resident), 1 to 32 lanes at once, CHASE_STEPS dependent steps
of failing compare-and-swaps, then of ld.global.cg loads: ns per step, the median over `repeats` launches.
(`opmachine.profile.atomics` and `opmachine.profile.atomic_latency` say what the tables are for.)
The record also holds `beside_loads`, which no profile section takes: the same word's atomics with L2 traffic
beside them (`atomic_after_loads`: rounds of BESIDE_LOADS dependent random ld.global.cg loads by every lane of
every warp, then one atomic a warp), the ns a round over the whole GPU with the atomic and without it: whether
the word's slice serves the atomics apart from the L2's traffic (the times' max) or after it (their sum).

    python -m gpu_validate.atomics --gpu h200 [--repeats 7] [--write opmachine/profiles/h200.toml]

Prints one JSON object (device, driver, date, command and the measurements); `--write` puts them into
that copy of the --gpu profile as its [atomics] and [atomic_latency] sections, every other line kept.
"""
from __future__ import annotations

import sys

import numpy as np

ATOMICS_PER_WARP = 64  # about half a million atomics a launch on an H200
CHASE_WORDS = 1 << 21  # an 8 MiB table: inside the L2
CHASE_LANES = (1, 2, 4, 8, 16, 32)
CHASE_STEPS = 4096
BESIDE_LOADS = (0, 1, 2, 4, 8, 16)


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


def measure_beside_loads(profile, repeats: int = 7, seed: int = 1) -> list[dict]:
    """Per count of loads a round (BESIDE_LOADS), ns a warp round over the whole GPU with the same word's atomic
    after the loads (`with_atomic_ns`) and without it (`loads_ns`), the loads' random words from an
    L2-resident table of CHASE_WORDS."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("atomic-after-loads")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    rounds = grid * (DEFAULT_BLOCK // 32) * ATOMICS_PER_WARP
    table = cp.asarray(np.random.default_rng(seed).integers(0, CHASE_WORDS, CHASE_WORDS).astype(np.int32))
    word, out = cp.zeros(1, dtype=cp.int32), cp.zeros(1, dtype=cp.int32)
    rows = []
    for loads in BESIDE_LOADS:
        row = {"loads": loads}
        for name, atomic in (("with_atomic_ns", 1), ("loads_ns", 0)):
            args = (word, np.int32(ATOMICS_PER_WARP), table, np.int32(CHASE_WORDS - 1), np.int32(loads),
                    np.int32(atomic), out)
            row[name] = round(median_launch_ns(cp, lambda: kernel((grid,), (DEFAULT_BLOCK,), args), repeats)
                              / rounds, 6)
        rows.append(row)
    return rows


def measure_chase(repeats: int = 7, seed: int = 1) -> list[dict]:
    """One warp's dependent accesses along a random cycle of an L2-resident table, `lanes` lanes at once (as
    many sectors): per lane count, ns per step of failing compare-and-swaps and of ld.global.cg loads."""
    from . import modules
    from .device import require_gpu
    from .timing import median_launch_ns

    cp = require_gpu()
    kernel = modules.function("chase")
    order = np.random.default_rng(seed).permutation(CHASE_WORDS).astype(np.int32)
    cycle = np.empty(CHASE_WORDS, dtype=np.int32)
    cycle[order] = np.roll(order, -1)
    table, out = cp.asarray(cycle), cp.zeros(1, dtype=cp.int32)
    rows = []
    for lanes in CHASE_LANES:
        start = cp.asarray(order[np.arange(lanes) * (CHASE_WORDS // lanes)])
        row = {"lanes": lanes}
        for name, atomic in (("swap_ns", 1), ("load_ns", 0)):
            args = (table, start, np.int32(lanes), np.int32(CHASE_STEPS), np.int32(atomic), out)
            row[name] = round(median_launch_ns(cp, lambda: kernel((1,), (32,), args), repeats) / CHASE_STEPS, 2)
        rows.append(row)
    return rows


def atomic_latency(record: dict):
    """The profile's [atomic_latency] (opmachine.profile.AtomicLatency) from a measuring record."""
    from opmachine.profile import AtomicLatency

    from .device import run_of

    rows = record["chase"]
    return AtomicLatency(tuple(r["lanes"] for r in rows), tuple(r["swap_ns"] for r in rows),
                         tuple(r["load_ns"] for r in rows), run_of(record))


def atomic_costs(record: dict):
    """The profile's [atomics] (opmachine.profile.AtomicCosts) from a measuring record."""
    from opmachine.profile import AtomicCosts

    from .device import run_of

    return AtomicCosts(record["same_word"]["same_word_ns"], run_of(record))


def main(argv=None) -> int:
    from .device import measure_section

    return measure_section(argv, "python -m gpu_validate.atomics", __doc__.splitlines()[0],
                           ("atomics", "atomic_latency"),
                           lambda profile, repeats: {"same_word": measure_same_word(profile, repeats=repeats),
                                                     "chase": measure_chase(repeats=repeats),
                                                     "beside_loads": measure_beside_loads(profile, repeats)},
                           lambda record: (atomic_costs(record), atomic_latency(record)))


if __name__ == "__main__":
    sys.exit(main())
