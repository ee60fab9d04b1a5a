// Memory microbenchmarks for the service curves S(m) of seed 003 §6.5 (Fig. 6).
//
// A request is one 32-byte sector load. The buffer is an array of sectors; the first 32-bit word
// of sector s holds the index of the next sector of its chain. A thread follows CHAINS independent
// chains; every load's address comes from the previous load of the same chain (a dependent pointer
// chase), so each chain has exactly one request in flight and a warp whose first `lanes` lanes are
// active has lanes x CHAINS requests in flight: m = warps x lanes x CHAINS, exactly.
//
// next = (loaded + add) & mask: `add` is 0 for the random cycles (l2_hit, row_miss) and lanes - 1
// for the sequential walk (row_hit, buffer word s holds s + 1), so the lanes of a warp read
// adjacent sectors and each step moves on by `lanes` sectors; `mask` (sectors - 1, a power of two)
// wraps the walk.
//
// Loads are ld.global.cg (cached in L2 only, as the model's memory has no L1) unless the kernel
// name ends in _ca (ld.global.ca, cached in L1 too), used only to measure what L1 would change.
// The file includes no header: NVRTC (cupy.RawModule) compiles it as it is.

template <bool CA>
__device__ __forceinline__ unsigned mb_load(const unsigned* p) {
    unsigned v;
    if (CA) {
        asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p));
    } else {
        asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
    }
    return v;
}

// starts[(warp * CHAINS + c) * lanes + lane]: the first sector of chain c of that lane.
template <int CHAINS, bool CA>
__device__ __forceinline__ void mb_chase(const unsigned* __restrict__ buf, const unsigned* __restrict__ starts,
                                         int lanes, long long steps, unsigned add, unsigned mask,
                                         unsigned* __restrict__ sink) {
    const int lane = threadIdx.x & 31;
    if (lane >= lanes) return;
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    unsigned idx[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) idx[c] = starts[(warp * CHAINS + c) * lanes + lane];
    for (long long s = 0; s < steps; ++s) {  // trips: hop (opmachine.instructions.hop_cycles)
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) idx[c] = (mb_load<CA>(buf + (unsigned long long)idx[c] * 8) + add) & mask;
    }
    unsigned acc = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc ^= idx[c];
    if (acc == 0xFFFFFFFFu) sink[0] = acc;  // never true for a valid index; keeps the chase live
}

#define MB_CHASE(NAME, CHAINS, CA)                                                                    \
    extern "C" __global__ void __launch_bounds__(256)                                                 \
    NAME(const unsigned* __restrict__ buf, const unsigned* __restrict__ starts, int lanes,           \
         long long steps, unsigned add, unsigned mask, unsigned* __restrict__ sink) {                \
        mb_chase<CHAINS, CA>(buf, starts, lanes, steps, add, mask, sink);                            \
    }

MB_CHASE(mb_chase_1, 1, false)
MB_CHASE(mb_chase_2, 2, false)
MB_CHASE(mb_chase_4, 4, false)
MB_CHASE(mb_chase_8, 8, false)
MB_CHASE(mb_chase_1_ca, 1, true)

// Read the 16-byte words first, first + stride, ... below `words` with ld.global.cg; the xor of all,
// which the caller stores when it is a value no buffer holds, so that the loads are kept.
__device__ __forceinline__ unsigned mb_read_words(const unsigned* __restrict__ data, long long words, long long first,
                                                  long long stride) {
    unsigned acc = 0;
    for (long long i = first; i < words; i += stride) {
        unsigned x, y, z, w;
        asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(x), "=r"(y), "=r"(z), "=r"(w) : "l"(data + 4 * i));
        acc ^= x ^ y ^ z ^ w;
    }
    return acc;
}

// Read `words` 16-byte words with ld.global.cg (grid-stride): fills L2 with that buffer, evicting
// what was there (an L2 flush before a DRAM measurement, or a warm-up of an L2-resident buffer).
extern "C" __global__ void mb_touch(const unsigned* __restrict__ data, long long words, unsigned* __restrict__ sink) {
    const unsigned acc = mb_read_words(data, words, (long long)blockIdx.x * blockDim.x + threadIdx.x,
                                       (long long)gridDim.x * blockDim.x);
    if (acc == 0x9E3779B9u) sink[1] = acc;  // data-dependent store so the loads are kept
}

// Placement (gpu_validate.l2_probe): the block that runs on SM `sm` does the work, the first such
// block to start (it claims *claim); every other block returns at once. A launch has enough blocks to
// reach every SM, and the host checks the claim.
__device__ __forceinline__ bool mb_on_sm(int sm, unsigned* claim) {
    __shared__ unsigned mine;
    if (threadIdx.x == 0) {
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        mine = id == (unsigned)sm && atomicCAS(claim, 0u, 1u) == 0u;
    }
    __syncthreads();
    return mine != 0u;
}

// mb_chase_1's chase (one warp, lane l from starts[l], a random cycle's words are indices) on SM `sm`.
extern "C" __global__ void __launch_bounds__(32)
mb_chase_on_sm(const unsigned* __restrict__ buf, const unsigned* __restrict__ starts, int lanes, long long steps,
               unsigned* __restrict__ sink, int sm, unsigned* claim) {
    if (!mb_on_sm(sm, claim) || (int)threadIdx.x >= lanes) return;
    unsigned idx = starts[threadIdx.x];
    for (long long s = 0; s < steps; ++s) idx = mb_load<false>(buf + (unsigned long long)idx * 8);
    if (idx == 0xFFFFFFFFu) sink[0] = idx;
}

// mb_touch from SM `sm` alone: its block reads all `words` 16-byte words.
extern "C" __global__ void mb_touch_on_sm(const unsigned* __restrict__ data, long long words,
                                          unsigned* __restrict__ sink, int sm, unsigned* claim) {
    if (!mb_on_sm(sm, claim)) return;
    const unsigned acc = mb_read_words(data, words, threadIdx.x, blockDim.x);
    if (acc == 0x9E3779B9u) sink[1] = acc;
}

// One lane's chase from starts[0] on SM `sm`, cycles[s] the SM clock cycles of hop s's load: the clock
// is read once the loaded word is there (the setp waits for it), so a hop's count is its load's latency
// plus the few cycles of the loop.
extern "C" __global__ void mb_hop_cycles_on_sm(const unsigned* __restrict__ buf, const unsigned* __restrict__ starts,
                                               long long steps, unsigned* __restrict__ cycles,
                                               unsigned* __restrict__ sink, int sm, unsigned* claim) {
    if (!mb_on_sm(sm, claim) || threadIdx.x != 0) return;
    unsigned idx = starts[0];
    long long before = clock64();
    for (long long s = 0; s < steps; ++s) {
        idx = mb_load<false>(buf + (unsigned long long)idx * 8);
        long long now;
        asm volatile("{\n\t.reg .pred p;\n\tsetp.eq.u32 p, %1, 0xffffffff;\n\t@p mov.u32 %1, 0;\n\t"
                     "mov.u64 %0, %%clock64;\n\t}" : "=l"(now), "+r"(idx));
        cycles[s] = (unsigned)(now - before);
        before = now;
    }
    if (idx == 0xFFFFFFFFu) sink[0] = idx;
}
