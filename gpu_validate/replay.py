"""`python -m gpu_validate.replay`: the program Nsight Compute profiles for sampled BFS rounds.

It loads a graph (.npz written by the validation run), then for each kernel replays the chosen
rounds from one source (GpuBfs.replay_round: the same launches as the whole BFS, each round's
levels checked against the CPU BFS) and writes one CSV line per launch (kernel, source, level,
phase, grid) in launch order, so the profiler's rows, which come in the same order, can be
matched to them. A round whose levels are wrong ends the program with exit status 1.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from opmachine.kernels import parse_kernel
from opmachine.profile import load_profile
from simdmodel.errors import InputError
from simdmodel.load import load_graph

from .bfs import GpuBfs, LevelMismatch

LOG_COLUMNS = ("kernel", "source", "level", "phase", "grid")


def mismatch_path(log_path) -> Path:
    """Where a replay whose levels differ from the CPU BFS leaves its message, beside its log: ncu
    reports only that the program failed, and the caller must tell a kernel bug from a user mistake."""
    return Path(log_path).with_suffix(".mismatch")


def replay(graph, kernels, source: int, levels, profile, log_path) -> int:
    """Replay `levels` of the BFS from `source` with each kernel; returns the launches logged."""
    launches = 0
    with open(log_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=LOG_COLUMNS)
        writer.writeheader()
        for kernel in kernels:
            runner = GpuBfs(graph, kernel, profile)
            for level in levels:
                for row in runner.replay_round(source, level):
                    writer.writerow(row)
                    launches += 1
            runner.cp.cuda.Device().synchronize()
    return launches


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.replay", description=__doc__.splitlines()[0])
    parser.add_argument("graph", help="graph file (.npz) or generator spec")
    parser.add_argument("--kernels", required=True, help="comma-separated kernel labels")
    parser.add_argument("--source", type=int, required=True)
    parser.add_argument("--levels", required=True, help="comma-separated BFS levels to replay")
    parser.add_argument("--gpu", required=True, help="opmachine profile (launch geometry)")
    parser.add_argument("--log", required=True, help="CSV of the launches, in order")
    args = parser.parse_args(argv)
    try:
        graph = load_graph(args.graph)
        kernels = [parse_kernel(k) for k in args.kernels.split(",")]
        levels = [int(x) for x in args.levels.split(",")]
        replay(graph, kernels, args.source, levels, load_profile(args.gpu, "gpu"), args.log)
    except (InputError, ValueError) as error:
        print(f"gpu_validate.replay: error: {error}", file=sys.stderr)
        return 2
    except LevelMismatch as error:  # a kernel bug: the profiled round is wrong, so are its counters
        print(f"gpu_validate.replay: error: {error}", file=sys.stderr)
        Path(mismatch_path(args.log)).write_text(f"{error}\n", encoding="utf-8")  # for the caller under ncu
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
