"""The committed validation suite: `python -m gpu_validate.suite measure|compare DIR`.

`measure` (on the GPU) runs `simdmodel validate --measure-only` for every graph of SUITE with all
kernels and three sources, Nsight Compute on sampled rounds of the first source, and writes each
graph's measured tables under DIR/<graph>/. `compare` (CPU, no GPU needed) predicts every launch
with the device's opmachine profile, compares per graph, pools all graphs into DIR's tables and
`summary.json`. Splitting the two keeps GPU time to the measurements alone.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import pandas as pd

SUITE = (
    "rmat:scale=21,ef=16",
    "kron:scale=20,ef=16",
    "random:n=2000000,m=32000000",
    "grid2d:side=1400",
    "mesh6:side=1000",
    "delaunay:n=1000000",
)
SOURCES = 3
SEED = 1
GRAPH_KEYS = ("graph", "graph_n", "graph_m", "sources")  # device.json keys that belong to one graph


def graph_slug(spec: str) -> str:
    """A folder name for a graph spec: 'rmat:scale=21,ef=16' -> 'rmat_scale21_ef16'."""
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]+", "_", spec.replace("=", ""))).strip("_")


def measure(directory: Path, specs, repeats: int, counters: bool, ncu_levels: int, quiet: bool) -> None:
    from simdmodel.cli import main as cli

    for spec in specs:
        started = time.time()
        argv = ["validate", spec, "--sources", str(SOURCES), "--seed", str(SEED), "--repeats", str(repeats),
                "--ncu-levels", str(ncu_levels), "--measure-only", "--out", str(directory / graph_slug(spec))]
        if counters:
            argv.append("--counters")
        if quiet:
            argv.append("--quiet")
        status = cli(argv)
        print(f"{spec}: measured in {time.time() - started:.0f} s (exit {status})", flush=True)
        if status:
            sys.exit(status)


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


def compare_all(directory: Path, specs, l2_model: str, quiet: bool, reuse: bool = False) -> dict:
    from opmachine.profile import load_profile
    from simdmodel.cli import main as cli

    from .validate import compare_tables, table_path, write_tables

    pooled: dict[str, list] = {}
    device = {}
    for spec in specs:
        folder = directory / graph_slug(spec)
        argv = ["validate", spec, "--measured", str(folder), "--l2", l2_model, "--out", str(folder)]
        if quiet:
            argv.append("--quiet")
        if not (reuse and (folder / "summary.json").is_file()) and cli(argv):
            sys.exit(2)
        device = json.loads((folder / "device.json").read_text())
        for name in ("measured", "lanes_model", "ncu", "predicted", "throughput"):
            path = table_path(folder, name)
            if path is not None:
                pooled.setdefault(name, []).append(pd.read_csv(path))
        compress(folder)
    tables = {name: pd.concat(parts, ignore_index=True) for name, parts in pooled.items()}
    profile = load_profile(device["profile"], "gpu")
    meta = {**{k: device.get(k) for k in ("device", "driver", "date")},
            "command": f"python -m gpu_validate.suite measure {directory} (GPU), then python -m gpu_validate.suite "
                       f"compare {directory} --graphs '{';'.join(specs)}'",
            "graphs": list(specs), "kernels": sorted(tables["measured"]["kernel"].unique().tolist()),
            "sources_per_graph": SOURCES, "profile": profile.name, "curves_measured": bool(profile.measured),
            "l2_model": l2_model}
    out, summary = compare_tables(tables, profile, meta)
    small = {name: out[name] for name in ("time_errors", "whole_bfs", "best_mapping", "phase_errors")}
    shared = {k: v for k, v in device.items() if k not in GRAPH_KEYS}  # the device, not the last graph
    write_tables(directory / "pooled", {**small, "throughput": tables["throughput"]}, summary, shared)
    (directory / "summary.json").write_text(json.dumps(summary, indent=2, allow_nan=False) + "\n")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.suite", description=__doc__.splitlines()[0])
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
    args = parser.parse_args(argv)
    specs = SUITE if args.graphs is None else tuple(s for s in SUITE if graph_slug(s) in args.graphs.split(",")
                                                    or s in args.graphs.split(";"))
    args.directory.mkdir(parents=True, exist_ok=True)
    if args.stage == "measure":
        measure(args.directory, specs, args.repeats, not args.no_counters, args.ncu_levels, args.quiet)
    else:
        summary = compare_all(args.directory, specs, args.l2, args.quiet, args.reuse)
        print(json.dumps({k: v for k, v in summary.items() if not isinstance(v, dict)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
