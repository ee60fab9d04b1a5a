"""Each SM's L1 data cache, as the coupled kernels' status lookups find it: which bitmask reads it serves.

The coupled kernels read every array with `ld.global.cg` (the L2 only) except the status lookup's bitmask,
which they read with `ld.global.ca` through the SM's L1 (`gpu_validate/cuda/status_lookup.cuh`). Nsight
Compute's per-launch L1 hits of those kernels (`gpu_validate/results/nvidia-h200-coupling-loads/`) follow
from four rules, which this module simulates:

- each SM has an L1 of its own, `lines` lines of `sectors_per_line` sectors (the profile's `l1_bytes` less the
  kernel's shared-memory carve-out, `[l1_carveout]`), fully associative and least recently used first out,
  empty at each launch; a sector hits iff its line is resident with that sector valid;
- a cached read (`CACHED`: the bitmask's) may hit and makes its line the most recent;
- a read that bypasses the L1 (`PASS`: the `.cg` loads) never hits but still takes a line as it passes,
  the most recent, with its sector valid;
- a store or atomic of the SM on a line (`DROP`: the claim build's atomic OR on a bitmask word) drops the
  line from that SM's L1 (other SMs keep their copies, which is why their bits can be stale).

CTA c runs on SM c mod SMs (a full wave puts each CTA on its own slot of an SM); an SM sees its jobs in the
trace's order.
"""
from __future__ import annotations

import numba
import numpy as np

from .lru_list import lru_access, lru_clear, lru_drop
from .stack import prefetch

_AHEAD = 16  # jobs ahead whose offsets (and, half as far, sectors) `_one_sm` prefetches

NONE, CACHED, PASS, DROP = range(4)
"""What a job does at the L1 (`l1_hits`' `job_kind`): nothing (a store beyond the bitmask, an atomic on a
counter), a cached read, a read that bypasses it, a drop."""


@numba.njit(cache=True, nogil=True)
def _jobs_by_sm(job_sm, job_kind, sms):
    """The jobs that do something at the L1 grouped by SM, in trace order within each (a counting sort): (order,
    starts), SM s's jobs order[starts[s]:starts[s + 1]]."""
    starts = np.zeros(sms + 1, dtype=np.int64)
    for j in range(job_sm.size):
        if job_kind[j] != NONE:
            starts[job_sm[j] + 1] += 1
    for s in range(sms):
        starts[s + 1] += starts[s]
    order = np.empty(starts[sms], dtype=np.int64)
    fill = starts[:sms].copy()
    for j in range(job_sm.size):
        if job_kind[j] != NONE:
            order[fill[job_sm[j]]] = j
            fill[job_sm[j]] += 1
    return order, starts


@numba.njit(cache=True, nogil=True)
def _one_sm(jobs, job_kind, ptr, sectors, sectors_per_line, node_of, line_of, valid, newer, older, meta, hits):
    """One SM's L1, empty (an `lru_list` recency list of its lines, `valid` their sectors), through its `jobs`
    (trace order), filling `hits`; empties it again at the end."""
    for k in range(jobs.size):
        if k + _AHEAD < jobs.size:  # the jobs of one SM lie far apart in the trace
            prefetch(ptr, jobs[k + _AHEAD])
            prefetch(sectors, ptr[jobs[k + _AHEAD // 2]])
        j = jobs[k]
        kind = job_kind[j]
        for p in range(ptr[j], ptr[j + 1]):
            line = sectors[p] // sectors_per_line
            bit = np.int64(1) << (sectors[p] % sectors_per_line)
            if kind == DROP:
                lru_drop(line, node_of, line_of, newer, older, meta)
            elif lru_access(line, node_of, line_of, newer, older, meta):
                node = node_of[line]
                hits[p] = kind == CACHED and (valid[node] & bit) != 0
                valid[node] |= bit
            else:
                valid[node_of[line]] = bit
    lru_clear(node_of, line_of, newer, older, meta)


@numba.njit(cache=True, parallel=True)
def _l1_pass(job_sm, job_kind, ptr, sectors, sms, lines, sectors_per_line, universe_lines, blocks, hits):
    """Fill `hits` (per sector entry of the trace): the SMs split into `blocks` contiguous blocks (one a thread),
    each with one L1's arrays, emptied between its SMs."""
    order, starts = _jobs_by_sm(job_sm, job_kind, sms)
    for b in numba.prange(blocks):
        node_of = np.full(universe_lines + 1, -1, dtype=np.int32)  # one more: `lru_drop`'s empty id
        line_of = np.zeros(lines, dtype=np.int64)
        valid = np.zeros(lines, dtype=np.int64)
        newer = np.full(lines, -1, dtype=np.int32)
        older = np.full(lines, -1, dtype=np.int32)
        meta = np.array([-1, -1, 0], dtype=np.int64)  # as `lru_list.LruList`'s: head, tail, size
        for s in range(b * sms // blocks, (b + 1) * sms // blocks):
            _one_sm(order[starts[s]:starts[s + 1]], job_kind, ptr, sectors, sectors_per_line, node_of, line_of, valid,
                    newer, older, meta, hits)


def l1_hits(job_sm: np.ndarray, job_kind: np.ndarray, ptr: np.ndarray, sectors: np.ndarray, sms: int, lines: int,
            sectors_per_line: int = 4) -> np.ndarray:
    """Per sector entry of a trace (job j's are sectors[ptr[j]:ptr[j+1]]), whether the L1 of its job's SM
    (`job_sm`) serves it, by the module's rules for each job's `job_kind` (NONE, CACHED, PASS, DROP), each SM's L1
    `lines` lines of `sectors_per_line` sectors, empty at the start."""
    if lines < 1 or sms < 1 or not 1 <= sectors_per_line <= 63:
        raise ValueError(f"an L1 needs lines >= 1, sms >= 1 and 1..63 sectors a line, got {lines}, {sms}, "
                         f"{sectors_per_line}")
    hits = np.zeros(len(sectors), dtype=np.bool_)
    job_kind = np.ascontiguousarray(job_kind, dtype=np.int8)
    if not (job_kind == CACHED).any():  # nothing can hit
        return hits
    sectors = np.ascontiguousarray(sectors)
    universe = int(sectors.max()) // sectors_per_line + 1 if sectors.size else 1
    _l1_pass(np.ascontiguousarray(job_sm), job_kind, np.ascontiguousarray(ptr), sectors, int(sms), int(lines),
             int(sectors_per_line), universe, min(numba.get_num_threads(), int(sms)), hits)
    return hits
