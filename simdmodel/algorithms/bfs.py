"""Breadth-first search: round L expands the vertices of level L (seed 000 §3, seed 003 Listing 1)."""
from __future__ import annotations

import numpy as np

from ..frontier import bfs
from ..graph import CSRGraph
from .base import Algorithm, EdgeOperator, register_algorithm


def bfs_levels(graph: CSRGraph, source: int) -> np.ndarray:
    """Level of every vertex from `source` (-1 where unreached): the reference of every BFS run."""
    return bfs(graph, source).levels


BFS = register_algorithm(Algorithm(
    name="bfs",
    description="breadth-first search: each round labels the unvisited neighbours of the last level",
    rounds=bfs,
    reference=bfs_levels,
    edge_operator=EdgeOperator(loads=("EDL", "NF2"), store="OP",
                               description="EDL reads edge_dst[e], NF2 reads level[dst]; OP labels an "
                                           "unvisited dst with the next level"),
))
