"""Counters mode (seed 003 Fig. 7 "Counters"): the same prediction fed with measured counts.

A counters file is a CSV with one row per kernel launch, as gpu_validate writes from Nsight
Compute: `level, phase, jobs_total, l2_sectors, l2_hits, dram_sectors, achieved_occupancy_pct`
and optionally `row_hits, row_misses` and `inst_executed, shared_ld_inst, shared_st_inst` (warp
instructions executed: all, shared-memory loads, shared-memory stores; non-negative integers, all
three or none, carried through to the table `read_counters` returns; the time prediction does not
use them). Measured jobs, L2 hits, DRAM sectors and occupancy replace the simulated ones; GPUs
expose no row-buffer counter, so without the row columns the DRAM sectors are split by the
simulated row-hit fraction of the same launch. Comparing both predictions with the
measured time tells simulation error from model error.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from simdmodel.errors import InputError

from .predict import OpmResult, memory_prediction

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


def predict_counters(result: OpmResult, counters: pd.DataFrame) -> OpmResult:
    """`result` re-predicted from measured counts, launch by launch (rows matched on level and phase),
    by Eq. 4 with the measured occupancy as the load (the counters give no per-warp job counts,
    which the critical-path time needs)."""
    keyed = counters.set_index(["level", "phase"])
    launches = result.per_level.set_index(["level", "phase"]).index
    missing = [key for key in launches if key not in keyed.index]
    extra = [key for key in keyed.index if key not in launches]
    if missing or extra:
        level, phase = (missing or extra)[0]
        what = "has no row" if missing else "has a row that matches no launch"
        raise InputError(f"counters file {what} for level {level}, phase {phase} "
                         f"(the simulated BFS has {len(launches)} launches)")
    rows = []
    profile = result.profile
    for row in result.per_level.to_dict(orient="records"):
        measured = keyed.loc[(row["level"], row["phase"])]
        dram = float(measured["dram_sectors"])
        if "row_hits" in keyed.columns:
            row_hits, row_misses = float(measured["row_hits"]), float(measured["row_misses"])
        else:
            fraction = row["row_hits"] / row["dram_sectors"] if row["dram_sectors"] else 0.0
            row_hits, row_misses = dram * fraction, dram * (1 - fraction)
        load = float(measured["achieved_occupancy_pct"]) / 100 * profile.physical_warps
        row.update(jobs_total=int(measured["jobs_total"]), l2_sectors=int(measured["l2_sectors"]),
                   l2_hits=int(measured["l2_hits"]), dram_sectors=int(dram), row_hits=row_hits,
                   row_misses=row_misses)
        row.update(memory_prediction(row["jobs_total"], row["l2_hits"], row_hits, row_misses, row["w_max"],
                                     profile, load, row["phase"]))
        row["mode"] = "counters"
        rows.append(row)
    table = pd.DataFrame(rows, columns=result.per_level.columns)
    return dataclasses.replace(result, per_level=table, mrc=None, time_model="eq4")
