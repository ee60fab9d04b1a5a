"""Which level of a CPU's cache hierarchy serves each memory instruction (seed 003 §4).

On a CPU the operator machine's servers are the levels of the cache hierarchy: an instruction
completes at the level that serves it. `cache_levels` finds that level for every access of a trace,
by a set-associative LRU per level or by one fully associative stack-distance pass.
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.errors import InputError

from ..cache import SetAssocGeometry, SetAssocState, stack_distances
from ..profile import CPUProfile
from .kernel import NF1
from .trace import CPUTrace

LEVEL_NAMES = ("L1", "L2", "L3", "MEM")
MODELS = ("setassoc", "lru")


@numba.njit(cache=True, nogil=True)
def _levels_from_distances_njit(distances, capacities_lines):
    """Level of each access in an inclusive LRU hierarchy: the first capacity > stack distance."""
    k = capacities_lines.size
    out = np.empty(distances.size, dtype=np.int8)
    for i in range(distances.size):
        d = distances[i]
        level = k
        if d >= 0:
            for j in range(k):
                if d < capacities_lines[j]:
                    level = j
                    break
        out[i] = level
    return out


def profile_levels(profile) -> tuple:
    """The cache levels of a CPU profile, L1 first; InputError for anything else."""
    if not isinstance(profile, CPUProfile):
        raise InputError(f"the CPU model needs a CPU profile (load_profile(..., kind='cpu')), "
                         f"got {type(profile).__name__}")
    levels = tuple(profile.levels)
    if not levels:
        raise InputError(f"profile {getattr(profile, 'name', '?')!r} has no cache levels")
    return levels


def reset_lines(trace: CPUTrace) -> np.ndarray:
    """The line ids the reset between two runs of a BFS stores to (`kernel.reset_levels`, one store per
    node): the level lines its first round tests, in order."""
    first = trace.round(1)
    tested = trace.line_ids[first][trace.servers[first] == NF1]
    return tested[np.r_[True, tested[1:] != tested[:-1]]] if tested.size else tested


def cache_levels(trace, profile, model: str = "setassoc", warm: bool = False) -> np.ndarray:
    """Which level serves each access: 0 = L1, 1 = L2, 2 = L3, ..., len(levels) = memory (int8).

    `trace` is a `CPUTrace` (its line size must equal the profile's) or an array of line ids in
    units of `profile.line_bytes`. Caches start empty, or with `warm` (a `CPUTrace` only) as the
    previous run of the same BFS and the reset of the levels leave them (`reset_lines`), as a BFS
    timed again and again finds them; they stay warm across rounds (one serial process). Loads and
    stores are treated alike (write-allocate; write-backs are not modelled).

    - "setassoc": each level is a set-associative LRU cache of the profile's size, ways and line
      (not sectored), in series: L2 sees only L1 misses, L3 only L2 misses. The levels are thus
      non-inclusive: a hit in L1 does not refresh the line in L2 or L3.
    - "lru": a fully associative, inclusive LRU hierarchy from one stack-distance pass: an access
      is served by the first level whose capacity in lines exceeds its stack distance (the number
      of distinct lines touched since the previous access to this line); first accesses go to
      memory.
    """
    if model not in MODELS:
        raise InputError(f"unknown cache model {model!r} (choose from {', '.join(MODELS)})")
    levels = profile_levels(profile)
    line_bytes = int(profile.line_bytes)
    if isinstance(trace, CPUTrace):
        if trace.line_bytes != line_bytes:
            raise InputError(f"trace has {trace.line_bytes}-byte lines but profile "
                             f"{profile.name!r} has {line_bytes}-byte lines")
        ids = trace.line_ids
    else:
        if warm:
            raise InputError("a warm start needs the CPUTrace of the BFS (its previous run fills the caches)")
        ids = np.asarray(trace)
        if ids.ndim != 1 or not np.issubdtype(ids.dtype, np.integer):
            raise InputError("line ids must be a 1-D integer array")
        if ids.size and ids.min() < 0:
            raise InputError("line ids must be >= 0")
    if ids.size == 0:
        return np.empty(0, dtype=np.int8)
    if model == "lru":
        capacities = np.array([int(level.bytes) // line_bytes for level in levels], dtype=np.int64)
        stream = np.concatenate([ids, reset_lines(trace), ids]) if warm else ids
        distances = stack_distances(stream, int(stream.max()) + 1)[stream.size - ids.size:]
        return _levels_from_distances_njit(distances, capacities)
    universe = int(ids.max()) + 1
    states = [SetAssocState(SetAssocGeometry.from_capacity(int(level.bytes), int(level.ways), line_bytes=line_bytes,
                                                           sector_bytes=line_bytes), universe)
              for level in levels]
    if warm:
        _series_levels(ids, states, record=False)
        _series_levels(reset_lines(trace), states, record=False)
    return _series_levels(ids, states)


SERIES_CHUNK = 1 << 23  # accesses run through the caches at a time, so a long trace needs no long copies


def _series_levels(ids: np.ndarray, states: list, record: bool = True) -> np.ndarray | None:
    """The level serving each access of `ids` in caches `states` (L1 first) in series: a level sees
    only the misses of the one before it; memory serves what every level misses. The caches keep
    what the accesses leave; with `record` False only that matters and nothing is returned."""
    out = np.full(ids.size if record else 0, len(states), dtype=np.int8)
    for start in range(0, ids.size, SERIES_CHUNK):
        part = ids[start : start + SERIES_CHUNK]
        hits = np.asarray(states[0].hits(part)[0], dtype=bool)
        if record:
            out[start : start + part.size][hits] = 0
        positions = np.flatnonzero(~hits)  # indices into part of the accesses that reach the next level
        for index, state in enumerate(states[1:], start=1):
            if positions.size == 0:
                break
            hits = np.asarray(state.hits(part[positions])[0], dtype=bool)
            if record:
                out[start + positions[hits]] = index
            positions = positions[~hits]
    return out if record else None
