"""`simdmodel sweep`: predicted BFS time over graphs x kernels x sources x GPU profiles, what-if
profiles included, run as Dask tasks.

`run_sweep(plan, out)` sends every task of a `SweepPlan` (`sweep_plan.plan_sweep`) that the output
folder does not already hold to Dask workers: a local cluster of this machine's cores by default
(one single-threaded worker process per core), or an existing cluster at `scheduler`, whose
workers must have this package installed and see the graph files at the same paths. Each result
is written as soon as it arrives (`sweep_store.SweepStore`), so a sweep killed halfway resumes
where it stopped; a failed task is recorded with its inputs and the others go on. At the end the
whole-BFS table, the figures and `sweep.json` describe every task of the plan.

    from simdreport.sweep import run_sweep
    from simdreport.sweep_plan import plan_sweep
    from simdreport.suites import suite_for
    plan = plan_sweep(suite_for(["rmat:scale=16,ef=16"]), ["sm-8", "ws"], ["h200"], [("l2", (0.5, 2.0))])
    outcome = run_sweep(plan, "sweep")      # outcome.whole: one row per task
"""
from __future__ import annotations

import contextlib
import datetime
import logging
import os
import time
import warnings
from dataclasses import dataclass, field

import pandas as pd

from simdmodel.errors import DataWarning, InputError

from .interrupt import check_interrupted
from .sweep_figure import sweep_figures
from .sweep_plan import SweepPlan, SweepTask
from .sweep_store import SweepStore
from .sweep_table import fastest_table, whole_bfs


@dataclass(frozen=True)
class SweepOutcome:
    """What a run of a sweep did: tasks run now, found done by an earlier run, failed (with their
    error lines), the whole-BFS table of every finished task of the plan, and the seconds it took."""

    ran: int
    skipped: int
    failed: tuple[tuple[SweepTask, str], ...]
    whole: pd.DataFrame = field(repr=False)
    figures: tuple[str, ...]
    seconds: float


def run_sweep(plan: SweepPlan, out, *, scheduler: str | None = None, workers: int | None = None,
              progress: bool = False, line=None, command: str = "") -> SweepOutcome:
    """Run the tasks of `plan` not yet in `out` on Dask and write the results (module docstring).

    `workers`: local worker processes (default: the CPU count, at most one per task); not with
    `scheduler`, an existing cluster's address. `progress` shows a bar; `line(message)`, when
    given, gets a progress line every few seconds instead.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise InputError(f"--workers must be at least 1, got {workers!r}")
    if scheduler is not None and workers is not None:
        raise InputError("--workers sizes the local cluster; an existing cluster (--scheduler) has its own")
    from gpu_validate.provenance import code_version

    started = time.perf_counter()
    store = SweepStore(out)
    version = code_version()
    todo = [task for task in plan.tasks if not store.done(task)]
    skipped = len(plan.tasks) - len(todo)
    failed: list[tuple[SweepTask, str]] = []
    written: dict = {}
    if todo:
        with _client(scheduler, workers or min(os.cpu_count() or 1, len(todo))) as client:
            _run_tasks(client, todo, store, failed, written, _Progress(len(plan.tasks), skipped, progress, line),
                       version)
        check_interrupted()  # one that closing the cluster's garbage dropped
    whole = whole_bfs(store.rows(plan.tasks, written))
    _warn_of_older_code(whole, version, out)
    figures = sweep_figures(whole)
    seconds = time.perf_counter() - started
    ran = len(todo) - len(failed)
    store.finish({"whole_bfs": whole, "fastest": fastest_table(whole)}, figures,
                 _record(plan, command, version, ran, skipped, failed, seconds))
    return SweepOutcome(ran, skipped, tuple(failed), whole, tuple(sorted(figures)), seconds)


@contextlib.contextmanager
def _client(scheduler: str | None, workers: int):
    """A Dask client of the cluster at `scheduler`, or of a new local cluster of `workers` processes."""
    import signal

    import dask
    from distributed import Client, LocalCluster

    from .interrupt import answering

    if scheduler is not None:
        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, TimeoutError, ValueError) as error:
            raise InputError(f"--scheduler {scheduler}: cannot connect to a Dask scheduler there ({error})") from None
        with client:
            yield client
        return
    # Dask sets MALLOC_TRIM_THRESHOLD_ in its workers, which turns off glibc's dynamic mmap
    # threshold: every array over 64 KiB is then mapped and unmapped afresh, and page faults
    # took a large share of a sweep's time. Keep glibc's default.
    glibc_default = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}
    # Ctrl-C at a terminal signals the whole process group: the workers ignore it (they inherit the
    # handler they start with) and this process answers it by closing the cluster
    with answering(signal.SIG_IGN), dask.config.set(glibc_default):
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.CRITICAL)
    with cluster, Client(cluster) as client:
        yield client


def _run_tasks(client, todo, store: SweepStore, failed: list, written: dict, progress: _Progress,
               version: str) -> None:
    """Submit `todo` as groups that share one simulation (`sweep_task.group_key`; graph-major, as
    planned), keep each task's result (also in `written`) or failure as its group's arrives."""
    from distributed import as_completed

    from .sweep_task import group_key, run_group

    groups: dict = {}
    for task in todo:
        groups.setdefault(group_key(task), []).append(task)
    futures = {client.submit(run_group, group, version, key=f"simdmodel-sweep-{group[0].task_id}-{len(group)}",
                             pure=False): group
               for group in groups.values()}
    try:
        for future in as_completed(futures):
            group = futures[future]
            if future.status == "error":
                message = _error_line(future.exception())
                for task in group:
                    store.fail(task, message)
                    failed.append((task, message))
            else:
                rows = future.result()
                for task in group:
                    store.write(task, rows[task.task_id])
                written.update(rows)
            future.release()
            for task in group:
                progress.done(task)
            check_interrupted()
    finally:
        progress.close()
        for future in futures:
            if not future.done():
                future.cancel()


def _warn_of_older_code(whole: pd.DataFrame, version: str, out) -> None:
    """A DataWarning when rows of the plan's tasks were computed by another code version: the
    task id holds the inputs, not the code, so a rerun after a model change would mix them."""
    older = whole.loc[whole["code_version"] != version, "code_version"] if not whole.empty else whole
    if len(older):
        warnings.warn(DataWarning(f"{len(older)} of the {len(whole)} tasks in {out} were computed by code version "
                                  f"{older.iloc[0]}, not this one ({version}); remove the folder to compute them "
                                  "again"), stacklevel=2)


def _error_line(error: BaseException) -> str:
    """One line for a task's failure: an InputError's message, else the exception's type and text."""
    if isinstance(error, InputError):
        return str(error)
    if type(error).__name__ == "KilledWorker":
        return "the worker running it died (out of memory, or killed)"
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": ")


class _Progress:
    """A tqdm bar, or a progress line at most every 5 seconds (and at the end), or nothing."""

    def __init__(self, total: int, initial: int, bar: bool, line):
        self.total, self.count, self.line = total, initial, line
        self.last = time.monotonic()
        self.bar = None
        if bar:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, initial=initial, unit="task", desc="sweep", leave=False)

    def done(self, task: SweepTask) -> None:
        self.count += 1
        if self.bar is not None:
            self.bar.update(1)
        elif self.line is not None and (time.monotonic() - self.last >= 5 or self.count == self.total):
            self.last = time.monotonic()
            self.line(f"sweep: {self.count}/{self.total} tasks done (last: {task.describe()})")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _record(plan: SweepPlan, command: str, version: str, ran: int, skipped: int, failed, seconds: float) -> dict:
    return {"command": command, "code_version": version,
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            **plan.settings(), "ran": ran, "skipped": skipped, "failed": [task.task_id for task, _ in failed],
            "seconds": round(seconds, 1)}
