"""Speed of the simdmodel core, as ratios against a plain numba BFS measured in the same run.

For each graph: generation time; plain BFS (`bfs_queue`); frontier extraction (levels -> sorted
per-level frontiers and their degrees); lane accounting for sm-1..32 + ws + scan-256. Goal: lane
accounting <= 0.5x the plain BFS. Peak memory is measured in a child process per graph, as the
resident-set growth over the CSR's own size.

    python bench/bench_core.py                      # rmat:scale=22,ef=16 and grid2d:side=2048
    python bench/bench_core.py rmat:scale=18,ef=16  # any specs
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

import numpy as np

DEFAULT_SPECS = ["rmat:scale=22,ef=16", "grid2d:side=2048"]
REPEATS = 3


def best_time(func, repeats=REPEATS):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        result = func()
        best = min(best, time.perf_counter() - start)
    return best, result


def status_bytes(field: str) -> int:
    """A size from /proc/self/status (VmRSS: resident now, VmHWM: resident peak)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def reset_peak() -> None:
    """Reset VmHWM to the current resident size, so compile-time peaks are not counted."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def warm_up():
    """Compile every numba kernel on a tiny graph so timings exclude compilation."""
    import simdmodel as sm

    graph = sm.load_graph("rmat:scale=6,ef=4")
    sm.analyze(graph, [int(np.argmax(graph.degrees()))])
    sm.load_graph("grid2d:side=4")


def time_graph(spec: str) -> dict:
    import simdmodel as sm
    from simdmodel.frontier import bfs_queue, extract_frontiers
    from simdmodel.strategies import mappings
    from simdmodel.lanes import lane_degrees

    start = time.perf_counter()
    graph = sm.load_graph(spec)
    load_s = time.perf_counter() - start
    source = int(sm.pick_sources(graph, 1, seed=1)[0])
    bfs_s, (levels, queue, reached) = best_time(lambda: bfs_queue(graph.indptr, graph.indices, source))
    degrees = lane_degrees(graph)

    def extract():
        frontiers = extract_frontiers(levels, queue, reached, source, "sorted")
        return frontiers, degrees[frontiers.vertices]

    extract_s, (frontiers, walk_degrees) = best_time(extract)
    chosen = mappings()
    lanes_s, _ = best_time(lambda: [m.count_lanes(walk_degrees, frontiers.level_ptr) for m in chosen])
    return {
        "spec": spec, "n": graph.n, "m": graph.m, "depth": frontiers.depth, "csr_mib": graph.nbytes / 2**20,
        "load_s": load_s, "bfs_s": bfs_s, "extract_s": extract_s, "lanes_s": lanes_s,
        "mappings": len(chosen),
    }


def memory_child(spec: str) -> None:
    """Run in a child: print peak RSS growth of loading, and of one full analysis, over CSR bytes."""
    import simdmodel as sm

    warm_up()
    reset_peak()
    before = status_bytes("VmRSS")
    graph = sm.load_graph(spec)
    load_peak = status_bytes("VmHWM")
    loaded = status_bytes("VmRSS")
    reset_peak()
    sm.analyze(graph, sm.pick_sources(graph, 1, seed=1))
    analyze_peak = status_bytes("VmHWM")
    print(json.dumps({
        "csr_bytes": graph.nbytes,
        "load_peak_over_csr": (load_peak - before) / graph.nbytes,
        "analyze_peak_over_csr": (analyze_peak - before) / graph.nbytes,
        "resident_after_load_over_csr": (loaded - before) / graph.nbytes,
    }))


def main(specs: list[str]) -> None:
    warm_up()
    print(f"{'graph':<24} {'n':>10} {'m':>12} {'depth':>6} {'gen+load s':>10} {'BFS s':>8} "
          f"{'extract/BFS':>11} {'lanes(8)/BFS':>12} {'peak load/CSR':>13} {'peak analyze/CSR':>16}")
    for spec in specs:
        row = time_graph(spec)
        child = subprocess.run([sys.executable, __file__, "--memory-child", spec],
                               capture_output=True, text=True, check=True)
        memory = json.loads(child.stdout.strip().splitlines()[-1])
        print(f"{spec:<24} {row['n']:>10,} {row['m']:>12,} {row['depth']:>6} {row['load_s']:>10.2f} "
              f"{row['bfs_s']:>8.3f} {row['extract_s'] / row['bfs_s']:>11.3f} "
              f"{row['lanes_s'] / row['bfs_s']:>12.3f} {memory['load_peak_over_csr']:>13.2f} "
              f"{memory['analyze_peak_over_csr']:>16.2f}", flush=True)
    print("\nratios are against the plain BFS of the same graph in this run; 'peak .../CSR' is the peak "
          "resident growth\nover the CSR's bytes (indptr + indices) at its start: during generation+build, and "
          "over a whole\n1-source analysis with the graph loaded.")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--memory-child":
        memory_child(sys.argv[2])
    else:
        main(sys.argv[1:] or DEFAULT_SPECS)
