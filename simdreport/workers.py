"""Run calls in worker processes: each a `python -m simdreport.workers` that reads pickled calls on
stdin, one after another, and writes each pickled outcome on stdout (every message a length, then
the pickle).

Plain subprocesses and pipes, not `multiprocessing`: no shared semaphores, so a worker stopped by
Ctrl-C (it exits at once and quietly with status 130, as its parent reports the interrupt) or
killed by its parent leaves nothing behind for a resource tracker to warn about. A worker's stderr is its
parent's, so its progress lines show as they happen. A worker serves calls until its stdin closes:
starting one (interpreter, imports, numba's cached code) costs about a second, which a report of
many graphs would otherwise pay per graph.
"""
from __future__ import annotations

import ctypes
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from simdmodel.errors import InputError

_RUNNING: set[subprocess.Popen] = set()
_LENGTH = struct.Struct("<Q")
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)


def _send(stream, value) -> None:
    data = pickle.dumps(value)
    stream.write(_LENGTH.pack(len(data)) + data)
    stream.flush()


def _receive(stream):
    """The next message on `stream`, or None at its end."""
    head = stream.read(_LENGTH.size)
    if len(head) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return None
    return pickle.loads(data)


class WorkerPool:
    """Up to `jobs` worker processes, started as calls need them and each kept for the next call;
    `close` (or leaving the `with` block) ends them."""

    def __init__(self, jobs: int):
        self.jobs = max(1, jobs)
        self._idle: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._processes: list[subprocess.Popen] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _take(self) -> subprocess.Popen:
        with self._lock:
            if self._idle.empty() and len(self._processes) < self.jobs:
                process = subprocess.Popen([sys.executable, "-m", "simdreport.workers"], stdin=subprocess.PIPE,
                                           stdout=subprocess.PIPE)
                self._processes.append(process)
                _RUNNING.add(process)
                return process
        return self._idle.get()

    def call(self, function, *args):
        """`function(*args)` in a worker. An InputError there is raised here with its message; any other
        failure as a RuntimeError with the worker's last error line."""
        process = self._take()
        try:
            _send(process.stdin, (function, args))
            outcome = _receive(process.stdout)
        except (BrokenPipeError, OSError):
            outcome = None
        if outcome is None:  # the worker is gone: a fresh one takes its place
            process.kill()
            returncode = process.wait()
            with self._lock:
                self._processes.remove(process)
                _RUNNING.discard(process)
            raise RuntimeError(f"a worker process stopped with status {returncode}")
        self._idle.put(process)
        kind, value = outcome
        if kind == "input":
            raise InputError(value)
        if kind == "error":
            raise RuntimeError(f"a worker process failed: {value}")
        return value

    def close(self) -> None:
        with self._lock:
            processes, self._processes = self._processes, []
        for process in processes:
            try:
                process.stdin.close()
            except OSError:
                pass
        for process in processes:
            process.wait()
            process.stdout.close()
            _RUNNING.discard(process)


def run_calls(calls, jobs: int):
    """`[function(*args) for function, args in calls]`, `jobs` at a time, in a `WorkerPool` of `jobs`
    processes (closed at the end).

    `function` must be importable by name (module level). An InputError in a worker is raised
    here with its message; any other failure as a RuntimeError with the worker's last error line.
    """
    threads = ThreadPoolExecutor(max_workers=max(1, jobs))
    with WorkerPool(jobs) as pool:
        try:
            return [future.result() for future in [threads.submit(pool.call, function, *args)
                                                   for function, args in calls]]
        except BaseException:  # Ctrl-C or a failed call: the other workers stop now
            kill_workers()
            raise
        finally:
            threads.shutdown(wait=True, cancel_futures=True)


def kill_workers() -> None:
    """Kill every worker process still running (for an exit that skips `finally` blocks)."""
    for process in list(_RUNNING):
        if process.poll() is None:
            process.kill()


def keep_freed_memory() -> None:
    """Let glibc keep freed blocks below 1 GiB in the heap for the next call instead of returning them to
    the system: a simulation's job traces are hundreds of MB, and each fresh mapping is faulted in and
    zeroed again (about a tenth of a large graph's time). A worker lives for one command, so holding
    its peak until it exits costs nothing. A no-op where the C library is not glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 1 << 30)
        libc.mallopt(_M_TRIM_THRESHOLD, 1 << 31)
    except (OSError, AttributeError):
        pass


def _serve() -> int:
    """The worker: calls from stdin until it closes, each outcome ("ok", value), ("input", message) or
    ("error", text) to stdout. Ctrl-C ends it at once and quietly (status 130): the parent reports the
    interrupt, and a KeyboardInterrupt raised inside numba's boxing of a result can crash the interpreter."""
    signal.signal(signal.SIGINT, lambda signum, frame: os._exit(130))
    keep_freed_memory()
    channel = os.fdopen(os.dup(1), "wb")  # the outcomes' own pipe; whatever a call prints goes to stderr
    os.dup2(2, 1)
    while (call := _receive(sys.stdin.buffer)) is not None:
        function, args = call
        try:
            outcome = ("ok", function(*args))
        except InputError as error:
            outcome = ("input", str(error))
        except Exception as error:  # noqa: BLE001 (reported by the parent, which owns the terminal)
            outcome = ("error", f"{type(error).__name__}: {error}")
        _send(channel, outcome)
    return 0


if __name__ == "__main__":
    sys.exit(_serve())
