// `swc`: expansion by scan+warp+CTA gathering (seed 001 §4.1) over the sorted frontier queue.
// CTA chunk c takes queue positions c*C .. c*C+C-1 (C = block size) and runs on block c % grid; each
// thread loads its vertex and edge range (warps with no entry load nothing), then three phases walk
// the lists (simdmodel/strategies/swc.py):
// - CTA: lists longer than the CTA (degree > C), one after another in thread order, each strip-mined
//   by the whole CTA, `for i = tid; i < d; i += C`. A block prefix sum of the flags ranks them into
//   shared memory, so every thread walks the same lists in the same order.
// - warp: lists longer than a warp (32 < degree <= C), each warp its own in lane order (a ballot, then
//   the lowest set lane first), `for i = lane; i < d; i += 32`.
// - scan: the loose ends (degree <= 32), a block prefix sum of their degrees and
//   `for i = tid; i < E; i += C`, each thread finding its edge's owner by a binary search, as `scan`.
// The seed's threads vie for control through a shared word; ranking them instead walks the same lists
// in a fixed order, so lanes and jobs follow the frontier alone.
#include "bfs_common.cuh"

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_expand_swc(const int* queue, int size, const int* row_start, const int* edge_dst, int* level, int current,
               unsigned long long* counters) {
    __shared__ int first_edge[BFS_BLOCK];
    __shared__ int offset[BFS_BLOCK];
    __shared__ int warp_total[BFS_BLOCK / 32];
    __shared__ int cta_first[BFS_BLOCK];  // the CTA phase's lists, in thread order
    __shared__ int cta_degree[BFS_BLOCK];
    const int C = blockDim.x;
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = lane_id();
    for (int chunk = blockIdx.x; chunk * C < size; chunk += gridDim.x) {  // trips: step
        const int count = min(C, size - chunk * C);
        int begin = 0, end = 0;
        if (warp * 32 < count) {  // trips: vertex (a warp with no entry issues no load at all)
            if (tid < count) load_vertex(queue, row_start, chunk * C + tid, &begin, &end, counters);
        }
        const int degree = end - begin;
        int lists;
        const int rank = block_exclusive_sum(degree > C ? 1 : 0, warp_total, &lists);
        if (degree > C) {
            cta_first[rank] = begin;
            cta_degree[rank] = degree;
        }
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < lists; ++k) {  // trips: cta_list
            const int first = cta_first[k], d = cta_degree[k];
#pragma unroll 1
            for (int i = tid; i < d; i += C) {  // trips: cta_round
                visit_edge(edge_dst, level, first + i, current + 1, counters);
            }
        }
        unsigned mine = __ballot_sync(0xffffffffu, degree > 32 && degree <= C);
#pragma unroll 1
        while (mine) {  // trips: warp_list
            const int owner = __ffs(mine) - 1;
            mine &= mine - 1;
            const int first = __shfl_sync(0xffffffffu, begin, owner);
            const int d = __shfl_sync(0xffffffffu, degree, owner);
#pragma unroll 1
            for (int i = lane; i < d; i += 32) {  // trips: warp_round
                visit_edge(edge_dst, level, first + i, current + 1, counters);
            }
            __syncwarp();
        }
        int total;
        const int before = block_exclusive_sum(degree <= 32 ? degree : 0, warp_total, &total);
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
