"""Warp-level GPU jobs (seed 003 §6.3): one dynamic memory instruction of one warp, with its sectors.

A kernel's job generator walks the launch in the documented order (work chunks in ascending order,
each warp's instructions in program order) and appends every job: its server, the launched warp
that ran it, and the sorted distinct 32-byte sectors its active lanes touched (the L2 requests,
DESIGN.md). Generators fill preallocated buffers chunk by chunk and hand back control when the
next chunk might not fit, so the buffers grow to what the launch needs and no more.
"""
from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

import numba
import numpy as np

from ..cache.stack import prefetch
from ..layout import ELEMENTS_PER_SECTOR
from ._sort32 import LANES, sort32

ANI, NF1, ERL, EDL, NF2, OP = range(6)
# Columns of a launch's per-server count table (6 servers x these), simulated or in closed form.
SERVER_FIELDS = ("jobs", "l2_sectors", "l2_hits", "dram_sectors", "row_hits", "row_misses")
_PAD = np.iinfo(np.int32).max  # sorts after every sector offset


@dataclass(frozen=True)
class JobTrace:
    """All jobs of one kernel launch in generation order; job j's sectors are sectors[ptr[j]:ptr[j+1]]."""

    server: np.ndarray  # int8 server id per job (order of bfs_machine.SERVERS)
    warp: np.ndarray  # int32 launched warp per job
    ptr: np.ndarray  # int64, jobs + 1 offsets into `sectors`
    sectors: np.ndarray  # int32 sector ids
    warps: int  # launched warps

    @property
    def jobs(self) -> int:
        return self.server.size

    @property
    def nbytes(self) -> int:
        """Bytes of the trace's entries (the buffers its arrays may be views of can be larger)."""
        return self.server.nbytes + self.warp.nbytes + self.ptr.nbytes + self.sectors.nbytes


@numba.njit(cache=True, nogil=True, inline="always")
def push_run(server, warp, first, count, base_sector, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """`push_job` of `count` (1 to 32) lanes that touch the consecutive elements first .. first + count - 1:
    their sectors in order, without going through the lanes."""
    for key in range(first // ELEMENTS_PER_SECTOR, (first + count - 1) // ELEMENTS_PER_SECTOR + 1):
        sectors[n_sectors] = base_sector + key
        n_sectors += 1
    job_server[n_jobs] = server
    job_warp[n_jobs] = warp
    job_ptr[n_jobs + 1] = n_sectors
    return n_jobs + 1, n_sectors


@numba.njit(cache=True, nogil=True, inline="always")
def push_job(server, warp, elements, first, count, base_sector, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
             n_sectors):
    """Append one job whose `count` (<= 32) active lanes touch `elements[first:first+count]` of an
    array at `base_sector`.

    Coalesces the lane addresses into ascending distinct sectors: the lanes' sector offsets go to
    `keys` (int32 scratch of 32 lanes), sorted by the bitonic network unless already in order (a
    contiguous run), then copied without repeats. Returns the new (jobs, sectors) fill counts.
    """
    ordered = True
    previous = -1
    for i in range(count):
        key = elements[first + i] // ELEMENTS_PER_SECTOR
        keys[i] = key
        ordered &= key >= previous
        previous = key
    if not ordered:
        for i in range(count, LANES):
            keys[i] = _PAD
        sort32(keys)
    previous = -1
    for i in range(count):  # without a branch: a repeat is written and then overwritten
        key = keys[i]
        sectors[n_sectors] = base_sector + key
        n_sectors += key != previous
        previous = key
    job_server[n_jobs] = server
    job_warp[n_jobs] = warp
    job_ptr[n_jobs + 1] = n_sectors
    return n_jobs + 1, n_sectors


@numba.njit(cache=True, nogil=True)
def _bytes(size):
    return np.empty(size, dtype=np.uint8)


SMALL_PAGES_BYTES = 1 << 31
"""The largest job array taken from numba's allocator (`job_array`); larger ones come from numpy."""


def job_array(size: int, dtype) -> np.ndarray:
    """`np.empty(size, dtype)` for a launch's jobs. Up to SMALL_PAGES_BYTES it comes from numba's allocator,
    which, unlike numpy's, does not ask the kernel for transparent huge pages: a launch's jobs are written
    once, front to back, and where huge pages are allocated on demand (THP `defrag` = madvise, the usual
    setting) each first touch can wait for memory to be compacted. Measured on a 2-core machine, one
    process alternating both ways: `topo` on rmat-20 (arrays up to 0.3 GB) 2.9 s against 3.6-3.9 s,
    warm `sm-32` on kron-22 (up to 1.5 GB) 9.7-10.2 s against 11.3-11.7 s; warm `sm-32` on kron-24 (up to
    6 GB), whose random gathers over the trace want huge pages' TLB reach, 88 s against 78 s, so arrays
    that large keep numpy's."""
    dtype = np.dtype(dtype)
    nbytes = size * dtype.itemsize
    if nbytes > SMALL_PAGES_BYTES:
        return np.empty(size, dtype=dtype)
    owner = _pooled(nbytes)
    return (owner if owner is not None else _bytes(nbytes))[:nbytes].view(dtype)


POOLED_BYTES = 1 << 31
"""The most memory of let-go job arrays a process keeps for `job_array` to hand out again (`recycle`)."""
POOLED_SMALLEST = 1 << 20
"""Job arrays smaller than this are not kept: their pages cost little to fault in."""
POOLED_SLACK = 4
"""A kept array serves a request of at least 1 / POOLED_SLACK of its size (a small request does not take a
large array that a later, larger launch could use)."""
_pool: list[np.ndarray] = []  # idle job memory: uint8 arrays that no view refers to
_pool_lock = threading.Lock()


def _pooled(nbytes: int) -> np.ndarray | None:
    """The smallest idle array of at least `nbytes` and at most POOLED_SLACK times that, taken out of the
    pool; None when there is none."""
    if POOLED_SLACK * nbytes < POOLED_SMALLEST or not _pool:  # nothing kept is small enough, or nothing kept
        return None
    with _pool_lock:
        fitting = [k for k, owner in enumerate(_pool) if nbytes <= owner.size <= POOLED_SLACK * nbytes]
        if not fitting:
            return None
        return _pool.pop(min(fitting, key=lambda k: _pool[k].size))


def recycle(arrays: list) -> None:
    """Keep, for `job_array` to hand out again, the memory of these job arrays or `JobTrace`s (the list is
    emptied) that nothing else refers to, up to POOLED_BYTES idle in all: a warm prediction's prior run makes
    and lets go hundreds of MB of traces (their fresh pages cost 5 s of system time in the 45 s of gathering
    kron-20). Memory that any view still refers to (counted by its references) is only let go."""
    while arrays:
        array = arrays.pop()
        if isinstance(array, JobTrace):
            arrays.extend((array.server, array.warp, array.ptr, array.sectors))
            continue
        owner = array.base if isinstance(array.base, np.ndarray) else array
        del array
        if (owner.dtype != np.uint8 or isinstance(owner.base, np.ndarray) or owner.size < POOLED_SMALLEST
                or sys.getrefcount(owner) > 2):  # 2: the name `owner` and the call's argument
            continue
        with _pool_lock:
            if owner.size + sum(kept.size for kept in _pool) <= POOLED_BYTES:
                _pool.append(owner)


class JobBuffer:
    """Growable job arrays handed to a numba generator, which stops early when a chunk would not fit."""

    def __init__(self, jobs: int, sectors: int):
        self.server, self.warp, self.ptr, self.sectors = (np.empty(0, dtype=dtype)
                                                          for dtype in (np.int8, np.int32, np.int64, np.int32))
        self.packed = np.empty(0, dtype=np.uint64)
        self.reuse(max(jobs, 16), max(sectors, 64))

    def reuse(self, jobs: int, sectors: int) -> None:
        """Empty the buffer for another launch, with room for at least these many jobs and sectors
        (its memory is used again: no fresh pages to fault in and zero; arrays too small are let go to
        `recycle`)."""
        self.n_jobs = self.n_sectors = 0
        smaller = []
        if jobs > self.server.size:
            smaller += [self.server, self.warp, self.ptr]
            self.server = job_array(jobs, np.int8)
            self.warp = job_array(jobs, np.int32)
            self.ptr = job_array(jobs + 1, np.int64)
        self.ptr[0] = 0
        if sectors > self.sectors.size:
            smaller.append(self.sectors)
            self.sectors = job_array(sectors, np.int32)
        recycle(smaller)

    def grow(self, need_jobs: int, need_sectors: int) -> None:
        smaller = []
        if self.n_jobs + need_jobs > self.server.size:
            size = max(2 * self.server.size, self.n_jobs + need_jobs)
            smaller += [self.server, self.warp, self.ptr]
            self.server = _resized(self.server, size)
            self.warp = _resized(self.warp, size)
            self.ptr = _resized(self.ptr, size + 1)
        if self.n_sectors + need_sectors > self.sectors.size:
            smaller.append(self.sectors)
            self.sectors = _resized(self.sectors, max(2 * self.sectors.size, self.n_sectors + need_sectors))
        recycle(smaller)

    def packed_for(self, jobs: int) -> np.ndarray:
        """Room for a launch's `jobs` jobs in interleaved order (`memory.interleaved_jobs`, one uint64 each):
        kept with the buffer, and so from prediction to prediction, as its pages are faulted in already (a
        fresh one for every `topo` prediction on rmat-20 cost 0.4 s of system time)."""
        if jobs > self.packed.size:
            smaller, self.packed = [self.packed], np.empty(0, dtype=np.uint64)  # let the smaller one go first
            recycle(smaller)
            self.packed = job_array(jobs, np.uint64)
        return self.packed[:jobs]

    @property
    def reserved_bytes(self) -> int:
        return self.server.nbytes + self.warp.nbytes + self.ptr.nbytes + self.sectors.nbytes + self.packed.nbytes

    def append(self, other: JobBuffer, first_job: int, end_job: int) -> None:
        """Append jobs `first_job` .. `end_job` - 1 of `other` after this buffer's, with their sectors."""
        jobs = end_job - first_job
        first, end = int(other.ptr[first_job]), int(other.ptr[end_job])
        self.grow(jobs, end - first)
        j, k = self.n_jobs, self.n_sectors
        self.server[j:j + jobs] = other.server[first_job:end_job]
        self.warp[j:j + jobs] = other.warp[first_job:end_job]
        np.add(other.ptr[first_job + 1:end_job + 1], k - first, out=self.ptr[j + 1:j + jobs + 1])
        self.sectors[k:k + end - first] = other.sectors[first:end]
        self.n_jobs, self.n_sectors = j + jobs, k + end - first

    def trace(self, warps: int, views: bool = False) -> JobTrace:
        """The jobs appended: views of the buffers when `views` (the caller reuses the buffer only once
        the trace is dropped) or when they fill at least half of them, else trimmed copies."""
        def used(array, size):
            return array[:size] if views or 2 * size >= array.size else array[:size].copy()

        return JobTrace(used(self.server, self.n_jobs), used(self.warp, self.n_jobs), used(self.ptr, self.n_jobs + 1),
                        used(self.sectors, self.n_sectors), warps)


SPARE_BYTES = 1 << 30
"""The most job-buffer memory a process keeps between predictions (`spare_buffer`)."""
_spares: list[JobBuffer] = []
_spares_lock = threading.Lock()


def _kept_bytes() -> int:
    return sum(spare.reserved_bytes for spare in _spares)


def spare_buffer() -> JobBuffer:
    """A job buffer for one prediction: the largest one an earlier prediction of this process handed back
    (`hand_back`), whose pages are already faulted in, else a new one. Faulting in fresh pages took 0.4 s
    of system time in a 1.6 s `sm-8` prediction on rmat-20."""
    with _spares_lock:
        if not _spares:
            return JobBuffer(0, 0)
        largest = max(_spares, key=lambda spare: spare.reserved_bytes)
        _spares.remove(largest)
        return largest


def release_spares() -> int:
    """Let every kept job buffer and idle job array go (`hand_back`, `recycle`: a prediction that would not
    fit beside them); the bytes they held."""
    with _spares_lock:
        released = _kept_bytes()
        _spares.clear()
    with _pool_lock:
        released += sum(owner.size for owner in _pool)
        _pool.clear()
    return released


def hand_back(buffer: JobBuffer) -> None:
    """Keep `buffer` for a later prediction (`spare_buffer`) while the kept ones hold at most SPARE_BYTES;
    the caller holds no view of it any more."""
    with _spares_lock:
        if buffer.reserved_bytes + _kept_bytes() <= SPARE_BYTES:
            _spares.append(buffer)


def _resized(array: np.ndarray, size: int) -> np.ndarray:
    out = job_array(size, array.dtype)
    out[: array.size] = array
    return out


def generate(fill, args: tuple, chunk: int, chunks: int, buffer: JobBuffer) -> None:
    """Drive `fill(*args, chunk, chunks, server, warp, ptr, sectors, n_jobs, n_sectors)` from `chunk`
    to `chunks`, appending to `buffer`.

    The fills are compiled without reference counting (numba's `_nrt=False`): every array handed to
    a helper such as `push_job` otherwise costs an atomic increment and decrement per call, which
    measured half of the generation time. So a fill allocates nothing: `lane_buffers()` come in `args`.

    `fill` returns (next chunk, jobs, sectors, jobs needed, sectors needed); it stops before a chunk
    that might not fit, and this loop grows the buffers and resumes there.
    """
    while True:
        chunk, buffer.n_jobs, buffer.n_sectors, need_jobs, need_sectors = fill(
            *args, chunk, chunks, buffer.server, buffer.warp, buffer.ptr, buffer.sectors, buffer.n_jobs,
            buffer.n_sectors)
        if chunk >= chunks:
            return
        buffer.grow(need_jobs, need_sectors)


@numba.njit(cache=True, nogil=True, inline="always")
def fits(n_jobs, n_sectors, need_jobs, need_sectors, job_server, sectors):
    """Whether a chunk needing at most these many jobs and sectors fits in the buffers."""
    return n_jobs + need_jobs <= job_server.size and n_sectors + need_sectors <= sectors.size


@numba.njit(cache=True, nogil=True, inline="always")
def expand_edges(edges, first, count, indices, levels, stamp, level, mark, before, dst, stores):
    """One lockstep inner-loop iteration: destinations of `edges[first:first+count]`, and the lanes
    that store.

    A lane stores when its destination is still unvisited, that is its BFS level is beyond
    `level` and no earlier job of this round stored it: `stamp` says so, or, where `before` > 0,
    `mark[d] < before` does (an edge of the block before this part, whose jobs may not be made yet;
    `split.SplitFill`). Loads precede stores within the iteration, so two lanes finding the same vertex
    both store. Returns the number of stores.
    """
    for i in range(count):
        dst[i] = indices[edges[first + i]]
    stored = 0
    for i in range(count):
        d = dst[i]
        if levels[d] > level and stamp[d] != level and (before == 0 or mark[d] >= before):
            stores[stored] = d
            stored += 1
    for i in range(stored):
        stamp[stores[i]] = level
    return stored


STEPS_AHEAD = 4
"""Warp steps ahead whose destinations' `level` and `stamp` entries are prefetched (`prefetch_step`)."""


@numba.njit(cache=True, nogil=True, inline="always")
def prefetch_step(edges, first, end, indices, levels, stamp, mark, before):
    """Ask for the `level`, `stamp` (and where `before` > 0 `mark`) entries the lanes of a later step
    will test (random over the vertices, so a step waits on them otherwise; no effect on results)."""
    for e in range(first, end):
        d = indices[edges[e]]
        prefetch(levels, d)
        prefetch(stamp, d)
        if before > 0:
            prefetch(mark, d)


@numba.njit(cache=True, nogil=True, inline="always")
def inner_iteration(warp, edges, first, count, indices, levels, stamp, level, mark, before, base_edge, base_level, dst,
                    stores, keys, job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors):
    """Jobs of one lockstep iteration over `edges[first:first+count]`: EDL reads edge_dst, NF2 reads
    level[dst], OP stores.

    OP is one job when at least one lane stores (seed 003 §6.3, Fig. 4).
    """
    n_jobs, n_sectors = push_job(EDL, warp, edges, first, count, base_edge, keys,
                                 job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    stored = expand_edges(edges, first, count, indices, levels, stamp, level, mark, before, dst, stores)
    n_jobs, n_sectors = push_job(NF2, warp, dst, 0, count, base_level, keys,
                                 job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    if stored > 0:
        n_jobs, n_sectors = push_job(OP, warp, stores, 0, stored, base_level, keys,
                                     job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    return n_jobs, n_sectors


@numba.njit(cache=True, nogil=True, inline="always")
def input_jobs(warp, queue, lo, hi, b_queue, b_row, elements, keys, job_server, job_warp, job_ptr, sectors,
               n_jobs, n_sectors):
    """A data-driven warp's input: ANI reads queue positions lo .. hi-1, then ERL reads `row_start[v]`
    and `row_start[v+1]` of their vertices `queue[lo:hi]` (two jobs)."""
    for k in range(lo, hi):
        elements[k - lo] = k
    n_jobs, n_sectors = push_job(ANI, warp, elements, 0, hi - lo, b_queue, keys,
                                 job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    for k in range(lo, hi):
        elements[k - lo] = queue[k]
    n_jobs, n_sectors = push_job(ERL, warp, elements, 0, hi - lo, b_row, keys,
                                 job_server, job_warp, job_ptr, sectors, n_jobs, n_sectors)
    for k in range(lo, hi):
        elements[k - lo] = queue[k] + 1
    return push_job(ERL, warp, elements, 0, hi - lo, b_row, keys, job_server, job_warp, job_ptr, sectors, n_jobs,
                    n_sectors)


@numba.njit(cache=True, nogil=True)
def lane_buffers():
    """Scratch arrays of one value per lane: elements, destinations, stores, and `push_job`'s keys."""
    return (np.empty(LANES, dtype=np.int64), np.empty(LANES, dtype=np.int64), np.empty(LANES, dtype=np.int64),
            np.empty(LANES, dtype=np.int32))
