"""A launch's jobs through the memory models: L2 sectors, L2 hits, DRAM sectors, row-buffer hits.

Warps run concurrently, so the address stream interleaves them: the documented order takes every
launched warp's first job (warps in launch order), then every warp's second job, and so on.
That stream goes through the L2 model, cold at each launch (as Nsight Compute measures a kernel by
default): fully associative LRU by stack distance, as in seed 003 §6.4, or the sectored
set-associative LRU with the profile's geometry, which can also be warm: one `SetAssocState`
carried from launch to launch, as back-to-back launches of a BFS find the L2. L2 misses, in
order, go through the row-buffer model: a fully associative LRU of `row_buffers` DRAM blocks,
empty at each launch. Loads and stores are treated alike (seed 003 Table 2 counts all 13 jobs
of Fig. 4 as L2 transactions). Every hit and miss is attributed to the server whose job caused
it (Fig. 10). Where the profile has [l2_partitions], each access also follows which of the L2's
partitions hold its sector (`cache.partitions`), so that a load's hit can be far.
"""
from __future__ import annotations

from contextlib import nullcontext

import numba
import numpy as np

from .alongside import beside
from .cache import SetAssocGeometry, SetAssocState, lru_hits, miss_ratio_curve, setassoc_hits, stack_distances
from .cache.lru_list import LruList, lru_access, lru_clear
from .cache.partitions import slot_partition, visit
from .cache.setassoc import small_access, small_constants
from .cache.stack import prefetch
from .critical import _MAX_SECTORS, launch_slots
from .kernels import OP, SERVER_FIELDS, JobBuffer
from .layout import SECTOR_BYTES

L2_MODELS = ("lru", "setassoc")
# Capacities of the miss-ratio curve the LRU model reports, 256 KiB .. 256 MiB.
MRC_CAPACITIES_BYTES = tuple(2**k for k in range(18, 29))
_LATENCY_SECTORS = _MAX_SECTORS + 1  # a latency table's columns: 0 .. 32 sectors
_AHEAD = 16  # jobs ahead whose trace entries `_launch_pass` prefetches
BESIDE_SECTORS = 1 << 18
"""A launch's sectors from which `_hot_requests` gets a thread of its own beside the pass: below it a thread costs
more than it saves."""


@numba.njit(cache=True, nogil=True)
def _step_starts(warp, warps):
    """Where each position in a warp's job sequence begins in the interleaved order (jobs at positions
    before it come first), and a zeroed per-warp counter: the counting sort `interleaved_order` and
    `interleaved_jobs` share, recounting positions instead of storing them."""
    seen = np.zeros(warps, dtype=np.int64)
    for j in range(warp.size):
        seen[warp[j]] += 1
    longest = seen.max() if warps else 0
    start = np.zeros(longest + 1, dtype=np.int64)  # warps with more than s jobs, then running offsets
    for w in range(warps):
        start[seen[w]] -= 1
        seen[w] = 0
    start[0] += warps
    for s in range(longest):
        start[s + 1] += start[s]
    running = 0
    for s in range(longest + 1):
        running, start[s] = running + start[s], running
    return start, seen


@numba.njit(cache=True, nogil=True)
def interleaved_order(warp, warps):
    """Job indices sorted by (position in its warp's job sequence, generation order)."""
    start, seen = _step_starts(warp, warps)
    order = np.empty(warp.size, dtype=np.int64)
    for j in range(warp.size):
        step = seen[warp[j]]
        seen[warp[j]] = step + 1
        order[start[step]] = j
        start[step] += 1
    return order


# A job in `interleaved_jobs`, one word: warp slot (bits 0-19), server (20-22), sector count (23-28) and
# the offset of its first sector in the trace (29-63).
_SLOT_BITS, _SERVER_SHIFT, _COUNT_SHIFT, _START_SHIFT = 20, 20, 23, 29


@numba.njit(cache=True, nogil=True, inline="always")
def _pack(j, server, warp, ptr, slots):
    # no bounds check here: a `raise` in this inlined body made the loops around it 20x slower;
    # the loops return their largest count and `_checked` raises
    return ((np.uint64(ptr[j]) << np.uint64(_START_SHIFT)) | (np.uint64(ptr[j + 1] - ptr[j]) << np.uint64(_COUNT_SHIFT))
            | (np.uint64(server[j]) << np.uint64(_SERVER_SHIFT)) | np.uint64(warp[j] % slots))


def _check_packable(ptr, slots):
    if slots >= 1 << _SLOT_BITS or (ptr.size and ptr[-1] >= 1 << (64 - _START_SHIFT)):
        raise ValueError("more warp slots or sectors than a packed job holds")


def _checked(packed, largest):
    """`packed`, once its loop's largest job (sectors) is known to fit the count field."""
    if largest >= 1 << (_START_SHIFT - _COUNT_SHIFT):
        raise ValueError("a job of more sectors than a packed job holds")
    return packed


@numba.njit(cache=True, nogil=True)
def _interleaved_jobs(warp, server, ptr, warps, slots, packed):
    start, seen = _step_starts(warp, warps)
    largest = 0
    for j in range(warp.size):
        step = seen[warp[j]]
        seen[warp[j]] = step + 1
        packed[start[step]] = _pack(j, server, warp, ptr, slots)
        start[step] += 1
        largest = max(largest, ptr[j + 1] - ptr[j])
    return largest


def interleaved_jobs(warp, server, ptr, warps: int, slots: int, scratch: LaunchScratch | None = None) -> np.ndarray:
    """The jobs in interleaved order (`interleaved_order`), each packed in one uint64: slot `warp %
    slots`, server, sector count (at most 32) and first sector's offset. Read in order, the launch
    pass then fetches only its sectors from all over the trace, not three more arrays. With `scratch`
    they are written into its `packed` array, valid until the next launch's."""
    _check_packable(ptr, slots)
    packed = np.empty(warp.size, dtype=np.uint64) if scratch is None else scratch.packed_for(warp.size)
    largest = _interleaved_jobs(warp, server, ptr, warps, slots, packed)
    return _checked(packed, largest)


@numba.njit(cache=True, nogil=True)
def _packed_in_order(order, server, warp, ptr, slots):
    """The jobs in `order`, packed as `interleaved_jobs` packs them (and the largest job's sectors)."""
    packed = np.empty(order.size, dtype=np.uint64)
    largest = 0
    for i in range(order.size):
        packed[i] = _pack(order[i], server, warp, ptr, slots)
        largest = max(largest, ptr[order[i] + 1] - ptr[order[i]])
    return packed, largest


@numba.njit(cache=True, nogil=True)
def _stream(order, server, ptr, sectors):
    total = sectors.size
    out_sectors = np.empty(total, dtype=sectors.dtype)
    out_server = np.empty(total, dtype=np.int8)
    k = 0
    for j in order:
        for p in range(ptr[j], ptr[j + 1]):
            out_sectors[k] = sectors[p]
            out_server[k] = server[j]
            k += 1
    return out_sectors, out_server


def jobs_per_warp(trace) -> np.ndarray:
    """Jobs each launched warp ran."""
    return np.bincount(trace.warp, minlength=trace.warps)


def l2_geometry(profile) -> SetAssocGeometry:
    """The profile's L2 as a sectored set-associative cache of the capacity the model simulates."""
    return SetAssocGeometry.from_capacity(profile.l2_model_bytes, profile.l2_ways, profile.l2_line_bytes,
                                          profile.sector_bytes)


def simulate_launch(trace, layout, profile, l2_model: str = "lru", l2_state: SetAssocState | None = None):
    """Per-server counts (6 x SERVER_FIELDS, int64) of one launch, and the launch's misses at
    each MRC capacity (LRU model only, else None). With `l2_state` (set-associative model) the
    launch starts from, and leaves its lines in, that cache instead of an empty one."""
    counts, misses_at, _ = simulate_launch_loads(trace, layout, profile, l2_model, l2_state)
    return counts, misses_at


def stream_outcomes(trace, layout, profile, l2_model: str = "lru", l2_state: SetAssocState | None = None):
    """Each sector's outcome in the launch's interleaved stream, the stream simulated whole (the LRU model's
    stack distances, or any set-associative geometry): `(order, stream, outcome)`, the job order of the
    stream, its sectors, and per sector 0 (L2 hit), 1 (row-buffer hit) or 2 (row-buffer miss); and the
    misses at each MRC capacity (LRU model only, else None)."""
    order = interleaved_order(trace.warp, trace.warps)
    stream, _ = _stream(order, trace.server, trace.ptr, trace.sectors)
    misses_at = None
    if l2_model == "lru":
        distances = stack_distances(stream, layout.total_sectors)
        hit = (distances >= 0) & (distances < profile.l2_model_bytes // SECTOR_BYTES)
        capacities = [c // SECTOR_BYTES for c in MRC_CAPACITIES_BYTES]
        misses_at = np.rint(miss_ratio_curve(distances, capacities) * stream.size).astype(np.int64)
    elif l2_state is not None:
        hit, _ = l2_state.hits(stream)
    else:
        hit, _ = setassoc_hits(stream, l2_geometry(profile))
    sectors_per_block = profile.dram_block_bytes // SECTOR_BYTES
    row_hit = lru_hits(stream[~hit] // sectors_per_block, layout.total_sectors // sectors_per_block + 1,
                       profile.row_buffers)
    outcome = np.zeros(stream.size, dtype=np.int8)
    outcome[np.flatnonzero(~hit)] = np.where(row_hit, 1, 2)
    return (order, stream, outcome), misses_at


@numba.njit(cache=True, nogil=True, inline="always")
def _packed_job(packed, i, sectors):
    """Job i of the interleaved order (`interleaved_jobs`): the offset of its first sector in the trace and its
    sector count. Fetches the sectors of the job `_AHEAD` on: they come from all over the trace."""
    if i + _AHEAD < packed.size:
        prefetch(sectors, packed[i + _AHEAD] >> np.uint64(_START_SHIFT))
    job = packed[i]
    return np.int64(job >> np.uint64(_START_SHIFT)), np.int64((job >> np.uint64(_COUNT_SHIFT)) & np.uint64(63))


@numba.njit(cache=True, nogil=True, _nrt=False)
def _launch_pass(packed, sectors, latency, far, outcome, block_shift, l2_constants, valid, tags, recency, holders, rows,
                 counts, jobs, by_outcome, waiting, waited):
    """One pass over the interleaved jobs (`interleaved_jobs`) that adds into the zeroed outputs each
    job's per-server counts and, for each of the latency tables `latency` (models x 3 x 33), its warp
    slot's loads (jobs, sectors per outcome, jobs and summed latency by the slowest outcome a load
    waits for; stores wait for none). The requests to the hottest sector are `_hot_requests`'.

    With `holders` (one byte per sector id; empty: an L2 of one partition) each access also goes
    through the partitions (`cache.partitions.visit`), and a load with a far hit waits for its L2 hits
    `far` (models x 33) in place of `latency`'s.

    A sector's outcome is `outcome[k]` for the k-th sector of the stream when given (`stream_outcomes`);
    else it goes through the L2 (`setassoc.small_access`) and, on a miss, the row buffers
    (`lru_list.lru_access`, emptied at the end) as it is read, and nothing per sector is stored."""
    shift_u, sector_mask, reciprocal, sets_u, lru_shift = l2_constants
    node_of, blocks, newer, older, meta = rows
    given = outcome.size > 0
    models = latency.shape[0]
    widest = latency.shape[2] - 1
    previous_line = np.uint64(0xFFFFFFFFFFFFFFFF)
    previous_slot = np.uint64(0)
    position = 0
    for i in range(packed.size):
        first, n = _packed_job(packed, i, sectors)
        job = packed[i]
        s = np.int64((job >> np.uint64(_SERVER_SHIFT)) & np.uint64(7))
        slot = np.int64(job & np.uint64((1 << _SLOT_BITS) - 1))
        k0 = k1 = k2 = 0
        part = slot_partition(slot)
        crossed = False
        for p in range(first, first + n):
            sector = sectors[p]
            if given:
                o = outcome[position]
                position += 1
            else:
                hit, _, previous_line, previous_slot = small_access(sector, shift_u, sector_mask, reciprocal, sets_u,
                                                                     lru_shift, valid, tags, recency, previous_line,
                                                                     previous_slot)
                o = 0 if hit else 1 if lru_access(sector >> block_shift, node_of, blocks, newer, older, meta) else 2
            if holders.size and visit(holders, sector, part, s == OP, o == 0):
                crossed = True
            if o == 0:
                k0 += 1
            elif o == 1:
                k1 += 1
            else:
                k2 += 1
        counts[s, 0] += 1
        counts[s, 1] += n
        counts[s, 2] += k0
        counts[s, 3] += k1 + k2
        counts[s, 4] += k1
        jobs[slot] += 1
        by_outcome[0, slot] += k0
        by_outcome[1, slot] += k1
        by_outcome[2, slot] += k2
        if s != OP and n > 0:
            for m in range(models):
                worst, slowest = 0.0, 0
                for o, k in ((0, k0), (1, k1), (2, k2)):
                    if k > 0:
                        wait = far[m, min(k, widest)] if o == 0 and crossed else latency[m, o, min(k, widest)]
                        if wait >= worst:
                            worst, slowest = wait, o
                waiting[m, slowest, slot] += 1
                waited[m, slowest, slot] += worst
    for s in range(6):
        counts[s, 5] = counts[s, 3] - counts[s, 4]
    lru_clear(node_of, blocks, newer, older, meta)


@numba.njit(cache=True, nogil=True, _nrt=False, inline="always")
def _first_to_reach(packed, sectors, counter, most):
    """The first sector of the interleaved stream to be read `most` times, `counter` holding each sector's
    requests in all (`most` the largest): a sector of `most` requests is counted down from its first read on
    (-(most - 1) .. 0) and the stream read only until one reaches 0; `counter` is left for the caller to zero."""
    for i in range(packed.size):
        first, n = _packed_job(packed, i, sectors)
        for p in range(first, first + n):
            left = counter[sectors[p]]
            if left == most:
                left = 1 - most
            elif left < 0:
                left += 1
            else:
                continue
            if left == 0:
                return sectors[p]
            counter[sectors[p]] = left
    return -1


@numba.njit(cache=True, nogil=True, _nrt=False)
def _hot_requests(packed, server, warp, ptr, sectors, slots, counter, hot):
    """Add into the zeroed `hot` each warp slot's requests to the launch's hottest sector: the first in the
    interleaved stream (`packed`, `interleaved_jobs`) to reach the most requests. `counter` (zero, one per
    sector id) is zero again on return. Apart from `_launch_pass` so that the two can run at once: this
    one's random counter updates are most of a pass's time.

    The requests are counted in generation order, front to back; only where several sectors reach the most
    (a tie: 14-24% of the sectors of the report's deep graphs, under 2% of its shallow ones) is the interleaved
    stream, gathered from all over the trace, read until one of them has (`_first_to_reach`)."""
    hottest, most, reaching = -1, 0, 0
    for p in range(ptr[0], ptr[server.size]):  # every job's sectors, in generation order
        requests = counter[sectors[p]] + 1
        counter[sectors[p]] = requests
        if requests > most:
            most, hottest, reaching = requests, sectors[p], 1
        elif requests == most:
            reaching += 1
    if reaching > 1:  # a tie: the interleaved order decides
        hottest = _first_to_reach(packed, sectors, counter, most)
    for j in range(server.size):  # generation order: the counts are whole numbers, their order is immaterial
        for p in range(ptr[j], ptr[j + 1]):
            counter[sectors[p]] = 0
            if sectors[p] == hottest:
                hot[warp[j] % slots] += 1


@numba.njit(cache=True, nogil=True, inline="always")
def _store_and_partition(job):
    """Whether a packed job (`interleaved_jobs`) stores, and the L2 partition its warp slot reads through."""
    return ((job >> np.uint64(_SERVER_SHIFT)) & np.uint64(7)) == OP, slot_partition(
        np.int64(job & np.uint64((1 << _SLOT_BITS) - 1)))


@numba.njit(cache=True, nogil=True, _nrt=False)
def _l2_pass(packed, sectors, l2_constants, valid, tags, recency, holders):
    """The interleaved jobs of a launch through the L2 state only (`_launch_pass` without counts), and through
    the partitions when `holders` is not empty."""
    shift_u, sector_mask, reciprocal, sets_u, lru_shift = l2_constants
    previous_line = np.uint64(0xFFFFFFFFFFFFFFFF)
    previous_slot = np.uint64(0)
    for i in range(packed.size):
        first, n = _packed_job(packed, i, sectors)
        store, part = _store_and_partition(packed[i])
        for p in range(first, first + n):
            hit, _, previous_line, previous_slot = small_access(sectors[p], shift_u, sector_mask, reciprocal, sets_u,
                                                                 lru_shift, valid, tags, recency, previous_line,
                                                                 previous_slot)
            if holders.size:
                visit(holders, sectors[p], part, store, hit)


@numba.njit(cache=True, nogil=True, _nrt=False)
def _holders_pass(packed, sectors, holders):
    """The interleaved jobs of a launch through the partitions alone (`_l2_pass` of an L2 that never evicts,
    its lookups left out): a sector hits once any access has reached it, which is when its `holders` are not
    zero (an access leaves them non-zero, and only a write by another kernel, `SetAssocState.written`,
    clears them)."""
    for i in range(packed.size):
        first, n = _packed_job(packed, i, sectors)
        store, part = _store_and_partition(packed[i])
        for p in range(first, first + n):
            visit(holders, sectors[p], part, store, holders[sectors[p]] != 0)


def _jobs_in_order(trace, slots: int, scratch, orders):
    """The launch's interleaved jobs (`interleaved_jobs`) on `slots` warp slots: `orders.packed(slots)` where the
    caller keeps them (`predict.CompactionLaunch`), else made into `scratch`'s room."""
    if orders is not None:
        return orders.packed(slots)
    return interleaved_jobs(trace.warp, trace.server, trace.ptr, trace.warps, slots, scratch)


def _kept_hot(orders, slots: int, scratch, models):
    """The hottest sector's requests per slot where the caller keeps them (`orders.hot`) and they are wanted."""
    return orders.hot(slots, scratch.counter) if orders is not None and models else None


def pass_through_l2(trace, l2_state: SetAssocState, scratch: LaunchScratch | None = None, profile=None,
                    orders=None) -> None:
    """Leave in `l2_state` what a launch leaves in the L2, and nothing else (a run before the predicted
    one: its counts are not wanted). `scratch`: the prediction's (`LaunchScratch`), if any; `orders`: what
    gives the launch's interleaved jobs, where the caller keeps them (`_jobs_in_order`). With a
    `profile` that has [l2_partitions] the state's `holders` follow the launch too (the set-associative
    cache of the GPU kind only). A filled state (`SetAssocState.fill`) keeps every line whatever the
    launch reads: only the partitions' copies are followed, from a state whose holders were zero when
    filled (the prior run of `predict_bfs`)."""
    follows = getattr(profile, "l2_partitions", None) is not None
    if l2_state.filled:
        if follows:
            _holders_pass(_jobs_in_order(trace, launch_slots(trace.warps, profile.physical_warps), scratch, orders),
                          trace.sectors, l2_state.follow_partitions())
        return
    if not l2_state.small:
        l2_state.hits(_stream(interleaved_order(trace.warp, trace.warps), trace.server, trace.ptr, trace.sectors)[0])
        return
    holders, slots = _NO_HOLDERS, 1
    if follows:
        holders, slots = l2_state.follow_partitions(), launch_slots(trace.warps, profile.physical_warps)
    _l2_pass(_jobs_in_order(trace, slots, scratch, orders), trace.sectors,
             small_constants(l2_state.geometry, l2_state.shift), l2_state.valid, l2_state.tags, l2_state.order,
             holders)


_NO_L2 = (np.uint64(0),) * 5, np.zeros(0, np.uint8), np.zeros(0, np.int16), np.zeros(0, np.uint64)
_NO_HOLDERS = np.zeros(0, dtype=np.uint8)


def _count_outcomes(trace, order, outcome, slots: int, models, counter, holders=_NO_HOLDERS):
    """`_count` of a stream whose sectors' outcomes are known (`stream_outcomes`: its job order, each
    sector's outcome)."""
    _check_packable(trace.ptr, slots)
    packed = _checked(*_packed_in_order(np.asarray(order, dtype=np.int64), trace.server, trace.warp, trace.ptr,
                                        slots))
    return _count(trace, packed, slots, models, counter, np.asarray(outcome, dtype=np.int8), 0, _NO_L2,
                  LruList(1, 1), holders)


def hot_requests(trace, packed, slots: int, counter) -> np.ndarray:
    """Each warp slot's requests to the launch's hottest sector (`_hot_requests`; `counter` as there)."""
    hot = np.zeros(slots)
    _hot_requests(packed, trace.server, trace.warp, trace.ptr, trace.sectors, slots, counter, hot)
    return hot


def _count(trace, packed, slots: int, models, counter, outcome, block_shift: int, l2, rows, holders, hot=None):
    """`_launch_pass` and, with latency tables, `_hot_requests` into fresh outputs: (counts, per model
    (jobs, sectors, waiting, waited, hot)). The two run at once on a launch of `BESIDE_SECTORS` or more
    when this process may use two CPUs. `holders`: the L2 partitions' copies (`_launch_pass`); `hot`: the
    hottest sector's requests per slot, where the caller has them (`hot_requests`)."""
    latency = np.array([model.latency_ns for model in models]).reshape(len(models), 3, _LATENCY_SECTORS)
    far = np.array([model.far_ns for model in models]).reshape(len(models), _LATENCY_SECTORS)
    counts = np.zeros((6, len(SERVER_FIELDS)), dtype=np.int64)
    jobs = np.zeros(slots)
    by_outcome = np.zeros((3, slots))
    waiting, waited = np.zeros((len(models), 3, slots)), np.zeros((len(models), 3, slots))
    hot_count = nullcontext()
    if hot is None:
        hot = np.zeros(slots)
        hot_args = (packed, trace.server, trace.warp, trace.ptr, trace.sectors, slots, counter, hot)
        if models:
            hot_count = beside(_hot_requests, hot_args, trace.sectors.size >= BESIDE_SECTORS)
    with hot_count:
        _launch_pass(packed, trace.sectors, latency, far, outcome, block_shift, *l2, holders, rows.arrays, counts, jobs,
                     by_outcome, waiting, waited)
    return counts, [(jobs, by_outcome, waiting[m], waited[m], hot) for m in range(len(models))]


class LaunchScratch:
    """What a launch pass uses and hands back as it found it, kept from launch to launch so that no launch
    allocates and clears it again: the request counter (zero, one int32 per sector id), the row
    buffers (`LruList`, emptied at the end of every pass) and the interleaved jobs (`packed_for`), whose
    room `buffer` keeps (the job buffer of the launches, which a prediction takes from `kernels.spare_buffer`
    and hands back)."""

    def __init__(self, layout, profile, buffer: JobBuffer | None = None):
        self.counter = np.zeros(layout.total_sectors, dtype=np.int32)
        self.rows = LruList(layout.total_sectors // (profile.dram_block_bytes // SECTOR_BYTES) + 1,
                            profile.row_buffers)
        self.buffer = buffer if buffer is not None else JobBuffer(0, 0)

    def packed_for(self, jobs: int) -> np.ndarray:
        """Room for a launch's `jobs` packed jobs, the last launch's memory where it is large enough (its
        pages are faulted in already)."""
        return self.buffer.packed_for(jobs)


def simulate_launch_loads(trace, layout, profile, l2_model: str = "setassoc", l2_state: SetAssocState | None = None,
                          models=(), scratch: LaunchScratch | None = None, orders=None):
    """`simulate_launch`'s counts and misses, and for each critical-path model in `models` the per-slot
    loads of `slot_loads_by_class`: (jobs, sectors, waiting, waited, hot).

    With the set-associative L2 of the GPU kind (a cold one when `l2_state` is None) one pass takes each
    sector through the L2 and row buffers as it counts it (`_launch_pass`); with the LRU model or another
    geometry the stream is simulated whole first (`stream_outcomes`). `scratch`: the prediction's, else
    a new one; `orders`: as `pass_through_l2`'s. A profile with [l2_partitions] has each access follow the
    L2's partitions too (the state's `holders`; the LRU model starts each launch with no copies)."""
    slots = launch_slots(trace.warps, profile.physical_warps)
    scratch = scratch if scratch is not None else LaunchScratch(layout, profile)
    if l2_model == "setassoc" and l2_state is None:
        l2_state = SetAssocState(l2_geometry(profile), layout.total_sectors)
    holders = _NO_HOLDERS
    if getattr(profile, "l2_partitions", None) is not None:
        holders = l2_state.follow_partitions() if l2_state is not None else np.zeros(layout.total_sectors, np.uint8)
    if l2_model == "setassoc" and l2_state.filled:  # every access hits: no lookups, no row buffers
        packed = _jobs_in_order(trace, slots, scratch, orders)
        counts, loads = _count(trace, packed, slots, models, scratch.counter, np.zeros(trace.sectors.size, np.int8),
                               0, _NO_L2, scratch.rows, holders, _kept_hot(orders, slots, scratch, models))
        return counts, None, loads
    if l2_model != "setassoc" or not l2_state.small:
        (order, _, outcome), misses_at = stream_outcomes(trace, layout, profile, l2_model, l2_state)
        counts, loads = _count_outcomes(trace, order, outcome, slots, models, scratch.counter, holders)
        return counts, misses_at, loads
    sectors_per_block = profile.dram_block_bytes // SECTOR_BYTES
    if sectors_per_block & (sectors_per_block - 1):
        raise ValueError(f"a DRAM block of {profile.dram_block_bytes} B is not a power of two of sectors")
    l2 = (small_constants(l2_state.geometry, l2_state.shift), l2_state.valid, l2_state.tags, l2_state.order)
    packed = _jobs_in_order(trace, slots, scratch, orders)
    counts, loads = _count(trace, packed, slots, models, scratch.counter, np.zeros(0, dtype=np.int8),
                           sectors_per_block.bit_length() - 1, l2, scratch.rows, holders,
                           _kept_hot(orders, slots, scratch, models))
    return counts, None, loads


def slot_loads_by_class(trace, outcomes, physical_warps: int, model, counter, holders=_NO_HOLDERS):
    """Per slot of one launch, from its stream's outcomes (`stream_outcomes`: the job order, the stream, each
    sector's outcome): (jobs, sectors per outcome, waiting, waited, hot), the loads' jobs and summed latency
    split by the outcome each waits for. `counter`: zeros, one int32 per sector id (`LaunchScratch`);
    `holders`: the L2 partitions' copies, followed and left as the launch leaves them (none: one partition)."""
    order, _, outcome = outcomes
    return _count_outcomes(trace, order, outcome, launch_slots(trace.warps, physical_warps), [model], counter,
                           holders)[1][0]


def slot_loads(trace, outcomes, physical_warps: int, model, counter):
    """Per slot of one launch: jobs, sectors per outcome, summed load latency, hot-sector requests."""
    jobs, sectors, _, waited, hot = slot_loads_by_class(trace, outcomes, physical_warps, model, counter)
    return jobs, sectors, waited.sum(axis=0), hot
