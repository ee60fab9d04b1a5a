"""The modelled BFS kernels: `topo`, or a data-driven expansion by any registered mapping strategy.

`topo` is seed 003's topology-driven kernel (Listing 2). The data-driven kernels run two launches
per round: an expansion of the sorted frontier queue by a mapping strategy (`sm-S`, `ws`, `scan`,
or any strategy registered in `simdmodel.strategies`; seed 000 §5.1), whose jobs come from the
strategy's own decomposition (`expand`), and a compaction of the level array into the next sorted
queue (`compact`). A new strategy needs nothing here.
"""
from __future__ import annotations

from dataclasses import dataclass

from simdmodel.couplings import is_coupling
from simdmodel.errors import InputError
from simdmodel.strategies import STRATEGIES, WARP_SIZE, Mapping, check_cta_size, parse_mapping

from ._jobs import (ANI, EDL, ERL, NF1, NF2, OP, SERVER_FIELDS, JobBuffer, JobTrace, hand_back, job_array,
                    recycle, release_spares, spare_buffer)
from .compact import compact_chunks_per_warp, compact_counts, compact_jobs, compact_warp_steps
from .expand import expansion_jobs, expansion_size
from .split import SplitFill
from .topo import topo_jobs, topo_size

DEFAULT_BLOCK = 256
TOPO = "topo"


@dataclass(frozen=True, init=False)
class Kernel:
    """A modelled kernel: `topo` (expansion is None), or a data-driven expansion by a mapping.

    `Kernel("topo")`, `Kernel("group", 8)`, `Kernel("ws")` or `Kernel(Mapping(...))`.
    """

    expansion: Mapping | None

    def __init__(self, what, *values):
        if isinstance(what, Mapping):
            expansion = what
        elif what == TOPO:
            expansion = None
        else:
            expansion = Mapping(what, *values)
        object.__setattr__(self, "expansion", expansion)

    @property
    def label(self) -> str:
        return TOPO if self.expansion is None else self.expansion.label

    @property
    def data_driven(self) -> bool:
        return self.expansion is not None

    def mapping(self) -> Mapping | None:
        """The simdmodel mapping whose lane accounting this kernel's expansion shares."""
        return self.expansion


def parse_kernel(text: str) -> Kernel:
    """`topo` or a mapping label of any registered strategy (`sm-S` with S in 1..32, `ws`, `scan`)."""
    name = text.strip().lower()
    if name == TOPO:
        return Kernel(TOPO)
    try:
        return Kernel(parse_mapping(name))
    except InputError as error:
        if not str(error).startswith("unknown mapping"):
            raise
    if is_coupling(name):
        raise InputError(f"{text!r} is one of seed 001's couplings, a set of kernels: `simdmodel couplings SPEC "
                         "--time` predicts their launches (opmachine.coupled); gpu_validate.coupling_validation "
                         "measures them")
    others = [n for n in STRATEGIES if n != "group"]
    choices = ", ".join(others[:-1]) + (" or " if len(others) > 1 else "") + others[-1]
    raise InputError(f"unknown kernel {text!r} (choose topo, sm-S with S in 1..{WARP_SIZE}, {choices})") from None


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
    "ANI", "NF1", "ERL", "EDL", "NF2", "OP", "SERVER_FIELDS", "DEFAULT_BLOCK", "TOPO", "JobBuffer", "JobTrace",
    "Kernel", "Launch", "SplitFill", "check_block", "check_grid", "compact_chunks_per_warp", "compact_counts",
    "compact_jobs", "compact_warp_steps", "expansion_jobs", "expansion_size", "hand_back", "job_array",
    "parse_kernel", "recycle", "release_spares", "spare_buffer", "topo_jobs", "topo_size",
]
