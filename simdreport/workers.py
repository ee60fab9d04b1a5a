"""Run calls in worker processes: each a fresh `python -m simdreport.workers` that reads one pickled
call on stdin and writes its pickled outcome on stdout.

Plain subprocesses and pipes, not `multiprocessing`: no shared semaphores, so a worker stopped by
Ctrl-C (it exits at once and quietly with status 130, as its parent reports the interrupt) or
killed by its parent leaves nothing behind for a resource tracker to warn about. A worker's stderr is its
parent's, so its progress lines show as they happen.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from simdmodel.errors import InputError

_RUNNING: set[subprocess.Popen] = set()


def run_calls(calls, jobs: int):
    """`[function(*args) for function, args in calls]`, `jobs` at a time, in worker processes.

    `function` must be importable by name (module level). An InputError in a worker is raised
    here with its message; any other failure as a RuntimeError with the worker's last error line.
    """
    def one(call):
        process = subprocess.Popen([sys.executable, "-m", "simdreport.workers"], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE)
        _RUNNING.add(process)
        try:
            out, _ = process.communicate(pickle.dumps(call))
        finally:
            _RUNNING.discard(process)
        if process.returncode != 0 or not out:
            raise RuntimeError(f"a worker process stopped with status {process.returncode}")
        kind, value = pickle.loads(out)
        if kind == "input":
            raise InputError(value)
        if kind == "error":
            raise RuntimeError(f"a worker process failed: {value}")
        return value

    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        return [future.result() for future in [pool.submit(one, call) for call in calls]]
    except BaseException:  # Ctrl-C or a failed call: the other workers stop now
        kill_workers()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def kill_workers() -> None:
    """Kill every worker process still running (for an exit that skips `finally` blocks)."""
    for process in list(_RUNNING):
        if process.poll() is None:
            process.kill()


def _serve() -> int:
    """The worker: one call from stdin, its outcome ("ok", value), ("input", message) or ("error", text) to stdout.
    Ctrl-C ends it at once and quietly (status 130): the parent reports the interrupt, and a
    KeyboardInterrupt raised inside numba's boxing of a result can crash the interpreter."""
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    function, args = pickle.loads(sys.stdin.buffer.read())
    try:
        outcome = ("ok", function(*args))
    except InputError as error:
        outcome = ("input", str(error))
    except Exception as error:  # noqa: BLE001 (reported by the parent, which owns the terminal)
        outcome = ("error", f"{type(error).__name__}: {error}")
    sys.stdout.buffer.write(pickle.dumps(outcome))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
