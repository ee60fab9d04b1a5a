// Seed 001's couplings of expansion and contraction (§5), built from scan+warp+CTA gathering (`swc.cu`)
// and the status lookup with culling (`status_lookup.cuh`, MODE 1..4: the label is always checked, so
// levels are exact whatever races let through). Six kernels; the host strings them together per
// coupling (`gpu_validate/couplings.py`):
// - `couple_expand`: vertex queue -> edge queue (the adjacency lists of its vertices, duplicates too);
// - `couple_contract`: edge queue -> vertex queue (the ids that pass the lookup, labelled `next`);
// - `couple_expand_contract`: vertex queue -> vertex queue, each gathered neighbour looked up at once;
// - `couple_contract_expand`: edge queue -> edge queue, each tile's survivors expanded at once;
// - `couple_copy_pieces`, `couple_lookup_pieces`: the lists longer than `big_list` that an expanding launch
//   left as pieces of PIECE edges, spread over the whole grid (copied into the edge queue, or looked up
//   into the vertex queue for expand-contract). One CTA strip-mining a hub's list of 10^5 edges would
//   hold the launch up by itself; seed 001 names such coarse-grained tile stealing between CTAs. The host
//   passes `big_list` per launch (`simdmodel.couplings.big_list`): 1024, or 32 in a launch of fewer
//   CTAs than a full wave, whose few CTAs would otherwise gather every longer list while other SMs idle.
// Queue sizes live on the device: a launch reads its input's from `in_size` and adds its output's to
// `out_size`, so a replayed launch sequence sizes itself whatever races did. Output slots are reserved
// with one atomicAdd per CTA chunk (gathers, tile contraction) or per warp instruction (the fused
// lookup); a slot past `capacity` is not written and sets `*overflow`, which the host turns into an
// error. Chunks and tiles are C = 256 entries, chunk c on CTA c mod grid (a contraction takes
// CONTRACT_ITEMS tiles at once).
#include "status_lookup.cuh"

#define FULL 0xffffffffu
#define PIECE 1024
#define CONTRACT_ITEMS 2  // ids per thread of a contraction

struct Pieces {  // the long lists an expanding launch leaves: (first edge, output slot, edges, 0) each
    int4* piece;
    int* count;
    int capacity;
    int big_list;  // lists longer than this (at least 32) are left as pieces
};

// A long list's pieces, posted by its owner thread (one atomicAdd); `at` is its output slot.
__device__ __forceinline__ void post_pieces(int begin, int degree, int at, Pieces p, int* overflow) {
    const int count = (degree + PIECE - 1) / PIECE;
    const int first = atomicAdd(p.count, count);
    if (first + count > p.capacity) {
        *overflow = 1;
        return;
    }
    for (int j = 0; j < count; ++j)  // trips: piece
        p.piece[first + j] = make_int4(begin + j * PIECE, at + j * PIECE, min(PIECE, degree - j * PIECE), 0);
}

struct Queues {  // the launch's output queue, its size counter and capacity, and the overflow flag
    int* queue;
    int* size;
    int capacity;
    int* overflow;
};

// Block-wide: one slot range of `total` entries in the output queue, or -1 (every thread of the block
// calls it; `s_base` is one shared int; the caller's next barrier guards it).
__device__ __forceinline__ int reserve_block(int total, Queues out, int* s_base) {
    if (threadIdx.x == 0) {  // trips: reserve
        int base = total ? atomicAdd(out.size, total) : 0;
        if (base + total > out.capacity) {
            *out.overflow = 1;
            base = -1;
        }
        *s_base = base;
    }
    __syncthreads();
    return *s_base;
}

// Warp-wide: the lanes with `keep` write `value` at slots one atomicAdd reserves (all lanes call it).
__device__ __forceinline__ void warp_enqueue(bool keep, int value, Queues out, unsigned long long* traffic) {
    const unsigned kept = __ballot_sync(FULL, keep);
    if (!kept) return;  // trips: enqueue
    const int lane = lane_id(), leader = __ffs(kept) - 1;
    int base = 0;
    if (lane == leader) base = atomicAdd(out.size, __popc(kept));
    base = __shfl_sync(FULL, base, leader);
    if (keep) {
        const int slot = base + __popc(kept & ((1u << lane) - 1u));
        if (slot < out.capacity) {
            COUNT_WORDS(T_VERTEX_WRITE);
            out.queue[slot] = value;
        } else {
            *out.overflow = 1;
        }
    }
}

struct Status {  // the status a lookup reads and claims, and the level it labels with
    int* label;
    unsigned char* mask;
    int next;
};

struct LookupShared {  // a CTA's culling tables: one hash a warp, and the history
    int warp[BFS_BLOCK / 32][LOOKUP_WARP_HASH];
    int history[LOOKUP_HISTORY];
};

// One warp instruction of a fused lookup: the lanes with `active` read neighbour edge_dst[e], look it up
// and enqueue the survivors (every lane of the warp calls it).
template <int MODE>
__device__ __forceinline__ void lookup_edge(const int* edge_dst, int e, bool active, Status st,
                                            volatile LookupShared& t, Queues out, unsigned long long* traffic) {
    int v = -1;
    if (active) {
        COUNT_WORDS(T_COLUMN);
        v = load_cg(edge_dst + e);
    }
    const bool keep = status_lookup<MODE>(v, active, st.label, st.mask, st.next, t.warp[threadIdx.x >> 5], t.history,
                                          traffic);
    warp_enqueue(keep, v, out, traffic);
}

// One lane of a gather: neighbour edge_dst[e] copied to queue[slot].
__device__ __forceinline__ void copy_edge(const int* edge_dst, int e, int* queue, int slot,
                                          unsigned long long* traffic) {
    COUNT_WORDS(T_COLUMN);
    const int v = load_cg(edge_dst + e);
    COUNT_WORDS(T_EDGE_WRITE);
    queue[slot] = v;
}

struct GatherShared {  // the swc phases' shared state of one chunk
    int first_edge[BFS_BLOCK];
    int offset[BFS_BLOCK];
    int out[BFS_BLOCK];
    int cta_first[BFS_BLOCK];
    int cta_degree[BFS_BLOCK];
    int cta_out[BFS_BLOCK];
    int warp_total[BFS_BLOCK / 32];
    int base;
};

// The chunk's adjacency lists (thread t's: `degree` edges from `begin`) copied into the edge queue by
// scan+warp+CTA gathering, each list at its own place (one block prefix sum, one atomicAdd); lists
// longer than `pieces.big_list` are left as pieces. Every thread of the block calls it.
__device__ void gather_to_queue(int begin, int degree, const int* edge_dst, Queues out, Pieces pieces,
                                GatherShared& s, unsigned long long* traffic) {
    const int C = blockDim.x, tid = threadIdx.x, lane = lane_id();
    int all;
    const int before = block_exclusive_sum(degree, s.warp_total, &all);
    const int base = reserve_block(all, out, &s.base);
    if (base < 0) return;  // uniform: the queue is full
    const int at = base + before;
    const bool gathered = degree <= pieces.big_list;
    if (!gathered) post_pieces(begin, degree, at, pieces, out.overflow);  // trips: posting
    int lists;
    const int rank = block_exclusive_sum(degree > C && gathered ? 1 : 0, s.warp_total, &lists);
    if (degree > C && gathered) {
        s.cta_first[rank] = begin;
        s.cta_degree[rank] = degree;
        s.cta_out[rank] = at;
    }
    __syncthreads();
#pragma unroll 1
    for (int k = 0; k < lists; ++k) {  // trips: cta_list (CTA phase)
        const int first = s.cta_first[k], d = s.cta_degree[k], to = s.cta_out[k];
#pragma unroll 1
        for (int i = tid; i < d; i += C) copy_edge(edge_dst, first + i, out.queue, to + i, traffic);  // trips: cta_round
    }
    unsigned mine = __ballot_sync(FULL, degree > 32 && degree <= C && gathered);
#pragma unroll 1
    while (mine) {  // trips: warp_list (warp phase)
        const int owner = __ffs(mine) - 1;
        mine &= mine - 1;
        const int first = __shfl_sync(FULL, begin, owner), d = __shfl_sync(FULL, degree, owner);
        const int to = __shfl_sync(FULL, at, owner);
#pragma unroll 1
        for (int i = lane; i < d; i += 32) copy_edge(edge_dst, first + i, out.queue, to + i, traffic);  // trips: warp_round
        __syncwarp();
    }
    int total;
    const int small = block_exclusive_sum(degree <= 32 ? degree : 0, s.warp_total, &total);
    s.first_edge[tid] = begin;
    s.offset[tid] = small;  // non-decreasing: lists outside the phase add 0
    s.out[tid] = at;
    __syncthreads();
#pragma unroll 1
    for (int i = tid; i < total; i += C) {  // trips: round (scan phase)
        const int lo = owner_of(s.offset, C - 1, i);
        copy_edge(edge_dst, s.first_edge[lo] + i - s.offset[lo], out.queue, s.out[lo] + i - s.offset[lo], traffic);
    }
    __syncthreads();
}

// Thread t's vertex of a vertex-queue chunk and its edge range (warps with no entry load nothing).
__device__ __forceinline__ void load_entry(const int* queue, int pos, bool active, const int* row_start,
                                           int* begin, int* degree, unsigned long long* traffic) {
    *begin = 0;
    *degree = 0;
    if (active) {
        COUNT_WORDS(T_VERTEX_READ);
        const int v = load_cg(queue + pos);
        COUNT_WORDS(T_ROW);
        *begin = load_cg(row_start + v);
        COUNT_WORDS(T_ROW);
        *degree = load_cg(row_start + v + 1) - *begin;
    }
}

// Expansion (two-phase, and the first step of contract-expand and hybrid): the vertex queue's lists
// into the edge queue.
extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_expand(const int* vertices, const int* in_size, const int* row_start, const int* edge_dst, int* out_queue,
              int* out_size, int capacity, int* overflow, int4* piece, int* piece_count, int piece_capacity,
              int big_list, unsigned long long* traffic) {
    const Queues out{out_queue, out_size, capacity, overflow};
    const Pieces pieces{piece, piece_count, piece_capacity, big_list};
    __shared__ GatherShared s;
    const int size = *in_size, C = blockDim.x;
    for (int chunk = blockIdx.x; chunk * C < size; chunk += gridDim.x) {  // trips: step
        const int pos = chunk * C + threadIdx.x;
        int begin, degree;
        load_entry(vertices, pos, pos < size, row_start, &begin, &degree, traffic);
        gather_to_queue(begin, degree, edge_dst, out, pieces, s, traffic);
    }
}

// Contraction (two-phase, hybrid's large iterations): the edge queue's ids that pass the lookup, into
// the vertex queue. A CTA takes CONTRACT_ITEMS consecutive tiles at once (tile group g on CTA g mod
// grid), one id of each per thread, looked up together (status_lookup_batch); its survivors take one
// block prefix sum and one atomicAdd.
template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_contract(const int* edges, const int* in_size, int* label, unsigned char* mask, int next, int* out_queue,
                int* out_size, int capacity, int* overflow, unsigned long long* traffic) {
    const Queues out{out_queue, out_size, capacity, overflow};
    __shared__ volatile LookupShared t;
    __shared__ int s_total[BFS_BLOCK / 32];
    __shared__ int s_base;
    const int size = *in_size, warp = threadIdx.x >> 5;
    clear_history(t.history);
    for (int group = blockIdx.x; group * CONTRACT_ITEMS * BFS_BLOCK < size; group += gridDim.x) {  // trips: step
        int v[CONTRACT_ITEMS];
        bool active[CONTRACT_ITEMS], keep[CONTRACT_ITEMS];
        int kept = 0;
#pragma unroll
        for (int k = 0; k < CONTRACT_ITEMS; ++k) {
            const int i = (group * CONTRACT_ITEMS + k) * BFS_BLOCK + threadIdx.x;
            active[k] = i < size;
            v[k] = -1;
            if (active[k]) {
                COUNT_WORDS(T_EDGE_READ);
                v[k] = load_cg(edges + i);
            }
        }
        if (warp * 32 + group * CONTRACT_ITEMS * BFS_BLOCK < size) {  // trips: lookup (a warp with no id sits it out)
            status_lookup_batch<MODE, CONTRACT_ITEMS>(v, active, keep, label, mask, next, t.warp[warp], t.history,
                                                      traffic);
#pragma unroll
            for (int k = 0; k < CONTRACT_ITEMS; ++k) kept += keep[k];
        }
        int total;
        const int before = block_exclusive_sum(kept, s_total, &total);
        const int base = reserve_block(total, out, &s_base);
        if (kept && base >= 0) {  // trips: kept
            int at = base + before;
#pragma unroll
            for (int k = 0; k < CONTRACT_ITEMS; ++k) {
                if (keep[k]) {
                    COUNT_WORDS(T_VERTEX_WRITE);
                    out.queue[at++] = v[k];
                }
            }
        }
        __syncthreads();
    }
}

// Expand-contract: each gathered neighbour is looked up as it is read, survivors go straight into the
// next vertex queue (one atomicAdd per warp instruction). Loops run whole warps (lanes past a list's
// end inactive) because the lookup synchronises the warp.
template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_expand_contract(const int* vertices, const int* in_size, const int* row_start, const int* edge_dst,
                       int* label, unsigned char* mask, int next, int* out_queue, int* out_size, int capacity, int* overflow,
                       int4* piece, int* piece_count, int piece_capacity, int big_list, unsigned long long* traffic) {
    const Queues out{out_queue, out_size, capacity, overflow};
    const Pieces pieces{piece, piece_count, piece_capacity, big_list};
    const Status st{label, mask, next};
    __shared__ volatile LookupShared t;
    __shared__ int first_edge[BFS_BLOCK];
    __shared__ int offset[BFS_BLOCK];
    __shared__ int cta_first[BFS_BLOCK];
    __shared__ int cta_degree[BFS_BLOCK];
    __shared__ int warp_total[BFS_BLOCK / 32];
    const int size = *in_size, C = blockDim.x, tid = threadIdx.x, warp = tid >> 5, lane = lane_id();
    clear_history(t.history);
    for (int chunk = blockIdx.x; chunk * C < size; chunk += gridDim.x) {  // trips: step
        const int pos = chunk * C + tid;
        int begin, degree;
        load_entry(vertices, pos, pos < size, row_start, &begin, &degree, traffic);
        const bool gathered = degree <= big_list;
        if (!gathered) post_pieces(begin, degree, 0, pieces, overflow);  // trips: posting
        int lists;
        const int rank = block_exclusive_sum(degree > C && gathered ? 1 : 0, warp_total, &lists);
        if (degree > C && gathered) {
            cta_first[rank] = begin;
            cta_degree[rank] = degree;
        }
        __syncthreads();
#pragma unroll 1
        for (int k = 0; k < lists; ++k) {  // trips: cta_list (CTA phase)
            const int first = cta_first[k], d = cta_degree[k];
#pragma unroll 1
            for (int round = 0; round + warp * 32 < d; round += C)  // trips: cta_round
                lookup_edge<MODE>(edge_dst, first + round + tid, round + tid < d, st, t, out, traffic);
        }
        unsigned mine = __ballot_sync(FULL, degree > 32 && degree <= C && gathered);
#pragma unroll 1
        while (mine) {  // trips: warp_list (warp phase)
            const int owner = __ffs(mine) - 1;
            mine &= mine - 1;
            const int first = __shfl_sync(FULL, begin, owner), d = __shfl_sync(FULL, degree, owner);
#pragma unroll 1
            for (int round = 0; round < d; round += 32)  // trips: warp_round
                lookup_edge<MODE>(edge_dst, first + round + lane, round + lane < d, st, t, out, traffic);
        }
        int total;
        const int before = block_exclusive_sum(degree <= 32 ? degree : 0, warp_total, &total);
        first_edge[tid] = begin;
        offset[tid] = before;  // non-decreasing: lists outside the phase add 0
        __syncthreads();
#pragma unroll 1
        for (int round = 0; round + warp * 32 < total; round += C) {  // trips: round (scan phase)
            const int i = round + tid;
            const bool active = i < total;
            int e = 0;
            if (active) {
                const int lo = owner_of(offset, C - 1, i);
                e = first_edge[lo] + i - offset[lo];
            }
            lookup_edge<MODE>(edge_dst, e, active, st, t, out, traffic);
        }
        __syncthreads();
    }
}

// Contract-expand: each tile of the edge queue is looked up, and its survivors (labelled `next`) are
// expanded at once into the next edge queue.
template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_contract_expand(const int* edges, const int* in_size, const int* row_start, const int* edge_dst,
                       int* label, unsigned char* mask, int next, int* out_queue, int* out_size, int capacity, int* overflow,
                       int4* piece, int* piece_count, int piece_capacity, int big_list, unsigned long long* traffic) {
    const Queues out{out_queue, out_size, capacity, overflow};
    const Pieces pieces{piece, piece_count, piece_capacity, big_list};
    __shared__ volatile LookupShared t;
    __shared__ GatherShared s;
    const int size = *in_size, warp = threadIdx.x >> 5;
    clear_history(t.history);
    for (int tile = blockIdx.x; tile * BFS_BLOCK < size; tile += gridDim.x) {  // trips: step
        const int i = tile * BFS_BLOCK + threadIdx.x;
        const bool active = i < size;
        int v = -1;
        if (active) {
            COUNT_WORDS(T_EDGE_READ);
            v = load_cg(edges + i);
        }
        bool keep = false;
        if (warp * 32 + tile * BFS_BLOCK < size)
            keep = status_lookup<MODE>(v, active, label, mask, next, t.warp[warp], t.history, traffic);
        int begin = 0, degree = 0;
        if (keep) {
            COUNT_WORDS(T_ROW);
            begin = load_cg(row_start + v);
            COUNT_WORDS(T_ROW);
            degree = load_cg(row_start + v + 1) - begin;
        }
        gather_to_queue(begin, degree, edge_dst, out, pieces, s, traffic);
    }
}

// The pieces of an expanding launch (`count`, at most `capacity`), piece p on CTA p mod grid: copied
// into the edge queue at their slots.
extern "C" __global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_copy_pieces(const int4* piece, const int* piece_count, int piece_capacity, const int* edge_dst, int* out_queue,
                   unsigned long long* traffic) {
    const int count = min(*piece_count, piece_capacity);
    for (int p = blockIdx.x; p < count; p += gridDim.x) {  // trips: step
        const int4 part = piece[p];
#pragma unroll 1
        for (int i = threadIdx.x; i < part.z; i += blockDim.x)  // trips: round
            copy_edge(edge_dst, part.x + i, out_queue, part.y + i, traffic);
    }
}

// The pieces of an expand-contract launch: each neighbour looked up, survivors into the vertex queue.
template <int MODE>
__global__ void __launch_bounds__(BFS_BLOCK, BFS_MIN_BLOCKS)
couple_lookup_pieces(const int4* piece, const int* piece_count, int piece_capacity, const int* edge_dst, int* label,
                     unsigned char* mask, int next, int* out_queue, int* out_size, int capacity, int* overflow,
                     unsigned long long* traffic) {
    const Queues out{out_queue, out_size, capacity, overflow};
    const Status st{label, mask, next};
    __shared__ volatile LookupShared t;
    const int count = min(*piece_count, piece_capacity), C = blockDim.x, tid = threadIdx.x, warp = tid >> 5;
    clear_history(t.history);
    for (int p = blockIdx.x; p < count; p += gridDim.x) {  // trips: step
        const int4 part = piece[p];
#pragma unroll 1
        for (int round = 0; round + warp * 32 < part.z; round += C)  // trips: round
            lookup_edge<MODE>(edge_dst, part.x + round + tid, round + tid < part.z, st, t, out, traffic);
    }
}

#define COUPLED(MODE)                                                                                        \
    template __global__ void couple_contract<MODE>(const int*, const int*, int*, unsigned char*, int, int*, int*, \
                                                   int, int*, unsigned long long*);                             \
    template __global__ void couple_expand_contract<MODE>(const int*, const int*, const int*, const int*, int*,   \
                                                          unsigned char*, int, int*, int*, int, int*, int4*, int*, \
                                                          int, int, unsigned long long*);                       \
    template __global__ void couple_contract_expand<MODE>(const int*, const int*, const int*, const int*, int*,   \
                                                          unsigned char*, int, int*, int*, int, int*, int4*, int*, \
                                                          int, int, unsigned long long*);                       \
    template __global__ void couple_lookup_pieces<MODE>(const int4*, const int*, int, const int*, int*,           \
                                                        unsigned char*, int, int*, int*, int, int*,               \
                                                        unsigned long long*);
COUPLED(1)
COUPLED(2)
COUPLED(3)
COUPLED(4)
