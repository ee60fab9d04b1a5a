"""Speed of the whole operator-machine prediction, as ratios to a plain BFS timed in the same run.

    PYTHONPATH=. .venv/bin/python bench/bench_opm.py [--spec rmat:scale=20,ef=16] [--kernels topo,sm-8,ws,scan]
                                                    [--time-models critical,eq4] [--warm-l2]

Prints, per kernel, L2 model and time model, the wall time of `predict_bfs` (job generation,
coalescing, L2 and row-buffer simulation, prediction), the simulated sector accesses per second,
and the ratio to a plain numba BFS on the same graph (median of 7 runs); the critical-path time
model's per-warp accounting is the difference between its rows and eq4's. numba compilation is warmed up on a
small graph first. `--warm-l2` predicts as the commands do by default: the set-associative L2
kept warm from launch to launch and from a prior run of the same BFS (an `lru` row stays cold).
"""
from __future__ import annotations

import argparse
import time

from opmachine.kernels import parse_kernel
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from simdmodel.frontier import pick_sources
from simdmodel.load import load_graph

from baseline import graph_and_bfs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="rmat:scale=20,ef=16,seed=1")
    parser.add_argument("--kernels", default="topo,sm-8,ws,scan")
    parser.add_argument("--gpu", default="h100")
    parser.add_argument("--l2", default="lru,setassoc")
    parser.add_argument("--time-models", default="critical,eq4")
    parser.add_argument("--warm-l2", action="store_true", help="warm set-associative L2, as the commands predict")
    args = parser.parse_args()
    time_models = args.time_models.split(",")
    profile = load_profile(args.gpu, kind="gpu")
    kernels = [parse_kernel(k) for k in args.kernels.split(",")]
    small = load_graph("rmat:scale=10,ef=8,seed=1")
    for kernel in kernels:
        for l2 in args.l2.split(","):
            for model in time_models:
                predict_bfs(small, int(pick_sources(small, 1, 1)[0]), kernel, profile, l2_model=l2, time_model=model)
    graph, source, bfs_s = graph_and_bfs(args.spec)
    print(f"{'kernel':8} {'l2':9} {'time':9} {'seconds':>8} {'/BFS':>7} {'sectors':>13} {'Msectors/s':>11} "
          f"{'predicted ms':>13}")
    for kernel in kernels:
        for l2 in args.l2.split(","):
            for model in time_models:
                start = time.perf_counter()
                result = predict_bfs(graph, source, kernel, profile, l2_model=l2, time_model=model,
                                     warm_l2=args.warm_l2 and l2 == "setassoc")
                seconds = time.perf_counter() - start
                simulated = result.per_level.loc[result.per_level["phase"] != "compact", "l2_sectors"].sum()
                print(f"{kernel.label:8} {l2:9} {model:9} {seconds:8.2f} {seconds / bfs_s:7.1f} {simulated:13,} "
                      f"{simulated / seconds / 1e6:11.1f} {result.predicted_ns / 1e6:13.3f}")


if __name__ == "__main__":
    main()
