// Shared pieces of the modelled BFS kernels (DESIGN.md "Operator machine", seed 003 §6.3).
//
// Every load the model counts as a job is one `ld.global.cg` instruction (L2 only: the model has
// no L1, like the K40c's uncached global loads), issued through `asm volatile` so the compiler
// neither merges nor drops it (ptxas may still hoist one out of a loop that stores nothing that
// could alias it: `load_relaxed` below), so Nsight Compute's smsp__sass_inst_executed_op_global_ld
// equals the model's ANI + NF1 + ERL + EDL + NF2 job count. The OP job is a plain global store.
//
// Built with -DCOUNT_LANES=1, each load site and the expansion loop also count, once per warp
// instruction, the jobs per server and the lane slots / useful lanes (__activemask / __popc) into
// `counters` (unsigned long long[8]): lane_slots, useful_lanes, jobs ANI, NF1, ERL, EDL, NF2, OP.
#pragma once

#define BFS_UNVISITED (-1)
#define BFS_BLOCK 256
#define BFS_MIN_BLOCKS 8  // 8 blocks of 256 fill an SM of 2048 threads: one full wave is co-resident

enum { C_SLOTS = 0, C_USEFUL = 1, C_ANI = 2, C_NF1 = 3, C_ERL = 4, C_EDL = 5, C_NF2 = 6, C_OP = 7 };

__device__ __forceinline__ int load_cg(const int* p) {
    int v;
    asm volatile("ld.global.cg.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// The ANI re-read of num_nodes in a loop with no global store that could alias it: a relaxed
// GPU-scope load, which ptxas performs every time (it hoists a plain .cg load out of such a loop)
// and which compiles to the same L2 load (LDG.E.STRONG.GPU); a volatile load would be system-scope
// and several times slower.
__device__ __forceinline__ int load_relaxed(const int* p) {
    int v;
    asm volatile("ld.relaxed.gpu.global.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

#if COUNT_LANES
// One count per warp-level instruction: the lowest active lane adds for the warp.
__device__ __forceinline__ void count_job(unsigned long long* counters, int server) {
    unsigned mask = __activemask();
    if (lane_id() == (unsigned)(__ffs(mask) - 1)) atomicAdd(counters + server, 1ull);
}
__device__ __forceinline__ void count_lanes(unsigned long long* counters) {
    unsigned mask = __activemask();
    if (lane_id() == (unsigned)(__ffs(mask) - 1)) {
        atomicAdd(counters + C_SLOTS, 32ull);
        atomicAdd(counters + C_USEFUL, (unsigned long long)__popc(mask));
    }
}
#define COUNT_JOB(server) count_job(counters, server)
#define COUNT_LANES_HERE() count_lanes(counters)
#else
#define COUNT_JOB(server) ((void)0)
#define COUNT_LANES_HERE() ((void)0)
#endif

// One lockstep inner-loop iteration of the expansion: EDL reads edge_dst[e], NF2 reads level[dst],
// OP stores level[dst] = next when it was unvisited.
__device__ __forceinline__ void visit_edge(const int* edge_dst, int* level, int e, int next,
                                           unsigned long long* counters) {
    COUNT_LANES_HERE();
    COUNT_JOB(C_EDL);
    int d = load_cg(edge_dst + e);
    COUNT_JOB(C_NF2);
    if (load_cg(level + d) == BFS_UNVISITED) {
        COUNT_JOB(C_OP);
        level[d] = next;
    }
}

// A data-driven warp's input (ANI, then ERL twice): the vertex at queue[pos] and its edge range.
__device__ __forceinline__ int load_vertex(const int* queue, const int* row_start, int pos, int* begin,
                                           int* end, unsigned long long* counters) {
    COUNT_JOB(C_ANI);
    int v = load_cg(queue + pos);
    COUNT_JOB(C_ERL);
    *begin = load_cg(row_start + v);
    COUNT_JOB(C_ERL);
    *end = load_cg(row_start + v + 1);
    return v;
}

__device__ __forceinline__ int global_warp() { return (blockIdx.x * blockDim.x + threadIdx.x) >> 5; }
__device__ __forceinline__ int launched_warps() { return (gridDim.x * blockDim.x) >> 5; }

// Inclusive prefix sum of `value` over the warp's lanes (shuffles only, no memory job): ws and scan
// turn their vertices' degrees into edge offsets with it.
__device__ __forceinline__ int warp_inclusive_sum(int value, int lane) {
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        int up = __shfl_up_sync(0xffffffffu, value, d);
        if (lane >= d) value += up;
    }
    return value;
}

// Block-wide exclusive prefix sum of `value` over the block's threads (at most BFS_BLOCK): each warp
// scans with shuffles, its last lane writes the warp's total to `warp_total` (BFS_BLOCK / 32 ints of
// shared memory), a barrier, then every thread adds the totals of the warps before its own (straight
// unrolled code). Returns the sum over the threads before this one; `*total` gets the block's sum.
// The caller's next barrier guards `warp_total` before it is written again.
__device__ __forceinline__ int block_exclusive_sum(int value, int* warp_total, int* total) {
    const int lane = lane_id(), warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const int inclusive = warp_inclusive_sum(value, lane);
    if (lane == 31) warp_total[warp] = inclusive;
    __syncthreads();
    int before = 0, sum = 0;
#pragma unroll
    for (int w = 0; w < BFS_BLOCK / 32; ++w) {
        const int t = w < warps ? warp_total[w] : 0;
        if (w < warp) before += t;
        sum += t;
    }
    *total = sum;
    return before + inclusive - value;
}

// The entry that owns edge i: the last of offset[0 .. last] that is <= i (binary search in shared
// memory, no global memory job; the owner has degree > 0).
__device__ __forceinline__ int owner_of(const int* offset, int last, int i) {
    int lo = 0, hi = last;
    while (lo < hi) {  // trips: search
        int mid = (lo + hi + 1) >> 1;
        if (offset[mid] <= i) lo = mid; else hi = mid - 1;
    }
    return lo;
}
