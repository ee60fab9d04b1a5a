"""Measure this machine's CPU profile: cache geometry from sysfs, load-to-use latency per level, the
service curve S(m) of each level (k independent chases at once, `chains_ns`: the memory-level
parallelism the core achieves) and the costs of Listing 1's loop (`opmachine.cpu.loop_costs`).

Seed 003 §5 takes its service times S_L1, S_L2, S_L3 from microbenchmarks (and Intel's Memory
Latency Checker). Here the latency of each level is the time per load of a numba pointer chase
over a random cyclic permutation of cache lines (one 8-byte pointer per line, so each load touches
a new line in an order no prefetcher can guess) whose working set lies well inside that level,
or far beyond the last level for memory. Each load depends on the previous one, so the time per
load is the latency with a memory-level parallelism of 1, as the model assumes (§5).

    python -m opmachine.cpu_microbench --out myhost.toml

writes a CPU profile (kind = "cpu", measured = true) that `opmachine.profile.load_profile` reads.
"""
from __future__ import annotations

import argparse
import datetime
import platform
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np

from simdmodel.atomic import check_target, write_text
from simdmodel.errors import InputError

SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
LEVEL_NAMES = ("L1", "L2", "L3")
POINTER_BYTES = 8
TARGET_S = 0.15  # time per timed chase
MEMORY_MIN_BYTES = 256 * 2**20


@dataclass(frozen=True)
class SysCache:
    """One data or unified cache of cpu0 as sysfs describes it."""

    level: int
    type: str
    size_bytes: int
    ways: int
    line_bytes: int


def _parse_size(text: str) -> int:
    """sysfs cache size ("32K", "1024K", "32M") in bytes."""
    text = text.strip()
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    if text and text[-1].upper() in units:
        return int(text[:-1]) * units[text[-1].upper()]
    return int(text)


def read_sysfs_caches(root: Path | str = SYSFS_CACHE) -> list[SysCache]:
    """Data and unified caches of cpu0 from `root`/index*/, by level (instruction caches skipped)."""
    root = Path(root)
    caches = []
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            if kind not in ("Data", "Unified"):
                continue
            caches.append(SysCache(
                level=int((index / "level").read_text()),
                type=kind,
                size_bytes=_parse_size((index / "size").read_text()),
                ways=int((index / "ways_of_associativity").read_text()),
                line_bytes=int((index / "coherency_line_size").read_text()),
            ))
        except (OSError, ValueError) as error:
            raise InputError(f"{index}: cannot read cache description ({error})") from None
    if not caches:
        raise InputError(f"{root}: no data or unified caches described")
    return sorted(caches, key=lambda cache: cache.level)


def cpu_model_name() -> str:
    """The CPU's model name from /proc/cpuinfo (platform.processor() where that is missing)."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def cpu_clock_ghz() -> float:
    """Nominal clock from /proc/cpuinfo's `cpu MHz` (0.0 if absent); turbo may run faster."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.lower().startswith("cpu mhz"):
                    return float(line.split(":", 1)[1]) / 1000.0
    except (OSError, ValueError):
        pass
    return 0.0


@numba.njit(cache=True, nogil=True)
def _chase_njit(next_slot, start, steps):
    """Follow `steps` pointers from `start`; returns where it ended (so the loop is not removed)."""
    p = start
    for _ in range(steps):
        p = next_slot[p]
    return p


def chase_array(working_set_bytes: int, line_bytes: int, seed: int = 1) -> np.ndarray:
    """One pointer per line over `working_set_bytes`, linked as one random cycle through all lines."""
    stride = max(line_bytes // POINTER_BYTES, 1)
    lines = max(working_set_bytes // (stride * POINTER_BYTES), 2)
    order = np.random.default_rng(seed).permutation(lines).astype(np.int64) * stride
    next_slot = np.zeros(lines * stride, dtype=np.int64)
    next_slot[order] = np.roll(order, -1)
    return next_slot


def load_latency_ns(working_set_bytes: int, line_bytes: int, repeats: int = 3, seed: int = 1,
                    target_s: float = TARGET_S) -> float:
    """Nanoseconds per dependent load of a random pointer chase over `working_set_bytes`.

    The chain is walked once to warm the caches (at most 4M loads), then timed `repeats` times
    for about `target_s` each; the smallest time per load is returned.
    """
    next_slot = chase_array(working_set_bytes, line_bytes, seed)
    lines = int(np.count_nonzero(next_slot)) or 1
    _chase_njit(next_slot, 0, 1000)  # compile (or load from cache)
    _chase_njit(next_slot, 0, min(lines, 4_000_000))
    steps = 100_000
    start = time.perf_counter_ns()
    position = _chase_njit(next_slot, 0, steps)
    elapsed = max(time.perf_counter_ns() - start, 1)
    steps = int(min(max(steps * target_s * 1e9 / elapsed, 100_000), 500_000_000))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter_ns()
        position = _chase_njit(next_slot, position, steps)
        best = min(best, (time.perf_counter_ns() - start) / steps)
    return best


@numba.njit(cache=True, nogil=True)
def _chains_njit(next_slot, positions, steps):
    """Advance every pointer of `positions` `steps` times, one after another: independent chains the
    core can walk at once (memory-level parallelism up to len(positions))."""
    for _ in range(steps):
        for j in range(positions.size):
            positions[j] = next_slot[positions[j]]
    return positions


CHAINS = (1, 2, 4, 8, 16)


def chains_ns(working_set_bytes: int, line_bytes: int, chains=CHAINS, seed: int = 1,
              target_s: float = 0.03, repeats: int = 3) -> list[float]:
    """ns per load of k independent random pointer chases through `working_set_bytes` at once, for each
    k of `chains`, the best of `repeats` timed walks: the service curve S(m) of the level holding that
    working set (k = 1 is its latency; S(1) / S(k) the memory-level parallelism the core achieves with
    k loads in flight)."""
    next_slot = chase_array(working_set_bytes, line_bytes, seed)
    order = np.flatnonzero(next_slot) if np.count_nonzero(next_slot) else np.array([0])
    out = []
    for k in chains:
        positions = order[np.linspace(0, order.size - 1, k, endpoint=False).astype(np.int64)].astype(np.int64)
        _chains_njit(next_slot, positions, min(order.size, 4_000_000 // k))  # compile, warm the caches
        steps = 20_000
        start = time.perf_counter_ns()
        _chains_njit(next_slot, positions, steps)
        elapsed = max(time.perf_counter_ns() - start, 1)
        steps = int(min(max(steps * target_s * 1e9 / elapsed, 20_000), 100_000_000))
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter_ns()
            _chains_njit(next_slot, positions, steps)
            best = min(best, (time.perf_counter_ns() - start) / (steps * k))
        out.append(best)
    return out


def latency_sweep(sizes_bytes, line_bytes: int, target_s: float = 0.05) -> dict[int, float]:
    """ns per dependent load for each working set in `sizes_bytes`: shows where each level really ends
    (in a virtual machine the last level can hold far less than sysfs says)."""
    return {int(size): load_latency_ns(int(size), line_bytes, repeats=1, target_s=target_s)
            for size in sizes_bytes}


def _available_bytes() -> int:
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return 4 * 2**30


def working_sets(caches: list[SysCache]) -> dict[str, int]:
    """Working set per level: half of each cache (well inside it, well beyond the one before);
    memory: 16x the last level, at least 256 MiB, at most a quarter of the available memory."""
    sets = {f"L{cache.level}": cache.size_bytes // 2 for cache in caches}
    last = max(cache.size_bytes for cache in caches)
    sets["memory"] = int(min(max(16 * last, MEMORY_MIN_BYTES), _available_bytes() // 4))
    return sets


LOOP_RUNS = 3  # independent measurements of the loop costs; each field is their median


def measure_profile(repeats: int = 3, seed: int = 1) -> dict:
    """Cache geometry (sysfs), latency per level and memory (pointer chase) and the loop's costs
    (median of `LOOP_RUNS` runs of `measure_loop_costs`, each with fresh arrays), as a dict."""
    from .cpu.loop_costs import measure_loop_costs, parallel_loop_costs, sets_of_gathers

    caches = read_sysfs_caches()
    levels = [c for c in caches if c.level in (1, 2, 3)]
    if [c.level for c in levels] != [1, 2, 3]:
        raise InputError(f"expected data/unified caches at levels 1, 2, 3; sysfs lists "
                         f"{[c.level for c in caches]}")
    line_bytes = levels[0].line_bytes
    sets = working_sets(levels)
    latency = {name: load_latency_ns(size, line_bytes, repeats, seed) for name, size in sets.items()}
    sizes = [c.size_bytes for c in levels]

    def median_of_runs(measure) -> dict:
        runs = [measure(sizes, sets["memory"], seed=seed + run) for run in range(LOOP_RUNS)]
        return {key: np.median(np.array([run[key] for run in runs], dtype=np.float64), axis=0).tolist()
                for key in runs[0] if key != "working_sets"}

    return {
        "chains_ns": {name: chains_ns(size, line_bytes, seed=seed) for name, size in sets.items()},
        "loop": median_of_runs(measure_loop_costs),
        "parallel_loop": median_of_runs(parallel_loop_costs),
        "loop_working_sets": sets_of_gathers(sizes, sets["memory"]),
        "line_bytes": line_bytes,
        "clock_ghz": cpu_clock_ghz(),
        "levels": [
            {"name": f"L{c.level}", "bytes": c.size_bytes, "ways": c.ways,
             "service_ns": latency[f"L{c.level}"], "working_set_bytes": sets[f"L{c.level}"]}
            for c in levels
        ],
        "memory_ns": latency["memory"],
        "memory_working_set_bytes": sets["memory"],
        "cpu": cpu_model_name(),
    }


def profile_toml(measured: dict, name: str, command: str, date: str | None = None) -> str:
    """A CPU profile (schema of `opmachine/profiles/westmere.toml`) holding `measure_profile`'s numbers."""
    from .profile import toml_string

    date = date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    cpu = measured["cpu"]
    label = name
    lines = [
        "# CPU profile measured on this machine by opmachine.cpu_microbench (seed 003 §5's method):",
        "# cache geometry from /sys/devices/system/cpu/cpu0/cache, load-to-use latency per level from",
        "# a random pointer chase (MLP 1) over the working set given beside each level.",
        f"name = {toml_string(name, label)}",
        'kind = "cpu"',
        f"description = {toml_string(f'{cpu}, measured by opmachine.cpu_microbench', label)}",
        "",
        "[hardware]",
        f"clock_ghz = {measured['clock_ghz'] or 1.0!r}"
        + ("   # /proc/cpuinfo cpu MHz" if measured["clock_ghz"] else "   # unknown: /proc/cpuinfo has no cpu MHz"),
        f"line_bytes = {int(measured['line_bytes'])}",
    ]
    for level in measured["levels"]:
        lines += [
            "",
            "[[levels]]",
            f"name = {toml_string(level['name'], label)}",
            f"bytes = {int(level['bytes'])}",
            f"ways = {int(level['ways'])}",
            f"service_ns = {round(float(level['service_ns']), 3)!r}   "
            f"# pointer chase over {level['working_set_bytes']} bytes",
        ]
    lines += [
        "",
        "[memory]",
        f"service_ns = {round(float(measured['memory_ns']), 3)!r}   "
        f"# pointer chase over {measured['memory_working_set_bytes']} bytes",
    ]
    lines += _loop_lines(measured)
    if measured.get("chains_ns"):
        lines += ["", "[mlp]   # ns per load of k independent pointer chases at once over each level's working set"]
        lines.append(f"chains = [{', '.join(str(k) for k in CHAINS)}]")
        for name, values in measured["chains_ns"].items():
            lines.append(f"{name} = [{', '.join(repr(round(float(v), 3)) for v in values)}]")
    lines += [
        "",
        "[service]",
        "measured = true",
        "provenance = " + toml_string(
            "opmachine.cpu_microbench: sizes, ways and line size from sysfs; latency = best of 3 "
            "timed random pointer chases (numba, one dependent 8-byte load per line) per working "
            "set; clock from /proc/cpuinfo; [loop] and [parallel_loop]: Listing 1's compiled round, serial "
            f"and multi-threaded, timed on synthetic inputs (opmachine.cpu.loop_costs), the median of {LOOP_RUNS} "
            "runs; [mlp]: k independent random pointer chases at once per working set", label),
        f"device = {toml_string(cpu, label)}",
        f"date = {toml_string(date, label)}",
        f"command = {toml_string(command, label)}",
    ]
    return "\n".join(lines) + "\n"


def _loop_lines(measured: dict) -> list[str]:
    """The `[loop]` and `[parallel_loop]` tables of a measured profile (`LoopCosts`), or nothing for a
    table that was not measured."""
    floor = 0.001  # a cost the timer cannot tell from 0 is written as this, so the profile stays valid
    lines = []
    for key, what in (("loop", "Listing 1's compiled round"),
                      ("parallel_loop", "the multi-threaded round, its body on one thread")):
        loop = measured.get(key)
        if not loop:
            continue
        gather = ", ".join(f"{round(max(float(value), floor), 4)!r}" for value in loop["gather_ns"])
        sets = ", ".join(str(int(size)) for size in measured["loop_working_sets"])
        lines += [
            "",
            f"[{key}]   # {what} timed on synthetic inputs (opmachine.cpu.loop_costs), ns",
            f"call_ns = {round(max(float(loop['call_ns']), 0.0), 2)!r}"
            + (f"   # a round on {int(loop['threads'])} threads" if "threads" in loop else ""),
            f"scan_ns = {round(max(float(loop['scan_ns']), floor), 4)!r}",
            f"vertex_ns = {round(max(float(loop['vertex_ns']), floor), 4)!r}",
            f"branch_ns = {round(max(float(loop['branch_ns']), floor), 3)!r}",
            f"gather_ns = [{gather}]   # level arrays of {sets} bytes",
            f"store_ns = {round(max(float(loop['store_ns']), 0.0), 4)!r}",
            f"store_branch_ns = {round(max(float(loop['store_branch_ns']), floor), 3)!r}",
        ] + ([f"threads = {int(loop['threads'])}"] if "threads" in loop else [])
    return lines


def write_profile(path, name: str | None = None, repeats: int = 3, seed: int = 1,
                  command: str | None = None) -> dict:
    """Measure this machine and write its CPU profile to `path` (atomically); returns the numbers."""
    from .profile import parse_profile_bytes

    path = Path(path)
    if path.suffix != ".toml":
        raise InputError(f"{path}: a profile file must end in .toml")
    check_target(path)
    name = name or _default_name(path)
    measured = measure_profile(repeats=repeats, seed=seed)
    command = command or "python -m opmachine.cpu_microbench --out " + str(path)
    text = profile_toml(measured, name, command)
    parse_profile_bytes(text.encode("utf-8"), str(path), str(path))  # never write a profile that does not load
    write_text(path, text)
    return measured


def _default_name(path: Path) -> str:
    stem = "".join(ch if ch.isalnum() or ch in "_.+-" else "-" for ch in path.stem).lstrip("_.+-")
    return stem or "this-cpu"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opmachine.cpu_microbench",
                                     description="Measure this CPU's cache latencies and write a CPU profile.")
    parser.add_argument("--out", required=True, help="profile file to write (.toml)")
    parser.add_argument("--name", help="profile name (default: the file's stem)")
    parser.add_argument("--repeats", type=int, default=3, help="timed chases per working set (best kept)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random chase order")
    args = parser.parse_args(argv)
    try:
        if args.repeats < 1:
            raise InputError(f"--repeats must be at least 1, got {args.repeats}")
        command = "python -m opmachine.cpu_microbench " + " ".join(sys.argv[1:] if argv is None else argv)
        measured = write_profile(args.out, args.name, args.repeats, args.seed, command)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for level in measured["levels"]:
        print(f"{level['name']}: {level['bytes']} B, {level['ways']} ways, "
              f"{level['service_ns']:.2f} ns per load ({level['working_set_bytes']} B working set)")
    print(f"memory: {measured['memory_ns']:.2f} ns per load ({measured['memory_working_set_bytes']} B working set)")
    print("ns per load with 1, 2, 4, 8, 16 independent chases: " + "; ".join(
        f"{name} {', '.join(f'{v:.2f}' for v in values)}" for name, values in measured["chains_ns"].items()))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
