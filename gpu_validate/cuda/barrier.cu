// Fork-join rounds (`gpu_validate.barrier`): every warp of a full wave of 256-thread blocks runs `rounds`
// rounds, each `loads` dependent ld.global.cg loads of a random word by its first `lanes` lanes (as many
// sectors an instruction, from a table of mask + 1 words; the other lanes wait at the round's end), then, by `mode`:
//   0  nothing: each warp runs on at its own pace, so a launch lasts as long as its slowest warp's sum;
//   1  __syncthreads(): a round lasts as long as its block's slowest warp's loads (the coupled kernels'
//      tiles, `couplings.cu`, end at such barriers);
//   2  thread 0 adds to `words[0]` (one atomicAdd a block, as `reserve_block` reserves a tile's queue slots),
//      then __syncthreads(), and every lane's next address depends on the returned value;
//   3  as 2, each block adding to a word of its own (`words[32 * block]`, a sector apart): the atomic's
//      round trip without the queue at one word.
#include "bfs_common.cuh"

extern "C" __global__ void barrier_rounds(const int* table, int mask, int rounds, int loads, int lanes, int mode,
                                          int* words, int* out) {
    __shared__ int s_slot;
    int p = (int)((blockIdx.x * blockDim.x + threadIdx.x) * 7919u) & mask;
    int slot = 0;
    for (int k = 0; k < rounds; ++k) {
        if ((threadIdx.x & 31) < lanes)
            for (int r = 0; r < loads; ++r) p = load_cg(table + ((p + slot) & mask));
        if (mode >= 2) {
            if (threadIdx.x == 0) s_slot = atomicAdd(words + (mode == 3 ? 32 * blockIdx.x : 0), 1) & 1;
            __syncthreads();
            slot = s_slot;
            __syncthreads();
        } else if (mode == 1) {
            __syncthreads();
        }
    }
    if (p == -1 || slot == -1) out[0] = p;
}
