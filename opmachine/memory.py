"""A launch's jobs through the memory models: L2 sectors, L2 hits, DRAM sectors, row-buffer hits.

Warps run concurrently, so the address stream interleaves them: the documented order takes every
launched warp's first job (warps in launch order), then every warp's second job, and so on.
That stream goes through the L2 model, cold at each launch (as Nsight Compute measures a kernel by
default): fully associative LRU by stack distance, as in seed 003 §6.4, or the sectored
set-associative LRU with the profile's geometry, which can also be warm: one `SetAssocState`
carried from launch to launch, as back-to-back launches of a BFS find the L2. L2 misses, in
order, go through the row-buffer model: a fully associative LRU of `row_buffers` DRAM blocks,
empty at each launch. Loads and stores are treated alike (seed 003 Table 2 counts all 13 jobs
of Fig. 4 as L2 transactions). Every hit and miss is attributed to the server whose job caused
it (Fig. 10).
"""
from __future__ import annotations

import numba
import numpy as np

from .cache import SetAssocGeometry, SetAssocState, lru_hits, miss_ratio_curve, setassoc_hits, stack_distances
from .kernels import SERVER_FIELDS
from .layout import SECTOR_BYTES

L2_MODELS = ("lru", "setassoc")
# Capacities of the miss-ratio curve the LRU model reports, 256 KiB .. 256 MiB.
MRC_CAPACITIES_BYTES = tuple(2**k for k in range(18, 29))


@numba.njit(cache=True)
def interleaved_order(warp, warps):
    """Job indices sorted by (position in its warp's job sequence, generation order)."""
    jobs = warp.size
    step = np.empty(jobs, dtype=np.int64)
    seen = np.zeros(warps, dtype=np.int64)
    longest = 0
    for j in range(jobs):
        step[j] = seen[warp[j]]
        seen[warp[j]] += 1
        longest = max(longest, seen[warp[j]])
    start = np.zeros(longest + 1, dtype=np.int64)
    for j in range(jobs):
        start[step[j] + 1] += 1
    for s in range(longest):
        start[s + 1] += start[s]
    order = np.empty(jobs, dtype=np.int64)
    for j in range(jobs):
        order[start[step[j]]] = j
        start[step[j]] += 1
    return order


@numba.njit(cache=True)
def _stream(order, server, ptr, sectors):
    total = sectors.size
    out_sectors = np.empty(total, dtype=sectors.dtype)
    out_server = np.empty(total, dtype=np.int8)
    k = 0
    for j in order:
        for p in range(ptr[j], ptr[j + 1]):
            out_sectors[k] = sectors[p]
            out_server[k] = server[j]
            k += 1
    return out_sectors, out_server


def jobs_per_warp(trace) -> np.ndarray:
    """Jobs each launched warp ran."""
    return np.bincount(trace.warp, minlength=trace.warps)


def l2_geometry(profile) -> SetAssocGeometry:
    """The profile's L2 as a sectored set-associative cache."""
    return SetAssocGeometry.from_capacity(profile.l2_bytes, profile.l2_ways, profile.l2_line_bytes,
                                          profile.sector_bytes)


def simulate_launch(trace, layout, profile, l2_model: str = "lru", l2_state: SetAssocState | None = None):
    """Per-server counts (6 x SERVER_FIELDS, int64) of one launch, and the launch's misses at
    each MRC capacity (LRU model only, else None). With `l2_state` (set-associative model) the
    launch starts from, and leaves its lines in, that cache instead of an empty one."""
    counts, misses_at, _ = simulate_launch_outcomes(trace, layout, profile, l2_model, l2_state)
    return counts, misses_at


def simulate_launch_outcomes(trace, layout, profile, l2_model: str = "lru", l2_state: SetAssocState | None = None):
    """`simulate_launch`'s counts and misses, and each sector's outcome in the interleaved stream:
    `(order, stream, outcome)`: the job order of the stream, its sectors, and per sector 0 (L2 hit),
    1 (row-buffer hit) or 2 (row-buffer miss), as the critical-path time (`opmachine.critical`)
    needs them."""
    order = interleaved_order(trace.warp, trace.warps)
    stream, servers = _stream(order, trace.server, trace.ptr, trace.sectors)
    misses_at = None
    if l2_model == "lru":
        distances = stack_distances(stream, layout.total_sectors)
        hit = (distances >= 0) & (distances < profile.l2_bytes // SECTOR_BYTES)
        capacities = [c // SECTOR_BYTES for c in MRC_CAPACITIES_BYTES]
        misses_at = np.rint(miss_ratio_curve(distances, capacities) * stream.size).astype(np.int64)
    elif l2_state is not None:
        hit, _ = l2_state.hits(stream)
    else:
        hit, _ = setassoc_hits(stream, l2_geometry(profile))
    sectors_per_block = profile.dram_block_bytes // SECTOR_BYTES
    miss_blocks = stream[~hit] // sectors_per_block
    miss_servers = servers[~hit]
    row_hit = lru_hits(miss_blocks, layout.total_sectors // sectors_per_block + 1, profile.row_buffers)
    counts = np.zeros((6, len(SERVER_FIELDS)), dtype=np.int64)
    counts[:, 0] = np.bincount(trace.server, minlength=6)
    counts[:, 1] = np.bincount(servers, minlength=6)
    counts[:, 2] = np.bincount(servers[hit], minlength=6)
    counts[:, 3] = np.bincount(miss_servers, minlength=6)
    counts[:, 4] = np.bincount(miss_servers[row_hit], minlength=6)
    counts[:, 5] = counts[:, 3] - counts[:, 4]
    outcome = np.zeros(stream.size, dtype=np.int8)
    missed = np.flatnonzero(~hit)
    outcome[missed] = np.where(row_hit, 1, 2)
    return counts, misses_at, (order, stream, outcome)
