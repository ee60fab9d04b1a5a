"""The topology-driven walk of a frontier (DESIGN.md "Frontier and its order", `topology`).

Seed 003's topology-driven BFS gives every node a thread every round and masks the inactive ones:
warp step k covers node ids 32k .. 32k+31. Its lanes are those of the `group` strategy with S = 1
over each step's active nodes, the masked lanes being empty groups (UR), so a topology-driven
round's lane slots are 32 x sum over steps with an active node of max(active degrees), and its
useful lanes the frontier's edges. The operator machine's `topo` jobs use the same units.
"""
from __future__ import annotations

import numpy as np

from .frontier import Frontiers
from .strategies import LANE_FIELDS, WARP_SIZE, Mapping, schedule_lanes

THREAD_PER_NODE = Mapping("group", 1)


def topology_units(front: np.ndarray) -> np.ndarray:
    """unit_ptr of an ascending frontier cut at warp-step boundaries (node id // 32)."""
    front = np.asarray(front)
    if front.size == 0:
        return np.zeros(1, dtype=np.int64)
    step = front // WARP_SIZE
    starts = np.flatnonzero(np.r_[True, step[1:] != step[:-1]])
    return np.append(starts, front.size).astype(np.int64)


def topology_lanes(degrees: np.ndarray, frontiers: Frontiers) -> np.ndarray:
    """Per-level LANE_FIELDS sums (levels x 6) of the topology-driven walk of sorted `frontiers`.

    `degrees` are the out-degrees of every vertex.
    """
    if frontiers.order != "sorted":
        raise ValueError("the topology-driven walk needs the sorted frontiers (ascending ids)")
    out = np.zeros((frontiers.depth, len(LANE_FIELDS)), dtype=np.int64)
    for level in range(frontiers.depth):
        front = frontiers.frontier(level)
        out[level] = schedule_lanes(THREAD_PER_NODE.spec, THREAD_PER_NODE.params,
                                    np.asarray(degrees[front], dtype=np.int64), topology_units(front))
    return out
