// Random 4-byte gathers (`gpu_validate.gather`): the rate at which the GPU serves status lookups, one
// 4-byte load at an arbitrary vertex id per traversed edge, from an array of a given size (seed 001
// §4.2's status lookup, the gather half of a BFS's physical bound).
//
// Every thread runs `per_thread` loads of table[index] with ld.global.cg (L2 only, as the BFS kernels
// load), the indices drawn from a per-thread linear congruential sequence and masked to the table's
// power-of-two size, four independent loads in flight per step so the memory system, not a thread's
// dependence, sets the rate. The loaded words are summed and the sum stored only when it equals a
// value no table holds, so no load is dropped and nothing is written.
#include "bfs_common.cuh"

__device__ __forceinline__ unsigned next_index(unsigned* x) {
    *x = *x * 1664525u + 1013904223u;
    return *x >> 7;
}

__device__ __forceinline__ int load_ca(const int* p) {
    int v;
    asm volatile("ld.global.ca.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

template <bool through_l1>
__device__ __forceinline__ void gather_rounds(const int* table, unsigned mask, int per_thread, unsigned seed,
                                              int* out) {
    unsigned x = seed ^ ((blockIdx.x * blockDim.x + threadIdx.x) * 0x9E3779B9u);
    int sum = 0;
    for (int k = 0; k < per_thread; k += 4) {
        const unsigned a = next_index(&x) & mask, b = next_index(&x) & mask;
        const unsigned c = next_index(&x) & mask, d = next_index(&x) & mask;
        if (through_l1)
            sum += load_ca(table + a) + load_ca(table + b) + load_ca(table + c) + load_ca(table + d);
        else
            sum += load_cg(table + a) + load_cg(table + b) + load_cg(table + c) + load_cg(table + d);
    }
    if (sum == -1) out[0] = sum;
}

extern "C" __global__ void gather_random(const int* table, unsigned mask, int per_thread, unsigned seed, int* out) {
    gather_rounds<false>(table, mask, per_thread, seed, out);
}

// The same gathers through the SM's L1 (ld.global.ca, as the coupled kernels' bitmask reads): from a table
// small enough to stay in every SM's L1 after its first touches, the rate at which the L1s serve scattered
// hits, one sector a lane, beside the L2's rate above (`gpu_validate.gather`, `l1_gathers`).
extern "C" __global__ void gather_random_ca(const int* table, unsigned mask, int per_thread, unsigned seed,
                                            int* out) {
    gather_rounds<true>(table, mask, per_thread, seed, out);
}
