"""GPU measurements of a report's graphs (`simdmodel validate` runs), set beside the report's predictions.

Where they come from: the committed validation runs, `gpu_validate/results/<device>/<graph>/`
(looked up beside the installed `gpu_validate` package and under `./gpu_validate/results` of the
working directory, so a checkout finds them after a plain `pip install .`), and folders given
with `--measured DIR`. A folder belongs to a graph when its `device.json` names the same graph
(generator specs compared in canonical form) with the same n and m. A committed run is used only
when it was compared on the report's GPU profile, since H200 timings beside H100 predictions
would mislead; a folder given explicitly is always used, and its device is named in the report.

What is compared (gpu_validate.compare defines the arithmetic, so the numbers match the validation
tables):
- time per round (seed 003 Fig. 7): the measured launches of the first measured source, summed per
  round, against the report's prediction of the same BFS (`compare.round_times`, `time_errors`);
- mapping efficiency (seed 000): the expansion launches' lane counters of the instrumented build,
  measured ME = useful lanes / lane slots over every measured source, against
  `simdmodel.analyze` over the same sources.
Importing this module does not import CuPy.
"""
from __future__ import annotations

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

import simdmodel as sm
from gpu_validate import compare
from gpu_validate.modules import DEFAULT_BUILD, recorded_build
from gpu_validate.validate import read_device, read_table, table_path
from opmachine.cte import cte_launches
from opmachine.kernels import parse_kernel
from simdmodel.errors import DataWarning, InputError
from simdmodel.generators import canonical_spec, is_generator_spec

BAND = 0.20
"""Half-width of the band drawn around the measured time per round (seed 003 Fig. 7: +-20%)."""


@dataclass(eq=False)
class MeasuredRun:
    """One folder of measurements: its `device.json`, its per-launch `measured` table (read when first
    needed), and whether the user named it (`--measured`) or it was found among the committed runs."""

    folder: Path
    device: dict
    explicit: bool
    table: pd.DataFrame | None = None

    @property
    def measured(self) -> pd.DataFrame:
        if self.table is None:
            self.table = _read_measured_table(self.folder)
        return self.table

    @property
    def graph(self) -> str:
        """The graph measured: device.json's name, else the measured table's graph column."""
        return str(self.device.get("graph") or self.measured["graph"].iloc[0])

    @property
    def device_name(self) -> str:
        return str(self.device.get("device") or "unknown device")

    @property
    def profile(self) -> str | None:
        return self.device.get("profile")

    def matches(self, name: str, n: int, m: int) -> bool:
        """Same graph: equal names (canonical generator specs) and, where recorded, equal n and m."""
        if _canonical(self.graph) != _canonical(name):
            return False
        return self.device.get("graph_n") in (None, n) and self.device.get("graph_m") in (None, m)


@dataclass(frozen=True, eq=False)
class MeasuredComparison:
    """Prediction beside measurement for one graph: per-round times, their error statistics, and ME."""

    run: MeasuredRun
    source: int
    kernels: tuple[str, ...]
    rounds: pd.DataFrame
    time_errors: pd.DataFrame
    me: pd.DataFrame


def display_folder(folder) -> str:
    """A measurement folder as a report shows it: relative to the working directory when inside it,
    else from `gpu_validate/results/` on for a committed run, else as given (never a local absolute
    path the reader cannot use)."""
    folder = Path(folder)
    absolute = folder.resolve()
    try:
        return str(absolute.relative_to(Path.cwd().resolve()))
    except ValueError:
        pass
    parts = absolute.parts
    for i in range(len(parts) - 1):
        if parts[i:i + 2] == ("gpu_validate", "results"):
            return str(Path(*parts[i:]))
    return str(folder) if not folder.is_absolute() else folder.name


def _canonical(name: str) -> str:
    try:
        return canonical_spec(name) if is_generator_spec(name) else str(name)
    except InputError:
        return str(name)


def default_roots() -> list[Path]:
    """Folders that may hold committed validation runs (one subfolder per device)."""
    import gpu_validate

    candidates = [Path(gpu_validate.__file__).resolve().parent / "results", Path.cwd() / "gpu_validate" / "results"]
    roots = []
    for path in candidates:
        if path.is_dir() and path.resolve() not in [r.resolve() for r in roots]:
            roots.append(path)
    return roots


def _read_measured_table(folder: Path) -> pd.DataFrame:
    path = table_path(folder, "measured")
    if path is None:
        raise InputError(f"{folder}: missing measured.csv (written by a GPU run of simdmodel validate)")
    measured = read_table(path)
    missing = [c for c in ("graph", "kernel", "source", "level", "phase", "time_ns", "lane_slots", "useful_lanes")
               if c not in measured.columns]
    if missing:
        raise InputError(f"{folder}: measured table lacks column {missing[0]!r}")
    if measured.empty:
        raise InputError(f"{folder}: measured table has no launches")
    return measured


def read_run(folder) -> MeasuredRun:
    """The measurements in `folder` given by the user (measured.csv[.gz], device.json), read now so a bad
    folder is reported before any work; InputError if either is missing or unreadable."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such directory of measurements")
    measured = _read_measured_table(folder)
    return MeasuredRun(folder, read_device(folder), True, measured)


def committed_runs(roots=None) -> list[MeasuredRun]:
    """Every committed run under `roots` (default `default_roots()`): folders ROOT/<device>/<graph>/
    with a device.json naming its graph and a measured table (pooled folders have none, and are not
    runs). Only device.json is read here; the measured table is read when a run is compared. A run
    whose device.json cannot be read or names no graph is skipped with a DataWarning."""
    runs = []
    for root in default_roots() if roots is None else [Path(r) for r in roots]:
        for device_json in sorted(root.glob("*/*/device.json")):
            folder = device_json.parent
            if table_path(folder, "measured") is None:
                continue
            try:
                device = json.loads(device_json.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as error:
                warnings.warn(f"{device_json}: unreadable ({str(error).splitlines()[0]}); the measurements in "
                              f"{folder} are left out", DataWarning, stacklevel=2)
                continue
            if not (isinstance(device, dict) and device.get("graph")):
                warnings.warn(f"{device_json}: names no graph; the measurements in {folder} are left out",
                              DataWarning, stacklevel=2)
                continue
            runs.append(MeasuredRun(folder, device, False))
    return runs


def pick_run(runs, name: str, n: int, m: int, profile_name: str) -> tuple[MeasuredRun | None, str | None]:
    """The run to compare with graph (name, n, m): an explicit one first, else a committed one compared
    on `profile_name`. Returns (run or None, a note for the report when a run was passed over)."""
    mine = [r for r in runs if r.matches(name, n, m)]
    for run in mine:
        if run.explicit:
            return run, None
    for run in mine:
        if run.profile == profile_name:
            return run, None
    if mine:
        other = mine[0]
        return None, (f"measurements on {other.device_name} exist in {display_folder(other.folder)} (predicted there "
                      "with profile "
                      f"{other.profile}); this report predicts with profile {profile_name}, so they are not shown "
                      f"(use --gpu {other.profile} to compare)")
    return None, None


def _expansion_mappings(measured: pd.DataFrame) -> list:
    """simdmodel mappings of the measured data-driven kernels, each launched with its measured block
    (a CTA-wide strategy's C), found through the strategy registry by label; in registry order
    (sm-S by S, ws, scan, then plug-ins)."""
    mappings = []
    for label, rows in measured.groupby("kernel", sort=False):
        mapping = sm.parse_mapping(str(label))
        mappings.append(mapping.with_block(int(rows["block"].iloc[0])) if "block" in rows.columns else mapping)
    order = list(sm.STRATEGIES)
    return sorted(mappings, key=lambda m: (order.index(m.strategy), m.params))


def me_table(graph, run: MeasuredRun) -> pd.DataFrame:
    """Measured against modelled ME per data-driven kernel, over all measured sources (expansions only)."""
    measured = run.measured
    expand = measured[measured["phase"] == "expand"]
    mappings = _expansion_mappings(expand)
    columns = ["kernel", "sources", "lane_slots_measured", "useful_lanes_measured", "me_measured",
               "lane_slots_model", "useful_lanes_model", "me_model"]
    if not mappings:
        return pd.DataFrame(columns=columns)
    sources = sorted(int(s) for s in expand["source"].unique())
    model = sm.analyze(graph, sources, mappings).summary()
    rows = []
    for mapping, row in zip(mappings, model.itertuples()):
        mine = expand[expand["kernel"] == mapping.label]
        slots, useful = float(mine["lane_slots"].sum()), float(mine["useful_lanes"].sum())
        rows.append({"kernel": mapping.label, "sources": len(sources), "lane_slots_measured": slots,
                     "useful_lanes_measured": useful, "me_measured": useful / slots if slots else np.nan,
                     "lane_slots_model": int(row.total_lanes), "useful_lanes_model": int(row.useful_lanes),
                     "me_model": float(row.me)})
    return pd.DataFrame(rows, columns=columns)


def compare_run(graph, run: MeasuredRun, launches: pd.DataFrame, source: int, profile=None) -> MeasuredComparison:
    """Measured beside predicted for `graph`: `launches` is the report's prediction (opmachine per-level
    rows with `source` and `kernel`) of the BFS from `source`, a measured source. With `profile` the
    rounds also carry seed 004's instruction-only CTE analysis of the same launches (`cte_model_ns`,
    with the same per-launch constants; `opmachine.cte.cte_launches`) where the profile has measured
    instruction costs."""
    measured = run.measured
    label = str(measured["graph"].iloc[0])
    kernels = tuple(k for k in dict.fromkeys(launches["kernel"]) if k in set(measured["kernel"]))
    predicted = launches[launches["kernel"].isin(kernels) & (launches["source"] == source)].assign(graph=label)
    mine = measured[measured["kernel"].isin(kernels) & (measured["source"] == source)]
    rounds = compare.round_times(mine, predicted)
    rounds = rounds[rounds["mode"] == compare.time_mode(predicted)].reset_index(drop=True)
    rounds["band_low_ns"] = (1 - BAND) * rounds["measured_ns"]
    rounds["band_high_ns"] = (1 + BAND) * rounds["measured_ns"]
    if profile is not None:
        rounds = _with_cte(rounds, graph, mine, kernels, source, profile, label)
    errors = compare.time_errors(rounds) if not rounds.empty else pd.DataFrame()
    return MeasuredComparison(run, int(source), kernels, rounds, errors, me_table(graph, run))


def _with_cte(rounds: pd.DataFrame, graph, measured: pd.DataFrame, kernels, source: int, profile,
              label: str) -> pd.DataFrame:
    """`rounds` with cte_model (the equation) and cte_model_ns (the CTE analysis's round time) columns."""
    parts = [cte_launches(graph, source, parse_kernel(k), profile) for k in kernels]
    parts = [p for p in parts if not p.empty]
    if not parts:
        return rounds
    cte = pd.concat(parts, ignore_index=True).assign(graph=label, source=source)
    timed = compare.round_times(measured, cte)
    timed = timed.merge(cte[["kernel", "cte_model"]].drop_duplicates(), on="kernel")
    columns = timed[["kernel", "level", "predicted_ns", "cte_model"]].rename(columns={"predicted_ns": "cte_model_ns"})
    return rounds.merge(columns, on=["kernel", "level"], how="left")


def first_source(run: MeasuredRun) -> int:
    """The first source the run measured (its device.json order, else the table's)."""
    listed = run.device.get("sources") or []
    measured = {int(s) for s in run.measured["source"].unique()}
    for source in listed:
        if int(source) in measured:
            return int(source)
    return int(run.measured["source"].iloc[0])



def committed_coupling_runs(profile_name: str, roots=None) -> list[tuple[Path, dict]]:
    """The committed GPU runs of seed 001's couplings (`gpu_validate.coupling_validation`: a folder under
    ROOT/<device>/ with its summary.json) measured with profile `profile_name`: (folder, summary), the
    default build's first, spreading before not (a run of another build, `--bitmask-loads l2` or
    `--bitmask-stores plain`, after them), so that the tables drawn from the first suitable run show the
    kernels as they are by default."""
    runs = []
    for root in default_roots() if roots is None else [Path(r) for r in roots]:
        for summary in sorted([*root.glob("*/summary.json"), *root.glob("*/*/summary.json")]):
            try:
                record = json.loads(summary.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, ValueError) as error:
                warnings.warn(f"{summary}: unreadable ({str(error).splitlines()[0]}); left out", DataWarning,
                              stacklevel=2)
                continue
            if isinstance(record, dict) and record.get("profile") == profile_name and \
                    str(record.get("command", "")).startswith("python -m gpu_validate.coupling_validation"):
                runs.append((summary.parent, record))
    return sorted(runs, key=lambda run: _build_order(run[1]))


def _build_order(record: dict) -> tuple[bool, bool]:
    """Sort key of a coupling run: whether it measured a build other than the default (`modules.DEFAULT_BUILD`;
    a run recorded before the builds had names is of the plain one), then whether it ran without spreading
    (recorded without `spread`: before small launches spread their long lists)."""
    return recorded_build(record) != DEFAULT_BUILD, not record.get("spread", False)


def couplings_table(runs) -> pd.DataFrame:
    """Seed 001 Fig. 10's numbers from the first run of `runs` (committed_coupling_runs) that holds all four
    couplings, with the runs of the same build nested in its folder or holding it (a measurement's deep graphs
    in `deep/`): per (graph, kernel) the median GTEPS over its sources measured and, where the run was
    predicted (its pooled/time.csv, `gpu_validate.coupling_validation`), predicted (the traversed edges over
    the operator machine's time), each also over expand-contract's."""
    from simdmodel.couplings import COUPLINGS

    columns = ["device", "run", "graph", "kernel", "gteps", "vs_expand_contract", "predicted_gteps",
               "predicted_vs_expand_contract"]
    suitable = [(folder, record) for folder, record in runs
                if set(COUPLINGS) <= set(read_table(folder / "pooled" / "throughput.csv")["kernel"])]
    if not suitable:
        return pd.DataFrame(columns=columns)
    first, record = suitable[0]
    family = [folder for folder, other in suitable if _build_order(other) == _build_order(record) and
              (folder == first or first in folder.parents or folder in first.parents)]
    family.sort(key=lambda folder: len(folder.parts))  # the measurement's own folder first
    medians = pd.concat([_coupling_medians(folder) for folder in family], ignore_index=True)
    medians = medians.drop_duplicates(["graph", "kernel"])
    return medians.assign(device=record.get("device", family[0].name), run=display_folder(family[0]))[columns]


def _coupling_medians(folder: Path) -> pd.DataFrame:
    """Per (graph, kernel) of one coupling run: median GTEPS measured and predicted, and over expand-contract's."""
    throughput = read_table(folder / "pooled" / "throughput.csv")
    keys = ["graph", "kernel", "source"]
    if (folder / "pooled" / "time.csv").is_file():
        times = read_table(folder / "pooled" / "time.csv")[[*keys, "predicted_ns"]]
        throughput = throughput.merge(times, on=keys, how="left")
        throughput["predicted_gteps"] = throughput["reached_edges"] / throughput["predicted_ns"]
    else:
        throughput["predicted_gteps"] = np.nan
    medians = throughput.groupby(["graph", "kernel"], sort=False)[["gteps", "predicted_gteps"]].median()
    medians = medians.reset_index()
    for column, ratio in (("gteps", "vs_expand_contract"), ("predicted_gteps", "predicted_vs_expand_contract")):
        base = medians[medians["kernel"] == "expand-contract"].set_index("graph")[column]
        medians[ratio] = medians[column] / medians["graph"].map(base)
    return medians


def queue_levels_table(runs) -> pd.DataFrame:
    """Seed 001 Fig. 7's numbers from the first run of `runs` with two-phase BFS in several lookup modes:
    per (graph, kernel, level) the edge queue each contraction read (the first source, the planning run)
    beside the logical edge frontier (what the atomic two-phase BFS, which no race touches, read); a
    kernel whose queue overflowed gets one row with `overflow`."""
    columns = ["device", "run", "graph", "kernel", "source", "level", "edge_queue", "logical_edges", "overflow"]
    for folder, record in runs:
        measured = read_table(table_path(folder, "measured"))
        kernels = [k for k in dict.fromkeys(measured["kernel"]) if k.startswith("two-phase")]
        if "two-phase" not in kernels or len(kernels) < 2:
            continue
        rows = []
        for graph, mine in measured.groupby("graph", sort=False):
            source = mine["source"].iloc[0]
            mine = mine[mine["source"] == source]
            logical = mine[(mine["kernel"] == "two-phase") & (mine["phase"] == "contract")].set_index("level")["input"]
            for kernel in kernels:
                runs_of = mine[mine["kernel"] == kernel]
                if (runs_of["phase"] == "overflow").any():
                    rows.append({"graph": graph, "kernel": kernel, "source": source, "overflow": True})
                    continue
                contract = runs_of[runs_of["phase"] == "contract"]
                rows += [{"graph": graph, "kernel": kernel, "source": source, "level": int(r.level),
                          "edge_queue": int(r.input), "logical_edges": logical.get(r.level), "overflow": False}
                         for r in contract.itertuples()]
        return pd.DataFrame(rows).assign(device=record.get("device", folder.name), run=display_folder(folder))[columns]
    return pd.DataFrame(columns=columns)
