// Isolated status lookup with culling (seed 001 §4.2, `simdmodel/lookup.py`): each thread takes one id
// of a level's edge frontier and decides whether it may enter the next vertex frontier
// (`status_lookup.cuh`, MODE 0..4: bitmask, label, warp culling, history culling, atomic label); the launch counts
// the ids that do. Tiles of 256 ids, tile t on CTA t mod grid (a grid-stride loop), so one CTA's
// history spans its tiles.
#include "status_lookup.cuh"

template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
lookup_status(const int* ids, int size, int* label, unsigned char* mask, int next, unsigned long long* survivors) {
    __shared__ volatile int s_warp[BFS_BLOCK / 32][LOOKUP_WARP_HASH];
    __shared__ volatile int s_history[LOOKUP_HISTORY];
    unsigned long long* traffic = nullptr;  // the isolated lookup counts survivors only
    const int lane = lane_id(), warp = threadIdx.x >> 5;
    clear_history(s_history);
    for (int tile = blockIdx.x; tile * BFS_BLOCK < size; tile += gridDim.x) {
        const int i = tile * BFS_BLOCK + threadIdx.x;
        if (warp * 32 + tile * BFS_BLOCK >= size) continue;  // a warp with no id sits the tile out
        const bool active = i < size;
        const unsigned lanes = __ballot_sync(0xffffffffu, active);
        const int v = active ? ids[i] : -1;
        const bool valid = status_lookup<MODE>(v, active, label, mask, next, s_warp[warp], s_history, traffic);
        const unsigned kept = __ballot_sync(0xffffffffu, valid);
        if (lane == __ffs(lanes) - 1 && kept) atomicAdd(survivors, (unsigned long long)__popc(kept));
    }
}

template __global__ void lookup_status<0>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<1>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<2>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<3>(const int*, int, int*, unsigned char*, int, unsigned long long*);
template __global__ void lookup_status<4>(const int*, int, int*, unsigned char*, int, unsigned long long*);
