// `compact`: the second launch of a data-driven round, the level array compacted into the next
// sorted frontier queue. One thread per node over warp-sized chunks, one full wave: per step NF1
// reads level[node]; the passing nodes of the chunk are stored (OP, one job when any lane passes)
// at their rank in the next frontier; the loop test re-reads num_nodes (ANI), as in `topo`.
// A chunk's offset comes from a single-pass decoupled look-back over per-chunk status words that
// are read and written only with atomics, so the launch's loads and stores are exactly the model's
// ANI, NF1 and OP jobs. Status word: epoch << 33 | inclusive << 32 | count; a fresh epoch per
// launch makes old words stale without clearing them. Warps take chunks in ascending order from
// an atomic ticket (instead of a fixed grid stride), so a chunk's predecessors are taken first
// and have mostly published their prefix: the look-back stays short and never waits on a warp
// that has not started.
#include "bfs_common.cuh"

__device__ __forceinline__ unsigned long long status_word(unsigned epoch, bool inclusive, unsigned value) {
    return ((unsigned long long)epoch << 33) | ((unsigned long long)inclusive << 32) | value;
}

// Exclusive prefix of chunk c's count over chunks 0..c-1 (warp-collective; every lane gets it).
__device__ unsigned chunk_offset(unsigned long long* status, int c, unsigned count, unsigned epoch) {
    const int lane = lane_id();
    if (lane == 0) atomicExch(status + c, status_word(epoch, c == 0, count));
    unsigned before = 0;
    for (int base = c - 1; base >= 0; base -= 32) {
        const int idx = base - lane;
        unsigned long long word = status_word(epoch, true, 0);
        if (idx >= 0) {
            do {
                word = atomicAdd(status + idx, 0ull);
            } while ((unsigned)(word >> 33) != epoch);
        }
        const unsigned inclusive = __ballot_sync(0xffffffffu, (word >> 32) & 1ull);
        const int stop = inclusive ? __ffs(inclusive) - 1 : 31;  // lanes 0..stop contribute
        unsigned part = lane <= stop ? (unsigned)word : 0u;
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) part += __shfl_xor_sync(0xffffffffu, part, d);
        before += part;
        if (inclusive) break;
    }
    if (lane == 0 && c > 0) atomicExch(status + c, status_word(epoch, true, before + count));
    return before;
}

// The warp's next chunk: one atomic ticket per warp, in the order warps ask.
__device__ __forceinline__ int take_chunk(unsigned* ticket) {
    unsigned c = 0;
    if (lane_id() == 0) c = atomicAdd(ticket, 1u);
    return (int)__shfl_sync(0xffffffffu, c, 0);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
bfs_compact(const int* num_nodes, int n, const int* level, int next, int* queue, unsigned long long* status,
            unsigned epoch, unsigned* ticket, unsigned long long* counters) {
    const int lane = lane_id();
    int c = take_chunk(ticket);
    if (c >= (n + 31) / 32) return;
    do {
        const int node = c * 32 + lane;
        bool pass = false;
        if (node < n) {
            COUNT_JOB(C_NF1);
            pass = load_cg(level + node) == next;
        }
        const unsigned mask = __ballot_sync(0xffffffffu, pass);
        const unsigned before = chunk_offset(status, c, __popc(mask), epoch);
        if (pass) {
            COUNT_JOB(C_OP);
            queue[before + __popc(mask & ((1u << lane) - 1u))] = node;
        }
        c = take_chunk(ticket);
        COUNT_JOB(C_ANI);
    } while (c * 32 < load_cg(num_nodes));
}
