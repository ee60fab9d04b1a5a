"""Traversal rate of the GPU BFS kernels beside the device's physical bound (needs a GPU).

For each graph and kernel, a BFS from each of `--sources` seeded sources (Graph500 style: at least
8), its launches timed back to back as the validation times them (`GpuBfs.time_bfs`, or
`GpuCoupledBfs.time_bfs` for seed 001's couplings: median of `--repeats` after a warm-up, levels
checked against the CPU BFS after every run). GTEPS = edges of
the traversed component (the out-edges of the reached vertices) / the BFS's time; the median over
the sources is printed with its range, beside the bound (`gpu_validate.validate.traversal_bounds`:
streaming the row offsets and column indices at the profile's DRAM bandwidth, and one status
lookup per traversed edge at the profile's measured [gather] rate), each kernel's fraction of it,
and its speed relative to the fastest kernel on that graph.

    python bench/bench_gteps.py [--graphs SPEC;SPEC] [--kernels scan,sm-32,swc] [--sources 8]
        [--repeats 3] [--bitmask-stores claim,plain] [--spread on,off] [--gpu PROFILE] [--json OUT]

The kernels: `topo`, the mappings of the two-launch BFS (`sm-S`, `ws`, `scan`, `swc`), and seed
001's couplings (`expand-contract`, `contract-expand`, `two-phase`, `hybrid`, each with an optional
lookup mode: `hybrid-history`). `--bitmask-stores` times each coupling in each of the named builds
(`gpu_validate.modules.BITMASK_STORES`; a row's `bitmask_stores`): `claim`, the default, has only the lane
that claims a vertex set its bitmask bit, `plain` every lane that finds its bit unset store the byte.
`--spread` times each coupling with its launches of fewer CTAs than a full wave leaving lists longer than
a warp as pieces (`on`, the default) and gathering lists of up to 1024 edges themselves (`off`; a row's
`spread`; `simdmodel.couplings.big_list`).
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys

import numpy as np

from gpu_validate.modules import BITMASK_STORES, DEFAULT_BUILD, coupling_defines

GRAPHS = ("rmat:scale=21,ef=16", "kron:scale=20,ef=16", "random:n=2000000,m=32000000", "grid2d:side=1400",
          "mesh6:side=1000", "delaunay:n=1000000")
KERNELS = ("topo", "sm-8", "sm-32", "ws", "scan", "swc", "expand-contract", "contract-expand", "two-phase", "hybrid")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=";".join(GRAPHS), help="';'-separated graph specs (default: the "
                        "validation suite)")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--sources", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bitmask-stores", default=DEFAULT_BUILD[1], help="comma-separated builds of the "
                        f"couplings' atomic lookup: {', '.join(BITMASK_STORES)} (default {DEFAULT_BUILD[1]})")
    parser.add_argument("--spread", default="on", help="comma-separated: on (default), off: whether the "
                        "couplings' small launches spread lists longer than a warp over the grid as pieces")
    parser.add_argument("--gpu", default=None, help="profile (default: the one of this GPU)")
    parser.add_argument("--json", help="also write the rows and the run's provenance here")
    args = parser.parse_args(argv)

    import opmachine as om
    import simdmodel as sm
    from gpu_validate.bfs import GpuBfs
    from gpu_validate.couplings import GpuCoupledBfs
    from simdmodel.couplings import is_coupling, parse_coupling
    from gpu_validate.device import device_info, profile_for_device
    from gpu_validate.validate import traversal_bounds

    from simdmodel.errors import InputError

    try:  # every label before the GPU: a typo is one line
        kernels = {label: parse_coupling(label) if is_coupling(label) else om.parse_kernel(label)
                   for label in args.kernels.split(",")}
        builds = args.bitmask_stores.split(",")
        for build in builds:
            coupling_defines(bitmask_stores=build)
        spreads = args.spread.split(",")
        if set(spreads) - {"on", "off"}:
            raise InputError(f"--spread takes on, off or both, got {args.spread!r}")
        info = device_info()
        profile = om.load_profile(args.gpu or profile_for_device(info))
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rows = []
    for spec in args.graphs.split(";"):
        graph = sm.load_graph(spec)
        degrees = graph.degrees()
        sources = [int(s) for s in sm.pick_sources(graph, args.sources, 1)]
        edges = {s: int(degrees[sm.bfs(graph, s).vertices].sum()) for s in sources}
        traversed = np.array([edges[s] for s in sources], dtype=np.float64)
        bounds = {k: float(np.median(v)) for k, v in
                  traversal_bounds(traversed, graph.n, graph.m, profile.dram_bandwidth_gbs, profile.gather).items()}
        for label, kernel in kernels.items():
            for build, spread in ([(b, s) for b in builds for s in spreads] if is_coupling(label) else [(None, None)]):
                gpu = (GpuCoupledBfs(graph, kernel, profile, bitmask_stores=build, spread=spread == "on")
                       if is_coupling(label) else GpuBfs(graph, kernel, profile))
                rates = [edges[s] / gpu.time_bfs(s, repeats=args.repeats)["time_ns"].sum() for s in sources]
                row = {"graph": spec, "kernel": label, "bitmask_stores": build,
                       "spread": None if spread is None else spread == "on", "gteps": float(np.median(rates)),
                       "gteps_min": min(rates), "gteps_max": max(rates), "edges": float(np.median(traversed)),
                       **bounds}
                row["fraction_of_bound"] = row["gteps"] / row["bound_gteps"]
                rows.append(row)
                del gpu
        best = max(r["gteps"] for r in rows if r["graph"] == spec)
        print(f"{spec}: n={graph.n:,} m={graph.m:,}; bound {bounds['bound_gteps']:.1f} GTEPS (stream "
              f"{bounds['stream_bound_gteps']:.1f}, gather {bounds['gather_bound_gteps']:.1f}; medians over the "
              "sources)", flush=True)
        for row in (r for r in rows if r["graph"] == spec):
            row["vs_fastest"] = row["gteps"] / best
            notes = [row["bitmask_stores"]] if row["bitmask_stores"] not in (None, DEFAULT_BUILD[1]) else []
            notes += ["no spread"] if row["spread"] is False else []
            name = row["kernel"] + (f" ({', '.join(notes)})" if notes else "")
            print(f"  {name:>34} {row['gteps']:8.2f} GTEPS ({row['gteps_min']:.2f}..{row['gteps_max']:.2f}) "
                  f"{row['fraction_of_bound']:6.1%} of bound, {row['vs_fastest']:.2f}x the fastest", flush=True)
    if args.json:
        record = {"device": info["device"], "driver": info["driver"],
                  "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), "profile": profile.name,
                  "command": "python bench/bench_gteps.py " + " ".join(sys.argv[1:] if argv is None else argv),
                  "sources": args.sources, "repeats": args.repeats, "rows": rows}
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(record, out, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
