"""Raw table -> S(m) curves, and the profile text that goes with them (seed 003 §6.5, Fig. 6).

Plain pandas/numpy, no GPU: the checks of a raw measurement table (one row per timed launch,
RAW_COLUMNS), the curves extracted from it (median over repeats per configuration, the smallest or
the median over the configurations of one m, a running minimum over m, 6 significant digits), the
`_one_warp` curves and the L1 side numbers, and the header comment, hardware notes and [service]
provenance written into the profile. The sweep that makes the table is `sweep`.
"""
from __future__ import annotations

import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from simdmodel.errors import InputError

CURVES = ("l2_hit", "row_hit", "row_miss", "l2_same")
"""The curves measured here: the profile's server classes (seed 003 Fig. 6) and the same-sector one."""
ONE_WARP = ("l2_hit", "row_hit", "row_miss")
"""Classes whose one-warp runs (warps = 1, per_warp <= 32) also give a `<class>_one_warp` curve."""
SIDE_CURVES = ("l1_ca", "l1_cg")
"""Side measurement: an L1-resident buffer read with ld.global.ca (through L1) and .cg (L2 only)."""
RAW_COLUMNS = ("curve", "warps", "per_warp", "mlp", "requests", "elapsed_ns", "ns_per_request")
SECTOR_BYTES = 32


def _one_line(text) -> str:
    return " ".join(str(text).split())


def typed_table(table, label: str, columns: tuple, known: tuple, floats: tuple) -> pd.DataFrame:
    """The shared checks of a raw table, typed: `columns` present, at least one row, the first column's
    value one of `known`, every other column a finite number > 0 and, unless in `floats`, an integer."""
    if not isinstance(table, pd.DataFrame):
        raise InputError(f"{label}: expected a table, got {type(table).__name__}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{label}: missing column(s) {', '.join(missing)} (needs {', '.join(columns)})")
    if table.empty:
        raise InputError(f"{label}: no rows")
    name = columns[0]
    out = pd.DataFrame({name: table[name].astype(str).str.strip()})
    bad = ~out[name].isin(list(known))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{label}: row {i + 1}: unknown {name} {_one_line(out[name].iloc[i])[:40]!r} "
                         f"(known: {', '.join(known)})")
    for column in columns[1:]:
        values = pd.to_numeric(table[column], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values) | (values <= 0)
        if column not in floats:
            bad |= np.isfinite(values) & ((values != np.round(values)) | (values > 2**62))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            kind = "a number > 0" if column in floats else "an integer >= 1"
            raise InputError(f"{label}: row {i + 1}: {column} must be {kind}, got "
                             f"{_one_line(table[column].iloc[i])[:40]!r}")
        out[column] = values if column in floats else values.astype(np.int64)
    return out


def refuse_first(checks, label: str) -> None:
    """InputError naming the first row of the first (mask, message) check that fails."""
    for bad, message in checks:
        bad = np.asarray(bad, dtype=bool)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(f"{label}: row {i + 1}: {message}")


def read_table(path, check, comment: str | None = None) -> pd.DataFrame:
    """Read a raw CSV as text and hand it to `check(table, label)`; InputError on an unreadable file."""
    path = Path(path)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8", comment=comment)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory") from None
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, ValueError, OSError) as error:
        raise InputError(f"{path}: not a readable CSV table ({_one_line(error)[:120]})") from None
    return check(table, str(path))


def check_raw(table: pd.DataFrame, label: str = "raw table") -> pd.DataFrame:
    """Validate a raw measurement table and return it typed (ints, floats); InputError names the row.

    Rules: the RAW_COLUMNS are present; curve is a known name; warps, per_warp, requests are
    integers >= 1 with mlp = warps x per_warp and requests a multiple of mlp; elapsed_ns > 0 and
    finite; ns_per_request = elapsed_ns / requests (relative 1e-6).
    """
    out = typed_table(table, label, RAW_COLUMNS, CURVES + SIDE_CURVES, ("elapsed_ns", "ns_per_request"))
    refuse_first((
        (out["mlp"] != out["warps"] * out["per_warp"], "mlp must equal warps x per_warp"),
        (out["requests"] % out["mlp"] != 0, "requests must be a multiple of mlp (steps x chains)"),
        (~np.isclose(out["ns_per_request"], out["elapsed_ns"] / out["requests"], rtol=1e-6, atol=0),
         "ns_per_request must equal elapsed_ns / requests"),
    ), label)
    return out


def read_raw(path) -> pd.DataFrame:
    """Read and validate a raw measurement CSV (columns RAW_COLUMNS); InputError on any problem."""
    return read_table(path, check_raw)


def _round6(x: np.ndarray) -> np.ndarray:
    """Round to 6 significant digits (monotone, so a non-increasing array stays non-increasing)."""
    return np.array([float(f"{v:.6g}") for v in x], dtype=np.float64)


def config_medians(raw: pd.DataFrame) -> pd.DataFrame:
    """Median ns_per_request over repeats for each (curve, warps, per_warp), with its mlp."""
    raw = check_raw(raw)
    return (raw.groupby(["curve", "warps", "per_warp", "mlp"], as_index=False)["ns_per_request"].median()
            .sort_values(["curve", "mlp", "warps"], kind="stable").reset_index(drop=True))


def curve_samples(raw: pd.DataFrame, curves=None, across: str = "min") -> dict[str, tuple[list[float], list[float]]]:
    """S(m) samples (mlp, ns) per curve from a raw table, ready for `write_gpu_curves`.

    For each configuration (warps, per_warp) the median over its repeats; for each m the smallest
    (`across="min"`, the default) or the median (`"median"`) of the configurations with that m;
    then a running minimum over increasing m (S must not increase with m, as the profile requires);
    then 6 significant digits. The smallest is the server's best rate at that m: splits of the
    same m differ in how they use the SMs and, for row_hit, in how many streams share the open
    rows (32 adjacent sectors per warp keep rows open; 8448 one-sector streams do not).
    `curves` defaults to the CURVES the table holds.
    """
    if across not in ("min", "median"):
        raise InputError(f"across must be 'min' or 'median', got {across!r}")
    medians = config_medians(raw)
    if curves is None:
        curves = [name for name in CURVES if (medians["curve"] == name).any()]
    out = {}
    for name in curves:
        rows = medians[medians["curve"] == name]
        by_mlp = rows.groupby("mlp")["ns_per_request"].agg(across).sort_index()
        if len(by_mlp) < 2:
            raise InputError(f"raw table: curve {name} needs at least 2 distinct mlp values, got {len(by_mlp)}")
        ns = _round6(np.minimum.accumulate(by_mlp.to_numpy(dtype=np.float64)))
        out[name] = ([float(m) for m in by_mlp.index], ns.tolist())
    return out


def one_warp_samples(raw: pd.DataFrame) -> dict[str, tuple[list[float], list[float]]]:
    """`<class>_one_warp` samples (mlp = per_warp, 1..32, ns) from the runs with a single warp: the
    median over repeats, a running minimum over m, 6 significant digits. Classes without at least
    two such runs are left out."""
    medians = config_medians(raw)
    out = {}
    for name in ONE_WARP:
        rows = medians[(medians["curve"] == name) & (medians["warps"] == 1) & (medians["per_warp"] <= 32)]
        rows = rows.sort_values("per_warp")
        if len(rows) >= 2:
            ns = _round6(np.minimum.accumulate(rows["ns_per_request"].to_numpy(dtype=np.float64)))
            out[f"{name}_one_warp"] = ([float(m) for m in rows["per_warp"]], ns.tolist())
    return out


def side_numbers(raw: pd.DataFrame) -> dict[str, float]:
    """S(1) in ns for each side curve present (l1_ca, l1_cg): median over repeats at mlp 1."""
    medians = config_medians(raw)
    one = medians[medians["mlp"] == 1]
    return {name: float(one.loc[one["curve"] == name, "ns_per_request"].median())
            for name in SIDE_CURVES if (one["curve"] == name).any()}


def hardware_notes(path) -> dict[str, str]:
    """The trailing `# note` of each key in a profile file's [hardware] table (where a number comes from)."""
    notes, section = {}, None
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        header = re.match(r"\s*\[([^\]]*)\]", line)
        if header:
            section = header.group(1).strip()
            continue
        match = re.match(r"\s*([A-Za-z0-9_]+)\s*=\s*[^#\"']*#\s*(.*\S)\s*$", line)
        if section == "hardware" and match:
            notes[match.group(1)] = match.group(2)
    return notes


def method_comment(samples: dict, side: dict, setup: dict) -> str:
    """The profile's header comment: how the curves were measured, and their end points."""
    paragraphs = [
        ("Service curves measured by gpu_validate.microbench (gpu_validate/cuda/microbench.cu). A request "
        "is one 32-byte sector load with ld.global.cg (L2 only: the model has no L1), and every load is "
        "a dependent pointer chase (the loaded word is the next sector), so each chain has exactly one "
        "request in flight. m = warps x per_warp: resident warps (1, 2, 4, ... up to sms x "
        "max_warps_per_sm, one warp per block, two when blocks run out, spread over the SMs) times "
        f"chains per warp (per_warp = {', '.join(map(str, setup['per_warp']))}: one per active lane up to "
        "32, then 2 or 4 per lane). S(m) = elapsed / requests, timed with CUDA events around one launch "
        f"of about {setup['target_ms']:g} ms after a warm-up launch, median of {setup['repeats']} repeats; "
        f"then the {'smallest' if setup.get('across', 'min') == 'min' else 'median'} over the (warps, "
        "per_warp) splits with the same m (splits differ in how they use the SMs and, for row_hit, in "
        "how many streams share the open rows), a running minimum over m (S must not increase with m), "
        "6 significant digits. The raw table keeps every split."),
        (f"l2_hit: random cyclic chase over a warmed {setup['l2_mib']:g} MiB buffer. row_miss: random "
        f"cyclic chase over {setup['dram_mib']:g} MiB (each hop another DRAM row). row_hit: sequential "
        f"walk over {setup['dram_mib']:g} MiB, the lanes of a warp on adjacent sectors and each step the "
        f"next ones, so a DRAM row serves many requests in a row. L2 is flushed (a {setup['flush_mib']:g} "
        "MiB read) before every DRAM launch."),
        ("l2_same: every chain (one lane per warp, per_warp = 1, 2, 4, 8 chains) on the same sector, so "
         "one L2 slice serves them all. <class>_one_warp: the runs with one warp, m = per_warp = 1..32 "
         "lanes on distinct sectors, so m x S(m) is the latency of one warp-level load of m sectors."),
        "Measured: " + "; ".join(f"{k} S(1) = {ns[0]:.4g} ns, S({mlp[-1]:.0f}) = {ns[-1]:.4g} ns "
                                 f"({SECTOR_BYTES / ns[-1]:.0f} GB/s)" for k, (mlp, ns) in samples.items()
                                 if k in CURVES) + ".",
        "One warp, m = 32: " + "; ".join(f"{k.removesuffix('_one_warp')} {mlp[-1] * ns[-1]:.4g} ns"
                                         for k, (mlp, ns) in samples.items() if k.endswith("_one_warp")) + ".",
    ]
    if side:
        paragraphs.append("L1 side number (one lane chasing over an L1-resident 16 KiB buffer): " + ", ".join(
            f"{k.replace('l1_', 'ld.global.')} S(1) = {v:.4g} ns" for k, v in side.items()) + ".")
    return "\n".join(line for text in paragraphs for line in textwrap.wrap(text, 98))


def curve_summary(samples: dict) -> list[str]:
    """One line per curve for the console: S(1), the last S(m) and the bandwidth it means."""
    return [f"{name}: S(1) = {ns[0]:.4g} ns, S({mlp[-1]:.0f}) = {ns[-1]:.4g} ns "
            f"({SECTOR_BYTES / ns[-1]:.0f} GB/s), {len(mlp)} points" for name, (mlp, ns) in samples.items()]


def curve_provenance(across: str, by: str = "gpu_validate.microbench") -> str:
    """[service] provenance text of curves measured by this sweep (`by` names the command's module)."""
    via = "" if by == "gpu_validate.microbench" else " (the gpu_validate.microbench sweep)"
    return (f"measured by {by}{via}: dependent pointer chases of 32-byte sectors (ld.global.cg), "
            f"S(m) = elapsed / requests, median over repeats, {across} over warp/chain splits, running minimum over m")

