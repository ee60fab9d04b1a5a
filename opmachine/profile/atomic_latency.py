"""The optional `[atomic_latency]` table of a GPU profile: how much longer a warp waits for an atomic than a load.

An atomic that returns a value (the coupled kernels' compare-and-swap claims, and the atomicAdds that reserve
queue slots) holds its warp like a load, but the L2 performs it before it answers, so it takes longer. The
table holds one warp's dependent accesses along a random cycle of an L2-resident table, `lanes` lanes at once
(as many sectors), timed per step for failing compare-and-swaps (`swap_ns`) and for ld.global.cg loads
(`load_ns`), measured by `python -m gpu_validate.atomics` (`gpu_validate/cuda/atomics.cu`'s `chase`). The
coupled model charges each such atomic job `extra_ns(sectors)`, swap_ns - load_ns, on top of the load
latency the critical path gives it (`opmachine.coupled.atomic_wait_ns`).

    [atomic_latency]
    lanes = [1, 2, 4, 8, 16, 32]        # lanes (sectors) per step, strictly increasing
    swap_ns = [202.6, ...]              # ns per step of failing compare-and-swaps
    load_ns = [147.5, ...]              # ns per step of loads
    [atomic_latency.provenance]
    device = "NVIDIA H200"              # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.atomics ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .schema import RUN_KEYS, Checker

__all__ = ["ATOMIC_LATENCY_KEYS", "AtomicLatency", "parse_atomic_latency"]

ATOMIC_LATENCY_KEYS = ("lanes", "swap_ns", "load_ns")


@dataclass(frozen=True)
class AtomicLatency:
    """One warp's compare-and-swap and load latencies by lanes (see the module docstring)."""

    lanes: tuple[int, ...]
    swap_ns: tuple[float, ...]
    load_ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def extra_ns(self, sectors) -> np.ndarray:
        """An atomic's wait beyond a load's for `sectors` (array) sectors: swap_ns - load_ns, linear between
        measured lane counts, the nearest measured one's outside them, never below 0."""
        extra = np.maximum(np.asarray(self.swap_ns) - np.asarray(self.load_ns), 0.0)
        return np.interp(np.asarray(sectors, dtype=np.float64), np.asarray(self.lanes, dtype=np.float64), extra)

    def values(self) -> dict:
        """The [atomic_latency] arrays, in ATOMIC_LATENCY_KEYS order."""
        return {key: list(getattr(self, key)) for key in ATOMIC_LATENCY_KEYS}


def parse_atomic_latency(check: Checker, table, device_name: str) -> AtomicLatency:
    """The AtomicLatency of an [atomic_latency] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "atomic_latency")
    check.keys(table, "atomic_latency", ATOMIC_LATENCY_KEYS + ("provenance",))
    arrays = {key: check.number_array(table[key], f"atomic_latency.{key}", integers=key == "lanes")
              for key in ATOMIC_LATENCY_KEYS}
    lanes = arrays["lanes"]
    check.increasing(lanes, "atomic_latency.lanes")
    for key in ("swap_ns", "load_ns"):
        if len(arrays[key]) != len(lanes):
            check.fail(f"atomic_latency.{key}", f"has {len(arrays[key])} values for the {len(lanes)} of "
                       "atomic_latency.lanes")
    provenance = check.run_provenance(table["provenance"], "atomic_latency.provenance", RUN_KEYS,
                                      device_name, "the atomic latencies")
    return AtomicLatency(tuple(lanes), tuple(arrays["swap_ns"]), tuple(arrays["load_ns"]), provenance)
