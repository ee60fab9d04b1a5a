"""Measure -> predict -> compare for one graph, as one library call: `validate_graph`.

`simdmodel validate` and the committed validation suite (`simdreport.validation_suite`) both call
it; neither drives the other through argv. The stages are `gpu_validate.validate`'s:
1. measure (GPU): every kernel's BFS from every source, timed and counted, each run's levels
   checked against the CPU BFS (a mismatch raises `bfs.LevelMismatch`: no table is written), and
   optionally Nsight Compute on sampled rounds of the first source (each replayed round checked
   too). With `measure_only` the measured tables are written and the pipeline stops.
2. predict (CPU): opmachine's prediction of every measured launch, and the lanes simdmodel's
   accounting expects, recomputed here from the current code (`lanes.lanes_model`) rather than
   read from the measured folder, so a change to the lane accounting shows in the exact checks.
3. compare (CPU): `validate.compare_tables` (gpu_validate.compare), then every table and
   `summary.json` written to `out` all at once. The summary records the code that compared
   (`provenance.code_version`, taken before anything is written) and the command that measured
   (device.json's measure_command, written by the measuring run).
Measured tables saved by an earlier run (`measured_dir`) skip stage 1, so prediction and
comparison run anywhere.
"""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from opmachine.kernels import Kernel, parse_kernel
from opmachine.profile import GPUProfile, load_profile
from simdmodel.errors import DataWarning, InputError
from simdmodel.frontier import bfs, check_source, pick_sources

from . import validate as gv
from .compare import KEY
from .lanes import LANE_MODEL_COLUMNS, lanes_model
from .provenance import code_version

DEFAULT_SOURCES = 3
"""Seeded random BFS sources per graph when none are given."""
DEFAULT_NCU_LEVELS = 24
"""Rounds per kernel that Nsight Compute profiles, evenly spaced over the BFS."""


@dataclass(frozen=True, eq=False)
class Validation:
    """What `validate_graph` did: the graph's name, the output folder, device.json's dict, the kernels
    and sources compared, every table written (by name, as in the folder) and the summary (None
    when only measured)."""

    graph: str
    out: Path
    device: dict
    kernels: tuple[str, ...]
    sources: tuple[int, ...]
    tables: dict
    summary: dict | None

    @property
    def launches(self) -> int:
        """Kernel launches measured."""
        return len(self.tables["measured"])


def validate_graph(graph, kernels: Sequence[str | Kernel], sources: int | Sequence[int] | None = None,
                   profile: str | GPUProfile | None = None, *, out, seed: int = 1, measured_dir=None,
                   measure_only: bool = False, counters: bool = False, ncu_levels: int = DEFAULT_NCU_LEVELS,
                   repeats: int = 5, warmup: int = 1, l2_model: str = "setassoc", command: str | None = None,
                   progress: bool = False, meta: dict | None = None) -> Validation:
    """Measure (or read measurements of) `graph`, predict the same launches, compare, write `out`.

    graph: a CSRGraph, or a callable returning one; it is called once the GPU, the profile and any
        measured folder have been checked, so those errors come before a large graph is read.
    kernels: kernel labels (`topo`, `sm-4`, `ws`, `scan`) or Kernel objects; repeats are dropped.
    sources: an int K for K seeded random sources (`pick_sources` with `seed`), or the source vertices;
        None for DEFAULT_SOURCES, or, with `measured_dir`, the sources that were measured.
    profile: an opmachine GPU profile, or its name or .toml path; None for the one of this
        device (measuring) or the one device.json names (`measured_dir`).
    measured_dir: a folder written by an earlier run (at least `measure_only`); no GPU is needed.
    counters: also profile sampled rounds of the first source with Nsight Compute (`ncu_levels`
        of them per kernel). repeats, warmup: timed and untimed runs per BFS (median kept).
    l2_model: "setassoc" or "lru", for the predictions. command: recorded in summary.json, and in
        device.json as measure_command when this call measures.
    meta: more summary.json keys (the validation suite's compare_command, and its code_version,
        taken once for all graphs); they replace the pipeline's own.

    Raises InputError (one line) for bad input, GpuUnavailable without a GPU and LevelMismatch
    for a kernel whose levels differ from the CPU BFS; nothing is written then.
    """
    kernels = _kernels(kernels)
    meta = dict(meta or {})
    if "code_version" not in meta and not measure_only:  # before this run writes anything
        meta["code_version"] = code_version(exclude=[out])
    for option, value, low in (("--repeats", repeats, 1), ("--warmup", warmup, 0), ("--ncu-levels", ncu_levels, 1)):
        if value < low:
            raise InputError(f"{option} must be at least {low}, got {value}")
    if measured_dir is not None and (measure_only or counters):
        raise InputError("--measured reuses measurements; it cannot be combined with --measure-only or --counters")
    if measured_dir is not None and sources is not None:
        raise InputError("--measured compares the sources that were measured; it takes no sources")
    if measured_dir is not None:
        tables = gv.read_measured(measured_dir)
        device = tables.pop("device")
        chosen = profile if profile is not None else device.get("profile")
        if not chosen:
            raise InputError(f"{measured_dir}: device.json names no profile; pass --gpu")
    else:
        from .device import check_profile_device, device_info, profile_for_device, require_gpu

        require_gpu()
        device = device_info()
        chosen = profile if profile is not None else profile_for_device(device)
    gpu = chosen if isinstance(chosen, GPUProfile) else load_profile(chosen, kind="gpu")
    if measured_dir is None:
        check_profile_device(gpu, device)  # the launch geometry is the profile's: it must be this GPU's
    device["profile"] = profile if isinstance(profile, str) else gpu.name
    graph = graph() if callable(graph) else graph

    if measured_dir is not None:
        tables, kernels, sources = _measured_subset(tables, kernels, device, graph, measured_dir)
    else:
        sources = _sources(graph, sources, seed)
        device.update(graph=graph.name, graph_n=graph.n, graph_m=graph.m, sources=sources)
        if graph.origin is not None:  # which file, and how it was read: a re-compare checks the hash
            device["graph_file"] = graph.origin.as_dict()
        if command:
            device["measure_command"] = command
        measured = gv.measure(graph, graph.name, kernels, sources, gpu, repeats, warmup, progress)
        tables = {"measured": measured, "lanes_model": model_lanes(graph, graph.name, kernels, sources)}
        if counters:
            depth = bfs(graph, sources[0]).depth
            tables["ncu"] = gv.profile_counters(graph, graph.name, kernels, sources[0],
                                                gv.sample_levels(depth, ncu_levels), gpu)
        if measure_only:
            gv.write_tables(out, tables, None, device)
            return Validation(graph.name, Path(out), device, tuple(k.label for k in kernels), tuple(sources),
                              tables, None)

    if measured_dir is not None:  # recompute what the current lane accounting expects, in measured order
        recorded = tables.get("lanes_model")
        measured_order = list(dict.fromkeys(int(s) for s in tables["measured"]["source"]))
        tables["lanes_model"] = model_lanes(graph, graph.name, kernels, measured_order)
        if recorded is not None:
            _compare_recorded_lanes(recorded, tables["lanes_model"], measured_dir)
    ncu = tables.get("ncu")
    tables["predicted"] = gv.predict(graph, graph.name, kernels, sources, gpu, l2_model, ncu, progress)
    tables["throughput"] = gv.throughput(tables["measured"], tables["lanes_model"], graph.n, graph.m,
                                         gpu.dram_bandwidth_gbs, gpu.gather)
    meta = {"device": device.get("device"), "driver": device.get("driver"), "date": device.get("date"),
            "command": command or "gpu_validate.pipeline.validate_graph",
            "graphs": [graph.name], "kernels": [k.label for k in kernels], "sources": sources,
            "profile": gpu.name, "curves_measured": bool(gpu.measured), "l2_model": l2_model,
            "measure_command": device.get("measure_command"), **meta}
    compared, summary = gv.compare_tables(tables, gpu, meta)
    written = {**tables, **compared}
    gv.write_tables(out, written, summary, device)
    return Validation(graph.name, Path(out), device, tuple(k.label for k in kernels), tuple(sources), written,
                      summary)


def model_lanes(graph, graph_label: str, kernels, sources) -> pd.DataFrame:
    """The lane slots and useful lanes simdmodel's accounting expects of every expansion launch of
    each kernel from each source (`lanes.lanes_model` over the CPU BFS), with a graph column."""
    fronts = {int(source): bfs(graph, int(source)) for source in sources}
    parts = [lanes_model(graph, kernel, source, front) for kernel in kernels for source, front in fronts.items()]
    table = pd.concat(parts, ignore_index=True)
    table.insert(0, "graph", graph_label)
    return table


def _kernels(kernels) -> list[Kernel]:
    unique: dict[str, Kernel] = {}
    for kernel in kernels:
        kernel = kernel if isinstance(kernel, Kernel) else parse_kernel(kernel)
        unique.setdefault(kernel.label, kernel)
    if not unique:
        raise InputError("no kernels to validate")
    return list(unique.values())


def _sources(graph, sources, seed: int) -> list[int]:
    if sources is None:
        sources = DEFAULT_SOURCES
    if isinstance(sources, int):
        return [int(s) for s in pick_sources(graph, sources, seed)]
    return [check_source(graph, int(s)) for s in sources]


def _measured_subset(tables: dict, kernels, device: dict, graph, folder):
    """The measured tables restricted to the asked-for kernels, those kernels, and the measured sources."""
    measured = tables["measured"]
    sources = sorted({int(s) for s in measured["source"]})
    kernels = [k for k in kernels if k.label in set(measured["kernel"])]
    if not kernels:
        raise InputError(f"{folder}: holds none of the kernels asked for")
    if device.get("graph_n") not in (None, graph.n) or device.get("graph_m") not in (None, graph.m):
        raise InputError(f"{folder}: was measured on a graph of n={device.get('graph_n')}, "
                         f"m={device.get('graph_m')}, not this one (n={graph.n}, m={graph.m})")
    recorded = (device.get("graph_file") or {}).get("sha256")
    actual = graph.origin.sha256 if graph.origin is not None else None
    if recorded is not None and actual != recorded:
        raise InputError(f"{folder}: was measured on a file with sha256 {recorded}, not this "
                         f"{'file (' + actual + ')' if actual else 'graph (not read from a file)'}")
    labels = [k.label for k in kernels]
    tables = {name: (t[t["kernel"].isin(labels)] if "kernel" in t else t) for name, t in tables.items()}
    return tables, kernels, sources


def _compare_recorded_lanes(recorded: pd.DataFrame, current: pd.DataFrame, folder) -> None:
    """Warn when the folder's lanes_model.csv (a record of the lane accounting at measuring time)
    differs from the current code's, which the comparison uses."""
    key, columns = list(KEY), list(LANE_MODEL_COLUMNS[-2:])
    missing = [c for c in key + columns if c not in recorded.columns]
    if missing:
        warnings.warn(f"{folder}: lanes_model.csv lacks column {missing[0]!r}; the comparison uses the "
                      "current lane accounting", DataWarning, stacklevel=3)
        return
    both = current[key + columns].merge(recorded[key + columns], on=key, how="outer",
                                             suffixes=("", "_recorded"), indicator=True)
    differ = both["_merge"] != "both"
    for column in columns:
        differ |= both[column] != both[f"{column}_recorded"]
    if differ.any():
        warnings.warn(f"{folder}: lanes_model.csv differs from the current lane accounting in {int(differ.sum())} "
                      f"of {len(both)} launches; the comparison uses the current code's", DataWarning, stacklevel=3)

