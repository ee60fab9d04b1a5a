// `compact`: the second launch of a data-driven round, the level array compacted into the next
// sorted frontier queue (opmachine/kernels/compact.py). One thread per node over warp-sized chunks,
// one full wave. Each warp walks `per_warp` consecutive chunks: per step NF1 reads level[node] and
// the loop test re-reads num_nodes (ANI; a relaxed load, since nothing in this loop stores to
// global memory and ptxas would load it once before the loop); after the block's offset is known,
// the passing nodes of each chunk are stored (OP, one job when any lane passes) at their rank in
// the next frontier.
//
// A block's tile is 8 * per_warp consecutive chunks (per_warp = ceil(chunks / (8 * grid)), so a
// full wave holds every chunk at once). Its offset comes from a single-pass decoupled look-back
// over per-tile status words, 256 predecessors a step, read and written only with atomics, so
// the launch's loads and stores are exactly the model's ANI, NF1 and OP jobs. Status word:
// epoch << 33 | inclusive << 32 | count; a fresh epoch per launch makes old words stale without
// clearing them. Blocks take tiles in ascending order from an atomic ticket, so a tile's
// predecessors are always taken first: the look-back never waits on a block that has not started.
// One look-back per block (not per chunk) keeps the atomics to about a thousand per launch.
#include "bfs_common.cuh"

#define WARPS_PER_BLOCK (BFS_BLOCK / 32)

__device__ __forceinline__ unsigned long long status_word(unsigned epoch, bool inclusive, unsigned value) {
    return ((unsigned long long)epoch << 33) | ((unsigned long long)inclusive << 32) | value;
}

__device__ __forceinline__ unsigned warp_sum(unsigned value) {
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) value += __shfl_xor_sync(0xffffffffu, value, d);
    return value;
}

// Exclusive prefix of tile t's count over tiles 0..t-1 (block-collective; every thread gets it).
__device__ unsigned tile_offset(unsigned long long* status, int t, unsigned count, unsigned epoch) {
    __shared__ int s_stop[WARPS_PER_BLOCK];
    __shared__ unsigned s_part[WARPS_PER_BLOCK];
    const int lane = lane_id(), warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) atomicExch(status + t, status_word(epoch, t == 0, count));  // trips: block
    unsigned before = 0;
    for (int base = t - 1; base >= 0; base -= BFS_BLOCK) {  // trips: lookback
        const int idx = base - (int)threadIdx.x;  // thread i reads the i-th nearest predecessor
        unsigned long long word = status_word(epoch, true, 0);  // before tile 0: an inclusive zero
        if (idx >= 0) {
            do {
                word = atomicAdd(status + idx, 0ull);
            } while ((unsigned)(word >> 33) != epoch);  // trips: poll
        }
        const unsigned inclusive = __ballot_sync(0xffffffffu, (word >> 32) & 1ull);
        if (lane == 0) s_stop[warp] = inclusive ? warp * 32 + __ffs(inclusive) - 1 : BFS_BLOCK;
        __syncthreads();
        int stop = BFS_BLOCK;  // the nearest inclusive predecessor; the threads up to it contribute
        for (int w = 0; w < WARPS_PER_BLOCK; ++w) stop = min(stop, s_stop[w]);
        const unsigned part = warp_sum((int)threadIdx.x <= stop ? (unsigned)word : 0u);
        if (lane == 0) s_part[warp] = part;
        __syncthreads();
        for (int w = 0; w < WARPS_PER_BLOCK; ++w) before += s_part[w];
        __syncthreads();  // s_stop and s_part are reused by the next step
        if (stop < BFS_BLOCK) break;
    }
    if (threadIdx.x == 0 && t > 0) atomicExch(status + t, status_word(epoch, true, before + count));  // trips: block
    return before;
}

// Dynamic shared memory: the passing-lane mask of each of the block's 8 * per_warp chunks.
extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_compact(const int* num_nodes, int n, const int* level, int next, int* queue, unsigned long long* status,
            unsigned epoch, unsigned* ticket, int per_warp, unsigned long long* counters) {
    extern __shared__ unsigned s_mask[];
    __shared__ int s_tile;
    __shared__ unsigned s_count[WARPS_PER_BLOCK];
    const int lane = lane_id(), warp = threadIdx.x >> 5;
    if (threadIdx.x == 0) s_tile = (int)atomicAdd(ticket, 1u);  // trips: block
    __syncthreads();
    const int tile = s_tile;
    const int chunks = (n + 31) / 32;
    const int first = (tile * WARPS_PER_BLOCK + warp) * per_warp;
    const int end = min(first + per_warp, chunks);
    unsigned* mask = s_mask + warp * per_warp;
    int steps = 0;
    unsigned count = 0;
    if (first < end) {
        int c = first;
        do {
            const int node = c * 32 + lane;
            bool pass = false;
            if (node < n) {
                COUNT_JOB(C_NF1);
                pass = load_cg(level + node) == next;
            }
            const unsigned m = __ballot_sync(0xffffffffu, pass);
            if (lane == 0) mask[steps] = m;
            count += __popc(m);
            ++steps;
            ++c;
            COUNT_JOB(C_ANI);
        } while (c * 32 < load_relaxed(num_nodes) && c < end);  // trips: step
    }
    if (lane == 0) s_count[warp] = count;
    __syncthreads();
    unsigned total = 0, warp_before = 0;
    for (int w = 0; w < WARPS_PER_BLOCK; ++w) {
        warp_before += w < warp ? s_count[w] : 0u;
        total += s_count[w];
    }
    unsigned offset = tile_offset(status, tile, total, epoch) + warp_before;
    __syncwarp();
#pragma unroll 1
    for (int j = 0; j < steps; ++j) {  // trips: step
        const unsigned m = mask[j];
        if (m == 0) continue;  // trips: store (the rest of the body: chunks with a passing node)
        if ((m >> lane) & 1u) {
            COUNT_JOB(C_OP);
            queue[offset + __popc(m & ((1u << lane) - 1u))] = (first + j) * 32 + lane;
        }
        offset += __popc(m);
    }
}
