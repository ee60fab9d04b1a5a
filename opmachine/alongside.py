"""Two pieces of one prediction at once, on a second CPU: compiled loops that release the GIL run in a
thread beside the caller's own work.

The simulation is sequential where its state is (the L2, the `stamp` marks), but some of its work
is not: the hottest-sector count of a launch needs only the sector stream, and a strategy's
decomposition of the next block of units only the frontier. Results are the same either way; where
this process may use one CPU only, or the work is too small to pay for a thread, it runs in turn.
"""
from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from typing import Iterable, Iterator


def cpus() -> int:
    """CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _start(call) -> tuple[threading.Thread, list]:
    """Run `call()` on a daemon thread of its own; the list gets what it returns, or the exception it raised
    (`_outcome` hands either to the caller's thread)."""
    box: list = []

    def run():
        try:
            box.append(call())
        except BaseException as error:  # handed to the caller's thread
            box.append(error)

    thread = threading.Thread(target=run, name="opmachine-alongside", daemon=True)
    thread.start()
    return thread, box


def _outcome(thread: threading.Thread, box: list):
    """What `_start`'s call returned, once its thread is done; the exception it raised is raised here."""
    thread.join()
    outcome = box.pop()
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


@contextmanager
def beside(function, args: tuple, alongside: bool = True):
    """Run `function(*args)` (a compiled loop that releases the GIL, writing only into its own outputs)
    while the body of the `with` runs, on a thread of its own when `alongside` and a second CPU is
    there, else after the body. Its exception, if any, is raised at the end of the `with`."""
    if not alongside or cpus() < 2:
        yield
        function(*args)
        return
    thread, box = _start(lambda: function(*args))
    try:
        yield
    finally:
        thread.join()
    _outcome(thread, box)


_END = object()


def ahead(items: Iterable, alongside: bool = True) -> Iterator:
    """The items of `items` in order, the next one made on a thread of its own while the caller works on
    the current one (when `alongside` and a second CPU is there): so at most two are alive at once.
    `items` must be safe to advance from another thread, one call at a time (a generator whose compiled
    work releases the GIL gains)."""
    iterator = iter(items)
    if not alongside or cpus() < 2:
        yield from iterator
        return
    thread, box = _start(lambda: next(iterator, _END))
    try:
        while True:
            item = _outcome(thread, box)
            if item is _END:
                return
            thread, box = _start(lambda: next(iterator, _END))
            yield item
    finally:
        thread.join()
