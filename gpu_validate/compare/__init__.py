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

Each level's definitions are in its module's docstring: Level 1, exact checks, in `exact`
(`exact_checks`); Level 2, counters, in `counters` (`counter_errors`, `measured_counts`; the
instruction counts inst_executed, shared_ld_inst, shared_st_inst and their inst_error_abs_max
figures); Level 3, time, in `times` (`round_times`, `phase_errors`, `whole_bfs`, `time_errors`,
`best_mapping`; per-level MAPE, whole-BFS error and their variable-cost variants, time minus the
profile's fixed per-launch constants); the summary in `summary` (`summarize`). Every public name
is importable from `gpu_validate.compare`.

In brief (the modules give the exact rules):
- per-level MAPE = mean over predicted rounds (one BFS level of one source) of |err(round predicted
  time, round measured time)|, a round's time being the sum of its launches';
- whole-BFS error = err(sum of predicted round times, sum of measured round times) of one source's
  BFS (complete predictions only), reported as the median over sources;
- variable-cost variants (mape_variable, bfs_time_error_variable) = the same with every launch's
  fixed constant f (launch_overhead_ns, plus grid_scan_ns for a compaction) subtracted from both its
  predicted and its measured time before summing; rounds whose measured variable-cost time is <= 0
  are left out of mape_variable and counted in variable_rounds_excluded;
- inst error = err(predicted, ncu) of warp instructions executed per profiled launch;
  inst_error_abs_max = the largest |inst error| over those launches.
"""
from __future__ import annotations

from ._shared import ALL_SERVERS, EXPANSION_PHASES, KEY, LOAD_SERVERS, ROUND, pearson_r, time_mode, time_models
from .counters import COUNTER_METRICS, INST_METRICS, NCU_COLUMNS, counter_errors, measured_counts
from .exact import exact_checks
from .summary import META_KEYS, jsonable, summarize
from .times import (BEST_COLUMNS, BFS_COLUMNS, PHASE_COLUMNS, ROUND_COLUMNS, TIME_COLUMNS, VARIABLE_ROUND_COLUMNS,
                    best_mapping, phase_errors, round_times, time_errors, whole_bfs)

__all__ = [
    "ALL_SERVERS", "BEST_COLUMNS", "BFS_COLUMNS", "COUNTER_METRICS", "EXPANSION_PHASES", "INST_METRICS", "KEY",
    "LOAD_SERVERS", "META_KEYS", "NCU_COLUMNS", "PHASE_COLUMNS", "ROUND", "ROUND_COLUMNS", "TIME_COLUMNS",
    "VARIABLE_ROUND_COLUMNS", "best_mapping", "counter_errors", "exact_checks", "jsonable", "measured_counts",
    "pearson_r", "phase_errors", "round_times", "summarize", "time_errors", "time_mode", "time_models", "whole_bfs",
]
