// Atomics on one word (`gpu_validate.atomics`): lane 0 of every warp adds 1 to the same word `per_warp`
// times, the GPU full, so every request goes to the one L2 slice that owns the word and waits its turn
// there, as the coupled BFS kernels' queue counters do (`couplings.cu`: every CTA or warp that reserves
// queue slots adds to one counter). The returned values are summed and the sum stored only when it
// equals a value no run gives, so no atomic's result is dropped.
extern "C" __global__ void atomic_same(int* word, int per_warp, int* out) {
    int sum = 0;
    if ((threadIdx.x & 31) == 0)
        for (int k = 0; k < per_warp; ++k) sum += atomicAdd(word, 1);
    if (sum == -1) out[0] = sum;
}
