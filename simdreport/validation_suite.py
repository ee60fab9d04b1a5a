"""The committed validation run: `python -m simdreport.validation_suite measure|compare DIR`.

`measure` (on the GPU) measures every graph of `suites.VALIDATION_SUITE` (or, with `--graphs-dir
DIR`, of a folder of graph files and its manifest, `--suite real` for the shipped real-graph one:
`manifest.py`) with all kernels and
three sources (what `simdmodel validate --measure-only` does), Nsight Compute on sampled rounds of
the first source, and writes each graph's measured tables under DIR/<graph>/. `compare` (CPU, no
GPU needed) predicts every launch with the device's opmachine profile, compares per graph, pools
all graphs into DIR's tables and `summary.json`. Splitting the two keeps GPU time to the
measurements alone. Both stages call `gpu_validate.pipeline.validate_graph`, as the CLI does.
The exact command line of each stage is recorded: `measure`'s in every graph's device.json
(measure_command), `compare`'s in the summaries (compare_command, beside measure_command and the
compared code's version, `gpu_validate.provenance.code_version`).
"""
from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import pandas as pd

from .manifest import SUITES
from .suites import (VALIDATION_KERNELS, VALIDATION_SEED, VALIDATION_SOURCES, VALIDATION_SUITE, SuiteGraph,
                     graph_slug)

GRAPH_KEYS = ("graph", "graph_n", "graph_m", "graph_file", "sources", "measure_command")  # device.json keys of one graph
POOLED_TABLES = ("measured", "lanes_model", "ncu", "predicted", "throughput")
"""The per-graph tables pooled over the suite (ncu only where the run profiled counters)."""
PROG = "python -m simdreport.validation_suite"


def folder_name(graph: SuiteGraph) -> str:
    """A graph's results folder: a file's name without its suffixes (the graph column of its
    tables), a generator spec's slug."""
    from simdmodel.generators import is_generator_spec
    from simdmodel.readers import stem_name

    return graph_slug(graph.spec) if is_generator_spec(graph.spec) else stem_name(graph.spec)


def recorded_name(graph: SuiteGraph) -> str:
    """How results name a graph: its generator spec, or its file's name (the folder is this machine's)."""
    from simdmodel.generators import is_generator_spec

    return graph.spec if is_generator_spec(graph.spec) else Path(graph.spec).name


def loader_flags(graph: SuiteGraph) -> list[str]:
    """The `simdmodel` options that load `graph` as its manifest says (`--undirected`, reader options)."""
    flags = ["--undirected"] if graph.loader.get("undirected") else []
    read = graph.loader.get("read_options")
    if read is not None:
        for name, value in read.choices().items():
            flags.append(read.flag(name))
            if name == "columns":
                flags.append(",".join(value))
    return flags


def stage_command(argv) -> str:
    """The command line of a suite run with arguments `argv`, as a shell would take it."""
    return " ".join([PROG, *map(shlex.quote, map(str, argv))])


def measure(directory: Path, graphs, repeats: int, counters: bool, ncu_levels: int, quiet: bool,
            command: str | None = None, kernels=VALIDATION_KERNELS) -> None:
    """Measure every graph of `graphs` (SuiteGraph) into DIR/<folder_name>/ (measured tables only);
    `command`, the measuring command line, goes into each graph's device.json as measure_command."""
    from gpu_validate.pipeline import validate_graph

    for graph in graphs:
        started = time.time()
        run = validate_graph(graph.load, list(kernels), VALIDATION_SOURCES, None,
                             out=directory / folder_name(graph), seed=VALIDATION_SEED, measure_only=True,
                             counters=counters, ncu_levels=ncu_levels, repeats=repeats, command=command,
                             progress=not quiet and sys.stderr.isatty())
        print(f"{graph.label}: measured {run.launches} launches in {time.time() - started:.0f} s", flush=True)


def compress(folder: Path, threshold_bytes: int = 1 << 20) -> None:
    """Gzip every CSV in `folder` over `threshold_bytes` (the deep graphs' per-launch tables), with no
    time stamp in the header, so the same table always gives the same bytes."""
    import gzip
    import os

    for path in folder.glob("*.csv"):
        if path.stat().st_size > threshold_bytes:
            packed = path.with_suffix(".csv.gz")
            with open(path, "rb") as raw, gzip.GzipFile(f"{packed}.part", "wb", compresslevel=9, mtime=0) as out:
                out.write(raw.read())
            os.replace(f"{packed}.part", packed)
            path.unlink()


def kernel_flags(kernels) -> list[str]:
    """The --kernels option that names `kernels` in a recorded command, none for the suite's own."""
    return [] if tuple(kernels) == VALIDATION_KERNELS else ["--kernels", ",".join(kernels)]


def compare_graph(folder: Path, graph: SuiteGraph, l2_model: str, quiet: bool, meta: dict | None = None,
                  kernels=VALIDATION_KERNELS) -> None:
    """Predict and compare one graph's measurements in `folder`, writing the comparison there (`meta`:
    more summary.json keys)."""
    from gpu_validate.pipeline import validate_graph

    # the `simdmodel validate` command that does the same, recorded in the graph's summary.json
    spec = graph.spec if recorded_name(graph) == graph.spec else f"{GRAPHS_DIR}/{recorded_name(graph)}"
    command = " ".join(["simdmodel", *map(shlex.quote, ["validate", spec, *loader_flags(graph), *kernel_flags(kernels),
                                                        "--measured", str(folder), "--l2", l2_model, "--out",
                                                        str(folder)])])
    validate_graph(graph.load, list(kernels), None, None, out=folder, measured_dir=folder,
                   l2_model=l2_model, command=command, progress=not quiet and sys.stderr.isatty(), meta=meta)


def compare_all(directory: Path, graphs, l2_model: str, quiet: bool, reuse: bool = False,
                command: str | None = None, kernels=VALIDATION_KERNELS) -> dict:
    """Compare every graph of `graphs` (SuiteGraph; unless `reuse` keeps a graph's earlier comparison), then pool them
    into DIR/pooled/ and DIR/summary.json; returns the pooled summary. `command` is this comparison's
    command line (compare_command; None: the `compare` command equivalent to these arguments)."""
    from gpu_validate.provenance import code_version
    from gpu_validate.validate import compare_tables, read_device, read_table, table_path, write_tables
    from opmachine.profile import load_profile
    from simdmodel.errors import InputError

    graphs = [g if isinstance(g, SuiteGraph) else SuiteGraph(g, g, "") for g in graphs]  # specs welcome too
    names = ",".join(map(folder_name, graphs))
    if command is None:
        command = stage_command(["compare", directory, "--graphs", names, *kernel_flags(kernels), "--l2", l2_model,
                                 *(["--reuse"] * reuse)])
    run = {"code_version": code_version(exclude=[directory]), "compare_command": command}  # before any write
    pooled: dict[str, list] = {}
    device = {}
    measure_commands = []
    for graph in graphs:
        folder = directory / folder_name(graph)
        if not (reuse and (folder / "summary.json").is_file()):
            compare_graph(folder, graph, l2_model, quiet, run, kernels)
        device = read_device(folder)
        measure_commands.append(device.get("measure_command"))
        for name in POOLED_TABLES:
            path = table_path(folder, name)
            if path is not None:
                pooled.setdefault(name, []).append(read_table(path))
            elif name != "ncu":
                raise InputError(f"{folder}: missing {name}.csv; compare it again (without --reuse)")
        compress(folder)
    tables = {name: pd.concat(parts, ignore_index=True) for name, parts in pooled.items()}
    profile = load_profile(device["profile"], "gpu")
    recorded = list(dict.fromkeys(c for c in measure_commands if c))
    meta = {**{k: device.get(k) for k in ("device", "driver", "date")},
            "command": f"{PROG} measure {directory} (GPU), then {command}",
            "graphs": [recorded_name(graph) for graph in graphs], "kernels": sorted(tables["measured"]["kernel"].unique().tolist()),
            "sources_per_graph": VALIDATION_SOURCES, "profile": profile.name,
            "curves_measured": bool(profile.measured),
            "l2_model": l2_model, **run,
            "measure_command": recorded[0] if len(recorded) == 1 else (recorded or None)}
    out, summary = compare_tables(tables, profile, meta)
    small = {name: out[name] for name in ("time_errors", "whole_bfs", "best_mapping", "phase_errors")}
    shared = {k: v for k, v in device.items() if k not in GRAPH_KEYS}  # the device, not the last graph
    write_tables(directory / "pooled", {**small, "throughput": tables["throughput"]}, summary, shared)
    (directory / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n")
    return summary


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["measure", "compare"])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--graphs", default=None,
                        help="comma-separated subset of the suite's graphs, by folder name (default: all)")
    parser.add_argument("--graphs-dir", type=Path, metavar="DIR",
                        help="a folder of graph files instead of the generated suite (its graphs.toml, if any)")
    parser.add_argument("--suite", choices=sorted(SUITES), help="with --graphs-dir: the shipped manifest of this "
                        "suite (real: the eighteen public real graphs)")
    parser.add_argument("--kernels", default=",".join(VALIDATION_KERNELS),
                        help=f"comma-separated kernels (default {','.join(VALIDATION_KERNELS)})")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-counters", action="store_true", help="skip Nsight Compute")
    parser.add_argument("--ncu-levels", type=int, default=12, help="rounds per kernel ncu profiles (default 12)")
    parser.add_argument("--l2", default="setassoc", choices=["lru", "setassoc"])
    parser.add_argument("--reuse", action="store_true",
                        help="compare: keep a graph's earlier predictions (its summary.json) and only pool")
    parser.add_argument("--quiet", action="store_true")
    return parser


GRAPHS_DIR = "GRAPHS_DIR"
"""What the recorded command lines say in place of the --graphs-dir folder (a path of this machine)."""


def main(argv=None) -> int:
    from .cli import run_command

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.command = stage_command(_recorded(argv))
    return run_command(_run, args)


def _recorded(argv: list) -> list:
    """`argv` with the --graphs-dir folder written as GRAPHS_DIR."""
    out, after = [], False
    for arg in argv:
        if after:
            out.append(GRAPHS_DIR)
        elif str(arg).startswith("--graphs-dir="):
            out.append(f"--graphs-dir={GRAPHS_DIR}")
        else:
            out.append(arg)
        after = arg == "--graphs-dir"
    return out


def suite_graphs(args) -> tuple[SuiteGraph, ...]:
    """The graphs a suite run covers: the generated suite, or a folder's, less those --graphs leaves out."""
    from simdmodel.errors import InputError

    from .manifest import check_files, directory_graphs

    if args.suite is not None and args.graphs_dir is None:
        raise InputError("--suite needs --graphs-dir, the folder that holds its files")
    if args.graphs_dir is None:
        graphs = tuple(SuiteGraph(spec, spec, "") for spec in VALIDATION_SUITE)
    else:
        graphs = tuple(g.suite_graph() for g in directory_graphs(args.graphs_dir, args.suite))
    if args.graphs is None:
        check_files(graphs)
        return graphs
    chosen = set(args.graphs.split(",")) | set(args.graphs.split(";"))
    picked = tuple(g for g in graphs if folder_name(g) in chosen or g.spec in chosen)
    if not picked:
        names = ", ".join(map(folder_name, graphs))
        raise InputError(f"--graphs {args.graphs!r} names no graph of the suite ({names})")
    check_files(picked)
    return picked


def suite_kernels(args) -> tuple[str, ...]:
    """The --kernels of a suite run, each checked (unknown or repeated labels are refused)."""
    from opmachine.kernels import parse_kernel
    from simdmodel.errors import InputError

    labels = tuple(k.strip().lower() for k in args.kernels.split(",") if k.strip())
    if not labels:
        raise InputError("--kernels names no kernel")
    if len(set(labels)) != len(labels):
        raise InputError(f"--kernels lists a kernel twice: {args.kernels!r}")
    for label in labels:
        parse_kernel(label)
    return labels


def _run(args) -> int:
    from gpu_validate.bfs import LevelMismatch

    graphs = suite_graphs(args)
    kernels = suite_kernels(args)
    args.directory.mkdir(parents=True, exist_ok=True)
    try:
        if args.stage == "measure":
            measure(args.directory, graphs, args.repeats, not args.no_counters, args.ncu_levels, args.quiet,
                    args.command, kernels)
            return 0
    except LevelMismatch as error:  # a kernel bug, not a user mistake: no timing, exit 1
        sys.stderr.write(f"simdmodel: error: {error}\n")
        return 1
    summary = compare_all(args.directory, graphs, args.l2, args.quiet, args.reuse, args.command, kernels)
    print(json.dumps({k: v for k, v in summary.items() if not isinstance(v, dict)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
