"""The optional `[compaction]` table of a GPU profile: the compaction kernel's measured time by graph size.

A compaction (`gpu_validate/cuda/compact.cu`) is one full-wave launch whose blocks publish their
counts, arrive at a counter, and wait for the offsets that the block arriving last scans from the
counts: costs the memory machine does not see (no loads or stores of the frontier), and that grow
with the graph (more tiles' worth of level reads before each block arrives). The table holds the
time of that launch with an empty next frontier on an edgeless graph of each size in `sizes`, timed
as BFS launches are, median over fresh allocations (where its words lie in the L2 moved a decoupled
look-back by up to 40%, today's scan by under 3%: `p10_ns` and `p90_ns` say how far), measured by `python -m gpu_validate.overheads --sizes`. The
model charges a compaction of an n-vertex graph `at(n)` plus its own critical-path time less the
one it gives that empty compaction (`opmachine.predict.compaction_baseline_ns`), so the measured
part is counted once. A profile without the table uses `launch_overhead_ns + grid_scan_ns`, the
one-node point, for every size.

    [compaction]
    sizes = [1, 1024, ...]          # vertices, strictly increasing, from 1
    ns = [13352.0, 13472.0, ...]    # median over allocations
    p10_ns = [...]                  # 10th percentile over allocations, <= ns
    p90_ns = [...]                  # 90th percentile, >= ns
    [compaction.provenance]
    device = "NVIDIA H200"          # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.overheads ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError

from .schema import RUN_KEYS, Checker, describe

__all__ = ["COMPACTION_KEYS", "CompactionCosts", "parse_compaction"]

COMPACTION_KEYS = ("sizes", "ns", "p10_ns", "p90_ns")
MAX_SIZE = 2**31 - 1  # the kernels index vertices with int32


@dataclass(frozen=True)
class CompactionCosts:
    """Measured time of an empty-frontier compaction by vertex count (see the module docstring)."""

    sizes: tuple[int, ...]
    ns: tuple[float, ...]
    p10_ns: tuple[float, ...]
    p90_ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def at(self, n) -> float:
        """The time at `n` vertices: linear in n between measured sizes, and past the largest along
        its last segment (the level reads grow linearly with n there)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise InputError(f"a compaction's vertex count must be an integer >= 1, got {n!r}")
        sizes = np.asarray(self.sizes, dtype=np.float64)
        ns = np.asarray(self.ns, dtype=np.float64)
        if n <= sizes[-1]:
            return float(np.interp(float(n), sizes, ns))
        slope = (ns[-1] - ns[-2]) / (sizes[-1] - sizes[-2])
        return float(ns[-1] + max(slope, 0.0) * (float(n) - sizes[-1]))

    def values(self) -> dict:
        """The [compaction] arrays, in COMPACTION_KEYS order."""
        return {key: list(getattr(self, key)) for key in COMPACTION_KEYS}


def _array(check: Checker, value, key: str, integers: bool) -> list:
    if not isinstance(value, list):
        check.fail(key, f"must be an array of {'integers' if integers else 'numbers'}, got {describe(value)}")
    out = []
    for i, item in enumerate(value):
        where = f"{key}[{i}]"
        if integers:
            item = check.positive_int(item, where)
            if item > MAX_SIZE:
                check.fail(where, f"must be at most {MAX_SIZE} vertices, got {item}")
        else:
            item = check.number(item, where)
        out.append(item)
    return out


def parse_compaction(check: Checker, table, device_name: str) -> CompactionCosts:
    """The CompactionCosts of a [compaction] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "compaction")
    check.keys(table, "compaction", COMPACTION_KEYS + ("provenance",))
    sizes = _array(check, table["sizes"], "compaction.sizes", integers=True)
    if len(sizes) < 2:
        check.fail("compaction.sizes", f"needs at least 2 sizes, got {len(sizes)}")
    if sizes[0] != 1:
        check.fail("compaction.sizes[0]", f"must be 1 (the one-node compaction), got {sizes[0]}")
    check.increasing(sizes, "compaction.sizes", "size")
    arrays = {}
    for key in COMPACTION_KEYS[1:]:
        arrays[key] = _array(check, table[key], f"compaction.{key}", integers=False)
        if len(arrays[key]) != len(sizes):
            check.fail(f"compaction.{key}", f"has {len(arrays[key])} values for {len(sizes)} sizes")
    for i, (low, mid, high) in enumerate(zip(arrays["p10_ns"], arrays["ns"], arrays["p90_ns"])):
        if low > mid:
            check.fail(f"compaction.p10_ns[{i}]", f"is above compaction.ns[{i}] ({low:g} > {mid:g})")
        if high < mid:
            check.fail(f"compaction.p90_ns[{i}]", f"is below compaction.ns[{i}] ({high:g} < {mid:g})")
    provenance = check.run_provenance(table["provenance"], "compaction.provenance", RUN_KEYS,
                                      device_name, "the times")
    return CompactionCosts(tuple(sizes), tuple(arrays["ns"]), tuple(arrays["p10_ns"]), tuple(arrays["p90_ns"]),
                           provenance)
