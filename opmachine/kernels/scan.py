"""`scan`: data-driven expansion by CTA scan-based gathering (seed 001 §4.1), over the sorted queue.

CTA chunk c takes queue positions c*C .. c*C+C-1 and runs on block c % grid. Warp j of the CTA
loads its 32 entries (ANI) and their row offsets (ERL, kept in shared memory), a CTA prefix sum
follows (shared memory, no job), then `for i = tid; i < E; i += C`: warp j runs round r only
when 32j + r*C < E, and each lane finds its edge's vertex by a search in shared memory.
Generation order within a CTA: every warp's loads, then rounds in order, warps in order.
"""
from __future__ import annotations

import numba
import numpy as np

from ._jobs import fits, generate, inner_iteration, input_jobs, lane_buffers


@numba.njit(cache=True)
def _fill(indptr, indices, levels, stamp, level, front, cta_size, grid, b_row, b_edge, b_level, b_queue,
          chunk, chunks, job_server, job_warp, job_ptr, sectors, nj, ns):
    size = front.size
    warps_per_cta = cta_size // 32
    elements, _, edges, dst, stores = lane_buffers()
    vertex = np.empty(cta_size, dtype=np.int64)
    prefix = np.empty(cta_size + 1, dtype=np.int64)
    while chunk < chunks:
        first = chunk * cta_size
        count = min(cta_size, size - first)
        prefix[0] = 0
        for k in range(count):
            v = front[first + k]
            vertex[k] = v
            prefix[k + 1] = prefix[k] + indptr[v + 1] - indptr[v]
        work = prefix[count]
        warp_rounds = warps_per_cta * ((work + cta_size - 1) // cta_size)
        # Per warp, the input jobs touch at most 5 queue sectors and 2 x 32 row_start sectors.
        if not fits(nj, ns, 3 * warps_per_cta + 3 * warp_rounds, 72 * warps_per_cta + 3 * work, job_server, sectors):
            return chunk, nj, ns, 3 * warps_per_cta + 3 * warp_rounds, 72 * warps_per_cta + 3 * work
        first_warp = (chunk % grid) * warps_per_cta
        for j in range(warps_per_cta):
            lo = 32 * j
            hi = min(lo + 32, count)
            if lo >= hi:
                break
            nj, ns = input_jobs(first_warp + j, first, vertex, lo, hi, b_queue, b_row, elements, job_server,
                                job_warp, job_ptr, sectors, nj, ns)
        owner = 0
        r = 0
        while r * cta_size < work:
            for j in range(warps_per_cta):
                lo = r * cta_size + 32 * j
                if lo >= work:
                    break
                lanes = 0
                for i in range(lo, min(lo + 32, work)):
                    while prefix[owner + 1] <= i:
                        owner += 1
                    edges[lanes] = indptr[vertex[owner]] + i - prefix[owner]
                    lanes += 1
                nj, ns = inner_iteration(first_warp + j, edges, lanes, indices, levels, stamp, level, b_edge,
                                         b_level, dst, stores, job_server, job_warp, job_ptr, sectors, nj, ns)
            r += 1
        chunk += 1
    return chunk, nj, ns, 0, 0


def scan_jobs(graph, levels, stamp, level, front, cta_size: int, layout, grid: int):
    """JobTrace of the scan-based gathering expansion of `front` with CTAs of `cta_size` on `grid` blocks."""
    chunks = -(-front.size // cta_size)
    base = layout.base_sector
    args = (graph.indptr, graph.indices, levels, stamp, level, front, cta_size, grid,
            base["row_start"], base["edge_dst"], base["level"], base["queue"])
    return generate(_fill, args, chunks, grid * (cta_size // 32), 24 * chunks, 48 * chunks)
