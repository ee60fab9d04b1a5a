// `topo`: seed 003 Listing 2, the topology-driven BFS round. One thread per node, grid-stride.
// Per warp step: NF1 reads level[node]; lanes whose node has level `current` read its edge range
// (ERL x2) and walk its edges in lockstep (EDL, NF2, OP). The loop test re-reads num_nodes from
// memory at the end of every step (ANI, one job per step); the first test uses the argument n,
// which holds the same value, so a warp runs exactly one ANI job per step it takes. The loop runs
// per warp chunk (warp-uniform) and the warp reconverges before the test: otherwise lanes that
// finish their edges early run ahead (independent thread scheduling) and split the ANI job.
#include "bfs_common.cuh"

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_topo(const int* num_nodes, int n, const int* row_start, const int* edge_dst, int* level, int current,
         unsigned long long* counters) {
    const int threads = gridDim.x * blockDim.x;
    int first = global_warp() * 32;  // the warp's chunk: nodes first .. first+31
    if (first >= n) return;
    do {
        const int node = first + lane_id();
        if (node < n) {
            COUNT_JOB(C_NF1);
            if (load_cg(level + node) == current) {  // trips: vertex
                COUNT_JOB(C_ERL);
                int begin = load_cg(row_start + node);
                COUNT_JOB(C_ERL);
                int end = load_cg(row_start + node + 1);
#pragma unroll 1
                for (int e = begin; e < end; ++e)  // trips: round
                    visit_edge(edge_dst, level, e, current + 1, counters);
            }
        }
        __syncwarp();  // reconverge: the warp reads num_nodes once per step, as in lockstep execution
        first += threads;
        COUNT_JOB(C_ANI);
    } while (first < load_cg(num_nodes));  // trips: step
}
