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


def render_gpu(result, fmt: str, per_level: bool, settings: str | None = None) -> str:
    """`opm` output for a GPU prediction in `fmt` ("table", "csv" or "json"); `settings` (the
    profile, L2 and time model in words) heads the table and is a JSON key."""
    summary = result.summary()
    note = curves_note(result.profile)
    if fmt == "csv":
        table = result.per_level if per_level else pd.DataFrame([{k: v for k, v in summary.items()
                                                                   if not isinstance(v, dict)}])
        return table.to_csv(index=False, float_format="%.6g")
    if fmt == "json":
        out = {"settings": settings, "summary": _clean(summary), "note": note}
        if per_level:
            out["per_level"] = records(result.per_level)
            out["per_server"] = records(result.per_server)
            if result.mrc is not None:
                out["l2_miss_ratio_curve"] = records(result.mrc)
        return json.dumps(out, indent=2) + "\n"
    warm = ", warm" if summary.get("warm_l2") else ""
    lines = [
        f"graph {summary['graph']}: n={summary['n']:,} m={summary['m']:,}  source {summary['source']}",
        *([settings, f"kernel {summary['kernel']}: {summary['levels']} levels, {summary['launches']} launches"]
          if settings else
          [f"kernel {summary['kernel']} on {summary['gpu']} (L2 model {summary['l2_model']}{warm}, time model "
           f"{summary['time_model']}), {summary['levels']} levels, {summary['launches']} launches"]),
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


def render_cpu(table: pd.DataFrame, profile, fmt: str, per_level: bool, header: str,
               threaded: pd.DataFrame | None = None) -> str:
    """`opm --cpu` output: per-round CPU prediction (seed 003 §4-5); with `threaded`
    (`predict_cpu_threads`), the multi-threaded BFS's beside it (columns `threads_*`)."""
    total = {"rounds": int(len(table)), "jobs": int(table["jobs"].sum()),
             "predicted_ns": float(table["predicted_ns"].sum()), "serial_ns": float(table["serial_ns"].sum())}
    if threaded is not None:
        total.update(threads=int(threaded.attrs["threads"]), threads_predicted_ns=float(threaded["predicted_ns"].sum()))
        table = table.assign(threads_predicted_ns=threaded["predicted_ns"].to_numpy(),
                             threads_slowest=threaded["slowest"].to_numpy(),
                             threads_imbalance=threaded["imbalance"].to_numpy())
    if fmt == "csv":
        return (table if per_level else pd.DataFrame([total])).to_csv(index=False, float_format="%.6g")
    if fmt == "json":
        out = {"summary": {"cpu": profile.name, **total}}
        if per_level:
            out["per_round"] = records(table)
        return json.dumps(out, indent=2) + "\n"
    caches = "warm caches" if table.attrs.get("warm") else "cold caches"
    if "bound_ns" in table:
        shares = {name: table[f"{name.lower()}_ns"].sum() for name in ("core", "L1", "L2", "L3", "MEM")}
        busiest = max(shares, key=shares.get)
        how = (f"the loop's measured costs, {caches}; {busiest} {shares[busiest] / total['predicted_ns']:.0%} of it; "
               f"MLP-1 serial bound {total['serial_ns'] / 1e6:.4g} ms")
    else:
        how = f"bottleneck law, MLP 1, {caches}; every access serialised: {total['serial_ns'] / 1e6:.4g} ms"
    text = (f"{header}\nCPU {profile.name}: {total['rounds']} rounds, {total['jobs']:,} memory instructions, "
            f"predicted {total['predicted_ns'] / 1e6:.4g} ms ({how})\n")
    if threaded is not None:
        text += (f"on {total['threads']} threads (multi-threaded loop, the slowest thread per round): predicted "
                 f"{total['threads_predicted_ns'] / 1e6:.4g} ms, "
                 f"{total['predicted_ns'] / total['threads_predicted_ns']:.2f}x the serial speed\n")
    if per_level:
        text += "\n" + table.to_string(index=False) + "\n"
    return text


def render_ranking(ranking, fmt: str, per_level: bool, settings: str) -> str:
    """`recommend` output: every candidate ranked by predicted BFS time, the pick and why; with
    `per_level` each level's fastest candidate and a level-adaptive kernel's gain."""
    table = ranking.mappings.assign(predicted_bfs_ms=ranking.mappings["predicted_ns"] / 1e6)
    picks = ranking.level_picks() if per_level else None
    if fmt == "csv":
        if per_level:
            return ranking.levels.to_csv(index=False, float_format="%.6g")
        columns = ["rank", "mapping", "predicted_bfs_ms", "vs_best", "me", "ua", "ur", "idle", "bottleneck",
                   "bottleneck_share"]
        return table[columns].assign(graph=ranking.graph_name, profile=ranking.settings["profile"],
                                     l2_model=ranking.settings["l2_model"], warm_l2=ranking.settings["warm_l2"],
                                     time_model=ranking.settings["time_model"]).to_csv(index=False,
                                                                                       float_format="%.6g")
    if fmt == "json":
        out = {"graph": ranking.graph_name, "n": ranking.n, "m": ranking.m, "sources": list(ranking.sources),
               "settings": settings, **ranking.settings, "pick": str(ranking.pick["mapping"]),
               "runner_up": None if ranking.runner_up is None else str(ranking.runner_up["mapping"]),
               "margin": _clean(ranking.margin), "why": ranking.why(), "mappings": records(table)}
        if per_level:
            out["level_picks"] = records(picks)
            out["adaptive_gain"] = _clean(ranking.adaptive_gain())
        return json.dumps(out, indent=2) + "\n"
    sources = ", ".join(map(str, ranking.sources[:5])) + (", ..." if len(ranking.sources) > 5 else "")
    lines = [f"graph {ranking.graph_name}: n={ranking.n:,} m={ranking.m:,}  "
             f"{'source' if len(ranking.sources) == 1 else f'{len(ranking.sources)} sources'} {sources}",
             settings, ""]
    shown = pd.DataFrame({
        "rank": table["rank"], "mapping": table["mapping"],
        "predicted ms": table["predicted_bfs_ms"].map(lambda v: f"{v:.4g}"),
        "x best": table["vs_best"].map(lambda v: f"{v:.2f}"),
        "ME%": table["me"].map(lambda v: f"{100 * v:.1f}"), "UA%": table["ua"].map(lambda v: f"{100 * v:.1f}"),
        "UR%": table["ur"].map(lambda v: f"{100 * v:.1f}"), "idle%": table["idle"].map(lambda v: f"{100 * v:.1f}"),
        "bottleneck": [f"{b} {s:.0%}" for b, s in zip(table["bottleneck"], table["bottleneck_share"])],
    })
    lines += [shown.to_string(index=False), "", f"pick: {ranking.pick['mapping']}. {ranking.why()}"]
    note = curves_note(ranking.results[ranking.pick["mapping"]].profile)
    if note:
        lines.append(f"note: {note}")
    if per_level:
        levels = pd.DataFrame({"source": picks["source"], "level": picks["level"], "fastest": picks["mapping"],
                               "its us": (picks["predicted_ns"] / 1e3).map(lambda v: f"{v:,.1f}"),
                               f"{ranking.pick['mapping']} us": (picks["pick_ns"] / 1e3).map(lambda v: f"{v:,.1f}")})
        lines += ["", levels.to_string(index=False),
                  f"a level-adaptive kernel (each level's fastest) would be {ranking.adaptive_gain():.2f}x as fast "
                  f"as {ranking.pick['mapping']} alone (launch switching not charged)"]
    return "\n".join(lines) + "\n"
