// Memory classes alone and together (`gpu_validate.memory_mix`): every warp of a full wave runs `rounds` rounds,
// each of `l2_reads` loads of a random sector of an L2-resident table (`small`, small_mask + 1 sectors),
// `dram_reads` loads of a random sector of a table far larger than the L2 (`big`: each a DRAM row miss),
// `stream_reads` loads of the warp's next 128 bytes of `big` (the warps walk it in order: DRAM row hits) and
// `stores` coalesced 128-byte stores to a stream far larger than the L2 (each lane its word). Every load is an
// ld.global.cg of one lane's own sector; no load waits for another load or for a store, so each class runs
// at its own rate, and a launch of two classes shows whether the memory system serves them side by side
// (its time the larger of theirs) or in turn (their sum).
#include "bfs_common.cuh"

__device__ __forceinline__ unsigned long long mix_hash(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

extern "C" __global__ void memory_mix(const int* __restrict__ small, unsigned long long small_mask,
                                      const int* __restrict__ big, unsigned long long big_mask,
                                      int* __restrict__ stream, unsigned long long stream_mask, int rounds,
                                      int l2_reads, int dram_reads, int stream_reads, int stores, int* sink) {
    const unsigned long long warps = ((unsigned long long)gridDim.x * blockDim.x) >> 5;
    const unsigned long long warp = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const unsigned long long lane = threadIdx.x & 31u;
    int sum = 0;
    for (int r = 0; r < rounds; ++r) {
        for (int k = 0; k < l2_reads; ++k) {
            const unsigned long long step = ((unsigned long long)r * l2_reads + k) * warps + warp;
            sum += load_cg(small + (mix_hash(step * 32 + lane) & small_mask) * 8);
        }
        for (int k = 0; k < dram_reads; ++k) {
            const unsigned long long step = ((unsigned long long)r * dram_reads + k) * warps + warp;
            sum += load_cg(big + (mix_hash(~(step * 32 + lane)) & big_mask) * 8);
        }
        for (int k = 0; k < stream_reads; ++k) {
            const unsigned long long step = ((unsigned long long)r * stream_reads + k) * warps + warp;
            sum += load_cg(big + ((step * 32 + lane) & (big_mask * 8 + 7)));
        }
        for (int k = 0; k < stores; ++k) {
            const unsigned long long step = ((unsigned long long)r * stores + k) * warps + warp;
            stream[(step * 32 + lane) & stream_mask] = r + k;
        }
    }
    if (sum == 0x7fffffff) sink[0] = sum;
}
