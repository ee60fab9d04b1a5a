"""Run the modelled BFS kernels on the GPU, level by level, and check them against the CPU BFS.

`GpuBfs` holds one graph on the device and runs a whole BFS from a source with one kernel:
`topo` (one launch per round) or a data-driven mapping (an expansion of the sorted queue and a
compaction into the next queue per round), with the launch geometry the model assumes (blocks
of 256; `topo` and compaction one full wave; an expansion the blocks its frontier needs, at most
one full wave; opmachine.predict.expansion_launch). After every run the levels are compared with
the CPU BFS and a mismatch raises LevelMismatch: no timing of a wrong BFS is ever reported.

- `time_bfs`: CUDA events around each launch, warm-up runs, then the median over repeats. The
  timed runs replay the launch sequence of the first run (the frontier sizes are known by then)
  in batches held back by a spinning kernel until the whole batch is queued, so each launch is
  timed back to back on the GPU, without the host's per-launch overhead or the size read-back.
- `count_bfs`: the instrumented build (-DCOUNT_LANES=1): lane slots, useful lanes and the warp-level
  memory instructions per server of every launch.
- `replay_round`: one round set up from the CPU BFS state, for Nsight Compute to profile sampled
  levels of a deep BFS without running the rest; the levels it leaves are checked too.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from opmachine.kernels import DEFAULT_BLOCK, Kernel, compact_chunks_per_warp
from opmachine.layout import check_row_offsets
from opmachine.predict import expansion_launch
from simdmodel.errors import InputError
from simdmodel.algorithms import BFS
from simdmodel.frontier import Frontiers

from . import modules
from .device import require_gpu
from .timing import time_launches

UNVISITED = -1
ARRIVAL_SLOTS = 1 << 16
COMPACT_SHARED_LIMIT_BYTES = 48 * 1024  # dynamic shared memory a launch gets without opting in
COMPACT_SCAN_ITEMS = 5  # cuda/compact.cu's SCAN_ITEMS: one block scans the counts of at most 5 * 256 blocks
SERVER_COUNTERS = ("ani", "nf1", "erl", "edl", "nf2", "op")  # counters[2:8] in bfs_common.cuh
LAUNCH_COLUMNS = ("kernel", "source", "level", "phase", "block", "grid", "frontier_vertices")
TIME_COLUMNS = (*LAUNCH_COLUMNS, "time_ns", "time_ns_min", "repeats")
COUNT_COLUMNS = (*LAUNCH_COLUMNS, "lane_slots", "useful_lanes", *(f"gpu_jobs_{s}" for s in SERVER_COUNTERS))


class LevelMismatch(RuntimeError):
    """A GPU BFS whose levels differ from the CPU BFS: a kernel bug, never a timing."""


class GpuBfs:
    """One graph on the GPU, its BFS arrays, and the launches of `kernel` on it."""

    def __init__(self, graph, kernel: Kernel, profile, instrumented: bool = False):
        cp = require_gpu()
        check_row_offsets(graph.m)
        self.cp = cp
        self.graph = graph
        self.kernel = kernel
        self.profile = profile
        self.instrumented = instrumented
        n = graph.n
        self.n = n
        self.num_nodes = cp.asarray(np.array([n], dtype=np.int32))
        self.row_start = cp.asarray(graph.indptr.astype(np.int32))
        self.edge_dst = cp.asarray(graph.indices.astype(np.int32, copy=False))
        self.level = cp.empty(n, dtype=cp.int32)
        self.queue = cp.empty(max(n, 1), dtype=cp.int32)
        self.counters = cp.zeros(8, dtype=cp.uint64)
        self.full_wave = profile.full_wave_grid(DEFAULT_BLOCK)
        self.chunks_per_warp = compact_chunks_per_warp(n, self.full_wave * DEFAULT_BLOCK // 32)
        if self.compact_shared_bytes() > COMPACT_SHARED_LIMIT_BYTES:
            raise InputError(f"{graph.name}: {n} vertices need {self.chunks_per_warp} compaction chunks per warp, "
                             f"more than the kernel's {COMPACT_SHARED_LIMIT_BYTES} bytes of shared memory hold")
        if self.full_wave > COMPACT_SCAN_ITEMS * DEFAULT_BLOCK:
            raise InputError(f"a full wave of {self.full_wave} blocks is more than the compaction's scan takes "
                             f"({COMPACT_SCAN_ITEMS * DEFAULT_BLOCK}): raise SCAN_ITEMS in cuda/compact.cu")
        # The compaction's words (cuda/compact.cu): each tile's count, each tile's offset, the total, and one
        # word a thread of the block that writes the offsets
        self.status = cp.zeros(2 * self.full_wave + 1 + DEFAULT_BLOCK, dtype=cp.uint64)
        self.arrivals = cp.zeros(ARRIVAL_SLOTS, dtype=cp.uint32)  # one arrival counter per compaction launch
        self.epoch = 0
        if kernel.data_driven:
            if kernel.expansion.block_size not in (None, DEFAULT_BLOCK):
                raise InputError(f"{kernel.label}: the CUDA kernels run blocks of {DEFAULT_BLOCK} threads, "
                                 f"not {kernel.expansion.block_size}")
            self.expand = modules.expansion(kernel.expansion, instrumented)
            self.compact = modules.function("compact", instrumented)
            self._check_compaction_resident(cp, graph.name, profile.sms)
        else:
            self.expand = modules.function("topo", instrumented)
        self._frontiers: dict[int, Frontiers] = {}

    def frontiers(self, source: int) -> Frontiers:
        """The CPU BFS from `source` (sorted frontiers): the reference every GPU run is checked against."""
        if source not in self._frontiers:
            self._frontiers[source] = BFS.rounds(self.graph, source, "sorted")
        return self._frontiers[source]

    # -- one launch each -------------------------------------------------------------------------

    def _launch_topo(self, level: int):
        self.expand((self.full_wave,), (DEFAULT_BLOCK,),
                    (self.num_nodes, np.int32(self.n), self.row_start, self.edge_dst, self.level, np.int32(level),
                     self.counters))
        return self.full_wave

    def _launch_expand(self, size: int, level: int):
        grid = expansion_launch(self.kernel, self.profile, size).grid
        self.expand((grid,), (DEFAULT_BLOCK,),
                    (self.queue, np.int32(size), self.row_start, self.edge_dst, self.level, np.int32(level),
                     self.counters))
        return grid

    def _check_compaction_resident(self, cp, name: str, sms: int) -> None:
        """InputError unless a compaction's full wave fits on the GPU at once: each block waits for the
        offset that the last block to arrive writes, so a block that could not start would hang them all."""
        occupancy = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor
        per_sm = occupancy(self.compact.kernel.ptr, DEFAULT_BLOCK, self.compact_shared_bytes())
        if per_sm * sms < self.full_wave:
            raise InputError(f"{name}: a compaction of {self.n} vertices fits {per_sm} blocks an SM "
                             f"({self.compact_shared_bytes()} bytes of shared memory each), fewer than its "
                             f"full wave of {self.full_wave} blocks needs at once")

    def compact_shared_bytes(self) -> int:
        """Dynamic shared memory of a compaction block: one passing-lane mask per chunk of its tile."""
        return 4 * self.chunks_per_warp * (DEFAULT_BLOCK // 32)

    def launch_compact(self, level: int):
        """One compaction launch: the nodes with level `level + 1`, ascending, into the queue."""
        self.epoch += 1
        if self.epoch >= 2**31:
            self.status.fill(0)
            self.epoch = 1
        slot = self.epoch % ARRIVAL_SLOTS
        if slot == 0:  # every slot used once: clear them all (a launch's counter must start at 0)
            self.arrivals.fill(0)
        self.compact((self.full_wave,), (DEFAULT_BLOCK,),
                     (self.num_nodes, np.int32(self.n), self.level, np.int32(level + 1), self.queue, self.status,
                      np.uint32(self.epoch), self.arrivals[slot:slot + 1], np.int32(self.chunks_per_warp),
                      self.counters),
                     shared_mem=self.compact_shared_bytes())
        return self.full_wave

    def next_size(self) -> int:
        """The next frontier's size: the total the last compaction wrote."""
        return int(self.status[2 * self.full_wave].get()) & 0xFFFFFFFF

    # -- whole runs ------------------------------------------------------------------------------

    def _reset(self, source: int) -> None:
        self.level.fill(UNVISITED)
        self.level[source] = 0
        self.queue[0] = source

    def _run(self, source: int, on_launch) -> list[dict]:
        """One whole BFS; `on_launch()` runs before each launch and returns a callable run right after it."""
        front = self.frontiers(source)
        self._reset(source)
        rows = []
        level, size = 0, 1
        while True:
            if not self.kernel.data_driven:
                done = on_launch()
                grid = self._launch_topo(level)
                rows.append(self._row(source, level, "topo", grid, front_size(front, level), done()))
                level += 1
                if level > front.depth or not bool((self.level == level).any()):
                    break
                continue
            done = on_launch()
            grid = self._launch_expand(size, level)
            rows.append(self._row(source, level, "expand", grid, size, done()))
            done = on_launch()
            grid = self.launch_compact(level)
            after = done()
            size = self.next_size()
            rows.append(self._row(source, level, "compact", grid, size, after))
            level += 1
            if size == 0 or level > front.depth:
                break
        self._check(source, front)
        return rows

    def _row(self, source, level, phase, grid, size, after) -> dict:
        return {**_key(self.kernel, source, level, phase), "block": DEFAULT_BLOCK, "grid": int(grid),
                "frontier_vertices": int(size), "_after": after}

    def _check(self, source: int, front: Frontiers, through: int | None = None) -> None:
        """LevelMismatch unless the GPU's levels equal the CPU BFS's `front`: every vertex's, or with
        `through` (after a replayed round) those of levels 0..`through`, every other vertex unvisited."""
        levels = BFS.reference(front)
        expected = levels if through is None else np.where((levels >= 0) & (levels <= through), levels, UNVISITED)
        run, lost = ("BFS", "timing") if through is None else (f"round {through - 1}", "counters")
        check_levels(self.level.get(), expected, f"{self.kernel.label} {run} from {source} on {self.graph.name}", lost)

    def time_bfs(self, source: int, repeats: int = 5, warmup: int = 1) -> pd.DataFrame:
        """Per-launch time of a BFS from `source`: CUDA events, `warmup` untimed runs, median of `repeats`."""
        if self.instrumented:
            raise ValueError("time the plain build, not the instrumented one")
        plan = pd.DataFrame(self._run(source, lambda: (lambda: None))).drop(columns="_after")
        for _ in range(warmup - 1):
            self._run(source, lambda: (lambda: None))
        samples = []
        for _ in range(repeats):
            self._reset(source)
            samples.append(self._timed_replay(plan))
            self._check(source, self.frontiers(source))
        times = np.array(samples, dtype=np.float64)
        table = plan.copy()
        table["time_ns"] = np.median(times, axis=0)
        table["time_ns_min"] = times.min(axis=0)
        table["repeats"] = repeats
        return table[list(TIME_COLUMNS)]

    def _timed_replay(self, plan: pd.DataFrame) -> list[float]:
        """Run the launches of `plan` again, back to back (gpu_validate.timing); ns per launch."""
        launches = []
        for row in plan.to_dict(orient="records"):
            if row["phase"] == "topo":
                launches.append(functools.partial(self._launch_topo, row["level"]))
            elif row["phase"] == "expand":
                launches.append(functools.partial(self._launch_expand, row["frontier_vertices"], row["level"]))
            else:
                launches.append(functools.partial(self.launch_compact, row["level"]))
        return time_launches(self.cp, launches)

    def count_bfs(self, source: int) -> pd.DataFrame:
        """Lane slots, useful lanes and jobs per server of every launch (instrumented build)."""
        if not self.instrumented:
            raise ValueError("lane counters need the instrumented build (instrumented=True)")

        def on_launch():
            self.counters.fill(0)
            return lambda: self.counters.get()

        rows = self._run(source, on_launch)
        for row in rows:
            counts = row.pop("_after").astype(np.int64)
            row["lane_slots"], row["useful_lanes"] = int(counts[0]), int(counts[1])
            for k, server in enumerate(SERVER_COUNTERS):
                row[f"gpu_jobs_{server}"] = int(counts[2 + k])
        return pd.DataFrame(rows, columns=list(COUNT_COLUMNS))

    def replay_round(self, source: int, level: int) -> list[dict]:
        """Run round `level` alone from the CPU BFS state before it (levels <= `level` set, the sorted
        frontier in the queue): the same launches as in the whole BFS, for profiling sampled levels.
        Afterwards the levels <= `level` + 1 must equal the CPU BFS's, every other vertex unvisited,
        else LevelMismatch: a profiled round is checked like every timed run."""
        front = self.frontiers(source)
        state = np.where((front.levels >= 0) & (front.levels <= level), front.levels, UNVISITED).astype(np.int32)
        self.level.set(state)
        frontier = front.frontier(level)
        if frontier.size:
            self.queue[: frontier.size].set(frontier.astype(np.int32))
        if not self.kernel.data_driven:
            grid = self._launch_topo(level)
            rows = [{**_key(self.kernel, source, level, "topo"), "grid": grid}]
        else:
            grid = self._launch_expand(frontier.size, level)
            rows = [{**_key(self.kernel, source, level, "expand"), "grid": grid}]
            grid = self.launch_compact(level)
            rows.append({**_key(self.kernel, source, level, "compact"), "grid": grid})
        self._check(source, front, through=level + 1)
        return rows


def check_levels(got: np.ndarray, expected: np.ndarray, run: str, lost: str) -> None:
    """LevelMismatch naming `run` (which kernel, round or BFS, source, graph) and the first wrong vertex
    unless the GPU's levels `got` equal the CPU BFS's `expected`: then no `lost` (timing, counters) is reported."""
    if not np.array_equal(got, expected):
        bad = np.flatnonzero(got != expected)
        v = int(bad[0])
        raise LevelMismatch(f"{run}: {bad.size} vertices have wrong levels (first: vertex {v}, GPU {int(got[v])}, "
                            f"CPU {int(expected[v])}); no {lost} reported")


def _key(kernel, source, level, phase) -> dict:
    return {"kernel": kernel.label, "source": int(source), "level": int(level), "phase": phase}


def front_size(front: Frontiers, level: int) -> int:
    return int(front.vertex_frontier_sizes()[level]) if level < front.depth else 0
