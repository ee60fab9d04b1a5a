"""Every memory instruction of the serial BFS of seed 003 Listing 1, as cache-line ids (seed 003 §4).

On a CPU the operator machine's jobs are memory instructions (seed 003 §4). `cpu_trace` records
them in program order from the recording twin of the measured kernel (`kernel.traced_rounds`),
with each array at its `opmachine.layout.CPU_LAYOUT` base: row_start (n+1), edge_dst (m), level (n),
4-byte elements, one after another on 4096-byte boundaries, the first at address 0. Addresses are
virtual; the model has no TLB and no physical page mapping.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError
from simdmodel.frontier import Frontiers
from simdmodel.graph import INDEX_LIMIT, CSRGraph

from ..bfs_machine import check_frontiers
from ..layout import CPU_LAYOUT
from .kernel import chunk_bounds, traced_chunk_rounds, traced_rounds


def cpu_layout(n: int, m: int) -> dict[str, int]:
    """Base byte address of each `CPU_LAYOUT` array (4096-byte aligned) and `end` (bytes spanned)."""
    layout = CPU_LAYOUT.layout(n, m)
    return {**layout.base_bytes, "end": layout.end_bytes}


@dataclass(frozen=True, eq=False)
class CPUTrace:
    """Every memory instruction of one serial topology-driven BFS, in program order.

    `line_ids[k]` is instruction k's byte address // `line_bytes`; `servers[k]` its server code
    (index into `opmachine.bfs_machine.SERVERS`: 1 NF1, 2 ERL, 3 EDL, 4 NF2, 5 OP); round r
    (1-based, LEVEL = r) is `line_ids[round_ptr[r-1]:round_ptr[r]]`. `bases_bytes` gives each
    array's base address and `end` the bytes the layout spans.

    Memory: 4 bytes (int32 line ids, whenever the largest id fits) or 8 bytes, plus 1 byte (int8
    server) per instruction. A BFS of depth D over n vertices and m edges (all reached) issues
    D*n + 3n + 2m - 1 instructions: 45M for n = 1M, m = 16M, D = 10 (225 MB); a 490K-vertex
    grid of depth 906 issues 449M (2.1 GB). While it runs, `cache_levels` needs about 11 more
    bytes per instruction for "setassoc" (an int64 copy of the ids, hit masks, the int8 result)
    and 17 for "lru" (int64 ids and stack distances).
    """

    line_ids: np.ndarray
    servers: np.ndarray
    round_ptr: np.ndarray
    line_bytes: int
    bases_bytes: dict = field(default_factory=dict)

    @property
    def rounds(self) -> int:
        """Number of BFS rounds (= BFS depth; the last round discovers nothing)."""
        return self.round_ptr.size - 1

    @property
    def jobs(self) -> int:
        """Memory instructions of the whole BFS."""
        return int(self.line_ids.size)

    @property
    def universe_lines(self) -> int:
        """Number of distinct line ids the layout can produce (ids are 0..universe_lines-1)."""
        return -(-self.bases_bytes["end"] // self.line_bytes)

    @property
    def nbytes(self) -> int:
        """Bytes held by the trace arrays."""
        return self.line_ids.nbytes + self.servers.nbytes + self.round_ptr.nbytes

    def round(self, r: int) -> slice:
        """Slice of the trace arrays holding round r (1-based)."""
        if not 1 <= r <= self.rounds:
            raise InputError(f"round {r} outside 1..{self.rounds}")
        return slice(int(self.round_ptr[r - 1]), int(self.round_ptr[r]))


def cpu_trace(graph: CSRGraph, frontiers: Frontiers, line_bytes: int = 64) -> CPUTrace:
    """Line ids and servers of every memory instruction of a serial topology-driven BFS (seed 003 §4).

    Round r = 1..depth runs Listing 1 with LEVEL = r: for v in 0..n-1 it loads level[v] (NF1); if
    level[v] == r-1 it loads row_start[v] and row_start[v+1] (ERL), then per edge e loads
    edge_dst[e] (EDL) and level[dst] (NF2), and stores level[dst] = r (OP) if dst was unvisited, the
    store taking effect at once. The last round discovers nothing. Only `frontiers.levels` and
    `frontiers.source` are used; they must be simdmodel's BFS levels of `graph` (else InputError).
    `line_bytes` (a power of two; 1 gives byte addresses) sets the id granularity.
    """
    levels = check_frontiers(graph, frontiers)  # the trace's buffers are sized from these levels
    line_bytes = int(line_bytes)
    if line_bytes < 1 or line_bytes & (line_bytes - 1):
        raise InputError(f"line_bytes must be a power of two >= 1, got {line_bytes}")
    n, m = graph.n, graph.m
    bases = cpu_layout(n, m)
    depth = int(levels.max()) + 1
    reached = levels >= 0
    reached_count = int(reached.sum())
    reached_edges = int(graph.degrees()[reached].sum())
    # Every reached vertex passes NF1 once (2 ERL loads, 2 loads per edge); every vertex but the
    # source is stored once; every round loads all n levels.
    expected = depth * n + 2 * reached_count + 2 * reached_edges + reached_count - 1
    id_dtype = np.int32 if (bases["end"] - 1) // line_bytes <= INDEX_LIMIT else np.int64
    line_ids = np.empty(expected, dtype=id_dtype)
    servers = np.empty(expected, dtype=np.int8)
    round_ptr = np.empty(depth + 1, dtype=np.int64)
    issued, replay = traced_rounds(graph.indptr, graph.indices, int(frontiers.source), depth,
                                   bases["row_start"], bases["edge_dst"], bases["level"],
                                   line_bytes.bit_length() - 1, line_ids, servers, round_ptr)
    if issued != expected or not np.array_equal(replay, levels):
        raise RuntimeError("the traced Listing 1 differs from simdmodel's BFS (a bug, not a user mistake)")
    return CPUTrace(line_ids, servers, round_ptr, line_bytes, bases)


def thread_traces(graph: CSRGraph, frontiers: Frontiers, threads: int, line_bytes: int = 64) -> list[CPUTrace]:
    """One trace per thread of the multi-threaded Listing 1 (`kernel.listing1_parallel_round`): thread
    t's memory instructions over its chunk of nodes (`kernel.chunk_bounds`), round by round, each
    round from the BFS's labels before it and with only the thread's own stores seen
    (`kernel.traced_chunk_rounds`). Same layout and line ids as `cpu_trace`."""
    levels = check_frontiers(graph, frontiers)
    threads = int(threads)
    if threads < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    line_bytes = int(line_bytes)
    if line_bytes < 1 or line_bytes & (line_bytes - 1):
        raise InputError(f"line_bytes must be a power of two >= 1, got {line_bytes}")
    bases = cpu_layout(graph.n, graph.m)
    depth = int(levels.max()) + 1
    id_dtype = np.int32 if (bases["end"] - 1) // line_bytes <= INDEX_LIMIT else np.int64
    shift = line_bytes.bit_length() - 1
    traces = []
    for first, end in chunk_bounds(graph.n, threads):
        def run(line_ids, servers, round_ptr, first=first, end=end):
            return traced_chunk_rounds(graph.indptr, graph.indices, levels, depth, first, end, bases["row_start"],
                                       bases["edge_dst"], bases["level"], shift, line_ids, servers, round_ptr)

        round_ptr = np.empty(depth + 1, dtype=np.int64)
        issued = run(np.empty(0, dtype=id_dtype), np.empty(0, dtype=np.int8), round_ptr)  # count, then record
        line_ids, servers = np.empty(issued, dtype=id_dtype), np.empty(issued, dtype=np.int8)
        run(line_ids, servers, round_ptr)
        traces.append(CPUTrace(line_ids, servers, round_ptr, line_bytes, bases))
    return traces
