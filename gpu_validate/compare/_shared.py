"""What every comparison shares: the launch and round keys, table checks, the relative error
err(p, m) and the statistics (Pearson r, worst error, median) of gpu_validate.compare.

Definitions are in the package docstring (gpu_validate/compare/__init__.py).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from opmachine.bfs_machine import SERVERS
from simdmodel.errors import InputError

KEY = ("graph", "kernel", "source", "level", "phase")
ROUND = ("graph", "kernel", "source", "level")
LOAD_SERVERS = tuple(s.lower() for s in SERVERS if s != "OP")
ALL_SERVERS = tuple(s.lower() for s in SERVERS)
EXPANSION_PHASES = ("topo", "expand")


def _empty(table) -> bool:
    return table is None or len(table) == 0


def _check(table: pd.DataFrame, columns, name: str, keys=KEY) -> pd.DataFrame:
    """`table` with `columns` present and one row per `keys`, or an InputError naming what is wrong."""
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{name} table lacks column(s) {', '.join(missing)}")
    if table.duplicated(list(keys)).any():
        first = table.loc[table.duplicated(list(keys)), list(keys)].iloc[0].to_dict()
        raise InputError(f"{name} table has two rows for {first}")
    return table


def time_mode(predicted) -> str:
    """The mode judged against measured times: "warm" when `predicted` has warm rows (launches timed
    back to back find the L2 as the previous launch left it), else "simulation"."""
    if not _empty(predicted) and "mode" in predicted.columns and (predicted["mode"] == "warm").any():
        return "warm"
    return "simulation"


def time_models(predicted) -> dict:
    """The time model (`opmachine.predict.TIME_MODELS`: how a launch's time follows from its counts) of
    each prediction mode in `predicted`, read from its `time_model` column: {mode: model}, several
    models of one mode joined by "+" in sorted order. Empty when the table has no such column."""
    if _empty(predicted) or "time_model" not in predicted.columns or "mode" not in predicted.columns:
        return {}
    known = predicted[["mode", "time_model"]].dropna().drop_duplicates()
    return {str(mode): "+".join(sorted(map(str, part["time_model"])))
            for mode, part in known.groupby("mode", sort=True)}


def _simulation(predicted, mode: str = "simulation") -> pd.DataFrame | None:
    """Rows of simulated `mode` (a table without `mode` is taken as all simulation)."""
    if _empty(predicted):
        return None
    if "mode" in predicted.columns:
        predicted = predicted[predicted["mode"] == mode]
    return None if predicted.empty else predicted


def _lookup(base: pd.DataFrame, other, columns, keys=KEY) -> pd.DataFrame:
    """`other`'s `columns` aligned to `base`'s rows on `keys` (NaN where `other` has no row)."""
    if _empty(other):
        return pd.DataFrame({c: np.nan for c in columns}, index=base.index)
    merged = base[list(keys)].merge(other[list(keys) + list(columns)], on=list(keys), how="left")
    merged.index = base.index
    return merged[list(columns)].astype(float)


def _rel(pred, meas):
    """err(p, m) = (p - m) / m elementwise: 0 when equal, NaN when m == 0 != p or either is missing."""
    p = np.asarray(pred, dtype=float)
    m = np.asarray(meas, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(m != 0, (p - m) / np.where(m != 0, m, 1.0), np.nan)
    return np.where(p == m, 0.0, out)


def _flag(values, valid) -> pd.Series:
    """A nullable boolean column: `values` where `valid`, <NA> elsewhere."""
    out = pd.Series(np.asarray(values, dtype=bool), dtype="boolean")
    out[~np.asarray(valid, dtype=bool)] = pd.NA
    return out


def pearson_r(x, y) -> float:
    """Pearson correlation of two equal-length samples; NaN with < 3 points or zero variance."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.size < 3:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    sxx, syy = float(dx @ dx), float(dy @ dy)
    if sxx == 0 or syy == 0:
        return math.nan
    return float(np.clip((dx @ dy) / math.sqrt(sxx * syy), -1.0, 1.0))


def _worst(errors: np.ndarray) -> float:
    """The signed error of largest magnitude (NaN for no errors)."""
    errors = errors[np.isfinite(errors)]
    return float(errors[np.argmax(np.abs(errors))]) if errors.size else math.nan


def _median(values) -> float:
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    return float(np.median(values)) if values.size else math.nan
