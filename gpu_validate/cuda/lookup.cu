// Isolated status lookup with culling (seed 001 §4.2, `simdmodel/lookup.py`): each thread takes one id
// of a level's edge frontier and decides whether it may enter the next vertex frontier; the launch
// counts the ids that do. MODE adds the filters in order: 0 the bitmask (one bit per vertex, plain
// byte loads and stores, no atomics), 1 the label behind an unset bit, 2 warp culling first (a
// 128-entry table per warp in shared memory: ids, read back, lane ids where the id is still there),
// 3 then history culling (a CTA's 256-entry table of recently seen ids). Tiles of 256 ids, tile t on
// CTA t mod grid (a grid-stride loop), so one CTA's history spans its tiles. Status words are read
// with ld.global.cg (L2), so a warp sees another warp's stores once they reach the L2.
#include "bfs_common.cuh"

#define LOOKUP_WARP_HASH 128
#define LOOKUP_HISTORY 256

__device__ __forceinline__ unsigned load_cg_u8(const unsigned char* p) {
    unsigned v;
    asm volatile("ld.global.cg.u8 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
lookup_status(const int* ids, int size, int* label, unsigned char* mask, int next, unsigned long long* survivors) {
    __shared__ volatile int s_warp[BFS_BLOCK / 32][LOOKUP_WARP_HASH];
    __shared__ volatile int s_history[LOOKUP_HISTORY];
    const int lane = lane_id(), warp = threadIdx.x >> 5;
    for (int i = threadIdx.x; i < LOOKUP_HISTORY; i += blockDim.x) s_history[i] = -1;
    __syncthreads();
    for (int tile = blockIdx.x; tile * BFS_BLOCK < size; tile += gridDim.x) {
        const int i = tile * BFS_BLOCK + threadIdx.x;
        if (warp * 32 + tile * BFS_BLOCK >= size) continue;  // a warp with no id sits the tile out
        const bool active = i < size;
        const unsigned lanes = __ballot_sync(0xffffffffu, active);
        const int v = active ? ids[i] : -1;
        bool valid = active;
        if (MODE >= 2) {
            volatile int* table = s_warp[warp];
            const int h = v & (LOOKUP_WARP_HASH - 1);
            if (active) table[h] = v;
            __syncwarp();
            const bool matched = active && table[h] == v;
            __syncwarp();
            if (matched) table[h] = -2 - lane;
            __syncwarp();
            if (matched && table[h] != -2 - lane) valid = false;
            __syncwarp();
        }
        if (MODE >= 3) {
            const int h = v & (LOOKUP_HISTORY - 1);
            if (valid && s_history[h] == v) valid = false;
            __syncwarp();
            if (valid) s_history[h] = v;
        }
        int stored = -1;
        if (valid) {
            const unsigned byte = load_cg_u8(mask + (v >> 3)), bit = 1u << (v & 7);
            if (byte & bit) {
                valid = false;
            } else {
                stored = (int)(byte | bit);
                if (MODE >= 1 && load_cg(label + v) != BFS_UNVISITED) valid = false;
            }
        }
        __syncwarp();
        if (stored >= 0) {
            mask[v >> 3] = (unsigned char)stored;
            if (valid) label[v] = next;
        }
        const unsigned kept = __ballot_sync(0xffffffffu, valid);
        if (lane == __ffs(lanes) - 1 && kept) atomicAdd(survivors, (unsigned long long)__popc(kept));
    }
}

template __global__ void lookup_status<0>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<1>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<2>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<3>(const int*, int, int*, unsigned char*, int, unsigned long long*);
