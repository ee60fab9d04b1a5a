"""`ws`: data-driven expansion by warp segmentation (seed 004 §2.1), over the sorted queue.

Virtual warp c takes queue positions 32c .. 32c+31 (one per lane) and runs on launched warp
c % warps: ANI reads the queue, ERL reads both row offsets, a warp prefix sum of the degrees
(registers, no memory job), then ceil(E_w/32) iterations in which lane l takes the (it*32 + l)-th
of the warp's concatenated edges, found by a search over the prefix sums (also no memory job).
"""
from __future__ import annotations

import numba

from ._jobs import fits, generate, inner_iteration, input_jobs, lane_buffers


@numba.njit(cache=True)
def _fill(indptr, indices, levels, stamp, level, front, warps, b_row, b_edge, b_level, b_queue,
          chunk, chunks, job_server, job_warp, job_ptr, sectors, nj, ns):
    size = front.size
    elements, vertex, edges, dst, stores = lane_buffers()
    while chunk < chunks:
        first = chunk * 32
        count = min(32, size - first)
        work = 0
        for k in range(count):
            v = front[first + k]
            vertex[k] = v
            work += indptr[v + 1] - indptr[v]
        rounds = (work + 31) // 32
        if not fits(nj, ns, 3 + 3 * rounds, 80 + 3 * work, job_server, sectors):
            return chunk, nj, ns, 3 + 3 * rounds, 80 + 3 * work
        warp = chunk % warps
        nj, ns = input_jobs(warp, first, vertex, 0, count, b_queue, b_row, elements, job_server, job_warp,
                            job_ptr, sectors, nj, ns)
        owner = 0
        owner_first = 0  # index of the owner's first edge among the warp's concatenated edges
        for step in range(rounds):
            lanes = 0
            for j in range(step * 32, min(step * 32 + 32, work)):
                while j - owner_first >= indptr[vertex[owner] + 1] - indptr[vertex[owner]]:
                    owner_first += indptr[vertex[owner] + 1] - indptr[vertex[owner]]
                    owner += 1
                edges[lanes] = indptr[vertex[owner]] + j - owner_first
                lanes += 1
            nj, ns = inner_iteration(warp, edges, lanes, indices, levels, stamp, level, b_edge, b_level,
                                     dst, stores, job_server, job_warp, job_ptr, sectors, nj, ns)
        chunk += 1
    return chunk, nj, ns, 0, 0


def ws_jobs(graph, levels, stamp, level, front, layout, warps: int):
    """JobTrace of the warp-segmentation expansion of frontier `front` with `warps` launched warps."""
    chunks = -(-front.size // 32)
    base = layout.base_sector
    args = (graph.indptr, graph.indices, levels, stamp, level, front, warps,
            base["row_start"], base["edge_dst"], base["level"], base["queue"])
    return generate(_fill, args, chunks, warps, 6 * chunks, 12 * chunks)
