"""The optional `[store_flush]` table of a GPU profile: what a launch whose blocks store costs at its end.

A launch in which some blocks store to global memory takes longer than the same launch without the
stores, even when each block stores one word: 128-320 ns on the H200 and H100, and as much when the
store comes before a 2 us spin as after it (`tests/fixtures/overheads/README.md`). No warp waits for
its store, so the critical path does not see it (`opmachine.critical`); the model adds `at(blocks)`
to each launch in which `blocks` blocks store (`opmachine.store_flush`). Measured by `python -m gpu_validate.overheads
--stores`: per grid of `blocks` blocks, each storing one word, the median time of that launch minus
the median of the empty launch timed alternately with it (at least 0).

    [store_flush]
    blocks = [1, 2, 4, ...]        # storing blocks, strictly increasing, from 1
    ns = [160.0, 160.0, ...]       # ns a launch of that many storing blocks adds
    [store_flush.provenance]
    device = "NVIDIA H200"         # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.overheads --stores ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .schema import RUN_KEYS, Checker

__all__ = ["STORE_FLUSH_KEYS", "StoreFlush", "parse_store_flush"]

STORE_FLUSH_KEYS = ("blocks", "ns")


@dataclass(frozen=True)
class StoreFlush:
    """The measured end-of-launch cost of stores by storing blocks (see the module docstring)."""

    blocks: tuple[int, ...]
    ns: tuple[float, ...]
    provenance: dict[str, str] = field(default_factory=dict)

    def at(self, blocks: int) -> float:
        """The ns a launch with `blocks` storing blocks adds: 0 with none, linear in the blocks between
        measured counts, the first or last measured value outside them."""
        if blocks <= 0:
            return 0.0
        return float(np.interp(float(blocks), np.asarray(self.blocks, np.float64), np.asarray(self.ns, np.float64)))

    def values(self) -> dict:
        """The [store_flush] arrays, in STORE_FLUSH_KEYS order."""
        return {"blocks": list(self.blocks), "ns": list(self.ns)}

    def scaled(self, factor: float) -> StoreFlush:
        """Every cost times `factor` (a what-if of the per-launch constants)."""
        return StoreFlush(self.blocks, tuple(ns * factor for ns in self.ns), self.provenance)


def parse_store_flush(check: Checker, table, device_name: str) -> StoreFlush:
    """The StoreFlush of a [store_flush] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "store_flush")
    check.keys(table, "store_flush", STORE_FLUSH_KEYS + ("provenance",))
    blocks = check.number_array(table["blocks"], "store_flush.blocks", integers=True)
    check.increasing(blocks, "store_flush.blocks", "block count")
    ns = check.number_array(table["ns"], "store_flush.ns", allow_zero=True)
    if len(ns) != len(blocks):
        check.fail("store_flush.ns", f"has {len(ns)} values for the {len(blocks)} of store_flush.blocks")
    provenance = check.run_provenance(table["provenance"], "store_flush.provenance", RUN_KEYS, device_name,
                                      "the store costs")
    return StoreFlush(tuple(blocks), tuple(ns), provenance)
