"""Time the compaction kernel (gpu_validate/cuda/compact.cu) against CuPy's own stream compaction.

For each node count and share of nodes passing, the level array is filled at random (a seeded
share labelled `next`), then one `GpuBfs.launch_compact` and one `cupy.flatnonzero(level == next)`
(CUB's select) are timed with CUDA events, median of the repeats, and the queue is checked equal
to CuPy's answer. Prints microseconds per launch and the ratio kernel / CuPy. Needs a GPU.

    python bench/bench_gpu_compact.py [--repeats 50]
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

NODE_COUNTS = (1_000_000, 2_000_000, 16_000_000)
PASSING_SHARES = (0.0, 0.001, 0.1, 0.5)
NEXT = 5


def _median_us(cp, launch, repeats: int) -> float:
    launch()  # warm-up (and compilation)
    times = []
    for _ in range(repeats):
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        launch()
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end) * 1e3)
    return float(np.median(times))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--gpu", default="h200", help="hardware profile giving the launch geometry")
    args = parser.parse_args(argv)
    from gpu_validate.bfs import GpuBfs
    from gpu_validate.device import GpuUnavailable, require_gpu
    from opmachine import load_profile, parse_kernel
    from simdmodel import load_graph

    try:
        cp = require_gpu()
    except GpuUnavailable as exc:
        print(f"bench_gpu_compact: {exc}", file=sys.stderr)
        return 2
    profile = load_profile(args.gpu)
    rng = np.random.default_rng(1)
    print(f"{'nodes':>10} {'passing':>8} {'kernel_us':>10} {'cupy_us':>8} {'ratio':>6}")
    for n in NODE_COUNTS:
        gpu = GpuBfs(load_graph(f"random:n={n},m={n // 4}"), parse_kernel("sm-8"), profile)
        for share in PASSING_SHARES:
            levels = np.where(rng.random(n) < share, NEXT, NEXT - 1).astype(np.int32)
            gpu.level.set(levels)
            kernel_us = _median_us(cp, lambda: gpu.launch_compact(NEXT - 1), args.repeats)
            size = gpu.next_size()
            expected = cp.flatnonzero(gpu.level == NEXT)
            if size != expected.size or not bool((gpu.queue[:size] == expected).all()):
                print(f"bench_gpu_compact: wrong queue for n={n}, share={share}", file=sys.stderr)
                return 1
            cupy_us = _median_us(cp, lambda: cp.flatnonzero(gpu.level == NEXT), args.repeats)
            print(f"{n:>10} {share:>8} {kernel_us:>10.1f} {cupy_us:>8.1f} {kernel_us / cupy_us:>6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
