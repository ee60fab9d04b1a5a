"""Measure the per-launch costs that are not memory service: launch overhead and the grid scan.

Both are timed as the validation suite times BFS launches: back to back behind the hold kernel
(gpu_validate.timing), median over many launches.

- launch_overhead_ns: an empty kernel of one block (most expansions launch few blocks; an empty
  full-wave launch, as `topo` makes, is measured beside it for reference).
- grid_scan_ns: the compaction kernel (`cuda/compact.cu`) on a one-node graph, minus the empty
  one-block launch: its full-wave launch, tile ticket and decoupled look-back over one full wave
  of blocks, which the model adds to each compaction launch (the prefix sum has no loads or
  stores, so the memory machine does not see it).

    python -m gpu_validate.overheads --gpu h200 [--launches 640]

Prints one JSON object (device, driver, date, command and the numbers) for the profile's
[hardware] section. `python -m gpu_validate.profile_gpu` measures the same two numbers (with
`measure`) in the same run as the service curves and writes them into the profile itself.
"""
from __future__ import annotations

import argparse
import datetime
import json
import sys

import numpy as np


def one_node_graph():
    """The smallest graph a compaction launch can run on: one vertex, no edges."""
    from simdmodel.graph import EdgeList, csr_from_edges

    empty = np.zeros(0, dtype=np.int64)
    return csr_from_edges(EdgeList(empty, empty, 1, undirected=False, name="one-node"))


def measure(profile, launches: int) -> dict:
    """Median ns per launch of the empty kernel (one block, full wave) and of a one-node compaction."""
    from opmachine.kernels import DEFAULT_BLOCK, parse_kernel

    from . import modules
    from .bfs import GpuBfs
    from .device import require_gpu
    from .timing import time_launches

    cp = require_gpu()
    empty = modules.function("empty")
    wave = profile.full_wave_grid(DEFAULT_BLOCK)
    gpu = GpuBfs(one_node_graph(), parse_kernel("sm-1"), profile)
    gpu.level.fill(0)
    cases = {
        "empty_one_block_ns": lambda: empty((1,), (DEFAULT_BLOCK,), ()),
        "empty_full_wave_ns": lambda: empty((wave,), (DEFAULT_BLOCK,), ()),
        "compact_one_node_ns": lambda: gpu.launch_compact(0),
    }
    out = {}
    for name, launch in cases.items():
        time_launches(cp, [launch] * 64)  # warm-up, compilation included
        out[name] = float(np.median(time_launches(cp, [launch] * launches)))
    return {**out, **derive(out), "full_wave_blocks": wave}


def derive(times: dict) -> dict:
    """The profile's numbers from the measured medians (see the module docstring)."""
    return {"launch_overhead_ns": times["empty_one_block_ns"],
            "grid_scan_ns": max(times["compact_one_node_ns"] - times["empty_one_block_ns"], 0.0)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.overheads", description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h200", help="hardware profile giving the full-wave grid (default h200)")
    parser.add_argument("--launches", type=int, default=640, help="timed launches per case (default 640)")
    args = parser.parse_args(argv)
    from opmachine.profile import load_profile

    from .device import GpuUnavailable, device_info

    if args.launches < 1:
        print(f"error: --launches must be at least 1, got {args.launches}", file=sys.stderr)
        return 2
    try:
        numbers = measure(load_profile(args.gpu, kind="gpu"), args.launches)
    except GpuUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    info = device_info()
    record = {"device": info["device"], "driver": info["driver"],
              "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
              "command": "python -m gpu_validate.overheads " + " ".join(sys.argv[1:] if argv is None else argv),
              **{k: round(v, 1) if isinstance(v, float) else v for k, v in numbers.items()}}
    print(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
