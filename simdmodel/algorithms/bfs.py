"""Breadth-first search: round L expands the vertices of level L (seed 000 §3, seed 003 Listing 1)."""
from __future__ import annotations

import numpy as np

from ..frontier import Frontiers, bfs
from .base import Algorithm, EdgeOperator, register_algorithm


def bfs_levels(rounds: Frontiers) -> np.ndarray:
    """Level of every vertex (-1 where unreached): the result every GPU BFS must reproduce."""
    return rounds.levels


BFS = register_algorithm(Algorithm(
    name="bfs",
    description="breadth-first search: each round labels the unvisited neighbours of the last level",
    rounds=bfs,
    reference=bfs_levels,
    edge_operator=EdgeOperator(loads=("EDL", "NF2"), store="OP",
                               description="EDL reads edge_dst[e], NF2 reads level[dst]; OP labels an "
                                           "unvisited dst with the next level"),
))
