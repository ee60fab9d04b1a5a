"""Speed of `simdmodel report`, as ratios against the plain BFS of the same graphs measured in the same run.

Baseline: for every graph of the suite, the plain numba BFS (`bfs_queue`) from each of the report's
K sources, loading excluded. Then the whole report as the command makes it (`build_report` with the
command's default `--jobs`: graphs gathered at once in worker processes, into a temporary folder) and,
graph by graph in this process, what gathering its numbers costs (`collect_graph`: generation,
graph_info, lane accounting over K sources, every candidate kernel predicted for the ranking, and the
comparison with measurements where they exist), with the user and system seconds and the page faults
(minor: fresh memory touched) that it cost this process. Goal (issue 19): the default report in at most 30 s
warm on two cores. Numba compiles before timing starts (a tiny report first), so the times are warm.

    python bench/bench_report.py                       # the built-in suite
    python bench/bench_report.py rmat:scale=18,ef=16   # any specs
"""
from __future__ import annotations

import resource
import sys
import tempfile
import time
from pathlib import Path


def _cpu_s() -> float:
    """User and system seconds of this process and of its finished child processes."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _own_usage() -> tuple[float, float, int]:
    """User seconds, system seconds and page faults (minor) of this process so far."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime, own.ru_stime, own.ru_minflt


def warm_up(folder: Path) -> None:
    from simdreport import build_report

    build_report(["rmat:scale=7,ef=4", "grid2d:side=8"], sources=2, out=folder / "warm")


def bfs_baseline_s(suite, sources: int) -> dict[str, float]:
    """Plain BFS time per graph, summed over the report's sources (best of three)."""
    import simdmodel as sm
    from simdmodel.frontier import bfs_queue

    out = {}
    for graph in suite:
        loaded = sm.load_graph(graph.spec)
        chosen = [int(s) for s in sm.pick_sources(loaded, sources, 1)]
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for source in chosen:
                bfs_queue(loaded.indptr, loaded.indices, source)
            best = min(best, time.perf_counter() - start)
        out[graph.label] = best
    return out


def main(specs: list[str]) -> None:
    import opmachine as om
    from simdreport import DEFAULT_SOURCES, L2_MODEL, build_report, collect_graph, committed_runs, default_gpu
    from simdreport.arguments import REPORT_JOBS
    from simdreport.suites import suite_for

    suite = suite_for(specs)
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        folder = Path(tmp)
        warm_up(folder)
        baseline = bfs_baseline_s(suite, DEFAULT_SOURCES)
        start, before = time.perf_counter(), _cpu_s()
        report = build_report(specs or None, out=folder / "report", jobs=REPORT_JOBS)
        whole_s, whole_cpu_s = time.perf_counter() - start, _cpu_s() - before
        profile = om.load_profile(default_gpu().profile)
        runs = committed_runs()
        print(f"{'graph':<12} {'n':>10} {'m':>12} {'depth':>7} {'BFS x K s':>10} {'collect s':>10} "
              f"{'collect/BFS':>11} {'user s':>7} {'sys s':>6} {'faults':>10} {'measured':>9}")
        collect_total = 0.0
        for graph in suite:
            start, before = time.perf_counter(), _own_usage()
            data = collect_graph(graph, profile, DEFAULT_SOURCES, l2_model=L2_MODEL, runs=runs)
            seconds = time.perf_counter() - start
            user, system, faults = (after - then for after, then in zip(_own_usage(), before))
            collect_total += seconds
            print(f"{graph.label:<12} {data.n:>10,} {data.m:>12,} {data.info['avg_depth']:>7.1f} "
                  f"{baseline[graph.label]:>10.3f} {seconds:>10.2f} {seconds / baseline[graph.label]:>11.0f} "
                  f"{user:>7.1f} {system:>6.1f} {faults:>10,} {'yes' if data.measured is not None else 'no':>9}",
                  flush=True)
    bfs_total = sum(baseline.values())
    figures = sum(len(items) for items in report.figures.values())
    print(f"\nwhole report ({REPORT_JOBS} jobs, as the command runs it): {whole_s:.1f} s for {len(suite)} graphs and "
          f"{figures} figures ({whole_s / bfs_total:.0f}x the plain BFS of all graphs from {DEFAULT_SOURCES} sources, "
          f"{bfs_total:.2f} s); gathering the numbers one graph at a time {collect_total:.1f} s.")
    print(f"CPU time of the whole report (this process and its workers, user + system): {whole_cpu_s:.1f} s, "
          f"{whole_cpu_s / bfs_total:.0f}x the plain BFS; on a shared machine it varies less than the wall time.")
    print("goal: the default report in at most 30 s warm on two cores; ratios are against the plain BFS in this run.")


if __name__ == "__main__":
    main(sys.argv[1:])
