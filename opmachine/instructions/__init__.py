"""Warp instructions of each launch, counted from the compiled kernels' SASS (package data `opmachine/sass`).

`listing` reads an `nvdisasm` listing, `blocks` finds how often each basic block runs (the CUDA
sources' `// trips:` markers on loops and branches), `code` sums a kernel's instructions per trip
event, `trips` gives each launched warp's trips from the launch's jobs and geometry. `LaunchCode`
ties them together for one kernel on one profile's architecture.
"""
from __future__ import annotations

import functools
import importlib.resources
from dataclasses import dataclass

import numpy as np

from .blocks import block_events
from .code import WAITS, KernelCode, kernel_code, trip_matrix
from .listing import ALU_PIPE, CLASSES, Listing, instruction_class, load_listing, parse_listing
from .trips import (compact_trips, coupled_trips, expansion_lanes, expansion_trips, group_lanes, jobs_per_server,
                    phase_trips, segment_lanes, steps_per_warp, topo_lanes, topo_trips)

__all__ = ["ALU_PIPE", "CLASSES", "WAITS", "KernelCode", "LaunchCode", "Listing", "WarpInstructions", "arch_of",
           "compact_trips", "coupled_trips", "expansion_lanes", "expansion_trips", "group_lanes", "has_listing",
           "hop_cycles", "instruction_class", "jobs_per_server", "kernel_code", "listing_name", "load_listing",
           "parse_listing", "phase_trips", "segment_lanes", "steps_per_warp", "topo_lanes", "topo_trips", "trip_matrix"]


def has_listing(kernel: str, arch: str) -> bool:
    """Whether the package holds a listing of `kernel` for `arch`."""
    return importlib.resources.files("opmachine").joinpath("sass", arch, f"{kernel}.sass").is_file()


def arch_of(profile) -> str | None:
    """`sm_XY` of a GPU profile whose architecture has SASS listings in the package, else None."""
    capability = getattr(profile, "compute_capability", None)
    if not capability:
        return None
    arch = "sm_" + capability.replace(".", "")
    folder = importlib.resources.files("opmachine").joinpath("sass", arch)
    return arch if folder.is_dir() else None


@functools.cache
def hop_cycles(arch: str) -> float | None:
    """Cycles one hop of the memory microbenchmarks' pointer chase (`chase`, gpu_validate/cuda/
    microbench.cu) spends issuing its own instructions: the scheduled stall cycles of the chase loop's
    unrolled body (the `hop` block with the most loads) per load. The one-warp latencies measured with
    that chase include them; None where the architecture has no such listing."""
    if not has_listing("chase", arch):
        return None
    listing = load_listing("chase", arch)
    bodies = [listing.instructions[b.first:b.end] for b in block_events(listing) if b.event == "hop"]
    body = max(bodies, key=lambda code: sum(ins.cls == "global_ld" for ins in code))
    loads = sum(ins.cls == "global_ld" for ins in body)
    return sum(ins.stall for ins in body) / loads if loads else None


def listing_name(mapping) -> str:
    """The listing of an expansion by `mapping`: its label with the block-size parameter at its default
    (the CTA size of `scan-C` is the launch's block size, not a different binary)."""
    spec = mapping.spec
    values = [p.default if p.binds_block else v for p, v in zip(spec.params, mapping.params)]
    return type(mapping)(spec.name, *values).label


@dataclass(frozen=True)
class WarpInstructions:
    """One launch per launched warp, from its trips through the kernel's code (`code.trip_matrix`). Each
    figure is computed when first asked for: the per-class table (warps x CLASSES) is the costly one,
    and the time model needs only each warp's total, ALU-pipe and shared accesses, stall cycles and waits. The
    counts are whole numbers, so any order of summing gives the same floats."""

    trips: np.ndarray  # events x warps
    code: KernelCode

    @functools.cached_property
    def by_class(self) -> np.ndarray:
        """Warps x CLASSES."""
        return self.trips.T @ self.code.counts

    @functools.cached_property
    def stall_cycles(self) -> np.ndarray:
        return self.trips.T @ self.code.stall_cycles

    @functools.cached_property
    def waits(self) -> np.ndarray:
        """Warps x WAITS."""
        return self.trips.T @ self.code.waits

    @functools.cached_property
    def per_warp(self) -> np.ndarray:
        """Warp instructions of each warp, all classes."""
        return self.trips.T @ self.code.counts.sum(axis=1)

    @functools.cached_property
    def alu_pipe_per_warp(self) -> np.ndarray:
        """ALU-pipe warp instructions of each warp (`listing.ALU_PIPE`)."""
        return self.trips.T @ self.code.alu_pipe

    @functools.cached_property
    def shared_per_warp(self) -> np.ndarray:
        """Shared-memory loads and stores of each warp."""
        counts = self.code.counts
        return self.trips.T @ (counts[:, CLASSES.index("shared_ld")] + counts[:, CLASSES.index("shared_st")])

    def totals(self) -> dict:
        """The launch's `inst_executed`, `shared_ld_inst`, `shared_st_inst` (ncu's names, minus the prefix) and
        `alu_pipe_inst` (ncu's `sm__inst_executed_pipe_alu`)."""
        trips = self.trips.sum(axis=1)
        total = trips @ self.code.counts
        return {"inst_executed": float(total.sum()), "shared_ld_inst": float(total[CLASSES.index("shared_ld")]),
                "shared_st_inst": float(total[CLASSES.index("shared_st")]),
                "alu_pipe_inst": float(trips @ self.code.alu_pipe)}


@dataclass(frozen=True)
class LaunchCode:
    """The compiled code of a BFS kernel's launches on one architecture: its expansion (or `topo`) and,
    for a data-driven kernel, the compaction."""

    arch: str
    main: KernelCode
    compact: KernelCode | None

    @classmethod
    def for_kernel(cls, kernel, profile) -> LaunchCode | None:
        """None when the profile's architecture has no listings (the papers' GPUs, CPU profiles) or the
        kernel has none (a group size the validation does not build, a strategy with no CUDA kernel)."""
        arch = arch_of(profile)
        if arch is None:
            return None
        if not kernel.data_driven:
            return cls(arch, kernel_code("topo", arch), None) if has_listing("topo", arch) else None
        name = listing_name(kernel.expansion)
        if not (has_listing(name, arch) and has_listing("compact", arch)):
            return None
        return cls(arch, kernel_code(name, arch), kernel_code("compact", arch))

    def topo(self, trace, lanes: dict | None = None) -> WarpInstructions:
        """`lanes`: the launch's `trips.topo_lanes` (None: no divergence counted)."""
        return WarpInstructions(trip_matrix(self.main, {**topo_trips(trace), **(lanes or {})}), self.main)

    def expansion(self, trace, geometry, front_size: int, lanes: dict | None = None) -> WarpInstructions:
        """`lanes`: the launch's trips beyond its jobs': `trips.expansion_lanes` (None: no divergence
        counted) and `trips.phase_trips`."""
        trips = expansion_trips(trace, geometry, front_size)
        return WarpInstructions(trip_matrix(self.main, {**trips, **(lanes or {})}), self.main)

    @property
    def diverges(self) -> bool:
        """Whether the main kernel's lanes meet again at a warp sync after their loop (`code.DIVERGENCE`)."""
        return "regroup" in self.main.events

    def compaction(self, steps, stores, block: int) -> WarpInstructions:
        """From each warp's steps and stores (`kernels.compact_warp_steps`)."""
        return WarpInstructions(trip_matrix(self.compact, compact_trips(steps, stores, block)), self.compact)
