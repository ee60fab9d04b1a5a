"""The CPU mapping of the BFS operator machine (seed 003 §4-5).

On a CPU the operator machine's jobs are memory instructions and the servers are the levels of
the cache hierarchy: an instruction completes at the level that serves it (seed 003 §4). This
module models the serial, single-threaded topology-driven BFS of Listing 1:

- `cpu_trace`: every memory instruction of the whole BFS in program order, as cache-line ids, with
  the operator-machine server that issued it;
- `cache_levels`: the level (L1, L2, L3, memory) that serves each access, by a set-associative
  LRU per level or by one fully associative stack-distance pass;
- `predict_cpu`: completions per level and round, visits, the bottleneck level and the predicted
  round time N * max_i V_i S_i (Eq. 1-2, MLP 1 as in §5);
- `measure_cpu_rounds`: the same BFS in numba, timed round by round on this machine;
- `perf_support` / `perf_cache_counts`: whole-BFS hardware cache counts through `perf stat`, where
  the machine exposes them.

Memory layout of the model (and of the measured kernel): three arrays of 4-byte elements,
`row_start` (n+1), `edge_dst` (m), `level` (n), laid out one after another in that order, each at
a 4096-byte aligned base, the first at address 0. Addresses are virtual; the model has no TLB and
no physical page mapping.

`python -c "import opmachine.cpu as c; c._main()" --graph SPEC --source S [--skip-bfs]` runs one
serial BFS on the measured kernel (`python -m opmachine.cpu ...` works too, with a harmless runpy
warning because the package imports this module); `perf_cache_counts` runs it under `perf stat`.
"""
from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field

import numba
import numpy as np
import pandas as pd

from simdmodel.errors import InputError
from simdmodel.frontier import Frontiers, bfs
from simdmodel.graph import INDEX_LIMIT, CSRGraph

from .bfs_machine import SERVERS, check_frontiers
from .layout import check_row_offsets
from .profile import CPUProfile

ELEMENT_BYTES = 4
ALIGN_BYTES = 4096
ARRAYS = ("row_start", "edge_dst", "level")

# Server codes in `CPUTrace.servers`: the index into SERVERS. ANI (code 0) issues no memory
# instruction on the CPU (the node loop counter lives in a register), so it never appears.
NF1, ERL, EDL, NF2, OP = (SERVERS.index(name) for name in ("NF1", "ERL", "EDL", "NF2", "OP"))
TRACE_SERVERS = SERVERS[1:]

LEVEL_NAMES = ("L1", "L2", "L3", "MEM")
MODELS = ("setassoc", "lru")
PERF_EVENTS = ("L1-dcache-loads", "L1-dcache-load-misses", "LLC-loads", "LLC-load-misses")


# ----------------------------------------------------------------------------------------------
# Address trace
# ----------------------------------------------------------------------------------------------

def cpu_layout(n: int, m: int) -> dict[str, int]:
    """Base byte address of each array (`ARRAYS` order, 4096-byte aligned) and `end` (bytes spanned)."""
    lengths = {"row_start": n + 1, "edge_dst": m, "level": n}
    base = {}
    offset_bytes = 0
    for name in ARRAYS:
        base[name] = offset_bytes
        size_bytes = lengths[name] * ELEMENT_BYTES
        offset_bytes += -(-size_bytes // ALIGN_BYTES) * ALIGN_BYTES
    base["end"] = offset_bytes
    return base


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


@numba.njit(cache=True)
def _cpu_trace_njit(indptr, indices, source, rounds, row_base, dst_base, level_base, shift,
                    line_ids, servers, round_ptr):
    """Run Listing 1 for `rounds` rounds and record each memory instruction's line id and server.

    Writes at most `line_ids.size` entries; returns (instructions issued, final levels).
    """
    n = indptr.size - 1
    level = np.full(n, -1, dtype=np.int32)
    level[source] = 0
    cap = line_ids.size
    pos = 0
    for r in range(1, rounds + 1):
        round_ptr[r - 1] = pos
        for v in range(n):
            if pos < cap:  # NF1: load level[v]
                line_ids[pos] = (level_base + ELEMENT_BYTES * v) >> shift
                servers[pos] = NF1
            pos += 1
            if level[v] != r - 1:
                continue
            if pos + 1 < cap:  # ERL: load row_start[v], row_start[v+1]
                line_ids[pos] = (row_base + ELEMENT_BYTES * v) >> shift
                servers[pos] = ERL
                line_ids[pos + 1] = (row_base + ELEMENT_BYTES * (v + 1)) >> shift
                servers[pos + 1] = ERL
            pos += 2
            for e in range(indptr[v], indptr[v + 1]):
                dst = indices[e]
                if pos + 1 < cap:  # EDL: load edge_dst[e]; NF2: load level[dst]
                    line_ids[pos] = (dst_base + ELEMENT_BYTES * e) >> shift
                    servers[pos] = EDL
                    line_ids[pos + 1] = (level_base + ELEMENT_BYTES * dst) >> shift
                    servers[pos + 1] = NF2
                pos += 2
                if level[dst] < 0:
                    level[dst] = r  # OP: store level[dst], taking effect at once
                    if pos < cap:
                        line_ids[pos] = (level_base + ELEMENT_BYTES * dst) >> shift
                        servers[pos] = OP
                    pos += 1
    round_ptr[rounds] = pos
    return pos, level


def _check_graph_frontiers(graph, frontiers) -> np.ndarray:
    levels = check_frontiers(graph, frontiers)
    check_row_offsets(graph.m)
    return levels


def cpu_trace(graph: CSRGraph, frontiers: Frontiers, line_bytes: int = 64) -> CPUTrace:
    """Line ids and servers of every memory instruction of a serial topology-driven BFS (seed 003 §4).

    Round r = 1..depth runs Listing 1 with LEVEL = r: for v in 0..n-1 it loads level[v] (NF1); if
    level[v] == r-1 it loads row_start[v] and row_start[v+1] (ERL), then per edge e loads
    edge_dst[e] (EDL) and level[dst] (NF2), and stores level[dst] = r (OP) if dst was unvisited, the
    store taking effect at once. The last round discovers nothing. Only `frontiers.levels` and
    `frontiers.source` are used; the replay must reproduce `frontiers.levels` (else InputError).
    `line_bytes` (a power of two; 1 gives byte addresses) sets the id granularity.
    """
    levels = _check_graph_frontiers(graph, frontiers)
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
    issued, replay = _cpu_trace_njit(graph.indptr, graph.indices, int(frontiers.source), depth,
                                     bases["row_start"], bases["edge_dst"], bases["level"],
                                     line_bytes.bit_length() - 1, line_ids, servers, round_ptr)
    if issued != expected or not np.array_equal(replay, levels):
        raise InputError("frontiers do not come from a BFS of this graph (levels differ)")
    return CPUTrace(line_ids, servers, round_ptr, line_bytes, bases)


# ----------------------------------------------------------------------------------------------
# Cache hierarchy
# ----------------------------------------------------------------------------------------------

@numba.njit(cache=True)
def _levels_from_distances_njit(distances, capacities_lines):
    """Level of each access in an inclusive LRU hierarchy: the first capacity > stack distance."""
    k = capacities_lines.size
    out = np.empty(distances.size, dtype=np.int8)
    for i in range(distances.size):
        d = distances[i]
        level = k
        if d >= 0:
            for j in range(k):
                if d < capacities_lines[j]:
                    level = j
                    break
        out[i] = level
    return out


def _profile_levels(profile):
    if not isinstance(profile, CPUProfile):
        raise InputError(f"the CPU model needs a CPU profile (load_profile(..., kind='cpu')), "
                         f"got {type(profile).__name__}")
    levels = tuple(profile.levels)
    if not levels:
        raise InputError(f"profile {getattr(profile, 'name', '?')!r} has no cache levels")
    return levels


def cache_levels(trace, profile, model: str = "setassoc") -> np.ndarray:
    """Which level serves each access: 0 = L1, 1 = L2, 2 = L3, ..., len(levels) = memory (int8).

    `trace` is a `CPUTrace` (its line size must equal the profile's) or an array of line ids in
    units of `profile.line_bytes`. Caches start empty and stay warm across rounds (one serial
    process). Loads and stores are treated alike (write-allocate; write-backs are not modelled).

    - "setassoc": each level is a set-associative LRU cache of the profile's size, ways and line
      (not sectored), in series: L2 sees only L1 misses, L3 only L2 misses. The levels are thus
      non-inclusive: a hit in L1 does not refresh the line in L2 or L3.
    - "lru": a fully associative, inclusive LRU hierarchy from one stack-distance pass: an access
      is served by the first level whose capacity in lines exceeds its stack distance (the number
      of distinct lines touched since the previous access to this line); first accesses go to
      memory.
    """
    from . import cache

    if model not in MODELS:
        raise InputError(f"unknown cache model {model!r} (choose from {', '.join(MODELS)})")
    levels = _profile_levels(profile)
    line_bytes = int(profile.line_bytes)
    if isinstance(trace, CPUTrace):
        if trace.line_bytes != line_bytes:
            raise InputError(f"trace has {trace.line_bytes}-byte lines but profile "
                             f"{profile.name!r} has {line_bytes}-byte lines")
        ids = trace.line_ids
    else:
        ids = np.asarray(trace)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise InputError("line ids must be a 1-D integer array")
        if ids.size and ids.min() < 0:
            raise InputError("line ids must be >= 0")
    memory_level = len(levels)
    if ids.size == 0:
        return np.empty(0, dtype=np.int8)
    if model == "lru":
        capacities = np.array([int(level.bytes) // line_bytes for level in levels], dtype=np.int64)
        distances = cache.stack_distances(ids, int(ids.max()) + 1)
        return _levels_from_distances_njit(distances, capacities)
    out = np.full(ids.size, memory_level, dtype=np.int8)
    positions = None  # indices into ids of the accesses that reach the current level
    remaining = ids
    for index, level in enumerate(levels):
        if remaining.size == 0:
            break
        geometry = cache.SetAssocGeometry.from_capacity(int(level.bytes), int(level.ways),
                                                        line_bytes=line_bytes,
                                                        sector_bytes=line_bytes)
        hits = np.asarray(cache.setassoc_hits(remaining, geometry)[0], dtype=bool)
        misses = np.flatnonzero(~hits)
        if positions is None:
            out[hits] = index
            positions = misses
        else:
            out[positions[hits]] = index
            positions = positions[misses]
        remaining = ids[positions]
    return out


# ----------------------------------------------------------------------------------------------
# Prediction
# ----------------------------------------------------------------------------------------------

@numba.njit(cache=True)
def _round_counts_njit(levels, servers, round_ptr, level_count, server_count):
    """Accesses per round and level, and per round and server."""
    rounds = round_ptr.size - 1
    by_level = np.zeros((rounds, level_count), dtype=np.int64)
    by_server = np.zeros((rounds, server_count), dtype=np.int64)
    for r in range(rounds):
        for k in range(round_ptr[r], round_ptr[r + 1]):
            by_level[r, levels[k]] += 1
            by_server[r, servers[k]] += 1
    return by_level, by_server


def service_times_ns(profile) -> np.ndarray:
    """S_i per level, L1 first, memory last (seed 003 §5), from a CPU profile."""
    levels = _profile_levels(profile)
    values = [float(level.service_ns) for level in levels] + [float(profile.memory_ns)]
    for name, value in zip([level.name for level in levels] + ["memory"], values, strict=True):
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"profile {profile.name!r}: service time of {name} must be > 0, "
                             f"got {value}")
    return np.array(values, dtype=np.float64)


def predict_cpu(graph: CSRGraph, frontiers: Frontiers, profile, model: str = "setassoc",
                trace: CPUTrace | None = None) -> pd.DataFrame:
    """Per-round operational analysis of serial topology-driven BFS on a CPU (seed 003 §4-5, Eq. 1-2).

    One row per round r = 1..depth (`level` = r-1 is the frontier it expands). jobs N = memory
    instructions; c_l1..c_mem = accesses served at each level (completions C_i, by `cache_levels`
    with `model`); v_* = C_i / N; S_i = the profile's service times (latencies; memory_ns for
    MEM). With an MLP of 1 (§5) the bottleneck law gives

        predicted_ns = N * max_i V_i S_i = max_i C_i S_i,   bottleneck = argmax (ties: lower level)

    the time if every level overlapped perfectly with the others (the model of Fig. 3), while
    `serial_ns` = sum_i C_i S_i is the MLP-1 upper bound: every access waits its full latency,
    one after another. `jobs_nf1`..`jobs_op` split N by operator-machine server (ERL issues two
    loads per node). A precomputed `trace` with the profile's line size may be passed.
    """
    levels = _profile_levels(profile)
    if len(levels) != 3:
        raise InputError(f"profile {profile.name!r} has {len(levels)} cache levels; the CPU model "
                         f"needs L1, L2 and L3")
    service = service_times_ns(profile)
    if trace is None:
        trace = cpu_trace(graph, frontiers, line_bytes=int(profile.line_bytes))
    served = cache_levels(trace, profile, model)
    by_level, by_server = _round_counts_njit(served, trace.servers, trace.round_ptr,
                                             len(LEVEL_NAMES), len(SERVERS))
    rounds = np.arange(1, trace.rounds + 1, dtype=np.int64)
    jobs = by_level.sum(axis=1)
    demand_ns = by_level * service  # C_i * S_i = N * V_i * S_i
    bottleneck = np.argmax(demand_ns, axis=1)
    table = {"round": rounds, "level": rounds - 1, "jobs": jobs}
    for j, name in enumerate(LEVEL_NAMES):
        table[f"c_{name.lower()}"] = by_level[:, j]
    for j, name in enumerate(LEVEL_NAMES):
        table[f"v_{name.lower()}"] = by_level[:, j] / jobs
    table["bottleneck"] = np.array(LEVEL_NAMES, dtype=object)[bottleneck]
    table["predicted_ns"] = demand_ns.max(axis=1)
    table["serial_ns"] = demand_ns.sum(axis=1)
    for name in TRACE_SERVERS:
        table[f"jobs_{name.lower()}"] = by_server[:, SERVERS.index(name)]
    frame = pd.DataFrame(table)
    frame.attrs.update(profile=str(profile.name), model=model,
                       service_ns=dict(zip(LEVEL_NAMES, service.tolist(), strict=True)))
    return frame


# ----------------------------------------------------------------------------------------------
# Measurement
# ----------------------------------------------------------------------------------------------

@numba.njit(cache=True)
def _bfs_round_njit(row_start, edge_dst, level, level_value):
    """One round of Listing 1 (LEVEL = level_value); returns the vertices it labelled."""
    discovered = 0
    previous = level_value - 1
    for v in range(level.size):
        if level[v] != previous:
            continue
        for e in range(row_start[v], row_start[v + 1]):
            dst = edge_dst[e]
            if level[dst] == -1:
                level[dst] = level_value
                discovered += 1
    return discovered


@numba.njit(cache=True)
def _bfs_all_rounds_njit(row_start, edge_dst, level, source):
    """Whole topology-driven BFS from `source`; returns the number of rounds run."""
    level[:] = -1
    level[source] = 0
    r = 1
    while _bfs_round_njit(row_start, edge_dst, level, r) > 0:
        r += 1
    return r


def _aligned_copy(values: np.ndarray, dtype) -> np.ndarray:
    """A copy of `values` as `dtype` whose data starts on an ALIGN_BYTES boundary (as the model lays it out)."""
    dtype = np.dtype(dtype)
    count = max(int(values.size), 1)
    raw = np.empty(count * dtype.itemsize + ALIGN_BYTES, dtype=np.uint8)
    skip = -raw.ctypes.data % ALIGN_BYTES
    out = raw[skip : skip + count * dtype.itemsize].view(dtype)[: values.size]
    out[:] = values
    return out


def kernel_arrays(graph: CSRGraph) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """row_start, edge_dst, level as 4-byte arrays on 4096-byte boundaries, as `cpu_trace` assumes."""
    check_row_offsets(graph.m)
    row_start = _aligned_copy(graph.indptr, np.int32)
    edge_dst = _aligned_copy(graph.indices, np.int32)
    level = _aligned_copy(np.full(graph.n, -1, dtype=np.int32), np.int32)
    return row_start, edge_dst, level


def measure_cpu_rounds(graph: CSRGraph, source: int, repeats: int = 5) -> pd.DataFrame:
    """Time each round of a serial topology-driven BFS in numba on this CPU (seed 003 §5's measurement).

    Each round is one njit call of Listing 1 timed with `time.perf_counter_ns` (so a few hundred
    ns of call overhead are included); one whole BFS runs first as a warm-up (compilation, page
    faults), then `repeats` BFS runs, each starting from freshly reset levels; the median per
    round is reported. Arrays are 4-byte and 4096-byte aligned, as in `cpu_trace`. Columns: round,
    level (= round - 1, the frontier expanded), measured_ns. Raises RuntimeError if the final
    levels differ from `simdmodel.frontier.bfs`'s (a bug, not a user mistake).
    """
    if int(repeats) < 1:
        raise InputError(f"repeats must be at least 1, got {repeats}")
    repeats = int(repeats)
    expected = bfs(graph, source)  # InputError for a bad source
    source = expected.source
    rounds = expected.depth
    row_start, edge_dst, level = kernel_arrays(graph)
    _bfs_all_rounds_njit(row_start, edge_dst, level, source)  # warm-up
    times_ns = np.empty((repeats, rounds), dtype=np.int64)
    sizes = expected.vertex_frontier_sizes()
    for rep in range(repeats):
        level[:] = -1
        level[source] = 0
        for r in range(1, rounds + 1):
            start = time.perf_counter_ns()
            discovered = _bfs_round_njit(row_start, edge_dst, level, r)
            times_ns[rep, r - 1] = time.perf_counter_ns() - start
            wanted = int(sizes[r]) if r < rounds else 0
            if discovered != wanted:
                raise RuntimeError(f"measured BFS round {r} labelled {discovered} vertices, "
                                   f"expected {wanted}")
        if not np.array_equal(level, expected.levels):
            raise RuntimeError("measured BFS levels differ from simdmodel.frontier.bfs")
    round_numbers = np.arange(1, rounds + 1, dtype=np.int64)
    return pd.DataFrame({
        "round": round_numbers,
        "level": round_numbers - 1,
        "measured_ns": np.median(times_ns, axis=0),
    })


# ----------------------------------------------------------------------------------------------
# Hardware counters
# ----------------------------------------------------------------------------------------------

def _perf_stat(command: list[str], timeout_s: float) -> tuple[int, str]:
    """Run `perf stat -x, -e PERF_EVENTS command`; return (exit status, perf's stderr)."""
    perf = shutil.which("perf")
    if perf is None:
        raise FileNotFoundError("perf")
    result = subprocess.run([perf, "stat", "-x", ",", "-e", ",".join(PERF_EVENTS), "--", *command],
                            capture_output=True, text=True, timeout=timeout_s)
    return result.returncode, result.stderr


def _parse_perf_csv(text: str) -> dict[str, str]:
    """Event name -> raw value field from `perf stat -x,` output (value, unit, event, ...)."""
    values = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) >= 3 and parts[2] in PERF_EVENTS:
            values[parts[2]] = parts[0]
    return values


def perf_support() -> tuple[bool, str]:
    """Whether `perf stat` can count L1-dcache and LLC loads and misses here, with a one-line reason.

    Runs `perf stat -e L1-dcache-loads,L1-dcache-load-misses,LLC-loads,LLC-load-misses true`.
    Virtual machines often expose no hardware counters: perf then reports `<not supported>` for
    every event and this returns False.
    """
    try:
        status, text = _perf_stat(["true"], timeout_s=20)
    except FileNotFoundError:
        return False, "perf is not installed (no `perf` on PATH)"
    except (subprocess.TimeoutExpired, OSError) as error:
        return False, f"perf stat did not run: {error}"
    values = _parse_perf_csv(text)
    if status != 0 or not values:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "no output")
        return False, f"perf stat failed (exit {status}): {first}"
    bad = {event: value for event, value in values.items() if not value.strip().isdigit()}
    missing = [event for event in PERF_EVENTS if event not in values]
    if missing:
        return False, f"perf stat reported nothing for {', '.join(missing)}"
    if bad:
        kinds = sorted(set(bad.values()))
        if len(bad) == len(PERF_EVENTS):
            return False, (f"perf reports {' / '.join(kinds)} for every cache event "
                           f"(no hardware counters exposed here, e.g. in a virtual machine)")
        return False, f"perf reports {' / '.join(kinds)} for {', '.join(bad)}"
    return True, f"perf stat counts {', '.join(PERF_EVENTS)}"


def perf_cache_counts(spec: str, source: int, timeout_s: float = 600) -> dict[str, int]:
    """Hardware cache counts of one whole serial BFS (this module's `_main`) under perf stat.

    The same command with `--skip-bfs` (load the graph, prepare arrays, compile, no BFS) is
    counted too and subtracted, so the counts cover the BFS rounds plus noise. Compare with the
    model's whole-BFS totals: loads ~ jobs minus stores, L1 load misses ~ loads not served by L1,
    LLC load misses ~ c_mem of loads. Raises InputError when `perf_support()` is False.
    """
    supported, reason = perf_support()
    if not supported:
        raise InputError(f"hardware cache counters unavailable: {reason}")
    base = [sys.executable, "-c", "import sys, opmachine.cpu as c; sys.exit(c._main())",
            "--graph", str(spec), "--source", str(int(source))]
    counts = {}
    for label, command in (("bfs", base), ("baseline", base + ["--skip-bfs"])):
        status, text = _perf_stat(command, timeout_s=timeout_s)
        if status != 0:
            tail = text.strip().splitlines()[-1] if text.strip() else "no output"
            raise InputError(f"BFS under perf stat failed (exit {status}): {tail}")
        counts[label] = {event: int(value) for event, value in _parse_perf_csv(text).items()}
    return {event: counts["bfs"][event] - counts["baseline"][event] for event in PERF_EVENTS}


def model_totals(prediction: pd.DataFrame) -> dict[str, int]:
    """Whole-BFS totals of a `predict_cpu` table: jobs and accesses served per level."""
    return {column: int(prediction[column].sum())
            for column in ("jobs", "c_l1", "c_l2", "c_l3", "c_mem")}


def _main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opmachine.cpu",
                                     description="Run one serial topology-driven BFS (seed 003 §4).")
    parser.add_argument("--graph", required=True, help="graph file or generator spec")
    parser.add_argument("--source", type=int, required=True, help="source vertex")
    parser.add_argument("--skip-bfs", action="store_true",
                        help="prepare and compile only (the baseline perf_cache_counts subtracts)")
    args = parser.parse_args(argv)
    from simdmodel.frontier import check_source
    from simdmodel.load import load_graph

    try:
        graph = load_graph(args.graph)
        source = check_source(graph, args.source)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    row_start, edge_dst, level = kernel_arrays(graph)
    tiny_row, tiny_dst, tiny_level = (np.array([0, 1, 1], dtype=np.int32), np.array([1], np.int32),
                                      np.full(2, -1, dtype=np.int32))
    _bfs_all_rounds_njit(tiny_row, tiny_dst, tiny_level, 0)  # compile or load from cache
    if args.skip_bfs:
        print("rounds 0")
        return 0
    rounds = _bfs_all_rounds_njit(row_start, edge_dst, level, source)
    print(f"rounds {rounds} reached {int((level >= 0).sum())}")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
