"""Prediction beside measurement for one graph: the stages of `simdmodel validate`.

Three stages, each a function, writing tidy tables (DESIGN.md "Validation ladder"):
1. `measure` (GPU): every kernel's BFS from every source, timed per launch (CUDA events, median
   of repeats), its lane and job counters from the instrumented build, and its levels checked
   against the CPU BFS; plus the lanes simdmodel's accounting expects.
2. `profile_counters` (GPU, optional): Nsight Compute on sampled rounds from the first source.
3. `predict` (CPU): opmachine's prediction of every launch with the L2 kept from launch to launch
   (mode warm: the launches are timed back to back), of the profiled source's launches with every
   launch from a cold L2 (mode simulation: what Nsight Compute measures, for the counter errors)
   where ncu measured the launch, in counters mode (the measured counts correct the warm
   prediction's), and by seed 004's instruction-only CTE analysis (mode cte). Each row names its
   `time_model` (`opmachine.predict.TIME_MODELS`, or "cte"), as the prediction that made it
   reports it.
`compare_tables` then runs gpu_validate.compare over the tables and builds `summary.json`. Measured
tables can be saved and predicted again later without a GPU (`--measured DIR`). `pipeline.validate_graph`
runs the stages in order.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from opmachine.counters import INST_COLUMNS, PHASES
from opmachine.cte import cte_launches
from opmachine.predict import fixed_ns, predict_bfs
from simdmodel.atomic import staged_directory
from simdmodel.errors import InputError

from . import compare

MEASURED_TABLES = ("measured", "lanes_model", "ncu")
"""What a measuring run writes: measured (required), lanes_model (the lane accounting of that day, a
record: the comparison recomputes it) and ncu (only with Nsight Compute counters)."""


def sample_levels(depth: int, limit: int) -> list[int]:
    """All levels when depth <= limit, else `limit` evenly spaced ones from 0 to depth - 1."""
    if depth <= limit:
        return list(range(depth))
    return sorted({round(x) for x in np.linspace(0, depth - 1, limit)})


def _progress(items, desc: str, progress: bool):
    if not progress:
        return items
    from tqdm import tqdm

    return tqdm(items, desc=desc, leave=False)


def measure(graph, graph_label: str, kernels, sources, profile, repeats: int = 5, warmup: int = 1,
            progress: bool = False) -> pd.DataFrame:
    """Timed and counted GPU BFS runs: the `measured` table (what the lane accounting expects of them
    is `pipeline.model_lanes`)."""
    from .bfs import COUNT_COLUMNS, LAUNCH_COLUMNS, GpuBfs

    measured = []
    for kernel in _progress(kernels, "GPU kernels", progress):
        plain = GpuBfs(graph, kernel, profile)
        counted = GpuBfs(graph, kernel, profile, instrumented=True)
        counted._frontiers = plain._frontiers
        for source in sources:
            timed = plain.time_bfs(source, repeats, warmup)
            counts = counted.count_bfs(source)
            extra = [c for c in COUNT_COLUMNS if c not in LAUNCH_COLUMNS]
            if len(timed) != len(counts):
                raise RuntimeError(f"{kernel.label}: timed and counted runs differ in launches")
            table = pd.concat([timed.reset_index(drop=True), counts[extra].reset_index(drop=True)], axis=1)
            measured.append(table)
        del plain, counted
    out = pd.concat(measured, ignore_index=True)
    out.insert(0, "graph", graph_label)
    return out


def profile_counters(graph, graph_label: str, kernels, source: int, levels, profile,
                     timeout: float | None = None) -> pd.DataFrame:
    """Nsight Compute counters of the rounds `levels` from `source` for each kernel (the `ncu` table)."""
    from simdmodel.readers.npz import write_npz

    from .bfs import LevelMismatch
    from .ncu import metrics_for, run_ncu
    from .replay import mismatch_path

    with tempfile.TemporaryDirectory(prefix="simdmodel-ncu-") as tmp:
        graph_path = Path(tmp) / "graph.npz"
        write_npz(graph, graph_path)
        log = Path(tmp) / "launches.csv"
        argv = [sys.executable, "-m", "gpu_validate.replay", str(graph_path),
                "--kernels", ",".join(k.label for k in kernels), "--source", str(int(source)),
                "--levels", ",".join(str(x) for x in levels), "--gpu", profile.path, "--log", str(log)]
        env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parent.parent),
                                                           os.environ.get("PYTHONPATH", "")]))}
        try:
            arch = "sm_" + profile.compute_capability.replace(".", "")  # the profile is this GPU's (checked)
            counters = run_ncu(argv, kernel_regex="^bfs_", metrics=metrics_for(arch), timeout=timeout, env=env)
        except InputError:
            if mismatch_path(log).is_file():  # the replayed round's levels are wrong: a kernel bug, exit 1
                raise LevelMismatch(mismatch_path(log).read_text(encoding="utf-8").strip()) from None
            raise
        launches = pd.read_csv(log)
    if len(launches) != len(counters):
        raise RuntimeError(f"ncu profiled {len(counters)} launches, the replay made {len(launches)}")
    metrics = counters.drop(columns=[c for c in ("launch", "kernel_name", "kernel_signature", "block", "grid")
                                     if c in counters.columns])
    table = pd.concat([launches.drop(columns="grid"), metrics.reset_index(drop=True)], axis=1)
    table.insert(0, "graph", graph_label)
    return table


def counters_table(ncu: pd.DataFrame) -> pd.DataFrame:
    """ncu rows in opmachine's counters-mode columns (`opmachine.counters.read_counters`' format; jobs =
    warp-level loads + stores executed), with the instruction counts inst_executed, shared_ld_inst and
    shared_st_inst when ncu measured all three for every row (as integers; otherwise none of them)."""
    table = ncu[["level", "phase"]].assign(jobs_total=ncu["ld_inst"] + ncu["st_inst"])
    parts = [table, compare.measured_counts(ncu), ncu[["achieved_occupancy_pct"]]]
    inst = list(INST_COLUMNS)
    if all(c in ncu.columns for c in inst) and ncu[inst].notna().all().all():
        parts.append(ncu[inst].astype(np.int64))
    return pd.concat(parts, axis=1)


def predict(graph, graph_label: str, kernels, sources, profile, l2_model: str = "setassoc", ncu=None,
            progress: bool = False) -> pd.DataFrame:
    """opmachine's prediction of every launch (mode warm), of the launches of the source ncu profiled
    (else the first) with a cold L2 (mode simulation), of the ncu-profiled ones from their measured
    counts (mode counters: the counts correct the warm prediction, `opmachine.counters`), and seed
    004's instruction-only CTE analysis of every launch (mode cte, `opmachine.cte.cte_launches`; none
    on a profile without measured instruction costs)."""
    rows = []
    profiled = set() if ncu is None or ncu.empty else {int(s) for s in ncu["source"]}
    cold_sources = profiled or {int(sources[0])}
    for kernel in _progress(kernels, "predicting", progress):
        for source in sources:
            counters = None
            if ncu is not None and not ncu.empty:
                mine = ncu[(ncu["kernel"] == kernel.label) & (ncu["source"] == int(source))]
                counters = counters_table(mine) if not mine.empty else None
            warm_l2 = l2_model == "setassoc"
            results = []
            if int(source) in cold_sources or not warm_l2:
                results.append(predict_bfs(graph, int(source), kernel, profile, l2_model=l2_model,
                                           counters=None if warm_l2 else counters))
            if warm_l2:  # the counters correct the warm prediction, the cold one their reference (opmachine.counters)
                cold = results[0].per_level if results else None
                results.append(predict_bfs(graph, int(source), kernel, profile, l2_model=l2_model, warm_l2=True,
                                           counters=counters if cold is not None else None, counters_reference=cold))
            for result in results:
                for table in (result.per_level, result.counted):
                    if table is not None:
                        rows.append(table.assign(graph=graph_label, source=int(source), time_model=result.time_model))
            cte = cte_launches(graph, int(source), kernel, profile)
            if not cte.empty:
                rows.append(cte.assign(graph=graph_label, source=int(source), time_model="cte"))
    table = pd.concat(rows, ignore_index=True)
    front = ["graph", "kernel", "source", "level", "phase", "mode"]
    return table[front + [c for c in table.columns if c not in front]]


def throughput(measured: pd.DataFrame, lanes: pd.DataFrame, n: int, m: int, bandwidth_gbs: float,
               gather=None) -> pd.DataFrame:
    """Traversal rate (GTEPS) per (graph, kernel, source) beside the device's physical bound.

    Edges traversed = the useful lanes of all expansions (each frontier edge inspected once), the
    out-edges of the reached vertices (`reached`), so a source that reaches a sliver of a directed
    graph is not credited with the whole graph's edges.
    The bound (seed 001's question of how close a BFS comes to the machine) is the rate of a BFS that
    did only what it must, at the measured speeds: stream its row offsets and column indices once
    (4 (n + 1) + 4 m bytes) at `bandwidth_gbs` (`stream_bound_gteps`), and look up one 4-byte status
    at an arbitrary vertex per traversed edge at the profile's measured gather rate for an n-entry
    int array (`gather`, an `opmachine.profile.GatherRates`; `gather_bound_gteps`, NaN without one).
    `bound_gteps` is the lower of the two, and `fraction_of_bound` = gteps / bound_gteps.
    """
    times = measured.groupby(["graph", "kernel", "source"])["time_ns"].sum()
    table = reached(measured, lanes).merge(times.reset_index().rename(columns={"time_ns": "measured_ns"}),
                                           on=["graph", "kernel", "source"])
    table["gteps"] = table["edges"] / table["measured_ns"]
    for column, values in traversal_bounds(table["edges"].to_numpy(dtype=np.float64), n, m, bandwidth_gbs,
                                           gather).items():
        table[column] = values
    table["fraction_of_bound"] = table["gteps"] / table["bound_gteps"]
    return table


def traversal_bounds(edges, n: int, m: int, bandwidth_gbs: float, gather=None) -> dict:
    """The physical bound of a BFS that traverses `edges` edges of a graph of n vertices and m edges
    (`throughput` says what it counts): stream_bound_gteps, gather_bound_gteps (NaN without a
    GatherRates) and bound_gteps, the lower of the two."""
    edges = np.asarray(edges, dtype=np.float64)
    stream = edges / ((4 * (n + 1) + 4 * m) / bandwidth_gbs)
    lookups = np.full_like(edges, gather.at(4 * max(int(n), 1)) if gather is not None else np.nan)
    return {"stream_bound_gteps": stream, "gather_bound_gteps": lookups, "bound_gteps": np.fmin(stream, lookups)}


def reached(measured: pd.DataFrame, lanes: pd.DataFrame) -> pd.DataFrame:
    """Vertices and edges each BFS reached, per (graph, kernel, source): reached_vertices, the sum
    of the expansion launches' frontiers, and edges, their useful lanes (the reached vertices'
    out-edges)."""
    keys = ["graph", "kernel", "source"]
    expansions = measured[measured["phase"].isin(compare.EXPANSION_PHASES)]
    vertices = expansions.groupby(keys)["frontier_vertices"].sum().rename("reached_vertices")
    edges = lanes.groupby(keys)["useful_lanes"].sum().rename("edges")
    return pd.concat([vertices, edges], axis=1).reset_index()


def fixed_costs(profile) -> dict:
    """Each launch phase's fixed per-launch cost in ns under `profile` that does not depend on the
    graph (`opmachine.predict.fixed_ns`, a compaction's at one vertex), which the variable-cost time
    errors take off measured and predicted times alike."""
    return {phase: fixed_ns(profile, phase) for phase in PHASES}


def compare_tables(tables: dict, profile, meta: dict) -> tuple[dict, dict]:
    """The comparison tables and the summary dict from measured, lanes_model, ncu and predicted.

    The summary's time_model comes from the predicted table's time_model column (per mode)."""
    measured, predicted = tables["measured"], tables["predicted"]
    ncu = tables.get("ncu")
    exact = compare.exact_checks(measured, predicted, tables["lanes_model"], ncu)
    simulated = predicted[predicted["mode"] == "simulation"]
    counters = compare.counter_errors(simulated, ncu, profile.physical_warps) if ncu is not None else None
    rounds = compare.round_times(measured, predicted, fixed_costs(profile))
    bfs_times = compare.whole_bfs(rounds)
    reach = reached(measured, tables["lanes_model"]).rename(columns={"edges": "reached_edges"})
    bfs_times = bfs_times.merge(reach, on=["graph", "kernel", "source"], how="left")
    time_table = compare.time_errors(rounds)
    best = compare.best_mapping(bfs_times)
    phases = compare.phase_errors(measured, predicted)
    out = {"exact": exact, "rounds": rounds, "whole_bfs": bfs_times, "time_errors": time_table,
           "best_mapping": best, "phase_errors": phases}
    if counters is not None:
        out["counter_errors"] = counters
    summary = compare.summarize(exact, counters, time_table, best, meta, phases, compare.time_models(predicted))
    return out, summary


def table_path(folder, name: str) -> Path | None:
    """`name`.csv or its gzipped form in `folder`, whichever exists."""
    for suffix in (".csv", ".csv.gz"):
        if (Path(folder) / f"{name}{suffix}").is_file():
            return Path(folder) / f"{name}{suffix}"
    return None


def read_measured(directory) -> dict:
    """The measured tables of an earlier run (measured; lanes_model and ncu where present; .csv or
    .csv.gz) and its device.json as "device"; InputError when the folder, measured.csv or
    device.json is missing or unreadable."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"{directory}: no such directory of measurements")
    tables = {}
    for name in MEASURED_TABLES:
        path = table_path(directory, name)
        if path is not None:
            tables[name] = read_table(path)
        elif name == "measured":
            raise InputError(f"{directory}: missing {name}.csv (written by a GPU run of simdmodel validate)")
    tables["device"] = read_device(directory)
    return tables


def read_table(path) -> pd.DataFrame:
    """A CSV table (.csv or .csv.gz); InputError naming the file when it cannot be parsed."""
    try:
        return pd.read_csv(path)
    except (ValueError, EOFError, OSError) as error:  # pandas' parser errors are ValueErrors
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise InputError(f"{path}: not a readable CSV table ({reason})") from None


def read_device(directory) -> dict:
    """A measured folder's device.json (which device and driver measured which graph, and the profile);
    InputError when it is missing or not a JSON object: without it the comparison could not say what
    was measured, or check that the measurements belong to the graph."""
    path = Path(directory) / "device.json"
    if not path.is_file():
        raise InputError(f"{directory}: missing device.json (written with the measurements by simdmodel validate; "
                         "it names the device and the graph measured)")
    try:
        device = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(f"{path}: not readable JSON ({str(error).splitlines()[0]})") from None
    if not isinstance(device, dict):
        raise InputError(f"{path}: not a JSON object")
    return device


def write_tables(directory, tables: dict, summary: dict | None, device: dict | None) -> None:
    """Write every table as CSV (plus summary.json, device.json) into `directory`, all or nothing.

    The files go to a fresh folder beside it, which then replaces `directory`; an existing
    `directory` is replaced only if it is empty or holds an earlier run's files.
    """
    target = Path(directory)
    if target.exists():
        if not target.is_dir():
            raise InputError(f"{target}: exists and is not a directory")
        strangers = [p.name for p in target.iterdir()
                     if not p.is_file() or not p.name.endswith((".csv", ".csv.gz", ".json", ".md"))]
        if strangers:
            raise InputError(f"{target}: exists and holds other files ({strangers[0]}); choose another --out")
    if not target.parent.is_dir():
        raise InputError(f"{target}: directory {target.parent} does not exist")
    with staged_directory(target) as temp:
        for name, table in tables.items():
            if isinstance(table, pd.DataFrame):
                table.to_csv(temp / f"{name}.csv", index=False)
        if summary is not None:
            (temp / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n")
        if device:
            (temp / "device.json").write_text(json.dumps(device, indent=2) + "\n")
        if target.exists():
            for p in target.iterdir():
                if p.name == "README.md":
                    shutil.copy2(p, temp / p.name)
    os.chmod(target, 0o755)
