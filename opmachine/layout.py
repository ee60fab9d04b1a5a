"""Where a modelled BFS kernel's arrays live in memory (DESIGN.md "Operator machine").

One layout concept, two instances. A `LayoutSpec` names the arrays in memory order, their
alignment and the unit addresses are counted in; every array holds 4-byte elements and starts at
its own aligned base, laid out one after another, the first at address 0 (virtual addresses: no
page mapping is modelled).

- `GPU_LAYOUT` (the CUDA kernels, seed 003 §6): num_nodes, row_start, edge_dst, level, queue, each
  256-byte aligned, counted in 32-byte sectors. Element i of an array lies in sector
  `base_sector + i // 8`, so coalescing a warp's lane addresses into sectors is integer arithmetic
  on element indices. `layout_for(n, m)` is this instance.
- `COUPLED_LAYOUT` (seed 001's coupled kernels, `gpu_validate/cuda/couplings.cu`): the queue-size and
  piece counters their atomics reserve slots with, row_start,
  edge_dst, level (the labels), the status bitmask (one bit per vertex), and two vertex and two edge
  queues of `simdmodel.couplings.queue_slots` ids each, which the launches take turns to read and write;
  256-byte aligned, in 32-byte sectors. `coupled_layout_for(n, m)` is this instance.
- `CPU_LAYOUT` (the serial kernel of seed 003 Listing 1, §4): row_start, edge_dst, level, each
  4096-byte (page) aligned, counted in bytes; the CPU trace turns byte addresses into cache-line
  ids of the profile's line size.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simdmodel.couplings import queue_slots
from simdmodel.errors import InputError
from simdmodel.graph import INDEX_LIMIT

ELEMENT_BYTES = 4
ALIGN_BYTES = 256
SECTOR_BYTES = 32
ELEMENTS_PER_SECTOR = SECTOR_BYTES // ELEMENT_BYTES

# The arrays a layout may hold. `num_nodes` is the one-word graph size a grid-stride loop over all nodes
# re-reads every step (seed 003 Fig. 4's ANI job: stores to `level` may alias it).
ARRAYS = ("num_nodes", "row_start", "edge_dst", "level", "queue", "counters", "bitmask", "vertex_queue",
          "vertex_queue_next", "edge_queue", "edge_queue_next")
COUPLED_QUEUES = ARRAYS[7:]
QUEUE_SIZE, PIECE_COUNT = 0, 8
"""Elements of `counters` (a coupled launch's atomics): its output queue's size and its pieces' count, in
sectors of their own (the GPU keeps them in two arrays)."""


def _array_lengths(n: int, m: int) -> dict[str, int]:
    """Elements of every array a modelled kernel may use, for n vertices and m directed edges."""
    slots = queue_slots(n, m)
    return {"num_nodes": 1, "row_start": n + 1, "edge_dst": m, "level": n, "queue": max(n, 1),
            "counters": PIECE_COUNT + 1, "bitmask": max(-(-n // 32), 1), **dict.fromkeys(COUPLED_QUEUES, slots)}


@dataclass(frozen=True)
class MemoryLayout:
    """Base address of each array and the addresses the layout spans, in `unit_bytes` units."""

    n: int
    m: int
    base_units: dict
    total_units: int
    unit_bytes: int

    @property
    def base_bytes(self) -> dict[str, int]:
        """Base byte address of each array."""
        return {name: base * self.unit_bytes for name, base in self.base_units.items()}

    @property
    def end_bytes(self) -> int:
        """Bytes the layout spans (every array's size rounded up to the alignment)."""
        return self.total_units * self.unit_bytes

    @property
    def base_sector(self) -> dict[str, int]:
        """Base sector of each array (a layout counted in 32-byte sectors, such as `layout_for`'s)."""
        self._need_sectors()
        return self.base_units

    @property
    def total_sectors(self) -> int:
        """Sectors the layout spans (a layout counted in 32-byte sectors)."""
        self._need_sectors()
        return self.total_units

    def sector_of(self, array: str, index: int) -> int:
        """Sector id holding element `index` of `array` (a layout counted in 32-byte sectors)."""
        return self.base_sector[array] + index // ELEMENTS_PER_SECTOR

    def array_sectors(self, array: str, elements: int) -> np.ndarray:
        """The sector ids holding elements 0 .. elements-1 of `array` (at least its first sector), ascending."""
        return np.arange(self.sector_of(array, 0), self.sector_of(array, max(elements - 1, 0)) + 1)

    def _need_sectors(self) -> None:
        if self.unit_bytes != SECTOR_BYTES:
            raise ValueError(f"this layout counts {self.unit_bytes}-byte units, not {SECTOR_BYTES}-byte sectors")


@dataclass(frozen=True)
class LayoutSpec:
    """How one kernel lays out its arrays: `arrays` in memory order, each of 4-byte elements starting
    on an `align_bytes` boundary (a multiple of `unit_bytes`), the first at 0; addresses in `unit_bytes`."""

    arrays: tuple[str, ...]
    align_bytes: int
    unit_bytes: int

    def __post_init__(self):
        unknown = [name for name in self.arrays if name not in ARRAYS]
        if unknown:
            raise ValueError(f"unknown array(s) {', '.join(unknown)} (known: {', '.join(ARRAYS)})")
        if self.unit_bytes < 1 or self.align_bytes % self.unit_bytes:
            raise ValueError(f"alignment {self.align_bytes} B is not a multiple of the {self.unit_bytes}-byte unit")

    def layout(self, n: int, m: int) -> MemoryLayout:
        """The layout of a graph with n vertices and m directed edges (4-byte row offsets, so m < 2**31)."""
        check_row_offsets(m)
        lengths = _array_lengths(n, m)
        base = {}
        offset_bytes = 0
        for name in self.arrays:
            base[name] = offset_bytes // self.unit_bytes
            size = lengths[name] * ELEMENT_BYTES
            offset_bytes += -(-size // self.align_bytes) * self.align_bytes
        return MemoryLayout(n, m, base, offset_bytes // self.unit_bytes, self.unit_bytes)


GPU_LAYOUT = LayoutSpec(("num_nodes", "row_start", "edge_dst", "level", "queue"), align_bytes=ALIGN_BYTES, unit_bytes=SECTOR_BYTES)
COUPLED_LAYOUT = LayoutSpec(("counters", "row_start", "edge_dst", "level", "bitmask", *COUPLED_QUEUES), align_bytes=ALIGN_BYTES,
                            unit_bytes=SECTOR_BYTES)
CPU_LAYOUT = LayoutSpec(("row_start", "edge_dst", "level"), align_bytes=4096, unit_bytes=1)


def check_row_offsets(m: int) -> None:
    """The modelled kernels (GPU and CPU) keep row offsets in 4 bytes: refuse m beyond that."""
    if m > INDEX_LIMIT:
        raise InputError(f"graph has {m} edges; the modelled kernels use 4-byte row offsets (at most {INDEX_LIMIT})")


def layout_for(n: int, m: int) -> MemoryLayout:
    """The GPU layout of a graph with n vertices and m directed edges, in 32-byte sectors (`GPU_LAYOUT`)."""
    return GPU_LAYOUT.layout(n, m)


def coupled_layout_for(n: int, m: int) -> MemoryLayout:
    """The layout of seed 001's coupled kernels on a graph with n vertices and m directed edges (`COUPLED_LAYOUT`)."""
    return COUPLED_LAYOUT.layout(n, m)
