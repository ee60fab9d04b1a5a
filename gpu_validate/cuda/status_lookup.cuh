// The status lookup of seed 001 §4.2 for one warp instruction (`simdmodel/lookup.py`): which lanes' ids may enter
// the next vertex frontier (`lookup.cu`, `couplings.cu`). MODE adds filters: 0 the bitmask (a bit per vertex, plain
// byte loads and stores), 1 the label behind an unset bit, 2 warp culling first (128-entry table per warp in shared
// memory), 3 then history culling (a CTA's 256 recent ids), 4 the label claimed by an atomic compare-and-swap behind
// an unset bit where a plain read finds it unvisited. Status words are read from the L2 (ld.global.cg); the atomic
// mode's bitmask through the L1 unless -DBITMASK_L1=0, and -DBITMASK_CLAIM=1 has only the claiming lane set its bit
// (one atomicOr, no plain byte store). Every lane of the warp calls it; -DCOUNT_LANES=1 counts global accesses.
#ifndef BITMASK_L1
#define BITMASK_L1 1
#endif
#ifndef BITMASK_CLAIM
#define BITMASK_CLAIM 0
#endif
#pragma once
#include "bfs_common.cuh"

#define LOOKUP_WARP_HASH 128
#define LOOKUP_HISTORY 256

// Explicit global traffic of the coupled kernels: words (4-byte ids, labels, row offsets; bitmask
// bytes counted one each) at [k], warp-level instructions at [T_CATEGORIES + k].
enum { T_COLUMN = 0, T_ROW = 1, T_EDGE_READ = 2, T_EDGE_WRITE = 3, T_VERTEX_READ = 4, T_VERTEX_WRITE = 5,
       T_MASK_READ = 6, T_LABEL_WRITE = 7, T_MASK_WRITE = 8, T_LABEL_READ = 9, T_CATEGORIES = 10 };

#if COUNT_LANES
__device__ __forceinline__ void count_words(unsigned long long* traffic, int category) {
    unsigned mask = __activemask();
    if (lane_id() == (unsigned)(__ffs(mask) - 1)) {
        atomicAdd(traffic + category, (unsigned long long)__popc(mask));
        atomicAdd(traffic + T_CATEGORIES + category, 1ull);
    }
}
#define COUNT_WORDS(category) count_words(traffic, category)
#else
#define COUNT_WORDS(category) ((void)0)
#endif

__device__ __forceinline__ unsigned load_cg_u8(const unsigned char* p) {
    unsigned v;
    asm volatile("ld.global.cg.u8 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// The atomic mode reads the bitmask through the L1 (a hub's byte is read by every SM): a stale bit
// only sends its id on to the compare-and-swap, which decides.
__device__ __forceinline__ unsigned load_ca_u8(const unsigned char* p) {
    unsigned v;
    asm volatile("ld.global.ca.u8 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

// K ids per lane at once (`v[k]`, `active[k]`; `valid[k]` out), each step for all K before the next,
// so the K bitmask loads and compare-and-swaps are in flight together. `warp_table`: this warp's
// LOOKUP_WARP_HASH ints; `history`: the CTA's LOOKUP_HISTORY ints, -1 at start.
template <int MODE, int K>
__device__ __forceinline__ void status_lookup_batch(const int (&v)[K], const bool (&active)[K], bool (&valid)[K],
                                                    int* label, unsigned char* mask, int next,
                                                    volatile int* warp_table, volatile int* history,
                                                    unsigned long long* traffic) {
    const int lane = lane_id();
#pragma unroll
    for (int k = 0; k < K; ++k) {
        valid[k] = active[k];
        if (MODE >= 2) {
            const int h = v[k] & (LOOKUP_WARP_HASH - 1);
            if (active[k]) warp_table[h] = v[k];
            __syncwarp();
            const bool matched = active[k] && warp_table[h] == v[k];
            __syncwarp();
            if (matched) warp_table[h] = -2 - lane;
            __syncwarp();
            if (matched && warp_table[h] != -2 - lane) valid[k] = false;
            __syncwarp();
        }
        if (MODE >= 3) {
            const int h = v[k] & (LOOKUP_HISTORY - 1);
            if (valid[k] && history[h] == v[k]) valid[k] = false;
            __syncwarp();
            if (valid[k]) history[h] = v[k];
        }
    }
    unsigned byte[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (valid[k]) {
            COUNT_WORDS(T_MASK_READ);
            byte[k] = MODE >= 4 && BITMASK_L1 ? load_ca_u8(mask + (v[k] >> 3)) : load_cg_u8(mask + (v[k] >> 3));
        }
    }
    int stored[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        stored[k] = -1;
        if (valid[k]) {
            const unsigned bit = 1u << (v[k] & 7);
            if (byte[k] & bit) {  // trips: probe (the else branch: a lane found its bit unset)
                valid[k] = false;
            } else {
                stored[k] = (int)(byte[k] | bit);
                if (MODE >= 4) {
                    COUNT_WORDS(T_LABEL_READ);  // a plain read first spares most swaps
                    valid[k] = load_cg(label + v[k]) == BFS_UNVISITED &&  // trips: claim
                               atomicCAS(label + v[k], BFS_UNVISITED, next) == BFS_UNVISITED;
                } else if (MODE >= 1) {
                    COUNT_WORDS(T_LABEL_READ);
                    if (load_cg(label + v[k]) != BFS_UNVISITED) valid[k] = false;
                }
            }
        }
    }
    __syncwarp();
#pragma unroll
    for (int k = 0; k < K; ++k) {
        if (stored[k] >= 0 && (MODE < 4 || !BITMASK_CLAIM || valid[k])) {  // trips: bitstore
            COUNT_WORDS(T_MASK_WRITE);
            if (MODE >= 4 && BITMASK_CLAIM) atomicOr((unsigned*)mask + (v[k] >> 5), 1u << (v[k] & 31));
            else mask[v[k] >> 3] = (unsigned char)stored[k];
            if (valid[k]) {
                COUNT_WORDS(T_LABEL_WRITE);
                if (MODE < 4) label[v[k]] = next;  // the compare-and-swap stored it
            }
        }
    }
}

template <int MODE>  // one id per lane
__device__ __forceinline__ bool status_lookup(int v, bool active, int* label, unsigned char* mask, int next,
                                              volatile int* warp_table, volatile int* history,
                                              unsigned long long* traffic) {
    const int ids[1] = {v};
    const bool on[1] = {active};
    bool valid[1];
    status_lookup_batch<MODE, 1>(ids, on, valid, label, mask, next, warp_table, history, traffic);
    return valid[0];
}

// The CTA's history table, emptied (every thread of the block calls it, before the first lookup).
__device__ __forceinline__ void clear_history(volatile int* history) {
    for (int i = threadIdx.x; i < LOOKUP_HISTORY; i += blockDim.x) history[i] = -1;  // trips: warp
    __syncthreads();
}
