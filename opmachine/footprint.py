"""Memory a prediction will allocate, checked against what the machine has before the simulation starts.

A BFS's launches are simulated one at a time, so beyond the graph and its BFS the simulation holds:
per sector id of the layout a request counter (int32) and the row buffers' index (int32 per DRAM
block); the largest launch's jobs (server int8, warp int32, sector offsets int64 per job, and
int32 per sector) with their interleaved order (`memory.interleaved_jobs`, uint64 per job), sized
as the job generators reserve them (`kernels.expansion_size`, `kernels.topo_size`); two blocks of
a strategy's decomposition (`simdmodel.strategies.BLOCK_EDGES` edges, with its steps: the one being
turned into jobs and the next, made beside it by `alongside.ahead`); the pieces of a block made from its
back on a second CPU, and the marks that making needs (`kernels.split`); and, predicting with a warm L2, the
prior run's traces kept for reuse (at most `predict.TRACE_REUSE_BYTES`). Where that does not fit, the
job buffers an earlier prediction of the process kept (`kernels.spare_buffer`) are let go and it is
checked again. A request that cannot fit gets one line with both sizes before any launch is simulated,
instead of being killed by the kernel part-way through.
"""
from __future__ import annotations

import numpy as np

from simdmodel import resources
from simdmodel.errors import InputError
from simdmodel.strategies.schedule import BLOCK_EDGES

from .kernels import expansion_size, release_spares, topo_size

JOB_BYTES = 1 + 4 + 8 + 8
"""A job's server, warp and sector offset in its trace, and its packed entry in the interleaved order."""
SECTOR_BYTES_IN_TRACE = 4
BLOCK_BYTES_PER_EDGE = 8 + 3 * 8
"""A decomposition block's edge ids and, at most one step an edge, its per-step arrays."""
BLOCKS_ALIVE = 2
"""The block being turned into jobs and the next (`alongside.ahead`; the one before is let go as the next
one's arrays are first written)."""
SPLIT_BYTES_PER_EDGE = 3 * (1 + 4 + 8) + 3 * SECTOR_BYTES_IN_TRACE
"""The jobs of a block's pieces made from the back (`kernels.split`): at most three jobs and three sectors
an edge, without the interleaved order."""


def launch_bytes(jobs: int, sectors: int) -> int:
    return JOB_BYTES * int(jobs) + SECTOR_BYTES_IN_TRACE * int(sectors)


def simulation_bytes(graph, layout, frontiers, expansion, profile, warm_l2: bool,
                     trace_budget: int) -> tuple[int, int]:
    """(bytes, level): memory the simulation of this BFS allocates beyond the graph and its frontiers,
    and the level of its largest launch. `layout`: the graph's (`layout.layout_for`); `expansion`: the
    data-driven kernel's mapping (None: topo)."""
    blocks = layout.total_sectors // max(profile.dram_block_bytes // 32, 1) + 1
    fixed = 4 * layout.total_sectors + 4 * blocks + 4 * graph.n  # request counter, row-buffer index, stamps
    sizes = []
    if expansion is None:
        sizes = [launch_bytes(*topo_size(graph, frontiers.frontier(level))) for level in range(frontiers.depth)]
    elif frontiers.depth:  # the level with the most edges, sized as its generator will; the others in proportion
        edges = np.asarray(frontiers.edge_frontier_sizes(graph), dtype=np.float64)
        largest = int(np.argmax(edges))
        most = launch_bytes(*expansion_size(graph, frontiers.frontier(largest), expansion))
        sizes = [int(most * edges[level] / max(edges[largest], 1.0)) for level in range(frontiers.depth)]
    level = int(np.argmax(sizes)) if sizes else 0
    largest_launch = max(sizes, default=0)
    kept = min(trace_budget, sum(sizes)) if warm_l2 else 0
    block = BLOCKS_ALIVE * BLOCK_BYTES_PER_EDGE * min(BLOCK_EDGES, graph.m)
    split = 4 * graph.n + SPLIT_BYTES_PER_EDGE * min(BLOCK_EDGES, graph.m)  # marks, and at most a block's jobs
    return fixed + largest_launch + kept + block + split, level


def check_simulation_fits(what: str, graph, layout, frontiers, expansion, profile, warm_l2: bool,
                          trace_budget: int) -> None:
    """InputError naming `what` unless `simulation_bytes` fits in the memory available now."""
    available = resources.available_bytes()
    if available is None:
        return
    needed, level = simulation_bytes(graph, layout, frontiers, expansion, profile, warm_l2, trace_budget)
    if needed > available and release_spares():
        available = resources.available_bytes() or 0
    if needed > available:
        raise InputError(f"{what}: simulating this BFS needs about {resources.format_bytes(needed)} more memory "
                         f"(its largest launch expands level {level}), but {resources.format_bytes(available)} "
                         "is available")
