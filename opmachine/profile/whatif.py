"""What-if GPU profiles: a measured profile with one or more of its hardware figures scaled.

A sweep asks "what if this GPU had twice the L2, half the DRAM bandwidth, more SMs?". Each what-if
is a factor on one knob of a base profile; `derive_profile` applies them and names the result
`BASE:KNOB*FACTOR[,KNOB*FACTOR...]` (e.g. `h200:l2*2`), which `parse_profile_spec` reads back.

The knobs, and what a factor f changes (everything else, curves included, stays as measured):

- `l2`: `l2_bytes` x f, rounded to a whole number of sets (ways x line), at least one set; a measured
  [l2_capacity] (what the model's L2 holds) scales by f too.
- `dram`: DRAM bandwidth x f. `dram_bandwidth_gbs` x f, and every DRAM service curve (row hits,
  row misses, their one-warp forms) S(m) -> S(m) + S_min (1/f - 1), where S_min is the curve's
  floor: the per-request time at full bandwidth becomes S_min / f while the latency-bound part
  at low MLP keeps its measured value (S(m) ~ latency / m + 1 / bandwidth).
- `l2bw`: L2 bandwidth x f, the same rule on `l2_bandwidth_gbs` and the L2-hit curves.
- `sms`: the SM count x f, rounded, at least 1 (more resident warps and more issue slots; the
  per-SM figures and the GPU-wide service curves stay).
- `launch`: the per-launch constants x f: `launch_overhead_ns`, `grid_scan_ns`, the
  `[compaction]` table and the `[store_flush]` costs (what, say, CUDA graphs or a cheaper scan would
  save).
"""
from __future__ import annotations

import dataclasses
import math
import re

from simdmodel.errors import InputError

from .compaction import CompactionCosts
from .curve import Curve
from .gpu_profile import GPUProfile
from .schema import SAME_SECTOR_CURVE

__all__ = ["KNOBS", "KNOB_FIELDS", "derive_profile", "format_what_if", "parse_profile_spec", "parse_what_if",
           "what_if_value"]

KNOBS = {
    "l2": "L2 capacity (l2_bytes)",
    "dram": "DRAM bandwidth (dram_bandwidth_gbs and the DRAM service curves' floor)",
    "l2bw": "L2 bandwidth (l2_bandwidth_gbs and the L2-hit service curves' floor)",
    "sms": "SM count",
    "launch": "per-launch constants (launch overhead, grid scan, compaction table, store flush)",
}
"""Each what-if knob and the hardware figure it scales."""
KNOB_FIELDS = {"l2": "l2_bytes", "dram": "dram_bandwidth_gbs", "l2bw": "l2_bandwidth_gbs", "sms": "sms",
               "launch": "launch_overhead_ns"}
"""The GPUProfile field that stands for each knob's value (a sweep's x axis)."""

DRAM_CURVES = ("row_hit", "row_miss", "dram", "row_hit_one_warp", "row_miss_one_warp", "dram_one_warp")
L2_CURVES = ("l2_hit", "l2_hit_one_warp", SAME_SECTOR_CURVE)

_FACTOR_RE = re.compile(r"^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$")


def _factor(text: str, where: str) -> float:
    text = text.strip()
    if not _FACTOR_RE.match(text):
        raise InputError(f"{where}: factor {text!r} is not a positive number")
    value = float(text)
    if not (math.isfinite(value) and value > 0):
        raise InputError(f"{where}: factor {text!r} must be a positive finite number")
    return value


def _knob(text: str, where: str) -> str:
    knob = text.strip().lower()
    if knob not in KNOBS:
        raise InputError(f"{where}: unknown what-if knob {text.strip()!r} (choose from {', '.join(KNOBS)})")
    return knob


def parse_what_if(text: str) -> tuple[str, tuple[float, ...]]:
    """`KNOB=F1[,F2...]` (a sweep's --what-if) -> (knob, factors), e.g. 'l2=0.5,2' -> ('l2', (0.5, 2.0))."""
    where = f"what-if {text!r}"
    knob, sep, factors = str(text).partition("=")
    if not sep or not factors.strip():
        raise InputError(f"{where}: expected KNOB=FACTOR[,FACTOR...], e.g. l2=0.5,2")
    values = tuple(_factor(part, where) for part in factors.split(","))
    if len(set(values)) != len(values):
        raise InputError(f"{where}: a factor is repeated")
    return _knob(knob, where), values


def format_what_if(changes: dict[str, float]) -> str:
    """'l2*2,dram*0.5' for {'l2': 2.0, 'dram': 0.5} (knobs in KNOBS order, factors of 1 left out);
    '' for no change."""
    return ",".join(f"{knob}*{changes[knob]:g}" for knob in KNOBS if changes.get(knob, 1.0) != 1.0)


def parse_profile_spec(spec: str) -> tuple[str, dict[str, float]]:
    """`BASE[:KNOB*FACTOR[,KNOB*FACTOR...]]` -> (base, {knob: factor}); 'h200:l2*2' -> ('h200', {'l2': 2.0})."""
    base, sep, rest = str(spec).partition(":")
    where = f"profile {spec!r}"
    if not base.strip():
        raise InputError(f"{where}: no base profile before ':'")
    changes: dict[str, float] = {}
    if sep:
        if not rest.strip():
            raise InputError(f"{where}: expected KNOB*FACTOR after ':', e.g. h200:l2*2")
        for part in rest.split(","):
            knob, star, factor = part.partition("*")
            if not star:
                raise InputError(f"{where}: {part.strip()!r} is not KNOB*FACTOR")
            knob = _knob(knob, where)
            if knob in changes:
                raise InputError(f"{where}: knob {knob!r} given twice")
            changes[knob] = _factor(factor, where)
    return base.strip(), changes


def _shift_floor(curve: Curve, factor: float) -> Curve:
    """S(m) + S_min (1/f - 1): the bandwidth-bound floor scaled by 1/f, the latency part kept."""
    floor = float(curve.ns.min())
    return Curve(curve.mlp, curve.ns + floor * (1.0 / factor - 1.0))


def _scaled_curves(curves: dict, names: tuple[str, ...], factor: float) -> dict:
    return {name: _shift_floor(curve, factor) if name in names else curve for name, curve in curves.items()}


def _scaled_compaction(costs: CompactionCosts | None, factor: float) -> CompactionCosts | None:
    if costs is None:
        return None
    return dataclasses.replace(costs, **{key: tuple(value * factor for value in getattr(costs, key))
                                         for key in ("ns", "p10_ns", "p90_ns")})


def derive_profile(profile: GPUProfile, changes: dict[str, float]) -> GPUProfile:
    """`profile` with each knob of `changes` scaled by its factor (see the module docstring), named
    `NAME:KNOB*FACTOR,...`; the profile itself when `changes` is empty."""
    if not isinstance(profile, GPUProfile):
        raise InputError(f"what-if profiles derive from a GPU profile, got {type(profile).__name__}")
    if not changes:
        return profile
    fields: dict = {}
    curves = dict(profile.curves)
    for knob, factor in changes.items():
        knob = _knob(knob, "what-if")
        if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not (math.isfinite(factor)
                                                                                     and factor > 0):
            raise InputError(f"what-if {knob}: factor must be a positive finite number, got {factor!r}")
        if knob == "l2":
            set_bytes = profile.l2_ways * profile.l2_line_bytes
            fields["l2_bytes"] = max(1, round(profile.l2_bytes * factor / set_bytes)) * set_bytes
            if profile.l2_capacity is not None:
                fields["l2_capacity"] = profile.l2_capacity.scaled(factor)
        elif knob == "dram":
            fields["dram_bandwidth_gbs"] = profile.dram_bandwidth_gbs * factor
            curves = _scaled_curves(curves, DRAM_CURVES, factor)
        elif knob == "l2bw":
            fields["l2_bandwidth_gbs"] = profile.l2_bandwidth_gbs * factor
            curves = _scaled_curves(curves, L2_CURVES, factor)
        elif knob == "sms":
            fields["sms"] = max(1, round(profile.sms * factor))
        else:
            fields["launch_overhead_ns"] = profile.launch_overhead_ns * factor
            fields["grid_scan_ns"] = profile.grid_scan_ns * factor
            fields["compaction"] = _scaled_compaction(profile.compaction, factor)
            if profile.store_flush is not None:
                fields["store_flush"] = profile.store_flush.scaled(factor)
    label = format_what_if(changes)
    if not label:  # every factor 1
        return profile
    return dataclasses.replace(
        profile, name=f"{profile.name}:{label}", curves=curves,
        description=f"{profile.description}, what-if {label}", **fields)


def what_if_value(profile: GPUProfile, knob: str) -> float:
    """The hardware figure a knob scales, as `profile` has it (for a sweep's x axis)."""
    return float(getattr(profile, KNOB_FIELDS[_knob(knob, "what-if")]))
