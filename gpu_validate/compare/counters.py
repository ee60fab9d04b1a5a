"""Level 2 of the validation ladder: simulated L2, DRAM and load against Nsight Compute.

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
- inst_executed, shared_ld_inst, shared_st_inst, alu_pipe_inst (INST_METRICS, only where both tables
  carry the column): predicted warp instructions executed (all, shared-memory loads, shared-memory
  stores, the ALU pipe's) against Nsight Compute's smsp__inst_executed.sum,
  smsp__inst_executed_op_shared_ld.sum, smsp__inst_executed_op_shared_st.sum and
  sm__inst_executed_pipe_alu.sum (ncu columns of the same names). Warp-level, like the jobs:
  one per warp that issues the instruction, whatever its active lanes. A launch whose predicted
  value is missing (NaN: the model does not count it) has no row; a predicted table or ncu table
  without the column (one written before these counters existed) has no rows of that metric.
  The summary's inst_error_abs_max, shared_ld_error_abs_max, shared_st_error_abs_max and
  alu_pipe_error_abs_max are the
  largest |error| = |predicted - ncu| / ncu over the profiled launches (launches with ncu = 0 and a
  non-zero prediction have no relative error and are left out; 0 against 0 is error 0).

"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from simdmodel.errors import DataWarning, InputError

from ._shared import KEY, _check, _empty, _rel, _simulation

COUNTER_METRICS = ("l2_sectors", "l2_hits", "dram_sectors", "load")
INST_METRICS = ("inst_executed", "shared_ld_inst", "shared_st_inst", "alu_pipe_inst")
"""Optional instruction counts, the same column name in the predicted and the ncu table."""
NCU_COLUMNS = ("ld_inst", "st_inst", "l2_read_sectors", "l2_read_misses", "l2_write_sectors",
               "dram_read_sectors", "dram_write_sectors", "achieved_occupancy_pct")


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

    metric is one of l2_sectors, l2_hits, dram_sectors, load, and those of INST_METRICS that both
    tables carry (definitions in the module docstring).
    A launch whose ncu counters for a metric are missing (NaN) has measured and error NaN there,
    is left out of that metric's medians, and a DataWarning says how many launches that is.
    """
    columns = list(KEY) + ["metric", "predicted", "measured", "error"]
    if not (isinstance(physical_warps, (int, np.integer)) and physical_warps > 0):
        raise InputError(f"physical_warps must be a positive integer, got {physical_warps!r}")
    sim = _simulation(predicted_sim)
    if sim is None or _empty(ncu):
        return pd.DataFrame(columns=columns)
    _check(sim, KEY + COUNTER_METRICS, "predicted")
    _check(ncu, KEY + NCU_COLUMNS[2:], "ncu")
    inst = [m for m in INST_METRICS if m in sim.columns and m in ncu.columns]
    both = sim[list(KEY + COUNTER_METRICS) + inst].merge(
        ncu[list(KEY + NCU_COLUMNS[2:]) + inst].rename(columns={m: f"{m}_ncu" for m in inst}), on=list(KEY),
        how="inner")
    measured = measured_counts(both)
    measured["load"] = both["achieved_occupancy_pct"].astype(float) / 100 * int(physical_warps)
    for metric in inst:
        measured[metric] = both[f"{metric}_ncu"].astype(float)
    parts = []
    for order, metric in enumerate(COUNTER_METRICS + tuple(inst)):
        part = both[list(KEY)].copy()
        part["metric"] = metric
        part["predicted"] = both[metric].astype(float)
        part["measured"] = measured[metric]
        if metric in INST_METRICS:  # the model may not count it for every launch
            part = part[part["predicted"].notna()]
        part["error"] = _rel(part["predicted"], part["measured"])
        part["_order"] = order
        lacking = int(part["measured"].isna().sum())
        if lacking:
            warnings.warn(f"ncu table: {lacking} of {len(part)} profiled launches have no measured {metric} "
                          "(a counter missing from Nsight Compute's output); their errors are left out of the "
                          f"{metric} figures", DataWarning, stacklevel=2)
        parts.append(part)
    long = pd.concat(parts, ignore_index=True).sort_values([*KEY, "_order"], kind="stable")
    return long.drop(columns="_order").reset_index(drop=True)[columns]
