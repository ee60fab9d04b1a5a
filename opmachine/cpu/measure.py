"""The serial BFS of seed 003 Listing 1 measured on this machine: time per round and cache counters.

- `measure_cpu_rounds`: the kernel of `kernel.listing1_round` in numba, timed round by round
  (seed 003 §5's measurement);
- `perf_support` / `perf_cache_counts`: whole-BFS hardware cache counts through `perf stat`, where
  the machine exposes them;
- `measure_cpu_counters`: the same counts round by round, from counters opened in this process
  (`perf_events`), for counters mode (`predict.predict_cpu_counted`).

`python -m opmachine.cpu --graph SPEC --source S [--skip-bfs]` runs one serial BFS on the measured
kernel; `perf_cache_counts` runs it under `perf stat`.
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

import numba
import numpy as np
import pandas as pd

from simdmodel.errors import InputError
from simdmodel.frontier import bfs
from simdmodel.graph import CSRGraph

from .kernel import bfs_all_rounds, kernel_arrays, listing1_parallel_round, listing1_round, reset_levels

PERF_EVENTS = ("L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses")


def measure_cpu_rounds(graph: CSRGraph, source: int, repeats: int = 5, threads: int | None = None) -> pd.DataFrame:
    """Time each round of a serial topology-driven BFS in numba on this CPU (seed 003 §5's measurement).

    Each round is one njit call of Listing 1 (`listing1_round`; with `threads`, the multi-threaded
    `listing1_parallel_round` on that many of numba's threads) timed with `time.perf_counter_ns`
    (so the call's overhead is included); one whole BFS runs first as a warm-up (compilation, page
    faults), then `repeats` BFS runs, each starting from freshly reset levels; the median per round
    is reported. Arrays are 4-byte and 4096-byte aligned, as in `cpu_trace`. Columns: round, level
    (= round - 1, the frontier expanded), measured_ns. Raises RuntimeError if the levels differ from
    `simdmodel.frontier.bfs`'s (a bug, not a user mistake); the serial kernel is also checked round
    by round (the multi-threaded one may store a node twice, so only its levels are).
    """
    if int(repeats) < 1:
        raise InputError(f"repeats must be at least 1, got {repeats}")
    if threads is not None and not 1 <= int(threads) <= numba.config.NUMBA_NUM_THREADS:
        raise InputError(f"threads must be 1..{numba.config.NUMBA_NUM_THREADS} (this machine's), got {threads}")
    repeats = int(repeats)
    expected = bfs(graph, source)  # InputError for a bad source
    source = expected.source
    rounds = expected.depth
    row_start, edge_dst, level = kernel_arrays(graph)
    kernel = listing1_round if threads is None else listing1_parallel_round
    previous_threads = numba.get_num_threads()
    numba.set_num_threads(int(threads or previous_threads))
    try:
        times_ns = np.empty((repeats + 1, rounds), dtype=np.int64)
        sizes = expected.vertex_frontier_sizes()
        for rep in range(repeats + 1):  # the first run is the warm-up
            reset_levels(level, source)
            for r in range(1, rounds + 1):
                start = time.perf_counter_ns()
                discovered = kernel(row_start, edge_dst, level, r)
                times_ns[rep, r - 1] = time.perf_counter_ns() - start
                wanted = int(sizes[r]) if r < rounds else 0
                if threads is None and discovered != wanted:
                    raise RuntimeError(f"measured BFS round {r} labelled {discovered} vertices, expected {wanted}")
            if not np.array_equal(level, expected.levels):
                raise RuntimeError("measured BFS levels differ from simdmodel.frontier.bfs")
    finally:
        numba.set_num_threads(previous_threads)
    round_numbers = np.arange(1, rounds + 1, dtype=np.int64)
    return pd.DataFrame({
        "round": round_numbers,
        "level": round_numbers - 1,
        "measured_ns": np.median(times_ns[1:], axis=0),
    })


# ----------------------------------------------------------------------------------------------
# Hardware counters
# ----------------------------------------------------------------------------------------------

def _perf_stat(command: list[str], timeout_s: float) -> tuple[int, str]:
    """Run `perf stat -x, -e PERF_EVENTS command`; return (exit status, perf's stderr)."""
    perf = shutil.which("perf")
    if perf is None:
        raise FileNotFoundError("perf")
    result = subprocess.run([perf, "stat", "-x", ",", "-e", ",".join(PERF_EVENTS), "--", *command],
                            capture_output=True, text=True, timeout=timeout_s)
    return result.returncode, result.stderr


def _parse_perf_csv(text: str) -> dict[str, str]:
    """Event name -> raw value field from `perf stat -x,` output (value, unit, event, ...)."""
    values = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) >= 3 and parts[2] in PERF_EVENTS:
            values[parts[2]] = parts[0]
    return values


def perf_support() -> tuple[bool, str]:
    """Whether `perf stat` can count L1-dcache and LLC loads and misses here, with a one-line reason.

    Runs `perf stat -e L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses true`.
    Virtual machines often expose no hardware counters: perf then reports `<not supported>` for
    every event and this returns False.
    """
    try:
        status, text = _perf_stat(["true"], timeout_s=20)
    except FileNotFoundError:
        return False, "perf is not installed (no `perf` on PATH)"
    except (subprocess.TimeoutExpired, OSError) as error:
        return False, f"perf stat did not run: {error}"
    values = _parse_perf_csv(text)
    if status != 0 or not values:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        return False, f"perf stat failed (exit {status}): {first}"
    bad = {event: value for event, value in values.items() if not value.strip().isdigit()}
    missing = [event for event in PERF_EVENTS if event not in values]
    if missing:
        return False, f"perf stat reported nothing for {', '.join(missing)}"
    if bad:
        kinds = sorted(set(bad.values()))
        if len(bad) == len(PERF_EVENTS):
            return False, (f"perf reports {' / '.join(kinds)} for every cache event "
                           f"(no hardware counters exposed here, e.g. in a virtual machine)")
        return False, f"perf reports {' / '.join(kinds)} for {', '.join(bad)}"
    return True, f"perf stat counts {', '.join(PERF_EVENTS)}"


def perf_cache_counts(spec: str, source: int, timeout_s: float = 600) -> dict[str, int]:
    """Hardware cache counts of one whole serial BFS (`python -m opmachine.cpu`) under perf stat.

    The same command with `--skip-bfs` (load the graph, prepare arrays, compile, no BFS) is
    counted too and subtracted, so the counts cover the BFS rounds plus noise. Compare with the
    model's whole-BFS totals: loads ~ jobs minus stores, L1 load misses ~ loads not served by L1,
    LLC load misses ~ c_mem of loads. Raises InputError when `perf_support()` is False.
    """
    supported, reason = perf_support()
    if not supported:
        raise InputError(f"hardware cache counters unavailable: {reason}")
    base = [sys.executable, "-m", "opmachine.cpu", "--graph", str(spec), "--source", str(int(source))]
    counts = {}
    for label, command in (("bfs", base), ("baseline", base + ["--skip-bfs"])):
        status, text = _perf_stat(command, timeout_s=timeout_s)
        if status != 0:
            tail = text.strip().splitlines()[-1] if text.strip() else "no output"
            raise InputError(f"BFS under perf stat failed (exit {status}): {tail}")
        counts[label] = {event: int(value) for event, value in _parse_perf_csv(text).items()}
    return {event: counts["bfs"][event] - counts["baseline"][event] for event in PERF_EVENTS}


CACHE_EVENTS = ("L1-dcache-loads", "L1-dcache-load-misses", "LLC-load-misses")
COUNTER_COLUMNS = {"L1-dcache-loads": "loads", "L1-dcache-load-misses": "l1_misses", "LLC-load-misses": "llc_misses"}


def measure_cpu_counters(graph: CSRGraph, source: int) -> pd.DataFrame:
    """Hardware cache counts of each round of the serial Listing 1 on this CPU: the kernel of
    `measure_cpu_rounds`, after a warm-up run and a reset (as timed), each round counted on its own
    by counters opened in this process (`perf_events.PerfCounters`, user space only). Columns:
    round, level, loads, l1_misses, llc_misses. `perf_events.CountersUnavailable` (one line: which
    event, and why) where the machine does not count them, as in most virtual machines."""
    from .perf_events import PerfCounters

    expected = bfs(graph, source)  # InputError for a bad source
    row_start, edge_dst, level = kernel_arrays(graph)
    with PerfCounters(CACHE_EVENTS) as counters:
        bfs_all_rounds(row_start, edge_dst, level, expected.source)  # warm-up, as timed
        reset_levels(level, expected.source)
        rows = []
        for r in range(1, expected.depth + 1):
            with counters.counting():
                listing1_round(row_start, edge_dst, level, r)
            rows.append({"round": r, "level": r - 1,
                         **{COUNTER_COLUMNS[name]: value for name, value in counters.read().items()}})
    if not np.array_equal(level, expected.levels):
        raise RuntimeError("counted BFS levels differ from simdmodel.frontier.bfs")
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    """Run one serial topology-driven BFS on the measured kernel; exit status 2 for bad input."""
    parser = argparse.ArgumentParser(prog="python -m opmachine.cpu",
                                     description="Run one serial topology-driven BFS (seed 003 §4).")
    parser.add_argument("--graph", required=True, help="graph file or generator spec")
    parser.add_argument("--source", type=int, required=True, help="source vertex")
    parser.add_argument("--skip-bfs", action="store_true",
                        help="prepare and compile only (the baseline perf_cache_counts subtracts)")
    args = parser.parse_args(argv)
    from simdmodel.frontier import check_source
    from simdmodel.load import load_graph

    try:
        graph = load_graph(args.graph)
        source = check_source(graph, args.source)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    row_start, edge_dst, level = kernel_arrays(graph)
    tiny_row, tiny_dst, tiny_level = (np.array([0, 1, 1], dtype=np.int32), np.array([1], np.int32),
                                      np.full(2, -1, dtype=np.int32))
    bfs_all_rounds(tiny_row, tiny_dst, tiny_level, 0)  # compile or load from cache
    if args.skip_bfs:
        print("rounds 0")
        return 0
    rounds = bfs_all_rounds(row_start, edge_dst, level, source)
    print(f"rounds {rounds} reached {int((level >= 0).sum())}")
    return 0
