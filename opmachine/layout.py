"""Where a BFS kernel's arrays live in GPU memory, in 32-byte sectors (DESIGN.md "Operator machine").

Every array holds 4-byte elements and starts at its own 256-byte-aligned base, laid out one after
another in a fixed order. Element i of an array lies in sector `base_sector + i // 8`, so
coalescing a warp's lane addresses into sectors is integer arithmetic on element indices.
"""
from __future__ import annotations

from dataclasses import dataclass

from simdmodel.errors import InputError
from simdmodel.graph import INDEX_LIMIT

ELEMENT_BYTES = 4
ALIGN_BYTES = 256
SECTOR_BYTES = 32
ELEMENTS_PER_SECTOR = SECTOR_BYTES // ELEMENT_BYTES

# Array order in memory. `num_nodes` is the one-word graph size a grid-stride loop over all nodes
# re-reads every step (seed 003 Fig. 4's ANI job: stores to `level` may alias it).
ARRAYS = ("num_nodes", "row_start", "edge_dst", "level", "queue")


@dataclass(frozen=True)
class MemoryLayout:
    """Base sector of each array and the total sectors the layout spans."""

    n: int
    m: int
    base_sector: dict
    total_sectors: int

    def sector_of(self, array: str, index: int) -> int:
        """Sector id holding element `index` of `array`."""
        return self.base_sector[array] + index // ELEMENTS_PER_SECTOR


def _lengths(n: int, m: int) -> dict:
    return {"num_nodes": 1, "row_start": n + 1, "edge_dst": m, "level": n, "queue": max(n, 1)}


def check_row_offsets(m: int) -> None:
    """The modelled kernels (GPU and CPU) keep row offsets in 4 bytes: refuse m beyond that."""
    if m > INDEX_LIMIT:
        raise InputError(f"graph has {m} edges; the modelled kernels use 4-byte row offsets (at most {INDEX_LIMIT})")


def layout_for(n: int, m: int) -> MemoryLayout:
    """The layout of a graph with n vertices and m directed edges (4-byte row offsets, so m < 2**31)."""
    check_row_offsets(m)
    base = {}
    offset_bytes = 0
    for name, length in _lengths(n, m).items():
        base[name] = offset_bytes // SECTOR_BYTES
        size = length * ELEMENT_BYTES
        offset_bytes += -(-size // ALIGN_BYTES) * ALIGN_BYTES
    return MemoryLayout(n, m, base, offset_bytes // SECTOR_BYTES)
