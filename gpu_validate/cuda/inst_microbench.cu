// Instruction-side microbenchmarks: the [instructions] section of a GPU profile (DESIGN.md "Operator
// machine": warp instructions go to an issue server, shared-memory accesses to a shared-memory server).
//
// Every kernel has the same arguments (records, steps, ways, sink) and the same timing: after a
// __syncthreads() each block reads globaltimer (ns) and clock64() (SM cycles), runs `steps` steps of
// its timed body, and after a second __syncthreads() thread 0 writes the block's record
//   records[5 * block + 0..4] = smid, clock64 at start, clock64 at end, globaltimer at start, at end.
// clock64 is a per-SM counter: the host takes, per SM, the last end minus the first start of its
// blocks (cycles), the same for globaltimer (ns), and cycles / ns is the SM clock while measuring.
//
// Chains are `asm volatile` PTX with the result of one instruction an operand of the next, and the
// step loop is not unrolled (`#pragma unroll 1`): one step runs exactly the unrolled body, and a
// test counts the body's SASS instructions. ptxas folds a chain `x += y` (two adds into one IADD3,
// four into one LEA), so the add chain is `x += x`: one SASS instruction per add, which ptxas
// alternates between IADD3 (ALU pipe) and IMAD.SHL (FMA pipe) as it does for the adds of real code.
//
// - im_alu_1: one chain of dependent integer adds: the ALU latency.
// - im_alu_8: eight independent add chains per thread; launched with every block of a full wave,
//   it measures how many warp instructions an SM issues per cycle.
// - im_lop_8: the same with chains of three-input logic ops (`lop3.b32`, a xor of the chain and two
//   registers: one LOP3.LUT each, which only the ALU pipe executes; ptxas keeps them apart): how many
//   ALU-pipe warp instructions an SM executes per cycle, the ALU pipe's rate.
// - im_shfl: one chain of dependent __shfl_sync (SHFL.IDX): the shuffle latency.
// - im_shared_1 / im_shared_4: pointer chases through a shared table of 32-bit shared addresses
//   (each LDS's result is the next LDS's address, no address arithmetic between): one chain per
//   lane gives the shared-load latency; four per lane over a full wave the SM's wavefront rate.
//   `ways` = k puts k lanes of a warp on one bank (different words): k wavefronts per access.
// - im_barrier: __syncthreads() only, in 256-thread blocks, 8 per SM (BFS_BLOCK, BFS_MIN_BLOCKS).
// - im_block_scan: the block-wide prefix sum of `scan.cu` (`block_exclusive_sum` of bfs_common.cuh and
//   the barrier after it), 256 ints a scan.
#include "bfs_common.cuh"

#define IM_ALU_UNROLL 128      // dependent adds per chain per step
#define IM_SHFL_UNROLL 64      // dependent shuffles per step
#define IM_SHARED_UNROLL 64    // dependent shared loads per chain per step
#define IM_SHARED_WORDS 1024   // words in each block's chase table (4 KiB: 8 blocks fit any carve-out)
#define IM_BARRIER_UNROLL 32   // barriers per step

__device__ __forceinline__ unsigned long long im_globaltimer() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ __forceinline__ unsigned im_smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

struct ImStart {
    long long clock;
    unsigned long long ns;
};

__device__ __forceinline__ ImStart im_start() {
    __syncthreads();
    ImStart start;
    start.ns = im_globaltimer();
    start.clock = clock64();
    return start;
}

__device__ __forceinline__ void im_stop(const ImStart& start, long long* __restrict__ records) {
    __syncthreads();
    if (threadIdx.x == 0) {
        const long long clock = clock64();
        const unsigned long long ns = im_globaltimer();
        long long* r = records + 5 * (long long)blockIdx.x;
        r[0] = (long long)im_smid();
        r[1] = start.clock;
        r[2] = clock;
        r[3] = (long long)start.ns;
        r[4] = (long long)ns;
    }
}

// A value no valid run produces (the chains' results are data-dependent): stored only then, so
// every chain's result is live and nothing is dropped.
__device__ __forceinline__ void im_keep(unsigned value, unsigned* __restrict__ sink) {
    if (value == 0x9E3779B9u) sink[0] = value;
}

// CHAINS independent chains a thread: of adds (x += x), or with LOGIC of three-input xors of the chain and
// two registers (lop3.b32, the ALU pipe's alone).
template <int CHAINS, bool LOGIC = false>
__device__ __forceinline__ void im_alu(long long* __restrict__ records, long long steps, int ways,
                                       unsigned* __restrict__ sink) {
    unsigned x[CHAINS];
    const unsigned y = threadIdx.x * 2654435761u, z = (unsigned)ways * 40503u;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = threadIdx.x * (unsigned)ways + 977u * c;
    const ImStart start = im_start();
#pragma unroll 1
    for (long long s = 0; s < steps; ++s) {
#pragma unroll
        for (int u = 0; u < IM_ALU_UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) {
                if (LOGIC) asm volatile("lop3.b32 %0, %0, %1, %2, 0x96;" : "+r"(x[c]) : "r"(y), "r"(z));
                else asm volatile("add.u32 %0, %0, %0;" : "+r"(x[c]));
            }
        }
    }
    im_stop(start, records);
    unsigned acc = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc ^= x[c];
    im_keep(acc, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_alu_1(long long* records, long long steps, int ways, unsigned* sink) {
    im_alu<1>(records, steps, ways, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_alu_8(long long* records, long long steps, int ways, unsigned* sink) {
    im_alu<8>(records, steps, ways, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_lop_8(long long* records, long long steps, int ways, unsigned* sink) {
    im_alu<8, true>(records, steps, ways, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_shfl(long long* records, long long steps, int ways, unsigned* sink) {
    const int src = (int)((lane_id() + (unsigned)ways) & 31u);
    unsigned x = threadIdx.x;
    const ImStart start = im_start();
#pragma unroll 1
    for (long long s = 0; s < steps; ++s) {
#pragma unroll
        for (int u = 0; u < IM_SHFL_UNROLL; ++u) x = __shfl_sync(0xffffffffu, x, src);
    }
    im_stop(start, records);
    im_keep(x, sink);
}

// The chase table: word w holds the shared address of word (w + 32 k) mod IM_SHARED_WORDS. Lane l
// of a warp sits on bank l mod (32 / k), in row l / (32 / k) + k x (its chain's offset): the k lanes
// of one bank are on k different rows (words) at every step, the 32 / k banks of a warp all differ.
template <int CHAINS>
__device__ __forceinline__ void im_shared(long long* __restrict__ records, long long steps, int ways,
                                          unsigned* __restrict__ sink) {
    __shared__ unsigned table[IM_SHARED_WORDS];
    const unsigned base = (unsigned)__cvta_generic_to_shared(table);
    const unsigned k = (unsigned)ways;
    const unsigned banks = 32u / k;
    const unsigned stride = 32u * k;
    for (unsigned w = threadIdx.x; w < IM_SHARED_WORDS; w += blockDim.x)
        table[w] = base + 4u * ((w + stride) % IM_SHARED_WORDS);
    const unsigned lane = lane_id();
    const unsigned warp = threadIdx.x >> 5;
    unsigned p[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) {
        const unsigned row = lane / banks + k * (c + CHAINS * warp);
        p[c] = base + 4u * ((lane % banks + 32u * row) % IM_SHARED_WORDS);
    }
    const ImStart start = im_start();  // its __syncthreads() also publishes the table
#pragma unroll 1
    for (long long s = 0; s < steps; ++s) {
#pragma unroll
        for (int u = 0; u < IM_SHARED_UNROLL; ++u) {
#pragma unroll
            for (int c = 0; c < CHAINS; ++c) asm volatile("ld.volatile.shared.u32 %0, [%0];" : "+r"(p[c]));
        }
    }
    im_stop(start, records);
    unsigned acc = 0;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) acc ^= p[c];
    im_keep(acc, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_shared_1(long long* records, long long steps, int ways, unsigned* sink) {
    im_shared<1>(records, steps, ways, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_shared_4(long long* records, long long steps, int ways, unsigned* sink) {
    im_shared<4>(records, steps, ways, sink);
}

extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_barrier(long long* records, long long steps, int ways, unsigned* sink) {
    const ImStart start = im_start();
#pragma unroll 1
    for (long long s = 0; s < steps; ++s) {
#pragma unroll
        for (int u = 0; u < IM_BARRIER_UNROLL; ++u) __syncthreads();
    }
    im_stop(start, records);
    im_keep((unsigned)ways + (unsigned)steps, sink);
}

// One step: the block prefix sum of bfs_expand_scan (scan.cu, `block_exclusive_sum`) over `degree`, written to offset[]
// as scan.cu writes it; the next step's degree comes from this one's total (one add and one and),
// so no scan can be hoisted or merged with another.
extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
im_block_scan(long long* records, long long steps, int ways, unsigned* sink) {
    __shared__ int offset[BFS_BLOCK];
    __shared__ int warp_total[BFS_BLOCK / 32];
    const int C = blockDim.x;
    const int tid = threadIdx.x;
    const int count = min(C, ways * C);
    int degree = (tid * 7) & 15;
    const ImStart start = im_start();
#pragma unroll 1
    for (long long s = 0; s < steps; ++s) {
        int total;
        const int before = block_exclusive_sum(degree, warp_total, &total);
        offset[tid] = tid < count ? before : total;
        __syncthreads();
        degree = (total + tid) & 15;
    }
    im_stop(start, records);
    im_keep((unsigned)offset[tid] ^ (unsigned)degree, sink);
}
