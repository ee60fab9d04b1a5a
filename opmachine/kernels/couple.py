"""Seed 001's coupled kernels (`gpu_validate/cuda/couplings.cu`) as warp-level jobs, launch by launch.

`simdmodel.couplings.coupled_launches` runs a coupled BFS and tells each launch's work
(`LaunchWork`: its input queue, the lists it gathers and where they go, the ids it looks up and what
each of them did, `simdmodel.lookup.ACCESS_FLAGS`). This module turns that work into the jobs of the
kernel that does it, on the arrays of `layout.COUPLED_LAYOUT`:

- ANI reads input-queue entries (a vertex queue, or an edge queue);
- ERL reads `row_start[v]` and `row_start[v+1]` of each vertex expanded;
- EDL reads the column indices a gather step's lanes take;
- NF1 reads bitmask bytes (the bitmask in 4-byte elements: id >> 5);
- NF2 reads labels, and claims them by compare-and-swap (an atomic returns a value, so it holds its warp
  like a load);
- OP stores: edge-queue and vertex-queue entries, bitmask bytes, plain label stores;
- ANI also takes the atomics that reserve output slots (one per copying chunk, contraction group, or fused
  lookup instruction with survivors, on the queue-size counter) and post pieces (one per warp with a long
  list, on the pieces' counter): they return a value, so they hold their warp.

The mapping is the GPU's: chunks of C = 256 queue entries, chunk c on CTA c mod grid; a chunk's lists are
gathered by scan+warp+CTA (the `swc` decomposition, `simdmodel.strategies`), in the order of a position
space that is the launch's output queue for a copy (each list at its `out_at`) and the looked-up ids' order
for a fused lookup; lists longer than its `big_list` leave the launch as pieces of PIECE edges, piece q on CTA
q mod grid, its C threads striding over it. A contraction takes CONTRACT_ITEMS tiles of 256 ids a CTA.
Each lookup's flags come from the model's own order of lanes (`simdmodel.lookup`); survivors are
enqueued at consecutive positions in generation order (the GPU reserves them with an atomic counter, so
its order varies from run to run). Not jobs: a `pieces` launch's reads of the piece descriptors, the
input-size reads, and the shared-memory culling tables (instructions, `instructions.coupled_trips`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from simdmodel.couplings import CONTRACT_ITEMS, PIECE, LaunchWork, list_starts
from simdmodel.lookup import KEPT, LABEL_CLAIM, LABEL_READ, LABEL_WRITE, MASK_READ, MASK_WRITE
from simdmodel.strategies import parse_mapping, queue_units, schedules

from ..layout import PIECE_COUNT, QUEUE_SIZE
from ._jobs import ANI, EDL, ERL, NF1, NF2, OP, JobBuffer, JobTrace, fits, generate, lane_buffers, push_job
from .expand import INPUT_SECTORS_PER_WARP, unit_steps, unit_warp

GATHER = parse_mapping("swc")  # scan+warp+CTA over a chunk of C entries
CTA_SIZE = GATHER.geometry.unit_entries  # C = 256, couplings.cu's BFS_BLOCK threads a CTA
CTA_WARPS = CTA_SIZE // 32
LOOKUP_JOBS = 6  # a lookup instruction's jobs at most: bitmask read, label read, claim, bitmask, label, enqueue stores
_SECTORS = 32  # a job's sectors at most


@numba.njit(cache=True, nogil=True, inline="always")
def _atomic(warp, sector, keys, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """ANI: one atomic on the counter in `sector` (it returns the reserved slot, so it holds the warp)."""
    job_server[n_jobs] = ANI
    job_warp[n_jobs] = warp
    sectors[n_sectors] = sector
    job_ptr[n_jobs + 1] = n_sectors + 1
    return n_jobs + 1, n_sectors + 1


@numba.njit(cache=True, nogil=True, inline="always")
def _lookup_instruction(warp, ids, flags, at, count, out_next, b_mask, b_label, b_out, b_count, elements, keys,
                        job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """The jobs of one warp instruction whose lanes look up ids[at[0:count]]: bitmask reads (NF1), label reads
    and claims (NF2), bitmask and label stores and the survivors' enqueue at out_next.. (OP), their slots
    reserved by one atomic on the queue-size counter at sector `b_count` (ANI; -1: the CTA reserves them).
    Returns (jobs, sectors, next free output slot)."""
    for server, flag, shift, base in ((NF1, MASK_READ, 5, b_mask), (NF2, LABEL_READ, 0, b_label),
                                      (NF2, LABEL_CLAIM, 0, b_label), (OP, MASK_WRITE, 5, b_mask),
                                      (OP, LABEL_WRITE, 0, b_label)):
        lanes = 0
        for k in range(count):
            if flags[at[k]] & flag:
                elements[lanes] = ids[at[k]] >> shift
                lanes += 1
        if lanes:
            n_jobs, n_sectors = push_job(server, warp, elements, 0, lanes, base, keys, job_server, job_warp, job_ptr,
                                         sectors, n_jobs, n_sectors)
    lanes = 0
    for k in range(count):
        if flags[at[k]] & KEPT:
            elements[lanes] = out_next + lanes
            lanes += 1
    if lanes and b_count >= 0:
        n_jobs, n_sectors = _atomic(warp, b_count, keys, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    if lanes:
        n_jobs, n_sectors = push_job(OP, warp, elements, 0, lanes, b_out, keys, job_server, job_warp, job_ptr,
                                     sectors, n_jobs, n_sectors)
    return n_jobs, n_sectors, out_next + lanes


@numba.njit(cache=True, nogil=True, inline="always")
def _step(warp, positions, e0, e1, csr_of_pos, ids, flags, out_next, b_edge, b_mask, b_label, b_out, b_count, elements,
          at, keys, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """One gather step over positions[e0:e1]: EDL reads their column indices, then either OP copies them to
    the output queue at the same positions (`flags` empty) or they are looked up at once (a fused lookup:
    `ids` and `flags` indexed by position). Returns (jobs, sectors, next free output slot)."""
    lanes = e1 - e0
    for k in range(lanes):
        at[k] = positions[e0 + k]
        elements[k] = csr_of_pos[at[k]]
    n_jobs, n_sectors = push_job(EDL, warp, elements, 0, lanes, b_edge, keys, job_server, job_warp, job_ptr, sectors,
                                 n_jobs, n_sectors)
    if flags.size == 0:
        n_jobs, n_sectors = push_job(OP, warp, at, 0, lanes, b_out, keys, job_server, job_warp, job_ptr, sectors,
                                     n_jobs, n_sectors)
        return n_jobs, n_sectors, out_next
    return _lookup_instruction(warp, ids, flags, at, lanes, out_next, b_mask, b_label, b_out, b_count, elements, keys,
                               job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)


@numba.njit(cache=True, nogil=True, inline="always")
def _read_entries(warp, lo, hi, base, elements, keys, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """ANI: a warp reads input-queue positions lo .. hi-1."""
    for k in range(lo, hi):
        elements[k - lo] = k
    return push_job(ANI, warp, elements, 0, hi - lo, base, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                    n_sectors)


@numba.njit(cache=True, nogil=True, inline="always")
def _row_offsets(warp, vertices, count, b_row, elements, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                 n_sectors):
    """ERL: row_start[v] and row_start[v+1] of vertices[0:count] (two jobs)."""
    for k in range(count):
        elements[k] = vertices[k]
    n_jobs, n_sectors = push_job(ERL, warp, elements, 0, count, b_row, keys, job_server, job_warp, job_ptr, sectors,
                                 n_jobs, n_sectors)
    for k in range(count):
        elements[k] = vertices[k] + 1
    return push_job(ERL, warp, elements, 0, count, b_row, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                    n_sectors)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _gather_fill(indptr, entries, entry_ptr, unit_edges, chunk_of_unit, queue_size, big_list, lookup_input, in_flags,
                 lookup_flags, csr_of_pos, ids, flags, out_next, slots, first_step, step_warp, step_end, positions,
                 b_in, b_row, b_edge, b_mask, b_label, b_out, b_count, b_pieces, elements, at, vertices, keys,
                 unit, units, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """Units (chunks of the input queue) of an expanding launch: each warp of the chunk reads its entries (ANI)
    and, with `lookup_input` (contract-expand), looks them up (`lookup_flags`: no enqueue) and reads its
    survivors' row offsets (`in_flags` say which), else reads the row offsets of its vertices (ERL); then the
    chunk's gather steps. `entries` are the expanded vertices, `entry_ptr` each unit's first among them;
    out_next[0] is the fused lookup's next output slot. Atomics (ANI): a warp with a list longer than
    `big_list` posts its pieces (`b_pieces`); a copying chunk with `unit_edges` reserves its slots
    (`b_count`, by its first warp)."""
    while unit < units:
        chunk = chunk_of_unit[unit]
        s0 = first_step[unit]
        s1 = first_step[unit + 1]
        lanes = step_end[s1 - 1] - (step_end[s0 - 1] if s0 > 0 else 0) if s1 > s0 else 0
        per_step = 2 + (LOOKUP_JOBS + 1 if flags.size else 0)
        need_jobs = (4 + LOOKUP_JOBS) * CTA_WARPS + 1 + per_step * (s1 - s0)
        need_sectors = (INPUT_SECTORS_PER_WARP + LOOKUP_JOBS * _SECTORS) * CTA_WARPS + per_step * lanes + 64
        if not fits(n_jobs, n_sectors, need_jobs, need_sectors, job_server, sectors):
            return unit, n_jobs, n_sectors, need_jobs, need_sectors
        first_warp = unit_warp(chunk, CTA_WARPS, slots)
        lo = chunk * CTA_SIZE
        taken = entry_ptr[unit]
        for j in range(CTA_WARPS):
            a = lo + 32 * j
            b = min(a + 32, queue_size)
            if a >= b:
                break
            n_jobs, n_sectors = _read_entries(first_warp + j, a, b, b_in, elements, keys, job_server, job_warp,
                                              job_ptr, sectors, n_jobs, n_sectors)
            count = b - a
            if lookup_input:
                for k in range(count):
                    at[k] = a + k
                n_jobs, n_sectors, _ = _lookup_instruction(first_warp + j, ids, lookup_flags, at, count, 0, b_mask,
                                                           b_label, b_out, -1, elements, keys, job_server,
                                                           job_warp, job_ptr, sectors, n_jobs, n_sectors)
                count = 0
                for k in range(b - a):
                    if in_flags[a + k] & KEPT:
                        vertices[count] = entries[taken]
                        taken += 1
                        count += 1
            else:
                for k in range(count):
                    vertices[k] = entries[a + k]
            if count:
                n_jobs, n_sectors = _row_offsets(first_warp + j, vertices, count, b_row, elements, keys, job_server,
                                                 job_warp, job_ptr, sectors, n_jobs, n_sectors)
            long = False
            for k in range(count):
                long |= indptr[vertices[k] + 1] - indptr[vertices[k]] > big_list
            if long:
                n_jobs, n_sectors = _atomic(first_warp + j, b_pieces, keys, job_server, job_warp, job_ptr, sectors,
                                            n_jobs, n_sectors)
        if flags.size == 0 and unit_edges[unit] > 0:
            n_jobs, n_sectors = _atomic(first_warp, b_count, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                                        n_sectors)
        for s in range(s0, s1):
            e0 = step_end[s - 1] if s > 0 else 0
            n_jobs, n_sectors, out_next[0] = _step(first_warp + step_warp[s] % CTA_WARPS, positions, e0, step_end[s],
                                                   csr_of_pos, ids, flags, out_next[0], b_edge, b_mask, b_label,
                                                   b_out, b_count, elements, at, keys, job_server, job_warp, job_ptr,
                                                   sectors, n_jobs, n_sectors)
        unit += 1
    return unit, n_jobs, n_sectors, 0, 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _contract_fill(ids, flags, size, slots, b_in, b_mask, b_label, b_out, b_count, out_next, elements, at, keys,
                   group, groups, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """Groups of CONTRACT_ITEMS tiles of a contraction: each warp reads its ids of every tile (ANI), then looks
    each tile's up; a group with survivors reserves their slots (one atomic, its first warp) before they are
    stored."""
    tile_ids = CONTRACT_ITEMS * CTA_SIZE
    while group < groups:
        need_jobs = CTA_WARPS * CONTRACT_ITEMS * (1 + LOOKUP_JOBS) + 1
        if not fits(n_jobs, n_sectors, need_jobs, need_jobs * _SECTORS, job_server, sectors):
            return group, n_jobs, n_sectors, need_jobs, need_jobs * _SECTORS
        first_warp = unit_warp(group, CTA_WARPS, slots)
        kept = 0
        for i in range(group * tile_ids, min(group * tile_ids + tile_ids, size)):
            kept += (flags[i] & KEPT) > 0
        if kept:
            n_jobs, n_sectors = _atomic(first_warp, b_count, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                                        n_sectors)
        for j in range(CTA_WARPS):
            for k in range(CONTRACT_ITEMS):
                a = group * tile_ids + k * CTA_SIZE + 32 * j
                if a < size:
                    n_jobs, n_sectors = _read_entries(first_warp + j, a, min(a + 32, size), b_in, elements, keys,
                                                      job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
            for k in range(CONTRACT_ITEMS):
                a = group * tile_ids + k * CTA_SIZE + 32 * j
                count = min(32, size - a)
                for i in range(count):
                    at[i] = a + i
                if count > 0:
                    n_jobs, n_sectors, out_next[0] = _lookup_instruction(
                        first_warp + j, ids, flags, at, count, out_next[0], b_mask, b_label, b_out, -1, elements, keys,
                        job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
        group += 1
    return group, n_jobs, n_sectors, 0, 0


@numba.njit(cache=True, nogil=True, _nrt=False)
def _pieces_fill(piece_pos, piece_len, csr_of_pos, ids, flags, slots, b_edge, b_mask, b_label, b_out, b_count,
                 out_next, elements, at, positions, keys,
                 piece, pieces, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """Pieces of long lists, piece q on CTA q mod grid, its threads striding over it (round r of warp j takes
    offsets r * C + 32 j ..), each step a copy or a fused lookup (`_step`)."""
    while piece < pieces:
        steps = -(-piece_len[piece] // 32)
        per_step = 2 + (LOOKUP_JOBS + 1 if flags.size else 0)
        if not fits(n_jobs, n_sectors, per_step * steps, per_step * steps * _SECTORS, job_server, sectors):
            return piece, n_jobs, n_sectors, per_step * steps, per_step * steps * _SECTORS
        first_warp = unit_warp(piece, CTA_WARPS, slots)
        for lo in range(0, piece_len[piece], CTA_SIZE):
            for j in range(CTA_WARPS):
                first = lo + 32 * j
                if first >= piece_len[piece]:
                    break
                lanes = min(32, piece_len[piece] - first)
                for k in range(lanes):
                    positions[k] = piece_pos[piece] + first + k
                n_jobs, n_sectors, out_next[0] = _step(first_warp + j, positions, 0, lanes, csr_of_pos, ids, flags,
                                                       out_next[0], b_edge, b_mask, b_label, b_out, b_count, elements,
                                                       at, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                                                       n_sectors)
        piece += 1
    return piece, n_jobs, n_sectors, 0, 0


@numba.njit(cache=True, nogil=True)
def _lay_out(out, columns, lengths, starts):
    """`_positions`' loop: list i's positions starts[i] .. starts[i] + lengths[i] - 1 read columns[i] onwards."""
    for i in range(lengths.size):
        for k in range(lengths[i]):
            out[starts[i] + k] = columns[i] + k


def _positions(indptr, entries, lengths, starts) -> np.ndarray:
    """Column index of each position of a position space in which list i (`lengths[i]` edges of vertex
    entries[i]) starts at starts[i]; positions outside every list read column 0 (never taken)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.asarray(starts, dtype=np.int64)
    size = int((starts + lengths).max()) if lengths.size else 0
    out = np.zeros(size, dtype=np.int64)
    _lay_out(out, np.asarray(indptr[entries], dtype=np.int64), lengths, starts)
    return out


def _bases(layout, queue_in: str | None, queue_out: str | None) -> dict:
    base = layout.base_sector
    return {"in": base[queue_in] if queue_in else 0, "out": base[queue_out] if queue_out else 0,
            "row": base["row_start"], "edge": base["edge_dst"], "mask": base["bitmask"], "label": base["level"],
            "count": layout.sector_of("counters", QUEUE_SIZE), "pieces": layout.sector_of("counters", PIECE_COUNT)}


@dataclass(frozen=True)
class LaunchShape:
    """How a coupled launch is cut up (`launch_shape`), worked out once for its jobs and its trips."""

    phase: str  # the kernel that runs it: a key of `gpu_validate.modules.COUPLING_KERNELS`
    input: int  # its queue's entries, a `pieces` launch's pieces: what the GPU's tables count
    units: int  # what its CTAs take in turn (c on CTA c mod grid): chunks, a contraction's groups, pieces
    degrees: np.ndarray  # the lists it gathers (`work.expanded`)
    unit_ptr: np.ndarray  # an expanding launch's chunks' entries among them
    piece_pos: np.ndarray  # a `pieces` launch's pieces in posting order: where each starts in its position space
    piece_len: np.ndarray  # and its edges

    def grid(self, full_wave: int) -> int:
        """The CTAs it runs (`gpu_validate.couplings`): one per 256 input entries, or per piece, at most one
        full wave (a grid-stride loop takes the rest)."""
        needed = self.input if self.phase in ("pieces", "lookup-pieces") else -(-self.input // CTA_SIZE)
        return max(1, min(full_wave, needed))


@numba.njit(cache=True, nogil=True)
def _kept_per_chunk(flags, kept, chunk):
    """Looked-up ids that survive (flag `kept`) in each chunk of `chunk` ids."""
    out = np.zeros(-(-flags.size // chunk), dtype=np.int64)
    for i in range(flags.size):
        if flags[i] & kept:
            out[i // chunk] += 1
    return out


def launch_shape(graph, work: LaunchWork) -> LaunchShape:
    """The `LaunchShape` of one coupled launch: an expanding launch's chunks are C queue entries, or
    (contract-expand) the survivors of a chunk's C looked-up ids; a `pieces` launch cuts its long lists into
    pieces of PIECE edges, starting at the list's `out_at` or, a fused lookup's, at its place among the
    looked-up ids."""
    entries = np.asarray(work.expanded, dtype=np.int64)
    degrees = (graph.indptr[entries + 1] - graph.indptr[entries]).astype(np.int64)
    empty = np.zeros(0, dtype=np.int64)
    if work.phase == "pieces":
        starts = list_starts(degrees) if _fused_pieces(work) else np.asarray(work.out_at, dtype=np.int64)
        count = -(-degrees // PIECE)
        owner = np.repeat(np.arange(entries.size), count)
        j = np.arange(int(count.sum())) - np.repeat(list_starts(count), count)
        return LaunchShape(listing_phase(work), int(owner.size), int(owner.size), degrees, empty,
                           starts[owner] + j * PIECE, np.minimum(PIECE, degrees[owner] - j * PIECE))
    size = int(work.queue.size)
    if work.phase == "contract":
        return LaunchShape(work.phase, size, -(-size // (CONTRACT_ITEMS * CTA_SIZE)), degrees, empty, empty, empty)
    if work.phase == "contract-expand":
        unit_ptr = np.concatenate(([0], np.cumsum(_kept_per_chunk(work.flags, KEPT, CTA_SIZE)))).astype(np.int64)
    else:
        unit_ptr = queue_units(entries.size, CTA_SIZE)
    return LaunchShape(work.phase, size, -(-size // CTA_SIZE), degrees, unit_ptr, empty, empty)


def _fused_pieces(work: LaunchWork) -> bool:
    """Whether a `pieces` launch looks its pieces up (an expand-contract's) instead of copying them."""
    return work.flags.size > 0 or bool(work.out_at.size and work.out_at[0] < 0)


def listing_phase(work: LaunchWork) -> str:
    """The kernel that runs a launch, as `gpu_validate.modules.COUPLING_KERNELS` names it."""
    return "lookup-pieces" if work.phase == "pieces" and _fused_pieces(work) else work.phase


def listing_name(phase: str) -> str:
    """The SASS listing (`opmachine/sass/ARCH/NAME.sass`) of the kernel of a coupled launch phase (a key of
    `gpu_validate.modules.COUPLING_KERNELS`), built with the default `atomic` lookup."""
    return f"couple-{phase}"


def _gather(graph, work: LaunchWork, shape: LaunchShape, b: dict, slots: int, out_next: np.ndarray,
            buffer: JobBuffer) -> None:
    """The jobs of an expanding launch (expand, expand-contract, contract-expand), appended to `buffer`."""
    indptr = graph.indptr
    entries = np.asarray(work.expanded, dtype=np.int64)
    degrees, unit_ptr = shape.degrees, shape.unit_ptr
    short = np.where(degrees > work.big_list, 0, degrees)
    fused = work.phase == "expand-contract"
    lookup_input = work.phase == "contract-expand"
    starts = list_starts(short) if fused else np.asarray(work.out_at, dtype=np.int64)
    csr_of_pos = _positions(indptr, entries, short, starts)
    flags = np.asarray(work.flags) if fused else np.zeros(0, dtype=np.uint8)
    queue = np.asarray(work.queue, dtype=np.int64)
    if lookup_input:
        in_flags = np.asarray(work.flags)
        lookup_flags = in_flags & np.uint8(~KEPT & 0xFF)  # its survivors are expanded, not enqueued
    else:
        in_flags = lookup_flags = np.zeros(0, dtype=np.uint8)
    ids = np.asarray(work.looked_up, dtype=np.int64)
    unit_edges = np.diff(np.concatenate(([0], np.cumsum(degrees)))[unit_ptr])  # each chunk's lists' edges
    for block in schedules(GATHER.spec, GATHER.params, starts, short, unit_ptr):
        first_step = unit_steps(block.step_warp, CTA_WARPS, block.units)
        units = np.arange(block.first_unit, block.first_unit + block.units, dtype=np.int64)
        args = (graph.indptr, entries, unit_ptr[units], unit_edges[units], units, queue.size, work.big_list,
                lookup_input, in_flags, lookup_flags, csr_of_pos, ids, flags, out_next, slots, first_step,
                block.step_warp, block.step_end, block.edges, b["in"], b["row"], b["edge"], b["mask"], b["label"],
                b["out"], b["count"], b["pieces"], *lane_buffers())
        generate(_gather_fill, args, 0, block.units, buffer)


def _pieces(graph, work: LaunchWork, shape: LaunchShape, b: dict, slots: int, out_next: np.ndarray,
            buffer: JobBuffer) -> None:
    """The jobs of a `pieces` launch: the long lists of `work.expanded`, copied to their `out_at` or (a fused
    lookup's, `out_at` -1) looked up in the order of `work.looked_up`."""
    entries, degrees = np.asarray(work.expanded, dtype=np.int64), shape.degrees
    fused = _fused_pieces(work)
    csr_of_pos = _positions(graph.indptr, entries, degrees, list_starts(degrees) if fused else work.out_at)
    piece_pos, piece_len = shape.piece_pos, shape.piece_len
    flags = np.asarray(work.flags) if fused else np.zeros(0, dtype=np.uint8)
    elements, at, positions, keys = lane_buffers()
    args = (piece_pos, piece_len, csr_of_pos, np.asarray(work.looked_up, dtype=np.int64), flags, slots, b["edge"],
            b["mask"], b["label"], b["out"], b["count"], out_next, elements, at, positions, keys)
    generate(_pieces_fill, args, 0, piece_pos.size, buffer)


def coupled_jobs(graph, work: LaunchWork, layout, grid: int, queue_in: str | None, queue_out: str,
                 out_start: int = 0, buffer: JobBuffer | None = None, shape: LaunchShape | None = None) -> JobTrace:
    """JobTrace of one coupled launch on `grid` CTAs (`layout`: `layout.coupled_layout_for`), reading queue
    array `queue_in` and writing `queue_out` (layout array names); a fused lookup's survivors are enqueued
    from slot `out_start`. With a `buffer` the jobs go there and the trace is a view of it; `shape`: the
    launch's `launch_shape`, when the caller has it."""
    shape = launch_shape(graph, work) if shape is None else shape
    reused = buffer is not None
    if buffer is None:
        buffer = JobBuffer(1 << 12, 1 << 14)
    else:
        buffer.reuse(1 << 12, 1 << 14)
    b = _bases(layout, queue_in, queue_out)
    out_next = np.array([out_start], dtype=np.int64)
    if work.phase == "contract":
        elements, at, _, keys = lane_buffers()
        size = work.looked_up.size
        args = (np.asarray(work.looked_up, dtype=np.int64), np.asarray(work.flags), size, grid, b["in"], b["mask"],
                b["label"], b["out"], b["count"], out_next, elements, at, keys)
        generate(_contract_fill, args, 0, shape.units, buffer)
    elif work.phase == "pieces":
        _pieces(graph, work, shape, b, grid, out_next, buffer)
    elif work.phase in ("expand", "expand-contract", "contract-expand"):
        _gather(graph, work, shape, b, grid, out_next, buffer)
    else:
        raise ValueError(f"no jobs for a {work.phase!r} launch")
    return buffer.trace(grid * CTA_WARPS, views=reused)
