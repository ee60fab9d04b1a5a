"""`summary.json`: the run's metadata and headline figures from the comparison tables.

Summary (`summarize`, JSON-serialisable, NaN written as null):
- Run metadata from `meta` (META_KEYS first, then any other key it carries). The callers give:
  time_model (the model, `opmachine.predict.TIME_MODELS`, that produced the time mode's predictions,
  read from the predicted table's time_model column; each mode section below has its own),
  code_version (`gpu_validate.provenance.code_version`: the git commit of the code that compared,
  "-dirty" when the tree had uncommitted changes outside the output folder, "unknown" without git),
  command (a command that reproduces the comparison), and from the validation suite
  measure_command and compare_command (the exact command lines of the two stages; the measure
  command is read from the measured folders' device.json, null where a folder predates it, a list
  when graphs were measured by different commands).
- lane_exact_fraction, jobs_exact_fraction (also loads_exact_fraction, ncu_loads_exact_fraction):
  fraction of True over the launches where the check is defined (not <NA>); null if none.
- <metric>_error_median and <metric>_error_abs_median for l2_sector, l2_hit, dram_sector and load:
  median of the signed (absolute) relative errors over all profiled launches.
- inst_error_abs_max, shared_ld_error_abs_max, shared_st_error_abs_max, alu_pipe_error_abs_max: the
  largest |predicted - ncu| / ncu of warp instructions executed (all, shared loads, shared stores, the
  ALU pipe's) over the profiled launches (`counters`, metrics inst_executed, shared_ld_inst,
  shared_st_inst, alu_pipe_inst); null when the tables carry no such counts.
- The time mode (`time_mode`: "warm" when the table has warm rows, else "simulation") gives the time
  figures at top level; "simulation" (when it is not the time mode) goes under "cold_l2_mode",
  "counters" under "counters_mode", "cte" (seed 004's instruction-only analysis) under "cte_mode",
  each with the same keys:
  time_mape_per_level = mean |error| over every predicted round of every (graph, kernel, source),
  pooled (the level-weighted mean of the per-(graph, kernel) MAPEs); time_max_error_per_level =
  the signed error of largest magnitude over those rounds; time_pearson_r = median over
  (graph, kernel) of pearson_r; bfs_time_error_median = median over (graph, kernel) of
  bfs_time_error (each itself a median over sources), with an _abs_ variant;
  the variable-cost siblings (times minus the profile's fixed per-launch constants, `times`):
  time_mape_variable_per_level = mean |error_variable| over every predicted round not excluded
  (the mape_variable of each (graph, kernel) weighted by levels - variable_rounds_excluded);
  time_max_error_variable_per_level; bfs_time_error_variable_median and
  bfs_time_error_variable_abs_median (median over (graph, kernel) of bfs_time_error_variable);
  variable_rounds_excluded = rounds left out because their measured variable-cost time was <= 0;
  rounds_time_error_median and rounds_time_error_abs_median (median over (graph, kernel) of
  rounds_time_error: the predicted rounds' total, the whole BFS where complete, counters mode's
  profiled rounds where not);
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


def _column(table: pd.DataFrame, column: str, fill=math.nan) -> np.ndarray:
    """`table[column]` as floats, or `fill` everywhere when a table written before the column lacks it."""
    if column in table.columns:
        return table[column].to_numpy(dtype=float)
    return np.full(len(table), fill, dtype=float)


def _weighted_mape(mapes: np.ndarray, weights: np.ndarray) -> float:
    used = np.isfinite(mapes) & (weights > 0)
    return float((mapes[used] * weights[used]).sum() / weights[used].sum()) if used.any() else math.nan


def _time_keys(table: pd.DataFrame) -> dict:
    """The headline time figures over the rows of a time_errors table (one mode)."""
    levels = table["levels"].to_numpy(dtype=float)
    errors = table["bfs_time_error"].to_numpy(dtype=float)
    excluded = _column(table, "variable_rounds_excluded", 0.0)
    variable = _column(table, "bfs_time_error_variable")
    return {
        "time_mape_per_level": _weighted_mape(table["mape"].to_numpy(dtype=float), levels),
        "time_max_error_per_level": _worst(table["worst_error"].to_numpy(dtype=float)),
        "time_pearson_r": _median(table["pearson_r"]),
        "bfs_time_error_median": _median(errors),
        "bfs_time_error_abs_median": _median(np.abs(errors)),
        "time_mape_variable_per_level": _weighted_mape(_column(table, "mape_variable"), levels - excluded),
        "time_max_error_variable_per_level": _worst(_column(table, "worst_error_variable")),
        "bfs_time_error_variable_median": _median(variable),
        "bfs_time_error_variable_abs_median": _median(np.abs(variable)),
        "variable_rounds_excluded": int(excluded.sum()),
        "rounds_time_error_median": _median(_column(table, "rounds_time_error")),
        "rounds_time_error_abs_median": _median(np.abs(_column(table, "rounds_time_error"))),
    }


def _mode_summary(time_table, best, mode: str, time_models: dict) -> dict:
    table = time_table[time_table["mode"] == mode] if not _empty(time_table) else pd.DataFrame(columns=TIME_COLUMNS)
    out = {"time_model": time_models.get(mode), **_time_keys(table)}
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


def summarize(exact, counters, time_table, best, meta: dict, phases=None, time_models: dict | None = None) -> dict:
    """The `summary.json` dict: run metadata, exactness fractions, counter and time errors, best mapping.

    `meta` supplies device, driver, date, command, graphs, kernels (missing ones become null) and
    may carry more keys, which are copied. Any table may be None or empty: its figures are null.
    `time_models` maps each prediction mode to its time model (`compare.time_models(predicted)`):
    the time mode's is the top-level time_model (a `meta` time_model is kept where it gives none),
    each mode section gets its own.
    """
    time_models = time_models or {}
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
    for metric, name in (("inst_executed", "inst"), ("shared_ld_inst", "shared_ld"), ("shared_st_inst", "shared_st"),
                         ("alu_pipe_inst", "alu_pipe")):
        errors = np.array([], dtype=float) if _empty(counters) else \
            counters.loc[counters["metric"] == metric, "error"].to_numpy(dtype=float)
        errors = np.abs(errors[np.isfinite(errors)])
        out[f"{name}_error_abs_max"] = float(errors.max()) if errors.size else None
    mode = time_mode(time_table)
    out["time_mode"] = mode
    section = _mode_summary(time_table, best, mode, time_models)
    if section["time_model"] is None:
        section["time_model"] = out.get("time_model")
    out.update(section)
    for other, key in (("simulation", "cold_l2_mode"), ("counters", "counters_mode"), ("cte", "cte_mode")):
        if other != mode and not _empty(time_table) and (time_table["mode"] == other).any():
            out[key] = _mode_summary(time_table, best, other, time_models)
    if not _empty(phases):
        out["per_phase"] = _phase_summary(phases, mode)
    return jsonable(out)
