"""The lane counts the instrumented kernels must reproduce, from simdmodel's lane accounting.

Data-driven expansions use the mapping's own accounting over the sorted frontier (DESIGN.md
"Lane accounting"), launched in blocks of `block` threads; `topo` the topology-driven walk
(`simdmodel.topology`: every node a lane, the inactive ones masked).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from opmachine.kernels import DEFAULT_BLOCK, Kernel
from simdmodel.frontier import Frontiers
from simdmodel.topology import topology_lanes
from simdmodel.lanes import lane_degrees

LANE_MODEL_COLUMNS = ("kernel", "source", "level", "phase", "lane_slots", "useful_lanes")


def lanes_model(graph, kernel: Kernel, source: int, frontiers: Frontiers, block: int = DEFAULT_BLOCK) -> pd.DataFrame:
    """Expected lane slots and useful lanes of each expansion launch of `kernel` from `source`."""
    degrees = lane_degrees(graph)
    if kernel.data_driven:
        sums = kernel.expansion.with_block(block).count_lanes(degrees[frontiers.vertices], frontiers.level_ptr)
        phase = "expand"
    else:
        sums = topology_lanes(degrees, frontiers)
        phase = "topo"
    return pd.DataFrame({"kernel": kernel.label, "source": int(source), "level": np.arange(frontiers.depth),
                         "phase": phase, "lane_slots": sums[:, 1], "useful_lanes": sums[:, 2]},
                        columns=list(LANE_MODEL_COLUMNS))
