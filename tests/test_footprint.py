"""The up-front memory estimate of a prediction (`opmachine.footprint`) against the launches the
simulation then makes."""
import numpy as np
import pytest

from opmachine.footprint import launch_bytes, simulation_bytes
from opmachine.kernels import expansion_jobs, parse_kernel, topo_jobs
from opmachine.layout import layout_for
from opmachine.predict import expansion_launch
from opmachine.profile import load_profile
from simdmodel.algorithms import BFS
from simdmodel.load import load_graph

H100 = load_profile("h100", kind="gpu")


@pytest.mark.parametrize("spec", ["rmat:scale=12,ef=8,seed=3", "grid2d:side=40", "kron:scale=11,ef=16"])
@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-8", "ws", "scan"])
def test_the_estimate_covers_the_largest_launch(spec, label):
    graph = load_graph(spec)
    kernel = parse_kernel(label)
    expansion = kernel.expansion.with_block(256) if kernel.data_driven else None
    frontiers = BFS.rounds(graph, 0, "sorted")
    layout = layout_for(graph.n, graph.m)
    stamp = np.full(graph.n, -1, dtype=np.int32)
    largest = 0
    for level in range(frontiers.depth):
        front = frontiers.frontier(level)
        if expansion is None:
            trace = topo_jobs(graph, frontiers.levels, stamp, level, layout, H100.full_wave_grid(256) * 8)
        else:
            warps = expansion_launch(kernel, H100, front.size).warps
            trace = expansion_jobs(graph, frontiers.levels, stamp, level, front, expansion, layout, warps)
        largest = max(largest, launch_bytes(trace.jobs, trace.sectors.size))
    cold, level = simulation_bytes(graph, layout, frontiers, expansion, H100, False, 2**30)
    warm, _ = simulation_bytes(graph, layout, frontiers, expansion, H100, True, 2**30)
    assert cold >= largest + 4 * layout.total_sectors and 0 <= level < frontiers.depth
    assert cold <= warm <= cold + 2**30  # the kept traces, within their budget
