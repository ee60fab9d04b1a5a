"""Status lookup with culling on the GPU beside the model (seed 001 §4.2, Fig. 8).

For every level of a BFS from each source, the level's edge frontier goes through the isolated
lookup kernel (`cuda/lookup.cu`) in each mode of `simdmodel.lookup.MODES`, from the status the level
starts with (every vertex of an earlier or the same level visited), `--repeats` times: cross-warp
races make the count vary. Beside each (level, mode): the model's survivors (`lookup_survivors`,
exact within a warp, cross-warp races not seen), the ideal (the next frontier), and the measured
median, min and max. Writes DIR/lookup.csv and DIR/summary.json (device, date, command, and per
graph and mode the false-negative rates over m - n, measured and predicted). `--measured DIR`
predicts an earlier run's table again with the current model (no GPU needed) and rewrites both.

    python -m gpu_validate.lookup SPEC [SPEC ...] [--sources 1] [--repeats 5] [--out DIR]
    python -m gpu_validate.lookup --measured DIR
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd


def predict(table: pd.DataFrame, graph, grid: int) -> pd.DataFrame:
    """`table` (one graph's rows) with `predicted` (the wave model) and `predicted_sequential` (no
    cross-warp race) survivors of each (source, level, mode)."""
    import simdmodel as sm
    from simdmodel.lookup import edge_frontier, lookup_survivors, mode_index

    out = table.copy()
    for source, rows in table.groupby("source", sort=False):
        frontiers = sm.bfs(graph, int(source))
        level = frontiers.levels
        for depth, cases in rows.groupby("level", sort=False):
            ids = edge_frontier(graph, frontiers.frontier(int(depth)))
            visited = (level >= 0) & (level <= depth)
            for index, row in cases.iterrows():
                mode = mode_index(row["mode"])
                out.loc[index, "predicted"] = lookup_survivors(ids, visited, mode, grid, True)
                out.loc[index, "predicted_sequential"] = lookup_survivors(ids, visited, mode, grid, False)
    return out


def measure_lookup(graph, source: int, profile, repeats: int) -> pd.DataFrame:
    """One row per (level, mode): edges, ideal and measured survivors (median, min, max)."""
    import simdmodel as sm
    from opmachine.kernels import DEFAULT_BLOCK
    from simdmodel.lookup import MODES, edge_frontier

    from . import modules
    from .device import require_gpu

    cp = require_gpu()
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    frontiers = sm.bfs(graph, int(source))
    level = frontiers.levels
    counter = cp.zeros(1, dtype=cp.uint64)
    rows = []
    for depth in range(frontiers.depth):
        ids = edge_frontier(graph, frontiers.frontier(depth))
        if not ids.size:
            continue
        visited = (level >= 0) & (level <= depth)
        label0 = np.where(visited, 0, -1).astype(np.int32)
        mask0 = np.packbits(visited, bitorder="little")
        ids_d = cp.asarray(ids.astype(np.int32))
        ideal = frontiers.frontier(depth + 1).size if depth + 1 < frontiers.depth else 0
        for index, mode in enumerate(MODES):
            kernel = modules.lookup(index)
            counts = []
            for _ in range(repeats):
                label, mask = cp.asarray(label0), cp.asarray(mask0)
                counter.fill(0)
                kernel((grid,), (DEFAULT_BLOCK,), (ids_d, np.int32(ids.size), label, mask, np.int32(depth + 1),
                                                   counter))
                counts.append(int(counter.get()[0]))
            rows.append({"graph": graph.name, "source": int(source), "level": depth, "mode": mode,
                         "edges": int(ids.size), "ideal": int(ideal), "measured": float(np.median(counts)),
                         "measured_min": min(counts), "measured_max": max(counts)})
    return pd.DataFrame(rows)


def summarize(table: pd.DataFrame, n: int, m: int) -> list[dict]:
    """Per (graph, mode): false negatives over m - n (`simdmodel.lookup.false_negative_rates`), predicted
    by both models and measured (median, and the min and max runs)."""
    from simdmodel.lookup import false_negative_rates

    out = []
    for graph, rows in table.groupby("graph", sort=False):
        totals = rows.groupby("mode", sort=False)[["edges", "ideal"]].sum()
        rates = {key: false_negative_rates(rows, n, m, key)
                 for key in ("predicted", "predicted_sequential", "measured", "measured_min", "measured_max")}
        out += [{"graph": graph, "mode": mode, "edges": int(totals.loc[mode, "edges"]),
                 "ideal": int(totals.loc[mode, "ideal"]), **{f"fn_rate_{k}": float(v[mode]) for k, v in rates.items()}}
                for mode in totals.index]
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.lookup", description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--sources", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default="lookup")
    parser.add_argument("--measured", metavar="DIR", help="predict this earlier run again (no GPU)")
    args = parser.parse_args(argv)
    import opmachine as om
    import simdmodel as sm
    from opmachine.kernels import DEFAULT_BLOCK
    from simdmodel.errors import InputError

    from .device import GpuUnavailable, device_info, profile_for_device, recorded_run

    command = "python -m gpu_validate.lookup " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        if args.measured:
            out = Path(args.measured)
            record, (measured,) = recorded_run(out, ["lookup.csv.gz"], "a lookup", command, {"grid": int})
            grid = record["grid"]
        elif args.specs:
            info = device_info()
            profile = om.load_profile(profile_for_device(info))
            grid = profile.full_wave_grid(DEFAULT_BLOCK)
            measured = pd.concat([measure_lookup(graph, int(source), profile, args.repeats)
                                  for graph in map(sm.load_graph, args.specs)
                                  for source in sm.pick_sources(graph, args.sources, 1)], ignore_index=True)
            out = Path(args.out)
            record = {"device": info["device"], "driver": info["driver"], "profile": profile.name, "grid": grid,
                      "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), "command": command,
                      "repeats": args.repeats}
        else:
            raise InputError("name graphs to measure, or --measured DIR")
        tables, rows = [], []
        for name, table in measured.groupby("graph", sort=False):
            graph = sm.load_graph(name)
            tables.append(predict(table, graph, grid))
            rows += summarize(tables[-1], graph.n, graph.m)
    except (GpuUnavailable, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    record["rows"] = rows
    from simdmodel.atomic import write_csv_gz, write_text

    out.mkdir(parents=True, exist_ok=True)
    write_csv_gz(out / "lookup.csv.gz", pd.concat(tables, ignore_index=True))  # same table, same bytes
    write_text(out / "summary.json", json.dumps(record, indent=1) + "\n")
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
