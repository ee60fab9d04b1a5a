"""The baseline the model benchmarks divide by: a graph built from its spec, and a plain numba BFS on it."""
from __future__ import annotations

import time

import numpy as np

from simdmodel.frontier import bfs_queue, pick_sources
from simdmodel.load import load_graph


def graph_and_bfs(spec: str):
    """The graph of `spec`, its first seeded source and a plain BFS's seconds from it (median of seven runs
    after one warm-up: one run varies by 2x on a shared machine), each printed as it is known."""
    start = time.perf_counter()
    graph = load_graph(spec)
    print(f"{spec}: n={graph.n:,} m={graph.m:,} (built in {time.perf_counter() - start:.2f} s)")
    source = int(pick_sources(graph, 1, 1)[0])
    bfs_queue(graph.indptr, graph.indices, source)
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        bfs_queue(graph.indptr, graph.indices, source)
        runs.append(time.perf_counter() - start)
    bfs_s = float(np.median(runs))
    print(f"plain BFS: {bfs_s:.3f} s (median of 7 runs, {min(runs):.3f}-{max(runs):.3f})")
    return graph, source, bfs_s
