"""Predicted versus measured time per BFS round on this CPU (seed 003 §5's evaluation, Table 1, Fig. 3).

Measures a CPU profile for this machine (or takes one), then for each graph runs the serial
topology-driven BFS of Listing 1 round by round (`opmachine.cpu.measure_cpu_rounds`) and predicts
every round with both cache models (`predict_cpu`, "setassoc" and "lru"). For each model it prints
the bottleneck-law prediction N * max_i V_i S_i and the MLP-1 serial bound sum_i C_i S_i against
the measurement: Pearson r over rounds, per-round MAPE, the worst round, the whole-BFS error (by
`gpu_validate.compare`'s definitions, the same as the GPU validation's).

    PYTHONPATH=. .venv/bin/python bench/validate_cpu.py
    PYTHONPATH=. .venv/bin/python bench/validate_cpu.py --profile my.toml rmat:scale=16,ef=16
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

DEFAULT_SPECS = ["rmat:scale=18,ef=16", "random:n=262144,m=2097152", "grid2d:side=700", "delaunay:n=65536"]
SWEEP_BYTES = [2**k for k in range(14, 27)]  # 16 KiB .. 64 MiB


KERNEL = "listing1"  # the serial topology-driven BFS, as a kernel name of gpu_validate.compare's tables
PREDICTIONS = [(model, kind) for model in ("setassoc", "lru") for kind in ("pred", "serial")]


def errors(table: pd.DataFrame, source: int) -> dict[tuple[str, str], dict]:
    """Per (model, kind): Pearson r over rounds, per-round MAPE, worst round's signed error, whole-BFS
    signed error, as `gpu_validate.compare` defines them for the GPU validation (one round = one launch)."""
    from gpu_validate.compare import round_times, time_errors

    keys = pd.DataFrame({"graph": table["graph"], "kernel": KERNEL, "source": source,
                         "level": table["level"], "phase": "round"})
    measured = keys.assign(time_ns=table["measured_ns"].to_numpy(dtype=float))
    predicted = pd.concat([keys.assign(mode=f"{model} {kind}",
                                       predicted_ns=table[f"{kind}_{model}_ns"].to_numpy(dtype=float))
                           for model, kind in PREDICTIONS], ignore_index=True)
    rounds = round_times(measured, predicted)
    stats = time_errors(rounds).set_index("mode")
    out = {}
    for model, kind in PREDICTIONS:
        row = stats.loc[f"{model} {kind}"]
        errors = rounds.loc[rounds["mode"] == f"{model} {kind}"].set_index("level")["error"]
        worst_round = int(errors.abs().idxmax()) + 1 if errors.notna().any() else 0  # round L+1 expands level L
        out[model, kind] = {"r": row["pearson_r"], "mape": row["mape"], "worst": row["worst_error"],
                            "worst_round": worst_round, "whole": row["bfs_time_error"]}
    return out


def get_profile(path: str | None):
    from opmachine import cpu_microbench
    from opmachine.profile import load_profile

    if path:
        return load_profile(path, kind="cpu")
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "this-cpu.toml"
        start = time.perf_counter()
        cpu_microbench.write_profile(target, "this-cpu", command="bench/validate_cpu.py (measured in the same run)")
        print(f"measured this CPU's profile in {time.perf_counter() - start:.1f} s")
        return load_profile(str(target), kind="cpu")


def print_profile(profile) -> None:
    print(f"profile {profile.name}: {profile.description}")
    for level in profile.levels:
        print(f"  {level.name}: {level.bytes:>10} B {level.ways:>3} ways  S = {level.service_ns:7.2f} ns")
    print(f"  memory:                      S = {profile.memory_ns:7.2f} ns   (line {profile.line_bytes} B)")


def print_sweep(line_bytes: int) -> None:
    from opmachine.cpu_microbench import latency_sweep

    print("pointer-chase latency by working set (ns per dependent load):")
    cells = [f"{size // 1024}K={ns:.1f}" for size, ns in latency_sweep(SWEEP_BYTES, line_bytes).items()]
    print("  " + "  ".join(cells))


def validate_graph(spec: str, profile, repeats: int, seed: int, show_rounds: int) -> pd.DataFrame:
    from opmachine.cpu import cpu_trace, measure_cpu_rounds, predict_cpu
    from simdmodel.frontier import bfs, pick_sources
    from simdmodel.load import load_graph

    graph = load_graph(spec)
    source = int(pick_sources(graph, 1, seed)[0])
    front = bfs(graph, source)
    start = time.perf_counter()
    measured = measure_cpu_rounds(graph, source, repeats=repeats)
    measure_s = time.perf_counter() - start
    start = time.perf_counter()
    trace = cpu_trace(graph, front, line_bytes=profile.line_bytes)
    predictions = {model: predict_cpu(graph, front, profile, model, trace=trace) for model in ("setassoc", "lru")}
    model_s = time.perf_counter() - start
    print(f"\n== {spec}: n={graph.n} m={graph.m} source={source} rounds={front.depth} "
          f"trace={trace.jobs} instructions ({trace.nbytes / 2**20:.0f} MiB); "
          f"measure {measure_s:.1f} s, model {model_s:.1f} s")

    table = measured.copy()
    table.insert(0, "graph", spec)
    base = predictions["setassoc"]
    table["jobs"] = base["jobs"]
    for column in ("c_l1", "c_l2", "c_l3", "c_mem"):
        table[f"{column}_setassoc"] = base[column]
    for model, frame in predictions.items():
        table[f"pred_{model}_ns"] = frame["predicted_ns"]
        table[f"serial_{model}_ns"] = frame["serial_ns"]
        table[f"bottleneck_{model}"] = frame["bottleneck"]

    shown = table
    if len(table) > show_rounds:
        keep = np.unique(np.linspace(0, len(table) - 1, show_rounds).round().astype(int))
        shown = table.iloc[keep]
        print(f"(showing {len(keep)} of {len(table)} rounds)")
    view = pd.DataFrame({
        "round": shown["round"],
        "jobs": shown["jobs"],
        "L1%": (100 * shown["c_l1_setassoc"] / shown["jobs"]).round(1),
        "L2%": (100 * shown["c_l2_setassoc"] / shown["jobs"]).round(1),
        "L3%": (100 * shown["c_l3_setassoc"] / shown["jobs"]).round(1),
        "MEM%": (100 * shown["c_mem_setassoc"] / shown["jobs"]).round(1),
        "measured_us": (shown["measured_ns"] / 1e3).round(1),
        "setassoc_us": (shown["pred_setassoc_ns"] / 1e3).round(1),
        "B_sa": shown["bottleneck_setassoc"],
        "serial_sa_us": (shown["serial_setassoc_ns"] / 1e3).round(1),
        "lru_us": (shown["pred_lru_ns"] / 1e3).round(1),
        "B_lru": shown["bottleneck_lru"],
        "serial_lru_us": (shown["serial_lru_ns"] / 1e3).round(1),
    })
    print(view.to_string(index=False))
    measured_ns = table["measured_ns"].to_numpy(dtype=float)
    print(f"whole BFS measured: {measured_ns.sum() / 1e6:.2f} ms")
    for (model, kind), e in errors(table, source).items():
        predicted = table[f"{kind}_{model}_ns"].to_numpy(dtype=float)
        label = f"{model} {'bottleneck' if kind == 'pred' else 'serial bound'}"
        print(f"  {label:<22} r={e['r']:6.3f}  MAPE={100 * e['mape']:7.1f}%  "
              f"worst={100 * e['worst']:+8.1f}% (round {e['worst_round']})  "
              f"whole BFS={100 * e['whole']:+7.1f}%  ({predicted.sum() / 1e6:.2f} ms)")
    return table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("specs", nargs="*", default=DEFAULT_SPECS, help="graph specs or files")
    parser.add_argument("--profile", help="CPU profile (.toml or shipped name); default: measure this CPU now")
    parser.add_argument("--repeats", type=int, default=5, help="timed BFS runs per graph (median per round)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the source choice")
    parser.add_argument("--rounds-shown", type=int, default=30, help="rounds printed per graph at most")
    parser.add_argument("--no-sweep", action="store_true", help="skip the latency-by-working-set sweep")
    parser.add_argument("--csv", help="write every round of every graph to this CSV file")
    args = parser.parse_args(argv)
    from opmachine.cpu import perf_support
    from simdmodel.atomic import check_target, write_text
    from simdmodel.errors import InputError

    try:
        if args.csv:
            check_target(args.csv)
        profile = get_profile(args.profile)
        print_profile(profile)
        if not args.no_sweep:
            print_sweep(profile.line_bytes)
        supported, reason = perf_support()
        print(f"perf cache counters: {'yes' if supported else 'no'} ({reason})")
        tables = [validate_graph(spec, profile, args.repeats, args.seed, args.rounds_shown) for spec in args.specs]
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.csv:
        write_text(args.csv, pd.concat(tables, ignore_index=True).to_csv(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
