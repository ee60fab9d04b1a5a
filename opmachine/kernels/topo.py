"""`topo`: the topology-driven BFS kernel of seed 003 Listing 2, one thread per node, grid-stride.

Round LEVEL = L+1 expands the frontier of level L. Thread t of a launch with T threads visits nodes
t, t+T, ...; with T a multiple of 32, warp w's k-th step covers the 32 nodes of chunk w + k*(T/32).
Per warp step (Fig. 4): ANI re-reads `num_nodes`, NF1 reads `level[node]`; if any lane passes the
filter, ERL reads `row_start[node]` and `row_start[node+1]`; the inner loop runs max(active
degrees) times, each an EDL, an NF2 and, when a lane stores, an OP job.
"""
from __future__ import annotations

import numba
import numpy as np

from ._jobs import (
    ANI,
    ERL,
    NF1,
    fits,
    generate,
    inner_iteration,
    lane_buffers,
    push_job,
)


@numba.njit(cache=True)
def _fill(indptr, indices, levels, stamp, level, warps, b_ani, b_row, b_edge, b_level,
          chunk, chunks, job_server, job_warp, job_ptr, sectors, nj, ns):
    n = levels.size
    elements, active, edges, dst, stores = lane_buffers()
    while chunk < chunks:
        first = chunk * 32
        last = min(first + 32, n)
        count = 0
        rounds = 0
        work = 0
        for v in range(first, last):
            if levels[v] == level:
                active[count] = v
                count += 1
                degree = indptr[v + 1] - indptr[v]
                rounds = max(rounds, degree)
                work += degree
        if not fits(nj, ns, 4 + 3 * rounds, 20 + 3 * work, job_server, sectors):
            return chunk, nj, ns, 4 + 3 * rounds, 20 + 3 * work
        warp = chunk % warps
        elements[0] = 0
        nj, ns = push_job(ANI, warp, elements, 1, b_ani, job_server, job_warp, job_ptr, sectors, nj, ns)
        for i in range(last - first):
            elements[i] = first + i
        nj, ns = push_job(NF1, warp, elements, last - first, b_level, job_server, job_warp, job_ptr, sectors, nj, ns)
        if count > 0:
            nj, ns = push_job(ERL, warp, active, count, b_row, job_server, job_warp, job_ptr, sectors, nj, ns)
            for i in range(count):
                elements[i] = active[i] + 1
            nj, ns = push_job(ERL, warp, elements, count, b_row, job_server, job_warp, job_ptr, sectors, nj, ns)
            for step in range(rounds):
                lanes = 0
                for i in range(count):
                    v = active[i]
                    if indptr[v] + step < indptr[v + 1]:
                        edges[lanes] = indptr[v] + step
                        lanes += 1
                nj, ns = inner_iteration(warp, edges, lanes, indices, levels, stamp, level, b_edge, b_level,
                                         dst, stores, job_server, job_warp, job_ptr, sectors, nj, ns)
        chunk += 1
    return chunk, nj, ns, 0, 0


def topo_jobs(graph, levels: np.ndarray, stamp: np.ndarray, level: int, layout, warps: int):
    """JobTrace of the topo launch that expands frontier `level` with `warps` launched warps."""
    chunks = -(-graph.n // 32)
    base = layout.base_sector
    args = (graph.indptr, graph.indices, levels, stamp, level, warps,
            base["num_nodes"], base["row_start"], base["edge_dst"], base["level"])
    return generate(_fill, args, chunks, warps, 3 * chunks, 6 * chunks)
