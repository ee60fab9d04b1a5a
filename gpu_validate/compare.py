"""Prediction beside measurement: the arithmetic behind the validation tables and `summary.json`.

Inputs are tidy tables with one row per kernel launch, keyed by KEY = (graph, kernel, source,
level, phase): `measured` (the GPU run), `predicted` (opmachine rows plus graph and source; `mode`
is "simulation" (every launch from a cold L2, what Nsight Compute measures), "warm" (the L2 kept
from launch to launch, what a BFS timed back to back finds) or "counters"; launches may be
missing, e.g. levels not predicted on sampled graphs), `lanes_model` (simdmodel lane accounting
of the expansion launches, phases topo and expand) and, optionally, `ncu` (Nsight Compute,
sampled launches only; None or empty is allowed).
Every function here is pure pandas/numpy, so the comparison is tested without a GPU.

Definitions (the reference for the results README)
--------------------------------------------------
Relative error. err(p, m) = (p - m) / m: signed, prediction p against measurement m, so +0.25
means predicted 25% too high. It is 0 when p == m (0 == 0 included, so a perfect prediction has
error 0 everywhere), NaN when m == 0 != p or when either value is missing.

Level 1, exact checks (`exact_checks`, one row per measured launch):
- lane_exact: the measured lane_slots and useful_lanes both equal lanes_model's. Defined for
  expansion launches (phase topo or expand) that the model has; <NA> for compaction launches
  (no expansion loop) and for launches missing from lanes_model.
- Per server s in ANI, NF1, ERL, EDL, NF2, OP: gpu_jobs_s (the instrumented kernel's warp-level
  memory instructions), jobs_s (simulation-mode prediction) and jobs_s_diff = gpu_jobs_s - jobs_s.
- loads_exact: the five load servers ANI..NF2 all have diff 0 (exact by construction). OP counts
  stores, including duplicate discoveries that race between warps, so it is approximate and only
  reported as op_error = err(jobs_op, gpu_jobs_op).
- Where ncu profiled the launch: ld_diff = ld_inst - (jobs_ani + .. + jobs_nf2),
  st_diff = st_inst - jobs_op, and ncu_loads_exact = (ld_diff == 0).
- jobs_exact = loads_exact and, where ncu has the launch, ncu_loads_exact. <NA> when the launch has
  no simulation-mode prediction.

Level 2, counters (`counter_errors`, one row per ncu-profiled launch and metric):
- l2_sectors: predicted l2_sectors against l2_read_sectors + l2_write_sectors (the model sends
  loads and stores through L2 alike).
- l2_hits: predicted l2_hits against l2_read_sectors + l2_write_sectors - l2_read_misses, i.e.
  every write sector counts as a hit. Nsight Compute reports no write hits; the L2 is write-back
  with per-sector byte masks, so a store sector is absorbed without a DRAM read and only read misses
  wait on DRAM. This keeps measured hits + read misses = measured sectors, as predicted hits +
  misses = predicted sectors. (The model does count a store that misses as a miss, so store-heavy
  launches show a negative hit error: that is a model difference the table is meant to expose.)
- dram_sectors: predicted dram_sectors against dram_read_sectors + dram_write_sectors.
- load: predicted load (simulation: n_est = N_G / W_max) against
  achieved_occupancy_pct / 100 x physical_warps.
  error = err(predicted, measured) for each.

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

from opmachine.bfs_machine import SERVERS
from simdmodel.errors import InputError

KEY = ("graph", "kernel", "source", "level", "phase")
ROUND = ("graph", "kernel", "source", "level")
LOAD_SERVERS = tuple(s.lower() for s in SERVERS if s != "OP")
ALL_SERVERS = tuple(s.lower() for s in SERVERS)
EXPANSION_PHASES = ("topo", "expand")
COUNTER_METRICS = ("l2_sectors", "l2_hits", "dram_sectors", "load")
META_KEYS = ("device", "driver", "date", "command", "graphs", "kernels")
NCU_COLUMNS = ("ld_inst", "st_inst", "l2_read_sectors", "l2_read_misses", "l2_write_sectors",
               "dram_read_sectors", "dram_write_sectors", "achieved_occupancy_pct")


def _empty(table) -> bool:
    return table is None or len(table) == 0


def _check(table: pd.DataFrame, columns, name: str, keys=KEY) -> pd.DataFrame:
    """`table` with `columns` present and one row per `keys`, or an InputError naming what is wrong."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{name} table lacks column(s) {', '.join(missing)}")
    if table.duplicated(list(keys)).any():
        first = table.loc[table.duplicated(list(keys)), list(keys)].iloc[0].to_dict()
        raise InputError(f"{name} table has two rows for {first}")
    return table


def time_mode(predicted) -> str:
    """The mode judged against measured times: "warm" when `predicted` has warm rows (launches timed
    back to back find the L2 as the previous launch left it), else "simulation"."""
    if not _empty(predicted) and "mode" in predicted.columns and (predicted["mode"] == "warm").any():
        return "warm"
    return "simulation"


def _simulation(predicted, mode: str = "simulation") -> pd.DataFrame | None:
    """Rows of simulated `mode` (a table without `mode` is taken as all simulation)."""
    if _empty(predicted):
        return None
    if "mode" in predicted.columns:
        predicted = predicted[predicted["mode"] == mode]
    return None if predicted.empty else predicted


def _lookup(base: pd.DataFrame, other, columns, keys=KEY) -> pd.DataFrame:
    """`other`'s `columns` aligned to `base`'s rows on `keys` (NaN where `other` has no row)."""
    if _empty(other):
        return pd.DataFrame({c: np.nan for c in columns}, index=base.index)
    merged = base[list(keys)].merge(other[list(keys) + list(columns)], on=list(keys), how="left")
    merged.index = base.index
    return merged[list(columns)].astype(float)


def _rel(pred, meas):
    """err(p, m) = (p - m) / m elementwise: 0 when equal, NaN when m == 0 != p or either is missing."""
    p = np.asarray(pred, dtype=float)
    m = np.asarray(meas, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(m != 0, (p - m) / np.where(m != 0, m, 1.0), np.nan)
    return np.where(p == m, 0.0, out)


def _flag(values, valid) -> pd.Series:
    """A nullable boolean column: `values` where `valid`, <NA> elsewhere."""
    out = pd.Series(np.asarray(values, dtype=bool), dtype="boolean")
    out[~np.asarray(valid, dtype=bool)] = pd.NA
    return out


def exact_checks(measured: pd.DataFrame, predicted, lanes_model, ncu=None) -> pd.DataFrame:
    """Level-1 checks per measured launch: lane counters, per-server job counts, ncu instruction counts.

    Columns: KEY, lane_slots_measured, lane_slots_model, useful_lanes_measured, useful_lanes_model,
    lane_exact, then per server s: gpu_jobs_s, jobs_s, jobs_s_diff; loads_exact, op_error,
    ld_inst, predicted_loads, ld_diff, st_inst, st_diff, ncu_loads_exact, jobs_exact.
    Flags are nullable booleans (<NA> where the check does not apply).
    """
    gpu_jobs = [f"gpu_jobs_{s}" for s in ALL_SERVERS]
    _check(measured, KEY + ("lane_slots", "useful_lanes", *gpu_jobs), "measured")
    base = measured.reset_index(drop=True)
    out = base[list(KEY)].copy()
    expansion = base["phase"].isin(EXPANSION_PHASES).to_numpy()

    lanes = None if _empty(lanes_model) else _check(lanes_model, KEY + ("lane_slots", "useful_lanes"), "lanes_model")
    model = _lookup(base, lanes, ("lane_slots", "useful_lanes"))
    same = np.ones(len(base), dtype=bool)
    for column in ("lane_slots", "useful_lanes"):
        meas = base[column].astype(float).where(expansion)
        out[f"{column}_measured"] = meas
        out[f"{column}_model"] = model[column].where(expansion)
        same &= (meas == model[column]).to_numpy()
    modelled = (model["lane_slots"].notna() & model["useful_lanes"].notna()).to_numpy()
    out["lane_exact"] = _flag(same, expansion & modelled)

    sim = _simulation(predicted, time_mode(predicted))  # jobs do not depend on the L2's state
    if sim is not None:
        _check(sim, KEY + tuple(f"jobs_{s}" for s in ALL_SERVERS), "predicted")
    pred = _lookup(base, sim, [f"jobs_{s}" for s in ALL_SERVERS])
    has_pred = pred["jobs_ani"].notna().to_numpy()
    for s in ALL_SERVERS:
        out[f"gpu_jobs_{s}"] = base[f"gpu_jobs_{s}"].astype(float)
        out[f"jobs_{s}"] = pred[f"jobs_{s}"]
        out[f"jobs_{s}_diff"] = out[f"gpu_jobs_{s}"] - out[f"jobs_{s}"]
    loads_same = np.all([(out[f"jobs_{s}_diff"] == 0).to_numpy() for s in LOAD_SERVERS], axis=0)
    out["loads_exact"] = _flag(loads_same, has_pred)
    out["op_error"] = _rel(out["jobs_op"], out["gpu_jobs_op"])

    if not _empty(ncu):
        _check(ncu, KEY + ("ld_inst", "st_inst"), "ncu")
    counted = _lookup(base, ncu, ("ld_inst", "st_inst"))
    profiled = counted["ld_inst"].notna().to_numpy()
    out["ld_inst"] = counted["ld_inst"]
    out["predicted_loads"] = sum(out[f"jobs_{s}"] for s in LOAD_SERVERS)
    out["ld_diff"] = out["ld_inst"] - out["predicted_loads"]
    out["st_inst"] = counted["st_inst"]
    out["st_diff"] = out["st_inst"] - out["jobs_op"]
    out["ncu_loads_exact"] = _flag((out["ld_diff"] == 0).to_numpy(), profiled & has_pred)
    jobs = loads_same & np.where(profiled, (out["ld_diff"] == 0).to_numpy(), True)
    out["jobs_exact"] = _flag(jobs, has_pred)
    return out


def measured_counts(ncu: pd.DataFrame) -> pd.DataFrame:
    """ncu rows as the model's counts: l2_sectors, l2_hits and dram_sectors (see Level 2 above)."""
    sectors = ncu["l2_read_sectors"].astype(float) + ncu["l2_write_sectors"].astype(float)
    return pd.DataFrame({
        "l2_sectors": sectors,
        "l2_hits": sectors - ncu["l2_read_misses"].astype(float),
        "dram_sectors": ncu["dram_read_sectors"].astype(float) + ncu["dram_write_sectors"].astype(float),
    }, index=ncu.index)


def counter_errors(predicted_sim, ncu, physical_warps: int) -> pd.DataFrame:
    """Level-2 errors per ncu-profiled launch, long format: KEY, metric, predicted, measured, error.

    metric is one of l2_sectors, l2_hits, dram_sectors, load (definitions in the module docstring).
    """
    columns = list(KEY) + ["metric", "predicted", "measured", "error"]
    if not (isinstance(physical_warps, (int, np.integer)) and physical_warps > 0):
        raise InputError(f"physical_warps must be a positive integer, got {physical_warps!r}")
    sim = _simulation(predicted_sim)
    if sim is None or _empty(ncu):
        return pd.DataFrame(columns=columns)
    _check(sim, KEY + COUNTER_METRICS, "predicted")
    _check(ncu, KEY + NCU_COLUMNS[2:], "ncu")
    both = sim[list(KEY + COUNTER_METRICS)].merge(ncu[list(KEY + NCU_COLUMNS[2:])], on=list(KEY), how="inner")
    measured = measured_counts(both)
    measured["load"] = both["achieved_occupancy_pct"].astype(float) / 100 * int(physical_warps)
    parts = []
    for order, metric in enumerate(COUNTER_METRICS):
        part = both[list(KEY)].copy()
        part["metric"] = metric
        part["predicted"] = both[metric].astype(float)
        part["measured"] = measured[metric]
        part["error"] = _rel(part["predicted"], part["measured"])
        part["_order"] = order
        parts.append(part)
    long = pd.concat(parts, ignore_index=True).sort_values([*KEY, "_order"], kind="stable")
    return long.drop(columns="_order").reset_index(drop=True)[columns]


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


def pearson_r(x, y) -> float:
    """Pearson correlation of two equal-length samples; NaN with < 3 points or zero variance."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 3:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx == 0 or syy == 0:
        return math.nan
    return float(np.clip((dx @ dy) / math.sqrt(sxx * syy), -1.0, 1.0))


def _worst(errors: np.ndarray) -> float:
    """The signed error of largest magnitude (NaN for no errors)."""
    errors = errors[np.isfinite(errors)]
    return float(errors[np.argmax(np.abs(errors))]) if errors.size else math.nan


def _median(values) -> float:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan


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
