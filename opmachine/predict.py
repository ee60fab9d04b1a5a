"""Predicted time per BFS round on a GPU from simulated jobs and memory visits (seed 003 §6.5, Eq. 4).

Per kernel launch: the jobs per server (warp-level memory instructions) and their L2 / row-buffer
outcomes; the load n, measured (achieved occupancy x physical warps) or estimated by Little's law
as n_est = N_G / W_max, where W_max is the most jobs one physical warp runs; the MLP at each
memory server m_i = V_i * n; service times S_i(m_i) from the profile's curves; and the GPU memory
machine (Fig. 5: L2 hits, row-buffer hits, row-buffer misses) analysed for its bottleneck:
predicted time = N_G * max_i V_i * S_i(m_i) (time model `eq4`) or, by default, the critical-path
time of `opmachine.critical` (time model `critical`: the load falls as warps finish, the last
warps' jobs wait their own latency, a hot sector has its own bandwidth), plus the profile's
per-launch overhead, or for a compaction the profile's measured time of an empty compaction at the
graph's size less the model's own time for that launch (`fixed_ns`, `compaction_baseline_ns`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from simdmodel.errors import InputError
from simdmodel.algorithms import BFS

from .alongside import cpus
from .bfs_machine import SERVERS
from .cache import SetAssocState
from .counters import MeasuredLaunches, check_covers, scale_slots
from .critical import CriticalPathModel, launch_time, per_slot, slot_instructions
from .footprint import check_simulation_fits
from .instructions import LaunchCode, expansion_lanes, phase_trips, topo_lanes
from .kernels import (DEFAULT_BLOCK, JobBuffer, Kernel, Launch, SplitFill, compact_counts, compact_jobs,
                      compact_warp_steps, expansion_jobs, hand_back, recycle, spare_buffer, topo_jobs)
from .layout import layout_for
from .machine import OperatorMachine, Server
from .memory import (L2_MODELS, MRC_CAPACITIES_BYTES, LaunchScratch, hot_requests, interleaved_jobs, jobs_per_warp,
                     l2_geometry, pass_through_l2, simulate_launch_loads)
from .store_flush import store_flush_ns, storing_blocks, stores_per_warp

MEMORY_MACHINE = OperatorMachine(
    "GPU memory, seed 003 Fig. 5",
    (Server("L2H", "L2 hit"), Server("RBH", "DRAM row-buffer hit"), Server("RBM", "DRAM row-buffer miss")),
    (("in", "L2H"), ("in", "RBH"), ("in", "RBM"), ("L2H", "out"), ("RBH", "out"), ("RBM", "out")),
)
MEMORY_MACHINE_NO_ROWS = OperatorMachine(
    "GPU memory without a row-buffer split",
    (Server("L2H", "L2 hit"), Server("DRAM", "DRAM access")),
    (("in", "L2H"), ("in", "DRAM"), ("L2H", "out"), ("DRAM", "out")),
)
CURVE_OF = {"L2H": "l2_hit", "RBH": "row_hit", "RBM": "row_miss", "DRAM": "dram"}
TIME_MODELS = ("critical", "eq4")
"""How a launch's time follows from its counts: `critical` (`opmachine.critical`: the load falls as
warps finish, the last warps' jobs wait their own latency, a hot sector has its own bandwidth) or
`eq4` (seed 003 Eq. 4 with one load n = N_G / W_max for the whole launch)."""
WARM_PRIOR_RUNS = 1
"""Whole runs of the same BFS a warm prediction simulates before the predicted one, for their L2
contents only: the timed runs each follow another run (the warm-up, or the previous repeat)."""
TRACE_REUSE_BYTES = 2**30
"""The job traces a prior run generates are kept, up to this many bytes in all, and used again by
the predicted run instead of generating them twice: the same launches of the same BFS give the same
jobs (a launch's jobs depend on its frontier and on `stamp` marks of its own level only)."""

INSTRUCTION_COLUMNS = ("inst_executed", "shared_ld_inst", "shared_st_inst", "alu_pipe_inst")
"""Warp instructions of a launch counted from the kernel's SASS (`opmachine.instructions`): all,
shared-memory loads and stores, and those of the ALU pipe; NaN on a profile whose architecture has no
listings."""
COUNT_COLUMNS = ("l2_sectors", "l2_hits", "dram_sectors", "row_hits", "row_misses")
PER_LEVEL_COLUMNS = (
    "level", "kernel", "phase", "block", "grid", "frontier_vertices", "frontier_edges",
    *(f"jobs_{s.lower()}" for s in SERVERS), "jobs_total", "w_max", *COUNT_COLUMNS,
    "v_l2h", "v_rbh", "v_rbm", "v_dram", "load", "mlp_l2h", "mlp_rbh", "mlp_rbm", "mlp_dram",
    "bottleneck", "predicted_ns", "fixed_ns", "store_flush_ns", "storing_blocks", "mode", *INSTRUCTION_COLUMNS,
)


@dataclass(frozen=True)
class OpmResult:
    """A predicted BFS: one row per kernel launch, per-server attribution, and the L2 miss-ratio curve."""

    graph_name: str
    n: int
    m: int
    source: int
    kernel: str
    profile: object
    l2_model: str
    per_level: pd.DataFrame
    per_server: pd.DataFrame
    mrc: pd.DataFrame | None = field(default=None)
    warm_l2: bool = field(default=False)
    time_model: str = field(default="critical")
    counted: pd.DataFrame | None = field(default=None)
    """Counters mode (`opmachine.counters`): the launches a counters table named, predicted from
    their measured counts (mode "counters"); None without a counters table."""

    @property
    def predicted_ns(self) -> float:
        return float(self.per_level["predicted_ns"].sum())

    def summary(self) -> dict:
        """Whole-BFS totals: jobs per server, sectors, hit rates, predicted time, bottleneck time shares."""
        table = self.per_level
        out = {
            "graph": self.graph_name, "n": self.n, "m": self.m, "source": self.source, "kernel": self.kernel,
            "gpu": self.profile.name, "curves_measured": bool(self.profile.measured), "l2_model": self.l2_model,
            "warm_l2": self.warm_l2, "time_model": self.time_model,
            "levels": int(table["level"].nunique()), "launches": len(table),
        }
        for column in (*(f"jobs_{s.lower()}" for s in SERVERS), "jobs_total", *COUNT_COLUMNS):
            out[column] = int(table[column].sum())
        out["l2_hit_rate"] = _ratio(out["l2_hits"], out["l2_sectors"])
        out["row_hit_rate"] = _ratio(out["row_hits"], out["dram_sectors"])
        out["predicted_ns"] = self.predicted_ns
        edges = float(table.loc[table["phase"] != "compact", "frontier_edges"].sum())
        out["predicted_gteps"] = edges / out["predicted_ns"] if out["predicted_ns"] > 0 else float("nan")
        shares = table.groupby("bottleneck")["predicted_ns"].sum() / max(out["predicted_ns"], 1e-300)
        out["bottleneck_time_share"] = {str(k): round(float(v), 4) for k, v in shares.items()}
        return out


def _ratio(a, b) -> float:
    return float(a) / float(b) if b else float("nan")


def threads_launch(threads: int) -> Launch:
    """A launch of exactly `threads` threads (a multiple of 32) in blocks of gcd(threads, 256)."""
    if threads < 32 or threads % 32:
        raise InputError(f"--threads must be a positive multiple of 32, got {threads}")
    block = int(np.gcd(threads, DEFAULT_BLOCK))
    return Launch(block, threads // block)


def expansion_launch(kernel: Kernel, profile, front_size: int, block: int = DEFAULT_BLOCK,
                     grid: int | None = None) -> Launch:
    """The launch of a data-driven expansion: `grid` if given, else the blocks the frontier's work
    units need (the strategy's geometry), at most one full wave."""
    if grid is not None:
        return Launch(block, grid)
    geometry = kernel.expansion.with_block(block).geometry
    needed_warps = -(-front_size // geometry.unit_entries) * geometry.unit_warps
    needed_blocks = -(-needed_warps // (block // 32))
    return Launch(block, max(1, min(profile.full_wave_grid(block), needed_blocks)))


def fixed_ns(profile, phase: str | None = None, vertices: int = 1) -> float:
    """A launch's time outside the memory machine. An expansion or `topo` launch: the launch
    overhead. A compaction of a graph of `vertices`: the profile's measured compaction time there
    ([compaction], `CompactionCosts.at`), or without that table the launch overhead plus
    `grid_scan_ns` (the one-node compaction): the counts, arrivals and scan that give each tile its
    queue offset, which have no frontier loads or stores, so no jobs. The model adds
    each compaction's own critical-path time less `compaction_baseline_ns`, the part of it this
    measurement already holds."""
    if phase != "compact":
        return float(profile.launch_overhead_ns)
    if profile.compaction is not None:
        return profile.compaction.at(int(vertices))
    return float(profile.launch_overhead_ns) + float(profile.grid_scan_ns)


def compaction_baseline_ns(profile, code, critical, vertices: int = 1) -> float:
    """The critical-path time the model gives the launch `fixed_ns` measured for a compaction of a
    graph of `vertices`: a compaction with an empty next frontier on an edgeless graph that size
    ([compaction]; of one vertex without it, as `grid_scan_ns` was measured), back to back, so its
    level reads hit in the L2.

    That measurement already holds this launch's instructions and loads (every block reads its
    tile's levels and runs the scan, barriers, arrival and offset wait, data or not), so each
    compaction is charged its own critical-path time less this one; adding both would count the
    empty kernel's work twice.
    """
    n = int(vertices) if profile.compaction is not None else 1
    layout = layout_for(n, 0)
    launch = Launch(DEFAULT_BLOCK, profile.full_wave_grid(DEFAULT_BLOCK))
    empty = np.zeros(0, dtype=np.int32)
    trace = compact_jobs(n, empty, launch.warps, layout)
    state = SetAssocState(l2_geometry(profile), layout.total_sectors)
    simulate_launch_loads(trace, layout, profile, "setassoc", state)  # the launch before it
    _, _, (loads,) = simulate_launch_loads(trace, layout, profile, "setassoc", state, [critical])
    path = None
    if code is not None:
        instructions = code.compaction(*compact_warp_steps(n, empty, launch.warps), launch.block)
        path = slot_instructions(instructions, trace.warps, profile.physical_warps, critical)
    jobs, sectors, _, waited, hot = loads
    return float(launch_time(jobs, sectors, waited.sum(axis=0), hot, critical, path)[0])


def memory_prediction(jobs: float, l2_hits: float, row_hits: float, row_misses: float, w_max: float,
                      profile, load: float | None = None, phase: str | None = None, vertices: int = 1) -> dict:
    """Visits, load, MLP, bottleneck and predicted time of one launch from its counts (Eq. 4), plus
    its `fixed_ns` (`vertices`: the graph's, for a compaction)."""
    dram = row_hits + row_misses
    visits = {"L2H": l2_hits / jobs, "RBH": row_hits / jobs, "RBM": row_misses / jobs, "DRAM": dram / jobs}
    n = float(load) if load is not None else jobs / w_max
    mlp = {name: v * n for name, v in visits.items()}
    if profile.has_row_split:
        machine, completions = MEMORY_MACHINE, {"L2H": l2_hits, "RBH": row_hits, "RBM": row_misses}
    else:
        machine, completions = MEMORY_MACHINE_NO_ROWS, {"L2H": l2_hits, "DRAM": dram}
    service = {name: float(profile.curves[CURVE_OF[name]](mlp[name])) for name, c in completions.items() if c > 0}
    out = {"v_l2h": visits["L2H"], "v_rbh": visits["RBH"], "v_rbm": visits["RBM"], "v_dram": visits["DRAM"],
           "load": n, "mlp_l2h": mlp["L2H"], "mlp_rbh": mlp["RBH"], "mlp_rbm": mlp["RBM"], "mlp_dram": mlp["DRAM"]}
    if not service:
        out.update(bottleneck="none", predicted_ns=fixed_ns(profile, phase, vertices))
        return out
    result = machine.analyze(jobs, {k: v for k, v in completions.items() if v > 0}, service)
    out.update(bottleneck=result.bottleneck, predicted_ns=result.time_ns + fixed_ns(profile, phase, vertices))
    return out


def _w_max(per_warp: np.ndarray, physical_warps: int) -> int:
    """Most jobs on one physical warp; launched warps beyond the GPU's slots run in later waves.
    `per_warp`: jobs per launched warp, or per slot already (at most `physical_warps` entries)."""
    return int(per_slot(per_warp, physical_warps).max())


def _launch_row(level, kernel_label, phase, launch, front_size, front_edges, counts, per_warp, profile, load, mode,
                critical=None, instructions=None, vertices: int = 1, stored: int = 0):
    """One per-level row; `critical` = (memory ns, bottleneck) from `opmachine.critical` replaces
    Eq. 4's time and bottleneck (the load and MLP columns stay Eq. 4's estimate); `instructions`
    (`instructions.WarpInstructions`) gives the instruction columns; `vertices` is the size a
    compaction's `fixed_ns` is taken at (the row records its `fixed_ns`); `stored`, the blocks with a
    store, whose [store_flush] cost the predicted time gains (`store_flush_ns`)."""
    jobs = int(counts[:, 0].sum())
    w_max = _w_max(per_warp, profile.physical_warps)
    row = {"level": level, "kernel": kernel_label, "phase": phase, "block": launch.block, "grid": launch.grid,
           "frontier_vertices": front_size, "frontier_edges": front_edges}
    for s, name in enumerate(SERVERS):
        row[f"jobs_{name.lower()}"] = int(counts[s, 0])
    row["jobs_total"] = jobs
    row["w_max"] = w_max
    for k, column in enumerate(COUNT_COLUMNS):
        row[column] = int(counts[:, k + 1].sum())
    row.update(memory_prediction(jobs, row["l2_hits"], row["row_hits"], row["row_misses"], w_max, profile, load,
                                 phase, vertices))
    row["fixed_ns"] = fixed_ns(profile, phase, vertices)
    if critical is not None:
        row["predicted_ns"] = critical[0] + row["fixed_ns"]
        row["bottleneck"] = critical[1]
    row["storing_blocks"] = int(stored)
    row["store_flush_ns"] = store_flush_ns(profile, stored)
    row["predicted_ns"] += row["store_flush_ns"]
    row["mode"] = mode
    row.update(instructions.totals() if instructions is not None else dict.fromkeys(INSTRUCTION_COLUMNS, np.nan))
    return row


def _server_rows(level, phase, counts):
    return [{"level": level, "phase": phase, "server": name, "jobs": int(counts[s, 0]),
             **{column: int(counts[s, k + 1]) for k, column in enumerate(COUNT_COLUMNS)}}
            for s, name in enumerate(SERVERS)]


class _Timing:
    """One profile's time for the launches of a simulated BFS: its critical-path model, the empty
    compaction its `fixed_ns` holds, its rows (and counters-mode rows)."""

    def __init__(self, profile, kernel, code, time_model, measured, scan_n, load, mode):
        self.profile, self.measured, self.scan_n, self.mode = profile, measured, scan_n, mode
        self.load = load
        self.critical = CriticalPathModel.from_profile(profile) if time_model == "critical" else None
        self.baseline = (compaction_baseline_ns(profile, code, self.critical, scan_n)
                         if self.critical is not None and kernel.data_driven else 0.0)
        self.rows: list[dict] = []
        self.counted: list[dict] = []

    def less_baseline(self, took, phase):
        """A compaction's critical-path time less what its `fixed_ns` already holds (see compaction_baseline_ns)."""
        return took if phase != "compact" else (max(took[0] - self.baseline, 0.0), *took[1:])

    def time_of(self, trace, loads, instructions, key):
        """The critical-path (time, bottleneck) of a launch from its per-slot `loads` (`memory.simulate_launch_loads`
        with this timing's model), and its counters-mode one when `key` is counted."""
        critical = self.critical
        if critical is None:
            return None, None
        warps = self.profile.physical_warps
        path = None if instructions is None else slot_instructions(instructions, trace.warps, warps, critical)
        jobs, sectors, _, waited, hot = loads
        took = self.less_baseline(launch_time(jobs, sectors, waited.sum(axis=0), hot, critical, path), key[1])
        if self.measured is None or key not in self.measured:
            return took, None
        return took, (loads, path)

    def add(self, level, kernel_label, phase, launch, front_size, front_edges, counts, per_warp, trace, loads,
            instructions, stored=0):
        """The row of one launch (and its counters-mode row when the launch was measured); `stored`: its blocks
        with a store."""
        took, slots = (None, None) if trace is None else self.time_of(trace, loads, instructions, (level, phase))
        row = _launch_row(level, kernel_label, phase, launch, front_size, front_edges, counts, per_warp, self.profile,
                          self.load, self.mode, took, instructions, self.scan_n, stored)
        self.rows.append(row)
        if self.measured is not None and (level, phase) in self.measured:
            self.counted.append(self.count_row(row, (level, phase), slots))

    def count_row(self, row, key, slots):
        """The counters-mode row of a launch from its simulated `row`."""
        profile = self.profile
        targets = self.measured.targets(key, row)
        classes = targets["classes"]
        out = dict(row, jobs_total=int(round(targets["jobs"])), l2_sectors=int(round(classes.sum())),
                   l2_hits=int(round(classes[0])), dram_sectors=int(round(classes[1] + classes[2])),
                   row_hits=float(classes[1]), row_misses=float(classes[2]), mode="counters")
        if "shared_ld" in targets:
            out.update(inst_executed=targets["inst"], shared_ld_inst=targets["shared_ld"],
                       shared_st_inst=targets["shared_st"])
        out.update(memory_prediction(targets["jobs"], classes[0], classes[1], classes[2], row["w_max"], profile,
                                     targets["occupancy"] * profile.physical_warps, row["phase"], self.scan_n))
        if slots is not None:
            loads, path = slots
            memory, instructions = scale_slots(loads, path, targets, self.critical.latency_ns[:, 1])
            took = self.less_baseline(launch_time(*memory, self.critical, instructions), row["phase"])
            out.update(predicted_ns=took[0] + row["fixed_ns"], bottleneck=took[1])
        out["predicted_ns"] += row["store_flush_ns"]
        return out


SHARED_COMPACTION_BYTES = 2**29
"""The bytes of compaction launches (`CompactionLaunch`) `SharedCompactions` keeps for the kernels after the first:
no launch is kept past them, and those kept gain their hottest-sector requests later (grid2d:side=500 from one
source: 856 of its 866 kept, 567 MiB in all)."""


class CompactionLaunch:
    """One compaction launch's jobs, their interleaved order and hottest-sector requests on a number of warp
    slots, its warps' steps and stores (each made when first asked for) and from them its instruction counts
    and storing blocks: the same for every data-driven kernel (they follow from the next frontier alone, and
    the architecture has one compaction listing)."""

    def __init__(self, n: int, next_front: np.ndarray, launch: Launch, layout, trace=None):
        """`trace`: its jobs, where the caller has them already (a prior run's, kept)."""
        self.n, self.next_front, self.launch, self.layout = n, next_front, launch, layout
        self._trace, self._steps = trace, None
        self._packed: dict = {}
        self._hot: dict = {}

    def trace(self):
        if self._trace is None:
            self._trace = compact_jobs(self.n, self.next_front, self.launch.warps, self.layout)
        return self._trace

    def packed(self, slots: int) -> np.ndarray:
        """The jobs in interleaved order on `slots` warp slots (`memory.interleaved_jobs`), in memory of their own."""
        if slots not in self._packed:
            trace = self.trace()
            self._packed[slots] = interleaved_jobs(trace.warp, trace.server, trace.ptr, trace.warps, slots)
        return self._packed[slots]

    def hot(self, slots: int, counter) -> np.ndarray:
        """Each slot's requests to its hottest sector (`memory.hot_requests`, `counter` as there)."""
        if slots not in self._hot:
            self._hot[slots] = hot_requests(self.trace(), self.packed(slots), slots, counter)
        return self._hot[slots]

    def steps(self) -> tuple[np.ndarray, np.ndarray]:
        if self._steps is None:
            self._steps = compact_warp_steps(self.n, self.next_front, self.launch.warps)
        return self._steps

    def instructions(self, code):
        """Its warp instructions under `code` (a `LaunchCode`: its architecture's compaction listing), made anew for
        each caller: they take more memory than the jobs (a float per code event and launched warp, and each
        figure the time model asks of them), and less time to make than to keep."""
        return code.compaction(*self.steps(), self.launch.block)

    def stored(self) -> int:
        return storing_blocks(self.steps()[1], self.launch.block)

    @property
    def nbytes(self) -> int:
        """Bytes it holds: its jobs, interleaved orders, hottest-sector requests and warp steps, as made so far."""
        held = [*self._packed.values(), *self._hot.values(), *(self._steps or ())]
        return sum(array.nbytes for array in held) + (self._trace.nbytes if self._trace is not None else 0)


class SharedCompactions:
    """What every data-driven kernel that predicts the same BFS with the same settings shares of its compaction
    launches: their jobs, interleaved orders, hottest sectors and warp steps (`CompactionLaunch`, kept up to
    SHARED_COMPACTION_BYTES), and where the L2 holds every array (filled, `SetAssocState.fill`: every access
    hits, whatever came before) and has one partition, their rows, the same but for the kernel's name. Other
    rows are simulated as usual: a partition's copies follow each kernel's own expansions."""

    def __init__(self, budget: int = SHARED_COMPACTION_BYTES):
        self.settings = None
        self.rows: dict = {}
        self.launches: dict = {}
        self.sizes: dict = {}  # each kept launch's bytes when last counted
        self.left = budget

    def bind(self, settings: tuple) -> None:
        """Use with these prediction settings only (graph, source, profiles, models, load)."""
        if self.settings is None:
            self.settings = settings
        elif settings != self.settings:
            raise ValueError("shared compaction rows are for one BFS predicted with one set of settings")

    def keep(self, key, launch: CompactionLaunch) -> None:
        """Keep `launch` for the kernels after this one if it fits in what is left (its warp steps made first: every
        kernel's prediction asks for them); a launch kept already is counted again as it has grown since (an
        interleaved order on another number of slots), which may take the budget below zero: then nothing
        more is kept."""
        if key in self.launches:
            self.left -= launch.nbytes - self.sizes[key]
        else:
            if launch.nbytes > self.left:  # no warp steps made for a launch that cannot be kept
                return
            launch.steps()
            if launch.nbytes > self.left:
                return
            self.launches[key] = launch
            self.left -= launch.nbytes
        self.sizes[key] = launch.nbytes


class _KeptTraces:
    """Job traces of a prior run, kept (within a byte budget) for the runs after it."""

    def __init__(self, budget: int):
        self.left = budget
        self.traces: dict = {}

    def get(self, level: int, phase: str, rehearsal: bool, generate):
        """The launch's trace: a kept one, else `generate()`, kept when a prior run made it and it fits (a prior
        run's jobs go to a buffer of their own, reserved but untouched beyond them, so they cost their size)."""
        trace = self.traces.get((level, phase))
        if trace is None:
            trace = generate()
            if rehearsal and trace.nbytes <= self.left:
                self.traces[level, phase] = trace
                self.left -= trace.nbytes
        return trace

    def holds(self, level: int, phase: str) -> bool:
        return (level, phase) in self.traces

    def let_go(self) -> None:
        """Hand the kept traces' memory to `kernels.recycle` for later predictions (the caller holds none of
        the traces any more)."""
        held = list(self.traces.values())
        self.traces.clear()
        recycle(held)


SIMULATION_FIELDS = ("compute_capability", "warp_size", "sms", "max_warps_per_sm", "max_blocks_per_sm",
                     "max_threads_per_block", "l2_model_bytes", "l2_ways", "l2_line_bytes", "sector_bytes",
                     "dram_block_bytes", "row_buffers")
"""The profile fields that decide a BFS's simulation (launch geometry, instruction listings, L2 and
row buffers); profiles equal in these differ only in the time they give it."""


def simulation_key(profile) -> tuple:
    """The values of SIMULATION_FIELDS, whether the profile has instruction costs, and whether its L2's
    partitions are followed ([l2_partitions]; their latencies are time only)."""
    return (*(getattr(profile, name) for name in SIMULATION_FIELDS), profile.instructions is None,
            profile.l2_partitions is None)


def predict_bfs_profiles(graph, source: int, kernel: Kernel, profiles, **options) -> list[OpmResult]:
    """`[predict_bfs(graph, source, kernel, p, **options) for p in profiles]`, each identical to that,
    with the simulation (jobs, L2, row buffers, instruction counts) run once: the profiles must have
    one `simulation_key` (what-ifs of DRAM or L2 bandwidth or launch cost, say). Not with `counters`."""
    profiles = list(profiles)
    if not profiles:
        raise InputError("no profile to predict on")
    if len({simulation_key(p) for p in profiles}) > 1:
        raise InputError("these profiles differ in what the simulation needs (" + ", ".join(SIMULATION_FIELDS)
                         + "): predict each on its own")
    if options.get("counters") is not None and len(profiles) > 1:
        raise InputError("counters mode predicts on one profile at a time")
    return _predict(graph, source, kernel, profiles, **options)


def predict_bfs(graph, source: int, kernel: Kernel, profile, l2_model: str = "lru", block: int | None = None,
                grid: int | None = None, threads: int | None = None, occupancy: float | None = None,
                progress: bool = False, warm_l2: bool = False, time_model: str = "critical",
                counters: pd.DataFrame | None = None, counters_reference: pd.DataFrame | None = None,
                frontiers=None, shared: SharedCompactions | None = None) -> OpmResult:
    """Simulate every launch of a BFS from `source` with `kernel` on `profile`'s GPU and predict its time.

    Launch geometry: `threads` (exact thread count), or `block` and/or `grid`; by default blocks
    of 256 and, for `topo`, one full wave of blocks (a grid-stride loop), for an expansion the
    blocks its frontier needs up to one full wave. Compaction always uses the default geometry.
    `occupancy` (0..1 of the GPU's warp slots) replaces the estimated load in every launch.
    `warm_l2` (set-associative model only) carries the L2's contents from each launch to the next,
    as a BFS's back-to-back launches find it, instead of starting every launch cold (what Nsight
    Compute measures); its rows have mode "warm" instead of "simulation". The first launch then
    finds the L2 as `WARM_PRIOR_RUNS` earlier runs of the same BFS left it, followed by the reset
    of the level array: timed runs are repeats after a warm-up (gpu_validate.bfs.time_bfs), and on
    a graph that fits in the L2 their first rounds hit where a cold start would miss.
    `time_model` (TIME_MODELS): `critical` follows the load as warps finish (`opmachine.critical`),
    `eq4` is seed 003's Eq. 4 with one load per launch. `occupancy` applies to `eq4` only.
    `counters` (`opmachine.counters.read_counters`): every launch it names is predicted once more
    from its measured counts, in `result.counted`; a warm prediction needs `counters_reference`, the
    per-level table of the same BFS predicted cold (the counts are measured from a flushed L2).
    `frontiers`: the sorted BFS rounds from `source` (`BFS.rounds`), when the caller already has them.
    `shared`: compaction rows that other data-driven kernels' predictions of the same BFS, with the same
    settings, may use and add to (`SharedCompactions`).
    """
    return _predict(graph, source, kernel, [profile], l2_model=l2_model, block=block, grid=grid, threads=threads,
                    occupancy=occupancy, progress=progress, warm_l2=warm_l2, time_model=time_model,
                    counters=counters, counters_reference=counters_reference, frontiers=frontiers,
                    shared=shared)[0]


def _predict(graph, source: int, kernel: Kernel, profiles: list, l2_model: str = "lru", block: int | None = None,
             grid: int | None = None, threads: int | None = None, occupancy: float | None = None,
             progress: bool = False, warm_l2: bool = False, time_model: str = "critical",
             counters: pd.DataFrame | None = None, counters_reference: pd.DataFrame | None = None,
             frontiers=None, shared: SharedCompactions | None = None) -> list[OpmResult]:
    """`predict_bfs` on each of `profiles` (one `simulation_key`), the simulation run once."""
    profile = profiles[0]  # the simulation's geometry; every profile times it
    if l2_model not in L2_MODELS:
        raise InputError(f"unknown L2 model {l2_model!r} (choose {', '.join(L2_MODELS)})")
    if occupancy is not None and not 0 < occupancy <= 1:
        raise InputError(f"occupancy must be in (0, 1], got {occupancy}")
    if warm_l2 and l2_model != "setassoc":
        raise InputError("a warm L2 needs the set-associative L2 model (--l2 setassoc)")
    if time_model not in TIME_MODELS:
        raise InputError(f"unknown time model {time_model!r} (choose {', '.join(TIME_MODELS)})")
    if occupancy is not None and time_model != "eq4":
        raise InputError("a measured occupancy sets Eq. 4's load: use it with the eq4 time model")
    if counters is not None and warm_l2 and counters_reference is None:
        raise InputError("measured counts are cold: a warm prediction from them needs the cold prediction as "
                         "counters_reference")
    if threads is not None:
        fixed = threads_launch(threads)
        block, grid = fixed.block, fixed.grid
    if block is None:
        block = (kernel.expansion.block_size if kernel.data_driven else None) or DEFAULT_BLOCK
    expansion = kernel.expansion.with_block(block) if kernel.data_driven else None  # a CTA's C is the block
    load = None if occupancy is None else occupancy * profile.physical_warps
    if frontiers is None:
        frontiers = BFS.rounds(graph, source, "sorted")
    measured = None
    if counters is not None:
        phases = ("expand", "compact") if kernel.data_driven else ("topo",)
        check_covers(counters, [(level, phase) for level in range(frontiers.depth) for phase in phases], every=False)
        measured = MeasuredLaunches(counters, counters_reference if warm_l2 else None)
    layout = layout_for(graph.n, graph.m)
    check_simulation_fits(f"opm {kernel.label} on {graph.name}", graph, layout, frontiers, expansion, profile, warm_l2,
                          TRACE_REUSE_BYTES)
    l2_state = SetAssocState(l2_geometry(profile), layout.total_sectors) if warm_l2 else None
    mode = "warm" if warm_l2 else "simulation"
    code = LaunchCode.for_kernel(kernel, profile)
    # Eq. 4 has no critical path to take the empty compaction's own time from: it keeps the one-node constant
    scan_n = graph.n if time_model == "critical" else 1
    timings = [_Timing(p, kernel, code, time_model, measured, scan_n, load, mode) for p in profiles]
    models = [timing.critical for timing in timings if timing.critical is not None]
    levels = frontiers.levels
    degrees = graph.degrees()
    stamp = np.full(graph.n, -1, dtype=np.int32)
    edge_sizes = frontiers.edge_frontier_sizes(graph)
    server_rows = []
    mrc_misses = np.zeros(len(MRC_CAPACITIES_BYTES), dtype=np.int64)
    accesses = 0
    passes = 1 + (WARM_PRIOR_RUNS if l2_state is not None else 0)
    filled = passes > 1 and l2_state.holds_universe()
    one_partition = profile.l2_partitions is None
    if filled:
        # An L2 that holds every array never evicts: the prior run leaves valid every sector it touched, and
        # the predicted run touches only those, so each access hits as in a full cache. No prior run needed,
        # but where the partitions are followed: their copies are what the prior run's readers left, and only
        # that run can say (it goes through the partitions alone, `memory.pass_through_l2`).
        l2_state.fill()
        if one_partition:
            passes = 1
    if measured is not None or not kernel.data_driven:
        shared = None
    share_rows = shared is not None and filled and one_partition
    share_launches = shared is not None and not share_rows  # rows shared need no launches
    compaction_code = None if code is None else code.arch  # the one compaction listing of the architecture, or none
    if shared is not None:
        shared.bind((graph.name, graph.n, graph.m, int(source), tuple(map(id, profiles)), l2_model, time_model,
                     occupancy))
    kept = _KeptTraces(TRACE_REUSE_BYTES)
    closed_form = l2_state is None and time_model != "critical"  # a cold Eq. 4 compaction needs no jobs
    compact = Launch(DEFAULT_BLOCK, profile.full_wave_grid(DEFAULT_BLOCK))

    def launch_of(level: int, phase: str) -> Launch:
        if phase == "compact":
            return compact
        if phase == "topo":
            return Launch(block, grid if grid is not None else profile.full_wave_grid(block))
        return expansion_launch(kernel, profile, frontiers.frontier(level).size, block, grid)

    def next_front(level: int) -> np.ndarray:
        return frontiers.frontier(level + 1) if level + 1 < frontiers.depth else frontiers.frontier(level)[:0]

    reused = spare_buffer()  # the predicted run's jobs, filled again launch after launch: no fresh pages to zero
    scratch = LaunchScratch(layout, profile, reused)
    split = SplitFill(graph.n, buffer=spare_buffer()) if cpus() >= 2 else None  # a large block's jobs on two CPUs

    def produce(run: int, level: int, phase: str, compaction: CompactionLaunch | None):
        """A launch, its jobs (None for a closed-form compaction; an expansion's in the predicted run are a view
        of `reused`, valid until the next launch is produced; a prior run's have a buffer of their own, as they
        may be kept) and instruction counts (None in a prior run)."""
        rehearsal = run + 1 < passes
        buffer = JobBuffer(0, 0) if rehearsal else reused
        if run and level == 0 and phase != "compact":  # between runs the level array is reset
            stamp.fill(-1)
        launch, front = launch_of(level, phase), frontiers.frontier(level)
        trace = instructions = None
        if phase == "topo":
            trace = kept.get(level, phase, rehearsal, lambda: topo_jobs(graph, levels, stamp, level, layout,
                                                                        launch.warps, buffer, split))
            if code is not None and not rehearsal:
                instructions = code.topo(trace, topo_lanes(levels, degrees, level, launch.warps)
                                         if code.diverges else None)
        elif phase == "expand":
            trace = kept.get(level, phase, rehearsal, lambda: expansion_jobs(graph, levels, stamp, level, front,
                                                                             expansion, layout, launch.warps, buffer,
                                                                             split))
            if code is not None and not rehearsal:
                lanes = expansion_lanes(expansion, degrees[front], launch.warps) if code.diverges else None
                instructions = code.expansion(trace, expansion.geometry, front.size,
                                              {**(lanes or {}), **phase_trips(expansion, degrees[front], launch.warps)})
        else:
            if code is not None and not rehearsal:
                instructions = compaction.instructions(code)
            if rehearsal or not closed_form:
                trace = kept.get(level, phase, rehearsal, compaction.trace)
        return launch, trace, instructions

    phases = ("expand", "compact") if kernel.data_driven else ("topo",)
    plan = [(run, level, phase) for run in range(passes) for level in range(frontiers.depth) for phase in phases]
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=frontiers.depth, desc=f"opm {kernel.label}", unit="level", leave=False)
    for run, level, phase in plan:
        trace = None  # the last launch's view of the buffer goes before the buffer is refilled (or regrown)
        if share_rows and phase == "compact" and (compaction_code, level) in shared.rows:
            rows, servers = shared.rows[compaction_code, level]
            for timing, row in zip(timings, rows):
                timing.rows.append(dict(row, kernel=kernel.label))
            server_rows.extend(servers)
            if bar is not None:
                bar.update()
            continue
        compaction = None
        if phase == "compact":  # another kernel's, or one of its own
            compaction = shared.launches.get((compaction_code, level)) if share_launches else None
            if compaction is None:
                made = kept.traces.get((level, phase))  # the prior run's, kept
                compaction = CompactionLaunch(graph.n, next_front(level), compact, layout, made)
        orders = compaction if share_launches else None  # interleaved jobs kept with the launch, to share
        launch, trace, instructions = produce(run, level, phase, compaction)
        rehearsal = run + 1 < passes  # a run before the predicted one: it only leaves the L2 as it finds it
        if run and level == 0 and phase != "compact":  # the reset level array is read back: it starts in the L2
            level_sectors = layout.array_sectors("level", graph.n)
            l2_state.hits(np.tile(level_sectors, 2))
            l2_state.written(level_sectors)
        if rehearsal:
            pass_through_l2(trace, l2_state, scratch, profile, orders)
            if orders is not None:
                shared.keep((compaction_code, level), compaction)
            if trace is not None and not kept.holds(level, phase):  # its memory serves the next launch's jobs
                held, trace = [trace], None
                recycle(held)
            continue
        loads = []
        if trace is None:
            counts, per_warp = compact_counts(graph.n, next_front(level), launch.warps, profile.dram_block_bytes)
            stored = compaction.stored()
        else:
            stored = compaction.stored() if compaction is not None else storing_blocks(stores_per_warp(trace),
                                                                                      launch.block)
            counts, misses_at, loads = simulate_launch_loads(trace, layout, profile, l2_model, l2_state, models,
                                                             scratch, orders)
            per_warp = loads[0][0] if loads else jobs_per_warp(trace)  # the pass's jobs per slot serve as well
            if misses_at is not None and phase != "compact":  # the miss-ratio curve is the expansions'
                mrc_misses += misses_at
                accesses += int(counts[:, 1].sum())
        if phase == "compact":
            front_size, front_edges = next_front(level).size, 0
        else:
            front_size, front_edges = frontiers.frontier(level).size, int(edge_sizes[level])
        for timing, launch_loads in zip(timings, loads or [None] * len(timings)):
            timing.add(level, kernel.label, phase, launch, front_size, front_edges, counts, per_warp, trace,
                       launch_loads, instructions, stored)
        server_rows.extend(_server_rows(level, phase, counts))
        if orders is not None:
            shared.keep((compaction_code, level), compaction)
        if share_rows and phase == "compact":
            shared.rows[compaction_code, level] = [timing.rows[-1] for timing in timings], server_rows[-len(SERVERS):]
        if bar is not None and phase == phases[-1]:
            bar.update()
    if bar is not None:
        bar.close()
    trace = None
    kept.let_go()
    for buffer in (reused,) if split is None else (reused, split.buffer):
        hand_back(buffer)
    mrc = None
    if l2_model == "lru":
        mrc = pd.DataFrame({"capacity_bytes": MRC_CAPACITIES_BYTES, "accesses": accesses, "misses": mrc_misses})
        mrc["miss_ratio"] = mrc["misses"] / max(accesses, 1)
    return [OpmResult(graph.name, graph.n, graph.m, int(source), kernel.label, timing.profile, l2_model,
                      pd.DataFrame(timing.rows, columns=PER_LEVEL_COLUMNS), pd.DataFrame(server_rows),
                      None if mrc is None else mrc.copy(), warm_l2, time_model,
                      None if measured is None else pd.DataFrame(timing.counted, columns=PER_LEVEL_COLUMNS))
            for timing in timings]
