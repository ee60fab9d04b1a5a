"""The `Algorithm` plug-in type and its registry."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..plugins import Registry
from ..frontier import Frontiers
from ..graph import CSRGraph


@dataclass(frozen=True)
class EdgeOperator:
    """What one visited edge costs in the operator machine (seed 003 Fig. 1): the loads every
    visited edge issues, in program order, and the store issued when the operator updates the
    destination (e.g. BFS labels an unvisited vertex)."""

    loads: tuple[str, ...]
    store: str
    description: str


@dataclass(frozen=True)
class Algorithm:
    """One algorithm: `rounds(graph, source, order)` runs it on the CPU and gives its rounds as
    `Frontiers` (round r's active vertices are `frontier(r)`), `reference(rounds)` the result per
    vertex that run computed (what every GPU run must reproduce), and `edge_operator` the servers
    of its per-edge work."""

    name: str
    description: str
    rounds: Callable[[CSRGraph, int, str], Frontiers]
    reference: Callable[[Frontiers], np.ndarray]
    edge_operator: EdgeOperator


ALGORITHMS = Registry("algorithm")


def register_algorithm(algorithm: Algorithm) -> Algorithm:
    """Add `algorithm` under its name (a second one of the same name is refused)."""
    return ALGORITHMS.register(algorithm)


def get_algorithm(name: str) -> Algorithm:
    """The registered algorithm `name`, or InputError listing the known ones."""
    return ALGORITHMS.get_plugin(name)
