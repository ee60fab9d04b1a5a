"""Counters mode (seed 003 Fig. 7 "Counters"): the same time model fed with measured counts.

A counters file is a CSV with one row per kernel launch, as gpu_validate writes from Nsight
Compute: `level, phase, jobs_total, l2_sectors, l2_hits, dram_sectors, achieved_occupancy_pct`
and optionally `row_hits, row_misses` and `inst_executed, shared_ld_inst, shared_st_inst` (warp
instructions executed: all, shared-memory loads, shared-memory stores; non-negative integers, all
three or none). `predict_bfs(..., counters=table)` predicts each launch the table names a second
time, from its measured counts (rows of mode "counters", `OpmResult.counted`); comparing both
predictions with the measured time tells simulation error from model error.

What replaces what:
- Jobs and instructions do not depend on the cache: the measured jobs_total, inst_executed and
  shared_ld_inst + shared_st_inst replace the simulated ones (without the instruction columns the
  counts from the compiled code stay).
- A sector leaves the chip or it does not: the measured dram_sectors are the DRAM sectors and
  l2_sectors - dram_sectors the sectors the L2 served (l2_hits is not used: Nsight Compute counts
  a read that misses the near L2 partition and hits the far one as a miss, so its hits fall short
  of the sectors served on chip). GPUs expose no row-buffer counter, so without the row columns the
  DRAM sectors are split by the simulated row-hit fraction of the same launch.
- Nsight Compute flushes the L2 before each profiled kernel, so its cache counts are cold. A cold
  prediction takes them as they are; a warm one (`warm_l2`, the L2 as the previous launch left it,
  which is what a BFS timed back to back finds) takes each class's measured / simulated-cold ratio
  of the same launch times its own simulated count (`counters_reference`: the cold simulation's
  per-launch table), i.e. the simulation's cache error, measured cold, is taken out of the warm count.
- The critical-path time needs per-warp counts, which Nsight Compute does not give. The simulated
  per-slot counts are scaled to the measured totals: jobs and hot-sector requests by the jobs'
  ratio, each sector class by its own ratio, instructions and their stall cycles by the instructions'
  ratio, shared accesses by theirs. The loads that wait on DRAM scale with the DRAM sectors of their
  class (a class the simulation never saw waits at its one-sector latency, one load per sector); the
  other loads wait on the L2 at the slot's simulated mean L2 latency. The measured achieved
  occupancy is Eq. 4's load (`time_model="eq4"`); the critical model follows the slots instead.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from simdmodel.errors import InputError


REQUIRED = ("level", "phase", "jobs_total", "l2_sectors", "l2_hits", "dram_sectors", "achieved_occupancy_pct")
ROW_COLUMNS = ("row_hits", "row_misses")
INST_COLUMNS = ("inst_executed", "shared_ld_inst", "shared_st_inst")
OPTIONAL = ROW_COLUMNS + INST_COLUMNS
INTEGER = ("level", "jobs_total", "l2_sectors", "l2_hits", "dram_sectors") + INST_COLUMNS
"""Columns that hold counts: non-negative integers."""
_AS_INT64 = ("level",) + INST_COLUMNS
PHASES = ("topo", "expand", "compact")


def _first_line(bad: pd.Series) -> int:
    """File line of the first flagged row (line 1 is the header)."""
    return int(np.flatnonzero(bad.to_numpy())[0]) + 2


def read_counters(path) -> pd.DataFrame:
    """Read and validate a counters CSV; any problem is one InputError naming the file and line."""
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, skip_blank_lines=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: not a readable CSV ({str(error).splitlines()[0] if str(error) else 'empty'})") from None
    table.columns = [str(c).strip() for c in table.columns]
    missing = [c for c in REQUIRED if c not in table.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(missing)}")
    if ("row_hits" in table.columns) != ("row_misses" in table.columns):
        raise InputError(f"{path}: give both row_hits and row_misses, or neither")
    given = [c for c in INST_COLUMNS if c in table.columns]
    if given and len(given) != len(INST_COLUMNS):
        lacking = [c for c in INST_COLUMNS if c not in given]
        raise InputError(f"{path}: give all of {', '.join(INST_COLUMNS)}, or none (missing {', '.join(lacking)})")
    if table.empty:
        raise InputError(f"{path}: no rows")
    out = pd.DataFrame()
    for column in REQUIRED + tuple(c for c in OPTIONAL if c in table.columns):
        if column == "phase":
            values = table[column].str.strip()
            bad = ~values.isin(PHASES)
            if bad.any():
                line = _first_line(bad)
                raise InputError(f"{path}:{line}: phase must be one of {', '.join(PHASES)}")
            out[column] = values
            continue
        values = pd.to_numeric(table[column].str.strip(), errors="coerce")
        bad = values.isna() | (values < 0) | ~np.isfinite(values)
        if column in INTEGER:
            bad |= values.notna() & (values != np.floor(values.fillna(0)))
        if column in _AS_INT64:  # exactly representable, so the int64 column holds the value written
            bad |= values.notna() & (values >= 2.0**53)
        if column == "achieved_occupancy_pct":
            bad |= values.notna() & ((values <= 0) | (values > 100))
        if bad.any():
            line = _first_line(bad)
            what = "integer" if column in INST_COLUMNS else "number"
            raise InputError(f"{path}:{line}: {column} must be a non-negative {what}"
                             + (" in (0, 100]" if column == "achieved_occupancy_pct" else ""))
        out[column] = values
    for column in (c for c in _AS_INT64 if c in out.columns):
        out[column] = out[column].astype(np.int64)
    if (out["jobs_total"] <= 0).any():
        line = _first_line((out["jobs_total"] <= 0))
        raise InputError(f"{path}:{line}: jobs_total must be positive")
    if (out["l2_hits"] > out["l2_sectors"]).any():
        line = _first_line((out["l2_hits"] > out["l2_sectors"]))
        raise InputError(f"{path}:{line}: l2_hits exceeds l2_sectors")
    duplicated = out.duplicated(["level", "phase"])
    if duplicated.any():
        line = _first_line(duplicated)
        raise InputError(f"{path}:{line}: a second row for the same level and phase")
    return out


def check_covers(counters: pd.DataFrame, launches, every: bool) -> None:
    """InputError unless each counters row matches a launch of `launches` ((level, phase) pairs) and,
    with `every`, each launch has a row."""
    keyed = set(map(tuple, counters[["level", "phase"]].itertuples(index=False)))
    launches = list(launches)
    extra = sorted(keyed - set(launches))
    missing = [key for key in launches if key not in keyed] if every else []
    if missing or extra:
        level, phase = (missing or extra)[0]
        what = "has no row" if missing else "has a row that matches no launch"
        raise InputError(f"counters file {what} for level {level}, phase {phase} "
                         f"(the simulated BFS has {len(launches)} launches)")


def counted_result(result):
    """`result` with its counters-mode rows as its launches (every launch must have been counted)."""
    if result.counted is None:
        raise InputError("the prediction was made without a counters table")
    check_covers(result.counted, zip(result.per_level["level"], result.per_level["phase"]), every=True)
    return dataclasses.replace(result, per_level=result.counted, mrc=None, counted=None)


def _classes(l2_sectors: float, dram: float, rows: tuple[float, float] | None, simulated_row_hits: float,
             simulated_dram: float) -> np.ndarray:
    """Sectors served by the L2, row-buffer hits, row-buffer misses of one launch (`rows`: measured
    row hits and misses, else the simulated row-hit fraction splits the DRAM sectors)."""
    if rows is None:
        hits = dram * (simulated_row_hits / simulated_dram if simulated_dram else 0.0)
        rows = (hits, dram - hits)
    return np.array([max(l2_sectors - dram, 0.0), *rows])


def _row_classes(row) -> np.ndarray:
    return np.array([row["l2_sectors"] - row["dram_sectors"], row["row_hits"], row["row_misses"]], dtype=float)


class MeasuredLaunches:
    """A counters table (`read_counters`) ready to correct launches: `targets` per launch and
    `scale_slots` of the critical-path model's per-slot counts."""

    def __init__(self, counters: pd.DataFrame, reference: pd.DataFrame | None = None):
        self.rows = {(int(r["level"]), str(r["phase"])): r for r in counters.to_dict(orient="records")}
        self.reference = None
        if reference is not None:
            self.reference = {(int(r["level"]), str(r["phase"])): r for r in reference.to_dict(orient="records")}
        self.has_rows = "row_hits" in counters.columns
        self.has_instructions = "inst_executed" in counters.columns

    def __contains__(self, key) -> bool:
        return key in self.rows

    def targets(self, key, simulated: dict) -> dict:
        """Counts the counters-mode prediction of launch `key` uses, from its simulated row
        `simulated` (module docstring): jobs, sector classes (L2 served, row hits, row misses), and
        the instruction counts (NaN where neither measured nor counted)."""
        measured = self.rows[key]
        cold = simulated
        if self.reference is not None:
            if key not in self.reference:
                level, phase = key
                raise InputError(f"the cold reference has no launch for level {level}, phase {phase}")
            cold = self.reference[key]
        rows = (float(measured["row_hits"]), float(measured["row_misses"])) if self.has_rows else None
        measured_classes = _classes(float(measured["l2_sectors"]), float(measured["dram_sectors"]), rows,
                                    float(cold["row_hits"]), float(cold["dram_sectors"]))
        own, reference = _row_classes(simulated), _row_classes(cold)
        safe = np.where(reference > 0, reference, 1.0)
        classes = np.where(reference > 0, own * measured_classes / safe, own + measured_classes)
        out = {"jobs": float(measured["jobs_total"]), "classes": classes,
               "inst": float(simulated["inst_executed"]),
               "shared": float(simulated["shared_ld_inst"]) + float(simulated["shared_st_inst"])}
        if self.has_instructions:
            out["inst"] = float(measured["inst_executed"])
            out["shared"] = float(measured["shared_ld_inst"]) + float(measured["shared_st_inst"])
            out["shared_ld"], out["shared_st"] = float(measured["shared_ld_inst"]), float(measured["shared_st_inst"])
        out["occupancy"] = float(measured["achieved_occupancy_pct"]) / 100
        return out


def _ratio(target: float, simulated: float) -> float:
    return target / simulated if simulated > 0 else 1.0


def scale_slots(loads, path, targets: dict, one_sector_ns: np.ndarray):
    """The critical-path model's per-slot counts of one launch scaled to `targets`
    (`MeasuredLaunches.targets`): returns (jobs, sectors, latency, hot) and the instruction tuple
    (count, path, shared, ALU-pipe count; the ALU pipe's scaled as the count), or None for `path` when it
    is None. `loads` is `memory.slot_loads_by_class`; `one_sector_ns` the one-sector latency per outcome."""
    jobs, sectors, simulated_waiting, simulated_waited, hot = loads
    f_jobs = _ratio(targets["jobs"], jobs.sum())
    share = jobs / jobs.sum() if jobs.sum() > 0 else np.full(jobs.size, 1.0 / max(jobs.size, 1))
    scaled = np.empty_like(sectors)
    waiting, waited = simulated_waiting.copy(), simulated_waited.copy()
    for o in range(3):
        total, target = sectors[o].sum(), float(targets["classes"][o])
        if total > 0:
            scaled[o] = sectors[o] * (target / total)
            if o > 0:
                waiting[o] *= target / total
                waited[o] *= target / total
        else:
            scaled[o] = share * target
            if o > 0:
                waiting[o] = share * target
                waited[o] = waiting[o] * one_sector_ns[o]
    before = simulated_waiting.sum(axis=0) * f_jobs  # loads that wait on anything, at the measured job count
    dram = waiting[1] + waiting[2]
    over = dram > before
    if over.any():  # more DRAM-bound loads than loads: the DRAM classes fill the slot
        cut = np.where(over, before / np.where(dram > 0, dram, 1.0), 1.0)
        waiting[1:] *= cut
        waited[1:] *= cut
        dram = waiting[1] + waiting[2]
    simulated_l2 = simulated_waiting[0]
    mean = np.where(simulated_l2 > 0, simulated_waited[0] / np.where(simulated_l2 > 0, simulated_l2, 1.0),
                    one_sector_ns[0])
    latency = waited[1] + waited[2] + (before - dram) * mean
    counted = (jobs * f_jobs, scaled, latency, hot * f_jobs)
    if path is None:
        return counted, None
    count, stalls, shared, alu = path
    f_inst, f_shared = _ratio(targets["inst"], count.sum()), _ratio(targets["shared"], shared.sum())
    return counted, (count * f_inst, stalls * f_inst, shared * f_shared, alu * f_inst)
