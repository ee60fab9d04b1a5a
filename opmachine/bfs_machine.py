"""The BFS operator machine of seed 003 Figure 1 and its completions per BFS round (§3.1-3.2).

Listing 1 of seed 003 is a topology-driven BFS: round r (LEVEL = r) walks every node (ANI),
lets through those labelled r-1 (NF1), looks up their edge ranges (ERL), each edge's destination
(EDL), lets through unvisited destinations (NF2) and labels them r (OP). Every node is a job in
every round, so N = n (§3.2).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from simdmodel.errors import InputError
from simdmodel.frontier import Frontiers, bfs_queue
from simdmodel.graph import CSRGraph

from .machine import OperatorMachine, Server

SERVERS = ("ANI", "NF1", "ERL", "EDL", "NF2", "OP")

DESCRIPTIONS = {
    "ANI": "AllNodesInput: every node of the graph, once per round (Listing 1 line 2)",
    "NF1": "NodeFilter: node.level == LEVEL-1 (line 3)",
    "ERL": "EdgeRangeLookup: the edges of a node that passed NF1 (line 6)",
    "EDL": "EdgeDestLookup: the destination of one edge (line 7)",
    "NF2": "NodeFilter: destination unvisited, dst.level == INF (line 8)",
    "OP": "Operator: dst.level = LEVEL (line 9)",
}

# Figure 1: jobs enter at ANI; each filter either passes a job on or sends it out; a job with d
# edges goes round EDL -> NF2 (-> OP) d times before it leaves.
ROUTES = (
    ("in", "ANI"),
    ("ANI", "NF1"),
    ("NF1", "ERL"),
    ("NF1", "out"),
    ("ERL", "EDL"),
    ("ERL", "out"),
    ("EDL", "NF2"),
    ("NF2", "OP"),
    ("NF2", "EDL"),
    ("NF2", "out"),
    ("OP", "EDL"),
    ("OP", "out"),
)

COLUMNS = ("round", "level", "jobs", "c_ani", "c_nf1", "c_erl", "c_edl", "c_nf2", "c_op")


def bfs_operator_machine() -> OperatorMachine:
    """The operator machine for level-by-level topology-driven BFS (seed 003 §3.1, Figure 1)."""
    return OperatorMachine(
        "topology-driven BFS",
        tuple(Server(name, DESCRIPTIONS[name]) for name in SERVERS),
        ROUTES,
    )


def check_frontiers(graph: CSRGraph, frontiers: Frontiers) -> np.ndarray:
    """The BFS levels of `frontiers`, after checking they are `graph`'s; else InputError.

    The levels must equal those of simdmodel's serial BFS (`simdmodel.frontier.bfs_queue`) from
    `frontiers.source` on `graph`. Every BFS from one source gives the same levels, so this accepts
    any walk order.
    """
    if not isinstance(graph, CSRGraph):
        raise InputError(f"graph must be a CSRGraph, got {type(graph).__name__}")
    if not isinstance(frontiers, Frontiers):
        raise InputError(f"frontiers must be a Frontiers from simdmodel.frontier.bfs, "
                         f"got {type(frontiers).__name__}")
    levels = np.asarray(frontiers.levels)
    if levels.shape != (graph.n,):
        raise InputError(f"frontiers label {levels.size} vertices but the graph has {graph.n}")
    source = int(frontiers.source)
    if not 0 <= source < graph.n or levels[source] != 0:
        raise InputError(f"frontiers source {source} is not a level-0 vertex of this graph")
    reference, _, _ = bfs_queue(graph.indptr, graph.indices, source)
    if not np.array_equal(reference, levels):
        raise InputError("frontiers do not come from a BFS of this graph (levels differ)")
    return levels


def bfs_completions(graph: CSRGraph, frontiers: Frontiers) -> pd.DataFrame:
    """Jobs and completions per server in every round of topology-driven BFS (seed 003 §3.2).

    Round r = 1..depth runs Listing 1 with LEVEL = r and expands the frontier of level r-1, so
    the last row is the round that discovers nothing (a BFS driver only learns it is done by
    running it). Per round: jobs = c_ani = c_nf1 = n (every node is a job); c_erl = the frontier
    size; c_edl = c_nf2 = the frontier's out-degree sum; c_op = edges whose destination is still
    unvisited when the edge is processed. The order is fixed: the frontier in ascending vertex id,
    each vertex's edges in CSR order, every store taking effect at once, so a vertex reached twice
    in a round counts once and c_op equals the size of the next frontier. So Listing 1 is not
    replayed: every count follows from the levels (checked against one run of simdmodel's BFS by
    `check_frontiers`);
    the CPU trace (`opmachine.cpu.cpu_trace`) runs Listing 1 itself and a test checks it issues
    these counts. The frontiers' walk order does not matter; only `frontiers.levels` and
    `frontiers.source` are used.
    """
    levels = check_frontiers(graph, frontiers)
    reached = levels >= 0
    depth = int(levels.max()) + 1
    frontier_sizes = np.bincount(levels[reached], minlength=depth).astype(np.int64)
    edge_sizes = np.bincount(levels[reached], weights=graph.degrees()[reached], minlength=depth).astype(np.int64)
    # Round r stores level r into exactly the vertices of level r, each once (the first edge that
    # finds it unvisited), and the last round stores nothing.
    stores = np.zeros(depth, dtype=np.int64)
    stores[:-1] = frontier_sizes[1:]
    n = graph.n
    rounds = np.arange(1, depth + 1, dtype=np.int64)
    return pd.DataFrame({
        "round": rounds,
        "level": rounds - 1,
        "jobs": np.full(depth, n, dtype=np.int64),
        "c_ani": np.full(depth, n, dtype=np.int64),
        "c_nf1": np.full(depth, n, dtype=np.int64),
        "c_erl": frontier_sizes,
        "c_edl": edge_sizes,
        "c_nf2": edge_sizes.copy(),
        "c_op": stores,
    }, columns=list(COLUMNS))


def completions_of(row: Mapping) -> dict[str, int]:
    """Server name -> completions for one row of `bfs_completions`, ready for `analyze`."""
    return {name: int(row[f"c_{name.lower()}"]) for name in SERVERS}
