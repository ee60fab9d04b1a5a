"""The coupled kernels' warp instructions counted by Nsight Compute beside the operator machine's.

For each graph and coupling (`--kernels`, labels of `simdmodel.couplings`), the first seeded source's BFS
is planned on the GPU under ncu (`gpu_validate.ncu.run_ncu`: every `couple_*` launch, its
`smsp__inst_executed.sum` and shared-memory loads and stores), and the same BFS predicted
(`opmachine.coupled.predict_coupled_bfs`: instructions from the kernels' SASS listings and the trips
its jobs give). Writes into DIR:

- instructions.csv.gz: one row per launch (graph, kernel, source, launch, level, phase, the GPU kernel's
  name, measured and predicted inst_executed, shared_ld_inst, shared_st_inst, alu_pipe_inst, and its loads
  (LOADS): sectors of global loads at the L1 and the L1's hits among them, sectors read from the L2 (the
  model's: its `l1_sectors`, its `l1_hits`, their difference), and the shared memory the driver configured
  for the kernel, `shared_config_bytes` (measured only; NaN in a run recorded before they were);
- summary.json: device, driver, date, command, `spread` (small launches spread lists longer than a warp
  as pieces, `simdmodel.couplings.big_list`; false for a run recorded without it), `bitmask_stores` (the
  kernels' default build, `modules.BITMASK_STORES`; a run recorded without it profiled the plain one,
  and is predicted as such), `l1_carveout` (the shared memory configured for each launch phase's kernel, as
  the profile's [l1_carveout] holds it; empty for a run recorded before it was), and per (graph, kernel, phase)
  the launches, the measured and predicted totals and their error, the per-launch errors' median and range,
  and the L1's hit rates (`l1_hit_rate_measured`, `l1_hit_rate_predicted`).

    python -m gpu_validate.coupling_counters SPEC [SPEC ...] [--kernels K,K] [--out DIR] [--write PROFILE.toml]
    python -m gpu_validate.coupling_counters --measured DIR     (the model again, no GPU)
    python -m gpu_validate.coupling_counters --plan SPEC KERNEL SOURCE   (the profiled target)

`--write` puts the carve-outs into that copy of the device's profile as its [l1_carveout] section (every
launch phase must have run). Only small graphs are practical: ncu replays every launch (a deep graph has
thousands).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

KERNELS = ("expand-contract", "contract-expand", "two-phase", "hybrid")
COUNTS = ("inst_executed", "shared_ld_inst", "shared_st_inst", "alu_pipe_inst")
"""ncu's counts beside the model's (`alu_pipe_inst`: the ALU pipe's, NaN in a run recorded before it was)."""
LOADS = {"l1_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
         "l1_hit_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
         "l2_read_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",
         "shared_config_bytes": "launch__shared_mem_config_size"}
"""ncu's loads of each launch (Hopper's names): global-load sectors at the L1, its hits among them, sectors the
L1 read from the L2, and the shared memory configured for the kernel (the L1 is what it leaves)."""


def profile_launches(spec: str, label: str, source: int) -> pd.DataFrame:
    """ncu's counts of every coupled launch of the BFS from `source` (`--plan` run under ncu)."""
    from .ncu import metrics_for, run_ncu

    metrics = {**{k: v for k, v in metrics_for().items() if k in COUNTS}, **LOADS}
    table = run_ncu([sys.executable, "-m", "gpu_validate.coupling_counters", "--plan", spec, label, str(source)],
                    kernel_regex="^couple_", metrics=metrics, timeout=1800)
    return table[["kernel_name", *COUNTS, *LOADS]]


def predicted_launches(graph, label: str, source: int, profile, spread: bool = True,
                       claim: bool = True, bitmask_l1: bool = True) -> pd.DataFrame:
    """The model's launches of the same BFS (of the claim build with `claim`, else the plain one; reading the
    bitmask through the L1 with `bitmask_l1`): level, phase, the instruction counts of their listings and their
    loads at the L1."""
    from opmachine.coupled import predict_coupled_bfs
    from simdmodel.couplings import parse_coupling

    table = predict_coupled_bfs(graph, int(source), parse_coupling(label), profile, claim=claim, spread=spread,
                                bitmask_l1=bitmask_l1, l1_counts=True)
    return table.assign(l1_hit_sectors=table["l1_hits"], l2_read_sectors=table["l1_sectors"] - table["l1_hits"])


def compare(measured: pd.DataFrame, predicted: pd.DataFrame, key: dict) -> pd.DataFrame:
    """One row per launch with the measured and predicted counts (the launch sequences must agree)."""
    if len(measured) != len(predicted):
        raise ValueError(f"{key}: ncu profiled {len(measured)} launches, the model has {len(predicted)}")
    out = pd.DataFrame({**key, "launch": np.arange(len(predicted)), "level": predicted["level"].to_numpy(),
                        "phase": predicted["phase"].to_numpy(), "gpu_kernel": measured["kernel_name"].to_numpy()})
    for column in (*COUNTS, *LOADS):
        out[f"measured_{column}"] = measured[column].to_numpy() if column in measured else np.nan
        if column != "shared_config_bytes":
            out[f"predicted_{column}"] = predicted[column].to_numpy()
    return out


def summarize(table: pd.DataFrame) -> list[dict]:
    """Per (graph, kernel, phase): launches, inst_executed totals measured and predicted, the total's error and
    the per-launch errors' median, min and max; the same total error of the ALU pipe's instructions
    (`alu_error`, where ncu counted them)."""
    rows = []
    for (graph, kernel, phase), group in table.groupby(["graph", "kernel", "phase"], sort=False):
        measured, predicted = group["measured_inst_executed"], group["predicted_inst_executed"]
        errors = predicted / measured - 1
        rows.append({"graph": graph, "kernel": kernel, "phase": phase, "launches": len(group),
                     "measured": int(measured.sum()), "predicted": int(predicted.sum()),
                     "error": float(predicted.sum() / measured.sum() - 1), "launch_error_median": float(errors.median()),
                     "launch_error_min": float(errors.min()), "launch_error_max": float(errors.max())})
        alu = group["measured_alu_pipe_inst"]
        if alu.notna().all() and alu.sum() > 0:
            rows[-1]["alu_error"] = float(group["predicted_alu_pipe_inst"].sum() / alu.sum() - 1)
        for side in ("measured", "predicted"):
            loads, hits = group[f"{side}_l1_sectors"], group[f"{side}_l1_hit_sectors"]
            if loads.notna().all() and hits.notna().all() and loads.sum() > 0:
                rows[-1][f"l1_hit_rate_{side}"] = float(hits.sum() / loads.sum())
    return rows


def carveouts(table: pd.DataFrame) -> dict[str, int]:
    """The shared memory configured for each launch phase's kernel (keys as the profile's [l1_carveout] has them),
    where ncu measured it; InputError if one kernel got two sizes."""
    from simdmodel.errors import InputError

    from .modules import COUPLING_KERNELS

    phase_of = {kernel: phase.replace("-", "_") for phase, kernel in COUPLING_KERNELS.items()}
    out = {}
    for kernel, sizes in table.dropna(subset=["measured_shared_config_bytes"]).groupby("gpu_kernel")[
            "measured_shared_config_bytes"]:
        if sizes.nunique() != 1:
            raise InputError(f"{kernel} ran with {sizes.nunique()} shared-memory carve-outs: "
                             f"{sorted(sizes.unique().tolist())}")
        out[phase_of[kernel]] = int(sizes.iloc[0])
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.coupling_counters",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("specs", nargs="*")
    parser.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated coupling labels")
    parser.add_argument("--out", default="coupling-counters")
    parser.add_argument("--measured", metavar="DIR", help="predict this earlier run again (no GPU)")
    parser.add_argument("--write", metavar="PROFILE.toml",
                        help="write the kernels' carve-outs into this copy of the device's profile as its "
                             "[l1_carveout]")
    parser.add_argument("--plan", nargs=3, metavar=("SPEC", "KERNEL", "SOURCE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    import opmachine as om
    import simdmodel as sm
    from simdmodel.atomic import write_csv_gz, write_text
    from simdmodel.couplings import parse_coupling
    from simdmodel.errors import InputError

    from .device import GpuUnavailable, device_info, profile_for_device, recorded_run, run_record
    from .modules import DEFAULT_BUILD, recorded_build

    prog = "python -m gpu_validate.coupling_counters"
    try:
        if args.plan:  # the target ncu profiles: one planned BFS, levels checked
            from .couplings import GpuCoupledBfs

            spec, label, source = args.plan
            profile = om.load_profile(profile_for_device(device_info()))
            GpuCoupledBfs(sm.load_graph(spec), parse_coupling(label), profile).plan(int(source))
            return 0
        labels = [parse_coupling(k).label for k in args.kernels.split(",")]
        if args.measured:
            out = Path(args.measured)
            command = f"{prog} " + " ".join(sys.argv[1:] if argv is None else argv)
            record, (table,) = recorded_run(out, ["instructions.csv.gz"], "a coupling-counters", command,
                                            {"profile": str})
            profile = om.load_profile(record["profile"])
            parts = []
            for (name, label, source), group in table.groupby(["graph", "kernel", "source"], sort=False):
                measured = group.rename(columns={f"measured_{c}": c for c in (*COUNTS, *LOADS)}).rename(
                    columns={"gpu_kernel": "kernel_name"})
                loads, stores = recorded_build(record)
                predicted = predicted_launches(sm.load_graph(name), label, int(source), profile,
                                               record.get("spread", False), stores == "claim", loads == "l1")
                parts.append(compare(measured, predicted, {"graph": name, "kernel": label, "source": int(source)}))
        elif args.specs:
            profile = om.load_profile(profile_for_device(device_info()))
            record = {**run_record(prog, argv), "profile": profile.name, "spread": True,
                      "bitmask_loads": DEFAULT_BUILD[0], "bitmask_stores": DEFAULT_BUILD[1]}
            parts = []
            for spec in args.specs:
                graph = sm.load_graph(spec)
                source = int(sm.pick_sources(graph, 1, 1)[0])
                for label in labels:
                    print(f"{graph.name}: {label} from {source}", file=sys.stderr, flush=True)
                    measured = profile_launches(spec, label, source)
                    predicted = predicted_launches(graph, label, source, profile)
                    parts.append(compare(measured, predicted, {"graph": graph.name, "kernel": label,
                                                               "source": source}))
            out = Path(args.out)
        else:
            raise InputError("name graphs to profile, or --measured DIR")
        table = pd.concat(parts, ignore_index=True)
        record["l1_carveout"] = carveouts(table)
        if args.write:
            write_carveout(args.write, profile, record)
    except (GpuUnavailable, InputError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    record["phases"] = summarize(table)
    out.mkdir(parents=True, exist_ok=True)
    write_csv_gz(out / "instructions.csv.gz", table)
    write_text(out / "summary.json", json.dumps(record, indent=1) + "\n")
    print(pd.DataFrame(record["phases"]).to_string(index=False))
    return 0


def write_carveout(path, profile, record: dict):
    """Write `profile` with the run's carve-outs as its [l1_carveout] to `path`; InputError naming a launch phase
    the run did not see."""
    from opmachine.profile import L1Carveout, write_gpu_section
    from opmachine.profile.l1_carveout import CARVEOUT_PHASES
    from simdmodel.errors import InputError

    from .device import run_of

    missing = [phase for phase in CARVEOUT_PHASES if phase not in record["l1_carveout"]]
    if missing:
        raise InputError(f"no launch of phase {missing[0]} was profiled: run every coupling on a graph with long "
                         "lists (kron or rmat) to measure every kernel's carve-out")
    return write_gpu_section(path, profile, "l1_carveout",
                             L1Carveout({phase: record["l1_carveout"][phase] for phase in CARVEOUT_PHASES},
                                        run_of(record)))


if __name__ == "__main__":
    sys.exit(main())
