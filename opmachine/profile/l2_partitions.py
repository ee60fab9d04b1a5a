"""The optional `[l2_partitions]` table of a GPU profile: what a warp's L2 hit costs in its SM's own L2
partition and in the other.

The H100's and H200's L2 is two partitions, and each SM reads through one of them: half the SMs through
one, half through the other (`gpu_validate.l2_probe`'s placement part: a cycle one SM read is as fast
for 66 of the 132 SMs as for that SM, and slower for the other 66). A sector is in an SM's partition
when that partition is its home or when an SM of that partition read it since it was last written (a
copy); otherwise the load crosses to the other partition, about 90 ns more. `near_ns` and `far_ns` are
one warp's load latencies of `sectors` sectors, every sector in the SM's partition or every one only in
the other, measured by `python -m gpu_validate.l2_probe --write` (its homes part: a chase, timed by
CUDA events, of the sectors whose hops from an SM of the other group were slow, median over four SMs).

The model (`opmachine.memory`, `opmachine.critical`) then follows, per sector, which partitions hold it:
`groups` partitions, each home of an equal share of the lines, and each warp's block in one of them.
An L2 hit of a load waits `far_ns` at its hits' count when any of its sectors is in no partition of
its SM, else `near_ns`.

    [l2_partitions]
    groups = 2                     # partitions (SM groups)
    sectors = [1, 2, 4, 8, 16, 32] # sectors of one warp's load, strictly increasing, from 1
    near_ns = [144.0, ...]         # ns of that load, every sector in the SM's partition
    far_ns = [234.3, ...]          # ns of that load, every sector only in the other
    [l2_partitions.provenance]
    device = "NVIDIA H200"         # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.l2_probe ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .schema import RUN_KEYS, Checker

__all__ = ["L2_PARTITIONS_KEYS", "L2Partitions", "parse_l2_partitions"]

L2_PARTITIONS_KEYS = ("groups", "sectors", "near_ns", "far_ns")


@dataclass(frozen=True)
class L2Partitions:
    """The L2's partitions and a warp's load latency within and across them (see the module docstring)."""

    groups: int
    sectors: tuple[int, ...]
    near_ns: tuple[float, ...]
    far_ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict:
        """The [l2_partitions] values, in L2_PARTITIONS_KEYS order."""
        return {"groups": self.groups, "sectors": list(self.sectors), "near_ns": list(self.near_ns),
                "far_ns": list(self.far_ns)}

    def latency(self, which: str, widest: int) -> np.ndarray:
        """ns of one warp's load of 0..widest sectors (`which`: "near" or "far"): the measured latencies
        interpolated linearly in log2 of the sectors, held at the widest measured beyond it; 0 for none."""
        ns = self.near_ns if which == "near" else self.far_ns
        out = np.zeros(widest + 1)
        out[1:] = np.interp(np.log2(np.arange(1, widest + 1)), np.log2(self.sectors), ns)
        return out


def parse_l2_partitions(check: Checker, table, device_name: str) -> L2Partitions:
    """The L2Partitions of an [l2_partitions] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "l2_partitions")
    check.keys(table, "l2_partitions", L2_PARTITIONS_KEYS + ("provenance",))
    groups = check.positive_int(table["groups"], "l2_partitions.groups")
    if groups < 2:
        check.fail("l2_partitions.groups", f"partitions are at least 2, got {groups}")
    sectors = check.number_array(table["sectors"], "l2_partitions.sectors", integers=True)
    check.increasing(sectors, "l2_partitions.sectors", "sector count")
    if sectors[0] != 1:
        check.fail("l2_partitions.sectors", f"starts at one sector, got {sectors[0]}")
    arrays = {}
    for key in ("near_ns", "far_ns"):
        arrays[key] = check.number_array(table[key], f"l2_partitions.{key}")
        if len(arrays[key]) != len(sectors):
            check.fail(f"l2_partitions.{key}", f"has {len(arrays[key])} values for the {len(sectors)} of "
                                               "l2_partitions.sectors")
    for i, (near, far) in enumerate(zip(arrays["near_ns"], arrays["far_ns"])):
        if far < near:
            check.fail(f"l2_partitions.far_ns[{i}]", f"a load across partitions is no faster than within one, got "
                                                     f"{far:g} < l2_partitions.near_ns[{i}] = {near:g}")
    provenance = check.run_provenance(table["provenance"], "l2_partitions.provenance", RUN_KEYS, device_name,
                                      "the L2 partitions")
    return L2Partitions(groups, tuple(sectors), tuple(arrays["near_ns"]), tuple(arrays["far_ns"]), provenance)
