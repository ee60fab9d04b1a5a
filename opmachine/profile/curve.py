"""Service curves S(m): time per memory request at memory-level parallelism m (seed 003 §6.5, Fig. 6)."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from simdmodel.errors import InputError

__all__ = ["Curve", "closed_queue_curve", "curve_problem"]


@dataclass(frozen=True, eq=False)
class Curve:
    """Service time per request S(m) in ns at memory-level parallelism m (seed 003 §6.5, Fig. 6).

    `mlp` is strictly increasing and > 0; `ns` is > 0 and never increases with m (more requests in
    flight never make one request slower). Between sample points S is linear in log(m); outside
    them it is clamped to the end values. Both arrays are float64 copies and read-only.
    """

    mlp: np.ndarray
    ns: np.ndarray

    def __post_init__(self):
        try:
            mlp = np.array(self.mlp, dtype=np.float64)
            ns = np.array(self.ns, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InputError("service curve: mlp and ns must be arrays of numbers") from None
        problem = curve_problem(mlp, ns)
        if problem is not None:
            raise InputError(f"service curve: {problem}")
        mlp.flags.writeable = False
        ns.flags.writeable = False
        object.__setattr__(self, "mlp", mlp)
        object.__setattr__(self, "ns", ns)
        object.__setattr__(self, "_log_mlp", np.log(mlp))

    def __call__(self, m: float | np.ndarray) -> float | np.ndarray:
        """S(m) in ns for MLP `m` (a number or an array of them, each > 0)."""
        try:
            m_arr = np.asarray(m, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"service curve: MLP must be a number, got {m!r}") from None
        if not np.all(m_arr > 0):  # also catches NaN
            bad = m_arr[~(m_arr > 0)] if m_arr.ndim else m_arr
            raise InputError(f"service curve: MLP must be > 0, got {float(np.ravel(bad)[0])!r}")
        out = np.interp(np.log(m_arr), self._log_mlp, self.ns)
        return float(out) if np.ndim(out) == 0 else out

    def __eq__(self, other):
        if not isinstance(other, Curve):
            return NotImplemented
        return np.array_equal(self.mlp, other.mlp) and np.array_equal(self.ns, other.ns)

    __hash__ = None

    def __repr__(self):
        return f"Curve(mlp={self.mlp.tolist()}, ns={self.ns.tolist()})"


def curve_problem(mlp: np.ndarray, ns: np.ndarray) -> str | None:
    """What is wrong with a sampled curve, or None (the rules of the profile schema)."""
    if mlp.ndim != 1 or ns.ndim != 1:
        return "mlp and ns must be flat arrays"
    if len(mlp) != len(ns):
        return f"mlp has {len(mlp)} points but ns has {len(ns)}"
    if len(mlp) < 2:
        return f"needs at least 2 points, got {len(mlp)}"
    for label, values in (("mlp", mlp), ("ns", ns)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            return f"{label}[{bad[0]}] must be finite, got {values[bad[0]]!r}"
        bad = np.flatnonzero(values <= 0)
        if bad.size:
            return f"{label}[{bad[0]}] must be > 0, got {_num(values[bad[0]])}"
    bad = np.flatnonzero(np.diff(mlp) <= 0)
    if bad.size:
        i = bad[0] + 1
        return f"mlp must be strictly increasing (mlp[{i}] = {_num(mlp[i])} after {_num(mlp[i - 1])})"
    bad = np.flatnonzero(np.diff(ns) > 0)
    if bad.size:
        i = bad[0] + 1
        return (f"ns must not increase with mlp (ns[{i}] = {_num(ns[i])} after {_num(ns[i - 1])}): "
                "more requests in flight never make one slower")
    return None


def _num(x) -> str:
    return f"{float(x):g}"


def closed_queue_curve(latency_ns: float, peak_requests_per_ns: float, mlp=None) -> Curve:
    """S(m) = max(latency_ns / m, 1 / peak_requests_per_ns), sampled at `mlp` (default 1, 2, 4, ... 2**18).

    The latency/throughput form of a closed queue (seed 003 §6.5, §7.3): with m requests in flight
    a server that answers one in `latency_ns` completes m per latency, until its peak rate caps it.
    This is how the shipped, not yet measured, curves were derived. Values are rounded to 6
    significant digits, which keeps them non-increasing.
    """
    if not all(x > 0 and math.isfinite(x) for x in (latency_ns, peak_requests_per_ns)):
        raise InputError("closed_queue_curve: latency_ns and peak_requests_per_ns must be finite and > 0")
    mlp = np.asarray(2.0 ** np.arange(19) if mlp is None else mlp, dtype=np.float64)
    ns = np.maximum(latency_ns / mlp, 1.0 / peak_requests_per_ns)
    ns = np.array([float(f"{x:.6g}") for x in ns])
    return Curve(mlp, ns)
