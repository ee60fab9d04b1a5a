"""The `Algorithm` plug-in type and its registry."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InputError
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
    """One algorithm: `rounds(graph, source, order)` gives its rounds as `Frontiers` (round r's
    active vertices are `frontier(r)`), `reference(graph, source)` its CPU result per vertex, and
    `edge_operator` the servers of its per-edge work."""

    name: str
    description: str
    rounds: Callable[[CSRGraph, int, str], Frontiers]
    reference: Callable[[CSRGraph, int], np.ndarray]
    edge_operator: EdgeOperator

    def check(self, graph: CSRGraph, source: int, result: np.ndarray) -> np.ndarray:
        """Indices of the vertices where `result` differs from the reference (empty when it agrees)."""
        expected = self.reference(graph, source)
        result = np.asarray(result)
        if result.shape != expected.shape:
            raise ValueError(f"{self.name}: result has shape {result.shape}, the reference {expected.shape}")
        return np.flatnonzero(result != expected)


ALGORITHMS: dict[str, Algorithm] = {}


def register_algorithm(algorithm: Algorithm) -> Algorithm:
    if algorithm.name in ALGORITHMS and ALGORITHMS[algorithm.name] is not algorithm:
        raise ValueError(f"an algorithm named {algorithm.name!r} is already registered")
    ALGORITHMS[algorithm.name] = algorithm
    return algorithm


def get_algorithm(name: str) -> Algorithm:
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(f"unknown algorithm {name!r} (choose from {', '.join(ALGORITHMS)})") from None
