"""Time GPU launches back to back, without the host's per-launch overhead in the measurement.

A batch of launches is queued behind a one-thread kernel (`cuda/hold.cu`) that spins until the
host has queued the whole batch; CUDA events around each launch then time the launches as the
GPU runs them one after another, which is how a BFS's launches run.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from . import modules


def time_launches(cp, launches: Sequence[Callable[[], object]], batch: int = 64) -> list[float]:
    """Nanoseconds of each call in `launches` (each queues one kernel), `batch` at a time behind the hold kernel."""
    flag_memory = cp.cuda.alloc_pinned_memory(4)
    flag = np.frombuffer(flag_memory, dtype=np.int32, count=1)
    hold = modules.function("hold")
    times = []
    for first in range(0, len(launches), batch):
        flag[0] = 0
        hold((1,), (1,), (np.uint64(flag_memory.ptr),))
        events = []
        for launch in launches[first:first + batch]:
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch()
            end.record()
            events.append((start, end))
        flag[0] = 1
        events[-1][1].synchronize()
        times.extend(cp.cuda.get_elapsed_time(s, e) * 1e6 for s, e in events)
    return times


def median_launch_ns(cp, launch: Callable[[], object], repeats: int) -> float:
    """Nanoseconds of one call of `launch` (it queues one kernel), the median of `repeats` timed with CUDA
    events after one untimed warm-up (which also brings the kernel's code and an L2-sized table in): for
    the microbenchmarks' long launches, which the host's queuing does not disturb."""
    times = []
    for repeat in range(repeats + 1):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        if repeat:
            times.append(cp.cuda.get_elapsed_time(start, end) * 1e6)
    return float(np.median(times))
