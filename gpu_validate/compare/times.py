"""Level 3 of the validation ladder: predicted against measured time, per round, per BFS, per kernel,
and the best mapping.

Level 3, time:
- A round is one BFS level of one source: KEY without phase. `round_times` gives, per round and
  prediction mode, measured_ns = sum of its launches' time_ns (median over repeats) and
  predicted_ns = sum of their predicted_ns, error = err(predicted_ns, measured_ns). A round is
  `predicted` only when every one of its measured launches has a prediction in that mode; otherwise
  it is kept, flagged predicted=False, with predicted_ns and error NaN (the flag's count is how many
  rounds were dropped from the statistics). The modes of a (graph, kernel) are those its predicted
  rows carry.
- Variable-cost time. Every launch's time, measured and predicted alike, includes fixed per-launch
  constants of the GPU profile that do not depend on the graph: f(launch) = launch_overhead_ns, and
  for a compaction the one-node compaction (`opmachine.predict.fixed_ns` at one vertex;
  `round_times` takes them as `fixed`, a phase -> ns mapping). What a compaction's measured time
  adds at the graph's size counts as variable, as the memory time does. The
  model predicts them by construction, so on rounds made mostly of constants the total-time error
  is small whatever the rest of the model does. The variable-cost time of a launch is its time
  minus f(launch), taken from the measurement and the prediction alike: t_var = time_ns - f,
  p_var = predicted_ns - f. Per round, fixed_ns = sum of f over its launches, measured_variable_ns
  = sum of t_var, predicted_variable_ns = sum of p_var (so each equals the total minus fixed_ns),
  and error_variable = err(predicted_variable_ns, measured_variable_ns). A measured variable-cost
  time <= 0 (the measurement fell below the constants: timing noise, or constants measured on a
  different day) has no meaningful relative error: such a predicted round is flagged
  variable_excluded, its error_variable is NaN and it is left out of the variable-cost statistics.
  Without `fixed` every variable-cost figure is NaN.
- `whole_bfs`: per (graph, kernel, source, mode), the sums of the rounds; `complete` when every
  round was predicted; predicted_ns and error NaN otherwise. The variable-cost columns are the sums
  of the rounds' (excluded rounds included: the sum is the whole BFS's time minus its constants),
  error_variable = err(predicted_variable_ns, measured_variable_ns), NaN when incomplete or when
  the BFS's measured variable-cost time is <= 0. rounds_error = err(sum predicted_ns, sum measured_ns)
  over the BFS's predicted rounds only (NaN when none): the whole BFS when complete, else the rounds a
  partial prediction covers, such as counters mode's profiled rounds.
- `time_errors`, per (graph, kernel, mode) over the predicted rounds of all sources pooled:
  levels = number of predicted rounds (rounds = all measured rounds, so rounds - levels were
  dropped); mape = mean |error| ("per-level MAPE"); worst_error = the signed error of largest
  magnitude; max_error and min_error = largest and smallest signed error; pearson_r = Pearson
  correlation of predicted_ns with measured_ns over those rounds (NaN with fewer than 3 rounds or
  zero variance in either); bfs_time_error = median over complete sources of the whole-BFS error
  (sum predicted - sum measured) / sum measured, NaN when no source is complete; complete = every
  source complete; measured_bfs_ns = median whole-BFS measured time over all sources;
  predicted_bfs_ns = median whole-BFS predicted time over complete sources.
  The variable-cost siblings: variable_rounds_excluded = predicted rounds flagged
  variable_excluded; mape_variable = mean |error_variable| over the other levels -
  variable_rounds_excluded predicted rounds; worst_error_variable, max_error_variable and
  min_error_variable as their total-time siblings over those rounds; bfs_time_error_variable =
  median over complete sources of the whole-BFS error_variable (sources whose measured
  variable-cost time is <= 0 left out); fixed_bfs_ns = median over sources of the whole BFS's
  constants (sum of f over all its launches), so measured_bfs_ns - fixed_bfs_ns is what the
  variable-cost figures judge. rounds_time_error = median over the sources with predicted rounds of
  their rounds_error (equal to bfs_time_error when every source is complete).
- `best_mapping`, per (graph, source, mode) over the kernels whose whole BFS is complete:
  measured_best = kernel with the lowest measured time, predicted_best = kernel with the lowest
  predicted time (ties broken by kernel name), slowdown = measured time of predicted_best /
  measured time of measured_best (1 = no loss), agree = (slowdown == 1), so a tie in measured time
  counts as agreement.

"""
from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from simdmodel.errors import InputError

from ._shared import KEY, ROUND, _check, _empty, _median, _rel, _worst, pearson_r

VARIABLE_ROUND_COLUMNS = ["fixed_ns", "measured_variable_ns", "predicted_variable_ns", "error_variable",
                          "variable_excluded"]
ROUND_COLUMNS = [*ROUND, "mode", "launches", "measured_ns", "predicted_ns", "error", "predicted",
                 *VARIABLE_ROUND_COLUMNS]
_BASE_ROUND_COLUMNS = ROUND_COLUMNS[:-len(VARIABLE_ROUND_COLUMNS)]


def _launch_fixed(phases: pd.Series, fixed: Mapping | None) -> np.ndarray:
    """f(launch) per row from its phase (NaN for every row without `fixed`); InputError for a phase that
    `fixed` does not name."""
    if fixed is None:
        return np.full(len(phases), np.nan)
    unknown = sorted(set(phases) - set(fixed))
    if unknown:
        raise InputError(f"fixed per-launch costs name no phase {unknown[0]!r} "
                         f"(they name {', '.join(map(str, fixed))})")
    return phases.map({k: float(v) for k, v in fixed.items()}).to_numpy(dtype=float)


def _sum(grouped, column: str) -> pd.Series:
    """Group sums that stay NaN where every value is NaN (pandas' plain sum gives 0 there)."""
    return grouped[column].sum(min_count=1)


def round_times(measured: pd.DataFrame, predicted, fixed: Mapping | None = None) -> pd.DataFrame:
    """Per round (graph, kernel, source, level) and mode: measured and predicted time and their error.

    Columns: graph, kernel, source, level, mode, launches, measured_ns, predicted_ns, error,
    predicted (False when some launch of the round has no prediction: predicted_ns and error NaN),
    then the variable-cost columns fixed_ns, measured_variable_ns, predicted_variable_ns,
    error_variable and variable_excluded (module docstring). `fixed` maps each launch phase to its
    fixed per-launch cost in ns (`validate.fixed_costs(profile)`); None leaves those NaN (and no round
    excluded).
    """
    _check(measured, KEY + ("time_ns",), "measured")
    if _empty(predicted):
        return pd.DataFrame(columns=ROUND_COLUMNS)
    keys = KEY + ("mode",)
    _check(predicted, keys + ("predicted_ns",), "predicted", keys=keys)
    modes = predicted[["graph", "kernel", "mode"]].drop_duplicates()
    launches = measured[list(KEY) + ["time_ns"]].merge(modes, on=["graph", "kernel"], how="inner")
    launches = launches.merge(predicted[list(keys) + ["predicted_ns"]], on=list(keys), how="left")
    launches["_fixed"] = _launch_fixed(launches["phase"], fixed)
    launches["_measured_variable"] = launches["time_ns"].astype(float) - launches["_fixed"]
    launches["_predicted_variable"] = launches["predicted_ns"].astype(float) - launches["_fixed"]
    grouped = launches.groupby([*ROUND, "mode"], sort=True)
    rounds = grouped.agg(launches=("time_ns", "size"), measured_ns=("time_ns", "sum"),
                         predicted_ns=("predicted_ns", "sum"),
                         _given=("predicted_ns", "count")).reset_index()
    for column, source in (("fixed_ns", "_fixed"), ("measured_variable_ns", "_measured_variable"),
                           ("predicted_variable_ns", "_predicted_variable")):
        rounds[column] = _sum(grouped, source).to_numpy(dtype=float)
    rounds["predicted"] = rounds["_given"] == rounds["launches"]
    rounds["measured_ns"] = rounds["measured_ns"].astype(float)
    rounds["predicted_ns"] = rounds["predicted_ns"].astype(float).where(rounds["predicted"])
    rounds["error"] = _rel(rounds["predicted_ns"], rounds["measured_ns"])
    rounds["predicted_variable_ns"] = rounds["predicted_variable_ns"].where(rounds["predicted"])
    rounds["variable_excluded"] = rounds["predicted"] & (rounds["measured_variable_ns"] <= 0)
    rounds["error_variable"] = _variable_error(rounds["predicted_variable_ns"], rounds["measured_variable_ns"])
    rounds.attrs["unpredicted_rounds"] = int((~rounds["predicted"]).sum())
    return rounds[ROUND_COLUMNS]


def _variable_error(predicted, measured) -> np.ndarray:
    """err(p, m) where the measured variable-cost time m is > 0, NaN elsewhere."""
    measured = np.asarray(measured, dtype=float)
    return np.where(measured > 0, _rel(predicted, measured), np.nan)


PHASE_COLUMNS = ["graph", "kernel", "phase", "mode", "launches", "mape", "worst_error", "pearson_r", "measured_ns",
                 "predicted_ns", "error"]


def phase_errors(measured: pd.DataFrame, predicted) -> pd.DataFrame:
    """Launch-time errors per (graph, kernel, phase, mode), over the launches that have a prediction.

    A round's time mixes the mapping's expansion with the compaction; this splits them, so the
    expansion model (the part that differs between mappings) can be judged on its own.
    mape = mean |err| over launches, worst_error = signed error of largest magnitude, pearson_r
    over launch times, error = err(sum predicted, sum measured).
    """
    _check(measured, KEY + ("time_ns",), "measured")
    if _empty(predicted):
        return pd.DataFrame(columns=PHASE_COLUMNS)
    keys = KEY + ("mode",)
    both = measured[list(KEY) + ["time_ns"]].merge(predicted[list(keys) + ["predicted_ns"]], on=list(KEY))
    rows = []
    for (graph, kernel, phase, mode), part in both.groupby(["graph", "kernel", "phase", "mode"], sort=True):
        pred, meas = part["predicted_ns"].to_numpy(float), part["time_ns"].to_numpy(float)
        errors = _rel(pred, meas)
        rows.append({"graph": graph, "kernel": kernel, "phase": phase, "mode": mode, "launches": len(part),
                     "mape": float(np.nanmean(np.abs(errors))), "worst_error": _worst(errors),
                     "pearson_r": pearson_r(pred, meas), "measured_ns": float(meas.sum()),
                     "predicted_ns": float(pred.sum()), "error": float(_rel(pred.sum(), meas.sum()))})
    return pd.DataFrame(rows, columns=PHASE_COLUMNS)


BFS_COLUMNS = ["graph", "kernel", "source", "mode", "levels", "predicted_levels", "measured_ns", "predicted_ns",
               "error", "complete", "fixed_ns", "measured_variable_ns", "predicted_variable_ns", "error_variable",
               "rounds_error"]
_BASE_BFS_COLUMNS = BFS_COLUMNS[:BFS_COLUMNS.index("complete") + 1]


def whole_bfs(rounds: pd.DataFrame) -> pd.DataFrame:
    """Whole-BFS times per (graph, kernel, source, mode) from `round_times` (predicted only if complete).

    A rounds table without the variable-cost columns (one written before they existed) gives NaN there.
    """
    _check(rounds, _BASE_ROUND_COLUMNS, "rounds", keys=(*ROUND, "mode"))
    if rounds.empty:
        return pd.DataFrame(columns=BFS_COLUMNS)
    rounds = rounds.assign(**{c: np.nan for c in VARIABLE_ROUND_COLUMNS[:3] if c not in rounds.columns})
    grouped = rounds.groupby(["graph", "kernel", "source", "mode"], sort=True)
    table = grouped.agg(levels=("level", "size"), predicted_levels=("predicted", "sum"),
                        measured_ns=("measured_ns", "sum"), predicted_ns=("predicted_ns", "sum")).reset_index()
    covered = rounds["predicted"].astype(bool)
    partial = rounds[covered].groupby(["graph", "kernel", "source", "mode"], sort=True)[
        ["measured_ns", "predicted_ns"]].sum()
    partial = partial.reindex(pd.MultiIndex.from_frame(table[["graph", "kernel", "source", "mode"]]))
    for column in VARIABLE_ROUND_COLUMNS[:3]:
        table[column] = _sum(grouped, column).to_numpy(dtype=float)
    table["complete"] = table["predicted_levels"] == table["levels"]
    table["predicted_ns"] = table["predicted_ns"].astype(float).where(table["complete"])
    table["measured_ns"] = table["measured_ns"].astype(float)
    table["error"] = _rel(table["predicted_ns"], table["measured_ns"])
    table["predicted_variable_ns"] = table["predicted_variable_ns"].where(table["complete"])
    table["error_variable"] = _variable_error(table["predicted_variable_ns"], table["measured_variable_ns"])
    table["rounds_error"] = _rel(partial["predicted_ns"].to_numpy(dtype=float),
                                 partial["measured_ns"].to_numpy(dtype=float))
    return table[BFS_COLUMNS]


TIME_COLUMNS = ["graph", "kernel", "mode", "rounds", "levels", "mape", "worst_error", "max_error", "min_error",
                "pearson_r", "sources", "complete_sources", "complete", "bfs_time_error", "measured_bfs_ns",
                "predicted_bfs_ns", "mape_variable", "worst_error_variable", "max_error_variable",
                "min_error_variable", "variable_rounds_excluded", "bfs_time_error_variable", "fixed_bfs_ns",
                "rounds_time_error"]


def _error_figures(errors: np.ndarray, suffix: str = "") -> dict:
    """mape, worst, max and min of the finite `errors` (NaN for none), keyed with `suffix`."""
    finite = errors[np.isfinite(errors)]
    return {f"mape{suffix}": float(np.abs(finite).mean()) if finite.size else math.nan,
            f"worst_error{suffix}": _worst(errors),
            f"max_error{suffix}": float(finite.max()) if finite.size else math.nan,
            f"min_error{suffix}": float(finite.min()) if finite.size else math.nan}


def time_errors(rounds: pd.DataFrame) -> pd.DataFrame:
    """Time statistics per (graph, kernel, mode) from `round_times`; see the module docstring."""
    whole = whole_bfs(rounds)
    rows = []
    for (graph, kernel, mode), group in rounds.groupby(["graph", "kernel", "mode"], sort=True):
        done = group[group["predicted"].astype(bool)]
        runs = whole[(whole["graph"] == graph) & (whole["kernel"] == kernel) & (whole["mode"] == mode)]
        full = runs[runs["complete"].astype(bool)]
        variable = done["error_variable"].to_numpy(dtype=float) if "error_variable" in done.columns \
            else np.full(len(done), np.nan)
        excluded = int(done["variable_excluded"].astype(bool).sum()) if "variable_excluded" in done.columns else 0
        rows.append({
            "graph": graph, "kernel": kernel, "mode": mode, "rounds": len(group), "levels": len(done),
            **_error_figures(done["error"].to_numpy(dtype=float)),
            "pearson_r": pearson_r(done["predicted_ns"], done["measured_ns"]),
            "sources": len(runs), "complete_sources": len(full), "complete": len(full) == len(runs),
            "bfs_time_error": _median(full["error"]),
            "measured_bfs_ns": _median(runs["measured_ns"]),
            "predicted_bfs_ns": _median(full["predicted_ns"]),
            **_error_figures(variable, "_variable"),
            "variable_rounds_excluded": excluded,
            "bfs_time_error_variable": _median(full["error_variable"]),
            "fixed_bfs_ns": _median(runs["fixed_ns"]),
            "rounds_time_error": _median(runs["rounds_error"]),
        })
    return pd.DataFrame(rows, columns=TIME_COLUMNS)


BEST_COLUMNS = ["graph", "source", "mode", "kernels", "measured_best", "predicted_best", "measured_best_ns",
                "predicted_pick_measured_ns", "slowdown", "agree"]


def best_mapping(times: pd.DataFrame) -> pd.DataFrame:
    """Per (graph, source, mode): the measured and the predicted fastest kernel among complete ones.

    `times` is `round_times` output or `whole_bfs` output. Columns: graph, source, mode, kernels
    (how many competed), measured_best, predicted_best, measured_best_ns, predicted_pick_measured_ns,
    slowdown (measured time of the predicted pick / measured best), agree (slowdown == 1).
    """
    whole = whole_bfs(times) if "level" in times.columns else _check(times, _BASE_BFS_COLUMNS, "whole-BFS",
                                                                      keys=("graph", "kernel", "source", "mode"))
    whole = whole[whole["complete"].astype(bool)]
    rows = []
    for (graph, source, mode), group in whole.groupby(["graph", "source", "mode"], sort=True):
        group = group.sort_values("kernel", kind="stable").reset_index(drop=True)
        best = group.loc[group["measured_ns"].idxmin()]
        pick = group.loc[group["predicted_ns"].idxmin()]
        slowdown = float(pick["measured_ns"]) / float(best["measured_ns"]) if best["measured_ns"] > 0 else math.nan
        rows.append({"graph": graph, "source": source, "mode": mode, "kernels": len(group),
                     "measured_best": best["kernel"], "predicted_best": pick["kernel"],
                     "measured_best_ns": float(best["measured_ns"]),
                     "predicted_pick_measured_ns": float(pick["measured_ns"]),
                     "slowdown": slowdown, "agree": bool(pick["measured_ns"] == best["measured_ns"])})
    return pd.DataFrame(rows, columns=BEST_COLUMNS)
