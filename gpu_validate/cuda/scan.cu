// `scan`: expansion by CTA scan-based gathering (seed 001 §4.1) over the sorted frontier queue.
// CTA chunk c takes queue positions c*C .. c*C+C-1 (C = block size) and runs on block c % grid:
// each thread loads its vertex and edge range (warps with no entry load nothing), a block prefix
// sum of the degrees in shared memory follows (no memory job), then `for i = tid; i < E; i += C`
// each thread finds the vertex of the CTA's i-th edge by a binary search in shared memory.
#include "bfs_common.cuh"

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_expand_scan(const int* queue, int size, const int* row_start, const int* edge_dst, int* level, int current,
                unsigned long long* counters) {
    __shared__ int first_edge[BFS_BLOCK];
    __shared__ int offset[BFS_BLOCK];
    __shared__ int warp_total[BFS_BLOCK / 32];
    const int C = blockDim.x;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    for (int chunk = blockIdx.x; chunk * C < size; chunk += gridDim.x) {  // trips: step
        const int count = min(C, size - chunk * C);
        int begin = 0, end = 0;
        if (warp * 32 < count) {  // trips: vertex (a warp with no entry issues no load at all)
            if (tid < count) load_vertex(queue, row_start, chunk * C + tid, &begin, &end, counters);
        }
        int total;
        const int before = block_exclusive_sum(end - begin, warp_total, &total);
        first_edge[tid] = begin;
        offset[tid] = tid < count ? before : total;
        __syncthreads();
#pragma unroll 1
        for (int i = tid; i < total; i += C) {  // trips: round
            const int lo = owner_of(offset, C - 1, i);
            visit_edge(edge_dst, level, first_edge[lo] + i - offset[lo], current + 1, counters);
        }
        __syncthreads();
    }
}
