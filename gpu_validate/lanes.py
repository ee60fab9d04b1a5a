"""The lane counts the instrumented kernels must reproduce, from simdmodel's lane accounting.

Data-driven expansions use the mapping's own accounting (the sorted frontier, DESIGN.md "Lane
accounting"). `topo` walks every node and masks the inactive ones: warp step k covers the 32 node
ids 32k .. 32k+31 and runs max(degree of its active nodes) lockstep iterations, so its lane slots
are 32 x that sum over the steps with an active node, and its useful lanes the frontier's edges.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from opmachine.kernels import DEFAULT_BLOCK, Kernel
from simdmodel.frontier import Frontiers
from simdmodel.strategies import WARP_SIZE, Mapping
from simdmodel.warpsim import lane_degrees

LANE_MODEL_COLUMNS = ("kernel", "source", "level", "phase", "lane_slots", "useful_lanes")


def _topo_lanes(degrees: np.ndarray, frontiers: Frontiers) -> np.ndarray:
    out = np.zeros((frontiers.depth, 2), dtype=np.int64)
    for level in range(frontiers.depth):
        front = frontiers.frontier(level)  # ascending ids, so each warp step's nodes are contiguous
        d = degrees[front].astype(np.int64)
        step = front // WARP_SIZE
        starts = np.flatnonzero(np.r_[True, step[1:] != step[:-1]]) if front.size else np.zeros(0, dtype=np.int64)
        out[level] = (WARP_SIZE * int(np.maximum.reduceat(d, starts).sum()) if front.size else 0, int(d.sum()))
    return out


def lanes_model(graph, kernel: Kernel, source: int, frontiers: Frontiers, block: int = DEFAULT_BLOCK) -> pd.DataFrame:
    """Expected lane slots and useful lanes of each expansion launch of `kernel` from `source`."""
    degrees = lane_degrees(graph)
    if kernel.strategy == "topo":
        lanes, phase = _topo_lanes(degrees, frontiers), "topo"
    else:
        mapping = Mapping("scan", block) if kernel.strategy == "scan" else kernel.mapping()
        sums = mapping.count_lanes(degrees[frontiers.vertices], frontiers.level_ptr)
        lanes, phase = sums[:, [1, 2]], "expand"
    return pd.DataFrame({"kernel": kernel.label, "source": int(source), "level": np.arange(frontiers.depth),
                         "phase": phase, "lane_slots": lanes[:, 0], "useful_lanes": lanes[:, 1]},
                        columns=list(LANE_MODEL_COLUMNS))
