"""Text renderings of operator-machine predictions: a table for people, CSV and JSON for programs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from simdmodel.render import records

from .bfs_machine import SERVERS

TABLE_COLUMNS = ("level", "phase", "frontier_vertices", "jobs_total", "w_max", "l2_sectors", "l2_hits",
                 "dram_sectors", "row_misses", "load", "bottleneck", "predicted_ns")


def _clean(value):
    """A summary value as JSON allows it: NaN becomes null."""
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if not np.isfinite(value) else float(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    return value


def curves_note(profile) -> str | None:
    """The warning every prediction on unmeasured service curves carries."""
    if profile.measured:
        return None
    return (f"service curves of profile {profile.name} are not yet measured (derived from published latency "
            "and bandwidth figures): treat predicted times as estimates")


def render_gpu(result, fmt: str, per_level: bool) -> str:
    """`opm` output for a GPU prediction in `fmt` ("table", "csv" or "json")."""
    summary = result.summary()
    note = curves_note(result.profile)
    if fmt == "csv":
        table = result.per_level if per_level else pd.DataFrame([{k: v for k, v in summary.items()
                                                                   if not isinstance(v, dict)}])
        return table.to_csv(index=False, float_format="%.6g")
    if fmt == "json":
        out = {"summary": _clean(summary), "note": note}
        if per_level:
            out["per_level"] = records(result.per_level)
            out["per_server"] = records(result.per_server)
            if result.mrc is not None:
                out["l2_miss_ratio_curve"] = records(result.mrc)
        return json.dumps(out, indent=2) + "\n"
    warm = ", warm" if summary.get("warm_l2") else ""
    lines = [
        f"graph {summary['graph']}: n={summary['n']:,} m={summary['m']:,}  source {summary['source']}",
        f"kernel {summary['kernel']} on {summary['gpu']} (L2 model {summary['l2_model']}{warm}, "
        f"time model {summary['time_model']}), {summary['levels']} levels, {summary['launches']} launches",
        "jobs per server: " + ", ".join(f"{s} {summary['jobs_' + s.lower()]:,}" for s in SERVERS)
        + f"; N_G {summary['jobs_total']:,}",
        f"L2 sectors {summary['l2_sectors']:,} (hit rate {summary['l2_hit_rate']:.1%}), DRAM sectors "
        f"{summary['dram_sectors']:,} (row-buffer hit rate {summary['row_hit_rate']:.1%})",
        f"predicted BFS time {summary['predicted_ns'] / 1e6:.4g} ms ({summary['predicted_gteps']:.3g} GTEPS); "
        "bottleneck time share: " + ", ".join(f"{k} {v:.0%}" for k, v in summary["bottleneck_time_share"].items()),
    ]
    if note:
        lines.append(f"note: {note}")
    text = "\n".join(lines) + "\n"
    if per_level:
        table = result.per_level.loc[:, list(TABLE_COLUMNS)].copy()
        table["load"] = table["load"].map(lambda x: f"{x:.1f}")
        table["predicted_ns"] = table["predicted_ns"].map(lambda x: f"{x:,.0f}")
        text += "\n" + table.to_string(index=False) + "\n"
    return text


def render_cpu(table: pd.DataFrame, profile, fmt: str, per_level: bool, header: str) -> str:
    """`opm --cpu` output: per-round CPU prediction (seed 003 §4-5)."""
    total = {"rounds": int(len(table)), "jobs": int(table["jobs"].sum()),
             "predicted_ns": float(table["predicted_ns"].sum()), "serial_ns": float(table["serial_ns"].sum())}
    if fmt == "csv":
        return (table if per_level else pd.DataFrame([total])).to_csv(index=False, float_format="%.6g")
    if fmt == "json":
        out = {"summary": {"cpu": profile.name, **total}}
        if per_level:
            out["per_round"] = records(table)
        return json.dumps(out, indent=2) + "\n"
    text = (f"{header}\nCPU {profile.name}: {total['rounds']} rounds, {total['jobs']:,} memory instructions, "
            f"predicted {total['predicted_ns'] / 1e6:.4g} ms (bottleneck law; every access serialised: "
            f"{total['serial_ns'] / 1e6:.4g} ms)\n")
    if per_level:
        text += "\n" + table.to_string(index=False) + "\n"
    return text
