"""`sm-S`: data-driven expansion with a group of S lanes per frontier vertex (seed 000 §5.1).

The launch strides over the sorted frontier queue: g = floor(32/S) groups per warp, so virtual
warp c takes queue positions c*g .. c*g+g-1 (the same grouping as simdmodel's lane accounting)
and runs on launched warp c % warps. Per virtual warp: ANI reads the queue (each group's lanes read
their vertex), ERL reads `row_start[v]` and `row_start[v+1]`, then max_k ceil(d_k/S) lockstep
iterations in which lane j of group k takes edge start_k + it*S + j.
"""
from __future__ import annotations

import numba

from ._jobs import fits, generate, inner_iteration, input_jobs, lane_buffers


@numba.njit(cache=True)
def _fill(indptr, indices, levels, stamp, level, front, group_size, warps, b_row, b_edge, b_level, b_queue,
          chunk, chunks, job_server, job_warp, job_ptr, sectors, nj, ns):
    groups = 32 // group_size
    size = front.size
    elements, vertex, edges, dst, stores = lane_buffers()
    while chunk < chunks:
        first = chunk * groups
        count = min(groups, size - first)
        rounds = 0
        work = 0
        for k in range(count):
            v = front[first + k]
            vertex[k] = v
            degree = indptr[v + 1] - indptr[v]
            rounds = max(rounds, (degree + group_size - 1) // group_size)
            work += degree
        if not fits(nj, ns, 3 + 3 * rounds, 80 + 3 * work, job_server, sectors):
            return chunk, nj, ns, 3 + 3 * rounds, 80 + 3 * work
        warp = chunk % warps
        nj, ns = input_jobs(warp, first, vertex, 0, count, b_queue, b_row, elements, job_server, job_warp,
                            job_ptr, sectors, nj, ns)
        for step in range(rounds):
            lanes = 0
            for k in range(count):
                v = vertex[k]
                begin = indptr[v] + step * group_size
                end = min(begin + group_size, indptr[v + 1])
                for e in range(begin, end):
                    edges[lanes] = e
                    lanes += 1
            nj, ns = inner_iteration(warp, edges, lanes, indices, levels, stamp, level, b_edge, b_level,
                                     dst, stores, job_server, job_warp, job_ptr, sectors, nj, ns)
        chunk += 1
    return chunk, nj, ns, 0, 0


def group_jobs(graph, levels, stamp, level, front, group_size: int, layout, warps: int):
    """JobTrace of the sm-S expansion of frontier `front` (level `level`) with `warps` launched warps."""
    groups = 32 // group_size
    chunks = -(-front.size // groups)
    base = layout.base_sector
    args = (graph.indptr, graph.indices, levels, stamp, level, front, group_size, warps,
            base["row_start"], base["edge_dst"], base["level"], base["queue"])
    return generate(_fill, args, chunks, warps, 6 * chunks, 12 * chunks)


def chunks_of(front_size: int, group_size: int) -> int:
    """Virtual warps an sm-S expansion of `front_size` entries needs."""
    return -(-front_size // (32 // group_size))
