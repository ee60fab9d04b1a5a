// Bitmask lookups that store their byte back (`gpu_validate.bitmask`): the status lookup's bitmask
// (seed 001 §4.2, `status_lookup.cuh`) reads one byte per looked-up id through the L1 and, where the
// id's bit was unset, stores the byte with the bit set. Stores into bytes that other warps are reading
// hold those reads up far more than either alone costs, the more so the smaller the bitmask.
//
// Every thread of a few full waves runs `per_thread` lookups at random bytes of a `mask + 1`-byte
// table (a power of two), four loads in flight a step (ld.global.ca.u8, as the atomic lookup reads),
// then stores byte | bit for each whose draw is below `threshold` (of 1024: the write fraction). The
// loaded bytes are summed and the sum stored only when it equals a value no run gives.
#include "bfs_common.cuh"

__device__ __forceinline__ unsigned next_draw(unsigned* x) {
    *x = *x * 1664525u + 1013904223u;
    return *x >> 7;
}

__device__ __forceinline__ unsigned load_byte_ca(const unsigned char* p) {
    unsigned v;
    asm volatile("ld.global.ca.u8 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// ATOMIC_OR: the storing lookups set their bit with an atomic OR on the bitmask's 32-bit word instead (the
// couplings' claim build, `status_lookup.cuh` with BITMASK_CLAIM): no byte is stored, the L2 does the OR.
template <bool ATOMIC_OR>
__device__ __forceinline__ void bitmask_lookups(unsigned char* table, unsigned mask, int per_thread, unsigned seed,
                                                unsigned threshold, int* out) {
    unsigned x = seed ^ ((blockIdx.x * blockDim.x + threadIdx.x) * 0x9E3779B9u);
    unsigned sum = 0;
    for (int k = 0; k < per_thread; k += 4) {
        unsigned at[4], byte[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) at[j] = next_draw(&x) & mask;
#pragma unroll
        for (int j = 0; j < 4; ++j) byte[j] = load_byte_ca(table + at[j]);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            sum += byte[j];
            if ((next_draw(&x) & 1023u) < threshold) {
                const unsigned bit = 1u << (at[j] & 7);
                if (ATOMIC_OR) atomicOr((unsigned*)(table + (at[j] & ~3u)), bit << (8 * (at[j] & 3)));
                else table[at[j]] = (unsigned char)(byte[j] | bit);
            }
        }
    }
    if (sum == 0xffffffffu) out[0] = (int)sum;
}

extern "C" __global__ void bitmask_rmw(unsigned char* table, unsigned mask, int per_thread, unsigned seed,
                                       unsigned threshold, int* out) {
    bitmask_lookups<false>(table, mask, per_thread, seed, threshold, out);
}

extern "C" __global__ void bitmask_or(unsigned char* table, unsigned mask, int per_thread, unsigned seed,
                                      unsigned threshold, int* out) {
    bitmask_lookups<true>(table, mask, per_thread, seed, threshold, out);
}
