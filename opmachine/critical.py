"""Time of one launch that follows the load as warps finish: a bulk phase, then a latency-bound tail.

Eq. 4 of seed 003 gives a launch one load, n = N_G / W_max, and charges every job the bottleneck
server's S(m). On a skewed frontier one warp runs tens of thousands of jobs while the others end
early, so the launch is a short phase at full load and a long tail in which a few warps run alone,
each job waiting for its own memory latency; Eq. 4 then charges those jobs the slowest server's
S(1) (a DRAM row miss) even when they are L2 hits. This model keeps the counts and service curves
and follows the load through the launch (a fluid model of the physical warp slots):

- launched warp w runs on slot w mod physical_warps (as for W_max); sort the slots by jobs run. Between
  the k-th and the next distinct job count, n_k slots are active and each runs dw_k more jobs;
- a job then takes R(n_k) = max(latency, n_k x D), the asymptotic bounds of operational analysis:
  - latency: the mean over the active slots' jobs of a job's latency. A load waits for its slowest
    sector class (L2 hit, row-buffer hit, row-buffer miss), at that class's one-warp latency for
    its sector count m, m x S_one_warp(m) (S(1) where the profile has no one-warp curve). A store
    does not hold its warp, so it adds nothing. With [l2_partitions] an L2 hit's latency is the
    profile's `near_ns` at m, or `far_ns` when a hit of the load is on a sector that its SM's L2
    partition does not hold (`opmachine.cache.partitions`, followed by the launch pass);
  - D = max over servers of V_i x S_i(peak): the sectors per job at the server times its best rate
    (the curve's last sample). Every sector passes through the L2's slices, a miss too (it is
    looked up there and filled from DRAM), so the L2 server's visits are all of a job's sectors, the
    DRAM servers' only their own. Where the profile's `[memory_mix]` measured that launches mixing the
    DRAM's classes (row-buffer hits, row-buffer misses, stores beyond the L2) take about the sum of their
    times alone (`MemoryMix.dram_classes_add`), the row-buffer servers do not work side by side: the DRAM's
    demand is then the sum over them of its sectors per job times their peak service times, named for the
    one with the larger share (the L2 stays a server of its own). One more server is the hot sector: all
    requests to the launch's most requested sector are served by one L2 slice (the profile's `l2_same`
    curve), such as the `num_nodes` word every warp re-reads each step;
- the instruction path (`opmachine.instructions`, counted from the kernel's SASS) joins both bounds:
  a warp's own latency per job gains its instructions' scheduled stall cycles plus the measured
  latency of the shared loads, shuffles and barriers it waits on (the one-warp load latencies lose
  the cycles the microbenchmark's chase spends issuing its own instructions, `_chase_issue_ns`, so
  no instruction is charged twice) (`[instructions]` of the profile;
  without it only the compiled stalls), and D gains the issue server (warp instructions per job x
  one GPU-wide issue slot: clock x 4 schedulers per SM x SMs), and, when measured, the ALU pipe
  (`ALU`: its instructions per job, `instructions.ALU_PIPE`, x one GPU-wide ALU slot at the profile's
  `alu_per_cycle`, half the issue rate on Hopper) and the shared-memory server (shared accesses per job x
  its wavefront time);
- atomics on one word (the coupled kernels' queue counters, which every CTA or warp adds to) are
  served one after another by the slice that owns it, after its share of the other sectors that reach the
  L2 (measured: `python -m gpu_validate.atomics`'s `beside_loads`, loads then an atomic take the sum of
  their times, not the larger): D gains the server `L2A`, such atomics per job x the profile's measured
  time of one (`[atomics]`, `opmachine.profile.atomics`; without it no such limit) plus, where there are
  such atomics, the sectors per job that reach the L2 (those the SMs' L1s do not serve, where the caller
  follows the L1s: `slice_sectors`) x the L2's peak time (the slice's share at its share of the rate);
- bitmask lookups that store their byte back (the coupled kernels' status lookups) hold up the reads of
  the bytes they store into: D gains the server `L2W`, the ns of such lookups per job at the GPU-wide rate
  the profile measured for the bitmask's size and the launch's write fraction (`[bitmask]`,
  `opmachine.profile.bitmask`; without it no such limit);
- the issue slots and the ALU pipe are each a scheduler's own (an SM's sub-partitions), shared by the
  few warps it holds (at most 16 on Hopper), not by every warp of the GPU. Where the profile gives the
  schedulers, a job's R(n_k) for them is the exact mean value analysis of one scheduler's closed network
  (Lazowska et al., ch. 6, seed 003's [9]): n_k / schedulers warps (interpolated between whole numbers),
  two queueing stations (the issue slot, the ALU pipe: their demand per job for one scheduler) and a
  delay of the latency less those demands (a lone warp's latency already spends them). It meets both
  bounds at either end (one warp: the latency; many: n_k x the busier station's demand) and lies above
  them near the knee, where warps queue for a slot a bound does not see. The memory servers, which
  thousands of warps share, keep their bound n_k x D; R(n_k) is the larger of the two;
- the launch's time is sum_k dw_k R(n_k); its bottleneck is the server (`ISSUE`, `ALU`, `SHM` for the
  instruction side, `L2A`, `L2W`, or `latency`) that bounds the largest share of that time.

With every warp alike and no latency bound this is Eq. 4 at n = warps with S_i at its peak rate.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numba
import numpy as np

from .instructions import arch_of, hop_cycles

HOT = "L2S"
ATOMIC = "L2A"
BITMASK = "L2W"
ISSUE = "ISSUE"
ALU = "ALU"
SHARED = "SHM"
LATENCY = "latency"
SCHEDULERS_PER_SM = 4  # spec: an SM of Volta .. Hopper has four sub-partitions, each issuing one warp instruction a cycle
_MAX_SECTORS = 32  # a warp-level job touches at most one sector per lane
_SIDE_BY_SIDE = np.zeros(0, dtype=np.int64)  # `_launch_phases`' server_of when the DRAM's servers work side by side


@dataclass(frozen=True)
class CriticalPathModel:
    """A profile's numbers for the critical-path time: per sector outcome (0 L2 hit, 1 row-buffer
    hit, 2 row-buffer miss) its server name, its latency for 0..32 sectors from one warp, and each
    server's peak service time (ns per sector); the same-sector peak (0: no such limit)."""

    servers: tuple[str, ...]  # server names, machine order
    server_of: np.ndarray  # int64 (3,): outcome -> index into servers
    latency_ns: np.ndarray  # float64 (3, 33): outcome, sectors -> latency of one warp's load
    peak_ns: np.ndarray  # float64 (len(servers),)
    same_sector_ns: float
    cycle_ns: float = 0.0  # one SM clock cycle (0: no instruction path)
    issue_ns: float = 0.0  # one warp instruction at the GPU's full issue rate
    alu_ns: float = 0.0  # one ALU-pipe warp instruction, every ALU pipe of the GPU busy (0: not measured)
    shared_ns: float = 0.0  # one shared-memory access at the GPU's full shared bandwidth (0: not measured)
    wait_cycles: tuple = (0.0, 0.0, 0.0)  # latency of a waited-on shared load, shuffle, barrier (instructions.WAITS)
    atomic_ns: float = 0.0  # one atomic on a word every warp updates, the GPU full ([atomics]; 0: not measured)
    far_ns: np.ndarray = field(default_factory=lambda: np.zeros(_MAX_SECTORS + 1))  # an L2 hit across partitions
    dram_classes_add: bool = False  # the row-buffer hits' and misses' times add ([memory_mix]): one DRAM demand
    schedulers: float = 0.0  # warp schedulers of the GPU (SMs x sub-partitions; 0: issue and ALU as bounds only)

    @property
    def visits(self) -> np.ndarray:
        """Servers x outcomes: which servers a sector of each outcome visits. Every sector passes
        through the L2 (servers[0]), a miss too (looked up there, filled from DRAM); a miss also
        visits its DRAM server."""
        visits = np.zeros((len(self.servers), 3))
        visits[self.server_of, np.arange(3)] = 1.0
        visits[0] = 1.0
        return visits

    @classmethod
    def from_profile(cls, profile) -> CriticalPathModel:
        names = ("l2_hit", "row_hit", "row_miss") if profile.has_row_split else ("l2_hit", "dram", "dram")
        servers = ("L2H", "RBH", "RBM") if profile.has_row_split else ("L2H", "DRAM")
        sectors = np.arange(_MAX_SECTORS + 1, dtype=np.float64)
        latency = np.zeros((3, _MAX_SECTORS + 1))
        for outcome, name in enumerate(names):
            one_warp = profile.curves.get(f"{name}_one_warp")
            if one_warp is None:
                latency[outcome, 1:] = float(profile.curves[name](1.0))
            else:
                latency[outcome, 1:] = sectors[1:] * one_warp(sectors[1:])
        far = np.zeros(_MAX_SECTORS + 1)
        partitions = getattr(profile, "l2_partitions", None)
        if partitions is not None:
            latency[0], far = partitions.latency("near", _MAX_SECTORS), partitions.latency("far", _MAX_SECTORS)
        peak = np.array([float(profile.curves[name].ns[-1]) for name in dict.fromkeys(names)])
        same = profile.curves.get("l2_same")
        instruction = _instruction_costs(profile)
        chase = _chase_issue_ns(profile, instruction)
        latency[:, 1:] = np.maximum(latency[:, 1:] - chase, 0.0)
        far[1:] = np.maximum(far[1:] - chase, 0.0)
        atomics = getattr(profile, "atomics", None)
        atomic = atomics.same_word_ns if atomics is not None else 0.0
        mix = getattr(profile, "memory_mix", None)
        return cls(servers, np.array([0, 1, 2] if profile.has_row_split else [0, 1, 1]), latency, peak,
                   float(same.ns[-1]) if same is not None else 0.0, **instruction, atomic_ns=atomic, far_ns=far,
                   dram_classes_add=mix is not None and mix.dram_classes_add)


def _instruction_costs(profile) -> dict:
    """The instruction side of a GPU profile: its measured `[instructions]` costs when it has them, else
    the clock of its hardware section and the schedulers' spec issue rate (no waits, no shared server)."""
    costs = getattr(profile, "instructions", None)
    if costs is not None:
        return {"cycle_ns": costs.cycle_ns, "issue_ns": costs.issue_ns_per_inst_gpu(profile.sms),
                "alu_ns": costs.alu_ns_per_inst_gpu(profile.sms),
                "shared_ns": costs.shared_ns_per_wavefront_gpu(profile.sms),
                "wait_cycles": costs.wait_cycles, "schedulers": float(costs.sub_partitions * profile.sms)}
    clock = getattr(profile, "clock_mhz", 0.0) or 0.0
    if clock <= 0:
        return {}
    cycle, schedulers = 1000.0 / clock, float(SCHEDULERS_PER_SM * profile.sms)
    return {"cycle_ns": cycle, "issue_ns": cycle / schedulers, "schedulers": schedulers}


def _chase_issue_ns(profile, instruction: dict) -> float:
    """The part of a one-warp latency that is the microbenchmark chase's own instruction issue
    (`instructions.hop_cycles` at the profile's clock): the instruction path charges each kernel its
    own, so it is taken out of the memory latency. 0 without measured instruction costs, without one-warp
    curves, or where the architecture has no chase listing."""
    cycles = hop_cycles(arch_of(profile)) if arch_of(profile) else None
    if getattr(profile, "instructions", None) is None or cycles is None or \
            not any(name.endswith("_one_warp") for name in profile.curves):
        return 0.0
    return cycles * instruction["cycle_ns"]


def launch_slots(warps: int, physical_warps: int) -> int:
    """The warp slots a launch's loads and instructions are counted on: launched warp w runs on slot w mod
    slots, its launched warps, at most the GPU's."""
    return min(physical_warps, max(warps, 1))


def slot_instructions(instructions, warps: int, physical_warps: int, model: CriticalPathModel):
    """Per slot (as `memory.slot_loads`): warp instructions, instruction-path ns, shared accesses and ALU-pipe
    instructions of one launch from its `instructions.WarpInstructions` (launched warp w on slot w mod slots)."""
    slots = launch_slots(warps, physical_warps)
    path = (instructions.stall_cycles + instructions.waits @ np.asarray(model.wait_cycles)) * model.cycle_ns
    return tuple(per_slot(values, slots) for values in (instructions.per_warp, path, instructions.shared_per_warp,
                                                        instructions.alu_pipe_per_warp))


def per_slot(per_warp: np.ndarray, slots: int) -> np.ndarray:
    """Float sums per warp slot of a value per launched warp (warp w on slot w mod slots); where no slot runs
    two warps, the values themselves (the same floats: the values are not negative)."""
    if per_warp.size <= slots:
        out = np.zeros(slots)
        out[:per_warp.size] = per_warp
        return out
    return np.bincount(np.arange(per_warp.size) % slots, weights=per_warp, minlength=slots)


def launch_time(jobs, sectors, latency, hot, model: CriticalPathModel, instructions=None,
                atomics=None, mask_ns=None, slice_sectors=None) -> tuple[float, str]:
    """Time (ns) of one launch from its slots' loads (`memory.slot_loads`) and, optionally, their
    instructions (`slot_instructions`), their atomics on one word, the ns of their bitmask lookups at
    the GPU-wide rate and their sectors that reach the L2 (`slice_sectors`: the share of them that the
    word's slice serves comes before its atomics; all of `sectors` when not given, none without `atomics`)
    (all per slot), and its bottleneck."""
    jobs = np.asarray(jobs, dtype=np.float64)
    if not (jobs > 0).any():
        return 0.0, "none"
    count, path, shared, alu = instructions if instructions is not None else (np.zeros_like(jobs),) * 4
    if atomics is None:  # no atomic on one word: its slice serves nothing apart
        atomics, slice_sectors = np.zeros_like(jobs), np.zeros(0)
    else:
        atomics = np.asarray(atomics, np.float64)
        slice_sectors = np.asarray(sectors, np.float64).sum(axis=0) if slice_sectors is None else \
            np.asarray(slice_sectors, np.float64)
    mask_ns = np.zeros_like(jobs) if mask_ns is None else np.asarray(mask_ns, np.float64)
    phase_ns, bound = _launch_phases(jobs, np.asarray(sectors, dtype=np.float64), np.asarray(latency, np.float64),
                                     np.asarray(hot, np.float64), np.asarray(count, np.float64),
                                     np.asarray(path, np.float64), np.asarray(shared, np.float64), atomics, mask_ns,
                                     np.asarray(alu, np.float64), model.visits, model.peak_ns, model.same_sector_ns,
                                     model.issue_ns, model.shared_ns, model.atomic_ns, model.alu_ns,
                                     model.server_of if model.dram_classes_add else _SIDE_BY_SIDE, model.schedulers,
                                     slice_sectors)
    names = np.array((*model.servers, HOT, ISSUE, SHARED, ATOMIC, BITMASK, ALU, LATENCY))
    share = np.bincount(bound, weights=phase_ns, minlength=len(names))
    return float(phase_ns.sum()), str(names[int(share.argmax())])


_SUMS = 12  # rows of `_suffix_sums`


@numba.njit(cache=True, nogil=True)
def _suffix_sums(by, first, jobs, sectors, hot, count, shared, atomics, slice_sectors, mask_ns, alu, latency, path):
    """Per phase (from each `first` index of the order `by` to its end), the sums over its slots of: jobs,
    sectors of each outcome (3 rows), hot, count, shared, atomics, slice_sectors (zeros when empty), mask_ns,
    alu and latency + path: one pass from the end, each row added in the order cumsum(values[by][::-1]) adds."""
    out = np.empty((_SUMS, first.size))
    t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = t8 = t9 = t10 = t11 = 0.0
    sliced = slice_sectors.size > 0
    k = first.size - 1
    for i in range(by.size - 1, -1, -1):
        b = by[i]
        t0 += jobs[b]
        t1 += sectors[0, b]
        t2 += sectors[1, b]
        t3 += sectors[2, b]
        t4 += hot[b]
        t5 += count[b]
        t6 += shared[b]
        t7 += atomics[b]
        if sliced:
            t8 += slice_sectors[b]
        t9 += mask_ns[b]
        t10 += alu[b]
        t11 += latency[b] + path[b]
        while k >= 0 and first[k] == i:
            out[0, k], out[1, k], out[2, k], out[3, k], out[4, k], out[5, k] = t0, t1, t2, t3, t4, t5
            out[6, k], out[7, k], out[8, k], out[9, k], out[10, k], out[11, k] = t6, t7, t8, t9, t10, t11
            k -= 1
    return out


@numba.njit(cache=True, nogil=True)
def _stable_order(jobs):
    """The busy slots (jobs > 0) sorted stably by jobs: a counting sort when the counts are small whole
    numbers (as simulated), else a merge sort (counters mode scales them)."""
    busy = np.flatnonzero(jobs > 0)
    most = jobs[busy].max()
    whole = True
    for i in busy:
        whole &= jobs[i] == np.floor(jobs[i])
    if not whole or most > 4 * busy.size + 64:
        return busy[np.argsort(jobs[busy], kind="mergesort")]
    start = np.zeros(int(most) + 2, dtype=np.int64)
    for i in busy:
        start[int(jobs[i]) + 1] += 1
    for k in range(1, start.size):
        start[k] += start[k - 1]
    out = np.empty(busy.size, dtype=np.int64)
    for i in busy:
        key = int(jobs[i])
        out[start[key]] = i
        start[key] += 1
    return out


@numba.njit(cache=True, nogil=True)
def _launch_phases(jobs, sectors, latency, hot, count, path, shared, atomics, mask_ns, alu, visits, peak_ns, same_ns,
                   issue_ns, shared_ns, atomic_ns, alu_ns, server_of, schedulers, slice_sectors):
    """The phases of a launch (see the module docstring): each phase's ns and bounding server (index
    into the servers, then hot sector, issue, shared memory, same-word atomics, bitmask lookups, ALU pipe,
    latency). Each sum is taken in the order the array version (cumsum of the reversed slots, sorted stably
    by jobs) takes it. `server_of` (outcome -> server), when not empty, makes the DRAM's demand the sum
    over the row-buffer outcomes (`CriticalPathModel.dram_classes_add`); `schedulers` > 0 puts the issue slots
    and the ALU pipe in each scheduler's closed network (`scheduler_ns`) instead of the bounds."""
    by = _stable_order(jobs)
    n = by.size
    sorted_jobs = jobs[by]
    first = np.empty(n, dtype=np.int64)
    phases = 0
    for i in range(n):
        if i == 0 or sorted_jobs[i] != sorted_jobs[i - 1]:
            first[phases] = i
            phases += 1
    first = first[:phases]
    sums = _suffix_sums(by, first, jobs, sectors, hot, count, shared, atomics, slice_sectors, mask_ns, alu, latency,
                        path)
    active_jobs = sums[0]
    servers = visits.shape[0]
    rows = servers + 6
    demand = np.empty((rows, phases))
    means = np.empty((3, phases))
    for o in range(3):
        means[o] = sums[1 + o] / active_jobs
    for i in range(servers):
        for k in range(phases):
            total = 0.0
            for o in range(3):
                total += visits[i, o] * means[o, k]
            demand[i, k] = total * peak_ns[i]
    demand[servers] = sums[4] / active_jobs * same_ns
    demand[servers + 1] = sums[5] / active_jobs * issue_ns
    demand[servers + 2] = sums[6] / active_jobs * shared_ns
    demand[servers + 3] = sums[7] / active_jobs * atomic_ns
    if slice_sectors.size and demand[servers + 3].max() > 0:
        share = sums[8] / active_jobs * peak_ns[0]
        for k in range(phases):  # the word's slice serves its share of the L2's sectors, then the atomics
            if demand[servers + 3, k] > 0:
                demand[servers + 3, k] += share[k]
    demand[servers + 4] = sums[9] / active_jobs
    demand[servers + 5] = sums[10] / active_jobs * alu_ns
    wait = sums[11] / active_jobs
    phase_ns = np.empty(phases)
    bound = np.empty(phases, dtype=np.int64)
    previous = 0.0
    local = (servers + 1, servers + 5) if schedulers > 0 else (-1, -1)
    for k in range(phases):
        step = sorted_jobs[first[k]] - previous
        previous = sorted_jobs[first[k]]
        top = -1
        for r in range(rows):
            if r != local[0] and r != local[1] and (top < 0 or demand[r, k] > demand[top, k]):
                top = r
        most = demand[top, k]
        if server_of.size:
            mixed, largest, dominant = 0.0, -1.0, 0
            for o in range(1, 3):
                part = means[o, k] * peak_ns[server_of[o]]
                mixed += part
                if part > largest:
                    largest, dominant = part, server_of[o]
            if mixed > most:
                most, top = mixed, dominant
        bandwidth = (n - first[k]) * most
        own, named = wait[k], rows  # a job's time on its own warp's side: its latency, or its scheduler's network
        if schedulers > 0:
            busier = local[0] if demand[local[0], k] >= demand[local[1], k] else local[1]
            own = scheduler_ns(wait[k], demand[local[0], k] * schedulers, demand[local[1], k] * schedulers,
                               (n - first[k]) / schedulers)
            if wait[k] < (n - first[k]) * demand[busier, k]:
                named = busier
        phase_ns[k] = step * max(own, bandwidth)
        bound[k] = named if own >= bandwidth else top
    return phase_ns, bound


@numba.njit(cache=True, nogil=True)
def scheduler_ns(latency, issue, alu, warps):
    """ns a job of one warp takes on a scheduler that holds `warps` warps (interpolated between whole
    numbers; below one, a lone warp), each job needing `issue` ns of the issue slot and `alu` ns of the ALU
    pipe and waiting `latency` ns in all when alone: exact mean value analysis of the closed network of
    the two stations and a delay of `latency` less their demands."""
    delay = max(latency - issue - alu, 0.0)
    if delay + issue + alu <= 0.0:
        return 0.0
    whole = int(np.floor(warps))
    queued_issue = queued_alu = 0.0
    below = above = delay + issue + alu
    for customers in range(1, whole + 2):
        at_issue, at_alu = issue * (1.0 + queued_issue), alu * (1.0 + queued_alu)
        above = delay + at_issue + at_alu
        queued_issue, queued_alu = customers / above * at_issue, customers / above * at_alu
        if customers == whole:
            below = above
    return below + (warps - whole) * (above - below)
