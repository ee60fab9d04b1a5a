"""Graph algorithms as plug-ins (DESIGN.md "Plug-ins"): each is one registered `Algorithm` object.

An algorithm says how it runs on a graph into rounds (the active vertices of each round, in the
order a kernel walks them; a vertex may be active in many rounds), what its CPU reference result
is (every GPU run is checked against it), and its per-edge operator (which operator-machine
servers one visited edge uses). BFS is the first; the lane tables, the operator machine and the
GPU runner take rounds and references from here.
"""
from __future__ import annotations

from .base import ALGORITHMS, Algorithm, EdgeOperator, get_algorithm, register_algorithm
from .bfs import BFS

__all__ = ["ALGORITHMS", "Algorithm", "BFS", "EdgeOperator", "get_algorithm", "register_algorithm"]
