"""The modelled BFS kernels, looked up by the strategy names simdmodel's lane accounting uses.

`topo` is seed 003's topology-driven kernel (Listing 2). The data-driven kernels run two launches
per round: an expansion of the sorted frontier queue by a mapping strategy (`group` as sm-S,
`ws`, `scan`; seed 000 §5.1) and a compaction of the level array into the next sorted queue.
Adding a strategy means adding one module here with its job generator and one entry below.
"""
from __future__ import annotations

from dataclasses import dataclass

from simdmodel.errors import InputError
from simdmodel.strategies import (
    WARP_SIZE,
    Mapping,
    check_cta_size,
    check_group_size,
    mapping_label,
)

from ._jobs import ANI, EDL, ERL, NF1, NF2, OP, SERVER_FIELDS, JobTrace
from .compact import compact_chunks_per_warp, compact_counts, compact_jobs
from .group import group_jobs
from .scan import scan_jobs
from .topo import topo_jobs
from .ws import ws_jobs

DEFAULT_BLOCK = 256


@dataclass(frozen=True)
class Kernel:
    """A modelled kernel: `topo`, or a data-driven expansion by `strategy` with its parameter."""

    strategy: str  # "topo", "group", "ws" or "scan"
    param: int | None = None  # S for group

    @property
    def label(self) -> str:
        return "topo" if self.strategy == "topo" else mapping_label(self.strategy, self.param)

    @property
    def data_driven(self) -> bool:
        return self.strategy != "topo"

    def mapping(self) -> Mapping | None:
        """The simdmodel mapping whose lane accounting this kernel's expansion shares."""
        return None if self.strategy == "topo" else Mapping(self.strategy, self.param)


def parse_kernel(text: str) -> Kernel:
    """`topo`, `sm-S` (S in 1..32), `ws` or `scan` (CTA size = block size)."""
    name = text.strip().lower()
    if name in ("topo", "ws", "scan"):
        return Kernel(name)
    if name.startswith("sm-"):
        try:
            size = int(name[3:])
        except ValueError:
            raise InputError(f"kernel {text!r}: sm-S needs an integer group size S") from None
        return Kernel("group", check_group_size(size))
    raise InputError(f"unknown kernel {text!r} (choose topo, sm-S with S in 1..{WARP_SIZE}, ws or scan)")


@dataclass(frozen=True)
class Launch:
    """Launch geometry: threads per block and blocks."""

    block: int
    grid: int

    @property
    def threads(self) -> int:
        return self.block * self.grid

    @property
    def warps(self) -> int:
        return self.threads // WARP_SIZE


def check_block(block: int) -> int:
    """Blocks are whole warps, 32..1024 threads (the scan CTA is the block)."""
    return check_cta_size(block)


def check_grid(grid: int) -> int:
    if grid < 1:
        raise InputError(f"--grid must be at least 1, got {grid}")
    return grid


__all__ = [
    "ANI", "NF1", "ERL", "EDL", "NF2", "OP", "SERVER_FIELDS", "DEFAULT_BLOCK", "JobTrace", "Kernel",
    "Launch", "check_block", "check_grid", "compact_chunks_per_warp", "compact_counts", "compact_jobs", "group_jobs",
    "parse_kernel", "scan_jobs", "topo_jobs", "ws_jobs",
]
