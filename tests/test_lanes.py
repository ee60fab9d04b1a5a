"""Lane accounting: hand-computed cases, the naive lane-by-lane twin, and invariants."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import naive
from simdmodel.errors import InputError
from simdmodel.strategies import LANE_FIELDS, Mapping, mappings


def lanes(degrees, strategy, param=None):
    """Single-level lane sums as a dict, through the registered fast path."""
    seq = np.asarray(degrees, dtype=np.int64)
    row = Mapping(strategy, param).count_lanes(seq, np.array([0, seq.size], dtype=np.int64))[0]
    return dict(zip(LANE_FIELDS, (int(x) for x in row)))


def expect(T, total, useful, ua, ur, idle=0):
    return dict(zip(LANE_FIELDS, (T, total, useful, ua, ur, idle)))


# Seed 000 §4: a vertex of degree 23 has UA = 9, 9, 1, 1, 1, 0 for S = 32, 16, 8, 4, 2, 1.
@pytest.mark.parametrize("S, ua", [(32, 9), (16, 9), (8, 1), (4, 1), (2, 1), (1, 0)])
def test_degree_23_intra_group_waste_matches_paper(S, ua):
    assert lanes([23], "group", S)["ua_lanes"] == ua


# One frontier d = [23, 5, 0, 1], worked out by hand for every S (T = max ceil(d/S) per warp):
# S=32 g=1: four warps, T = 1,1,0,1; UA = 9+27+0+31 = 67.
# S=16 g=2: warps [23,5] (T=2, UA 9+11, UR 16) and [0,1] (T=1, UA 0+15, UR 16).
# S=8  g=4: one warp, c = 3,1,0,1, T=3; UA = 1+3+0+7; UR = 8*(0+2+3+2) = 56.
# S=4  g=8: c = 6,2,0,1, T=6; UA = 1+3+0+3; UR = 4*(0+4+6+5) + 4 empty groups*4*6 = 156.
# S=2  g=16: c = 12,3,0,1, T=12; UA = 1+1+0+1; UR = 2*(0+9+12+11) + 12*2*12 = 352.
# S=1  g=32: T=23; UR = (0+18+23+22) + 28 empty groups*23 = 707.
# S=3  g=10 (does not divide 32): c = 8,2,0,1, T=8; UA = 1+1+0+2; UR = 3*(0+6+8+7) + 6*3*8 = 207;
#      idle = (32-30)*8 = 16.
# S=12 g=2: [23,5]: T=2, UA 1+7, UR 12, idle 8*2; [0,1]: T=1, UA 11, UR 12, idle 8.
MIXED = [23, 5, 0, 1]


@pytest.mark.parametrize("S, expected", [
    (32, expect(3, 96, 29, 67, 0)),
    (16, expect(3, 96, 29, 35, 32)),
    (8, expect(3, 96, 29, 11, 56)),
    (4, expect(6, 192, 29, 7, 156)),
    (2, expect(12, 384, 29, 3, 352)),
    (1, expect(23, 736, 29, 0, 707)),
    (3, expect(8, 256, 29, 4, 207, 16)),
    (12, expect(3, 96, 29, 19, 24, 24)),
])
def test_mixed_degree_warp_by_hand(S, expected):
    assert lanes(MIXED, "group", S) == expected


def test_partial_last_warp_counts_empty_groups_as_ur():
    # S=8, d = [23,5,0,1 | 9,2]: second warp holds 2 of 4 groups: c = 2,1, T=2,
    # UA = 7+6, UR = 8*(0+1) + 2 empty groups*8*2 = 40.
    assert lanes(MIXED + [9, 2], "group", 8) == expect(5, 160, 40, 24, 96)


def test_warp_segmentation_by_hand():
    # One warp, E = 29 edges: T = 1, UA = 3. Then 33 entries of degree 1: warps of 32 and 1.
    assert lanes(MIXED, "ws") == expect(1, 32, 29, 3, 0)
    assert lanes([1] * 33, "ws") == expect(2, 64, 33, 31, 0)


def test_scan_by_hand():
    # C=64, one CTA with E = 79: warp 0 runs rounds 0 and 1 (lanes 64..78 active), warp 1 only
    # round 0 (32 + 64 >= 79); 3 warp-rounds = 96 slots, UA = 17.
    assert lanes(MIXED + [50], "scan", 64) == expect(3, 96, 79, 17, 0)
    # E = 10 < 32: only warp 0 of a 256-thread CTA runs, once.
    assert lanes([4, 6], "scan", 256) == expect(1, 32, 10, 22, 0)


def test_swc_by_hand():
    # C = 256, one CTA [600, 40, 5, 0]. CTA phase, d = 600 > 256: warp j runs ceil((600 - 32 j) / 256)
    # rounds, 3 for j = 0..2 and 2 for j = 3..7: 19 steps; the last round holds 600 - 512 = 88 edges,
    # warps 0-2 with 32, 32, 24, so UA = 8. Warp phase, d = 40: 2 steps, UA 24. Scan phase, the loose
    # ends 5 + 0: one step of warp 0, UA 27.
    assert lanes([600, 40, 5, 0], "swc", 256) == expect(22, 704, 645, 59, 0)
    phases = Mapping("swc", 256).count_phase_lanes(np.array([600, 40, 5, 0]), np.array([0, 4]))[0]
    assert phases.tolist() == [[19, 608, 600, 8, 0, 0], [2, 64, 40, 24, 0, 0], [1, 32, 5, 27, 0, 0]]
    # The boundaries: d = C goes to a warp (lists longer than the CTA go to the CTA), d = 32 to the scan.
    assert lanes([256], "swc", 256) == expect(8, 256, 256, 0, 0)
    assert Mapping("swc", 256).count_phase_lanes(np.array([256, 32]), np.array([0, 2]))[0, :, 0].tolist() == [0, 8, 1]
    # With only loose ends swc is scan.
    assert lanes(MIXED, "swc", 64) == lanes(MIXED, "scan", 64)


def test_all_zero_degrees_use_no_lanes():
    for mapping in mappings(group_sizes=range(1, 33)):
        assert lanes([0] * 40, mapping.strategy, mapping.param)["total_lanes"] == 0


degree_lists = st.lists(st.integers(0, 200), min_size=0, max_size=300)
skewed_lists = st.lists(st.one_of(st.integers(0, 4), st.integers(0, 3000)), min_size=1, max_size=80)


@settings(max_examples=60, deadline=None)
@given(levels=st.lists(degree_lists, min_size=1, max_size=4), S=st.integers(1, 32))
def test_group_matches_naive_and_identity_holds(levels, S):
    seq = np.array([d for level in levels for d in level], dtype=np.int64)
    ptr = np.cumsum([0] + [len(level) for level in levels]).astype(np.int64)
    fast = Mapping("group", S).count_lanes(seq, ptr)
    for row, level in zip(fast, levels):
        ref = naive.group_lanes(level, S)
        assert tuple(row) == tuple(ref[k] for k in LANE_FIELDS)
        T, total, useful, ua, ur, idle = (int(x) for x in row)
        assert total == 32 * T == useful + ua + ur + idle
        assert useful == sum(level)
        if total:
            assert 0.0 <= useful / total <= 1.0


@settings(max_examples=40, deadline=None)
@given(degrees=skewed_lists, C=st.sampled_from([32, 64, 96, 256]))
def test_ws_and_scan_match_naive(degrees, C):
    for strategy, param, ref in (("ws", None, naive.ws_lanes(degrees)), ("scan", C, naive.scan_lanes(degrees, C))):
        got = lanes(degrees, strategy, param)
        assert got == ref
        assert got["ur_lanes"] == got["idle_lanes"] == 0
        assert got["total_lanes"] == got["useful_lanes"] + got["ua_lanes"]


@settings(max_examples=40, deadline=None)
@given(degrees=skewed_lists, C=st.sampled_from([32, 64, 96, 256]))
def test_swc_matches_naive_phase_by_phase(degrees, C):
    seq = np.asarray(degrees, dtype=np.int64)
    phases = Mapping("swc", C).count_phase_lanes(seq, np.array([0, seq.size], dtype=np.int64))[0]
    ref = naive.swc_phase_lanes(degrees, C)
    for row, phase in zip(phases, ("cta", "warp", "scan")):
        assert tuple(int(x) for x in row) == tuple(ref[phase][k] for k in LANE_FIELDS)
    got = lanes(degrees, "swc", C)
    assert got == naive.swc_lanes(degrees, C)
    assert got["total_lanes"] == 32 * got["warp_iterations"] == got["useful_lanes"] + got["ua_lanes"]
    assert got["ur_lanes"] == got["idle_lanes"] == 0
    assert got["useful_lanes"] == sum(degrees)


@settings(max_examples=40, deadline=None)
@given(degrees=st.lists(st.integers(0, 500), min_size=1, max_size=200))
def test_extremes_of_group_size(degrees):
    # S = 1 has no intra-group waste; S = 32 has one group per warp, so no inter-group waste.
    assert lanes(degrees, "group", 1)["ua_lanes"] == 0
    assert lanes(degrees, "group", 32)["ur_lanes"] == 0
    # Warp segmentation never uses more slots than the fine-grained mapping sm-32.
    assert lanes(degrees, "ws")["total_lanes"] <= lanes(degrees, "group", 32)["total_lanes"]


@pytest.mark.parametrize("bad", [0, 33, -1])
def test_group_size_outside_1_to_32_is_rejected(bad):
    with pytest.raises(InputError, match="group size"):
        mappings(["group"], [bad])


@pytest.mark.parametrize("bad", [0, 31, 100, 2048])
def test_cta_size_must_be_warp_multiple(bad):
    with pytest.raises(InputError, match="CTA size"):
        mappings(["scan"], cta_size=bad)


def test_unknown_strategy_is_rejected():
    with pytest.raises(InputError, match="unknown strategy 'warp'"):
        mappings(["warp"])
