"""An Nsight Compute target: the `ws` expansion on hand-built one-level queues whose lanes leave the
edge loop together or apart, so the instructions a diverged step adds can be counted per SASS line.

`python -m gpu_validate.divergence_probe` launches `bfs_expand_ws` once per case of CASES, in order:
the queue holds vertices 1 .. k of `case_graph(degrees)` (k = len(degrees), vertex i + 1 with
degrees[i] edges to fresh vertices), on the blocks the model gives an expansion of k entries. A step
whose 32 entries have E edges, E not a multiple of 32, has lanes that leave the loop in two groups
(lanes l < E mod 32 run one more trip, or, for E < 32, lanes l >= E skip it). Every launch is checked
(each fresh vertex reached, nothing else written); the process exits 1 if one is wrong.

`python -m gpu_validate.divergence_probe --record DIR` profiles that run under Nsight Compute twice and
writes DIR/ws_divergence.csv, one row per case: its entries, grid and diverged steps, `inst_executed`
(`smsp__inst_executed.sum`) and `inst_executed_by_line` (the sum of the SourceCounters page's
per-instruction `Instructions Executed`, which `opmachine.instructions.code.DIVERGENCE` reproduces
exactly); DIR/ws_divergence_lines.csv, per instruction, for the cases LINE_CASES; and
DIR/ncu_source_page.csv, the page's first launch as ncu printed it (the parser's test input).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

_DIVERGED = (2,) * 8 + (1,) * 24  # E = 40: lanes 0..7 run a second trip
CASES: dict[str, tuple[int, ...]] = {
    "all1": (1,) * 32,  # E = 32: one trip, together
    "all2": (2,) * 32,
    "all3": (3,) * 32,
    "first8_2": _DIVERGED,
    "last8_2": (1,) * 24 + (2,) * 8,
    "first_of_40": (40,) + (0,) * 31,
    "last_of_40": (0,) * 31 + (40,),
    "one_2": (2,) + (1,) * 31,  # E = 33
    "thirty_one_2": (2,) * 31 + (1,),  # E = 63
    "half_3": (3,) * 16 + (2,) * 16,  # E = 80
    "twenty_1": (1,) * 20 + (0,) * 12,  # E = 20: lanes 20..31 skip the loop
    "no_edges": (0,) * 32,  # E = 0: every lane skips it
    "size1_deg3": (3,),
    "size1_deg40": (40,),
    "size20_deg1": (1,) * 20,
    "two_diverged": _DIVERGED * 2,
    "diverged_then_not": _DIVERGED + (1,) * 32,
    "not_then_diverged": (1,) * 32 + _DIVERGED,
    "eight_diverged": _DIVERGED * 8,
    "eight_together": (1,) * 256,
    "sixteen_diverged": _DIVERGED * 16,  # two blocks
    "random_300": tuple(int(d) for d in np.random.default_rng(5).integers(0, 5, 300)),
    "random_1000": tuple(int(d) for d in np.random.default_rng(6).integers(0, 9, 1000)),
}


LINE_CASES = ("all2", "first8_2")
"""Cases whose per-instruction counts --record keeps: two trips together, and the same with lanes apart."""


def case_graph(name: str):
    """The CSR graph of case `name`: vertex 0 -> vertices 1 .. k (the queue, BFS level 1), vertex i + 1
    -> degrees[i] fresh vertices (level 2)."""
    from simdmodel.graph import CSRGraph

    degrees = np.asarray(CASES[name], dtype=np.int64)
    k = degrees.size
    out_degree = np.concatenate([[k], degrees, np.zeros(int(degrees.sum()), dtype=np.int64)])
    indptr = np.concatenate([[0], np.cumsum(out_degree)])
    indices = np.concatenate([np.arange(1, k + 1), k + 1 + np.arange(int(degrees.sum()))]).astype(np.int32)
    return CSRGraph(indptr=indptr, indices=indices, name=f"divergence_probe:{name}")


def diverged_steps(degrees) -> int:
    """Steps of a ws expansion over these queue degrees whose lanes leave the edge loop in two groups
    (`trips.segment_lanes` on one warp)."""
    from opmachine.instructions import segment_lanes

    return int(segment_lanes(np.asarray(degrees, dtype=np.int64), warps=1)["diverged"][0])


def record(directory: Path, gpu: str) -> None:
    """Profile the probe's launches (smsp__inst_executed.sum, then SourceCounters) and write the three
    files of the module docstring into `directory`."""
    import subprocess
    import tempfile

    import pandas as pd

    from .ncu import find_ncu, parse_source_page, run_ncu, source_counters_commands

    target = [sys.executable, "-m", "gpu_validate.divergence_probe", "--gpu", gpu]
    totals = run_ncu(target, "^bfs_expand_ws$", {"inst_executed": "smsp__inst_executed.sum"})
    with tempfile.TemporaryDirectory(prefix="ncu-") as tmp:
        profile, page = source_counters_commands(target, Path(tmp) / "probe.ncu-rep", "^bfs_expand_ws$", find_ncu())
        subprocess.run(profile, check=True, capture_output=True)
        text = subprocess.run(page, check=True, capture_output=True, text=True).stdout
    lines = parse_source_page(text, "ncu source page of the divergence probe")
    names = list(CASES)
    if len(totals) != len(names) or lines["launch"].nunique() != len(names):
        raise RuntimeError(f"expected {len(names)} profiled launches, got {len(totals)} and "
                           f"{lines['launch'].nunique()}")
    by_line = lines.groupby("launch")["inst_executed"].sum()
    table = pd.DataFrame({"case": names, "entries": [len(CASES[n]) for n in names], "grid": totals["grid"],
                          "diverged_steps": [diverged_steps(CASES[n]) for n in names],
                          "inst_executed": totals["inst_executed"], "inst_executed_by_line": by_line.to_numpy()})
    directory.mkdir(parents=True, exist_ok=True)
    table.to_csv(directory / "ws_divergence.csv", index=False)
    kept = lines[lines["launch"].isin([names.index(n) for n in LINE_CASES]) & (lines["inst_executed"] > 0)]
    kept = kept.assign(case=[names[i] for i in kept["launch"]])[["case", "offset", "sass", "inst_executed"]]
    kept.to_csv(directory / "ws_divergence_lines.csv", index=False)
    first = text.split('"Kernel Name"')
    (directory / "ncu_source_page.csv").write_text('"Kernel Name"' + first[1] if len(first) > 1 else text)


def main(argv: list[str] | None = None) -> int:
    """Launch every case once; 0 when every launch wrote exactly the levels the CPU expects."""
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.divergence_probe",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h100", help="profile whose launch geometry the model uses (default h100)")
    parser.add_argument("--record", type=Path, metavar="DIR", help="profile the launches under ncu into DIR")
    args = parser.parse_args(argv)
    if args.record is not None:
        record(args.record, args.gpu)
        return 0
    import cupy as cp  # lazy: importing this module must not need CuPy

    from opmachine.kernels import DEFAULT_BLOCK, parse_kernel
    from opmachine.predict import expansion_launch
    from opmachine.profile import load_profile

    from . import modules

    kernel = parse_kernel("ws")
    profile = load_profile(args.gpu, kind="gpu")
    expand = modules.expansion(kernel.expansion)
    ok = True
    for name in CASES:
        graph = case_graph(name)
        k = len(CASES[name])
        level = np.full(graph.n, -1, dtype=np.int32)
        level[:k + 1] = [0] + [1] * k
        expected = level.copy()
        expected[k + 1:] = 2
        d_level = cp.asarray(level)
        grid = expansion_launch(kernel, profile, k).grid
        expand((grid,), (DEFAULT_BLOCK,),
               (cp.arange(1, k + 1, dtype=cp.int32), np.int32(k), cp.asarray(graph.indptr.astype(np.int32)),
                cp.asarray(graph.indices), d_level, np.int32(1), cp.zeros(8, dtype=cp.uint64)))
        right = bool((d_level.get() == expected).all())
        ok &= right
        print(f"{name}: grid {grid}, {diverged_steps(CASES[name])} diverged steps, {'ok' if right else 'WRONG'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
