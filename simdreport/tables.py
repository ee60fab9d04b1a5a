"""The report's tidy tables (tables/*.csv): one row per graph x ... with a `graph` label column.

Every figure is drawn from rows of one of these tables, so the CSVs hold every plotted number.
"""
from __future__ import annotations

import pandas as pd

from .collect import GraphData, fastest_cpu_ns

MS_PER_NS = 1e-6


def summary_table(graphs: list[GraphData]) -> pd.DataFrame:
    """One row per graph: size, mean degree, mean BFS depth, the pick (the mapping with the lowest
    predicted BFS time), its predicted time, ME and margin over the runner-up, the mapping with the
    highest ME, the best group size, topo's predicted time and the pick's bottleneck."""
    rows = []
    for data in graphs:
        measured, ranking = data.measured, data.ranking
        pick, runner_up = ranking.pick, ranking.runner_up
        rows.append({
            "graph": data.label, "spec": data.name, "stands_for": data.graph.stands_for,
            "n": data.n, "m": data.m, "mean_degree": data.m / data.n if data.n else float("nan"),
            "depth": data.info["avg_depth"], "sources": len(data.sources), "opm_source": data.opm_source,
            "pick": data.kernel, "predicted_bfs_ms": pick["predicted_ns"] * MS_PER_NS, "pick_me": pick["me"],
            "runner_up": "" if runner_up is None else runner_up["mapping"], "margin": ranking.margin,
            "adaptive_gain": ranking.adaptive_gain(),
            "best_mapping": data.best["mapping"], "best_me": data.best["me"],
            "best_group_mapping": data.best_group["mapping"], "best_group_me": data.best_group["me"],
            "topo_predicted_bfs_ms": data.opm_summary["topo"]["predicted_ns"] * MS_PER_NS,
            "bottleneck": pick["bottleneck"], "bottleneck_time_share": pick["bottleneck_share"],
            "measured_on": measured.run.device_name if measured is not None else "",
            **cpu_columns(data),
        })
    return pd.DataFrame(rows)


def cpu_columns(data: GraphData) -> dict:
    """The summary's CPU columns: the same BFS predicted on the report's CPU profile, serial and on
    `cpu_threads` threads (NaN without a CPU profile), and the GPU pick's speed-up over the faster."""
    cpu = data.cpu
    if not cpu:
        return {"cpu": "", "cpu_serial_ms": float("nan"), "cpu_threads": 0, "cpu_threads_ms": float("nan"),
                "gpu_speedup_over_cpu": float("nan")}
    gpu = data.ranking.pick["predicted_ns"]
    threads = cpu["threads_ns"]
    return {"cpu": cpu["profile"], "cpu_serial_ms": cpu["serial_ns"] * MS_PER_NS, "cpu_threads": cpu["threads"] or 0,
            "cpu_threads_ms": threads * MS_PER_NS if threads is not None else float("nan"),
            "gpu_speedup_over_cpu": fastest_cpu_ns(cpu) / gpu if gpu > 0 else float("nan")}


RECOMMENDATION_COLUMNS = ["graph", "mapping", "predicted_bfs_ms", "rank", "me", "bottleneck", "source", "vs_best",
                          "ua", "ur", "idle", "bottleneck_share"]


def recommendation_table(graphs: list[GraphData]) -> pd.DataFrame:
    """One row per graph and candidate mapping, fastest first: predicted whole-BFS time, rank, ME and
    the bottleneck (the report's tables/recommendation.csv)."""
    parts = [data.ranking.mappings.assign(graph=data.label, source=data.opm_source,
                                          predicted_bfs_ms=data.ranking.mappings["predicted_ns"] * MS_PER_NS)
             for data in graphs]
    return pd.concat(parts, ignore_index=True)[RECOMMENDATION_COLUMNS]


def recommendation_levels_table(graphs: list[GraphData]) -> pd.DataFrame:
    """Per graph and level: the fastest mapping on that level, its predicted time and the pick's."""
    parts = [data.ranking.level_picks().assign(graph=data.label, pick=data.kernel) for data in graphs]
    table = pd.concat(parts, ignore_index=True).rename(columns={"mapping": "fastest", "predicted_ns": "fastest_ns"})
    return table[["graph", "source", "level", "fastest", "fastest_ns", "pick", "pick_ns"]]


def degree_table(graphs: list[GraphData]) -> pd.DataFrame:
    """Out-degree statistics per graph (simdmodel.graph_info): the boxplot's numbers."""
    keys = ["degree_min", "degree_q1", "degree_median", "degree_q3", "degree_max", "degree_mean"]
    return pd.DataFrame([{"graph": d.label, **{k: d.info[k] for k in keys}} for d in graphs])


def _stack(graphs: list[GraphData], attribute: str) -> pd.DataFrame:
    parts = [getattr(d, attribute).assign(graph=d.label) for d in graphs]
    table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    return table[["graph", *[c for c in table.columns if c != "graph"]]]


def _stack_measured(graphs: list[GraphData], attribute: str) -> pd.DataFrame | None:
    parts = [getattr(d.measured, attribute).assign(graph=d.label, measured_graph=d.measured.run.graph,
                                                   device=d.measured.run.device_name)
             for d in graphs if d.measured is not None and len(getattr(d.measured, attribute))]
    if not parts:
        return None
    table = pd.concat(parts, ignore_index=True)
    return table[["graph", *[c for c in table.columns if c != "graph"]]]


def report_tables(graphs: list[GraphData], saturation_mlp: float | None) -> dict[str, pd.DataFrame]:
    """All tables by CSV name (without .csv); measured_* only when some graph has measurements."""
    launches = _stack(graphs, "launches")
    launches["dram_saturation_mlp"] = saturation_mlp
    tables = {
        "summary": summary_table(graphs),
        "recommendation": recommendation_table(graphs),
        "recommendation_levels": recommendation_levels_table(graphs),
        "degrees": degree_table(graphs),
        "frontiers": _stack(graphs, "frontiers"),
        "lanes": _stack(graphs, "lanes"),
        "lanes_per_level": _stack(graphs, "lanes_per_level"),
        "lanes_by_phase": _stack(graphs, "lane_phases"),
        "opm_rounds": _stack(graphs, "rounds"),
        "opm_servers": _stack(graphs, "server_rounds"),
        "opm_launches": launches,
    }
    for name, attribute in (("measured_rounds", "rounds"), ("measured_time_errors", "time_errors"),
                            ("measured_me", "me")):
        table = _stack_measured(graphs, attribute)
        if table is not None:
            tables[name] = table
    return tables


def _fmt(value, spec: str) -> str:
    try:
        if value is None or pd.isna(value):
            return "–"
    except (TypeError, ValueError):
        pass
    return format(value, spec)


SUMMARY_TEXT_COLUMNS = ("graph", "pick", "runner-up", "highest ME", "bottleneck", "measured")


def summary_display(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary table as readable strings (thousands separators, rounded rates, times in ms): the
    pick by predicted time with its ME beside it, the runner-up and the mapping with the highest ME.
    Narrow enough for an 800 px window (what a graph stands for is in its section's prose). With a CPU
    profile, the CPU's predicted BFS time and the GPU pick's speed-up over it."""
    shown = pd.DataFrame({
        "graph": summary["graph"],
        "n": [_fmt(v, ",d") for v in summary["n"]],
        "m": [_fmt(v, ",d") for v in summary["m"]],
        "mean degree": [_fmt(v, ".1f") for v in summary["mean_degree"]],
        "depth": [_fmt(v, ".1f") for v in summary["depth"]],
        "pick": [f"{k} ({_fmt(t, '.3g')} ms, ME {_fmt(me, '.2f')})"
                 for k, t, me in zip(summary["pick"], summary["predicted_bfs_ms"], summary["pick_me"])],
        "runner-up": [f"{r} (+{_fmt(g, '.0%')})" if r else "–"
                      for r, g in zip(summary["runner_up"], summary["margin"])],
        "highest ME": [f"{b} ({_fmt(me, '.2f')})" for b, me in zip(summary["best_mapping"], summary["best_me"])],
        "bottleneck": [f"{b} ({_fmt(s, '.0%')})" for b, s in zip(summary["bottleneck"],
                                                                  summary["bottleneck_time_share"])],
        "measured": [m or "–" for m in summary["measured_on"]],
    })
    if summary["cpu"].astype(bool).any():  # the report was asked for a CPU: its BFS time, serial / threads
        shown["CPU, ms"] = [f"{_fmt(serial, '.3g')} / {_fmt(threaded, '.3g')} ({threads})" if threads else
                            _fmt(serial, ".3g") for serial, threaded, threads in
                            zip(summary["cpu_serial_ms"], summary["cpu_threads_ms"], summary["cpu_threads"])]
        shown["GPU speed-up"] = [f"{_fmt(v, '.3g')}x" for v in summary["gpu_speedup_over_cpu"]]
    return shown


def time_errors_display(errors: pd.DataFrame) -> pd.DataFrame:
    """Predicted against measured whole-BFS time and per-round error statistics, per kernel."""
    return pd.DataFrame({
        "kernel": errors["kernel"],
        "rounds": errors["rounds"].astype(int).astype(str),
        "measured BFS, ms": [_fmt(v * MS_PER_NS, ".3g") for v in errors["measured_bfs_ns"]],
        "predicted BFS, ms": [_fmt(v * MS_PER_NS, ".3g") for v in errors["predicted_bfs_ns"]],
        "whole-BFS error": [_fmt(v, "+.0%") for v in errors["bfs_time_error"]],
        "per-round MAPE": [_fmt(v, ".0%") for v in errors["mape"]],
        "worst round": [_fmt(v, "+.0%") for v in errors["worst_error"]],
        "Pearson r": [_fmt(v, ".3f") for v in errors["pearson_r"]],
    })
