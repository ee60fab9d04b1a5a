"""Seed 001's couplings on the GPU beside the model: queue sizes, explicit traffic, time and GTEPS.

For each graph and coupling (`--kernels`, labels of `simdmodel.couplings`), a BFS from each of
`--sources` seeded sources is timed (`GpuCoupledBfs.time_bfs`: a warm-up, then the median of
`--repeats` back-to-back replays, each launch's output size over them) and counted (`--counts` runs
of the instrumented build: words per traffic category). Beside them the model's launches
(`simdmodel.couplings.coupled_launches`). A coupling whose queue overflows is recorded as such, with
no time. Writes into DIR:

- launches.csv.gz: one row per launch (graph, kernel, source, level, phase, grid, input, output,
  time_ns, output_min/max; the first counted run's traffic; the model's output and traffic where
  its launch sequence is the measured one);
- traffic.csv: per (graph, kernel, source) words per category, measured (first counted run) and
  predicted, the explicit words, seed 001's formula, and the redundant expansion factor measured
  (median, min, max over the counted runs) and predicted;
- pooled/throughput.csv: per (graph, kernel, source) the BFS time, GTEPS (edges of the traversed
  component / time) and the physical bound (`validate.traversal_bounds`) with fraction_of_bound;
- summary.json: device, driver, date, command, per (graph, kernel) medians, and
  redundant_expansion_max (measured, the default `atomic` lookup with both culling heuristics, the
  largest over graphs; per lookup mode in redundant_expansion_max_by_mode, null where a queue overflowed);
  best_coupling_agreement is null until the couplings have a time model.

    python -m gpu_validate.coupling_validation SPEC [SPEC ...] [--kernels K,K] [--sources 3]
        [--repeats 5] [--counts 3] [--out DIR]
    python -m gpu_validate.coupling_validation --measured DIR     (the model again, no GPU)
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

KERNELS = ("expand-contract", "contract-expand", "two-phase", "hybrid")
KEYS = ["graph", "kernel", "source"]


def measure_graph(graph, labels, sources, profile, repeats: int, counts: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(timed launches, counted launches with a `run` column) of every coupling and source on `graph`."""
    from simdmodel.couplings import QueueOverflow, parse_coupling

    from .couplings import GpuCoupledBfs

    timed, counted = [], []
    for label in labels:
        coupling = parse_coupling(label)
        for instrumented in (False, True):
            gpu = GpuCoupledBfs(graph, coupling, profile, instrumented)
            for source in sources:
                key = {"graph": graph.name, "kernel": coupling.label, "source": int(source)}
                try:
                    if instrumented:
                        for run in range(counts):
                            counted.append(gpu.count_bfs(int(source)).assign(graph=graph.name, run=run))
                    else:
                        timed.append(gpu.time_bfs(int(source), repeats=repeats).assign(graph=graph.name))
                except QueueOverflow as error:
                    print(f"  {error}", file=sys.stderr, flush=True)
                    (counted if instrumented else timed).append(pd.DataFrame([{**key, "phase": "overflow"}]))
            del gpu
    return pd.concat(timed, ignore_index=True), pd.concat(counted, ignore_index=True)


def predict(measured: pd.DataFrame, graph, grid: int, resident_threads: int) -> pd.DataFrame:
    """The model's launches of every (kernel, source) of `measured` on `graph` (coupled_launches, no
    set-up row), with `kernel` and `source`; a row with phase `overflow` where a queue would overflow."""
    from simdmodel.couplings import QueueOverflow, coupled_launches, parse_coupling

    out = []
    for (kernel, source), _ in measured.groupby(["kernel", "source"], sort=False):
        try:
            rows = coupled_launches(graph, int(source), parse_coupling(kernel), grid, resident_threads)
            out.append(rows[rows["phase"] != "setup"].assign(kernel=kernel, source=int(source)))
        except QueueOverflow:
            out.append(pd.DataFrame([{"kernel": kernel, "source": int(source), "phase": "overflow"}]))
    return pd.concat(out, ignore_index=True).assign(graph=graph.name)


def _sequence(rows: pd.DataFrame) -> list:
    return list(zip(rows["level"], rows["phase"]))


def launch_table(timed, counted, predicted) -> pd.DataFrame:
    """Timed launches with the first counted run's traffic and the model's output and traffic beside
    them (`predicted_*`) where the launch sequences agree."""
    from simdmodel.couplings import TRAFFIC

    first = counted[counted["run"] == 0] if "run" in counted else counted
    groups = {"": dict(iter(first.groupby(KEYS, sort=False))), "predicted_": dict(iter(predicted.groupby(KEYS)))}
    tables = []
    for key, rows in timed.groupby(KEYS, sort=False):
        rows = rows.reset_index(drop=True)
        for prefix, by_key in groups.items():
            other = by_key.get(key, pd.DataFrame()).reset_index(drop=True)
            if len(other) == len(rows) and _sequence(other) == _sequence(rows) and "overflow" not in rows["phase"].values:
                columns = list(TRAFFIC) + ([] if not prefix else ["output"])
                for column in columns:
                    rows[prefix + column] = other[column].to_numpy()
        tables.append(rows)
    return pd.concat(tables, ignore_index=True)


def traffic_table(counted, predicted, graph) -> pd.DataFrame:
    """Per (kernel, source): words per category measured and predicted, explicit words, the formula,
    and the redundant expansion factor measured (median, min, max over counted runs) and predicted."""
    from simdmodel.couplings import FORMULA_TRAFFIC, SETUP_WORDS, TRAFFIC, parse_coupling, traversed

    rows = []
    reach = {int(source): traversed(graph, source) for source in counted["source"].unique()}
    for (graph_name, kernel, source), runs in counted.groupby(KEYS, sort=False):
        vertices, edges = reach[int(source)]
        row = {"graph": graph_name, "kernel": kernel, "source": int(source), "reached_vertices": vertices,
               "reached_edges": edges, "formula_words": parse_coupling(kernel).formula_words(vertices, edges)}
        mine = predicted[(predicted["kernel"] == kernel) & (predicted["source"] == source)]
        for name, table in (("measured", runs), ("predicted", mine)):
            if "overflow" in table["phase"].values:
                row[f"{name}_overflow"] = True
                continue
            row[f"{name}_overflow"] = False
            first = table[table["run"] == 0] if "run" in table else table
            for category in TRAFFIC:  # the launches' words and the host's set-up
                row[f"{name}_{category}"] = int(first[category].sum()) + SETUP_WORDS.get(category, 0)
            row[f"{name}_words"] = int(sum(row[f"{name}_{c}"] for c in FORMULA_TRAFFIC))
            runs_of = table["run"] if "run" in table else pd.Series(0, index=table.index)
            factors = table.groupby(runs_of)["column"].sum() / max(edges, 1)
            row[f"{name}_redundant"] = float(np.median(factors))
            if name == "measured":
                row["measured_redundant_min"], row["measured_redundant_max"] = float(factors.min()), float(factors.max())
        rows.append(row)
    return pd.DataFrame(rows)


def throughput_table(timed, traffic, graph, profile) -> pd.DataFrame:
    """Per (kernel, source): measured_ns (the launches' median times), GTEPS and the physical bound."""
    from .validate import traversal_bounds

    done = timed[timed["phase"] != "overflow"]
    times = done.groupby(KEYS, sort=False)["time_ns"].sum().rename("measured_ns").reset_index()
    table = traffic[KEYS + ["reached_vertices", "reached_edges"]].merge(times, on=KEYS, how="left")
    table["gteps"] = table["reached_edges"] / table["measured_ns"]
    bounds = traversal_bounds(table["reached_edges"].to_numpy(), graph.n, graph.m, profile.dram_bandwidth_gbs,
                              profile.gather)
    for name, values in bounds.items():
        table[name] = values
    table["fraction_of_bound"] = table["gteps"] / table["bound_gteps"]
    return table


def summarize(traffic: pd.DataFrame, throughput: pd.DataFrame) -> dict:
    """Per (graph, kernel) medians, and the largest measured redundant expansion factors."""
    from simdmodel.couplings import parse_coupling

    per = []
    for (graph, kernel), rows in traffic.groupby(["graph", "kernel"], sort=False):
        speed = throughput[(throughput["graph"] == graph) & (throughput["kernel"] == kernel)]
        overflow = bool(rows["measured_overflow"].any())
        per.append({"graph": graph, "kernel": kernel, "mode": parse_coupling(kernel).mode, "overflow": overflow,
                    "gteps": None if overflow else float(speed["gteps"].median()),
                    "fraction_of_bound": None if overflow else float(speed["fraction_of_bound"].median()),
                    "redundant_measured": None if overflow else float(rows["measured_redundant"].median()),
                    "redundant_measured_min": None if overflow else float(rows["measured_redundant_min"].min()),
                    "redundant_measured_max": None if overflow else float(rows["measured_redundant_max"].max()),
                    "redundant_predicted": None if rows["predicted_overflow"].any()
                    else float(rows["predicted_redundant"].median())})
    by_mode: dict = {}
    for row in per:
        worst = None if row["overflow"] else row["redundant_measured_max"]
        mode = row["mode"]
        if mode not in by_mode or (by_mode[mode] is not None and (worst is None or worst > by_mode[mode])):
            by_mode[mode] = worst
    return {"rows": per, "redundant_expansion_max": by_mode.get("atomic"), "redundant_expansion_max_by_mode": by_mode,
            "best_coupling_agreement": None,
            "best_coupling_agreement_note": "no predicted time: the operator machine does not model the couplings yet"}


def write(out: Path, tables: dict, record: dict) -> None:
    """The run's files, each whole or not at all (simdmodel.atomic)."""
    from simdmodel.atomic import write_csv_gz, write_text

    (out / "pooled").mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        if name.endswith(".gz"):
            write_csv_gz(out / name, table)
        else:
            write_text(out / name, table.to_csv(index=False))
    write_text(out / "summary.json", json.dumps(record, indent=1) + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.coupling_validation",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated coupling labels")
    parser.add_argument("--sources", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--counts", type=int, default=3, help="instrumented runs per source (races vary)")
    parser.add_argument("--out", default="couplings")
    parser.add_argument("--measured", metavar="DIR", help="predict this earlier run again (no GPU)")
    args = parser.parse_args(argv)
    import opmachine as om
    import simdmodel as sm
    from opmachine.kernels import DEFAULT_BLOCK
    from simdmodel.couplings import parse_coupling
    from simdmodel.errors import InputError

    from .device import GpuUnavailable, device_info, profile_for_device

    command = "python -m gpu_validate.coupling_validation " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        labels = [parse_coupling(k).label for k in args.kernels.split(",")]
        if args.measured:
            out = Path(args.measured)
            try:
                record = json.loads((out / "summary.json").read_text())
                timed = pd.read_csv(out / "measured.csv.gz")
                counted = pd.read_csv(out / "counted.csv.gz")
                profile = om.load_profile(record["profile"])
            except (OSError, ValueError, KeyError) as error:
                raise InputError(f"{out}: not a coupling run's folder ({error})") from None
            record["predict_command"] = command
        elif args.specs:
            info = device_info()
            profile = om.load_profile(profile_for_device(info))
            out = Path(args.out)
            timed, counted = [], []
            for graph in map(sm.load_graph, args.specs):
                sources = sm.pick_sources(graph, args.sources, 1)
                print(f"{graph.name}: sources {', '.join(map(str, sources))}", flush=True)
                t, c = measure_graph(graph, labels, sources, profile, args.repeats, args.counts)
                timed.append(t)
                counted.append(c)
            timed, counted = pd.concat(timed, ignore_index=True), pd.concat(counted, ignore_index=True)
            record = {"device": info["device"], "driver": info["driver"], "profile": profile.name,
                      "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), "command": command,
                      "sources": args.sources, "repeats": args.repeats, "counts": args.counts}
        else:
            raise InputError("name graphs to measure, or --measured DIR")
        grid = profile.full_wave_grid(DEFAULT_BLOCK)
        launches, traffic, throughput = [], [], []
        for name in timed["graph"].unique():
            graph = sm.load_graph(name)
            predicted = predict(counted[counted["graph"] == name], graph, grid, grid * DEFAULT_BLOCK)
            launches.append(launch_table(timed[timed["graph"] == name], counted[counted["graph"] == name], predicted))
            traffic.append(traffic_table(counted[counted["graph"] == name], predicted, graph))
            throughput.append(throughput_table(timed[timed["graph"] == name], traffic[-1], graph, profile))
    except (GpuUnavailable, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    traffic, throughput = pd.concat(traffic, ignore_index=True), pd.concat(throughput, ignore_index=True)
    record.update(summarize(traffic, throughput))
    write(out, {"measured.csv.gz": timed, "counted.csv.gz": counted, "launches.csv.gz": pd.concat(launches),
                "traffic.csv": traffic, "pooled/throughput.csv": throughput}, record)
    print(pd.DataFrame(record["rows"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
