"""The optional `[gather]` table of a GPU profile: the measured rate of random 4-byte gathers.

A BFS must look up the status of every edge it traverses: one 4-byte load at an arbitrary vertex id
(seed 001 §4.2). However well a kernel maps its work, it cannot traverse edges faster than the GPU
serves such gathers, nor faster than DRAM streams its row offsets and column indices; the two
together are a BFS's physical bound (`gpu_validate.validate.throughput`). The table holds the
gather rate over the whole GPU for tables of `sizes` bytes (power-of-two sizes; the ones within the
L2 are served by it), measured by `python -m gpu_validate.gather` (`gpu_validate/cuda/gather.cu`):
loads with ld.global.cg at indices from a per-thread random sequence, four in flight a thread,
every SM full, timed with CUDA events, median over repeats.

    [gather]
    sizes = [1048576, 4194304, ...]      # table bytes, strictly increasing
    per_ns = [160.2, 158.7, ...]         # gathers a nanosecond, the whole GPU
    [gather.provenance]
    device = "NVIDIA H200"               # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.gather ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError

from .schema import RUN_KEYS, Checker

__all__ = ["GATHER_KEYS", "GatherRates", "parse_gather"]

GATHER_KEYS = ("sizes", "per_ns")


@dataclass(frozen=True)
class GatherRates:
    """Measured random 4-byte gathers a nanosecond by table size in bytes (see the module docstring)."""

    sizes: tuple[int, ...]
    per_ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def at(self, table_bytes) -> float:
        """The rate for a table of `table_bytes`: linear in log2(size) between measured sizes, and the
        nearest measured size's rate outside them."""
        if isinstance(table_bytes, bool) or not isinstance(table_bytes, (int, np.integer)) or table_bytes < 1:
            raise InputError(f"a gathered table's size must be an integer >= 1 byte, got {table_bytes!r}")
        return float(np.interp(np.log2(float(table_bytes)), np.log2(np.asarray(self.sizes, dtype=np.float64)),
                               np.asarray(self.per_ns, dtype=np.float64)))

    def values(self) -> dict:
        """The [gather] arrays, in GATHER_KEYS order."""
        return {key: list(getattr(self, key)) for key in GATHER_KEYS}


def parse_gather(check: Checker, table, device_name: str) -> GatherRates:
    """The GatherRates of a [gather] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "gather")
    check.keys(table, "gather", GATHER_KEYS + ("provenance",))
    sizes = check.number_array(table["sizes"], "gather.sizes", integers=True)
    arrays = {"sizes": sizes, "per_ns": check.number_array(table["per_ns"], "gather.per_ns")}
    check.increasing(sizes, "gather.sizes", "size")
    if len(arrays["per_ns"]) != len(sizes):
        check.fail("gather.per_ns", f"has {len(arrays['per_ns'])} values for the {len(sizes)} of gather.sizes")
    provenance = check.run_provenance(table["provenance"], "gather.provenance", RUN_KEYS, device_name,
                                      "the gather rates")
    return GatherRates(tuple(sizes), tuple(arrays["per_ns"]), provenance)
