// `ws`: expansion by warp segmentation (seed 004 §2.1) over the sorted frontier queue.
// Virtual warp c takes queue positions 32c .. 32c+31 (one per lane), runs on launched warp
// c % warps, scans the degrees in registers (no memory job) and strides over the E_w edges of
// its vertices: lane l takes edges l, l+32, ...; each finds its vertex by a binary search over
// the warp's prefix sums in shared memory (no global memory job).
#include "bfs_common.cuh"

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_expand_ws(const int* queue, int size, const int* row_start, const int* edge_dst, int* level, int current,
              unsigned long long* counters) {
    __shared__ int first_edge[BFS_BLOCK];  // per lane: the vertex's first edge
    __shared__ int offset[BFS_BLOCK];      // per lane: its edges' rank among the warp's edges
    const int lane = lane_id();
    const int base = threadIdx.x & ~31;
    const int warps = launched_warps();
    for (int c = global_warp(); c * 32 < size; c += warps) {  // trips: step
        const int pos = c * 32 + lane;
        int begin = 0, end = 0;
        if (pos < size) load_vertex(queue, row_start, pos, &begin, &end, counters);
        int degree = end - begin;
        const int inclusive = warp_inclusive_sum(degree, lane);
        const int total = __shfl_sync(0xffffffffu, inclusive, 31);
        first_edge[threadIdx.x] = begin;
        offset[threadIdx.x] = pos < size ? inclusive - degree : total;
        __syncwarp();
#pragma unroll 1
        for (int i = lane; i < total; i += 32) {  // trips: round
            const int lo = owner_of(offset + base, 31, i);
            visit_edge(edge_dst, level, first_edge[base + lo] + i - offset[base + lo], current + 1, counters);
        }
        __syncwarp();
    }
}
