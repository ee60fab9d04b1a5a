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
- `whole_bfs`: per (graph, kernel, source, mode), the sums of the rounds; `complete` when every
  round was predicted; predicted_ns and error NaN otherwise.
- `time_errors`, per (graph, kernel, mode) over the predicted rounds of all sources pooled:
  levels = number of predicted rounds (rounds = all measured rounds, so rounds - levels were
  dropped); mape = mean |error| ("per-level MAPE"); worst_error = the signed error of largest
  magnitude; max_error and min_error = largest and smallest signed error; pearson_r = Pearson
  correlation of predicted_ns with measured_ns over those rounds (NaN with fewer than 3 rounds or
  zero variance in either); bfs_time_error = median over complete sources of the whole-BFS error
  (sum predicted - sum measured) / sum measured, NaN when no source is complete; complete = every
  source complete; measured_bfs_ns = median whole-BFS measured time over all sources;
  predicted_bfs_ns = median whole-BFS predicted time over complete sources.
- `best_mapping`, per (graph, source, mode) over the kernels whose whole BFS is complete:
  measured_best = kernel with the lowest measured time, predicted_best = kernel with the lowest
  predicted time (ties broken by kernel name), slowdown = measured time of predicted_best /
  measured time of measured_best (1 = no loss), agree = (slowdown == 1), so a tie in measured time
  counts as agreement.

"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ._shared import KEY, ROUND, _check, _empty, _median, _rel, _worst, pearson_r


ROUND_COLUMNS = [*ROUND, "mode", "launches", "measured_ns", "predicted_ns", "error", "predicted"]


def round_times(measured: pd.DataFrame, predicted) -> pd.DataFrame:
    """Per round (graph, kernel, source, level) and mode: measured and predicted time and their error.

    Columns: graph, kernel, source, level, mode, launches, measured_ns, predicted_ns, error,
    predicted (False when some launch of the round has no prediction: predicted_ns and error NaN).
    """
    _check(measured, KEY + ("time_ns",), "measured")
    if _empty(predicted):
        return pd.DataFrame(columns=ROUND_COLUMNS)
    keys = KEY + ("mode",)
    _check(predicted, keys + ("predicted_ns",), "predicted", keys=keys)
    modes = predicted[["graph", "kernel", "mode"]].drop_duplicates()
    launches = measured[list(KEY) + ["time_ns"]].merge(modes, on=["graph", "kernel"], how="inner")
    launches = launches.merge(predicted[list(keys) + ["predicted_ns"]], on=list(keys), how="left")
    grouped = launches.groupby([*ROUND, "mode"], sort=True)
    rounds = grouped.agg(launches=("time_ns", "size"), measured_ns=("time_ns", "sum"),
                         predicted_ns=("predicted_ns", "sum"),
                         _given=("predicted_ns", "count")).reset_index()
    rounds["predicted"] = rounds["_given"] == rounds["launches"]
    rounds["measured_ns"] = rounds["measured_ns"].astype(float)
    rounds["predicted_ns"] = rounds["predicted_ns"].astype(float).where(rounds["predicted"])
    rounds["error"] = _rel(rounds["predicted_ns"], rounds["measured_ns"])
    rounds.attrs["unpredicted_rounds"] = int((~rounds["predicted"]).sum())
    return rounds[ROUND_COLUMNS]


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
               "error", "complete"]


def whole_bfs(rounds: pd.DataFrame) -> pd.DataFrame:
    """Whole-BFS times per (graph, kernel, source, mode) from `round_times` (predicted only if complete)."""
    _check(rounds, ROUND_COLUMNS, "rounds", keys=(*ROUND, "mode"))
    if rounds.empty:
        return pd.DataFrame(columns=BFS_COLUMNS)
    table = rounds.groupby(["graph", "kernel", "source", "mode"], sort=True).agg(
        levels=("level", "size"), predicted_levels=("predicted", "sum"),
        measured_ns=("measured_ns", "sum"), predicted_ns=("predicted_ns", "sum")).reset_index()
    table["complete"] = table["predicted_levels"] == table["levels"]
    table["predicted_ns"] = table["predicted_ns"].astype(float).where(table["complete"])
    table["measured_ns"] = table["measured_ns"].astype(float)
    table["error"] = _rel(table["predicted_ns"], table["measured_ns"])
    return table[BFS_COLUMNS]


TIME_COLUMNS = ["graph", "kernel", "mode", "rounds", "levels", "mape", "worst_error", "max_error", "min_error",
                "pearson_r", "sources", "complete_sources", "complete", "bfs_time_error", "measured_bfs_ns",
                "predicted_bfs_ns"]


def time_errors(rounds: pd.DataFrame) -> pd.DataFrame:
    """Time statistics per (graph, kernel, mode) from `round_times`; see the module docstring."""
    whole = whole_bfs(rounds)
    rows = []
    for (graph, kernel, mode), group in rounds.groupby(["graph", "kernel", "mode"], sort=True):
        done = group[group["predicted"].astype(bool)]
        errors = done["error"].to_numpy(dtype=float)
        finite = errors[np.isfinite(errors)]
        runs = whole[(whole["graph"] == graph) & (whole["kernel"] == kernel) & (whole["mode"] == mode)]
        full = runs[runs["complete"].astype(bool)]
        rows.append({
            "graph": graph, "kernel": kernel, "mode": mode, "rounds": len(group), "levels": len(done),
            "mape": float(np.abs(finite).mean()) if finite.size else math.nan,
            "worst_error": _worst(errors),
            "max_error": float(finite.max()) if finite.size else math.nan,
            "min_error": float(finite.min()) if finite.size else math.nan,
            "pearson_r": pearson_r(done["predicted_ns"], done["measured_ns"]),
            "sources": len(runs), "complete_sources": len(full), "complete": len(full) == len(runs),
            "bfs_time_error": _median(full["error"]),
            "measured_bfs_ns": _median(runs["measured_ns"]),
            "predicted_bfs_ns": _median(full["predicted_ns"]),
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
    whole = whole_bfs(times) if "level" in times.columns else _check(times, BFS_COLUMNS, "whole-BFS",
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
