"""What a launch's stores add at its end: the profile's [store_flush] cost for the blocks that store.

No warp waits for its own store (`opmachine.critical`), yet a launch in which blocks store ends later
than the same launch without the stores, by a measured amount that depends on how many blocks
stored, not on when (`opmachine.profile.store_flush`). The model counts the blocks of a launch with
at least one store job (OP: a level set by an expansion or `topo`, a queue entry written by a
compaction) and adds the profile's cost for that many.
"""
from __future__ import annotations

import numpy as np

from .instructions import jobs_per_server
from .kernels import OP

__all__ = ["store_flush_ns", "storing_blocks", "stores_per_warp"]


def stores_per_warp(trace) -> np.ndarray:
    """Store (OP) jobs per launched warp of a launch's JobTrace (`instructions.jobs_per_server`'s OP row)."""
    return jobs_per_server(trace)[OP]


def storing_blocks(stores: np.ndarray, block: int) -> int:
    """Blocks of `block` threads with at least one store, from the stores per launched warp (warp w in block
    w // (block / 32))."""
    blocks = np.flatnonzero(np.asarray(stores) > 0) // max(block // 32, 1)  # ascending: count where it changes
    return int(np.count_nonzero(np.diff(blocks))) + 1 if blocks.size else 0


def store_flush_ns(profile, blocks: int) -> float:
    """The ns a launch with `blocks` storing blocks adds at its end: [store_flush] at that count, 0 for a
    profile without the table."""
    return 0.0 if profile.store_flush is None else profile.store_flush.at(blocks)
