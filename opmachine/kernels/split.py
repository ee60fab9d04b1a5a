"""A block of a launch's jobs made by two CPUs at once, one from each end, with the same jobs as made in
turn.

Only `stamp` ties the parts of a block together: a lane stores when no earlier job of the round reached
its destination. The block is cut into pieces of about equal warp steps. The caller's thread makes
them from the first on, in order, with `stamp` as always; a second thread marks, for every vertex the
block's edges reach, the position of the first edge that reaches it (`mark`), then makes pieces from
the last back, each treating a vertex first reached before the piece as stored. The two meet where
they meet. A piece stores a vertex only where the vertex is first reached, so neither thread writes a
`stamp` entry that the other reads to decide anything. The pieces made from the back go to a buffer of
their own and are appended in order.
"""
from __future__ import annotations

import threading

import numba
import numpy as np

from ..alongside import beside
from ._jobs import JobBuffer, generate

SPLIT_STEPS = 1 << 16
"""A block's warp steps from which it is made from both ends: below it a thread costs more than it saves."""
PIECES = 16
"""Pieces a block is cut into: small enough that the two ends meet near the middle of the work."""
UNMARKED = np.zeros(1, dtype=np.int32), 0
"""The (mark, before) of a fill that reads `stamp` alone (`_jobs.expand_edges`)."""


@numba.njit(cache=True, nogil=True)
def _mark_first_reach(indices, edges, mark):
    """mark[d] = the position in `edges` of the first edge to reach d, for every d they reach (a vertex
    they do not reach keeps an older mark, which no piece of this block reads)."""
    for e in range(edges.size - 1, -1, -1):
        mark[indices[edges[e]]] = e


class SplitFill:
    """What making a block from both ends needs, kept from launch to launch of one prediction: `mark`
    (int32 per vertex) and the buffer of the pieces made from the back (`buffer`, else a new one).
    `min_steps`: the smallest block so made; `count`: its pieces."""

    def __init__(self, n: int, min_steps: int = SPLIT_STEPS, count: int = PIECES, buffer: JobBuffer | None = None):
        self.mark = np.zeros(max(n, 1), dtype=np.int32)
        self.buffer = buffer if buffer is not None else JobBuffer(0, 0)
        self.min_steps = min_steps
        self.count = count
        self.blocks = 0  # blocks made from both ends so far

    def cut(self, first_step: np.ndarray, step_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A block's pieces of about equal warp steps (first_step: each unit's first step, units + 1 offsets;
        step_end: each step's edges' end): the units at which they begin and the units' end (fewer than
        `count` pieces where units are few or steps bunch), and the block's edges before each."""
        targets = np.linspace(0, first_step[-1], self.count + 1)[1:-1]
        cuts = np.searchsorted(first_step, targets)
        units = np.unique(np.concatenate(([0], cuts[(cuts > 0) & (cuts < first_step.size - 1)],
                                          [first_step.size - 1])))
        steps = first_step[units]
        return units, np.where(steps > 0, step_end[np.maximum(steps - 1, 0)], 0)

    def splits(self, steps: int, units: int) -> bool:
        """Whether a block of `steps` warp steps over `units` work units is made from both ends."""
        return units >= 2 and steps >= self.min_steps

    def generate(self, fill, args_of, bounds: np.ndarray, edge_at: np.ndarray, buffer: JobBuffer, indices,
                 edges) -> None:
        """`generate(fill, args_of(*UNMARKED), bounds[0], bounds[-1], buffer)`, made from both ends. Piece k
        runs `fill` from `bounds[k]` to `bounds[k + 1]` and its edges begin at `edges[edge_at[k]]` (ids into
        `indices`). `args_of(mark, before)`: the fill's arguments, with lane buffers of their own."""
        self.blocks += 1
        back = self.buffer
        back.reuse(0, 0)
        made: list[tuple[int, int]] = []  # the jobs of the back's pieces in `back`, last piece first
        ends = [0, bounds.size - 1]  # the next piece from the front, and one past the next from the back
        lock = threading.Lock()

        def claim(front: bool) -> int | None:
            with lock:
                if ends[0] >= ends[1]:
                    return None
                ends[0 if front else 1] += 1 if front else -1
                return ends[0] - 1 if front else ends[1]

        def from_the_back():
            _mark_first_reach(indices, edges, self.mark)
            while (k := claim(False)) is not None:
                first = back.n_jobs
                generate(fill, args_of(self.mark, int(edge_at[k])), int(bounds[k]), int(bounds[k + 1]), back)
                made.append((first, back.n_jobs))

        with beside(from_the_back, ()):
            while (k := claim(True)) is not None:
                generate(fill, args_of(*UNMARKED), int(bounds[k]), int(bounds[k + 1]), buffer)
        for first, end in reversed(made):
            buffer.append(back, first, end)
