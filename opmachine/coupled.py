"""Predicted time of seed 001's coupled BFS, launch by launch (the couplings of `simdmodel.couplings`).

The model runs the coupled BFS (`coupled_launches`), and each launch's work becomes its kernel's jobs
(`kernels.couple`) on the coupled kernels' arrays (`layout.COUPLED_LAYOUT`). The jobs go through the
set-associative L2, warm from launch to launch (a timed BFS's launches run back to back), and the row
buffers; a launch's time is the critical-path time (`critical.launch_time`, as for the other data-driven
kernels) of its loads, of its warps' instructions from the kernels' SASS (`launch_instructions`; the
package lists the default `atomic` lookup's kernels), of the atomics on its queue counter, which every
reserving CTA or warp adds to (`counter_atomics`: the profile's same-word atomic time, served by the word's
slice after its share of the sectors that reach the L2, `l2_sectors`; each atomic also holds its warp longer
than a load, `atomic_wait_ns`), and of its bitmask
lookups, whose byte stores hold up the reads of the bytes they store into (`bitmask_lookup_ns`: the
profile's measured rate for the bitmask's size and the launch's write fraction), plus the profile's
launch overhead.

What it leaves out, so that its errors can be read: the lookup's flags are the model's (`simdmodel.lookup`'s
wave rule: lanes of one wave that find a vertex unvisited all try its compare-and-swap); on the GPU the
atomic lookup's bitmask reads through the L1 see the bytes of when their SM fetched the line, so on
scale-free graphs (a hub's byte read by every SM) its label reads and bitmask stores are up to four times
the model's (the results README has the counts), and those launches' times are short by as much.
The bitmask reads that the SMs' L1s serve (`l1_hits`, `cache.l1`, within a few points of Nsight Compute's hit
rates) are taken out of what reaches the counter's slice, but still go to the L2 model's own server: served
from the L1 alone they leave the contractions 10-14% too fast, what else holds those up being not modelled.
Other lookup modes have no listings, so their launches are timed without the instruction path. The first
launch finds in the L2 what the GPU's run writes before it (`CoupledPredictor.reset`: the labels, the bitmask,
the source's queue entry, the counters) and nothing else: what the run before it left there (the timed replays
follow a warm-up run) is not followed. The queue order is the model's (the GPU's atomic counters order CTAs'
blocks as they come).
"""
from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from simdmodel.couplings import Coupling, LaunchWork, QueueTurns, coupled_launches
from simdmodel.lookup import KEPT, MASK_READ, MASK_WRITE

from .cache import SetAssocState
from .cache.l1 import CACHED, DROP, NONE, PASS, l1_hits
from .critical import CriticalPathModel, launch_slots, launch_time, slot_instructions
from .instructions import WarpInstructions, arch_of, coupled_trips, has_listing, kernel_code, trip_matrix
from .kernels import ANI, DEFAULT_BLOCK, EDL, ERL, NF1, NF2, OP, SERVER_FIELDS, JobBuffer
from .kernels.couple import (CONTRACT_ITEMS, CTA_SIZE, CTA_WARPS, LaunchShape, coupled_jobs, launch_shape,
                             listing_name)
from .layout import PIECE_COUNT, QUEUE_SIZE, coupled_layout_for
from .memory import LaunchScratch, l2_geometry, simulate_launch_loads
from .predict import INSTRUCTION_COLUMNS
from .store_flush import store_flush_ns, storing_blocks, stores_per_warp

L1_LINE_SECTORS = 4  # spec: an SM's L1 has 128-byte lines of four 32-byte sectors (Volta .. Hopper)

TIME_COLUMNS = ("grid", "jobs", "l1_sectors", "l1_hits", "l2_sectors", "l2_hits", "dram_sectors", "inst_executed",
                "shared_ld_inst", "shared_st_inst", "alu_pipe_inst", "memory_ns", "fixed_ns", "store_flush_ns",
                "predicted_ns", "bottleneck")
"""What `predict_coupled_bfs` adds to each launch of `coupled_launches`: its CTAs, jobs, its load sectors at
the SMs' L1s and the bitmask reads they serve (`CoupledPredictor.l1_counts`), its L2 and DRAM sectors, warp
instructions, shared-memory loads and stores and ALU-pipe instructions (NaN without a listing), the
critical-path time of its jobs and instructions, the launch overhead, what its storing blocks add at its
end ([store_flush], `opmachine.store_flush`), their sum and the bottleneck."""


class _QueueSlots:
    """The layout arrays (`layout.COUPLED_LAYOUT`) of the queues each launch reads and writes
    (`simdmodel.couplings.QueueTurns`); a `pieces` launch reads none."""

    def __init__(self):
        self.turns = QueueTurns()

    @staticmethod
    def name(queue) -> str:
        kind, index = queue
        return f"{kind}_queue" + ("_next" if index else "")

    def step(self, phase: str) -> tuple[str | None, str]:
        into, out = self.turns.step(phase)
        return None if phase == "pieces" else self.name(into), self.name(out)


class CoupledPredictor:
    """The predicted time of one coupled BFS, launch by launch, as `coupled_launches` runs it: pass `observe`
    as its `observe` (with `grid` and `resident_threads` as its own), then `times()` has a row of
    TIME_COLUMNS per launch. It starts from the L2 the GPU's run starts from (`reset`)."""

    def __init__(self, graph, coupling: Coupling, profile, bitmask_l1: bool = True, l1_counts: bool = False):
        self.graph, self.profile = graph, profile
        self.bitmask_l1 = bitmask_l1 and coupling.mode == "atomic"  # the other lookup modes read it with .cg
        self.l1_counts_wanted = l1_counts
        self.grid = profile.full_wave_grid(DEFAULT_BLOCK)
        self.resident_threads = self.grid * DEFAULT_BLOCK
        self.layout = coupled_layout_for(graph.n, graph.m)
        self.state = SetAssocState(l2_geometry(profile), self.layout.total_sectors)
        self.critical = CriticalPathModel.from_profile(profile)
        self.buffer = JobBuffer(0, 0)
        self.scratch = LaunchScratch(self.layout, profile, self.buffer)
        self.arch = arch_of(profile) if coupling.mode == "atomic" else None
        self.queues = _QueueSlots()
        self.rows: list[dict] = []
        self.enqueued = 0  # survivors a launch has put in its output vertex queue (a fused lookup's pieces add to it)
        self.reset()

    def reset(self) -> None:
        """Write into the L2 what the GPU's run writes before its first launch (`GpuCoupledBfs._reset`): the
        labels, the bitmask, the source's entry of the first vertex queue and the counters, in that order, into
        the otherwise empty L2 (what earlier runs left is not followed). A timed run finds them there: no flush
        comes between. A write leaves no partition's copy (`SetAssocState.written`)."""
        layout, n = self.layout, self.graph.n
        written = np.concatenate([layout.array_sectors("level", n), layout.array_sectors("bitmask", -(-n // 32)),
                                  layout.array_sectors(_QueueSlots.name(("vertex", 0)), 1),
                                  layout.array_sectors("counters", PIECE_COUNT + 1)])
        self.state.hits(written)
        self.state.written(written)

    def observe(self, work: LaunchWork) -> None:
        """Simulate and time one launch (`coupled_launches` calls it as the launch runs)."""
        graph, profile, layout, critical = self.graph, self.profile, self.layout, self.critical
        shape = launch_shape(graph, work)
        grid = shape.grid(self.grid)
        queue_in, queue_out = self.queues.step(work.phase)
        start = self.enqueued if work.phase == "pieces" else 0
        trace = coupled_jobs(graph, work, layout, grid, queue_in, queue_out, start, self.buffer, shape)
        first = first_sectors(trace)
        atomics = {element: counter_jobs(trace, layout, element, first) for element in (QUEUE_SIZE, PIECE_COUNT)}
        claims = claim_jobs(trace)
        bitstores = bitmask_store_jobs(trace, layout, first)
        counts, _, loads = simulate_launch_loads(trace, layout, profile, "setassoc", self.state, [critical],
                                                 self.scratch)
        jobs, sectors, _, waited, hot = loads[0]
        instructions = launch_instructions(work, shape, self.arch, trace, atomics[QUEUE_SIZE], bitstores, claims)
        path = None if instructions is None else slot_instructions(instructions, trace.warps, profile.physical_warps,
                                                                    critical)
        latency = waited.sum(axis=0) + atomic_wait_ns(trace, atomics.values(), profile, claims)
        mask_ns = bitmask_lookup_ns(trace, work.flags, graph.n, profile, work.atomic_or)
        on_counter = counter_atomics(trace, atomics.values(), profile.physical_warps)

        def timed(slice_sectors=None):
            return launch_time(jobs, sectors, latency, hot, critical, path, on_counter, mask_ns, slice_sectors)

        # The time rises with what reaches the counter's slice: where every sector and none give the same time,
        # so does any share between them, and the L1 need not be followed for the time.
        every = timed()
        hits, l1 = None, {"l1_sectors": np.nan, "l1_hits": np.nan}
        if self.l1_counts_wanted or every != timed(np.zeros_like(jobs)):
            hits, l1 = self.l1_counts(trace, shape.phase, atomics.values(), claims, bitstores)
        memory_ns, bottleneck = every if hits is None else timed(l2_sectors(trace, sectors, hits))
        fields = dict(zip(SERVER_FIELDS, counts.sum(axis=0)))
        if work.flags.size and work.phase != "contract-expand":
            self.enqueued = start + int(np.count_nonzero(work.flags & KEPT))
        fixed = float(profile.launch_overhead_ns)
        flush = store_flush_ns(profile, storing_blocks(stores_per_warp(trace), DEFAULT_BLOCK))
        self.rows.append({"grid": grid, "jobs": int(fields["jobs"]), **l1, "l2_sectors": int(fields["l2_sectors"]),
                          "l2_hits": int(fields["l2_hits"]), "dram_sectors": int(fields["dram_sectors"]),
                          **(dict.fromkeys(INSTRUCTION_COLUMNS, np.nan)
                             if instructions is None else instructions.totals()),
                          "memory_ns": memory_ns, "fixed_ns": fixed, "store_flush_ns": flush,
                          "predicted_ns": memory_ns + fixed + flush, "bottleneck": bottleneck})

    def l1_counts(self, trace, phase: str, on_counters, claims: np.ndarray,
                  bitstores: np.ndarray) -> tuple[np.ndarray | None, dict]:
        """Which of a launch's sector entries its SMs' L1s serve (`cache.l1`, the kernel's L1 from the profile's
        `[l1_carveout]`; the jobs' roles from `l1_kinds`), None where the build reads the bitmask from the L2 only
        or the profile has no carve-outs; and its load sectors at the L1s and the hits among them, NaN unless
        asked for or where the hits are None. The L2 model still sees every sector; the hits only leave what
        reaches the counter's slice (`l2_sectors`)."""
        profile = self.profile
        carveout = getattr(profile, "l1_carveout", None)
        if carveout is None or not self.bitmask_l1:
            return None, {"l1_sectors": np.nan, "l1_hits": np.nan}
        kinds = l1_kinds(trace, on_counters, claims, bitstores)
        lines = carveout.l1_lines(phase, profile.l1_bytes, L1_LINE_SECTORS * profile.sector_bytes)
        hits = np.zeros(trace.sectors.size, dtype=np.bool_)  # a carve-out that leaves no L1 serves nothing
        if lines:
            sm = (trace.warp // CTA_WARPS) % profile.sms
            hits = l1_hits(sm, kinds, trace.ptr, trace.sectors, profile.sms, lines, L1_LINE_SECTORS)
        if not self.l1_counts_wanted:
            return hits, {"l1_sectors": np.nan, "l1_hits": np.nan}
        loads = (kinds == CACHED) | (kinds == PASS)
        return hits, {"l1_sectors": int(np.diff(trace.ptr)[loads].sum()), "l1_hits": int(hits.sum())}

    def times(self) -> pd.DataFrame:
        """One row of TIME_COLUMNS per launch observed."""
        return pd.DataFrame(self.rows, columns=list(TIME_COLUMNS))


def predict_coupled_bfs(graph, source: int, coupling: Coupling, profile, claim: bool = True,
                        spread: bool = True, bitmask_l1: bool = True, l1_counts: bool = False) -> pd.DataFrame:
    """Every launch of `coupling`'s BFS from `source` on `profile`'s GPU (the set-up excepted): its row of
    `coupled_launches` and its predicted time (TIME_COLUMNS); QueueOverflow where a queue would outgrow
    its slots. `claim`: the GPU's claim build, its default (only the claiming lane sets its bitmask bit, with an
    atomic OR at the L2). It makes no byte stores into the bitmask, so its lookups are bound by the `[bitmask]`
    rate measured with atomic ORs (`per_ns_or`; `LaunchWork.atomic_or`), not the byte stores' (none where the
    profile lacks it). Without `claim`, the plain build (every lane that finds its bit unset stores the byte; its
    instructions are counted from the claim build's listing, which differs in that one store). `spread`: small
    launches leave lists longer than a warp as pieces (`simdmodel.couplings.big_list`). `bitmask_l1`: the build
    reads the bitmask through the SMs' L1s (the default; else from the L2 only), whose hits are then followed
    (`CoupledPredictor.l1_counts`; about 0.1 s a lookup launch of 10 M sectors); `l1_counts`: fill `l1_sectors`
    and `l1_hits` with them."""
    predictor = CoupledPredictor(graph, coupling, profile, bitmask_l1, l1_counts)
    table = coupled_launches(graph, int(source), coupling, predictor.grid, predictor.resident_threads,
                             observe=predictor.observe, claim=claim, spread=spread)
    table = table[table["phase"] != "setup"].reset_index(drop=True)
    return pd.concat([table, predictor.times()], axis=1)


def l2_sectors(trace, sectors: np.ndarray, hits: np.ndarray | None) -> np.ndarray:
    """Per warp slot, the sectors of a coupled launch that reach the L2: all of them (`sectors`, per outcome x
    slot, as `memory.slot_loads_by_class` counts them) less the L1's hits (`hits`, per sector entry of the
    trace, `CoupledPredictor.l1_counts`; None: none). The slice that owns the queue counter serves its share of
    them before the counter's atomics (`critical.launch_time`'s `slice_sectors`)."""
    total = sectors.sum(axis=0)
    if hits is None:
        return total
    return total - _hits_per_slot(trace.warp, trace.ptr, hits, total.size)


@numba.njit(cache=True, nogil=True)
def _hits_per_slot(warp, ptr, hits, slots):
    """Per warp slot (launched warp w on slot w mod slots), the sector entries of its jobs that `hits` marks."""
    out = np.zeros(slots)
    for j in range(warp.size):
        for p in range(ptr[j], ptr[j + 1]):
            if hits[p]:
                out[warp[j] % slots] += 1.0
    return out


def l1_kinds(trace, on_counters, claims: np.ndarray, bitstores: np.ndarray) -> np.ndarray:
    """What each job of a coupled launch does at its SM's L1 (`cache.l1`): its bitmask reads (NF1) are cached,
    its other loads (the `.cg` reads of queues, row offsets, columns and labels) pass it, its bitmask stores
    (`bitstores`, `bitmask_store_jobs`: the claim build's atomic ORs) drop their line; the atomics on the
    counters (`on_counters`: each counter's `counter_jobs`), the label claims (`claims`, `claim_jobs`) and the
    other stores do nothing there."""
    kinds = np.full(trace.jobs, NONE, dtype=np.int8)
    counters = np.logical_or.reduce(list(on_counters))
    kinds[np.isin(trace.server, (ANI, ERL, EDL)) & ~counters] = PASS
    kinds[(trace.server == NF2) & ~claims] = PASS
    kinds[trace.server == NF1] = CACHED
    kinds[bitstores] = DROP
    return kinds


def first_sectors(trace) -> np.ndarray:
    """Each job's first sector (-1 for a job of none): what `counter_jobs` and `bitmask_store_jobs` test, found
    once a launch."""
    first = np.full(trace.jobs, -1, dtype=np.int64)
    has = np.diff(trace.ptr) > 0
    first[has] = trace.sectors[trace.ptr[:-1][has]]
    return first


def counter_jobs(trace, layout, element: int, first: np.ndarray | None = None) -> np.ndarray:
    """Which jobs of a coupled launch are atomics on counter `element` (`layout.QUEUE_SIZE`, `PIECE_COUNT`):
    the jobs of the one sector that holds it (only atomics touch the counters); `first`: the launch's
    `first_sectors`, found here when not given."""
    first = first_sectors(trace) if first is None else first
    return (np.diff(trace.ptr) == 1) & (first == layout.sector_of("counters", element))


def bitmask_store_jobs(trace, layout, first: np.ndarray | None = None) -> np.ndarray:
    """Which jobs of a coupled launch store into the bitmask (byte stores, or the claim build's atomic ORs):
    its OP jobs on the bitmask's sectors, one per lookup instruction with a storing lane (`kernels.couple`);
    `first`: the launch's `first_sectors`, found here when not given."""
    first = first_sectors(trace) if first is None else first
    base = layout.base_sector["bitmask"]
    end = layout.sector_of("bitmask", -(-layout.n // 32) - 1) + 1
    return (trace.server == OP) & (first >= base) & (first < end)


def counter_atomics(trace, on_counters, physical_warps: int) -> np.ndarray:
    """Per warp slot (`critical.launch_slots`), the launch's atomics on its busier counter (`on_counters`: each
    counter's `counter_jobs`): every CTA or warp that reserves slots adds to the same word, so the slice that
    owns it serves them one after another."""
    slots = launch_slots(trace.warps, physical_warps)
    counts = [np.bincount(trace.warp[jobs] % slots, minlength=slots) for jobs in on_counters]
    return max(counts, key=lambda c: c.sum()).astype(np.float64)


def claim_jobs(trace) -> np.ndarray:
    """Which jobs of a coupled launch are compare-and-swap claims: an NF2 job right after an NF2 job of the same
    warp (`kernels.couple` pushes a lookup instruction's label reads, then its claims)."""
    after = np.zeros(trace.jobs, dtype=bool)
    after[1:] = (trace.server[1:] == NF2) & (trace.server[:-1] == NF2) & (trace.warp[1:] == trace.warp[:-1])
    return after


def atomic_wait_ns(trace, on_counters, profile, claims=None) -> np.ndarray | float:
    """Per warp slot (`critical.launch_slots`), how much longer a coupled launch's atomics hold their warps than
    loads of as many sectors: its claims (`claims`, `claim_jobs` when not given) and its atomics on the counters
    (`on_counters`: each counter's `counter_jobs`), each `[atomic_latency].extra_ns(sectors)`; 0 without that
    section."""
    latency = getattr(profile, "atomic_latency", None)
    if latency is None:
        return 0.0
    atomic = (claim_jobs(trace) if claims is None else claims).copy()
    for jobs in on_counters:
        atomic |= jobs
    slots = launch_slots(trace.warps, profile.physical_warps)
    which = np.flatnonzero(atomic)
    sectors = trace.ptr[which + 1] - trace.ptr[which]
    return np.bincount(trace.warp[which] % slots, weights=latency.extra_ns(sectors), minlength=slots)


def bitmask_lookup_ns(trace, flags: np.ndarray, n: int, profile, atomic_or: bool = False) -> np.ndarray | None:
    """Per warp slot (`critical.launch_slots`), the ns of a coupled launch's bitmask lookups at the GPU-wide
    rate the profile measured (`[bitmask]`) for a bitmask of n / 8 bytes with the launch's fraction of lookups
    storing their byte back (`atomic_or`: setting their bit with an atomic OR, the claim build, at the
    section's `per_ns_or`), shared out by the slots' bitmask reads (NF1 jobs); None without a [bitmask]
    section (or its `per_ns_or`, for `atomic_or`) or a lookup."""
    rates = getattr(profile, "bitmask", None)
    reads = int(np.count_nonzero(flags & MASK_READ)) if flags.size else 0
    if rates is None or reads == 0 or (atomic_or and not rates.per_ns_or):
        return None
    writes = int(np.count_nonzero(flags & MASK_WRITE))
    total_ns = reads / rates.at(max(-(-n // 8), 1), writes / reads, atomic_or)
    slots = launch_slots(trace.warps, profile.physical_warps)
    per_slot = np.bincount(trace.warp[trace.server == NF1] % slots, minlength=slots).astype(np.float64)
    return per_slot * (total_ns / max(per_slot.sum(), 1.0))


def launch_instructions(work: LaunchWork, shape: LaunchShape, arch: str | None, trace,
                        enqueues: np.ndarray, bitstores: np.ndarray, claims: np.ndarray) -> WarpInstructions | None:
    """A coupled launch's warp instructions from its kernel's SASS (`kernels.couple.listing_name`) and its trips
    (`instructions.coupled_trips`; `enqueues`: its jobs that are atomics on the queue counter, a fused
    lookup's enqueues; `bitstores`: its jobs that store into the bitmask, one per lookup instruction with a
    lane that sets its bit, `bitmask_store_jobs`; a lookup instruction's label reads and its compare-and-swaps,
    `claims` from `claim_jobs`, run the regions `probe` and `claim`); None without a listing (another
    architecture, a lookup mode other than the default `atomic`, whose kernels are not listed)."""
    warps = trace.warps
    name = listing_name(shape.phase)
    if arch is None or not has_listing(name, arch):
        return None
    code = kernel_code(name, arch)
    counted = {"enqueue": np.bincount(trace.warp[enqueues], minlength=warps),
               "probe": np.bincount(trace.warp[(trace.server == NF2) & ~claims], minlength=warps),
               "claim": np.bincount(trace.warp[claims], minlength=warps),
               "bitstore": np.bincount(trace.warp[bitstores], minlength=warps)}
    if work.phase == "contract":
        counted["kept"] = _groups_kept(work, warps)
        trips = coupled_trips(work.phase, warps, shape.units, CTA_SIZE, looked_up=shape.input, counted=counted)
    elif work.phase == "pieces":
        trips = coupled_trips(work.phase, warps, shape.units, CTA_SIZE, piece_len=shape.piece_len, counted=counted)
    else:
        trips = coupled_trips(work.phase, warps, shape.units, CTA_SIZE, shape.degrees, shape.unit_ptr, work.big_list,
                              counted=counted)
    return WarpInstructions(trip_matrix(code, trips), code)


def _groups_kept(work: LaunchWork, warps: int) -> np.ndarray:
    """Per launched warp of a contraction, the groups in which one of its lanes kept an id (id i of group
    i // (CONTRACT_ITEMS x C), lane (i mod C) of warp (i mod C) // 32 of CTA group mod slots)."""
    kept = np.flatnonzero(work.flags & KEPT)
    group, warp = kept // (CONTRACT_ITEMS * CTA_SIZE), (kept % CTA_SIZE) // 32
    slots = max(warps // CTA_WARPS, 1)
    pairs = np.unique(group * CTA_WARPS + warp)
    return np.bincount((pairs // CTA_WARPS % slots) * CTA_WARPS + pairs % CTA_WARPS, minlength=warps).astype(np.float64)
