"""Text renderings of results for the CLI: aligned tables for people, CSV and JSON for programs."""
from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd

from .atomic import write_text
from .lanes import Analysis

PERCENT_COLUMNS = {"ua": "UA", "ur": "UR", "idle": "idle", "me": "ME"}


def emit(text: str, out) -> None:
    """Print `text`, or write it to `out` atomically."""
    if out:
        write_text(out, text)
    else:
        sys.stdout.write(text)


def render_analysis(result: Analysis, fmt: str, per_level: bool, cta_size: int | None = None) -> str:
    """`analyze` output in `fmt` ("table", "csv" or "json")."""
    table = result.summary(per_level=per_level)
    if fmt == "csv":
        return table.to_csv(index=False, float_format="%.6f")
    if fmt == "json":
        return _analysis_json(result, table, per_level, cta_size)
    return _analysis_table(result, per_level)


def _best_line(result: Analysis) -> str:
    best = result.best()
    parts = []
    if not best.empty:
        parts.append(f"best mapping: {best['mapping'][0]} (ME {best['me'][0]:.1%})")
    best_group = result.best(strategy="group")
    if not best_group.empty and (best.empty or best["strategy"][0] != "group"):
        parts.append(f"best group size: {best_group['mapping'][0]} (ME {best_group['me'][0]:.1%})")
    return "; ".join(parts) if parts else "no lane slots: nothing to recommend"


ME_ONLY = ("ME-only lane accounting, no time predicted (no GPU profile): the highest ME need not be the "
           "fastest; `simdmodel recommend` ranks the mappings by predicted time")


def _header(result: Analysis) -> str:
    sources = result.sources
    shown = ", ".join(str(s) for s in sources[:5]) + (", ..." if len(sources) > 5 else "")
    return (f"graph {result.graph_name or '(unnamed)'}: n={result.n:,} m={result.m:,}\n"
            f"{len(sources)} source{'s' if len(sources) > 1 else ''} ({shown}), "
            f"frontier order {result.order}, warp width 32\n{ME_ONLY}\n")


def _analysis_table(result: Analysis, per_level: bool) -> str:
    if per_level:
        return _per_level_table(result)
    table = result.summary()
    shown = pd.DataFrame({"mapping": table["mapping"]})
    for column in ("warp_iterations", "total_lanes", "useful_lanes"):
        shown[column] = table[column].map("{:,}".format)
    for column, title in PERCENT_COLUMNS.items():
        shown[f"{title}%"] = table[column].map(_percent)
    return (_header(result) + shown.to_string(index=False) + "\n" + _phase_table(result) + _best_line(result)
            + "\n")


def _phase_table(result: Analysis) -> str:
    """The phased mappings' lanes by phase (swc: CTA, warp, scan), each phase's UA as a share of the
    mapping's lane slots, so the phases' UA% add up to the mapping's; empty when none was accounted."""
    phases = result.phase_summary()
    if phases.empty:
        return ""
    shown = pd.DataFrame({"mapping": phases["mapping"], "phase": phases["phase"]})
    for column in ("warp_iterations", "total_lanes", "useful_lanes"):
        shown[column] = phases[column].map("{:,}".format)
    shown["slots%"] = phases["share"].map(_percent)
    shown["UA%"] = phases["ua"].map(_percent)
    shown["phase ME%"] = phases["me"].map(_percent)
    return ("by phase (slots% and UA% of the mapping's lane slots; phase ME% of the phase's own):\n"
            + shown.to_string(index=False) + "\n")


def _per_level_table(result: Analysis) -> str:
    """One row per level (summed over sources): frontier sizes, ME% per mapping, the best one."""
    summary = result.summary(per_level=True, per_source=False)
    me = summary.pivot(index="level", columns="mapping", values="me")
    me = me[[m for m in dict.fromkeys(summary["mapping"])]]
    sizes = result.frontier_sizes.groupby("level")[["vertices", "edges"]].sum()
    shown = pd.DataFrame({"level": me.index, "vertices": sizes["vertices"].map("{:,}".format).to_numpy(),
                          "edges": sizes["edges"].map("{:,}".format).to_numpy()})
    for mapping in me.columns:
        shown[f"{mapping} ME%"] = me[mapping].map(_percent).to_numpy()
    best = result.best(per_level=True).set_index("level")["mapping"]
    shown["best"] = best.reindex(me.index).fillna("-").to_numpy()
    return _header(result) + shown.to_string(index=False) + "\n" + _best_line(result) + "\n"


def _percent(value) -> str:
    return "-" if pd.isna(value) else f"{100 * value:.1f}"


def records(table: pd.DataFrame) -> list[dict]:
    """Rows as JSON-ready dicts (NaN and <NA> become null)."""
    return json.loads(table.to_json(orient="records"))


def _first_record(table: pd.DataFrame) -> dict | None:
    return records(table.head(1))[0] if not table.empty else None


def _analysis_json(result: Analysis, table: pd.DataFrame, per_level: bool, cta_size) -> str:
    document = {
        "graph": result.graph_name,
        "n": result.n,
        "m": result.m,
        "sources": list(result.sources),
        "order": result.order,
        "warp_size": 32,
        "cta_size": cta_size,
        "rows": records(table),
        "best": _first_record(result.best()),
        "best_group": _first_record(result.best(strategy="group")),
        "phases": records(result.phase_summary()),
        "note": ME_ONLY,
    }
    if per_level:
        document["best_per_level"] = records(result.best(per_level=True))
        document["frontier_sizes"] = records(result.frontier_sizes)
    return json.dumps(document, indent=2) + "\n"


def render_info(info: dict) -> str:
    """`graph info` as aligned key/value lines."""
    lines = []
    for key, value in info.items():
        if isinstance(value, bool):
            value = "yes" if value else "no"
        elif isinstance(value, float) and not np.isnan(value):
            value = f"{value:,.3f}".rstrip("0").rstrip(".")
        elif isinstance(value, int):
            value = f"{value:,}"
        elif value is None:
            value = "- (use --sources K)" if key == "avg_depth" else "-"
        lines.append(f"{key:<18} {value}")
    return "\n".join(lines) + "\n"
