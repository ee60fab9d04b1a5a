"""Wall time and peak memory of `analyze` and `opm --kernel sm-32` on one large graph, against loading
the same graph and running one plain BFS on it (the baseline, measured in the same run).

    PYTHONPATH=. .venv/bin/python bench/bench_scale.py [--spec kron:scale=24,ef=16] [--kernel sm-32]

Each step is its own process, so its peak resident memory (`wait4`'s ru_maxrss) is its own: the
baseline (the graph built as the commands build it, then `bfs_queue` twice, the second timed),
`simdmodel analyze SPEC --sources 1` and `simdmodel opm SPEC --kernel K` (the default settings:
set-associative L2, warm, critical time model). Prints seconds, peak GB and each command's wall
time as a multiple of the baseline's.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

BASELINE = """
import sys, time
from simdmodel.frontier import bfs_queue, pick_sources
from simdmodel.load import load_graph
graph = load_graph(sys.argv[1])
source = int(pick_sources(graph, 1, 1)[0])
bfs_queue(graph.indptr, graph.indices, source)
start = time.perf_counter()
bfs_queue(graph.indptr, graph.indices, source)
print(f"n={graph.n:,} m={graph.m:,}; plain BFS {time.perf_counter() - start:.3f} s")
"""


def run(command: list[str]) -> tuple[float, float, str]:
    """(wall seconds, peak resident GB, last stdout line) of one child process."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if process.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {err.read().strip().splitlines()[-1:] or status}")
        lines = out.read().strip().splitlines()
    return seconds, usage.ru_maxrss / 2**20, lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="kron:scale=24,ef=16")
    parser.add_argument("--kernel", default="sm-32")
    args = parser.parse_args()
    simdmodel = [sys.executable, "-m", "simdreport"]
    with tempfile.TemporaryDirectory() as folder:
        steps = [("load + plain BFS", [sys.executable, "-c", BASELINE, args.spec]),
                 ("analyze", [*simdmodel, "analyze", args.spec, "--sources", "1", "--quiet",
                              "--out", os.path.join(folder, "lanes.csv")]),
                 (f"opm {args.kernel}", [*simdmodel, "opm", args.spec, "--kernel", args.kernel, "--quiet",
                                         "--out", os.path.join(folder, "opm.json")])]
        print(f"{args.spec} on {os.cpu_count()} CPUs")
        print(f"{'step':18} {'seconds':>8} {'peak GB':>8} {'x baseline':>10}")
        baseline = None
        for name, command in steps:
            seconds, peak, line = run(command)
            baseline = baseline or seconds
            print(f"{name:18} {seconds:8.1f} {peak:8.2f} {seconds / baseline:10.1f}" + (f"   {line}" if line else ""))


if __name__ == "__main__":
    main()
