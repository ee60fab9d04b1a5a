"""The optional `[l2_capacity]` table of a GPU profile: how much of the L2 holds data that every SM reads.

The H100's and H200's L2 is two partitions, and what every SM reads does not fill all of it: a
random chase over a buffer that every SM has just read hits as an LRU cache of `effective_bytes`
would (hit fraction effective / size), about 60% of `l2_bytes` on both. The model's L2 (the
set-associative cache and the LRU stack distances, `opmachine.memory`) takes that capacity, rounded
down to a whole number of sets (`GPUProfile.l2_model_bytes`). Measured by `python -m
gpu_validate.l2_probe --write` (`gpu_validate/cuda/microbench.cu`'s one-lane chase, see that module):
`hit_fraction` at each buffer size of `sizes` bytes is (t_miss - t) / (t_miss - t_hit), with t the ns
a hop over the buffer read twice by every SM, t_miss the same buffer after an L2 flush and t_hit the
small buffers' hop; `effective_bytes` is the median of hit_fraction x size over the sizes of one to
two L2s.

    [l2_capacity]
    effective_bytes = 38000000     # what the model's L2 holds
    sizes = [7864320, ...]         # buffer bytes, strictly increasing
    hit_fraction = [1.0, ...]      # measured, at each size
    [l2_capacity.provenance]
    device = "NVIDIA H200"         # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.l2_probe ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .schema import RUN_KEYS, Checker

__all__ = ["L2_CAPACITY_KEYS", "L2Capacity", "parse_l2_capacity"]

L2_CAPACITY_KEYS = ("effective_bytes", "sizes", "hit_fraction")


@dataclass(frozen=True)
class L2Capacity:
    """The measured capacity of the L2 for data every SM reads (see the module docstring)."""

    effective_bytes: int
    sizes: tuple[int, ...]
    hit_fraction: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict:
        """The [l2_capacity] values, in L2_CAPACITY_KEYS order."""
        return {"effective_bytes": self.effective_bytes, "sizes": list(self.sizes),
                "hit_fraction": list(self.hit_fraction)}

    def scaled(self, factor: float) -> L2Capacity:
        """The same measurement on an L2 `factor` times as large (a what-if): capacity and sizes scaled."""
        return L2Capacity(max(1, round(self.effective_bytes * factor)),
                          tuple(max(1, round(s * factor)) for s in self.sizes), self.hit_fraction, self.provenance)


def parse_l2_capacity(check: Checker, table, device_name: str) -> L2Capacity:
    """The L2Capacity of an [l2_capacity] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "l2_capacity")
    check.keys(table, "l2_capacity", L2_CAPACITY_KEYS + ("provenance",))
    effective = check.positive_int(table["effective_bytes"], "l2_capacity.effective_bytes")
    sizes = check.number_array(table["sizes"], "l2_capacity.sizes", integers=True)
    check.increasing(sizes, "l2_capacity.sizes", "size")
    hits = check.number_array(table["hit_fraction"], "l2_capacity.hit_fraction", allow_zero=True)
    if len(hits) != len(sizes):
        check.fail("l2_capacity.hit_fraction", f"has {len(hits)} values for the {len(sizes)} of l2_capacity.sizes")
    for i, h in enumerate(hits):
        if h > 1:
            check.fail(f"l2_capacity.hit_fraction[{i}]", f"a fraction is at most 1, got {h:g}")
    provenance = check.run_provenance(table["provenance"], "l2_capacity.provenance", RUN_KEYS, device_name,
                                      "the L2 capacity")
    return L2Capacity(effective, tuple(sizes), tuple(hits), provenance)
