"""The events of Listing 1's loop per round that `LoopCosts` prices, read off the trace.

A round's time on one core is not its memory instructions one by one: it is the node scan, the
frontier nodes' set-up, the edges (whose level loads the core overlaps, at a cost set by the level
that serves them), the stores, and the branches the predictor gets wrong. All of them follow from
the trace (`cpu_trace`: the servers in program order) and the level serving each access
(`cache_levels`), so they are exact for a given cache model, but the mispredictions: those are
counted as the changes of a branch's outcome ("switches"), which a predictor cannot foresee in an
irregular sequence (a regular one, such as strict alternation, it would learn):

- frontier switches: changes of "level[v] == r-1" from node to node (the scan's branch);
- exit switches: a frontier node whose edge count differs from the previous frontier node's (the
  inner loop's exit, predicted from the last trip count);
- store switches: changes of "level[dst] == -1" from edge to edge.

Stream starts are the accesses that begin a new stream: a frontier node's first `row_start` load and
its first `edge_dst` load; the rest of each stream the prefetcher brings in.
"""
from __future__ import annotations

import numba
import numpy as np

from .kernel import EDL, ERL, NF1, OP

EVENT_NAMES = ("nodes", "frontier", "edges", "stores", "frontier_switches", "exit_switches", "store_switches")
NODES, FRONTIER, EDGES, STORES, FRONTIER_SWITCHES, EXIT_SWITCHES, STORE_SWITCHES = range(len(EVENT_NAMES))
EVENT_COUNT = len(EVENT_NAMES)


@numba.njit(cache=True, nogil=True)
def _round_events_njit(servers, served, round_ptr, servers_count, out):
    """Fill out[r] = events, then gathers by serving level, then stream starts by serving level."""
    gathers, starts = EVENT_COUNT, EVENT_COUNT + servers_count
    for r in range(round_ptr.size - 1):
        end = round_ptr[r + 1]
        k = round_ptr[r]
        was_frontier = False
        stored_last = False
        last_degree = -1
        while k < end:
            if servers[k] == NF1:
                out[r, NODES] += 1
                frontier = k + 1 < end and servers[k + 1] == ERL
                if frontier != was_frontier:
                    out[r, FRONTIER_SWITCHES] += 1
                    was_frontier = frontier
                k += 1
                continue
            # ERL, ERL of a frontier node, then per edge EDL, NF2 and maybe OP
            out[r, FRONTIER] += 1
            out[r, starts + served[k]] += 1
            k += 2
            degree = 0
            while k < end and servers[k] == EDL:
                if degree == 0:
                    out[r, starts + served[k]] += 1
                out[r, gathers + served[k + 1]] += 1
                stores = k + 2 < end and servers[k + 2] == OP
                if stores != stored_last:
                    out[r, STORE_SWITCHES] += 1
                    stored_last = stores
                if stores:
                    out[r, STORES] += 1
                k += 3 if stores else 2
                degree += 1
            out[r, EDGES] += degree
            if degree > 0 and degree != last_degree:
                out[r, EXIT_SWITCHES] += 1
            last_degree = degree


def round_events(trace, served: np.ndarray, servers_count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per round (rows): the `EVENT_NAMES` counts, the edges' level loads (NF2) by the level serving
    them, and the stream starts by the level serving them (columns: level 0 = L1 .. `servers_count`-1
    = memory, as `cache_levels` numbers them)."""
    out = np.zeros((trace.rounds, EVENT_COUNT + 2 * servers_count), dtype=np.int64)
    _round_events_njit(trace.servers, served, trace.round_ptr, servers_count, out)
    return out[:, :EVENT_COUNT], out[:, EVENT_COUNT : EVENT_COUNT + servers_count], out[:, EVENT_COUNT + servers_count :]
