"""Ctrl-C: who answers SIGINT while a block runs, and the command line's answer (exit at once).

`answering(handler)` sets the SIGINT handler for a block (in the main thread; elsewhere Python
allows none and nothing changes): `exit_at_once` for the `simdmodel` program, `signal.SIG_IGN`
while Dask workers start so they inherit it, `signal.default_int_handler` where unwinding is safe.
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
