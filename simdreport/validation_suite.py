"""The committed validation run: `python -m simdreport.validation_suite measure|compare DIR`.

`measure` (on the GPU) measures every graph of `suites.VALIDATION_SUITE` with all kernels and
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

from .suites import VALIDATION_KERNELS, VALIDATION_SEED, VALIDATION_SOURCES, VALIDATION_SUITE, graph_slug

GRAPH_KEYS = ("graph", "graph_n", "graph_m", "sources", "measure_command")  # device.json keys of one graph
POOLED_TABLES = ("measured", "lanes_model", "ncu", "predicted", "throughput")
"""The per-graph tables pooled over the suite (ncu only where the run profiled counters)."""
PROG = "python -m simdreport.validation_suite"


def _loader(spec: str):
    from simdmodel.load import load_graph

    return lambda: load_graph(spec)


def stage_command(argv) -> str:
    """The command line of a suite run with arguments `argv`, as a shell would take it."""
    return " ".join([PROG, *map(shlex.quote, map(str, argv))])


def measure(directory: Path, specs, repeats: int, counters: bool, ncu_levels: int, quiet: bool,
            command: str | None = None) -> None:
    """Measure every graph of `specs` into DIR/<graph slug>/ (measured tables only); `command`, the
    measuring command line, goes into each graph's device.json as measure_command."""
    from gpu_validate.pipeline import validate_graph

    for spec in specs:
        started = time.time()
        run = validate_graph(_loader(spec), VALIDATION_KERNELS, VALIDATION_SOURCES, None,
                             out=directory / graph_slug(spec), seed=VALIDATION_SEED, measure_only=True,
                             counters=counters, ncu_levels=ncu_levels, repeats=repeats, command=command,
                             progress=not quiet and sys.stderr.isatty())
        print(f"{spec}: measured {run.launches} launches in {time.time() - started:.0f} s", flush=True)


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


def compare_graph(folder: Path, spec: str, l2_model: str, quiet: bool, meta: dict | None = None) -> None:
    """Predict and compare one graph's measurements in `folder`, writing the comparison there (`meta`:
    more summary.json keys)."""
    from gpu_validate.pipeline import validate_graph

    # the `simdmodel validate` command that does the same, recorded in the graph's summary.json
    command = " ".join(["simdmodel", *map(shlex.quote, ["validate", spec, "--measured", str(folder), "--l2",
                                                        l2_model, "--out", str(folder)])])
    validate_graph(_loader(spec), VALIDATION_KERNELS, None, None, out=folder, measured_dir=folder,
                   l2_model=l2_model, command=command, progress=not quiet and sys.stderr.isatty(), meta=meta)


def compare_all(directory: Path, specs, l2_model: str, quiet: bool, reuse: bool = False,
                command: str | None = None) -> dict:
    """Compare every graph of `specs` (unless `reuse` keeps a graph's earlier comparison), then pool them
    into DIR/pooled/ and DIR/summary.json; returns the pooled summary. `command` is this comparison's
    command line (compare_command; None: the `compare` command equivalent to these arguments)."""
    from gpu_validate.provenance import code_version
    from gpu_validate.validate import compare_tables, read_device, read_table, table_path, write_tables
    from opmachine.profile import load_profile
    from simdmodel.errors import InputError

    graphs = ";".join(specs)
    if command is None:
        command = stage_command(["compare", directory, "--graphs", graphs, "--l2", l2_model, *(["--reuse"] * reuse)])
    run = {"code_version": code_version(exclude=[directory]), "compare_command": command}  # before any write
    pooled: dict[str, list] = {}
    device = {}
    measure_commands = []
    for spec in specs:
        folder = directory / graph_slug(spec)
        if not (reuse and (folder / "summary.json").is_file()):
            compare_graph(folder, spec, l2_model, quiet, run)
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
            "command": f"{PROG} measure {directory} (GPU), then {PROG} compare {directory} --graphs '{graphs}'",
            "graphs": list(specs), "kernels": sorted(tables["measured"]["kernel"].unique().tolist()),
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
    parser.add_argument("--graphs", help="comma-separated subset of the suite's specs (default: all)", default=None)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-counters", action="store_true", help="skip Nsight Compute")
    parser.add_argument("--ncu-levels", type=int, default=12, help="rounds per kernel ncu profiles (default 12)")
    parser.add_argument("--l2", default="setassoc", choices=["lru", "setassoc"])
    parser.add_argument("--reuse", action="store_true",
                        help="compare: keep a graph's earlier predictions (its summary.json) and only pool")
    parser.add_argument("--quiet", action="store_true")
    return parser


def main(argv=None) -> int:
    from .cli import run_command

    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.command = stage_command(argv)
    return run_command(_run, args)


def _run(args) -> int:
    from gpu_validate.bfs import LevelMismatch
    from simdmodel.errors import InputError

    chosen = None if args.graphs is None else (args.graphs.split(","), args.graphs.split(";"))
    specs = VALIDATION_SUITE if chosen is None else tuple(s for s in VALIDATION_SUITE
                                                          if graph_slug(s) in chosen[0] or s in chosen[1])
    if not specs:
        names = ", ".join(map(graph_slug, VALIDATION_SUITE))
        raise InputError(f"--graphs {args.graphs!r} names no graph of the suite ({names})")
    args.directory.mkdir(parents=True, exist_ok=True)
    try:
        if args.stage == "measure":
            measure(args.directory, specs, args.repeats, not args.no_counters, args.ncu_levels, args.quiet,
                    args.command)
            return 0
    except LevelMismatch as error:  # a kernel bug, not a user mistake: no timing, exit 1
        sys.stderr.write(f"simdmodel: error: {error}\n")
        return 1
    summary = compare_all(args.directory, specs, args.l2, args.quiet, args.reuse, args.command)
    print(json.dumps({k: v for k, v in summary.items() if not isinstance(v, dict)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
