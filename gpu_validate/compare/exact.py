"""Level 1 of the validation ladder: exact lane and job counts, launch by launch.

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

"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from simdmodel.errors import DataWarning

from ._shared import (ALL_SERVERS, EXPANSION_PHASES, KEY, LOAD_SERVERS, _check, _empty, _flag, _lookup, _rel,
                      _simulation, time_mode)


def exact_checks(measured: pd.DataFrame, predicted, lanes_model, ncu=None) -> pd.DataFrame:
    """Level-1 checks per measured launch: lane counters, per-server job counts, ncu instruction counts.

    Columns: KEY, lane_slots_measured, lane_slots_model, useful_lanes_measured, useful_lanes_model,
    lane_exact, then per server s: gpu_jobs_s, jobs_s, jobs_s_diff; loads_exact, op_error,
    ld_inst, predicted_loads, ld_diff, st_inst, st_diff, ncu_loads_exact, jobs_exact.
    Flags are nullable booleans (<NA> where the check does not apply). An ncu row without ld_inst
    (a counter missing from Nsight Compute's output) counts as not profiled, with a DataWarning.
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
        lacking = int(ncu["ld_inst"].isna().sum())
        if lacking:
            warnings.warn(f"ncu table: {lacking} of {len(ncu)} profiled launches have no ld_inst (a counter missing "
                          "from Nsight Compute's output); their ncu load checks are left out", DataWarning,
                          stacklevel=2)
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
