// `sm-S`: expansion of the sorted frontier queue with a group of S lanes per vertex (seed 000 §5.1).
// g = 32 / S groups per warp; virtual warp c takes queue positions c*g .. c*g+g-1 and runs on
// launched warp c % warps. Lane j of group k walks edges begin_k + j, begin_k + j + S, ...; lanes
// 32 - 32 % S .. 31 own no group when S does not divide 32.
#include "bfs_common.cuh"

template <int S>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_expand_group(const int* queue, int size, const int* row_start, const int* edge_dst, int* level, int current,
                 unsigned long long* counters) {
    constexpr int G = 32 / S;
    const int lane = lane_id();
    const int group = lane / S;
    const int j = lane % S;
    const int warps = launched_warps();
    for (int c = global_warp(); c * G < size; c += warps) {  // trips: step
        const int pos = c * G + group;
        if (group < G && pos < size) {
            int begin, end;
            load_vertex(queue, row_start, pos, &begin, &end, counters);
#pragma unroll 1
            for (int e = begin + j; e < end; e += S)  // trips: round
                visit_edge(edge_dst, level, e, current + 1, counters);
        }
        __syncwarp();  // reconverge before the next virtual warp's loads (one ANI / ERL job each)
    }
}
