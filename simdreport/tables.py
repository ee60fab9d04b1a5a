"""The report's tidy tables (tables/*.csv): one row per graph x ... with a `graph` label column.

Every figure is drawn from rows of one of these tables, so the CSVs hold every plotted number.
"""
from __future__ import annotations

import pandas as pd

from .collect import GraphData

MS_PER_NS = 1e-6


def summary_table(graphs: list[GraphData]) -> pd.DataFrame:
    """One row per graph: size, mean degree, mean BFS depth, best mapping and its ME, the best group
    size, the predicted BFS time of the best mapping's kernel and of topo, and the bottleneck."""
    rows = []
    for data in graphs:
        name, share = data.bottleneck()
        measured = data.measured
        rows.append({
            "graph": data.label, "spec": data.name, "stands_for": data.graph.stands_for,
            "n": data.n, "m": data.m, "mean_degree": data.m / data.n if data.n else float("nan"),
            "depth": data.info["avg_depth"], "sources": len(data.sources),
            "best_mapping": data.best["mapping"], "best_me": data.best["me"],
            "best_group_mapping": data.best_group["mapping"], "best_group_me": data.best_group["me"],
            "kernel": data.kernel, "opm_source": data.opm_source,
            "predicted_bfs_ms": data.opm_summary[data.kernel]["predicted_ns"] * MS_PER_NS,
            "topo_predicted_bfs_ms": data.opm_summary["topo"]["predicted_ns"] * MS_PER_NS,
            "bottleneck": name, "bottleneck_time_share": share,
            "measured_on": measured.run.device_name if measured is not None else "",
        })
    return pd.DataFrame(rows)


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
        "degrees": degree_table(graphs),
        "frontiers": _stack(graphs, "frontiers"),
        "lanes": _stack(graphs, "lanes"),
        "lanes_per_level": _stack(graphs, "lanes_per_level"),
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


def summary_display(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary table as readable strings (thousands separators, rounded rates, times in ms); the
    "stands for" column only when some graph stands for a seed 000 class."""
    table = pd.DataFrame({
        "graph": summary["graph"],
        "stands for": summary["stands_for"],
        "n": [_fmt(v, ",d") for v in summary["n"]],
        "m": [_fmt(v, ",d") for v in summary["m"]],
        "mean degree": [_fmt(v, ".1f") for v in summary["mean_degree"]],
        "depth": [_fmt(v, ".1f") for v in summary["depth"]],
        "best mapping (ME)": [f"{b} ({_fmt(me, '.3f')})" for b, me in zip(summary["best_mapping"], summary["best_me"])],
        "best group size (ME)": [f"{b} ({_fmt(me, '.3f')})"
                                 for b, me in zip(summary["best_group_mapping"], summary["best_group_me"])],
        "predicted BFS, ms": [f"{_fmt(t, '.3g')} ({k})"
                              for t, k in zip(summary["predicted_bfs_ms"], summary["kernel"])],
        "topo BFS, ms": [_fmt(t, ".3g") for t in summary["topo_predicted_bfs_ms"]],
        "bottleneck": [f"{b} ({_fmt(s, '.0%')} of time)" for b, s in zip(summary["bottleneck"],
                                                                         summary["bottleneck_time_share"])],
        "measured": [m or "–" for m in summary["measured_on"]],
    })
    if not summary["stands_for"].astype(bool).any():
        table = table.drop(columns="stands for")
    return table


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
