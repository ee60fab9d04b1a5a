// Atomics on one word (`gpu_validate.atomics`): lane 0 of every warp adds 1 to the same word `per_warp`
// times, the GPU full, so every request goes to the one L2 slice that owns the word and waits its turn
// there, as the coupled BFS kernels' queue counters do (`couplings.cu`: every CTA or warp that reserves
// queue slots adds to one counter). The returned values are summed and the sum stored only when it
// equals a value no run gives, so no atomic's result is dropped.
#include "bfs_common.cuh"

extern "C" __global__ void atomic_same(int* word, int per_warp, int* out) {
    int sum = 0;
    if ((threadIdx.x & 31) == 0)
        for (int k = 0; k < per_warp; ++k) sum += atomicAdd(word, 1);
    if (sum == -1) out[0] = sum;
}

// The same word's atomics beside L2 traffic (`gpu_validate.atomics`, `beside_loads`): every warp of the full wave runs
// `per_warp` rounds, each `loads` dependent ld.global.cg loads of a random word by every lane (32 sectors an
// instruction, the table L2-resident), then, with `atomic`, lane 0's atomicAdd on `word`, whose returned slot the
// next round's loads depend on (as a fused lookup's enqueue, `couplings.cu`'s `warp_enqueue`, waits for its slot).
extern "C" __global__ void atomic_after_loads(int* word, int per_warp, const int* table, int mask, int loads,
                                              int atomic, int* out) {
    const int lane = threadIdx.x & 31;
    int p = (int)((blockIdx.x * blockDim.x + threadIdx.x) * 7919u) & mask;
    int slot = 0;
    for (int k = 0; k < per_warp; ++k) {
        for (int r = 0; r < loads; ++r) p = load_cg(table + ((p + slot) & mask));
        int base = 0;
        if (atomic && lane == 0) base = atomicAdd(word, 1);
        slot = __shfl_sync(0xffffffffu, base, 0) & 1;
    }
    if (p == -1 || slot == -1) out[0] = p;
}

// One warp's chase through a cycle of word indices (`next`, L2-resident; `gpu_validate.atomics`): lanes 0 ..
// lanes-1 each follow it from their own start for `steps` dependent steps, each a compare-and-swap that fails
// (`atomic` 1: it returns the word and writes nothing, as a lost claim does) or a load through the L2 (0:
// ld.global.cg, as a label read), so a step's time is one such access's latency for `lanes` sectors.
extern "C" __global__ void chase(int* next, const int* start, int lanes, int steps, int atomic, int* out) {
    const int lane = threadIdx.x;
    if (lane >= lanes) return;
    int p = start[lane];
    if (atomic) {
        for (int k = 0; k < steps; ++k) p = atomicCAS(next + p, -2, 0);
    } else {
        for (int k = 0; k < steps; ++k) p = load_cg(next + p);
    }
    if (p == -1) out[0] = p;
}
