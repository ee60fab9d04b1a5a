"""The numbers behind one graph's report section, gathered from the public simdmodel and opmachine APIs.

Per graph: size and degree statistics and the mean BFS depth (`simdmodel.graph_info`), the
frontier sizes per level (seed 000 Fig. 2), lane accounting of every mapping over K seeded sources
(`simdmodel.analyze`, seed 000 §4-5: UA, UR, idle, ME), and the operator-machine prediction
(`opmachine.rank_mappings`, seed 003 §6-7) of one BFS from the first source with every mapping,
ranked by predicted time; for the fastest (the pick) and for seed 003's topology-driven kernel
(or, when topo is the pick, the mapping with the highest ME) the jobs, sectors and DRAM outcomes
per server, MLP, bottleneck and time per launch, summed here per round. With a CPU profile, the same
BFS on that CPU (`cpu_prediction`): the serial and the multi-threaded topology-driven BFS, so the
report answers "GPU or CPU for this graph?".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

import opmachine as om
import simdmodel as sm
from simdmodel.algorithms import BFS
from simdmodel.errors import InputError
from simdmodel.frontier import check_source
from simdmodel.lanes import frontier_sizes

from .defaults import SEED
from .measured import MeasuredComparison, compare_run, display_folder, first_source, pick_run
from .suites import SuiteGraph

TOPO = "topo"


@dataclass(eq=False)
class GraphData:
    """Everything the report shows for one graph (tidy tables; one BFS source = `opm_source`)."""

    graph: SuiteGraph
    name: str
    n: int
    m: int
    info: dict
    sources: tuple[int, ...]
    frontiers: pd.DataFrame
    lanes: pd.DataFrame
    lanes_per_level: pd.DataFrame
    lane_phases: pd.DataFrame
    """The phased mappings' lanes per phase (`simdmodel.Analysis.phase_summary`; swc: cta, warp, scan)."""
    best: dict
    best_group: dict
    kernels: tuple[str, ...]
    opm_source: int
    opm_summary: dict
    launches: pd.DataFrame
    server_rounds: pd.DataFrame
    rounds: pd.DataFrame
    ranking: om.Ranking | None = field(default=None, repr=False)
    measured: MeasuredComparison | None = field(default=None)
    measured_note: str | None = field(default=None)
    cpu: dict | None = field(default=None)

    @property
    def label(self) -> str:
        return self.graph.label

    @property
    def kernel(self) -> str:
        """The kernel drawn first: the pick, the mapping with the lowest predicted time."""
        return self.kernels[0]

    @property
    def second(self) -> str:
        """The kernel drawn beside the pick: topo, or the mapping with the highest ME when topo is the pick."""
        return self.kernels[1]


def _with_mapping(table: pd.DataFrame) -> pd.DataFrame:
    """The table with its `mapping` label right after `group_size` (the report's column order)."""
    out = table.drop(columns="mapping")
    out.insert(out.columns.get_loc("group_size") + 1, "mapping", table["mapping"].to_numpy())
    return out


def _best(table: pd.DataFrame) -> dict:
    row = table.iloc[0]
    return {"mapping": str(row["mapping"]), "strategy": str(row["strategy"]),
            "group_size": None if pd.isna(row["group_size"]) else int(row["group_size"]), "me": float(row["me"])}


def round_table(launches: pd.DataFrame) -> pd.DataFrame:
    """Per (kernel, level): launches, predicted time (sum over the round's launches) and the
    bottleneck server of the round's longest launch."""
    ordered = launches.sort_values(["kernel", "level", "predicted_ns"], ascending=[True, True, False],
                                   kind="stable")
    grouped = ordered.groupby(["kernel", "level"], sort=True)
    rounds = grouped.agg(launches=("phase", "size"), predicted_ns=("predicted_ns", "sum"),
                         bottleneck=("bottleneck", "first"),
                         frontier_edges=("frontier_edges", "sum")).reset_index()
    return rounds


def server_round_table(per_server: pd.DataFrame) -> pd.DataFrame:
    """Per (kernel, level, server), summed over the round's launches: jobs, L2 sectors, DRAM sectors,
    row hits and misses; sectors per job (seed 003 Fig. 8's visits per job) and the server's share
    of the round's DRAM row-buffer misses (Fig. 10)."""
    counts = ["jobs", "l2_sectors", "l2_hits", "dram_sectors", "row_hits", "row_misses"]
    table = per_server.groupby(["kernel", "level", "server"], sort=False)[counts].sum().reset_index()
    order = {name: i for i, name in enumerate(om.SERVERS)}
    table = table.sort_values(["kernel", "level", "server"], key=lambda c: c.map(order) if c.name == "server" else c,
                              kind="stable", ignore_index=True)
    jobs = table["jobs"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["sectors_per_job"] = np.where(jobs > 0, table["l2_sectors"] / np.where(jobs > 0, jobs, 1), np.nan)
    misses_in_round = table.groupby(["kernel", "level"])["row_misses"].transform("sum").to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        table["row_miss_share"] = np.where(misses_in_round > 0, table["row_misses"] / np.where(
            misses_in_round > 0, misses_in_round, 1), np.nan)
    return table


def cpu_prediction(graph, source: int, cpu) -> dict:
    """The BFS from `source` predicted on CPU profile `cpu` (`opmachine.cpu`, caches warm from the previous
    run): the serial loop's time and busiest server, and where the profile measured the multi-threaded
    loop (`[parallel_loop]`), its time on the threads it was measured on (else None)."""
    from opmachine.cpu import predict_cpu, predict_cpu_threads
    from simdmodel.frontier import bfs

    front = bfs(graph, source)
    serial = predict_cpu(graph, front, cpu, warm=True)
    servers = ["core", "L1", "L2", "L3", "MEM"]
    busiest = (max(servers, key=lambda name: serial[f"{name.lower()}_ns"].sum()) if "core_ns" in serial
               else str(serial["bottleneck"].mode().iloc[0]))
    out = {"profile": cpu.name, "serial_ns": float(serial["predicted_ns"].sum()), "bottleneck": busiest,
           "threads": None, "threads_ns": None}
    parallel = cpu.parallel_loop
    if parallel is not None:
        threaded = predict_cpu_threads(graph, front, cpu, parallel.threads, warm=True)
        out.update(threads=int(parallel.threads), threads_ns=float(threaded["predicted_ns"].sum()))
    return out


def fastest_cpu_ns(cpu: dict) -> float:
    """The faster of a `cpu_prediction`'s serial and multi-threaded BFS time (ns)."""
    return min(v for v in (cpu["serial_ns"], cpu["threads_ns"]) if v is not None)


def collect_graph(graph: SuiteGraph, profile, sources: int = 10, seed: int = SEED, l2_model: str = "setassoc",
                  runs=(), line=None, cpu=None) -> GraphData:
    """Load `graph` (`SuiteGraph.load`) and gather its report numbers on `profile` (see the module docstring);
    with `cpu` (a CPU profile), the same BFS on that CPU too (`GraphData.cpu`, `cpu_prediction`).

    `runs` are candidate GPU measurements (`measured.MeasuredRun`); when one belongs to this graph,
    the prediction uses its first measured source, so the figures and the comparison show one BFS.
    `line(message)`, when given, is told each phase (progress lines when output is piped).
    """
    say = line or (lambda message: None)
    say("loading and lane accounting")
    loaded = graph.load()
    chosen = tuple(int(s) for s in sm.pick_sources(loaded, sources, seed))
    analysis = sm.analyze(loaded, chosen)
    info = sm.graph_info(loaded)  # its mean depth over these sources comes from the analysis' BFS runs
    depths = analysis.frontier_sizes.groupby("source")["level"].max() + 1
    info["avg_depth"] = float(np.mean([depths[s] for s in chosen]))
    lanes = _with_mapping(analysis.summary())
    per_level = _with_mapping(analysis.summary(per_level=True, per_source=False))
    best = _best(analysis.best())
    best_group = _best(analysis.best(strategy="group"))
    run, note = pick_run(runs, loaded.name, loaded.n, loaded.m, profile.name)
    source = chosen[0]
    if run is not None:
        try:
            source = check_source(loaded, first_source(run))
        except (InputError, OSError, ValueError) as error:
            if run.explicit:
                raise
            run, note = None, f"measurements in {display_folder(run.folder)} could not be read ({error}); not shown"
    # a BFS's launches run back to back, so each finds the L2 as the one before left it
    ranking = om.rank_mappings(loaded, [source], profile, l2_model=l2_model, warm_l2=l2_model == "setassoc",
                               on_kernel=lambda i, count, label: say(f"predicting {label} [{i}/{count}]"))
    pick = str(ranking.pick["mapping"])
    kernels = [pick, TOPO if pick != TOPO else best["mapping"]]
    if run is not None:
        kinds = list(dict.fromkeys(run.measured["kernel"]))
        if not set(kernels) & set(kinds):
            kernels.append(kinds[0])
    results = [ranking.results[k] if k in ranking.results else
               om.predict_bfs(loaded, source, om.parse_kernel(k), profile, l2_model=l2_model,
                              warm_l2=l2_model == "setassoc") for k in kernels]
    frontiers = analysis.frontier_sizes
    if source not in chosen:  # a measured source: its frontiers are drawn beside its prediction
        frontiers = pd.concat([frontiers, frontier_sizes(loaded, BFS.rounds(loaded, source, "sorted"), source)],
                              ignore_index=True)
    launches = pd.concat([r.per_level for r in results], ignore_index=True)
    launches.insert(0, "source", source)
    per_server = pd.concat([r.per_server.assign(kernel=r.kernel) for r in results], ignore_index=True)
    data = GraphData(
        graph=graph, name=loaded.name, n=loaded.n, m=loaded.m, info=info, sources=chosen,
        frontiers=frontiers, lanes=lanes, lanes_per_level=per_level, lane_phases=analysis.phase_summary(), best=best,
        best_group=best_group, kernels=tuple(kernels), opm_source=source,
        opm_summary={r.kernel: r.summary() for r in results}, launches=launches,
        server_rounds=server_round_table(per_server), rounds=round_table(launches), ranking=ranking,
        measured_note=note,
    )
    if cpu is not None:
        say(f"predicting the CPU BFS on {cpu.name}")
        data.cpu = cpu_prediction(loaded, source, cpu)
    if run is not None:
        say("comparing with the measurements")
        try:
            data.measured = compare_run(loaded, run, launches, source, profile)
        except (InputError, KeyError, ValueError) as error:
            if run.explicit:
                raise InputError(f"{run.folder}: cannot compare with the prediction ({error})") from None
            data.measured_note = (f"measurements in {display_folder(run.folder)} could not be compared ({error}); "
                                  "not shown")
    return data
