"""The optional `[memory_mix]` table of a GPU profile: whether a launch's sector classes share the memory system.

The service curves time each sector class alone (`l2_hit`, `row_hit`, `row_miss`). A BFS launch mixes them:
L2 hits on the status arrays, row misses on the adjacency lists, row hits and stores on its queues. This
table times launches of one class and of two (`gpu_validate/cuda/memory_mix.cu`: every warp of a full wave
loads random sectors of an L2-resident table, random sectors of a 1 GiB table, its next 128 bytes of that
table in order, or stores 128 bytes to a 1 GiB stream; no access waits for another). Each row is one launch:
the sectors of each class it moves and its ns (median over repeats), measured by `python -m
gpu_validate.memory_mix`.

A two-class launch's time lies between the larger of its two classes' times alone (the classes served side
by side, as the service curves' separate servers assume) and their sum (served in turn). `dram_classes_add`
is true when the pairs of the DRAM's classes (row misses, row hits, stores beyond the L2: one resource, the
DRAM's channels) lie nearer the sum (median |log(ns / sum)| below median |log(ns / max)|); the critical-path
model (`opmachine.critical`) then charges a launch's DRAM the sum of its row-buffer hits' and misses' sectors
times their peak service times, not only the busier server's. The pairs with L2 hits are recorded beside
them (`pairs`); the model keeps the L2 a server of its own.

    [memory_mix]
    l2_hit_sectors = [69206016.0, 0.0, ...]   # per launch: sectors of each class
    row_miss_sectors = [0.0, 17301504.0, ...]
    row_hit_sectors = [...]
    store_sectors = [...]
    ns = [454720.0, 450560.0, ...]            # its time
    [memory_mix.provenance]
    device = "NVIDIA H200"                    # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.memory_mix ..."
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .schema import RUN_KEYS, Checker

__all__ = ["DRAM_CLASSES", "MIX_CLASSES", "MEMORY_MIX_KEYS", "MemoryMix", "parse_memory_mix"]

MIX_CLASSES = ("l2_hit", "row_miss", "row_hit", "store")
DRAM_CLASSES = ("row_miss", "row_hit", "store")
MEMORY_MIX_KEYS = (*(f"{name}_sectors" for name in MIX_CLASSES), "ns")


@dataclass(frozen=True)
class MemoryMix:
    """Launches of one and two sector classes and their times (see the module docstring)."""

    sectors: tuple[tuple[float, ...], ...]  # per launch, its sectors of each MIX_CLASSES class
    ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def pairs(self) -> list[dict]:
        """Each two-class launch beside the one-class launches of the same sectors: its classes, ns, the sum and
        the larger of theirs (a pair without both one-class launches is left out)."""
        rows = [([k for k, s in enumerate(sectors) if s > 0], sectors, ns)
                for sectors, ns in zip(self.sectors, self.ns)]
        alone = {(present[0], sectors[present[0]]): ns for present, sectors, ns in rows if len(present) == 1}
        out = []
        for present, sectors, ns in rows:
            parts = [alone.get((k, sectors[k])) for k in present]
            if len(present) == 2 and None not in parts:
                out.append({"classes": "+".join(MIX_CLASSES[k] for k in present), "ns": ns,
                            "sum_ns": sum(parts), "max_ns": max(parts)})
        return out

    @property
    def dram_classes_add(self) -> bool:
        """Whether the launches of two of the DRAM's classes lie nearer their classes' summed times than the larger
        of them."""
        pairs = [p for p in self.pairs() if set(p["classes"].split("+")) <= set(DRAM_CLASSES)]
        if not pairs:
            return False
        to_sum = np.median([abs(math.log(p["ns"] / p["sum_ns"])) for p in pairs])
        to_max = np.median([abs(math.log(p["ns"] / p["max_ns"])) for p in pairs])
        return bool(to_sum < to_max)

    def values(self) -> dict:
        """The [memory_mix] arrays, in MEMORY_MIX_KEYS order."""
        columns = {f"{name}_sectors": [row[k] for row in self.sectors] for k, name in enumerate(MIX_CLASSES)}
        return {**columns, "ns": list(self.ns)}


def parse_memory_mix(check: Checker, table, device_name: str) -> MemoryMix:
    """The MemoryMix of a [memory_mix] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "memory_mix")
    check.keys(table, "memory_mix", MEMORY_MIX_KEYS + ("provenance",))
    ns = check.number_array(table["ns"], "memory_mix.ns")
    columns = []
    for name in MIX_CLASSES:
        key = f"{name}_sectors"
        column = check.number_array(table[key], f"memory_mix.{key}", allow_zero=True)
        if len(column) != len(ns):
            check.fail(f"memory_mix.{key}", f"has {len(column)} values for the {len(ns)} of memory_mix.ns")
        columns.append(column)
    rows = tuple(zip(*columns))
    for i, row in enumerate(rows):
        if not any(row):
            check.fail(f"memory_mix.ns[{i}]", "times a launch of no sectors")
    provenance = check.run_provenance(table["provenance"], "memory_mix.provenance", RUN_KEYS, device_name,
                                      "the memory-mix times")
    return MemoryMix(rows, tuple(ns), provenance)
