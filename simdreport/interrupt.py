"""Ctrl-C: who answers SIGINT while a block runs, and the command line's answer (exit at once).

`answering(handler)` sets the SIGINT handler for a block (in the main thread; elsewhere Python
allows none and nothing changes): `exit_at_once` for the `simdmodel` program, `signal.SIG_IGN`
while Dask workers start so they inherit it. Where unwinding is safe, `unwinding()` answers with a
KeyboardInterrupt that is remembered too, for `check_interrupted()`: Python prints and drops an
exception raised inside a garbage-collector callback or a `__del__` (Dask registers such a callback),
so a Ctrl-C that lands there would otherwise be lost.
This module imports nothing of the project, so the program sets its handler before its first heavy
import (numba, pandas) and a Ctrl-C while those load is answered too.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading


@contextlib.contextmanager
def answering(handler):
    """SIGINT goes to `handler` while the block runs, then back to the handler before it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


_INTERRUPTED = threading.Event()


def _interrupt(signum, frame) -> None:
    _INTERRUPTED.set()
    raise KeyboardInterrupt


@contextlib.contextmanager
def unwinding():
    """Ctrl-C raises KeyboardInterrupt while the block runs, and one that Python drops (an "unraisable"
    exception: in a garbage-collector callback, a `__del__`) is still seen by the next `check_interrupted()`
    and not printed."""
    previous_hook = sys.unraisablehook

    def hook(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous_hook(unraisable)

    _INTERRUPTED.clear()
    sys.unraisablehook = hook
    try:
        with answering(_interrupt):
            yield
    finally:
        sys.unraisablehook = previous_hook
        _INTERRUPTED.clear()


def check_interrupted() -> None:
    """Raise KeyboardInterrupt if Ctrl-C came while `unwinding()` was answering it (even if Python dropped
    the one it raised)."""
    if _INTERRUPTED.is_set():
        raise KeyboardInterrupt


def exit_at_once(signum, frame) -> None:
    """Ctrl-C in a command: remove its temporary outputs, stop its worker processes, say so on one
    line and exit 130 at once. Not a KeyboardInterrupt: raised while numba boxes a returned tuple,
    that leaves a NULL in the tuple and the interpreter crashes (SIGSEGV) unpacking it. A module not
    loaded yet has made no temporaries and started no workers, so only loaded ones are asked."""
    atomic, workers = sys.modules.get("simdmodel.atomic"), sys.modules.get("simdreport.workers")
    if atomic is not None:
        atomic.remove_temporaries()
    if workers is not None:
        workers.kill_workers()
    os.write(2, b"simdmodel: interrupted\n")
    os._exit(130)
