"""Nsight Compute (ncu) as a subprocess: a fixed metric list, the command line, and a CSV parser.

The parser turns ncu's `--csv --page raw` log into a tidy DataFrame, one row per profiled kernel
launch, with short column names (`ld_inst`, `l2_read_sectors`, ...; see `METRICS`). That page
also lists every rollup of each metric (.avg/.max/.min/.sum) and launch and device attributes;
only the exact names asked for are kept. Counters are taken with `--cache-control all` (L2
flushed before every kernel, as the model assumes a cold L2 per round) and `--clock-control none`
(the card's clocks are left as found). ncu replays each profiled kernel over several passes,
saving and restoring the memory it writes, so the target computes the same result as unprofiled.
"""
from __future__ import annotations

import csv
import glob
import math
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

import pandas as pd

from simdmodel.errors import DataWarning, InputError

_HOPPER = {
    # Warp-level global loads / stores with at least one thread predicated on: the model's jobs.
    # (smsp__inst_executed_op_global_* also counts fully predicated-off instructions, which the
    # compiler emits for short conditional blocks; they move no data.)
    "ld_inst": "smsp__sass_inst_executed_op_global_ld.sum",
    "st_inst": "smsp__sass_inst_executed_op_global_st.sum",
    "ld_issued": "smsp__inst_executed_op_global_ld.sum",
    "st_issued": "smsp__inst_executed_op_global_st.sum",
    "thread_inst_per_inst": "smsp__thread_inst_executed_per_inst_executed.ratio",
    "l1_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
    "l2_read_hits": "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "l2_read_misses": "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
    "l2_write_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",
    "dram_read_sectors": "dram__sectors_read.sum",
    "dram_write_sectors": "dram__sectors_write.sum",
    "achieved_occupancy_pct": "sm__warps_active.avg.pct_of_peak_sustained_active",
    "duration_ns": "gpu__time_duration.sum",
    # Warp instructions executed (issued, predicated-off ones included), all and shared-memory ones:
    # the instruction model's counts from the SASS listings.
    "inst_executed": "smsp__inst_executed.sum",
    "shared_ld_inst": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st_inst": "smsp__inst_executed_op_shared_st.sum",
    # Warp instructions the ALU pipe executed: the model's ALU-pipe server (`instructions.ALU_PIPE`).
    "alu_pipe_inst": "sm__inst_executed_pipe_alu.sum",
}

METRICS: dict[str, dict[str, str]] = {"sm_90": _HOPPER}
"""Short column name -> ncu metric name, per architecture (`sm_XY`). The thirteen names of
tests/fixtures/ncu/metrics_found.txt were found by `ncu --query-metrics` for gh100, ga100, ad102
and gb100 alike, so `metrics_for` uses this map for any architecture, with a warning for one it
was not recorded on. Not in that record: the two `smsp__sass_*` names (software-patched counters,
which --query-metrics does not list), the three instruction counts added after it,
smsp__inst_executed.sum and smsp__inst_executed_op_shared_{ld,st}.sum, and sm__inst_executed_pipe_alu.sum,
which Nsight Compute reported on gh100 (`gpu_validate.coupling_counters`). The three instruction counts are the
base counter smsp__inst_executed and its op_shared_ld / op_shared_st breakdowns, the same counter and
unit (smsp) as the op_global_ld / op_global_st breakdowns the record found on all four chips; they
are not yet confirmed for gh100 by --query-metrics. tests/fixtures/ncu/record.sh looks every name
of this map up per chip, so its next run records them; a name ncu lacks gives NaN in its column
and one DataWarning (`parse_ncu_csv`), never a wrong number."""

DEFAULT_ARCH = "sm_90"

COUNT_COLUMNS = frozenset({
    "ld_inst", "st_inst", "ld_issued", "st_issued", "l1_requests", "l1_sectors",
    "l2_read_sectors", "l2_read_hits", "l2_read_misses", "l2_write_sectors",
    "dram_read_sectors", "dram_write_sectors", "inst_executed", "shared_ld_inst", "shared_st_inst", "alu_pipe_inst",
})
"""Columns that are event counts: int64 when every launch has an integral value, else float."""

_FALLBACKS = ["/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"]
_TIME_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6,
            "s": 1e9, "second": 1e9}
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NUMBER = re.compile(r"[+-]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_MISSING = {"", "n/a", "N/A", "nan", "NaN", "-"}
_REQUIRED = ("ID", "Kernel Name", "Block Size", "Grid Size")


class NcuUnavailable(InputError):
    """Nsight Compute is not installed where we looked."""


def metrics_for(arch: str | None = None) -> dict[str, str]:
    """The metric map for an architecture such as "sm_90" (None: DEFAULT_ARCH). An architecture with
    no recorded map gets Hopper's names and a DataWarning saying so (parse_ncu_csv then warns about
    any name that ncu did not report)."""
    arch = arch or DEFAULT_ARCH
    if arch not in METRICS:
        warnings.warn(f"no Nsight Compute metric names recorded for {arch}; using {DEFAULT_ARCH}'s (those of "
                      "tests/fixtures/ncu/metrics_found.txt were found on gh100, ga100, ad102 and gb100)", DataWarning,
                      stacklevel=2)
    return dict(METRICS.get(arch, METRICS[DEFAULT_ARCH]))


def find_ncu() -> str:
    """Path of the `ncu` executable: PATH first, then CUDA's and Nsight Compute's usual homes."""
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in _FALLBACKS:
        for path in sorted(glob.glob(pattern), reverse=True):  # newest version directory first
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    raise NcuUnavailable("Nsight Compute (ncu) not found: install it or put it on PATH; "
                         "timing still works without --counters")


def ncu_command(target_argv, log_path, kernel_regex: str = "^bfs_", metrics: dict | None = None,
                extra=(), ncu: str = "ncu") -> list[str]:
    """The ncu argv that profiles every kernel of `target_argv` whose function name (no template
    arguments or parameters) matches `kernel_regex`, writing CSV (and ncu's own messages) to
    `log_path`. The target's stdout and stderr stay on ncu's stdout and stderr."""
    names = list((metrics or metrics_for()).values())
    return [ncu, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none",
            "--cache-control", "all", "--kernel-name-base", "function",
            "--kernel-name", f"regex:{kernel_regex}", "--metrics", ",".join(names),
            "--log-file", str(log_path), *extra, *map(str, target_argv)]


def run_ncu(target_argv, kernel_regex: str = "^bfs_", metrics: dict | None = None,
            timeout: float | None = None, env: dict | None = None,
            log_path: str | os.PathLike | None = None) -> pd.DataFrame:
    """Profile `target_argv` under ncu and return `parse_ncu_csv` of its log.

    `env` adds variables to this process's environment; `log_path` keeps the raw log there
    (otherwise it goes to a temporary directory). The target's stdout is in `df.attrs["stdout"]`.
    Raises a one-line InputError when ncu is missing, may not read the counters, the target fails,
    or no kernel matched."""
    ncu = find_ncu()
    metrics = metrics or metrics_for()
    with tempfile.TemporaryDirectory(prefix="ncu-") as tmp:
        log = Path(log_path) if log_path is not None else Path(tmp) / "ncu.csv"
        argv = ncu_command(target_argv, log, kernel_regex, metrics, ncu=ncu)
        full_env = {**os.environ, **(env or {})}
        try:
            proc = subprocess.run(argv, check=False, capture_output=True, text=True,
                                  timeout=timeout, env=full_env, errors="replace")
        except subprocess.TimeoutExpired:
            raise InputError(f"ncu: the profiled program ran past the {timeout} s limit") from None
        except OSError as exc:
            raise NcuUnavailable(f"ncu could not be started ({ncu}): {exc.strerror}") from None
        text = log.read_text(errors="replace") if log.is_file() else ""
    _raise_for_failure(text, proc, kernel_regex)
    df = parse_ncu_csv(text, source=str(log_path or "ncu log"), metrics=metrics)
    if df.empty:
        raise InputError(f"ncu profiled no kernel whose name matches {kernel_regex!r}")
    df.attrs["stdout"] = proc.stdout
    return df


def _raise_for_failure(text: str, proc: subprocess.CompletedProcess, kernel_regex: str) -> None:
    """One clear line for the ways a profiling run fails, judged from ncu's log and streams."""
    everything = "\n".join((text, proc.stdout or "", proc.stderr or ""))
    if "ERR_NVGPUCTRPERM" in everything:
        raise InputError("ncu may not read the GPU performance counters (ERR_NVGPUCTRPERM): run it "
                         "as root, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0 "
                         "(see https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    errors = [ln.strip() for ln in everything.splitlines() if ln.startswith("==ERROR==")]
    app_failed = any("application returned an error code" in e for e in errors)
    if proc.returncode != 0 or errors:
        own = [e for e in errors if "application returned an error code" not in e]
        target = [ln.strip() for ln in (proc.stderr or "").splitlines()
                  if ln.strip() and not ln.startswith("==")]
        if own and not app_failed:
            raise InputError(f"ncu failed: {own[0].removeprefix('==ERROR==').strip()}")
        last = target[-1] if target else (errors[-1] if errors else f"exit status {proc.returncode}")
        raise InputError(f"the profiled program failed under ncu: {last}")
    if "No kernels were profiled" in everything:
        raise InputError(f"ncu profiled no kernel whose name matches {kernel_regex!r}")


def kernel_base_name(signature: str) -> str:
    """Function name without return type, namespaces, template arguments or parameters:
    "void bfs_expand_group<4>(const int *, int)" -> "bfs_expand_group"."""
    s = signature.replace("(anonymous namespace)", "anon").strip()
    cut = min([i for i in (s.find("<"), s.find("(")) if i >= 0], default=len(s))
    head = s[:cut].split()
    return head[-1].split("::")[-1] if head else s


def _csv_lines(text: str):
    """(1-based line number, fields, None), or (line number, None, the csv error), for each line of
    `text` that is neither blank nor one of ncu's own messages ("==...")."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.startswith("=="):
            continue
        try:
            yield lineno, next(csv.reader([line])), None
        except (csv.Error, StopIteration) as exc:
            yield lineno, None, exc


def parse_ncu_csv(text: str, source: str = "ncu log", metrics: dict | None = None) -> pd.DataFrame:
    """Parse ncu's `--csv --page raw` output into one row per profiled launch, in ncu's ID order.

    Columns: launch (0..k-1), kernel_name (base name), kernel_signature (as ncu printed it),
    block and grid (threads per block and blocks, x only), then one column per short metric name
    of `metrics` (default `metrics_for()`), NaN where ncu printed "n/a", nothing, or lacked the
    metric, with one DataWarning naming each such metric and how many launches lack it. Lines
    starting with "==" (ncu's own messages) are skipped; a units row under the header scales times
    to ns and K/M/G-prefixed counts. Malformed text raises InputError naming `source` and the
    1-based line."""
    metrics = metrics or metrics_for()
    header, units, rows = None, None, []
    for lineno, fields, error in _csv_lines(text):
        if error is not None:
            if header is None:
                continue
            raise InputError(f"{source}:{lineno}: not a CSV line ({error})")
        if header is None:
            if fields and fields[0] == "ID":
                header, header_line = fields, lineno
                missing = [c for c in _REQUIRED if c not in header]
                if missing:
                    raise InputError(f"{source}:{lineno}: ncu CSV header lacks column {missing[0]!r}")
            continue
        if fields == header:
            continue  # a repeated header, e.g. two logs concatenated
        if len(fields) != len(header):
            raise InputError(f"{source}:{lineno}: {len(fields)} fields where the header "
                             f"(line {header_line}) has {len(header)}")
        if not fields[header.index("ID")].strip():
            units = units or fields  # the units row: its ID cell is empty
            continue
        rows.append((lineno, fields))
    if header is None:
        raise InputError(f"{source}:1: no ncu CSV header (a line starting with \"ID\"); "
                         "was ncu run with --csv --page raw?")
    col = {name: i for i, name in enumerate(header)}
    records = []
    for lineno, fields in rows:
        rec = {"id": _parse_int(fields[col["ID"]], "ID", source, lineno)}
        sig = fields[col["Kernel Name"]].strip()
        rec["kernel_name"], rec["kernel_signature"] = kernel_base_name(sig), sig
        rec["block"] = _first_dim(fields[col["Block Size"]], "Block Size", source, lineno)
        rec["grid"] = _first_dim(fields[col["Grid Size"]], "Grid Size", source, lineno)
        for short, name in metrics.items():
            if name not in col:
                rec[short] = math.nan
                continue
            value = _parse_number(fields[col[name]], name, source, lineno)
            unit = units[col[name]].strip() if units else ""
            rec[short] = value * _unit_scale(unit)
        records.append(rec)
    columns = ["launch", "kernel_name", "kernel_signature", "block", "grid", *metrics]
    if not records:
        return pd.DataFrame({c: pd.Series(dtype=_empty_dtype(c)) for c in columns})
    _warn_missing(records, metrics, col, source)
    df = pd.DataFrame.from_records(records).sort_values("id", kind="stable").reset_index(drop=True)
    df.insert(0, "launch", range(len(df)))
    df = df.drop(columns="id")[columns]
    for short in metrics:
        values = df[short].astype("float64")
        integral = bool((values.abs() < 2.0**53).all() and (values == values.round()).all())
        df[short] = values.astype("int64") if short in COUNT_COLUMNS and integral else values
    return df


def source_counters_commands(target_argv, report_path, kernel_regex: str = "^bfs_",
                             ncu: str = "ncu") -> tuple[list[str], list[str]]:
    """The two ncu argvs that count instructions per SASS line: profile `target_argv`'s kernels whose
    function name matches `kernel_regex` with the SourceCounters section into `report_path`
    (.ncu-rep), then print that report's source page as CSV (`parse_source_page` reads it)."""
    report = str(report_path)
    profile = [ncu, "--section", "SourceCounters", "--clock-control", "none", "--kernel-name-base", "function",
               "--kernel-name", f"regex:{kernel_regex}", "--export", report, "--force-overwrite",
               *map(str, target_argv)]
    page = [ncu, "--import", report if report.endswith(".ncu-rep") else report + ".ncu-rep", "--page", "source",
            "--csv", "--print-source", "sass"]
    return profile, page


def parse_source_page(text: str, source: str = "ncu source page") -> pd.DataFrame:
    """Parse `ncu --import REPORT --page source --csv --print-source sass`: per profiled launch a
    `"Kernel Name",NAME` line, a header row starting with "Address", then one row per SASS instruction.

    Returns one row per instruction: launch (0..k-1, in the page's order), kernel_name, offset (bytes
    from the launch's lowest address), sass (the instruction's text) and inst_executed (warp-level
    executions of that instruction, the page's "Instructions Executed"). Malformed text raises
    InputError naming `source` and the 1-based line."""
    records, header, kernel, launch = [], None, None, -1
    for lineno, fields, error in _csv_lines(text):
        if error is not None:
            raise InputError(f"{source}:{lineno}: not a CSV line ({error})")
        if fields[0] == "Kernel Name":
            if len(fields) < 2 or not fields[1].strip():
                raise InputError(f"{source}:{lineno}: a \"Kernel Name\" line without a name")
            launch, kernel, header = launch + 1, kernel_base_name(fields[1].strip()), None
            continue
        if fields[0] == "Address":
            missing = [c for c in ("Source", "Instructions Executed") if c not in fields]
            if missing or kernel is None:
                raise InputError(f"{source}:{lineno}: " + (f"source page header lacks column {missing[0]!r}"
                                                           if missing else "a header before any \"Kernel Name\" line"))
            header = {name: i for i, name in enumerate(fields)}
            continue
        if header is None:
            raise InputError(f"{source}:{lineno}: an instruction row before its launch's header")
        if len(fields) != len(header):
            raise InputError(f"{source}:{lineno}: {len(fields)} fields where the header has {len(header)}")
        address = fields[header["Address"]].strip()
        if not re.fullmatch(r"0x[0-9a-fA-F]+", address):
            raise InputError(f"{source}:{lineno}: Address is {address!r}, not a hexadecimal number")
        executed = _parse_int(fields[header["Instructions Executed"]], "Instructions Executed", source, lineno)
        if executed < 0:
            raise InputError(f"{source}:{lineno}: Instructions Executed is {executed}, a negative count")
        records.append({"launch": launch, "kernel_name": kernel, "offset": int(address, 16),
                        "sass": fields[header["Source"]].strip(), "inst_executed": executed})
    if not records:
        raise InputError(f"{source}: no instruction rows; was it `ncu --page source --csv --print-source sass`?")
    table = pd.DataFrame.from_records(records)
    table["offset"] -= table.groupby("launch")["offset"].transform("min")
    return table


def _warn_missing(records, metrics: dict, header: dict, source: str) -> None:
    """One DataWarning per metric that ncu did not report, or printed no value for, in some launches."""
    for short, name in metrics.items():
        if name not in header:
            warnings.warn(f"{source}: ncu reported no {name} ({short}): that counter is missing for every "
                          "launch", DataWarning, stacklevel=3)
            continue
        lacking = sum(1 for rec in records if math.isnan(rec[short]))
        if lacking:
            warnings.warn(f"{source}: ncu printed no value of {name} ({short}) for {lacking} of {len(records)} "
                          "launches", DataWarning, stacklevel=3)


def _empty_dtype(column: str) -> str:
    if column in ("kernel_name", "kernel_signature"):
        return "object"
    return "int64" if column in ("launch", "block", "grid") or column in COUNT_COLUMNS else "float64"


def _parse_number(cell: str, name: str, source: str, lineno: int) -> float:
    """A metric cell as float: thousands separators dropped, "n/a" or empty as NaN."""
    s = cell.strip()
    if s in _MISSING:
        return math.nan
    if not _NUMBER.fullmatch(s):
        raise InputError(f"{source}:{lineno}: {name} is {cell!r}, not a number")
    return float(s.replace(",", ""))


def _parse_int(cell: str, name: str, source: str, lineno: int) -> int:
    value = _parse_number(cell, name, source, lineno)
    if not (math.isfinite(value) and value == int(value) and abs(value) < 2**63):
        raise InputError(f"{source}:{lineno}: {name} is {cell!r}, not an integer")
    return int(value)


def _first_dim(cell: str, name: str, source: str, lineno: int) -> int:
    """x of a launch dimension printed as "(256, 1, 1)" (or a bare "256")."""
    first = cell.strip().strip("()").split(",")[0]
    return _parse_int(first, name, source, lineno)


def _unit_scale(unit: str) -> float:
    """Factor to base units: times to ns, K/M/G/T-prefixed counts to plain counts."""
    if unit in _TIME_NS:
        return _TIME_NS[unit]
    if len(unit) > 1 and unit[0] in _PREFIX and unit[1:].islower():
        return _PREFIX[unit[0]]
    return 1.0
