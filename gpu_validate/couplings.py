"""Seed 001's coupled BFS kernels on the GPU (`cuda/couplings.cu`, `simdmodel.couplings`), checked and timed.

`GpuCoupledBfs` holds one graph on the device with its status (labels, bitmask), two vertex and two edge
queues, and runs a whole BFS by one coupling: the launches `Coupling.start` and `Coupling.iteration`
name (each expanding one followed by a `pieces` launch where the graph has lists longer than
BIG_LIST; with `spread`, the default, a launch of fewer CTAs than a full wave leaves lists longer than a
warp to its `pieces` launch: `simdmodel.couplings.big_list`), each reading its input queue's size from
the device and adding its output's (queue sizes vary from run to run: lookups race). The first run of a
source is the plan: the host reads each output size to size the next launch (one full wave at most; a
grid-stride loop takes the rest) and to stop at an empty queue. Timed runs replay the plan's launches
back to back (`gpu_validate.timing`); the instrumented build counts each launch's explicit traffic per
category (`simdmodel.couplings.TRAFFIC`).
After every run the levels are compared with the CPU BFS (LevelMismatch) and a queue that ran out of
room is an error (QueueOverflow): no timing of a wrong or truncated BFS is reported.
"""
from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from opmachine.kernels import DEFAULT_BLOCK
from opmachine.layout import check_row_offsets
from simdmodel.algorithms import BFS
from simdmodel.couplings import (PIECE, TRAFFIC, Coupling, QueueOverflow, QueueTurns, big_list, has_long_lists,
                                 queue_capacity, with_pieces)

from . import modules
from .bfs import UNVISITED, LevelMismatch, check_levels
from .device import require_gpu
from .timing import time_launches

MAX_LAUNCHES = 1 << 16


class GpuCoupledBfs:
    """One graph on the GPU and the launches of `coupling` on it."""

    def __init__(self, graph, coupling: Coupling, profile, instrumented: bool = False,
                 bitmask_loads: str = modules.DEFAULT_BUILD[0], bitmask_stores: str = modules.DEFAULT_BUILD[1],
                 spread: bool = True):
        """`bitmask_loads`, `bitmask_stores`: the build (`modules.BITMASK_LOADS`, `BITMASK_STORES`): whether the
        atomic lookup reads the bitmask through the L1 or the L2 only, and who stores its bits (by default
        only the lane that claims a vertex, with an atomic OR). `spread`: launches of fewer CTAs than a full
        wave leave lists longer than a warp as pieces."""
        cp = require_gpu()
        check_row_offsets(graph.m)
        self.cp = cp
        self.graph = graph
        self.coupling = coupling
        self.instrumented = instrumented
        n = graph.n
        self.capacity = queue_capacity(graph)
        self.row_start = cp.asarray(graph.indptr.astype(np.int32))
        self.edge_dst = cp.asarray(graph.indices.astype(np.int32, copy=False))
        self.level = cp.empty(n, dtype=cp.int32)
        self.mask = cp.empty((n + 31) // 32 * 4, dtype=cp.uint8)  # whole words: the claim build ORs bits into them
        self.queues = {"vertex": [cp.empty(self.capacity, dtype=cp.int32) for _ in range(2)],
                       "edge": [cp.empty(self.capacity, dtype=cp.int32) for _ in range(2)]}
        self.sizes = cp.zeros(MAX_LAUNCHES + 1, dtype=cp.int32)
        self.piece_capacity = self.capacity // PIECE + n + 1  # a long list of d edges makes <= d / PIECE + 1
        self.pieces = cp.empty((self.piece_capacity, 4), dtype=cp.int32)
        self.piece_counts = cp.zeros(MAX_LAUNCHES + 1, dtype=cp.int32)
        self.long_lists = has_long_lists(graph)
        self.spread = spread
        self.overflow = cp.zeros(1, dtype=cp.int32)
        self.traffic = cp.zeros(2 * len(TRAFFIC), dtype=cp.uint64)
        self.full_wave = profile.full_wave_grid(DEFAULT_BLOCK)
        self.resident_threads = self.full_wave * DEFAULT_BLOCK
        mode = coupling.mode_index
        self.kernels = {phase: modules.coupling(phase, mode, instrumented, bitmask_loads, bitmask_stores)
                        for phase in ("expand", "contract", "expand-contract", "contract-expand", "pieces",
                                      "lookup-pieces")}
        self._plans: dict[int, pd.DataFrame] = {}
        self._references: dict[int, np.ndarray] = {}

    @property
    def label(self) -> str:
        return self.coupling.label

    def reference(self, source: int) -> np.ndarray:
        """The CPU BFS's levels from `source`, which every run is checked against (computed once a source)."""
        if source not in self._references:
            self._references[source] = BFS.reference(BFS.rounds(self.graph, source, "sorted"))
        return self._references[source]

    # -- launches ----------------------------------------------------------------------------------

    def _reset(self, source: int) -> None:
        self.level.fill(UNVISITED)
        self.level[source] = 0
        self.mask.fill(0)
        self.mask[source >> 3] = 1 << (source & 7)
        self.queues["vertex"][0][0] = source
        self.sizes.fill(0)
        self.sizes[0] = 1
        self.piece_counts.fill(0)
        self.overflow.fill(0)

    def _launch(self, step: dict) -> None:
        """One launch of a run: `step` names its phase, level, grid, queues (`slots`: (kind, index) in
        and out), the size counters it reads and adds to (`sizes`: in, out) and its pieces counter."""
        phase, (into, out_of) = step["phase"], step["slots"]
        source, target = self.queues[into[0]][into[1]], self.queues[out_of[0]][out_of[1]]
        size_in, size_out = self.sizes[step["sizes"][0]:], self.sizes[step["sizes"][1]:]
        pieces = (self.pieces, self.piece_counts[step["pieces"]:], np.int32(self.piece_capacity))
        posting = (*pieces, np.int32(step.get("big_list", 0)))  # an expanding launch's
        out = (target, size_out, np.int32(self.capacity), self.overflow)
        status = (self.level, self.mask, np.int32(step["level"] + 1))
        if phase == "expand":
            args = (source, size_in, self.row_start, self.edge_dst, *out, *posting, self.traffic)
        elif phase == "contract":
            args = (source, size_in, *status, *out, self.traffic)
        elif phase == "pieces" and into[0] == "edge":
            args = (*pieces, self.edge_dst, target, self.traffic)
        elif phase == "pieces":
            phase = "lookup-pieces"
            args = (*pieces, self.edge_dst, *status, *out, self.traffic)
        else:
            args = (source, size_in, self.row_start, self.edge_dst, *status, *out, *posting, self.traffic)
        self.kernels[phase]((step["grid"],), (DEFAULT_BLOCK,), args)

    def plan(self, source: int, on_launch=None) -> pd.DataFrame:
        """The launches of a BFS from `source` as its first run makes them, checked: kernel, source, level,
        phase, grid, input (queue entries, or a `pieces` launch's pieces), output (the queue's size after it)
        and `_step` (what `_launch` needs to run it again). `on_launch(row)` after each launch may add to
        its row (the instrumented counts)."""
        self._reset(source)
        rows, turns = [], QueueTurns()
        counter, pieces = 0, 0

        def run(level, phase, size):
            nonlocal counter, pieces
            if phase == "pieces":  # the expanding launch's long lists, into its own output queue
                posted = int(self.piece_counts[pieces].get())
                step = {"phase": phase, "level": level, "slots": turns.step(phase), "sizes": (counter, counter),
                        "pieces": pieces, "grid": max(1, min(self.full_wave, posted))}
                pieces += 1
            else:
                posted = size
                step = {"phase": phase, "level": level, "slots": turns.step(phase),
                        "sizes": (counter, counter + 1), "pieces": pieces,
                        "grid": max(1, min(self.full_wave, -(-size // DEFAULT_BLOCK))),
                        "big_list": big_list(size, self.full_wave, self.spread, self.long_lists)}
                counter += 1
            if on_launch is not None:
                self.traffic.fill(0)
            self._launch(step)
            out = int(self.sizes[step["sizes"][1]].get())
            row = {"kernel": self.label, "source": int(source), "level": level, "phase": phase,
                   "grid": step["grid"], "input": posted, "output": out, "_step": step}
            if on_launch is not None:
                on_launch(row)
            rows.append(row)
            self._check_overflow(source, level)
            if counter >= MAX_LAUNCHES - 1:
                raise LevelMismatch(f"{self.label} from {source} on {self.graph.name}: more than {MAX_LAUNCHES} "
                                    "launches")
            return out

        size = 1
        for phase in with_pieces(self.coupling.start(), self.long_lists):
            size = run(0, phase, size)
        level, reference = 0, self.reference(source)
        depth = int(reference.max()) + 1
        while size:
            if level > depth:
                raise LevelMismatch(f"{self.label} from {source} on {self.graph.name}: still running after "
                                    f"{level} iterations, the BFS has {depth} levels")
            for phase in with_pieces(self.coupling.iteration(size, self.resident_threads), self.long_lists):
                size = run(level, phase, size)
            level += 1
        self._check(source, reference)
        return pd.DataFrame(rows)

    def _check_overflow(self, source: int, level: int) -> None:
        if int(self.overflow.get()[0]):
            raise QueueOverflow(f"{self.label} from {source} on {self.graph.name}: a queue ran out of its "
                                f"{self.capacity:,} slots at level {level} (redundant expansion; seed 001 Fig. 7)")

    def _check(self, source: int, reference: np.ndarray) -> None:
        check_levels(self.level.get(), reference, f"{self.label} BFS from {source} on {self.graph.name}", "timing")

    def _plan(self, source: int) -> pd.DataFrame:
        if source not in self._plans:
            self._plans[source] = self.plan(source)
        return self._plans[source]

    # -- whole runs ----------------------------------------------------------------------------------

    def time_bfs(self, source: int, repeats: int = 5, warmup: int = 1) -> pd.DataFrame:
        """Per-launch time of a BFS from `source`: the plan, `warmup` untimed replays, then the median of
        `repeats` timed ones (time_ns, time_ns_min), with each launch's output size over the timed runs
        (output_min, output_max: races differ from run to run)."""
        if self.instrumented:
            raise ValueError("time the plain build, not the instrumented one")
        plan = self._plan(source)
        reference = self.reference(source)
        launches = [functools.partial(self._launch, step) for step in plan["_step"]]
        samples, outputs = [], []
        for run in range(warmup + repeats):
            self._reset(source)
            times = time_launches(self.cp, launches)
            self._check_overflow(source, int(plan["level"].iloc[-1]))
            self._check(source, reference)
            if run >= warmup:
                samples.append(times)
                sizes = self.sizes.get()
                outputs.append([sizes[step["sizes"][1]] for step in plan["_step"]])
        table = plan.drop(columns="_step").copy()
        times, outputs = np.array(samples), np.array(outputs)
        table["time_ns"] = np.median(times, axis=0)
        table["time_ns_min"] = times.min(axis=0)
        table["output_min"] = outputs.min(axis=0)
        table["output_max"] = outputs.max(axis=0)
        table["repeats"] = repeats
        return table

    def count_bfs(self, source: int) -> pd.DataFrame:
        """The plan of a BFS from `source` with each launch's traffic: words per TRAFFIC category, and
        `inst_<category>` warp-level instructions (instrumented build)."""
        if not self.instrumented:
            raise ValueError("traffic counters need the instrumented build (instrumented=True)")

        def on_launch(row):
            counts = self.traffic.get().astype(np.int64)
            for j, name in enumerate(TRAFFIC):
                row[name] = int(counts[j])
                row[f"inst_{name}"] = int(counts[len(TRAFFIC) + j])

        return self.plan(source, on_launch).drop(columns="_step")
