"""The serial topology-driven BFS of seed 003 Listing 1: the CPU kernel that is measured and modelled.

Why a BFS here beside `simdmodel.frontier.bfs` (the reference levels and frontiers of every other
module): seed 003 §4-5 model and time this particular program, not BFS in general. Round r
(LEVEL = r) loads the level of every node, expands the nodes labelled r-1 in ascending id order
and stores r into each destination still unlabelled, the store taking effect at once. Its memory
instructions, in this order, are the operator machine's jobs on the CPU, so the loop structure
itself is what is modelled; simdmodel's FIFO BFS touches memory in another order and cannot
stand in for it.

The kernel exists once, as three compilations of the same loop:

- `listing1_round`: one round, nothing but the program, the function `measure_cpu_rounds` times;
- `listing1_parallel_round`: the same round with the node loop under `prange` (the multi-threaded
  BFS), written out again because numba compiles a `prange` body apart and what is timed must be the
  program itself, with nothing called from it;
- `traced_rounds` (and `traced_chunk_rounds`, one thread's nodes): every round of the same loop,
  also writing each memory instruction's address (as a line id) and server, for `cpu_trace`. Numba
  gives no way to add the recording to the timed function without putting it in the timed code, so
  the recording twin repeats the loop line by line; tests check both against a plain-Python Listing 1
  and against each other (labels and stores per round).

Both start from `reset_levels` and both use the arrays of `opmachine.layout.CPU_LAYOUT`: 4-byte
elements, each array on a 4096-byte boundary (`kernel_arrays` for the timed kernel, the same bases as
virtual addresses for the trace). Their BFS levels are checked against simdmodel's BFS by callers.
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.graph import CSRGraph

from ..bfs_machine import SERVERS
from ..layout import CPU_LAYOUT, ELEMENT_BYTES, check_row_offsets

# Server codes in a trace: the index into SERVERS. ANI (code 0) issues no memory instruction on the
# CPU (the node loop counter lives in a register), so it never appears.
NF1, ERL, EDL, NF2, OP = (SERVERS.index(name) for name in ("NF1", "ERL", "EDL", "NF2", "OP"))


@numba.njit(cache=True, nogil=True)
def reset_levels(level, source):
    """Every node unlabelled (-1) but `source` (0): the state before round 1."""
    level[:] = -1
    level[source] = 0


@numba.njit(cache=True, nogil=True)
def listing1_round(row_start, edge_dst, level, level_value):
    """One round of Listing 1 (LEVEL = level_value), the timed kernel; returns the vertices it labelled."""
    discovered = 0
    previous = level_value - 1
    for v in range(level.size):
        if level[v] != previous:
            continue
        for e in range(row_start[v], row_start[v + 1]):
            dst = edge_dst[e]
            if level[dst] == -1:
                level[dst] = level_value
                discovered += 1
    return discovered


@numba.njit(cache=True, nogil=True)
def bfs_all_rounds(row_start, edge_dst, level, source):
    """Whole topology-driven BFS from `source`, round after round until one labels nothing; returns
    the number of rounds run (the BFS depth)."""
    reset_levels(level, source)
    r = 1
    while listing1_round(row_start, edge_dst, level, r) > 0:
        r += 1
    return r


@numba.njit(cache=True, parallel=True)
def listing1_parallel_round(row_start, edge_dst, level, level_value):
    """One round of Listing 1 with the node loop split over numba's threads (`prange`: contiguous chunks
    of ceil(n / threads) nodes, one per thread, `chunk_bounds`); returns the labels it stored, which
    exceed the vertices labelled when two threads store the same unlabelled node at once (both store
    the same value, so the levels stay right)."""
    stored = 0
    previous = level_value - 1
    for v in numba.prange(level.size):
        if level[v] != previous:
            continue
        for e in range(row_start[v], row_start[v + 1]):
            dst = edge_dst[e]
            if level[dst] == -1:
                level[dst] = level_value
                stored += 1
    return stored


def chunk_bounds(n: int, threads: int) -> list[tuple[int, int]]:
    """The nodes each thread of `listing1_parallel_round` takes: numba's static schedule, contiguous
    chunks of ceil(n / threads) (tests check it against numba's own thread ids)."""
    size = -(-n // threads)
    return [(min(t * size, n), min((t + 1) * size, n)) for t in range(threads)]


@numba.njit(cache=True, nogil=True)
def _traced_round(row_start, edge_dst, level, level_value, row_base, dst_base, level_base, shift,
                  line_ids, servers, pos, first=0, end=-1):
    """`listing1_round` over nodes first..end-1 (end -1: all) recording each memory instruction at
    line_ids/servers[pos...]; returns the new pos.

    Writes only below `line_ids.size` (pos still counts every instruction issued).
    """
    cap = line_ids.size
    previous = level_value - 1
    for v in range(first, level.size if end < 0 else end):
        if pos < cap:  # NF1: load level[v]
            line_ids[pos] = (level_base + ELEMENT_BYTES * v) >> shift
            servers[pos] = NF1
        pos += 1
        if level[v] != previous:
            continue
        if pos + 1 < cap:  # ERL: load row_start[v], row_start[v+1]
            line_ids[pos] = (row_base + ELEMENT_BYTES * v) >> shift
            servers[pos] = ERL
            line_ids[pos + 1] = (row_base + ELEMENT_BYTES * (v + 1)) >> shift
            servers[pos + 1] = ERL
        pos += 2
        for e in range(row_start[v], row_start[v + 1]):
            dst = edge_dst[e]
            if pos + 1 < cap:  # EDL: load edge_dst[e]; NF2: load level[dst]
                line_ids[pos] = (dst_base + ELEMENT_BYTES * e) >> shift
                servers[pos] = EDL
                line_ids[pos + 1] = (level_base + ELEMENT_BYTES * dst) >> shift
                servers[pos + 1] = NF2
            pos += 2
            if level[dst] == -1:
                level[dst] = level_value  # OP: store level[dst], taking effect at once
                if pos < cap:
                    line_ids[pos] = (level_base + ELEMENT_BYTES * dst) >> shift
                    servers[pos] = OP
                pos += 1
    return pos


@numba.njit(cache=True, nogil=True)
def traced_rounds(row_start, edge_dst, source, rounds, row_base, dst_base, level_base, shift,
                  line_ids, servers, round_ptr):
    """Rounds 1..`rounds` of Listing 1 from `source`, recording every memory instruction.

    Instruction k's line id is its byte address (array base + 4 x index) >> `shift`; round r is
    `line_ids[round_ptr[r-1]:round_ptr[r]]`. Writes at most `line_ids.size` entries; returns
    (instructions issued, final levels).
    """
    level = np.empty(row_start.size - 1, dtype=np.int32)
    reset_levels(level, source)
    pos = 0
    for r in range(1, rounds + 1):
        round_ptr[r - 1] = pos
        pos = _traced_round(row_start, edge_dst, level, r, row_base, dst_base, level_base, shift,
                            line_ids, servers, pos)
    round_ptr[rounds] = pos
    return pos, level


@numba.njit(cache=True, nogil=True)
def traced_chunk_rounds(row_start, edge_dst, levels, rounds, first, end, row_base, dst_base, level_base, shift,
                        line_ids, servers, round_ptr):
    """What one thread of `listing1_parallel_round` issues over nodes first..end-1 in rounds 1..`rounds`,
    recorded as `traced_rounds` does. Each round starts from the BFS's labels before it (`levels`
    <= r-1) and sees only this thread's own stores: what the other threads store meanwhile arrives
    too late to be seen (an approximation: in the machine some of it does). Returns the
    instructions issued (writes at most `line_ids.size`)."""
    level = np.empty(levels.size, dtype=np.int32)
    pos = 0
    for r in range(1, rounds + 1):
        for v in range(levels.size):
            level[v] = levels[v] if 0 <= levels[v] <= r - 1 else -1
        round_ptr[r - 1] = pos
        pos = _traced_round(row_start, edge_dst, level, r, row_base, dst_base, level_base, shift,
                            line_ids, servers, pos, first, end)
    round_ptr[rounds] = pos
    return pos


def _aligned_copy(values: np.ndarray, dtype, align_bytes: int) -> np.ndarray:
    """A copy of `values` as `dtype` whose data starts on an `align_bytes` boundary."""
    dtype = np.dtype(dtype)
    count = max(int(values.size), 1)
    raw = np.empty(count * dtype.itemsize + align_bytes, dtype=np.uint8)
    skip = -raw.ctypes.data % align_bytes
    out = raw[skip : skip + count * dtype.itemsize].view(dtype)[: values.size]
    out[:] = values
    return out


def kernel_arrays(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """row_start, edge_dst, level as 4-byte arrays on `CPU_LAYOUT`'s 4096-byte boundaries, as `cpu_trace` assumes."""
    check_row_offsets(graph.m)
    align = CPU_LAYOUT.align_bytes
    row_start = _aligned_copy(graph.indptr, np.int32, align)
    edge_dst = _aligned_copy(graph.indices, np.int32, align)
    level = _aligned_copy(np.full(graph.n, -1, dtype=np.int32), np.int32, align)
    return row_start, edge_dst, level
