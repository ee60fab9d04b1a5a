"""The optional [compaction] section of GPU profiles (opmachine.profile.compaction): the time at a
graph size, loading with one line naming the key on a mistake, writing and replacing it, and the
model charging it."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.kernels import parse_kernel
from opmachine.predict import fixed_ns, predict_bfs
from opmachine.profile import CompactionCosts, ProfileError, load_profile, measured_section, render_gpu_profile
from simdmodel.errors import InputError
from simdmodel.graph import EdgeList, csr_from_edges
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, VALUES, load_or_profile_error, mutate, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-23",
       "command": "python -m gpu_validate.overheads --gpu k40c --sizes --write k40c.toml"}
COSTS = CompactionCosts(sizes=(1, 1001, 2001), ns=(10000.0, 11000.0, 15000.0), p10_ns=(9000.0, 10000.0, 14000.0),
                        p90_ns=(12000.0, 13000.0, 18000.0), provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", compaction=COSTS, **GPU_FIELDS)



# --------------------------------------------------------------------------------------------
# The time at a size


def test_linear_between_sizes_and_along_the_last_segment_beyond():
    assert COSTS.at(1) == 10000.0 and COSTS.at(1001) == 11000.0 and COSTS.at(2001) == 15000.0
    assert COSTS.at(501) == 10500.0  # halfway between 1 and 1001
    assert COSTS.at(1501) == 13000.0
    assert COSTS.at(3001) == 19000.0  # 4 ns per vertex past 2001, as between 1001 and 2001
    assert COSTS.at(np.int64(1001)) == 11000.0


def test_a_falling_last_segment_is_not_extrapolated_below_the_largest_size():
    falling = dataclasses.replace(COSTS, ns=(10000.0, 15000.0, 14000.0), p90_ns=(12000.0, 16000.0, 18000.0))
    assert falling.at(10**6) == 14000.0


@pytest.mark.parametrize("n", [0, -3, 1.5, True, "7", None])
def test_a_size_that_is_not_a_vertex_count_is_refused(n):
    with pytest.raises(InputError, match="vertex count must be an integer >= 1"):
        COSTS.at(n)


def test_shipped_profiles_say_where_their_compaction_times_come_from():
    for name in ("h100", "h200"):
        profile = load_profile(name)
        assert profile.compaction.sizes[0] == 1 and len(profile.compaction.sizes) == 11
        assert profile.field_provenance("compaction")["device"] == profile.device_name
        assert "gpu_validate.overheads" in profile.field_provenance("compaction.ns")["command"]
    for name in ("k40c", "c2050"):
        assert load_profile(name).compaction is None and load_profile(name).field_provenance("compaction") == {}


# --------------------------------------------------------------------------------------------
# Loading: one line naming the key


def test_the_section_loads_back_as_written(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.compaction == COSTS



CASES = [
    ("first size", rep("sizes = [1, 1001", "sizes = [2, 1001"), r"compaction.sizes\[0\]: must be 1"),
    ("falling sizes", rep("sizes = [1, 1001, 2001]", "sizes = [1, 2001, 1001]"),
     r"compaction.sizes\[2\]: must be larger than the size before it \(2001\), got 1001"),
    ("one size", rep("sizes = [1, 1001, 2001]", "sizes = [1]"), "compaction.sizes: needs at least 2 sizes, got 1"),
    ("float size", rep("sizes = [1, 1001", "sizes = [1, 1001.5"), r"compaction.sizes\[1\]: must be an integer"),
    ("huge size", rep("2001]", "4000000000]"), r"compaction.sizes\[2\]: must be at most 2147483647 vertices"),
    ("short ns", rep("ns = [10000, 11000, 15000]", "ns = [10000, 11000]"), "compaction.ns: has 2 values for 3 sizes"),
    ("negative ns", rep("ns = [10000,", "ns = [-1,"), r"compaction.ns\[0\]: must be > 0"),
    ("median outside", rep("ns = [10000, 11000", "ns = [10000, 13500"),
     r"compaction.p90_ns\[1\]: is below compaction.ns\[1\] \(13000 < 13500\)"),
    ("low above median", rep("p10_ns = [9000,", "p10_ns = [10001,"),
     r"compaction.p10_ns\[0\]: is above compaction.ns\[0\] \(10001 > 10000\)"),
    ("string array", rep("p10_ns = [9000, 10000, 14000]", 'p10_ns = "fast"'),
     "compaction.p10_ns: must be an array of numbers, got string 'fast'"),
    ("unknown key", rep("[compaction]\n", "[compaction]\nmedian = 3\n"), "compaction.median: unknown key"),
    ("no provenance", rep("[compaction.provenance]", "[compaction.elsewhere]"), "compaction.elsewhere: unknown key"),
    ("no command", rep('command = "python -m gpu_validate.overheads', 'commands = "x'),
     "compaction.provenance.commands: unknown key"),
    other_device_case("compaction"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 3000), st.floats(-1.0, 2e4), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["sizes", "ns", "p10_ns", "p90_ns"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["compaction"][key] = value
    try:
        costs = load_profile(str(write(tmp_path, naive_dumps(doc)))).compaction
    except ProfileError as error:
        assert "\n" not in str(error) and f"compaction.{key}" in str(error), str(error)
    else:  # whatever loads keeps every rule the model relies on
        assert costs.sizes[0] == 1 and all(a < b for a, b in zip(costs.sizes, costs.sizes[1:]))
        assert all(lo <= mid <= hi for lo, mid, hi in zip(costs.p10_ns, costs.ns, costs.p90_ns))
        assert costs.at(costs.sizes[-1] * 2) >= costs.ns[-1] > 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutations_load_or_raise_profile_error(tmp_path, data):
    doc = mutate(tomllib.loads(TEXT), data, VALUES, ["extra", "sizes", "compaction", "provenance", "device"])
    load_or_profile_error(tmp_path / "m.toml", naive_dumps(doc))


# --------------------------------------------------------------------------------------------
# Writing


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "compaction", COSTS, dataclasses.replace(COSTS, ns=(10000.0, 12000.0, 15000.0)),
                               "11000, 15000", "12000, 15000")


def test_new_curves_keep_the_compaction_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "compaction", COSTS, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be a CompactionCosts"):
        measured_section("compaction", {"sizes": [1]}, "x")
    with pytest.raises(ProfileError, match="compaction.provenance.command: needs a non-empty string"):
        measured_section("compaction", dataclasses.replace(COSTS, provenance={**RUN, "command": " "}), "x")
    with pytest.raises(ProfileError, match=r"compaction.ns\[0\]: must be a number"):
        measured_section("compaction", dataclasses.replace(COSTS, ns=("fast", 1.0, 2.0)), "x")


# --------------------------------------------------------------------------------------------
# The model charges it


def one_edge_graph(n):
    return csr_from_edges(EdgeList(np.array([0]), np.array([1]), n, undirected=False, name="one-edge"))


@pytest.mark.parametrize("n", [2, 5000, 300_000, 5_000_000])
def test_an_empty_compaction_in_a_warm_bfs_is_predicted_as_the_profile_measured_it(n):
    """The second round's compaction finds no vertex: it is the launch [compaction] measured (an
    empty frontier, the level array in the L2), so the model's own time for it cancels and the
    prediction is the measured time at the graph's size, past 4M vertices too."""
    h200 = load_profile("h200")
    table = predict_bfs(one_edge_graph(n), 0, parse_kernel("sm-1"), h200, l2_model="setassoc",
                        warm_l2=True).per_level
    compactions = table[table["phase"] == "compact"]
    assert compactions["fixed_ns"].tolist() == [h200.compaction.at(n)] * 2
    assert compactions["predicted_ns"].iloc[1] == pytest.approx(h200.compaction.at(n), rel=1e-12)
    assert compactions["predicted_ns"].iloc[0] > h200.compaction.at(n)  # it stores vertex 1


def test_without_the_table_a_compaction_is_charged_the_one_node_constant():
    h200 = load_profile("h200")
    bare = dataclasses.replace(h200, compaction=None)
    assert fixed_ns(bare, "compact", 5000) == h200.launch_overhead_ns + h200.grid_scan_ns
    table = predict_bfs(one_edge_graph(5000), 0, parse_kernel("sm-1"), bare, l2_model="setassoc",
                        warm_l2=True).per_level
    assert set(table.loc[table["phase"] == "compact", "fixed_ns"]) == {h200.launch_overhead_ns + h200.grid_scan_ns}
    assert fixed_ns(h200, "expand", 5000) == fixed_ns(bare, "expand", 5000) == h200.launch_overhead_ns
