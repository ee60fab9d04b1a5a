"""How often each trip event of a kernel runs on each launched warp, from the launch's jobs and geometry.

The events are the `// trips:` markers of the CUDA sources; their counts are what the decomposition
already knows, per launched warp:

- `warp`: once; `active`: once if the warp takes a step (code after the early exit);
  `block`: once on each block's first warp (a `threadIdx.x == 0` branch);
- `step`: grid-stride steps: work units the strategy's geometry deals to the warp (virtual warp /
  CTA chunk c on warp slot c mod slots), for `topo` one ANI job per step, for the compaction the
  chunks it walks (`kernels.compact_warp_steps`);
- `vertex`: steps in which some lane reads an edge range (ERL jobs / 2);
- `round`: inner-loop iterations of the warp (one EDL job each); `store`: iterations or chunks with a
  store (OP jobs); `search`: binary-search steps, ceil(log2 entries) per round over the unit's
  entries (ws: 32, scan: the CTA size), the same for every lane;
- `parked`, `regroup`, `diverged` (`code.DIVERGENCE`) and `entered` (`blocks.ENTERED`): from each
  step's lane trip counts (`lane_divergence`: `topo_lanes`, `group_lanes` and `segment_lanes` give
  them), per step max - min lane trips, the distinct exits - 1, whether there are two or more, and
  whether any lane runs the loop at all;
- `cta_list`, `cta_round`, `warp_list`, `warp_round` (swc): lists the CTA strip-mines (every warp of
  the unit walks each) and its warp's rounds over them, lists its own warp gathers and their rounds;
  there `round` and `search` are the scan phase's only (`phase_trips`);
- `piece` (seed 001's coupled kernels, `coupled_trips`): the long lists a warp's lanes post as pieces,
  the most of its lanes' pieces a step; a `pieces` launch's `round` (its warps' steps over the pieces)
  and `entered` (the pieces a warp has a lane in); their `step` counts chunks, contraction groups or
  pieces dealt to the CTA;
- `last`, `wait`: the compaction's offsets, scanned by the block that arrives last (its warps: every
  block runs the same code there, so the last tile stands for it), and thread 0's polls that find its
  tile's offset not yet written, none (how many there are is a race, a few instructions a block).
"""
from __future__ import annotations

import numba
import numpy as np

from simdmodel.couplings import PIECE
from simdmodel.strategies.swc import CTA, WARP, phase_of, strided_rounds

from ..kernels._jobs import ANI, EDL, ERL, OP
from .blocks import ENTERED
from .code import DIVERGENCE

OUT_OF_RANGE, SKIPPED, EMPTY = -3, -2, -1
"""Lane exits before the loop, each a different branch to the sync: no node / queue entry for the lane,
a node not in the frontier (`topo`), an edge range with no edge for the lane."""


@numba.njit(cache=True, nogil=True)
def _jobs_by_server(warp, server, warps):
    out = np.zeros((6, warps))
    for j in range(warp.size):
        out[server[j], warp[j]] += 1.0
    return out


def jobs_per_server(trace) -> np.ndarray:
    """Jobs per launched warp, one row per server (SERVERS order; one pass over the trace)."""
    return _jobs_by_server(trace.warp, trace.server, trace.warps)


def steps_per_warp(units: int, unit_warps: int, warps: int) -> np.ndarray:
    """Steps per launched warp when unit c runs on the `unit_warps` warps of slot c mod (warps // unit_warps)."""
    slots = max(warps // unit_warps, 1)
    slot = np.arange(warps) // unit_warps
    steps = np.where(slot < units, (units - slot + slots - 1) // slots, 0)
    return np.where(slot < slots, steps, 0).astype(np.float64)


def _common(trace, jobs: np.ndarray) -> dict:
    """Trips every launch has, from its jobs per warp by server (`jobs_per_server`)."""
    return {"warp": np.ones(trace.warps), "vertex": jobs[ERL] / 2, "round": jobs[EDL], "store": jobs[OP]}


def _with_active(trips: dict) -> dict:
    return {**trips, "active": (trips["step"] > 0).astype(np.float64)}


def topo_trips(trace) -> dict:
    """Trips per warp of a `topo` launch."""
    jobs = jobs_per_server(trace)
    return _with_active({**_common(trace, jobs), "step": jobs[ANI]})


def expansion_trips(trace, geometry, front_size: int) -> dict:
    """Trips per warp of an expansion over a queue of `front_size` entries with the strategy's `geometry`."""
    units = -(-front_size // geometry.unit_entries)
    common = _common(trace, jobs_per_server(trace))
    search = int(np.ceil(np.log2(geometry.unit_entries))) if geometry.unit_entries > 1 else 0
    return _with_active({**common, "step": steps_per_warp(units, geometry.unit_warps, trace.warps),
                         "search": common["round"] * search})


_LANE_EVENTS = (*DIVERGENCE, ENTERED)  # the rows of the `_..._divergence` functions' arrays


def _events(rows: np.ndarray) -> dict:
    return dict(zip(_LANE_EVENTS, rows))


@numba.njit(cache=True, nogil=True, inline="always")
def _step_events(values, w, seen, events):
    """Add one step's events (rows of `events`, in _LANE_EVENTS order) to warp `w`'s: its lanes' `values`
    (trips, or the branch they left by)."""
    most, least, distinct = 0, -1, 0
    for lane in range(values.size):
        value = values[lane]
        trips = max(value, 0)
        most = max(most, trips)
        least = trips if least < 0 else min(least, trips)
        new = True
        for k in range(distinct):
            if seen[k] == value:
                new = False
                break
        if new:
            seen[distinct] = value
            distinct += 1
    events[0, w] += most - least
    events[1, w] += distinct - 1
    events[2, w] += distinct > 1
    events[3, w] += most > 0


@numba.njit(cache=True, nogil=True)
def _divergence(lanes, warp_of_step, warps):
    events = np.zeros((4, warps))
    seen = np.empty(lanes.shape[1], dtype=lanes.dtype)
    for s in range(lanes.shape[0]):
        _step_events(lanes[s], warp_of_step[s], seen, events)
    return events


@numba.njit(cache=True, nogil=True)
def _group_divergence(front_degrees, group_size, warps):
    """`_divergence` of `group_lanes`' lanes, built one step at a time instead of as a steps x 32 array."""
    groups = 32 // group_size
    steps = -(-front_degrees.size // groups)
    events = np.zeros((4, warps))
    values = np.full(32, OUT_OF_RANGE, dtype=np.int64)  # lanes beyond g groups own no entry
    seen = np.empty(32, dtype=np.int64)
    for s in range(steps):
        for g in range(groups):
            entry = s * groups + g
            degree = front_degrees[entry] if entry < front_degrees.size else -1
            for j in range(group_size):
                trips = -((j - degree) // group_size)
                values[g * group_size + j] = OUT_OF_RANGE if degree < 0 else (trips if trips > 0 else EMPTY)
        _step_events(values, s % warps, seen, events)
    return events


def lane_divergence(lanes: np.ndarray, warp_of_step: np.ndarray, warps: int) -> dict:
    """`parked`, `regroup`, `diverged` and `entered` (steps in which some lane enters the loop) trips per
    launched warp from each step's lanes (steps x 32: a lane's loop trips, or OUT_OF_RANGE / SKIPPED /
    EMPTY for the branch it left by) and the warp that runs it."""
    return _events(_divergence(np.ascontiguousarray(lanes, dtype=np.int64), np.asarray(warp_of_step, dtype=np.int64),
                               int(warps)))


def topo_lanes(levels: np.ndarray, degrees: np.ndarray, level: int, warps: int) -> dict:
    """`lane_divergence` of a `topo` launch: chunk c (nodes 32c .. 32c+31) on warp c mod warps."""
    return _events(_topo_divergence(levels, degrees, int(level), int(warps)))


@numba.njit(cache=True, nogil=True)
def _topo_divergence(levels, degrees, level, warps):
    """`_divergence` of `topo_lanes`' lanes (a node of another level: SKIPPED; no edge: EMPTY; past the
    last node: OUT_OF_RANGE), built one chunk at a time instead of as an n-long array. A whole chunk of
    nodes of other levels (most chunks, on a deep graph) adds no event: its lanes all leave alike, by no trip."""
    n = levels.size
    events = np.zeros((4, warps))
    values = np.empty(32, dtype=np.int64)
    seen = np.empty(32, dtype=np.int64)
    for c in range(-(-n // 32)):
        if c * 32 + 32 <= n:
            here = False
            for lane in range(32):
                here |= levels[c * 32 + lane] == level
            if not here:
                continue
        for lane in range(32):
            node = c * 32 + lane
            if node >= n:
                values[lane] = OUT_OF_RANGE
            elif levels[node] != level:
                values[lane] = SKIPPED
            else:
                values[lane] = degrees[node] if degrees[node] > 0 else EMPTY
        _step_events(values, c % warps, seen, events)
    return events


def group_lanes(front_degrees: np.ndarray, group_size: int, warps: int) -> dict:
    """`lane_divergence` of an `sm-S` expansion: virtual warp c takes queue entries c g .. c g + g - 1
    (g = 32 / S groups of S lanes), lane j of a group walks edges j, j + S, ... of its entry, on warp
    c mod warps."""
    return _events(_group_divergence(np.asarray(front_degrees, dtype=np.int64), int(group_size), int(warps)))


def segment_lanes(front_degrees: np.ndarray, warps: int) -> dict:
    """`lane_divergence` of a `ws` expansion: virtual warp c takes queue entries 32c .. 32c + 31 and its
    lanes stride over their E concatenated edges, lane l taking edges l, l + 32, ...: ceil((E - l) / 32)
    trips, or none (EMPTY, the branch past the loop) when l >= E; on warp c mod warps."""
    steps = -(-front_degrees.size // 32)
    padded = np.zeros(steps * 32, dtype=np.int64)
    padded[:front_degrees.size] = front_degrees
    edges = padded.reshape(steps, 32).sum(axis=1)[:, None]
    trips = -(-(edges - np.arange(32)[None, :]) // 32)
    return lane_divergence(np.where(trips > 0, trips, EMPTY), np.arange(steps) % warps, warps)


def expansion_lanes(mapping, front_degrees: np.ndarray, warps: int) -> dict | None:
    """The lanes' divergence events of an expansion by `mapping` over a frontier with these degrees
    (`group_lanes` for sm-S, `segment_lanes` for ws); None for a strategy whose lanes are not counted."""
    if mapping.spec.name == "group":
        return group_lanes(front_degrees, mapping.group_size, warps)
    if mapping.spec.name == "ws":
        return segment_lanes(front_degrees, warps)
    return None


@numba.njit(cache=True, nogil=True)
def _swc_trips(degrees, unit_ptr, cta_size, warps, big_list, piece):
    """Rows cta_list, cta_round, warp_list, warp_round, round (scan phase), piece, posting per launched warp
    of a swc-C gather: unit u (entries unit_ptr[u] .. unit_ptr[u+1] - 1, entry i on thread i - unit_ptr[u])
    on unit slot u mod slots, its warp j on launched warp slot * C / 32 + j (`simdmodel.strategies.swc`). A
    list longer than `big_list` (> 0) is no phase's: its thread posts it as ceil(d / piece) pieces
    (`piece`, the most of the warp's lanes; `posting`, the units in which the warp has such a list)."""
    unit_warps = cta_size // 32
    slots = max(warps // unit_warps, 1)
    out = np.zeros((7, warps))
    for u in range(unit_ptr.size - 1):
        first_warp = (u % slots) * unit_warps
        lo, hi = unit_ptr[u], unit_ptr[u + 1]
        loose = 0
        most = np.zeros(unit_warps)
        for i in range(lo, hi):
            d = degrees[i]
            if big_list > 0 and d > big_list:
                most[(i - lo) // 32] = max(most[(i - lo) // 32], (d + piece - 1) // piece)
                continue
            phase = phase_of(d, cta_size)
            if phase == CTA:
                for j in range(unit_warps):
                    out[0, first_warp + j] += 1
                    if 32 * j < d:
                        out[1, first_warp + j] += (d - 32 * j + cta_size - 1) // cta_size
            elif phase == WARP:
                w = first_warp + (i - lo) // 32
                out[2, w] += 1
                out[3, w] += (d + 31) // 32
            else:
                loose += d
        for j in range(unit_warps):
            out[5, first_warp + j] += most[j]
            out[6, first_warp + j] += most[j] > 0
            if 32 * j < loose:
                out[4, first_warp + j] += strided_rounds(loose - 32 * j, 1, cta_size)
    return out


def _search_steps(cta_size: int) -> int:
    """Binary-search steps of the scan phase's owner search over a CTA's C entries."""
    return int(np.ceil(np.log2(cta_size))) if cta_size > 1 else 0


def _gather_rows(rows: np.ndarray, cta_size: int) -> dict:
    return {"cta_list": rows[0], "cta_round": rows[1], "warp_list": rows[2], "warp_round": rows[3],
            "round": rows[4], "search": rows[4] * _search_steps(cta_size)}


def phase_trips(mapping, front_degrees: np.ndarray, warps: int) -> dict:
    """The trips of an expansion by a strategy that gathers in phases (swc) that its jobs do not give:
    per launched warp each phase's lists and rounds, with `round` and `search` the scan phase's only;
    empty for a one-phase strategy."""
    if mapping.spec.name != "swc":
        return {}
    cta_size = int(mapping.value("cta_size"))
    degrees = np.asarray(front_degrees, dtype=np.int64)
    units = np.append(np.arange(0, degrees.size, cta_size, dtype=np.int64), np.int64(degrees.size))
    return _gather_rows(_swc_trips(degrees, units, cta_size, int(warps), 0, 1), cta_size)


def coupled_trips(phase: str, warps: int, units: int, cta_size: int, degrees=None, unit_ptr=None, big_list: int = 0,
                  piece_len=None, looked_up: int = 0, counted: dict | None = None) -> dict:
    """Trips per launched warp of a coupled-BFS launch (`gpu_validate/cuda/couplings.cu`, `kernels.couple`):
    `units` chunks, tile groups or pieces dealt to CTAs c mod slots (`step`), the CTA's first warp
    reserving output slots once a step (`reserve`); an expanding launch's gather of lists `degrees` in units
    `unit_ptr` (`_swc_trips`, lists longer than `big_list` posted as pieces of PIECE edges); a `pieces`
    launch's rounds over pieces of `piece_len` edges (warp j of a piece's CTA takes its offsets r C + 32 j ..:
    `round`, and `entered` once per piece it has a lane in); a contraction of `looked_up` ids, groups of two
    tiles, in which warp j looks up only where it has an id (`lookup`); and the events whose trips the
    launch's lookups decide, counted by the caller (`counted`: `kept`, `enqueue`)."""
    unit_warps = cta_size // 32
    step = steps_per_warp(units, unit_warps, warps)
    trips = {"warp": np.ones(warps), "step": step, "reserve": np.where(np.arange(warps) % unit_warps == 0, step, 0.0)}
    if degrees is not None:
        rows = _swc_trips(np.asarray(degrees, dtype=np.int64), np.asarray(unit_ptr, dtype=np.int64), cta_size, warps,
                          big_list, PIECE)
        trips.update(_gather_rows(rows, cta_size), piece=rows[5], posting=rows[6])
    if piece_len is not None:
        trips.update(zip(("round", "entered"), _piece_rounds(np.asarray(piece_len, dtype=np.int64), cta_size, warps)))
    if phase == "contract":
        trips["lookup"] = _warps_with_ids(int(looked_up), 2 * cta_size, cta_size, warps)
    trips.update(counted or {})
    return _with_active(trips)


def _warps_with_ids(size: int, group: int, cta_size: int, warps: int) -> np.ndarray:
    """Per launched warp, the groups of `group` ids (group g on CTA g mod slots) in which its first tile's
    lanes have an id (warp j of a group from id g * group + 32 j)."""
    unit_warps = cta_size // 32
    slots = max(warps // unit_warps, 1)
    groups = np.arange(-(-size // group))
    out = np.zeros((slots, unit_warps))
    for j in range(unit_warps):
        out[:, j] = np.bincount(groups % slots, weights=groups * group + 32 * j < size, minlength=slots)[:slots]
    return np.pad(out.ravel(), (0, warps - slots * unit_warps))


@numba.njit(cache=True, nogil=True)
def _piece_rounds(piece_len, cta_size, warps):
    """Rows round and entered per launched warp of a `pieces` launch (piece q on CTA q mod slots)."""
    unit_warps = cta_size // 32
    slots = max(warps // unit_warps, 1)
    out = np.zeros((2, warps))
    for q in range(piece_len.size):
        first_warp = (q % slots) * unit_warps
        for j in range(unit_warps):
            if 32 * j < piece_len[q]:
                out[0, first_warp + j] += (piece_len[q] - 32 * j + cta_size - 1) // cta_size
                out[1, first_warp + j] += 1
    return out


def compact_trips(steps: np.ndarray, stores: np.ndarray, block: int) -> dict:
    """Trips per warp of a compaction launch in blocks of `block` threads (tile t on block t), from each
    warp's steps and stores (`kernels.compact_warp_steps`)."""
    warps_per_block = block // 32
    warp = np.arange(steps.size)
    tile, k = warp // warps_per_block, warp % warps_per_block
    return _with_active({"warp": np.ones(steps.size), "step": steps.astype(np.float64),
                         "store": stores.astype(np.float64), "block": (k == 0).astype(np.float64),
                         "last": (tile == tile.max()).astype(np.float64), "wait": np.zeros(steps.size)})
