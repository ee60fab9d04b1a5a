"""Seed 001's couplings on the GPU beside the model: queue sizes, explicit traffic, time and GTEPS.

For each graph and coupling (`--kernels`, labels of `simdmodel.couplings`), a BFS from each of
`--sources` seeded sources is timed (`GpuCoupledBfs.time_bfs`: a warm-up, then the median of
`--repeats` back-to-back replays, each launch's output size over them) and counted (`--counts` runs
of the instrumented build: words per traffic category). Beside them the model's launches and their
predicted times (`opmachine.coupled.predict_coupled_bfs`, on the profile of the GPU that measured
them). A coupling whose queue overflows is recorded as such, with no time. Writes into DIR:

- launches.csv.gz: one row per launch (graph, kernel, source, level, phase, grid, input, output,
  time_ns, output_min/max; the first counted run's traffic; the model's output, traffic, time
  `predicted_ns` and bottleneck where its launch sequence is the measured one);
- traffic.csv: per (graph, kernel, source) words per category, measured (first counted run) and
  predicted, the explicit words, seed 001's formula, and the redundant expansion factor measured
  (median, min, max over the counted runs) and predicted;
- pooled/throughput.csv: per (graph, kernel, source) the BFS time, GTEPS (edges of the traversed
  component / time) and the physical bound (`validate.traversal_bounds`) with fraction_of_bound;
- pooled/time.csv: per (graph, kernel, source) the BFS time measured and predicted, the whole-BFS
  error and the per-level MAPE (`time_table`);
- summary.json: device, driver, date, command, per (graph, kernel) medians (GTEPS, redundant
  expansion, time error, per-level MAPE), redundant_expansion_max (measured, the default `atomic`
  lookup with both culling heuristics, the largest over graphs; per lookup mode in
  redundant_expansion_max_by_mode, null where a queue overflowed), and best_coupling_agreement: the
  share of graphs whose predicted best coupling (default lookup) is the measured best or within 5% of
  its time (`best_couplings`, listed per graph in best_couplings), and which build measured them
  (`bitmask_loads`: `--bitmask-loads l2` reads the atomic lookup's bitmask from the L2 only, not through
  the L1, the model the same for both; `bitmask_stores`: by default only the lane that claims a vertex sets
  its bit, `--bitmask-stores plain` has every lane that finds its bit unset store the byte, and the model
  follows either; a run recorded without the key measured the plain build; `spread`: false with
  `--no-spread`, whose launches of fewer CTAs than a full wave gather lists of up to BIG_LIST edges
  themselves, and for a run recorded without the key, made before such launches spread lists longer than a
  warp: `simdmodel.couplings.big_list`).

    python -m gpu_validate.coupling_validation SPEC [SPEC ...] [--kernels K,K] [--sources 3]
        [--repeats 5] [--counts 3] [--bitmask-loads l1|l2] [--bitmask-stores claim|plain] [--no-spread]
        [--out DIR]
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

from .modules import BITMASK_LOADS, BITMASK_STORES, DEFAULT_BUILD, recorded_build

KERNELS = ("expand-contract", "contract-expand", "two-phase", "hybrid")
KEYS = ["graph", "kernel", "source"]


def measure_graph(graph, labels, sources, profile, repeats: int, counts: int, bitmask_loads: str = DEFAULT_BUILD[0],
                  bitmask_stores: str = DEFAULT_BUILD[1], spread: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(timed launches, counted launches with a `run` column) of every coupling and source on `graph`, by the
    kernels' build that `bitmask_loads` and `bitmask_stores` name (`modules.BITMASK_LOADS`, `BITMASK_STORES`),
    small launches spreading their lists with `spread` (`GpuCoupledBfs`)."""
    from simdmodel.couplings import QueueOverflow, parse_coupling

    from .couplings import GpuCoupledBfs

    timed, counted = [], []
    for label in labels:
        coupling = parse_coupling(label)
        for instrumented in (False, True):
            gpu = GpuCoupledBfs(graph, coupling, profile, instrumented, bitmask_loads, bitmask_stores, spread)
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


def predict(measured: pd.DataFrame, graph, profile, progress: bool = False, claim: bool = True,
            spread: bool = True) -> pd.DataFrame:
    """The model's launches of every (kernel, source) of `measured` on `graph` with their predicted times
    (`opmachine.coupled.predict_coupled_bfs` on `profile`, of the claim build with `claim`, else the plain
    one, small launches spreading their lists with `spread`), with `kernel` and `source`; a row with phase
    `overflow` where a queue would overflow."""
    from opmachine.coupled import predict_coupled_bfs
    from simdmodel.couplings import QueueOverflow, parse_coupling

    out = []
    for (kernel, source), _ in measured.groupby(["kernel", "source"], sort=False):
        if progress:
            print(f"  predicting {kernel} from {source}", file=sys.stderr, flush=True)
        try:
            rows = predict_coupled_bfs(graph, int(source), parse_coupling(kernel), profile, claim, spread)
            out.append(rows.assign(kernel=kernel, source=int(source)))
        except QueueOverflow:
            out.append(pd.DataFrame([{"kernel": kernel, "source": int(source), "phase": "overflow"}]))
    return pd.concat(out, ignore_index=True).assign(graph=graph.name)


def _sequence(rows: pd.DataFrame) -> list:
    return list(zip(rows["level"], rows["phase"]))


def launch_table(timed, counted, predicted) -> pd.DataFrame:
    """Timed launches with the first counted run's traffic and the model's output, traffic, time and
    bottleneck beside them (`predicted_*`) where the launch sequences agree."""
    from simdmodel.couplings import TRAFFIC

    first = counted[counted["run"] == 0] if "run" in counted else counted
    groups = {"": dict(iter(first.groupby(KEYS, sort=False))), "predicted_": dict(iter(predicted.groupby(KEYS)))}
    tables = []
    for key, rows in timed.groupby(KEYS, sort=False):
        rows = rows.reset_index(drop=True)
        for prefix, by_key in groups.items():
            other = by_key.get(key, pd.DataFrame()).reset_index(drop=True)
            if len(other) == len(rows) and _sequence(other) == _sequence(rows) and "overflow" not in rows["phase"].values:
                columns = list(TRAFFIC) + ([] if not prefix else ["output", "bottleneck"])
                for column in columns:
                    rows[prefix + column] = other[column].to_numpy()
                if prefix:
                    rows["predicted_ns"] = other["predicted_ns"].to_numpy()
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


def time_table(launches: pd.DataFrame) -> pd.DataFrame:
    """Per (graph, kernel, source) whose launches the model predicted: the BFS's measured and predicted
    time (the launches' sums), the whole-BFS error, and the per-level MAPE (an iteration's launches summed:
    |predicted / measured - 1| averaged over the levels)."""
    done = launches[launches["phase"] != "overflow"]
    if "predicted_ns" not in done:
        return pd.DataFrame(columns=[*KEYS, "measured_ns", "predicted_ns", "error", "level_mape", "levels"])
    done = done[done.groupby(KEYS, sort=False)["predicted_ns"].transform(lambda v: v.notna().all())]
    levels = done.groupby([*KEYS, "level"], sort=False)[["time_ns", "predicted_ns"]].sum()
    levels["ape"] = (levels["predicted_ns"] / levels["time_ns"] - 1).abs()
    table = levels.groupby(level=[0, 1, 2], sort=False).agg(measured_ns=("time_ns", "sum"),
                                                            predicted_ns=("predicted_ns", "sum"),
                                                            level_mape=("ape", "mean"), levels=("ape", "size"))
    table["error"] = table["predicted_ns"] / table["measured_ns"] - 1
    return table.reset_index()[[*KEYS, "measured_ns", "predicted_ns", "error", "level_mape", "levels"]]


def best_couplings(times: pd.DataFrame, tolerance: float = 0.05) -> pd.DataFrame:
    """Per graph, among the couplings with the default lookup: the measured and the predicted best (median
    BFS time over sources), and whether the predicted best is the measured best or within `tolerance` of
    its time (seed 001 Fig. 10's question: which coupling to use)."""
    from simdmodel.couplings import DEFAULT_MODE, parse_coupling

    default = times[[parse_coupling(k).mode == DEFAULT_MODE for k in times["kernel"]]]
    rows = []
    for graph, group in default.groupby("graph", sort=False):
        medians = group.groupby("kernel", sort=False)[["measured_ns", "predicted_ns"]].median()
        if len(medians) < 2:
            continue
        measured, predicted = medians["measured_ns"].idxmin(), medians["predicted_ns"].idxmin()
        rows.append({"graph": graph, "measured_best": measured, "predicted_best": predicted,
                     "predicted_best_slower": float(medians.at[predicted, "measured_ns"]
                                                    / medians.at[measured, "measured_ns"] - 1),
                     "agree": bool(medians.at[predicted, "measured_ns"]
                                   <= (1 + tolerance) * medians.at[measured, "measured_ns"])})
    return pd.DataFrame(rows, columns=["graph", "measured_best", "predicted_best", "predicted_best_slower", "agree"])


def summarize(traffic: pd.DataFrame, throughput: pd.DataFrame, times: pd.DataFrame | None = None) -> dict:
    """Per (graph, kernel) medians (with the time model's whole-BFS error and per-level MAPE where `times`
    has them), the largest measured redundant expansion factors, and the best couplings' agreement."""
    from simdmodel.couplings import parse_coupling

    times = times if times is not None else time_table(pd.DataFrame(columns=[*KEYS, "phase", "level"]))

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
                    else float(rows["predicted_redundant"].median()), **_time_medians(times, graph, kernel)})
    by_mode: dict = {}
    for row in per:
        worst = None if row["overflow"] else row["redundant_measured_max"]
        mode = row["mode"]
        if mode not in by_mode or (by_mode[mode] is not None and (worst is None or worst > by_mode[mode])):
            by_mode[mode] = worst
    best = best_couplings(times)
    return {"rows": per, "redundant_expansion_max": by_mode.get("atomic"), "redundant_expansion_max_by_mode": by_mode,
            "best_coupling_agreement": float(best["agree"].mean()) if len(best) else None,
            "best_couplings": best.to_dict("records")}


def _time_medians(times: pd.DataFrame, graph: str, kernel: str) -> dict:
    """A (graph, kernel)'s median whole-BFS time error and per-level MAPE over its sources (None unpredicted)."""
    mine = times[(times["graph"] == graph) & (times["kernel"] == kernel)]
    if mine.empty:
        return {"time_error": None, "level_mape": None}
    return {"time_error": float(mine["error"].median()), "level_mape": float(mine["level_mape"].median())}


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
    parser.add_argument("--bitmask-loads", choices=BITMASK_LOADS, default=DEFAULT_BUILD[0],
                        help="the atomic lookup reads the bitmask through the L1 (default) or the L2 only")
    parser.add_argument("--bitmask-stores", choices=BITMASK_STORES, default=DEFAULT_BUILD[1],
                        help="only the lane that claims a vertex sets its bit, with an atomic OR (default), or every "
                        "lane that finds its bit unset stores the byte (seed 001's plain stores)")
    parser.add_argument("--no-spread", action="store_true",
                        help="launches of fewer CTAs than a full wave gather lists of up to 1024 edges themselves "
                        "(default: they leave lists longer than a warp to the pieces launch after them)")
    args = parser.parse_args(argv)
    import opmachine as om
    import simdmodel as sm
    from simdmodel.couplings import parse_coupling
    from simdmodel.errors import InputError

    from .device import GpuUnavailable, device_info, profile_for_device, recorded_run

    command = "python -m gpu_validate.coupling_validation " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        labels = [parse_coupling(k).label for k in args.kernels.split(",")]
        if args.measured:
            out = Path(args.measured)
            record, (timed, counted) = recorded_run(out, ["measured.csv.gz", "counted.csv.gz"], "a coupling", command,
                                                    {"profile": str})
            profile = om.load_profile(record["profile"])
        elif args.specs:
            info = device_info()
            profile = om.load_profile(profile_for_device(info))
            out = Path(args.out)
            timed, counted = [], []
            for graph in map(sm.load_graph, args.specs):
                sources = sm.pick_sources(graph, args.sources, 1)
                print(f"{graph.name}: sources {', '.join(map(str, sources))}", flush=True)
                t, c = measure_graph(graph, labels, sources, profile, args.repeats, args.counts, args.bitmask_loads,
                                     args.bitmask_stores, not args.no_spread)
                timed.append(t)
                counted.append(c)
            timed, counted = pd.concat(timed, ignore_index=True), pd.concat(counted, ignore_index=True)
            record = {"device": info["device"], "driver": info["driver"], "profile": profile.name,
                      "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"), "command": command,
                      "sources": args.sources, "repeats": args.repeats, "counts": args.counts,
                      "bitmask_loads": args.bitmask_loads, "bitmask_stores": args.bitmask_stores,
                      "spread": not args.no_spread}
        else:
            raise InputError("name graphs to measure, or --measured DIR")
        launches, traffic, throughput = [], [], []
        for name in timed["graph"].unique():
            graph = sm.load_graph(name)
            predicted = predict(counted[counted["graph"] == name], graph, profile, progress=True,
                                claim=recorded_build(record)[1] == "claim", spread=record.get("spread", False))
            launches.append(launch_table(timed[timed["graph"] == name], counted[counted["graph"] == name], predicted))
            traffic.append(traffic_table(counted[counted["graph"] == name], predicted, graph))
            throughput.append(throughput_table(timed[timed["graph"] == name], traffic[-1], graph, profile))
    except (GpuUnavailable, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    traffic, throughput = pd.concat(traffic, ignore_index=True), pd.concat(throughput, ignore_index=True)
    launches = pd.concat(launches, ignore_index=True)
    times = time_table(launches)
    record.pop("best_coupling_agreement_note", None)  # (a run recorded before the couplings had a time model)
    record.update(summarize(traffic, throughput, times))
    write(out, {"measured.csv.gz": timed, "counted.csv.gz": counted, "launches.csv.gz": launches,
                "traffic.csv": traffic, "pooled/throughput.csv": throughput, "pooled/time.csv": times}, record)
    print(pd.DataFrame(record["rows"]).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
