"""`simdmodel report`: one command from graphs to a report a researcher can read (index.html, report.md,
figures/, tables/).

`build_report` checks every input first (specs, GPU profile, K, measurement folders, the output
folder), then gathers each graph's numbers (`collect`), draws the figures from the tidy tables
(`tables`, `figures`) and writes everything into a staging folder that replaces DIR only when
complete (`write`).
"""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from tqdm.auto import tqdm

import opmachine as om
import simdmodel as sm
from simdmodel.errors import InputError
from simdmodel.generators import canonical_spec, is_generator_spec

from . import figures as fig
from .collect import TOPO, GraphData, collect_graph
from .defaults import L2_MODEL, SEED, TIME_MODEL, choose_gpu, settings_line
from .measured import (MeasuredRun, committed_coupling_runs, committed_runs, couplings_table,
                       queue_levels_table, read_run)
from .suites import SuiteGraph, graph_slug, size_hint, suite_for
from .tables import report_tables
from .workers import run_calls
from .write import ReportTarget

DEFAULT_SOURCES = 10
"""Seed 000 §5.1 runs BFS from 10 pseudo-random sources."""


@dataclass(eq=False)
class Report:
    """A finished report in memory: settings, graphs, tables by CSV name, figures per section."""

    settings: dict
    graphs: list[GraphData]
    tables: dict[str, pd.DataFrame]
    figures: dict[str, list[fig.ReportFigure]] = field(default_factory=dict)


def check_specs(specs) -> None:
    """Raise InputError for a spec that is neither an existing file nor a valid generator spec."""
    for spec in specs:
        path = Path(spec)
        if path.exists():
            if path.is_dir():
                raise InputError(f"{spec}: is a directory, expected a graph file")
            continue
        if not is_generator_spec(spec):
            raise InputError(f"{spec}: no such file (and not a generator spec)")
        canonical_spec(spec)


def saturation_mlp(profile) -> float | None:
    """Requests in flight that keep DRAM at full bandwidth by Little's law (seed 003 §7.3): bandwidth x
    the unloaded row-miss latency S(1) / sector size."""
    curve = profile.curves.get("row_miss") or profile.curves.get("dram")
    if curve is None:
        return None
    return float(profile.dram_bandwidth_gbs * curve(1.0) / profile.sector_bytes)


def _me_mappings(lanes: pd.DataFrame, best_group: str, count: int = 3) -> list[str]:
    """The mappings drawn per level: the best by overall ME, and the best group size."""
    ranked = lanes.dropna(subset=["me"]).sort_values("me", ascending=False, kind="stable")["mapping"].tolist()
    chosen = ranked[:2]
    for mapping in [best_group, *ranked[2:]]:
        if len(chosen) >= count:
            break
        if mapping not in chosen:
            chosen.append(mapping)
    return chosen


def _rows(table: pd.DataFrame, **equal) -> pd.DataFrame:
    mask = pd.Series(True, index=table.index)
    for column, value in equal.items():
        mask &= table[column] == value
    return table[mask].reset_index(drop=True)


def draw_figures(report: Report, graph_figures: list[list[fig.ReportFigure]]) -> None:
    """Draw the suite's figure from the report's tables and file each graph's own (`graph_figures`, in
    the order of `report.graphs`)."""
    drawn = {"suite": [fig.ReportFigure(
        "00-suite-degrees", "Out-degree distribution", "Out-degree per graph: whiskers at the minimum and maximum, "
        "box at the quartiles, line at the median, x at the mean (seed 000 Fig. 3).", "degrees",
        fig.render(fig.degree_figure(report.tables["degrees"])))]}
    if report.settings.get("cpu"):
        summary = report.tables["summary"]
        drawn["suite"].append(fig.ReportFigure(
            "01-suite-gpu-cpu", "GPU or CPU", f"Predicted time of one BFS per graph (the source of each graph's "
            f"predictions): the GPU's pick on {report.settings['gpu']} beside the serial and multi-threaded BFS on "
            f"CPU {report.settings['cpu']} (the loop's measured costs, caches warm).", "summary",
            fig.render(fig.gpu_cpu_figure(summary, report.settings["gpu"], report.settings["cpu"]))))
    levels = report.tables.get("queue_levels_measured")
    if levels is not None:
        drawn["suite"].append(fig.ReportFigure(
            "00-suite-redundant-expansion", "Redundant expansion measured (seed 001 Fig. 7)",
            f"Per graph of the committed GPU run {levels['run'].iloc[0]} ({levels['device'].iloc[0]}), the edge "
            "queue each contraction of a two-phase BFS read, per level, in each lookup mode, beside the logical edge "
            "frontier (what the atomic lookup, which no race touches, read): ids that race through seed 001's "
            "plain-store lookup are expanded again, level after level (-label: no culling; -history: both culling "
            "heuristics), until a queue may outgrow 2m ids (overflow).", "queue_levels_measured",
            fig.render(fig.redundant_expansion_figure(levels))))
    couplings = report.tables.get("couplings")
    if couplings is not None and len(couplings):
        first = couplings[couplings["run"] == couplings["run"].iloc[0]]
        predicted = first["predicted_gteps"].notna().any()
        drawn["suite"].append(fig.ReportFigure(
            "00-suite-couplings", "Seed 001's couplings measured and predicted (seed 001 Fig. 10)",
            f"The traversal rate of each coupling (the atomic lookup) over expand-contract's on the graphs of the "
            f"committed GPU run {first['run'].iloc[0]} ({first['device'].iloc[0]}; the median over its sources), "
            + ("measured, and predicted by the operator machine for the same sources (`opmachine.coupled`, "
               "recorded in the run's pooled/time.csv by `python -m gpu_validate.coupling_validation --measured`)."
               if predicted else "measured only: the run has no predicted times."), "couplings",
            fig.render(fig.couplings_figure(first))))
    for data, items in zip(report.graphs, graph_figures):
        drawn[data.label] = items
    report.figures = drawn


def _graph_tables(tables: dict[str, pd.DataFrame], label: str) -> dict[str, pd.DataFrame]:
    """Each per-graph table's rows of graph `label` (what one graph's figures read)."""
    return {name: _rows(table, graph=label) for name, table in tables.items() if "graph" in table.columns}


def graph_figures(index: int, data: GraphData, tables: dict[str, pd.DataFrame], gpu: str) -> list[fig.ReportFigure]:
    """One graph's figures (`index`: its place in the report), from its rows of the report's tables (each
    graph's rows are its own tables, `report_tables([data])`, so a worker draws them as it finishes)."""
    label, kernel = data.label, data.kernel
    stem = f"{index:02d}-{graph_slug(label) or 'graph'}"
    items = []

    def add(kind, title, caption, table, figure):
        items.append(fig.ReportFigure(f"{stem}-{kind}", title, caption, table, fig.render(figure)))

    first = data.opm_source
    add("frontier", "Frontier sizes per level",
        f"Vertices and edges in each BFS level's frontier from source {first}, the BFS the predictions below "
        f"follow (seed 000 Fig. 2); the lane accounting's {len(data.sources)} sources are in the table.",
        "frontiers", fig.frontier_figure(_rows(tables["frontiers"], graph=label, source=first), label, first))
    ranked = _rows(tables["recommendation"], graph=label)
    add("ranking", "Predicted BFS time per mapping",
        f"Predicted time of a whole BFS from source {first} on {gpu} with every mapping, fastest first, and "
        f"its ME: the pick is the fastest ({data.kernel}), whatever its lane waste.", "recommendation",
        fig.ranking_figure(ranked, label, gpu))
    lanes = _rows(tables["lanes"], graph=label)
    add("lanes", "Lane use per mapping",
        f"Share of lane slots that do useful edge work (ME) or are wasted inside a group (UA), between groups of "
        f"a warp (UR) or idle, summed over all levels of {len(data.sources)} BFS runs (seed 000 Fig. 6).",
        "lanes", fig.lanes_figure(lanes, label, data.best["mapping"]))
    chosen = _me_mappings(lanes, data.best_group["mapping"])
    per_level = _rows(tables["lanes_per_level"], graph=label)
    per_level = per_level[per_level["mapping"].isin(chosen)]
    per_level = per_level.sort_values(["mapping", "level"], key=lambda c: c.map(chosen.index)
                                      if c.name == "mapping" else c, kind="stable")
    add("me-levels", "ME per level", f"Mapping efficiency per level, over all sources, for {', '.join(chosen)}.",
        "lanes_per_level", fig.me_levels_figure(per_level, label))
    servers = _rows(tables["opm_servers"], graph=label, kernel=kernel)
    phases = "expansion and compaction launches" if kernel != TOPO else "one launch per round"
    add("jobs", "Jobs per round by server",
        f"Warp-level memory instructions per round and operator-machine server, kernel {kernel} ({phases}; "
        f"seed 003 Fig. 9), BFS from source {data.opm_source}.", "opm_servers",
        fig.jobs_figure(servers, label, kernel))
    add("visits", "Visits per job",
        f"32-byte L2 sectors touched per warp instruction, by server and round (seed 003 Fig. 8), kernel "
        f"{kernel}.", "opm_servers", fig.visits_figure(servers, label, kernel))
    add("dram", "DRAM traffic and row-buffer misses by server",
        f"Top: DRAM sectors per round that hit or miss the open row. Bottom: each server's share of the "
        f"row-buffer misses (seed 003 Fig. 10), kernel {kernel}, {gpu} geometry.", "opm_servers",
        fig.dram_figure(servers, label, kernel))
    launches = _rows(tables["opm_launches"], graph=label, kernel=kernel)
    add("mlp", "Memory-level parallelism",
        "Requests in flight per launch at L2 and DRAM, m = V x n with the load n = N_G / W_max (seed 003 "
        "Fig. 11); dotted lines are compaction launches. The dashed line is the MLP that would keep DRAM at "
        f"full bandwidth on {gpu} (bandwidth x unloaded row-miss latency / sector).", "opm_launches",
        fig.mlp_figure(launches, label, kernel, launches["dram_saturation_mlp"].iloc[0]))
    rounds = _rows(tables["opm_rounds"], graph=label)
    add("time", "Predicted time per round",
        f"Predicted time per round on {gpu} (sum of the round's launches) for the pick {kernel} and "
        f"{data.second}; markers show the bottleneck server of the round's longest launch.",
        "opm_rounds", fig.time_figure(rounds, label, gpu))
    if data.measured is not None:
        run = data.measured.run
        measured_rounds = _rows(tables["measured_rounds"], graph=label)
        errors = _rows(tables["measured_time_errors"], graph=label) if "measured_time_errors" in tables \
            else pd.DataFrame()
        add("measured-time", "Predicted vs measured time per round",
            f"Measured on {run.device_name} ({run.folder.name}), median of repeats, against this report's "
            f"prediction; grey band ±20% of the measurement (seed 003 Fig. 7).", "measured_rounds",
            fig.measured_time_figure(measured_rounds, errors, label, run.device_name))
        if "cte_model_ns" in measured_rounds.columns and measured_rounds["cte_model_ns"].notna().any():
            add("measured-cte", "Measured vs predicted vs seed 004's CTE analysis",
                f"The same rounds beside seed 004's instruction-only analysis (Eqs. 4.1-4.3 as each kernel maps "
                f"its work; T_MAP and T_RED from the compiled kernel and the measured instruction costs of "
                f"{gpu}; the same per-launch constants added): what a model without memory misses.",
                "measured_rounds",
                fig.cte_time_figure(measured_rounds.dropna(subset=["cte_model_ns"]), label, run.device_name))
        if "measured_me" in tables and len(_rows(tables["measured_me"], graph=label)):
            add("measured-me", "Predicted vs measured ME",
                f"ME of every measured data-driven kernel: simdmodel's lane accounting against the lane counters "
                "of the instrumented GPU build (useful lanes / lane slots), over the "
                f"{data.measured.me['sources'].iloc[0]} "
                f"measured sources.", "measured_me",
                fig.measured_me_figure(_rows(tables["measured_me"], graph=label), label, run.device_name))
    return items


def collect_suite(suite, profile, sources: int, runs, progress: bool = False, line=None,
                  jobs: int = 1, cpu=None) -> list[tuple[GraphData, list[fig.ReportFigure]]]:
    """Every graph's numbers (`collect_graph`) and figures (`graph_figures`), in suite order. With `jobs` > 1
    the graphs are gathered by that many worker processes (`workers.run_calls`; each loads its own graph
    from its spec, and draws its figures while the others still gather); the numbers are the same either way."""
    count = len(suite)
    bar = tqdm(total=count, desc="graphs", unit="graph", disable=not progress)
    prefixes = [f"[{i}/{count}] {graph.label}" for i, graph in enumerate(suite, start=1)]
    try:
        if jobs <= 1 or count <= 1:
            graphs = []
            for graph, prefix in zip(suite, prefixes):
                bar.set_postfix_str(graph.label)
                graphs.append(_collect_one(graph, profile, sources, runs, line, prefix, len(graphs) + 1, cpu))
                bar.update()
            return graphs
        bar.set_postfix_str(f"{min(jobs, count)} at once")
        largest_first = sorted(range(count), key=lambda i: -size_hint(suite[i]))  # no large graph started last
        calls = [(_collect_one, (suite[i], profile, sources, runs, line, prefixes[i], i + 1, cpu)) for i in largest_first]
        graphs = [None] * count
        for i, data in zip(largest_first, run_calls(calls, min(jobs, count))):
            graphs[i] = data
        bar.update(count)
        return graphs
    finally:
        bar.close()


def _collect_one(graph, profile, sources, runs, line, prefix, index, cpu=None):
    """One graph's numbers and figures (`index`: its place in the report), its progress lines prefixed with
    `[i/n] label`."""
    say = None if line is None else (lambda message: line(f"{prefix}: {message}"))
    data = collect_graph(graph, profile, sources, SEED, L2_MODEL, runs, say, cpu)
    if say is not None:
        say("drawing its figures")
    tables = _graph_tables(report_tables([data], saturation_mlp(profile)), data.label)
    return data, graph_figures(index, data, tables, profile.name)


def build_report(specs=None, gpu: str | None = None, sources: int = DEFAULT_SOURCES, out="report",
                 measured=(), progress: bool = False, command: str | None = None, line=None,
                 jobs: int = 1, graphs: tuple[SuiteGraph, ...] | None = None,
                 graphs_from: str | None = None, cpu: str | None = None) -> Report:
    """Build the report of `specs` (default: the built-in suite) into folder `out`, all or nothing.

    `graphs` (SuiteGraph entries, e.g. a folder's manifest: `manifest.directory_graphs`) replaces
    `specs`; `graphs_from` says where they came from, for the report's header. `gpu` names the
    profile (default: `defaults.default_gpu()`). Bad input (a spec, the profile, `sources` < 1, a
    measurement folder, an unusable `out`) raises InputError before any graph is loaded. `line(message)`, when given, is told each graph's phases (progress lines when piped;
    a module-level function, so worker processes can call it too). `jobs` > 1 gathers that many
    graphs at once in worker processes (`collect_suite`). `cpu` names a CPU profile (a shipped name or a
    .toml): each graph's BFS is then predicted on that CPU too, serial and multi-threaded, beside the
    GPU's pick. Returns the report as written.
    """
    default_suite = not specs and graphs is None
    suite: tuple[SuiteGraph, ...] = graphs if graphs is not None else suite_for(specs)
    check_specs([g.spec for g in suite])
    if sources < 1:
        raise InputError(f"--sources must be at least 1, got {sources}")
    if jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {jobs}")
    choice = choose_gpu(gpu)
    profile = om.load_profile(choice.profile, kind="gpu")
    cpu_profile = om.load_profile(cpu, kind="cpu") if cpu is not None else None
    explicit = [read_run(folder) for folder in measured]
    target = ReportTarget(out)
    try:
        runs: list[MeasuredRun] = [*explicit, *committed_runs()]
        collected = collect_suite(suite, profile, sources, runs, progress, line, jobs, cpu_profile)
        graphs = [data for data, _ in collected]
        used = {d.measured.run.folder for d in graphs if d.measured is not None}
        for run in explicit:
            if run.folder not in used:
                raise InputError(f"{run.folder}: measured graph {run.graph} is not in this report")
        settings = {
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "version": sm.__version__, "command": command or "simdmodel report", "gpu": profile.name,
            "gpu_description": profile.description, "curves_measured": bool(profile.measured),
            "provenance": dict(profile.provenance), "l2_model": L2_MODEL, "sources": sources, "seed": SEED,
            "defaults": settings_line(profile, choice, L2_MODEL, True, TIME_MODEL),
            "saturation_mlp": saturation_mlp(profile), "default_suite": default_suite,
            "graphs_from": graphs_from, "cpu": None if cpu_profile is None else cpu_profile.name,
            "cpu_description": None if cpu_profile is None else cpu_profile.description,
        }
        tables = report_tables(graphs, settings["saturation_mlp"])
        coupling_runs = committed_coupling_runs(profile.name)
        for name, table in (("couplings", couplings_table(coupling_runs)),
                            ("queue_levels_measured", queue_levels_table(coupling_runs))):
            if len(table):
                tables[name] = table
        report = Report(settings, graphs, tables)
        draw_figures(report, [figures for _, figures in collected])
        target.write(report)
    except BaseException:
        target.discard()
        raise
    return report
