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


@contextmanager
def beside(function, args: tuple, alongside: bool = True):
    """Run `function(*args)` (a compiled loop that releases the GIL, writing only into its own outputs)
    while the body of the `with` runs, on a thread of its own when `alongside` and a second CPU is
    there, else after the body. Its exception, if any, is raised at the end of the `with`."""
    if not alongside or cpus() < 2:
        yield
        function(*args)
        return
    failed: list[BaseException] = []

    def run():
        try:
            function(*args)
        except BaseException as error:  # handed to the caller's thread
            failed.append(error)

    thread = threading.Thread(target=run, name="opmachine-beside", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
    if failed:
        raise failed[0]


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
    box: list = []

    def advance():
        try:
            box.append(next(iterator, _END))
        except BaseException as error:  # handed to the caller's thread
            box.append(error)

    thread = threading.Thread(target=advance, name="opmachine-ahead", daemon=True)
    thread.start()
    try:
        while True:
            thread.join()
            item = box.pop()
            if isinstance(item, BaseException):
                raise item
            if item is _END:
                return
            thread = threading.Thread(target=advance, name="opmachine-ahead", daemon=True)
            thread.start()
            yield item
    finally:
        thread.join()
