"""What each event of Listing 1's loop costs on this core, measured by running the loop itself.

The serial BFS is not a chain of dependent loads (the MLP-1 chase of `opmachine.cpu_microbench`): the
core overlaps the independent level loads of a node's edges, prefetchers stream `level`, `row_start`
and `edge_dst`, and a mispredicted branch throws work away. Rather than assume how much of each
happens, every cost here is the compiled round `kernel.listing1_round` timed on a synthetic input
that isolates one event (`opmachine.profile.LoopCosts` says what each figure is):

- call: a one-node graph, one round (the fixed cost of a round, the timer included); for the
  multi-threaded round, one node per thread on all of numba's threads (`parallel_call_ns`);
- scan: every node labelled, none in the frontier; vertex: every node in the frontier, no edges;
- branch: a random half of the nodes in the frontier, so the frontier test mispredicts at about
  every change of its outcome ("switch"), no edges;
- gather at each cache level: one frontier node whose edges point at random labelled nodes of a
  level array of half that level's size, the working sets of the latency chase
  (`cpu_microbench.working_sets`; memory likewise);
- store: the same edges once unlabelled (every edge stores), once labelled, in the L1's level
  array; store branch: a random half of them unlabelled, in the L2's level array (larger than a
  branch predictor can learn the pattern of).

Each input is reset before every timed round (the reset is not timed); a cost is the median over
`repeats` rounds, less the costs measured before it. The multi-threaded round's body (numba compiles
a `prange` loop apart) is measured the same way on one thread (`parallel_loop_costs`). Nothing here
sees a BFS of a real graph.
"""
from __future__ import annotations

import time

import numpy as np

import numba

from .kernel import _aligned_copy, listing1_parallel_round, listing1_round

LEVEL_VALUE = 1  # the round timed: its frontier is the nodes labelled 0
LABELLED = 5  # a label that is neither the frontier's nor unlabelled (-1)
EDGES = 1 << 21  # edges of the gather inputs
SWITCH_NODES = 1 << 20  # nodes of the branch input


def _round_ns(indptr: np.ndarray, indices: np.ndarray, labels: np.ndarray, repeats: int,
              kernel=listing1_round) -> float:
    """Median ns of one round of `kernel` over these arrays, each run from `labels` afresh."""
    row = _aligned_copy(indptr, np.int32, 4096)
    dst = _aligned_copy(indices if indices.size else np.zeros(1, np.int32), np.int32, 4096)
    level = _aligned_copy(labels, np.int32, 4096)
    times = np.empty(repeats, dtype=np.int64)
    kernel(row, dst, level, LEVEL_VALUE)  # compile or load, and fault the pages in
    for k in range(repeats):
        np.copyto(level, labels)
        start = time.perf_counter_ns()
        kernel(row, dst, level, LEVEL_VALUE)
        times[k] = time.perf_counter_ns() - start
    return float(np.median(times))


def _no_edges(n: int) -> np.ndarray:
    return np.zeros(n + 1, dtype=np.int64)


def _one_vertex(n: int, edges: int) -> np.ndarray:
    """Row offsets of node 0 owning all `edges`, every other node none."""
    indptr = np.full(n + 1, edges, dtype=np.int64)
    indptr[0] = 0
    return indptr


def sets_of_gathers(cache_bytes: list[int], memory_bytes: int) -> list[int]:
    """The level array bytes of the gathers per cache level (half of it) and for memory."""
    return [size // 2 for size in cache_bytes] + [int(memory_bytes)]


def _switches(flags: np.ndarray) -> int:
    """Changes of a branch outcome along `flags`, the first counted against a not-taken start."""
    flags = np.asarray(flags, dtype=bool)
    return int(np.count_nonzero(flags[1:] != flags[:-1])) + int(flags.size > 0 and flags[0])


def parallel_call_ns(threads: int) -> float:
    """The fixed cost (ns) of one multi-threaded round on `threads` of numba's threads: one node each."""
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        return _round_ns(_no_edges(threads), np.zeros(0, dtype=np.int32), np.full(threads, LABELLED, np.int32), 101,
                         listing1_parallel_round)
    finally:
        numba.set_num_threads(previous)


def parallel_loop_costs(cache_bytes: list[int], memory_bytes: int, repeats: int = 9, seed: int = 1) -> dict:
    """`measure_loop_costs` of the multi-threaded round's body, on one thread, with `call_ns` the fixed
    cost of a round on all of numba's threads (`threads`)."""
    previous = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        costs = measure_loop_costs(cache_bytes, memory_bytes, repeats, seed, listing1_parallel_round)
    finally:
        numba.set_num_threads(previous)
    return {**costs, "call_ns": parallel_call_ns(previous), "threads": previous}


def measure_loop_costs(cache_bytes: list[int], memory_bytes: int, repeats: int = 9, seed: int = 1,
                       kernel=listing1_round) -> dict:
    """`LoopCosts` fields (ns) of `kernel` (a round of Listing 1) for a core whose cache levels hold
    `cache_bytes` (L1 first), with gathers over `memory_bytes` for memory, plus `working_sets`, the
    level array bytes each gather used. Takes a few seconds and about 3 x `memory_bytes` of memory."""
    rng = np.random.default_rng(seed)
    empty = np.zeros(0, dtype=np.int32)

    def round_ns(indptr, indices, labels, count):
        return _round_ns(indptr, indices, labels, count, kernel)

    call = round_ns(_no_edges(1), empty, np.full(1, LABELLED, np.int32), 101)

    n = max(cache_bytes[1] // 8, 1024)  # a level array of half the L2
    scan = (round_ns(_no_edges(n), empty, np.full(n, LABELLED, np.int32), repeats) - call) / n
    vertex = (round_ns(_no_edges(n), empty, np.zeros(n, np.int32), repeats) - call) / n - scan

    frontier = rng.random(SWITCH_NODES) < 0.5
    labels = np.where(frontier, 0, LABELLED).astype(np.int32)
    elapsed = round_ns(_no_edges(SWITCH_NODES), empty, labels, repeats) - call
    branch = (elapsed - SWITCH_NODES * scan - int(frontier.sum()) * vertex) / _switches(frontier)

    sets = sets_of_gathers(cache_bytes, memory_bytes)
    gather = []
    for working_set in sets:
        n = max(working_set // 4, 2)
        dst = rng.integers(1, n, EDGES, dtype=np.int32) if n > 1 else np.zeros(EDGES, np.int32)
        labels = np.full(n, LABELLED, np.int32)
        labels[0] = 0
        elapsed = round_ns(_one_vertex(n, EDGES), dst, labels, max(3, repeats // 2)) - call
        gather.append((elapsed - n * scan - vertex) / EDGES)

    def stores_per_edge(working_set: int, unlabelled_share: float) -> tuple[float, int, int]:
        """ns per edge over a permutation of the nodes with this share unlabelled; stores; switches."""
        n = max(working_set // 4, 3)
        dst = rng.permutation(np.arange(1, n, dtype=np.int32))
        unlabelled = rng.random(n) < unlabelled_share
        labels = np.where(unlabelled, -1, LABELLED).astype(np.int32)
        labels[0] = 0
        elapsed = round_ns(_one_vertex(n, dst.size), dst, labels, max(repeats, 41)) - call
        taken = unlabelled[dst]
        return (elapsed - n * scan - vertex) / dst.size, int(taken.sum()), _switches(taken)

    l1_set, l2_set = sets[0], sets[1]
    visited, _, _ = stores_per_edge(l1_set, 0.0)
    stored, _, _ = stores_per_edge(l1_set, 1.0)
    store = max(stored - visited, 0.0)
    visited, _, _ = stores_per_edge(l2_set, 0.0)
    mixed, taken, switches = stores_per_edge(l2_set, 0.5)
    edges = max(l2_set // 4, 3) - 1
    store_branch = ((mixed - visited) * edges - taken * store) / max(switches, 1)
    return {"call_ns": max(call, 0.0), "scan_ns": scan, "vertex_ns": vertex, "branch_ns": branch,
            "gather_ns": gather, "store_ns": store, "store_branch_ns": store_branch, "working_sets": sets}
