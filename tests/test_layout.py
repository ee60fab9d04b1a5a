"""Memory layouts of the modelled kernels (opmachine.layout): one parametrised concept, a GPU
instance in 32-byte sectors and a CPU instance in bytes, against a naive twin and hand computation."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from opmachine.layout import CPU_LAYOUT, GPU_LAYOUT, LayoutSpec, layout_for
from simdmodel.errors import InputError
from simdmodel.graph import INDEX_LIMIT


def naive_bases_bytes(arrays, align, n, m):
    """Each array's byte base: the previous base plus the previous size rounded up to `align`."""
    sizes = {"num_nodes": 4, "row_start": 4 * (n + 1), "edge_dst": 4 * m, "level": 4 * n, "queue": 4 * max(n, 1)}
    bases, address = {}, 0
    for name in arrays:
        bases[name] = address
        while sizes[name] > 0 and address < bases[name] + sizes[name]:
            address += align
    return bases, address


def test_cpu_layout_by_hand():
    # Seed 003 Figure 2 (n = 6, m = 6): row_start 28 B at 0, edge_dst 24 B at 4096, level 24 B at 8192.
    layout = CPU_LAYOUT.layout(6, 6)
    assert layout.unit_bytes == 1
    assert layout.base_bytes == layout.base_units == {"row_start": 0, "edge_dst": 4096, "level": 8192}
    assert layout.end_bytes == layout.total_units == 12288
    with pytest.raises(ValueError, match="not 32-byte sectors"):
        layout.base_sector  # noqa: B018


def test_gpu_layout_by_hand_in_sectors_and_bytes():
    # n = 1000, m = 5000: num_nodes 4 B -> 256 B; row_start 4004 B -> 4096 B; edge_dst 20000 B -> 20224 B;
    # level 4000 B -> 4096 B; queue 4000 B -> 4096 B.
    layout = layout_for(1000, 5000)
    assert layout == GPU_LAYOUT.layout(1000, 5000)
    assert layout.base_sector == {"num_nodes": 0, "row_start": 8, "edge_dst": 136, "level": 768, "queue": 896}
    assert layout.total_sectors == 1024 and layout.end_bytes == 32768
    assert layout.base_bytes["edge_dst"] == 136 * 32
    assert layout.sector_of("edge_dst", 9) == 137  # 8 elements per sector
    assert layout.array_sectors("level", 1000).tolist() == list(range(768, 768 + 125))  # 1000 / 8 sectors
    assert layout.array_sectors("level", 17).tolist() == [768, 769, 770]
    assert layout.array_sectors("num_nodes", 0).tolist() == [0]  # at least the first sector


@settings(max_examples=200, deadline=None)
@given(spec=st.sampled_from([GPU_LAYOUT, CPU_LAYOUT]), n=st.integers(0, 10**6), m=st.integers(0, 10**7))
def test_layouts_match_naive(spec, n, m):
    layout = spec.layout(n, m)
    bases, end = naive_bases_bytes(spec.arrays, spec.align_bytes, n, m)
    assert layout.base_bytes == bases and layout.end_bytes == end
    assert all(base % spec.align_bytes == 0 for base in bases.values())


def test_layout_spec_rejects_bad_parameters_and_edges_beyond_4_byte_offsets():
    with pytest.raises(ValueError, match="unknown array"):
        LayoutSpec(("row_start", "weights"), align_bytes=256, unit_bytes=32)
    with pytest.raises(ValueError, match="not a multiple"):
        LayoutSpec(("row_start",), align_bytes=100, unit_bytes=32)
    with pytest.raises(InputError, match="4-byte row offsets"):
        CPU_LAYOUT.layout(10, INDEX_LIMIT + 1)
