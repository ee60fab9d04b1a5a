"""simdmodel: how much SIMD lane work each GPU BFS work mapping wastes, and why.

Graphs in (`load_graph`), BFS frontiers in kernel order (`bfs`), and numba lane accounting per
mapping strategy (`analyze`), giving seed 000's UA / UR / ME metrics.
"""
from .errors import DataWarning, GraphFormatError, InputError
from .frontier import Frontiers, bfs, pick_sources
from .graph import CSRGraph, EdgeList, LoadReport, count_duplicates, count_self_loops, csr_from_edges
from .load import load_graph
from .stats import graph_info
from .algorithms import ALGORITHMS, BFS, Algorithm
from .strategies import STRATEGIES, Mapping, Strategy, mappings, parse_mapping, register
from .lanes import Analysis, analyze, recommend, summarize

__all__ = [
    "ALGORITHMS", "Algorithm", "Analysis", "BFS", "CSRGraph", "DataWarning", "EdgeList", "Frontiers",
    "GraphFormatError", "InputError", "LoadReport", "Strategy", "parse_mapping", "register",
    "Mapping", "STRATEGIES", "analyze", "bfs", "count_duplicates", "count_self_loops",
    "csr_from_edges", "graph_info", "load_graph", "mappings", "pick_sources", "recommend", "summarize",
]
__version__ = "0.1.0"
