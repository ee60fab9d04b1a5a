"""`summary.json`: the run's metadata and headline figures from the comparison tables.

Summary (`summarize`, JSON-serialisable, NaN written as null):
- lane_exact_fraction, jobs_exact_fraction (also loads_exact_fraction, ncu_loads_exact_fraction):
  fraction of True over the launches where the check is defined (not <NA>); null if none.
- <metric>_error_median and <metric>_error_abs_median for l2_sector, l2_hit, dram_sector and load:
  median of the signed (absolute) relative errors over all profiled launches.
- The time mode (`time_mode`: "warm" when the table has warm rows, else "simulation") gives the time
  figures at top level; "simulation" (when it is not the time mode) goes under "cold_l2_mode",
  "counters" under "counters_mode", each with the same keys:
  time_mape_per_level = mean |error| over every predicted round of every (graph, kernel, source),
  pooled (the level-weighted mean of the per-(graph, kernel) MAPEs); time_max_error_per_level =
  the signed error of largest magnitude over those rounds; time_pearson_r = median over
  (graph, kernel) of pearson_r; bfs_time_error_median = median over (graph, kernel) of
  bfs_time_error (each itself a median over sources), with an _abs_ variant;
  best_mapping_agreement = fraction of (graph, source) with at least 2 competing kernels where
  agree holds; best_mapping_slowdown_median; plus the same time keys per kernel ("per_kernel") and
  per graph and kernel ("per_graph").
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._shared import _empty, _median, _worst, time_mode
from .times import TIME_COLUMNS

META_KEYS = ("device", "driver", "date", "command", "graphs", "kernels")


def _fraction(flags) -> float:
    """Fraction of True among the defined (non-<NA>) values; NaN when none is defined."""
    if flags is None:
        return math.nan
    flags = pd.Series(flags, dtype="boolean").dropna()
    return float(flags.mean()) if len(flags) else math.nan


def _time_keys(table: pd.DataFrame) -> dict:
    """The four headline time figures over the rows of a time_errors table (one mode)."""
    weights = table["levels"].to_numpy(dtype=float)
    mapes = table["mape"].to_numpy(dtype=float)
    used = np.isfinite(mapes) & (weights > 0)
    errors = table["bfs_time_error"].to_numpy(dtype=float)
    return {
        "time_mape_per_level": float((mapes[used] * weights[used]).sum() / weights[used].sum()) if used.any()
        else math.nan,
        "time_max_error_per_level": _worst(table["worst_error"].to_numpy(dtype=float)),
        "time_pearson_r": _median(table["pearson_r"]),
        "bfs_time_error_median": _median(errors),
        "bfs_time_error_abs_median": _median(np.abs(errors)),
    }


def _mode_summary(time_table, best, mode: str) -> dict:
    table = time_table[time_table["mode"] == mode] if not _empty(time_table) else pd.DataFrame(columns=TIME_COLUMNS)
    out = _time_keys(table)
    picks = best[(best["mode"] == mode) & (best["kernels"] >= 2)] if not _empty(best) else None
    out["best_mapping_agreement"] = math.nan if _empty(picks) else _fraction(picks["agree"].astype(bool))
    out["best_mapping_slowdown_median"] = math.nan if _empty(picks) else _median(picks["slowdown"])
    out["best_mapping_cases"] = 0 if _empty(picks) else len(picks)
    out["per_kernel"] = {str(k): _time_keys(g) for k, g in table.groupby("kernel", sort=True)}
    out["per_graph"] = {str(g): {str(k): _time_keys(sub) for k, sub in group.groupby("kernel", sort=True)}
                        for g, group in table.groupby("graph", sort=True)}
    return out


def jsonable(value):
    """`value` with numpy scalars as Python numbers, NaN/inf/<NA> as None and tuples as lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray, pd.Series)):
        return [jsonable(v) for v in list(value)]
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if math.isfinite(value) else None
    return value if isinstance(value, str) else str(value)


def _phase_summary(phases: pd.DataFrame, mode: str) -> dict:
    """Per phase (in `mode`): launch-weighted MAPE and the median Pearson r over (graph, kernel)."""
    out = {}
    for phase, part in phases[phases["mode"] == mode].groupby("phase", sort=True):
        weights = part["launches"].to_numpy(float)
        out[str(phase)] = {"launches": int(weights.sum()),
                           "mape": float((part["mape"].to_numpy(float) * weights).sum() / weights.sum()),
                           "pearson_r_median": _median(part["pearson_r"]),
                           "time_error_median": _median(part["error"])}
    return out


def summarize(exact, counters, time_table, best, meta: dict, phases=None) -> dict:
    """The `summary.json` dict: run metadata, exactness fractions, counter and time errors, best mapping.

    `meta` supplies device, driver, date, command, graphs, kernels (missing ones become null) and
    may carry more keys, which are copied. Any table may be None or empty: its figures are null.
    """
    out = {key: meta.get(key) for key in META_KEYS}
    out.update({k: v for k, v in meta.items() if k not in out})
    checks = exact if not _empty(exact) else pd.DataFrame(columns=["lane_exact", "jobs_exact", "loads_exact",
                                                                   "ncu_loads_exact", "op_error"])
    out["launches"] = len(checks)
    for flag in ("lane_exact", "jobs_exact", "loads_exact", "ncu_loads_exact"):
        column = checks[flag] if flag in checks.columns else None
        out[f"{flag}_fraction"] = _fraction(column)
        out[f"{flag}_checked"] = 0 if column is None else int(pd.Series(column, dtype="boolean").notna().sum())
    out["op_error_abs_median"] = _median(np.abs(checks["op_error"].to_numpy(dtype=float))) \
        if "op_error" in checks.columns else math.nan
    for metric, name in (("l2_sectors", "l2_sector"), ("l2_hits", "l2_hit"), ("dram_sectors", "dram_sector"),
                         ("load", "load")):
        errors = np.array([], dtype=float) if _empty(counters) else \
            counters.loc[counters["metric"] == metric, "error"].to_numpy(dtype=float)
        out[f"{name}_error_median"] = _median(errors)
        out[f"{name}_error_abs_median"] = _median(np.abs(errors))
    mode = time_mode(time_table)
    out["time_mode"] = mode
    out.update(_mode_summary(time_table, best, mode))
    for other, key in (("simulation", "cold_l2_mode"), ("counters", "counters_mode")):
        if other != mode and not _empty(time_table) and (time_table["mode"] == other).any():
            out[key] = _mode_summary(time_table, best, other)
    if not _empty(phases):
        out["per_phase"] = _phase_summary(phases, mode)
    return jsonable(out)
