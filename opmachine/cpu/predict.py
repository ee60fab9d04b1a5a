"""Per-round prediction of the serial BFS of seed 003 Listing 1 on a CPU (seed 003 §4-5, Eq. 1-2).

The operator machine's jobs are the memory instructions of `cpu_trace`, its servers the cache
levels that `cache_levels` finds serving them; `predict_cpu` gives completions per level and round,
visits, the bottleneck level and the predicted round time. A profile of latencies only (seed 003's
Westmere) gives N * max_i V_i S_i (MLP 1 as in §5); a profile measured on its machine, with the
loop's costs (`LoopCosts`), prices each round's events (`events.round_events`) instead: the core's
scan, set-up, stores and mispredictions, and each edge's level load at the cost of the level serving
it, with the overlap the machine achieves measured inside that cost.
"""
from __future__ import annotations

import dataclasses
import math

import numba
import numpy as np
import pandas as pd

from simdmodel.errors import InputError
from simdmodel.frontier import Frontiers
from simdmodel.graph import CSRGraph

from ..bfs_machine import SERVERS
from .events import (EVENT_NAMES, EXIT_SWITCHES, FRONTIER, FRONTIER_SWITCHES, NODES, STORE_SWITCHES, STORES,
                     round_events)
from .hierarchy import LEVEL_NAMES, cache_levels, profile_levels
from .trace import CPUTrace, cpu_trace, thread_traces

TRACE_SERVERS = SERVERS[1:]  # ANI issues no memory instruction on the CPU
CORE = "core"  # the loop's own work, the server beside the cache levels in a loop-cost prediction


@numba.njit(cache=True, nogil=True)
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
    levels = profile_levels(profile)
    values = [float(level.service_ns) for level in levels] + [float(profile.memory_ns)]
    for name, value in zip([level.name for level in levels] + ["memory"], values, strict=True):
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"profile {profile.name!r}: service time of {name} must be > 0, "
                             f"got {value}")
    return np.array(values, dtype=np.float64)


def predict_cpu(graph: CSRGraph, frontiers: Frontiers, profile, model: str = "setassoc",
                trace: CPUTrace | None = None, warm: bool = False) -> pd.DataFrame:
    """Per-round operational analysis of serial topology-driven BFS on a CPU (seed 003 §4-5, Eq. 1-2).

    One row per round r = 1..depth (`level` = r-1 is the frontier it expands). jobs N = memory
    instructions; c_l1..c_mem = accesses served at each level (completions C_i, by `cache_levels`
    with `model`, caches cold or, with `warm`, as the previous run of the same BFS leaves them);
    v_* = C_i / N; S_i = the profile's service times (latencies; memory_ns for MEM).
    `serial_ns` = sum_i C_i S_i is the MLP-1 bound: every access waits its full latency, one after
    another. `jobs_nf1`..`jobs_op` split N by operator-machine server (ERL issues two loads per node).

    A profile without loop costs (seed 003's Westmere) predicts with the bottleneck law at MLP 1 (§5):
    predicted_ns = N * max_i V_i S_i = max_i C_i S_i, bottleneck = argmax (ties: lower level), the
    time if every level overlapped perfectly with the others (the model of Fig. 3).

    A profile with loop costs (`profile.loop`, measured on the machine) prices each round's events
    (`events.round_events`, columns `nodes` .. `store_switches`): the core's demand
    `core_ns` = call + nodes x scan + frontier x vertex + (frontier + exit switches) x branch
    + stores x store + store switches x store branch, and each level's demand `l1_ns` .. `mem_ns` =
    its edge loads x gather_L + its stream starts beyond L1 x (gather_L - gather_L1). One core does
    all of it, so predicted_ns is their sum; bottleneck names the largest, `bound_ns` is it alone
    (the bottleneck law's lower bound). A precomputed `trace` with the profile's line size may be passed.
    """
    _check_levels(profile)
    if trace is None:
        trace = cpu_trace(graph, frontiers, line_bytes=int(profile.line_bytes))
    return _predict(trace, cache_levels(trace, profile, model, warm=warm), profile, model, warm)


def _check_levels(profile) -> None:
    """InputError, before any work, for a profile the CPU model cannot use (levels, service times)."""
    levels = profile_levels(profile)
    if len(levels) != 3:
        raise InputError(f"profile {profile.name!r} has {len(levels)} cache levels; the CPU model "
                         f"needs L1, L2 and L3")
    service_times_ns(profile)


def _predict(trace: CPUTrace, served: np.ndarray, profile, model: str, warm: bool, counted=None) -> pd.DataFrame:
    """`predict_cpu`'s table from the trace and the level serving each access; `counted`, a function
    of (events, gathers, starts) giving the gathers and starts to price instead (counters mode)."""
    service = service_times_ns(profile)
    by_level, by_server = _round_counts_njit(served, trace.servers, trace.round_ptr,
                                             len(LEVEL_NAMES), len(SERVERS))
    rounds = np.arange(1, trace.rounds + 1, dtype=np.int64)
    jobs = by_level.sum(axis=1)
    demand_ns = by_level * service  # C_i * S_i = N * V_i * S_i
    table = {"round": rounds, "level": rounds - 1, "jobs": jobs}
    for j, name in enumerate(LEVEL_NAMES):
        table[f"c_{name.lower()}"] = by_level[:, j]
    for j, name in enumerate(LEVEL_NAMES):
        table[f"v_{name.lower()}"] = by_level[:, j] / jobs
    if profile.loop is None:
        table["bottleneck"] = np.array(LEVEL_NAMES, dtype=object)[np.argmax(demand_ns, axis=1)]
        table["predicted_ns"] = demand_ns.max(axis=1)
    else:
        events, gathers, starts = round_events(trace, served, len(LEVEL_NAMES))
        for j, name in enumerate(EVENT_NAMES):
            table[name] = events[:, j]
        if counted is not None:
            gathers, starts = counted(gathers, starts)
        demands = loop_demands_ns(profile.loop, events, gathers, starts)
        names = [CORE, *LEVEL_NAMES]
        for j, name in enumerate(names):
            table[f"{name.lower()}_ns"] = demands[:, j]
        table["bottleneck"] = np.array(names, dtype=object)[np.argmax(demands, axis=1)]
        table["predicted_ns"] = demands.sum(axis=1)
        table["bound_ns"] = demands.max(axis=1)
    table["serial_ns"] = demand_ns.sum(axis=1)
    for name in TRACE_SERVERS:
        table[f"jobs_{name.lower()}"] = by_server[:, SERVERS.index(name)]
    frame = pd.DataFrame(table)
    frame.attrs.update(profile=str(profile.name), model=model, warm=bool(warm),
                       time="loop costs" if profile.loop is not None else "bottleneck law, MLP 1",
                       service_ns=dict(zip(LEVEL_NAMES, service.tolist(), strict=True)))
    return frame


def loop_demands_ns(loop, events: np.ndarray, gathers: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Per round, the demand (ns) on the core, then on each cache level and memory, from the loop's
    measured costs and the round's events (`predict_cpu` gives the formula)."""
    gather = np.asarray(loop.gather_ns, dtype=np.float64)
    core = (loop.call_ns + events[:, NODES] * loop.scan_ns + events[:, FRONTIER] * loop.vertex_ns
            + (events[:, FRONTIER_SWITCHES] + events[:, EXIT_SWITCHES]) * loop.branch_ns
            + events[:, STORES] * loop.store_ns + events[:, STORE_SWITCHES] * loop.store_branch_ns)
    levels = gathers * gather + starts * (gather - gather[0])
    return np.column_stack([core, levels])


def predict_cpu_threads(graph: CSRGraph, frontiers: Frontiers, profile, threads: int, model: str = "setassoc",
                        warm: bool = False) -> pd.DataFrame:
    """Per-round prediction of the multi-threaded Listing 1 (`kernel.listing1_parallel_round`) on
    `threads` cores: the operator machine with T threads as T warps of width 1.

    Thread t runs the loop over its chunk of nodes (`trace.thread_traces`); its caches are its own
    L1 and L2 and a 1/T share of the last level (shared by the cores); its events are priced with
    the multi-threaded loop's measured costs (`profile.parallel_loop`, one thread's) as one serial
    core's are (`predict_cpu`), less the fixed cost of a call. A round ends when its slowest thread does:

        predicted_ns = call_ns (of a round on the profile's threads) + max_t (core_ns + l1_ns + ... + mem_ns of thread t)

    One row per round: `thread0_ns` .. (each thread's demand), `slowest` (which thread), its
    `bottleneck` server, `imbalance` (slowest / mean), `predicted_ns`. Needs a profile with
    `[parallel_loop]` (`python -m opmachine.cpu_microbench`); InputError otherwise.
    """
    _check_levels(profile)
    levels = profile.levels
    if int(threads) < 1:
        raise InputError(f"threads must be at least 1, got {threads}")
    loop = profile.parallel_loop
    if loop is None:
        raise InputError(f"profile {profile.name!r} has no measured costs of the multi-threaded loop "
                         f"([parallel_loop]); measure one with python -m opmachine.cpu_microbench --out FILE")
    last = levels[-1]
    share = max(int(last.bytes) // int(threads) // (last.ways * profile.line_bytes), 1) * last.ways * profile.line_bytes
    per_thread = dataclasses.replace(profile, levels=(*levels[:-1], dataclasses.replace(last, bytes=share)))
    body = dataclasses.replace(loop, call_ns=0.0)
    names = np.array([CORE, *LEVEL_NAMES], dtype=object)
    totals, busiest = [], []
    for trace in thread_traces(graph, frontiers, threads, line_bytes=int(profile.line_bytes)):
        served = cache_levels(trace, per_thread, model, warm=warm)
        demands = loop_demands_ns(body, *round_events(trace, served, len(LEVEL_NAMES)))
        totals.append(demands.sum(axis=1))
        busiest.append(names[np.argmax(demands, axis=1)])
    totals = np.column_stack(totals)
    slowest = np.argmax(totals, axis=1)
    rounds = np.arange(1, totals.shape[0] + 1, dtype=np.int64)
    table = {"round": rounds, "level": rounds - 1}
    for t in range(totals.shape[1]):
        table[f"thread{t}_ns"] = totals[:, t]
    table["slowest"] = slowest
    table["bottleneck"] = np.column_stack(busiest)[rounds - 1, slowest]
    table["imbalance"] = totals.max(axis=1) / np.maximum(totals.mean(axis=1), 1e-300)
    table["predicted_ns"] = loop.call_ns + totals.max(axis=1)
    frame = pd.DataFrame(table)
    frame.attrs.update(profile=str(profile.name), model=model, warm=bool(warm), threads=int(threads),
                       time="loop costs, slowest thread")
    return frame


COUNTED_COLUMNS = ("round", "loads", "l1_misses", "llc_misses")


def predict_cpu_counted(graph: CSRGraph, frontiers: Frontiers, profile, counters: pd.DataFrame,
                        model: str = "setassoc", warm: bool = True) -> pd.DataFrame:
    """Counters mode on a CPU: `predict_cpu` with the measured cache counts of each round
    (`measure.measure_cpu_counters`: loads, L1 load misses, LLC load misses) in place of the
    simulated ones, so the model's error shows apart from the cache simulation's.

    Only the totals per round are measured, not which instruction missed; each level group's
    measured misses replace the simulated ones of the loads the loop's costs price by level (the
    edges' level loads and the stream starts) in proportion: their L2 and L3 counts scale by
    measured (L1 misses - LLC misses) / simulated L2 + L3 load hits, their memory counts by
    measured LLC misses / simulated memory loads, and L1 keeps the rest. Where the simulation has
    none in a group the measurement has, they go to the edges' loads in the share edges' loads have
    of all loads. Adds `sim_l1_misses`, `sim_llc_misses` (the simulation's, loads only) beside the
    measured `loads`, `l1_misses`, `llc_misses`. The profile needs loop costs.
    """
    _check_levels(profile)
    if profile.loop is None:
        raise InputError(f"counters mode prices the loop's events: profile {profile.name!r} has no [loop] costs")
    missing = [column for column in COUNTED_COLUMNS if column not in counters]
    if missing:
        raise InputError(f"counters: missing column {missing[0]!r} (need {', '.join(COUNTED_COLUMNS)})")
    trace = cpu_trace(graph, frontiers, line_bytes=int(profile.line_bytes))
    if sorted(counters["round"].tolist()) != list(range(1, trace.rounds + 1)):
        raise InputError(f"counters: rounds must be 1..{trace.rounds}, one row each (this BFS's depth)")
    measured = counters.set_index("round").loc[range(1, trace.rounds + 1)]
    served = cache_levels(trace, profile, model, warm=warm)
    loads = np.where(trace.servers != SERVERS.index("OP"), served, len(LEVEL_NAMES)).astype(np.int8)
    by_level, _ = _round_counts_njit(loads, trace.servers, trace.round_ptr, len(LEVEL_NAMES) + 1, len(SERVERS))
    simulated = by_level[:, : len(LEVEL_NAMES)]
    mid = np.maximum(measured["l1_misses"].to_numpy(float) - measured["llc_misses"].to_numpy(float), 0.0)
    memory = measured["llc_misses"].to_numpy(float)

    def counted(gathers, starts):
        share = gathers.sum(axis=1) / np.maximum(simulated.sum(axis=1), 1)
        return (_counted(gathers, simulated, mid, memory, share),
                _counted(starts, simulated, mid, memory, np.zeros_like(share)))

    table = _predict(trace, served, profile, model, warm, counted)
    table["loads"] = measured["loads"].to_numpy()
    table["l1_misses"] = measured["l1_misses"].to_numpy()
    table["llc_misses"] = measured["llc_misses"].to_numpy()
    table["sim_l1_misses"] = simulated[:, 1:].sum(axis=1)
    table["sim_llc_misses"] = simulated[:, -1]
    table.attrs.update(time="loop costs, measured cache counts")
    return table


def _counted(counts: np.ndarray, simulated: np.ndarray, mid: np.ndarray, memory: np.ndarray,
             share: np.ndarray) -> np.ndarray:
    """`counts` by level (L1, L2, L3, memory) with the measured middle (L2 + L3) and memory totals in
    place of the simulated ones (`predict_cpu_counted` says how)."""
    out = counts.astype(np.float64).copy()
    sim_mid = simulated[:, 1] + simulated[:, 2]
    sim_memory = simulated[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        mid_scale = np.where(sim_mid > 0, mid / np.where(sim_mid > 0, sim_mid, 1), 0.0)
        memory_scale = np.where(sim_memory > 0, memory / np.where(sim_memory > 0, sim_memory, 1), 0.0)
    out[:, 1] *= mid_scale
    out[:, 2] *= mid_scale
    out[:, 3] *= memory_scale
    out[:, 1] += np.where(sim_mid > 0, 0.0, mid * share)  # misses the simulation has none of
    out[:, 3] += np.where(sim_memory > 0, 0.0, memory * share)
    out[:, 0] = np.maximum(counts.sum(axis=1) - out[:, 1:].sum(axis=1), 0.0)
    return out


def miss_errors(counted: pd.DataFrame) -> dict[str, float]:
    """Whole-BFS signed error of the simulated L1 and LLC load misses against the measured ones
    (`predict_cpu_counted`'s table): (simulated - measured) / measured."""
    out = {}
    for name in ("l1_misses", "llc_misses"):
        measured = float(counted[name].sum())
        out[name] = float(counted[f"sim_{name}"].sum()) / measured - 1 if measured > 0 else float("nan")
    return out
