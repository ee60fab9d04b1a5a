"""Speed of the coupled-BFS prediction (`opmachine.coupled`), as ratios to a plain BFS timed in the same run.

    PYTHONPATH=. .venv/bin/python bench/bench_couplings.py [--spec rmat:scale=20,ef=16] [--gpu h200]
                                                          [--kernels expand-contract,contract-expand,two-phase,hybrid]

Prints, per coupling, the wall time of `predict_coupled_bfs` (the coupled BFS with its lookups, every launch's
jobs, the warm L2 and row buffers, the instruction trips, the critical-path time), the simulated sector
accesses per second, and the ratio to a plain numba BFS on the same graph (median of 7 runs); beside it the
prediction of the two-launch `swc` BFS (`predict_bfs`, warm L2) for scale. numba compilation is warmed up on a
small graph first.
"""
from __future__ import annotations

import argparse
import time

from opmachine.coupled import predict_coupled_bfs
from opmachine.kernels import parse_kernel
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from simdmodel.couplings import parse_coupling
from simdmodel.frontier import pick_sources
from simdmodel.load import load_graph

from baseline import graph_and_bfs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default="rmat:scale=20,ef=16,seed=1")
    parser.add_argument("--gpu", default="h200")
    parser.add_argument("--kernels", default="expand-contract,contract-expand,two-phase,hybrid")
    args = parser.parse_args()
    profile = load_profile(args.gpu, kind="gpu")
    couplings = [parse_coupling(k) for k in args.kernels.split(",")]
    small = load_graph("rmat:scale=10,ef=8,seed=1")
    small_source = int(pick_sources(small, 1, 1)[0])
    for coupling in couplings:
        predict_coupled_bfs(small, small_source, coupling, profile)
    predict_bfs(small, small_source, parse_kernel("swc"), profile, l2_model="setassoc", warm_l2=True)
    graph, source, bfs_s = graph_and_bfs(args.spec)
    print(f"{'kernel':16} {'launches':>8} {'seconds':>8} {'/BFS':>7} {'sectors':>13} {'Msectors/s':>11} "
          f"{'predicted ms':>13}")
    for coupling in couplings:
        start = time.perf_counter()
        table = predict_coupled_bfs(graph, source, coupling, profile)
        took = time.perf_counter() - start
        sectors = int(table["l2_sectors"].sum())
        print(f"{coupling.label:16} {len(table):8d} {took:8.2f} {took / bfs_s:7.0f} {sectors:13,} "
              f"{sectors / took / 1e6:11.1f} {table['predicted_ns'].sum() / 1e6:13.3f}")
    start = time.perf_counter()
    result = predict_bfs(graph, source, parse_kernel("swc"), profile, l2_model="setassoc", warm_l2=True)
    took = time.perf_counter() - start
    sectors = int(result.per_level["l2_sectors"].sum())
    print(f"{'swc (two-launch)':16} {len(result.per_level):8d} {took:8.2f} {took / bfs_s:7.0f} {sectors:13,} "
          f"{sectors / took / 1e6:11.1f} {result.predicted_ns / 1e6:13.3f}")


if __name__ == "__main__":
    main()
