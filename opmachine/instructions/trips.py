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
- `lookback`, `poll`: the compaction's decoupled look-back, one step and one poll per warp whose
  lanes have a predecessor tile (tile t, warp k of its block: t >= 1, and t - 1 >= 32 k), as when
  every predecessor is already done (no spinning).
"""
from __future__ import annotations

import numpy as np

from ..kernels._jobs import ANI, EDL, ERL, OP


def _per_warp(trace, server: int) -> np.ndarray:
    return np.bincount(trace.warp[trace.server == server], minlength=trace.warps).astype(np.float64)


def steps_per_warp(units: int, unit_warps: int, warps: int) -> np.ndarray:
    """Steps per launched warp when unit c runs on the `unit_warps` warps of slot c mod (warps // unit_warps)."""
    slots = max(warps // unit_warps, 1)
    slot = np.arange(warps) // unit_warps
    steps = np.where(slot < units, (units - slot + slots - 1) // slots, 0)
    return np.where(slot < slots, steps, 0).astype(np.float64)


def _common(trace) -> dict:
    return {"warp": np.ones(trace.warps), "vertex": _per_warp(trace, ERL) / 2, "round": _per_warp(trace, EDL),
            "store": _per_warp(trace, OP)}


def _with_active(trips: dict) -> dict:
    return {**trips, "active": (trips["step"] > 0).astype(np.float64)}


def topo_trips(trace) -> dict:
    """Trips per warp of a `topo` launch."""
    return _with_active({**_common(trace), "step": _per_warp(trace, ANI)})


def expansion_trips(trace, geometry, front_size: int) -> dict:
    """Trips per warp of an expansion over a queue of `front_size` entries with the strategy's `geometry`."""
    units = -(-front_size // geometry.unit_entries)
    common = _common(trace)
    search = int(np.ceil(np.log2(geometry.unit_entries))) if geometry.unit_entries > 1 else 0
    return _with_active({**common, "step": steps_per_warp(units, geometry.unit_warps, trace.warps),
                         "search": common["round"] * search})


def compact_trips(steps: np.ndarray, stores: np.ndarray, block: int) -> dict:
    """Trips per warp of a compaction launch in blocks of `block` threads (tile t on block t), from each
    warp's steps and stores (`kernels.compact_warp_steps`)."""
    warps_per_block = block // 32
    warp = np.arange(steps.size)
    tile, k = warp // warps_per_block, warp % warps_per_block
    return _with_active({"warp": np.ones(steps.size), "step": steps.astype(np.float64),
                         "store": stores.astype(np.float64), "block": (k == 0).astype(np.float64),
                         "lookback": (tile >= 1).astype(np.float64),
                         "poll": ((tile >= 1) & (tile - 1 >= 32 * k)).astype(np.float64)})
