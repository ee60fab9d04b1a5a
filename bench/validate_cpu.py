"""Predicted versus measured time per BFS round on this CPU (seed 003 §5's evaluation, Table 1, Fig. 3).

Measures a CPU profile for this machine (or takes one), then for each graph runs the serial
topology-driven BFS of Listing 1 round by round (`opmachine.cpu.measure_cpu_rounds`: a warm-up run,
then repeated runs, median per round) and predicts every round (`predict_cpu`, set-associative
caches warm from the previous run, as the repeated runs find them). It prints, against the
measurement, the default prediction (the loop's measured costs, `LoopCosts`), the bottleneck law at
MLP 1 of seed 003 §5 (N * max_i V_i S_i) and the MLP-1 serial bound (sum_i C_i S_i): whole-BFS error,
per-round MAPE, Pearson r over the rounds with more than 1 ms of work and the worst round, by
`gpu_validate.compare`'s definitions (the same as the GPU validation's).

    PYTHONPATH=. .venv/bin/python bench/validate_cpu.py
    PYTHONPATH=. .venv/bin/python bench/validate_cpu.py --json
    PYTHONPATH=. .venv/bin/python bench/validate_cpu.py --profile my.toml rmat:scale=16,ef=16

Each graph is also run with the multi-threaded Listing 1 on all of numba's threads and compared with
`predict_cpu_threads`, and, where this machine counts cache events, counted round by round for
counters mode (`predict_cpu_counted`: the simulated misses against the measured, and the prediction
from the measured counts); where it does not, one line says so and the simulated counts stand.

`--json` prints one JSON object, {"graphs": [{"graph", "whole", "mape", "r", ..., "threads": {...}},
...], "pooled_mape", "pooled_r_long", ...}, for the default prediction (whole = signed whole-BFS
error, mape = per-round MAPE, r_long = Pearson r over the rounds measured longer than 1 ms;
"threads": the same for the multi-threaded kernel), and nothing else on stdout.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

# The six kinds of the GPU validation suite, at sizes whose serial BFS runs in well under a second.
DEFAULT_SPECS = ["rmat:scale=18,ef=16", "kron:scale=17,ef=16", "random:n=262144,m=2097152", "grid2d:side=300",
                 "mesh6:side=300", "delaunay:n=65536"]
SWEEP_BYTES = [2**k for k in range(14, 27)]  # 16 KiB .. 64 MiB
LONG_ROUND_NS = 1e6  # Pearson r is taken over the rounds measured longer than this


KERNEL = "listing1"  # the serial topology-driven BFS, as a kernel name of gpu_validate.compare's tables
PREDICTIONS = {"loop": "loop costs (default)", "mlp1": "bottleneck law, MLP 1", "serial": "serial bound, MLP 1"}


def errors(table: pd.DataFrame, source: int) -> dict[str, dict]:
    """Per prediction: whole-BFS signed error, per-round MAPE, worst round's signed error (and which),
    Pearson r over all rounds and over the rounds longer than `LONG_ROUND_NS`, as `gpu_validate.compare`
    defines them for the GPU validation (one round = one launch)."""
    from gpu_validate.compare import round_times, time_errors

    keys = pd.DataFrame({"graph": table["graph"], "kernel": KERNEL, "source": source,
                         "level": table["level"], "phase": "round"})
    measured = keys.assign(time_ns=table["measured_ns"].to_numpy(dtype=float))
    predicted = pd.concat([keys.assign(mode=name, predicted_ns=table[f"{name}_ns"].to_numpy(dtype=float))
                           for name in PREDICTIONS], ignore_index=True)
    rounds = round_times(measured, predicted)
    stats = time_errors(rounds).set_index("mode")
    long = table["measured_ns"].to_numpy(dtype=float) > LONG_ROUND_NS
    out = {}
    for name in PREDICTIONS:
        row = stats.loc[name]
        errors = rounds.loc[rounds["mode"] == name].set_index("level")["error"]
        worst_round = int(errors.abs().idxmax()) + 1 if errors.notna().any() else 0  # round L+1 expands level L
        out[name] = {"whole": row["bfs_time_error"], "mape": row["mape"], "r": row["pearson_r"],
                     "r_long": _pearson(table.loc[long, f"{name}_ns"], table.loc[long, "measured_ns"]),
                     "long_rounds": int(long.sum()), "worst": row["worst_error"], "worst_round": worst_round}
    return out


def _pearson(a, b) -> float | None:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 3 or a.std() == 0 or b.std() == 0:
        return None
    return float(np.corrcoef(a, b)[0, 1])


def get_profile(path: str | None):
    from opmachine import cpu_microbench
    from opmachine.profile import load_profile

    if path:
        return load_profile(path, kind="cpu")
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "this-cpu.toml"
        start = time.perf_counter()
        cpu_microbench.write_profile(target, "this-cpu", command="bench/validate_cpu.py (measured in the same run)")
        print(f"measured this CPU's profile in {time.perf_counter() - start:.1f} s (python -m opmachine.cpu_microbench)")
        return load_profile(str(target), kind="cpu")


def print_profile(profile) -> None:
    print(f"profile {profile.name}: {profile.description}")
    for level in profile.levels:
        print(f"  {level.name}: {level.bytes:>10} B {level.ways:>3} ways  S = {level.service_ns:7.2f} ns")
    print(f"  memory:                      S = {profile.memory_ns:7.2f} ns   (line {profile.line_bytes} B)")
    mlp = profile.achieved_mlp()
    if mlp is not None:
        print("  achieved MLP (latency / ns per load of up to "
              f"{profile.chains[-1]} independent chases): " + ", ".join(f"{name} {value:.1f}" for name, value in mlp.items()))
    loop = profile.loop
    if loop is not None:
        gather = " / ".join(f"{value:.2f}" for value in loop.gather_ns)
        print(f"  loop costs (ns): call {loop.call_ns:.0f}, scan {loop.scan_ns:.3f}/node, vertex {loop.vertex_ns:.3f}, "
              f"branch miss {loop.branch_ns:.2f}, gather L1/L2/L3/MEM {gather}, store {loop.store_ns:.3f}, "
              f"store branch miss {loop.store_branch_ns:.2f}")


def print_sweep(line_bytes: int) -> None:
    from opmachine.cpu_microbench import latency_sweep

    print("pointer-chase latency by working set (ns per dependent load):")
    cells = [f"{size // 1024}K={ns:.1f}" for size, ns in latency_sweep(SWEEP_BYTES, line_bytes).items()]
    print("  " + "  ".join(cells))


def validate_graph(spec: str, profile, repeats: int, seed: int, show_rounds: int) -> tuple[pd.DataFrame, dict]:
    """Measure and predict every round of one graph; print the rounds and the errors; return both."""
    from opmachine.cpu import cpu_trace, measure_cpu_rounds, predict_cpu
    from simdmodel.frontier import bfs, pick_sources
    from simdmodel.load import load_graph

    if profile.loop is None:
        raise SystemExit(f"error: profile {profile.name!r} has no [loop] costs; measure one "
                         f"(python -m opmachine.cpu_microbench --out FILE) or leave --profile out")
    graph = load_graph(spec)
    source = int(pick_sources(graph, 1, seed)[0])
    front = bfs(graph, source)
    start = time.perf_counter()
    measured = measure_cpu_rounds(graph, source, repeats=repeats)
    measure_s = time.perf_counter() - start
    start = time.perf_counter()
    trace = cpu_trace(graph, front, line_bytes=profile.line_bytes)
    loop = predict_cpu(graph, front, profile, trace=trace, warm=True)
    model_s = time.perf_counter() - start
    print(f"\n== {spec}: n={graph.n} m={graph.m} source={source} rounds={front.depth} "
          f"trace={trace.jobs} instructions ({trace.nbytes / 2**20:.0f} MiB); "
          f"measure {measure_s:.1f} s, model {model_s:.1f} s")

    table = measured.copy()
    table.insert(0, "graph", spec)
    for column in ("jobs", "c_l1", "c_l2", "c_l3", "c_mem", "frontier", "edges", "stores", "frontier_switches",
                   "exit_switches", "store_switches", "core_ns", "l1_ns", "l2_ns", "l3_ns", "mem_ns", "bottleneck"):
        table[column] = loop[column]
    table["loop_ns"] = loop["predicted_ns"]
    # seed 003's bottleneck law at MLP 1 from the same completions: max_i C_i S_i
    completions = loop[["c_l1", "c_l2", "c_l3", "c_mem"]].to_numpy(dtype=float)
    table["mlp1_ns"] = (completions * np.array(list(loop.attrs["service_ns"].values()))).max(axis=1)
    table["serial_ns"] = loop["serial_ns"]

    shown = table
    if len(table) > show_rounds:
        keep = np.unique(np.linspace(0, len(table) - 1, show_rounds).round().astype(int))
        shown = table.iloc[keep]
        print(f"(showing {len(keep)} of {len(table)} rounds)")
    view = pd.DataFrame({
        "round": shown["round"], "frontier": shown["frontier"], "edges": shown["edges"],
        "L1%": (100 * shown["c_l1"] / shown["jobs"]).round(1), "L2%": (100 * shown["c_l2"] / shown["jobs"]).round(1),
        "L3%": (100 * shown["c_l3"] / shown["jobs"]).round(1), "MEM%": (100 * shown["c_mem"] / shown["jobs"]).round(1),
        "measured_us": (shown["measured_ns"] / 1e3).round(1), "loop_us": (shown["loop_ns"] / 1e3).round(1),
        "bottleneck": shown["bottleneck"], "core%": (100 * shown["core_ns"] / shown["loop_ns"]).round(0),
        "mlp1_us": (shown["mlp1_ns"] / 1e3).round(1), "serial_us": (shown["serial_ns"] / 1e3).round(1),
    })
    print(view.to_string(index=False))
    measured_ns = table["measured_ns"].to_numpy(dtype=float)
    print(f"whole BFS measured: {measured_ns.sum() / 1e6:.2f} ms")
    found = errors(table, source)
    for name, label in PREDICTIONS.items():
        e = found[name]
        r_long = "   n/a" if e["r_long"] is None else f"{e['r_long']:6.3f}"
        print(f"  {label:<22} whole BFS={100 * e['whole']:+7.1f}%  MAPE={100 * e['mape']:7.1f}%  "
              f"r={e['r']:6.3f}  r(>1 ms, {e['long_rounds']} rounds)={r_long}  "
              f"worst={100 * e['worst']:+8.1f}% (round {e['worst_round']})  ({table[f'{name}_ns'].sum() / 1e6:.2f} ms)")
    found["threads"] = validate_threads(graph, source, front, profile, repeats)
    found["counters"] = validate_counters(graph, source, front, profile, measured_ns)
    return table, found


def validate_counters(graph, source: int, front, profile, measured_ns: np.ndarray) -> dict | None:
    """Counters mode: the round's cache counts measured by this process's counters in place of the
    simulated ones; the simulated misses' whole-BFS error and the prediction's errors. None (said
    once) where the machine does not count cache events."""
    from opmachine.cpu import CountersUnavailable, measure_cpu_counters, miss_errors, predict_cpu_counted

    try:
        counts = measure_cpu_counters(graph, source)
    except CountersUnavailable as error:
        if not COUNTERS_REFUSED:
            print(f"  counters mode: no ({error}); the predictions above use the simulated cache counts")
            COUNTERS_REFUSED.append(str(error))
        return None
    table = predict_cpu_counted(graph, front, profile, counts)
    counted = table["predicted_ns"].to_numpy(dtype=float)
    misses = miss_errors(table)
    error = (counted - measured_ns) / measured_ns
    out = {"l1_miss_error": misses["l1_misses"], "llc_miss_error": misses["llc_misses"],
           "whole": float(counted.sum() / measured_ns.sum() - 1), "mape": float(np.abs(error).mean())}
    print(f"  counters mode: simulated L1 load misses {100 * out['l1_miss_error']:+.1f}%, LLC load misses "
          f"{100 * out['llc_miss_error']:+.1f}% of the measured; prediction from measured counts: whole BFS="
          f"{100 * out['whole']:+7.1f}%  MAPE={100 * out['mape']:7.1f}%")
    return out


COUNTERS_REFUSED: list[str] = []  # why the machine's cache counters could not be opened, once known


def validate_threads(graph, source: int, front, profile, repeats: int) -> dict:
    """The multi-threaded Listing 1 on all of numba's threads: measured and predicted per round; the
    whole-BFS error and per-round MAPE, printed and returned."""
    import numba

    from opmachine.cpu import measure_cpu_rounds, predict_cpu_threads

    threads = numba.get_num_threads()
    measured = measure_cpu_rounds(graph, source, repeats=repeats, threads=threads)["measured_ns"].to_numpy(dtype=float)
    predicted = predict_cpu_threads(graph, front, profile, threads, warm=True)["predicted_ns"].to_numpy(dtype=float)
    error = (predicted - measured) / measured
    out = {"threads": threads, "whole": float(predicted.sum() / measured.sum() - 1), "mape": float(np.abs(error).mean()),
           "measured_ms": float(measured.sum() / 1e6), "predicted_ms": float(predicted.sum() / 1e6)}
    print(f"  {threads} threads (multi-threaded Listing 1): measured {out['measured_ms']:.2f} ms, predicted "
          f"{out['predicted_ms']:.2f} ms, whole BFS={100 * out['whole']:+7.1f}%  MAPE={100 * np.abs(error).mean():7.1f}%")
    return out


def summary(results: list[tuple[str, dict]], tables: list[pd.DataFrame]) -> dict:
    """The `--json` object: per graph the default prediction's errors; pooled per-round MAPE."""
    graphs = [{"graph": spec, **{key: _plain(value) for key, value in found["loop"].items()},
               "threads": {key: _plain(value) for key, value in found["threads"].items()},
               "counters": None if found["counters"] is None else
               {key: _plain(value) for key, value in found["counters"].items()}}
              for spec, found in results]
    pooled = pd.concat(tables, ignore_index=True)
    error = (pooled["loop_ns"] - pooled["measured_ns"]) / pooled["measured_ns"]
    long = pooled["measured_ns"] > LONG_ROUND_NS
    return {"model": "loop costs, set-associative caches, warm", "graphs": graphs,
            "counters_unavailable": COUNTERS_REFUSED[0] if COUNTERS_REFUSED else None,
            "pooled_mape": float(error.abs().mean()), "long_rounds": int(long.sum()),
            "pooled_r_long": _pearson(pooled.loc[long, "loop_ns"], pooled.loc[long, "measured_ns"]),
            "command": "PYTHONPATH=. .venv/bin/python bench/validate_cpu.py " + " ".join(sys.argv[1:])}


def _plain(value):
    return None if value is None or (isinstance(value, float) and not np.isfinite(value)) else \
        (int(value) if isinstance(value, (int, np.integer)) else float(value))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*", default=DEFAULT_SPECS, help="graph specs or files")
    parser.add_argument("--profile", help="CPU profile (.toml or shipped name) with [loop] costs; "
                                          "default: measure this CPU now")
    parser.add_argument("--repeats", type=int, default=5, help="timed BFS runs per graph (median per round)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the source choice")
    parser.add_argument("--rounds-shown", type=int, default=30, help="rounds printed per graph at most")
    parser.add_argument("--no-sweep", action="store_true", help="skip the latency-by-working-set sweep")
    parser.add_argument("--csv", help="write every round of every graph to this CSV file")
    parser.add_argument("--json", action="store_true", help="print only the JSON summary on stdout")
    args = parser.parse_args(argv)
    from opmachine.cpu import perf_support
    from simdmodel.atomic import check_target, write_text
    from simdmodel.errors import InputError

    report = contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext()
    try:
        with report:
            if args.csv:
                check_target(args.csv)
            profile = get_profile(args.profile)
            print_profile(profile)
            if not args.no_sweep:
                print_sweep(profile.line_bytes)
            supported, reason = perf_support()
            print(f"perf cache counters: {'yes' if supported else 'no'} ({reason})")
            results = [validate_graph(spec, profile, args.repeats, args.seed, args.rounds_shown)
                       for spec in args.specs]
            tables = [table for table, _ in results]
            found = summary([(spec, errors) for spec, (_, errors) in zip(args.specs, results, strict=True)], tables)
            r_long = found["pooled_r_long"]
            print(f"\ndefault prediction, all graphs: per-round MAPE {100 * found['pooled_mape']:.1f}%, Pearson r over "
                  f"the {found['long_rounds']} rounds longer than 1 ms "
                  f"{'n/a' if r_long is None else format(r_long, '.3f')}")
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.csv:
        write_text(args.csv, pd.concat(tables, ignore_index=True).to_csv(index=False))
    if args.json:
        print(json.dumps(found, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
