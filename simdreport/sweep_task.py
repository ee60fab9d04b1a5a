"""One sweep task, as a Dask worker runs it: load the graph, pick the source, predict the BFS,
return one row per level.

A worker keeps the last graph it loaded and the last BFS it ran (tasks arrive graph-major), so a
graph is loaded once per worker rather than once per task. Rows carry the task's inputs and the
profile's swept hardware figures beside the prediction, so the Parquet dataset of a sweep can be
read and grouped without the plan.
"""
from __future__ import annotations

import functools
import json

import numpy as np
import pandas as pd

from opmachine.profile.whatif import KNOB_FIELDS, format_what_if

from .sweep_plan import SweepTask, load_task_profile, split_profile_spec

LEVEL_SUMS = ("predicted_ns", "fixed_ns", "jobs_total", "l2_sectors", "l2_hits", "dram_sectors",
              "inst_executed")
"""Per-launch columns of `predict_bfs`'s table that a level's row sums over its launches."""

IDENTITY_COLUMNS = {
    "task_id": "str", "graph": "str", "graph_label": "str", "n": "int64", "m": "int64", "kernel": "str",
    "block": "int64", "mapping": "str",
    "profile": "str", "base_profile": "str", "what_if": "str",
    **{f"{knob}_factor": "float64" for knob in KNOB_FIELDS},
    **{field: "int64" if field in ("l2_bytes", "sms") else "float64" for field in KNOB_FIELDS.values()},
    "source_index": "int64", "source": "int64", "seed": "int64",
    "warm_l2": "bool", "time_model": "str", "code_version": "str",
}
"""The columns that say which task a row belongs to: its inputs and its profile's swept figures."""
LEVEL_COLUMNS = {
    "level": "int64", "launches": "int64", "frontier_vertices": "int64", "frontier_edges": "int64",
    "expand_ns": "float64", "compact_ns": "float64", **{name: "float64" for name in LEVEL_SUMS},
    "bottleneck": "str",
}
"""The columns of one level's prediction."""
COLUMNS = {**IDENTITY_COLUMNS, **LEVEL_COLUMNS}
"""The columns of every task's rows, in order, with their dtypes (one schema for the whole dataset)."""

_graph_cache: dict = {}
_bfs_cache: dict = {}


def _graph(task: SweepTask):
    key = (task.graph.spec, tuple(sorted(task.graph.loader.items())), task.graph.sha256)
    if key not in _graph_cache:
        _graph_cache.clear()
        _bfs_cache.clear()
        _graph_cache[key] = task.graph.load()
    return key, _graph_cache[key]


def _rounds(key, graph, source: int):
    from simdmodel.algorithms import BFS

    if (key, source) not in _bfs_cache:
        _bfs_cache.clear()
        _bfs_cache[key, source] = BFS.rounds(graph, source, "sorted")
    return _bfs_cache[key, source]


def run_task(task: SweepTask, code_version: str = "unknown") -> pd.DataFrame:
    """The task's predicted BFS, one row per level (COLUMNS); `code_version` (the sweep's, not part
    of the task's inputs) is recorded so that a rerun can say which rows older code computed."""
    return run_group([task], code_version)[task.task_id]


def run_group(tasks: list[SweepTask], code_version: str = "unknown") -> dict[str, pd.DataFrame]:
    """{task id: its rows} for tasks that differ only in profiles of one simulation (`group_key`):
    the BFS is simulated once and timed on each profile (`opmachine.predict.predict_bfs_profiles`)."""
    from opmachine.kernels import parse_kernel
    from opmachine.predict import predict_bfs_profiles

    from simdmodel.frontier import pick_sources

    first = tasks[0]
    key, graph = _graph(first)
    source = int(pick_sources(graph, first.source_index + 1, first.seed)[first.source_index])
    profiles = [load_task_profile(task.profile) for task in tasks]
    results = predict_bfs_profiles(graph, source, parse_kernel(first.kernel), profiles, l2_model="setassoc",
                                   block=first.block, warm_l2=first.warm_l2, time_model=first.time_model,
                                   frontiers=_rounds(key, graph, source))
    return {task.task_id: _task_rows(task, graph, source, profile, result, code_version)
            for task, profile, result in zip(tasks, profiles, results, strict=True)}


def group_key(task: SweepTask) -> tuple:
    """Tasks with equal keys share one simulation: the same BFS and kernel on profiles that differ
    only in time (`opmachine.predict.simulation_key`)."""
    inputs = task.inputs()
    for name in ("profile", "profile_sha256"):
        inputs.pop(name, None)
    return json.dumps(inputs, sort_keys=True), _simulation_key(task.profile, task.profile_sha256)


@functools.lru_cache(maxsize=256)
def _simulation_key(profile: str, sha256: str | None) -> tuple:
    """The simulation key of a profile spec (a file's sha256 keys the cache, so an edit is seen)."""
    from opmachine.predict import simulation_key

    return simulation_key(load_task_profile(profile))


def _task_rows(task, graph, source, profile, result, code_version) -> pd.DataFrame:
    rows = level_rows(result.per_level)
    base, changes = split_profile_spec(task.profile)
    identity = {
        "task_id": task.task_id, "graph": task.graph.spec, "graph_label": task.graph.label, "n": graph.n,
        "m": graph.m, "kernel": task.kernel, "block": int(result.per_level["block"].iloc[0]),
        "mapping": task.kernel if task.block is None else f"{task.kernel} b{task.block}",
        "profile": task.profile, "base_profile": base, "what_if": format_what_if(changes),
        **{f"{knob}_factor": float(changes.get(knob, 1.0)) for knob in KNOB_FIELDS},
        **{field: getattr(profile, field) for field in KNOB_FIELDS.values()},
        "source_index": task.source_index, "source": source, "seed": task.seed, "warm_l2": task.warm_l2,
        "time_model": task.time_model, "code_version": code_version,
    }
    for name, value in identity.items():
        rows[name] = value
    return rows[list(COLUMNS)].astype(COLUMNS)


def level_rows(per_level: pd.DataFrame) -> pd.DataFrame:
    """`predict_bfs`'s per-launch table folded to one row per level: sums of LEVEL_SUMS, the time
    of expansions (topo's launches included) and of compactions, the frontier the level expands,
    and the bottleneck of its longest launch."""
    table = per_level.reset_index(drop=True)
    compact = table["phase"].to_numpy() == "compact"
    table = table.assign(expand_ns=np.where(compact, 0.0, table["predicted_ns"]),
                         compact_ns=np.where(compact, table["predicted_ns"], 0.0),
                         expand_vertices=np.where(compact, 0, table["frontier_vertices"]),
                         expand_edges=np.where(compact, 0, table["frontier_edges"]))
    groups = table.groupby("level", sort=True)
    out = groups[["expand_ns", "compact_ns", *LEVEL_SUMS]].sum()
    out["launches"] = groups.size()
    out["frontier_vertices"] = groups["expand_vertices"].max()
    out["frontier_edges"] = groups["expand_edges"].max()
    longest = table.loc[groups["predicted_ns"].idxmax().to_numpy()]
    out["bottleneck"] = longest.set_index("level")["bottleneck"]
    return out.reset_index()
