"""A sweep on the local Dask cluster, killed halfway and resumed, against the same tasks run one
after another in this process (the baseline, measured in the same run).

    PYTHONPATH=. .venv/bin/python bench/bench_sweep.py [--graphs SPEC;SPEC...] [--kernels K,...]
                                                      [--what-if KNOB=F ...] [--workers N]

Default: 6 generated graphs x 8 mappings (sm-1..sm-32, ws, scan) x the base h200 and 3 what-if
profiles (l2 x0.5, dram x0.5, sms x2), one source: 192 tasks. Steps: (1) every task serially here,
after a warm-up (numba compiled and cached); (2) `simdmodel sweep` in a subprocess, killed with
SIGKILL (process group) once half the tasks are written; (3) the same command again, which must
skip exactly the tasks the first run finished, leave their files untouched, and finish the rest.
Prints the times, the ratio of the sweep's wall time (both runs, cluster start-up included) to the
serial baseline, and checks that every task's predicted time (the sum of its levels' rows in the
Parquet dataset) equals the serial one bit for bit.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

GRAPHS = ["mesh6:side=200", "grid2d:side=200", "delaunay:n=40000", "rmat:scale=15,ef=8",
          "random:n=65536,m=524288", "kron:scale=15,ef=16"]
KERNELS = ["sm-1", "sm-2", "sm-4", "sm-8", "sm-16", "sm-32", "ws", "scan"]
WHAT_IFS = ["l2=0.5", "dram=0.5", "sms=2"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", default=";".join(GRAPHS), help="graph specs separated by ';'")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--what-if", action="append", default=None, dest="what_ifs")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    graphs = [spec for spec in args.graphs.split(";") if spec]
    what_ifs = args.what_ifs or WHAT_IFS

    from opmachine.profile.whatif import parse_what_if
    from simdreport.suites import suite_for
    from simdreport.sweep_plan import plan_sweep
    from simdreport.sweep_task import run_task

    plan = plan_sweep(suite_for(graphs), args.kernels.split(","), ["h200"], [parse_what_if(w) for w in what_ifs])
    total = len(plan.tasks)
    print(f"{len(graphs)} graphs x {len(plan.kernels)} kernels x {len(plan.profiles)} profiles "
          f"({', '.join(plan.profiles)}) = {total} tasks; {args.workers} local workers on {os.cpu_count()} CPUs")

    run_task(plan_sweep(suite_for(["rmat:scale=8"]), plan.kernels, ["h200"]).tasks[0])  # warm-up
    start = time.perf_counter()
    serial = {task.task_id: run_task(task)["predicted_ns"].sum() for task in plan.tasks}
    serial_s = time.perf_counter() - start
    print(f"serial, in this process: {serial_s:.1f} s ({total / serial_s:.2f} tasks/s)")

    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "sweep"
        command = [sys.executable, "-m", "simdreport", "sweep", *graphs, "--kernels", args.kernels,
                   *[part for w in what_ifs for part in ("--what-if", w)], "--gpu", "h200",
                   "--workers", str(args.workers), "--out", str(out)]
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   start_new_session=True)
        while _parts(out) < total // 2 and process.poll() is None:
            time.sleep(0.02)
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        first_s = time.perf_counter() - start
        kept = {p.name: p.stat().st_mtime_ns for p in (out / "levels").glob("part-*.parquet")}
        print(f"sweep, killed (SIGKILL) after {len(kept)} of {total} tasks: {first_s:.1f} s")

        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        second_s = time.perf_counter() - start
        counts = re.search(r"\((\d+) run now, (\d+) already there, (\d+) failed\)", done.stderr)
        print(f"sweep, run again: {second_s:.1f} s, exit {done.returncode}, "
              f"{counts.group(0) if counts else done.stderr.strip().splitlines()[-1:]}")
        after = {p.name: p.stat().st_mtime_ns for p in (out / "levels").glob("part-*.parquet")}
        untouched = all(after.get(name) == stamp for name, stamp in kept.items())
        resumed = counts is not None and int(counts.group(2)) == len(kept) and int(counts.group(1)) == total - len(kept)
        rows = pd.read_parquet(out / "levels")
        swept = {task_id: group["predicted_ns"].sum() for task_id, group in rows.groupby("task_id", sort=False)}
        equal = swept == serial
    sweep_s = first_s + second_s
    print(f"resumed without redoing finished tasks: {resumed and untouched} (files of finished tasks untouched: "
          f"{untouched}); predicted times equal to the serial run: {equal}")
    print(f"sweep wall time (both runs) / serial: {sweep_s / serial_s:.2f} ({sweep_s:.1f} s / {serial_s:.1f} s)")


def _parts(out: Path) -> int:
    levels = out / "levels"
    return len(list(levels.glob("part-*.parquet"))) if levels.is_dir() else 0


if __name__ == "__main__":
    main()
