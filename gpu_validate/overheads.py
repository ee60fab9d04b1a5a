"""Measure the per-launch costs that are not memory service: launch overhead and the grid scan.

Both are timed as the validation suite times BFS launches: back to back behind the hold kernel
(gpu_validate.timing), median over many launches.

- launch_overhead_ns: an empty kernel of one block (most expansions launch few blocks; an empty
  full-wave launch, as `topo` makes, is measured beside it for reference).
- grid_scan_ns: the compaction kernel (`cuda/compact.cu`) on a one-node graph, minus the empty
  one-block launch: its full-wave launch, the blocks' counts and arrivals, the scan of every count
  by the block that arrives last and each block's wait for its offset, which the model adds to each
  compaction launch (the prefix sum has no loads or stores, so the memory machine does not see it). Its median over fresh allocations (`measure`
  says why), with the 10th and 90th percentiles beside it.

With `--after`, each target launch (the empty one-block and full-wave kernels, the one-node
compaction) is also timed right after a predecessor of its own: the same three, and a spin kernel
(`cuda/hold.cu`) of one block or of a full wave running for 1 to 200 microseconds. These rows test
the model's assumption that a launch's fixed cost does not depend on the kernel before it (a GPU
could prepare a launch while a long kernel runs and hide part of it): on the H200 and the H100 none
is hidden, every target is within noise of its back-to-back time (`tests/fixtures/overheads/`).

    python -m gpu_validate.overheads --gpu h200 [--launches 640] [--placements 32] [--after] [--sizes] [--stores]
        [--write opmachine/profiles/h200.toml]

With `--stores`, the empty kernel is timed beside the same kernel with one store in thread 0 of
each block (`measure_stores`), on grids of one block to two full waves, and on a full wave with
one block in 2, 8 or 32 storing, or block 0 alone; and a 2 us spin kernel beside the same spin
with a store before or after it, or a load before it, on one block, one block an SM and a full
wave. The difference is what a launch whose blocks store pays beyond one that does not: a store no
warp waits for still costs its launch that much, at its end where a store before the spin and one
after it cost the same (`tests/fixtures/overheads/README.md` says what the GPUs gave). `--write`
puts the empty kernel's rows in which every block stores into the profile's [store_flush]
(`opmachine.profile.store_flush` says how the model uses it).

With `--sizes`, the compaction is also timed on edgeless graphs of 1 to 4M vertices
(`measure_compactions`): the profile's [compaction] times by graph size, which `--write` puts in a
profile file (`opmachine.profile.compaction` says how the model uses them).

Prints one JSON object (device, driver, date, command and the numbers) for the profile's
[hardware] section. `python -m gpu_validate.profile_gpu` measures the same two numbers (with
`measure`) in the same run as the service curves and writes them into the profile itself.
"""
from __future__ import annotations

import argparse
import functools
import json
import sys

import numpy as np


def one_node_graph():
    """The smallest graph a compaction launch can run on: one vertex, no edges."""
    return edgeless_graph(1)


def edgeless_graph(n: int):
    """A graph of `n` vertices and no edges: a compaction on it reads n levels and stores nothing."""
    from simdmodel.graph import EdgeList, csr_from_edges

    empty = np.zeros(0, dtype=np.int64)
    return csr_from_edges(EdgeList(empty, empty, n, undirected=False, name="one-node" if n == 1 else f"edgeless-{n}"))


PLACEMENTS = 32
"""Fresh allocations of the one-node compaction's arrays (`measure`): its time depends on where they lie."""


def measure(profile, launches: int, placements: int = PLACEMENTS, seed: int = 1) -> dict:
    """Median ns per launch of the empty kernel (one block, full wave) and of a one-node compaction.

    A compaction's fixed cost may depend on where its status words and arrival counter lie in
    memory (their L2 slices: with a decoupled look-back, one H200 measured 12.7 to 18.5 us for the same
    launch on different allocations; with today's scan by one block, 8.3 to 8.7 us). So it is timed on
    `placements` fresh allocations, each
    behind a spacer of seeded random size, and the median over placements is the number a graph of
    unknown placement is predicted with; the 10th and 90th percentiles say how far one graph's
    compactions may sit from it."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import require_gpu
    from .timing import time_launches

    cp = require_gpu()
    empty = modules.function("empty")
    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    out = {}
    for name, grid in (("empty_one_block_ns", 1), ("empty_full_wave_ns", wave)):
        launch = functools.partial(empty, (grid,), (DEFAULT_BLOCK,), ())
        time_launches(cp, [launch] * 64)  # warm-up, compilation included
        out[name] = float(np.median(time_launches(cp, [launch] * launches)))
    per_placement = compaction_by_placement(profile, one_node_graph(), max(launches // placements, 16), placements,
                                            np.random.default_rng(seed))
    out["compact_one_node_ns"] = float(np.median(per_placement))
    out["compact_one_node_p10_ns"], out["compact_one_node_p90_ns"] = (float(np.percentile(per_placement, q))
                                                                      for q in (10, 90))
    return {**out, **derive(out), "full_wave_blocks": wave, "placements": placements,
            "compact_one_node_by_placement_ns": [round(t, 1) for t in per_placement]}


COMPACTION_SIZES = (1, 1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22)
"""Vertex counts of the edgeless graphs `measure_compactions` times a compaction on."""


def compaction_by_placement(profile, graph, launches: int, placements: int, rng) -> list[float]:
    """Median ns of `launches` back-to-back compactions with an empty next frontier on `graph`, on
    each of `placements` fresh allocations of its arrays, each behind a spacer of random size (`rng`);
    every allocation is kept until the end, so none reuses another's memory."""
    from opmachine.kernels import parse_kernel

    from .bfs import GpuBfs
    from .device import require_gpu
    from .timing import time_launches

    cp = require_gpu()
    kept, per_placement = [], []
    for _ in range(placements):
        kept.append(cp.empty(int(rng.integers(1, 1 << 20)), dtype=cp.int32))  # spacer: 4 B to 4 MiB
        gpu = GpuBfs(graph, parse_kernel("sm-1"), profile)
        gpu.level.fill(-1)  # unvisited: no vertex joins the next frontier
        kept.append(gpu)
        time_launches(cp, [lambda: gpu.launch_compact(0)] * 16)  # warm-up, compilation included
        per_placement.append(float(np.median(time_launches(cp, [lambda: gpu.launch_compact(0)] * launches))))
    return per_placement


def measure_compactions(profile, launches: int, placements: int, sizes=COMPACTION_SIZES, seed: int = 1) -> list[dict]:
    """A compaction with an empty next frontier on an edgeless graph of each size in `sizes`
    (`compaction_by_placement`): the median over placements, and the 10th and 90th percentiles."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        per_placement = compaction_by_placement(profile, edgeless_graph(n), launches, placements, rng)
        rows.append({"n": int(n), "compact_ns": round(float(np.median(per_placement)), 1),
                     "compact_p10_ns": round(float(np.percentile(per_placement, 10)), 1),
                     "compact_p90_ns": round(float(np.percentile(per_placement, 90)), 1)})
    return rows


SPIN_US = (1, 2, 5, 10, 20, 50, 100, 200)
"""Lengths of the spin kernels run before a target launch (`measure_after`), in microseconds."""


def measure_after(profile, pairs: int) -> list[dict]:
    """Each target launch timed right after each predecessor, `pairs` times: one row per (predecessor,
    target) with both medians, the predecessor's grid, and the target's quartiles."""
    from opmachine.kernels import DEFAULT_BLOCK, parse_kernel

    from . import modules
    from .bfs import GpuBfs
    from .device import device_info, require_gpu
    from .timing import time_launches

    cp = require_gpu()
    empty, spin = modules.function("empty"), modules.function("spin")
    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    clock_khz = device_info()["sm_clock_mhz"] * 1000
    gpu = GpuBfs(one_node_graph(), parse_kernel("sm-1"), profile)
    gpu.level.fill(0)
    targets = {"empty_one_block": (1, lambda: empty((1,), (DEFAULT_BLOCK,), ())),
               "empty_full_wave": (wave, lambda: empty((wave,), (DEFAULT_BLOCK,), ())),
               "compact_one_node": (wave, lambda: gpu.launch_compact(0))}
    predecessors = dict(targets)
    for us in SPIN_US:
        cycles = np.int64(us * clock_khz // 1000)
        for name, grid in (("one_block", 1), ("full_wave", wave)):
            predecessors[f"spin_{us}us_{name}"] = (grid, functools.partial(spin, (grid,), (DEFAULT_BLOCK,), (cycles,)))
    rows = []
    for before, (before_grid, first) in predecessors.items():
        for target, (_, then) in targets.items():
            time_launches(cp, [first, then] * 16)  # warm-up
            times = np.asarray(time_launches(cp, [first, then] * pairs))
            after = times[1::2]
            rows.append({"before": before, "before_grid": int(before_grid),
                         "before_ns": round(float(np.median(times[0::2])), 1), "target": target,
                         "target_ns": round(float(np.median(after)), 1),
                         "target_ns_p25": round(float(np.percentile(after, 25)), 1),
                         "target_ns_p75": round(float(np.percentile(after, 75)), 1)})
    return rows


STORE_EVERY = (2, 8, 32)
"""On a full wave, `measure_stores` also lets one block in each of these store (and block 0 alone)."""

STORE_SPIN_US = 2
"""The spin kernels `measure_stores` times with and without a memory access, in microseconds."""

SPIN_ACCESSES = {"load_before": 0, "store_before": 1, "store_after": 2}
"""The `touch_and_spin` accesses `measure_stores` times (its `access` argument): thread 0 of each block loads
or stores one word before the spin, or stores it after."""


def store_grids(profile) -> list[int]:
    """Grids `measure_stores` times: 1 to 16 blocks, then a quarter, half, one and two blocks an SM, then
    a full wave and two."""
    from opmachine.kernels import DEFAULT_BLOCK

    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    return sorted({1, 2, 4, 8, 16, max(profile.sms // 4, 1), max(profile.sms // 2, 1), profile.sms, 2 * profile.sms,
                   wave, 2 * wave})


def store_cases(profile) -> list[tuple[str, str, int, int]]:
    """(kernel, access, grid, every) of each `measure_stores` row: the empty kernel against `store_launch`
    with every `every`-th block storing, on `store_grids` and on a full wave of which fewer blocks store;
    the spin kernel against `touch_and_spin` with each of SPIN_ACCESSES on one block, one block an SM and a
    full wave."""
    from opmachine.kernels import DEFAULT_BLOCK

    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    cases = [("empty", "store", grid, 1) for grid in store_grids(profile)]
    cases += [("empty", "store", wave, every) for every in (*STORE_EVERY, wave)]
    cases += [("spin", access, grid, 1) for access in SPIN_ACCESSES for grid in (1, profile.sms, wave)]
    return cases


def measure_stores(profile, pairs: int) -> list[dict]:
    """Each `store_cases` kernel timed alternately back to back with its copy that accesses memory, `pairs`
    times each: one row per case with both medians, their difference and the blocks that store."""
    from opmachine.kernels import DEFAULT_BLOCK

    from . import modules
    from .device import device_info, require_gpu
    from .timing import time_launches

    cp = require_gpu()
    empty, store = modules.function("empty"), modules.function("store")
    spin, touch = modules.function("spin"), modules.function("touch-spin")
    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    words = cp.zeros(64 * 2 * wave, dtype=cp.int32)
    cycles = np.int64(STORE_SPIN_US * device_info()["sm_clock_mhz"])
    rows = []
    for kernel, access, grid, every in store_cases(profile):
        if kernel == "empty":
            pair = [functools.partial(empty, (grid,), (DEFAULT_BLOCK,), ()),
                    functools.partial(store, (grid,), (DEFAULT_BLOCK,), (words, np.int32(every)))]
        else:
            how = np.int32(SPIN_ACCESSES[access])
            pair = [functools.partial(spin, (grid,), (DEFAULT_BLOCK,), (cycles,)),
                    functools.partial(touch, (grid,), (DEFAULT_BLOCK,), (words, cycles, how))]
        time_launches(cp, pair * 16)  # warm-up, compilation included
        times = np.asarray(time_launches(cp, pair * pairs))
        without, with_access = (round(float(np.median(times[k::2])), 1) for k in (0, 1))
        rows.append({"kernel": kernel, "access": access, "grid": int(grid),
                     "storing_blocks": 0 if access == "load_before" else -(-grid // every),
                     "without_ns": without, "with_ns": with_access, "added_ns": round(with_access - without, 1)})
    return rows


def derive(times: dict) -> dict:
    """The profile's numbers from the measured medians (see the module docstring)."""
    return {"launch_overhead_ns": times["empty_one_block_ns"],
            "grid_scan_ns": max(times["compact_one_node_ns"] - times["empty_one_block_ns"], 0.0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.overheads", description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h200", help="hardware profile giving the full-wave grid (default h200)")
    parser.add_argument("--launches", type=int, default=640, help="timed launches per case (default 640)")
    parser.add_argument("--placements", type=int, default=PLACEMENTS,
                        help=f"fresh allocations the compaction is timed on (default {PLACEMENTS})")
    parser.add_argument("--sizes", action="store_true",
                        help="also time the compaction on edgeless graphs of 1 to 4M vertices (see measure_compactions)")
    parser.add_argument("--after", action="store_true",
                        help="also time each target launch after predecessors of chosen lengths (see above)")
    parser.add_argument("--stores", action="store_true",
                        help="also time the empty kernel beside one whose blocks store a word (see above)")
    parser.add_argument("--write", metavar="PROFILE.toml",
                        help="with --sizes or --stores: write the compaction times or the store costs into this copy "
                             "of the --gpu profile as its [compaction] or [store_flush] section (every other line "
                             "kept)")
    args = parser.parse_args(argv)
    from opmachine.profile import load_profile, write_gpu_section
    from simdmodel.errors import InputError

    from .device import GpuUnavailable, run_record

    for flag, value in (("--launches", args.launches), ("--placements", args.placements)):
        if value < 1:
            print(f"error: {flag} must be at least 1, got {value}", file=sys.stderr)
            return 2
    if args.write and not (args.sizes or args.stores):
        print("error: --write writes the compaction times (--sizes) or the store costs (--stores); ask for one",
              file=sys.stderr)
        return 2
    try:
        profile = load_profile(args.gpu, kind="gpu")
        numbers = measure(profile, args.launches, args.placements)
        if args.sizes:
            numbers["compactions"] = measure_compactions(profile, max(args.launches // args.placements, 16),
                                                         args.placements, COMPACTION_SIZES)
        if args.after:
            numbers["after"] = measure_after(profile, max(args.launches // 4, 16))
        if args.stores:
            numbers["stores"] = measure_stores(profile, args.launches)
        record = {**run_record("python -m gpu_validate.overheads", argv),
                  **{k: round(v, 1) if isinstance(v, float) else v for k, v in numbers.items()}}
        if args.write:
            written = profile
            if args.sizes:
                written = write_gpu_section(args.write, written, "compaction", compaction_costs(record))
            if args.stores:
                write_gpu_section(args.write, written, "store_flush", store_flush_costs(record))
    except (GpuUnavailable, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=1))
    return 0


def compaction_costs(record: dict):
    """The profile's [compaction] (opmachine.profile.CompactionCosts) from a `--sizes` record."""
    from opmachine.profile import CompactionCosts

    from .device import run_of

    rows = record["compactions"]
    return CompactionCosts(tuple(r["n"] for r in rows), tuple(r["compact_ns"] for r in rows),
                           tuple(r["compact_p10_ns"] for r in rows), tuple(r["compact_p90_ns"] for r in rows),
                           run_of(record))


def store_flush_costs(record: dict):
    """The profile's [store_flush] (opmachine.profile.StoreFlush) from a `--stores` record: the rows in which
    every block of the grid stores, each one's store launch less its empty one (at least 0)."""
    from opmachine.profile import StoreFlush

    from .device import run_of

    rows = [r for r in record["stores"] if r["kernel"] == "empty" and r["storing_blocks"] == r["grid"]]
    return StoreFlush(tuple(r["grid"] for r in rows), tuple(max(r["added_ns"], 0.0) for r in rows), run_of(record))


if __name__ == "__main__":
    sys.exit(main())
