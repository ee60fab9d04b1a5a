"""Predicted time of seed 001's coupled BFS, launch by launch (the couplings of `simdmodel.couplings`).

The model runs the coupled BFS (`coupled_launches`), and each launch's work becomes its kernel's jobs
(`kernels.couple`) on the coupled kernels' arrays (`layout.COUPLED_LAYOUT`). The jobs go through the
set-associative L2, warm from launch to launch (a timed BFS's launches run back to back), and the row
buffers; a launch's time is the critical-path time (`critical.launch_time`, as for the other data-driven
kernels) of its loads, of its warps' instructions from the kernels' SASS (`launch_instructions`; the
package lists the default `atomic` lookup's kernels) and of the atomics on its queue counter, which every
reserving CTA or warp adds to (`counter_atomics`: the profile's same-word atomic time), plus the
profile's launch overhead.

What it leaves out, so that its errors can be read: the lookup's flags are the model's (`simdmodel.lookup`'s
wave rule: lanes of one wave that find a vertex unvisited all try its compare-and-swap); on the GPU the
atomic lookup's bitmask reads through the L1 may see older bytes. No L2 slice queues: a hub's bitmask
bytes and labels take tens of thousands of requests in one launch of a scale-free graph, whose loads then
wait far longer than the one-warp latencies charged (the results README has Nsight Compute's account).
Other lookup modes have no listings, so their launches are timed without the instruction path. The first launch finds a cold L2 (the GPU's timed replays follow a
warm-up run). The queue order is the model's (the GPU's atomic counters order CTAs' blocks as they come).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from simdmodel.couplings import Coupling, LaunchWork, coupled_launches
from simdmodel.lookup import KEPT

from .cache import SetAssocState
from .critical import CriticalPathModel, launch_slots, launch_time, slot_instructions
from .instructions import WarpInstructions, arch_of, coupled_trips, has_listing, kernel_code, trip_matrix
from .kernels import DEFAULT_BLOCK, SERVER_FIELDS, JobBuffer
from .kernels.couple import (BIG_LIST, CONTRACT_ITEMS, CTA_SIZE, CTA_WARPS, coupled_jobs, gather_units, launch_grid,
                             launch_units, listing_name, listing_phase, piece_lengths)
from .layout import PIECE_COUNT, QUEUE_SIZE, coupled_layout_for
from .memory import LaunchScratch, l2_geometry, simulate_launch_loads

TIME_COLUMNS = ("grid", "jobs", "l2_sectors", "l2_hits", "dram_sectors", "inst_executed", "shared_ld_inst",
                "shared_st_inst", "memory_ns", "fixed_ns", "predicted_ns", "bottleneck")
"""What `predict_coupled_bfs` adds to each launch of `coupled_launches`: its CTAs, jobs and sectors, warp
instructions and shared-memory loads and stores (NaN without a listing), the critical-path time of its jobs and instructions, the launch
overhead, their sum and the bottleneck."""


class _QueueSlots:
    """Which of the two vertex and two edge queues a launch reads and writes (`gpu_validate.couplings`): an
    output goes to its kind's other queue when the input is of its kind, else to the one its kind last used;
    a `pieces` launch reads nothing and writes into the expanding launch's output."""

    def __init__(self):
        self.slot = {"vertex": 0, "edge": 0}
        self.current = ("vertex", 0)  # the source's queue

    @staticmethod
    def name(queue) -> str:
        kind, index = queue
        return f"{kind}_queue" + ("_next" if index else "")

    def step(self, phase: str) -> tuple[str | None, str]:
        if phase == "pieces":
            return None, self.name(self.current)
        kind = "edge" if phase in ("expand", "contract-expand") else "vertex"
        if kind == self.current[0]:
            self.slot[kind] = 1 - self.slot[kind]
        into, self.current = self.current, (kind, self.slot[kind])
        return self.name(into), self.name(self.current)


def predict_coupled_bfs(graph, source: int, coupling: Coupling, profile) -> pd.DataFrame:
    """Every launch of `coupling`'s BFS from `source` on `profile`'s GPU (the set-up excepted): its row of
    `coupled_launches` and its predicted time (TIME_COLUMNS); QueueOverflow where a queue would outgrow
    its slots."""
    full_wave = profile.full_wave_grid(DEFAULT_BLOCK)
    layout = coupled_layout_for(graph.n, graph.m)
    state = SetAssocState(l2_geometry(profile), layout.total_sectors)
    critical = CriticalPathModel.from_profile(profile)
    scratch = LaunchScratch(layout, profile)
    buffer = JobBuffer(0, 0)
    arch = arch_of(profile) if coupling.mode == "atomic" else None
    queues = _QueueSlots()
    rows = []
    enqueued = 0  # survivors a launch has put in its output vertex queue (a fused lookup's pieces add to it)

    def observe(work: LaunchWork) -> None:
        nonlocal enqueued
        grid = launch_grid(graph, work, full_wave)
        queue_in, queue_out = queues.step(work.phase)
        start = enqueued if work.phase == "pieces" else 0
        trace = coupled_jobs(graph, work, layout, grid, queue_in, queue_out, start, buffer)
        counts, _, loads = simulate_launch_loads(trace, layout, profile, "setassoc", state, [critical], scratch)
        jobs, sectors, _, waited, hot = loads[0]
        instructions = launch_instructions(graph, work, arch, trace, layout)
        path = None if instructions is None else slot_instructions(instructions, trace.warps, profile.physical_warps,
                                                                    critical)
        memory_ns, bottleneck = launch_time(jobs, sectors, waited.sum(axis=0), hot, critical, path,
                                            counter_atomics(trace, layout, profile.physical_warps))
        fields = dict(zip(SERVER_FIELDS, counts.sum(axis=0)))
        if work.flags.size and work.phase != "contract-expand":
            enqueued = start + int(np.count_nonzero(work.flags & KEPT))
        fixed = float(profile.launch_overhead_ns)
        rows.append({"grid": grid, "jobs": int(fields["jobs"]), "l2_sectors": int(fields["l2_sectors"]),
                     "l2_hits": int(fields["l2_hits"]), "dram_sectors": int(fields["dram_sectors"]),
                     **(dict.fromkeys(("inst_executed", "shared_ld_inst", "shared_st_inst"), np.nan)
                        if instructions is None else instructions.totals()),
                     "memory_ns": memory_ns, "fixed_ns": fixed, "predicted_ns": memory_ns + fixed,
                     "bottleneck": bottleneck})

    table = coupled_launches(graph, int(source), coupling, full_wave, full_wave * DEFAULT_BLOCK, observe=observe)
    table = table[table["phase"] != "setup"].reset_index(drop=True)
    return pd.concat([table, pd.DataFrame(rows, columns=list(TIME_COLUMNS))], axis=1)


def counter_jobs(trace, layout, element: int) -> np.ndarray:
    """Which jobs of a coupled launch are atomics on counter `element` (`layout.QUEUE_SIZE`, `PIECE_COUNT`):
    the jobs of the one sector that holds it (only atomics touch the counters)."""
    single = np.diff(trace.ptr) == 1
    single[single] = trace.sectors[trace.ptr[:-1][single]] == layout.sector_of("counters", element)
    return single


def counter_atomics(trace, layout, physical_warps: int) -> np.ndarray:
    """Per warp slot (`critical.launch_slots`), the launch's atomics on its busier counter (the output queue's
    size or the pieces' count, `layout.COUPLED_LAYOUT`): every CTA or warp that reserves slots adds to the
    same word, so the slice that owns it serves them one after another."""
    slots = launch_slots(trace.warps, physical_warps)
    counts = [np.bincount(trace.warp[counter_jobs(trace, layout, element)] % slots, minlength=slots)
              for element in (QUEUE_SIZE, PIECE_COUNT)]
    return max(counts, key=lambda c: c.sum()).astype(np.float64)


def launch_instructions(graph, work: LaunchWork, arch: str | None, trace, layout) -> WarpInstructions | None:
    """A coupled launch's warp instructions from its kernel's SASS (`kernels.couple.listing_name`) and its trips
    (`instructions.coupled_trips`; a fused lookup's enqueues are its jobs' atomics on the queue counter);
    None without a listing (another architecture, a lookup mode other than the default `atomic`, whose
    kernels are not listed)."""
    warps = trace.warps
    name = listing_name(listing_phase(work))
    if arch is None or not has_listing(name, arch):
        return None
    code = kernel_code(name, arch)
    units = launch_units(graph, work)
    counted = {"enqueue": np.bincount(trace.warp[counter_jobs(trace, layout, QUEUE_SIZE)], minlength=warps)}
    if work.phase == "contract":
        counted["kept"] = _groups_kept(work, warps)
        trips = coupled_trips(work.phase, warps, units, CTA_SIZE, looked_up=work.looked_up.size, counted=counted)
    elif work.phase == "pieces":
        trips = coupled_trips(work.phase, warps, units, CTA_SIZE, piece_len=piece_lengths(graph, work)[1],
                              counted=counted)
    else:
        degrees, unit_ptr = gather_units(graph, work)
        trips = coupled_trips(work.phase, warps, units, CTA_SIZE, degrees, unit_ptr, BIG_LIST, counted=counted)
    return WarpInstructions(trip_matrix(code, trips), code)


def _groups_kept(work: LaunchWork, warps: int) -> np.ndarray:
    """Per launched warp of a contraction, the groups in which one of its lanes kept an id (id i of group
    i // (CONTRACT_ITEMS x C), lane (i mod C) of warp (i mod C) // 32 of CTA group mod slots)."""
    kept = np.flatnonzero(work.flags & KEPT)
    group, warp = kept // (CONTRACT_ITEMS * CTA_SIZE), (kept % CTA_SIZE) // 32
    slots = max(warps // CTA_WARPS, 1)
    pairs = np.unique(group * CTA_WARPS + warp)
    return np.bincount((pairs // CTA_WARPS % slots) * CTA_WARPS + pairs % CTA_WARPS, minlength=warps).astype(np.float64)
