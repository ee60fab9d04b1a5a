// `compact`: the second launch of a data-driven round, the level array compacted into the next
// sorted frontier queue (opmachine/kernels/compact.py). One thread per node over warp-sized chunks,
// one full wave. Each warp walks `per_warp` consecutive chunks: per step NF1 reads level[node] and
// the loop test re-reads num_nodes (ANI; a relaxed load, since nothing in this loop stores to
// global memory and ptxas would load it once before the loop); after the block's offset is known,
// the passing nodes of each chunk are stored (OP, one job when any lane passes) at their rank in
// the next frontier.
//
// Block b's tile is 8 * per_warp consecutive chunks from chunk 8 * per_warp * b (per_warp =
// ceil(chunks / (8 * grid)), so a full wave holds every chunk at once). Its offset is the sum of
// the counts of the tiles before it, found without a race in what any block executes: each block
// publishes its count and arrives at a launch-wide counter; the block that arrives last reads every
// count (SCAN_ITEMS a thread), scans them and writes each tile's offset and the total; each block's
// thread 0 polls its tile's offset, asleep between polls, until it is there. Only those polls depend
// on timing, a few instructions a block (a decoupled look-back, where each block waits on the
// predecessors it reads, ran as many polls and diverged shuffles after them as the race made: 10-25%
// of a launch's instructions on an H200, varying from run to run). Every word is written and read
// with atomics, so the launch's loads and stores are exactly the model's ANI, NF1 and OP jobs. A word
// is epoch << 32 | value; a fresh epoch per launch makes old words stale without clearing them.
// `status`: the tiles' counts, their offsets, the total (the next frontier's size), then one word a
// thread of the scanning block for its items past the grid (so that no warp branches there). Every
// block waits for the last one, so the whole wave must be resident at once: 8 blocks of 256 an SM
// (`gpu_validate.bfs` checks that the shared memory lets them).
#include "bfs_common.cuh"

#define WARPS_PER_BLOCK (BFS_BLOCK / 32)

__device__ __forceinline__ unsigned long long status_word(unsigned epoch, unsigned value) {
    return ((unsigned long long)epoch << 32) | value;
}

#define SCAN_ITEMS 5      // counts per thread of the block that scans them all: grids of up to 5 * BFS_BLOCK blocks
#define FIRST_WAIT_NS 512  // a block that does not scan sleeps before its first poll: the scan takes longer
#define WAIT_NS 256        // thread 0's sleep between polls of its tile's offset

// A status word read at the L2 (an atomic, so not a load the model would count): inline, so that the
// compiler does not add a warp-wide aggregation around an atomic that one thread runs.
__device__ __forceinline__ unsigned long long poll_word(unsigned long long* p) {
    unsigned long long v;
    asm volatile("atom.relaxed.gpu.global.or.b64 %0, [%1], 0;" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// Tile t's offset, the sum of the counts of tiles 0..t-1 (block-collective; every thread gets it).
__device__ unsigned tile_offset(unsigned long long* status, unsigned* arrived, int t, unsigned count,
                                unsigned epoch) {
    __shared__ int s_last, s_warp_total[WARPS_PER_BLOCK];
    __shared__ unsigned s_offset;
    const int grid = gridDim.x;
    if (threadIdx.x == 0) {  // trips: block
        atomicExch(status + t, status_word(epoch, count));
        __threadfence();  // the count before the arrival
        s_last = atomicAdd(arrived, 1u) == (unsigned)grid - 1u;
    }
    __syncthreads();
    if (s_last) {  // trips: last
        __threadfence();  // every count after the last arrival
        const int first = threadIdx.x * SCAN_ITEMS;
        unsigned long long* own = status + 2 * grid + 1 + threadIdx.x;  // stands in for items past the grid
        unsigned value[SCAN_ITEMS], sum = 0;
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {  // no branch: every warp runs the same instructions
            const bool item = first + j < grid;
            const unsigned long long word = atomicAdd(item ? status + first + j : own, 0ull);
            value[j] = item ? (unsigned)word : 0u;
            sum += value[j];
        }
        int total;
        unsigned before = (unsigned)block_exclusive_sum((int)sum, s_warp_total, &total);
#pragma unroll
        for (int j = 0; j < SCAN_ITEMS; ++j) {
            atomicExch(first + j < grid ? status + grid + first + j : own, status_word(epoch, before));
            before += value[j];
        }
        if (threadIdx.x == 0) atomicExch(status + 2 * grid, status_word(epoch, (unsigned)total));
    }
    if (threadIdx.x == 0) {  // trips: block
        if (!s_last) __nanosleep(FIRST_WAIT_NS);
        unsigned long long word = poll_word(status + grid + t);
        while ((unsigned)(word >> 32) != epoch) {  // trips: wait
            __nanosleep(WAIT_NS);
            word = poll_word(status + grid + t);
        }
        s_offset = (unsigned)word;
    }
    __syncthreads();
    return s_offset;
}

// Dynamic shared memory: the passing-lane mask of each of the block's 8 * per_warp chunks.
extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_compact(const int* num_nodes, int n, const int* level, int next, int* queue, unsigned long long* status,
            unsigned epoch, unsigned* arrived, int per_warp, unsigned long long* counters) {
    extern __shared__ unsigned s_mask[];
    __shared__ unsigned s_count[WARPS_PER_BLOCK];
    const int lane = lane_id(), warp = threadIdx.x >> 5;
    const int tile = blockIdx.x;
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
    unsigned offset = tile_offset(status, arrived, tile, total, epoch) + warp_before;
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
