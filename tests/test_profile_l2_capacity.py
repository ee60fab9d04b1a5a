"""The optional [l2_capacity] section of GPU profiles (opmachine.profile.l2_capacity): the capacity the
model's L2 simulates, loading with one line naming the key on a mistake, writing and replacing it, and
the what-if that scales the L2."""
from __future__ import annotations

import dataclasses
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.memory import l2_geometry
from opmachine.profile import L2Capacity, ProfileError, load_profile, measured_section, render_gpu_profile
from opmachine.profile.whatif import derive_profile
from simdmodel.errors import InputError
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-26",
       "command": "python -m gpu_validate.l2_probe --base k40c --record probe.json --write k40c.toml"}
CAPACITY = L2Capacity(effective_bytes=1_000_000, sizes=(196608, 1572864, 3145728), hit_fraction=(1.0, 0.64, 0.32),
                      provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", l2_capacity=CAPACITY, **GPU_FIELDS)
SET_BYTES = 2048  # the K40c test profile's 16 ways x 128-byte lines; its L2 is 1572864 bytes


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.l2_capacity == CAPACITY
    assert "effective_bytes = 1000000\n" in TEXT
    assert profile.field_provenance("l2_capacity.effective_bytes")["command"] == RUN["command"]
    assert load_profile("k40c").l2_capacity is None


def test_the_model_simulates_the_effective_capacity_in_whole_sets(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.l2_model_bytes == 1_000_000 // SET_BYTES * SET_BYTES == 999424
    assert l2_geometry(profile).sets * SET_BYTES == 999424  # 488 sets
    assert load_profile("k40c").l2_model_bytes == load_profile("k40c").l2_bytes == 1572864
    larger = dataclasses.replace(profile, l2_capacity=dataclasses.replace(CAPACITY, effective_bytes=9 << 20))
    assert larger.l2_model_bytes == 1572864  # never more than the L2
    tiny = dataclasses.replace(profile, l2_capacity=dataclasses.replace(CAPACITY, effective_bytes=5))
    assert tiny.l2_model_bytes == SET_BYTES  # at least one set


def test_the_l2_what_if_scales_the_effective_capacity_with_the_l2(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    doubled = derive_profile(profile, {"l2": 2.0})
    assert doubled.l2_bytes == 2 * 1572864 and doubled.l2_capacity.effective_bytes == 2_000_000
    assert doubled.l2_model_bytes == 2_000_000 // SET_BYTES * SET_BYTES
    assert doubled.l2_capacity.sizes == (393216, 3145728, 6291456)
    assert doubled.l2_capacity.hit_fraction == CAPACITY.hit_fraction
    assert derive_profile(profile, {"dram": 2.0}).l2_capacity == CAPACITY


CASES = [
    ("falling sizes", rep("sizes = [196608, 1572864", "sizes = [1572864, 196608"),
     r"l2_capacity.sizes\[1\]: must be larger than the size before it \(1572864\), got 196608"),
    ("float capacity", rep("effective_bytes = 1000000", "effective_bytes = 1000000.5"),
     "l2_capacity.effective_bytes: must be an integer"),
    ("zero capacity", rep("effective_bytes = 1000000", "effective_bytes = 0"),
     "l2_capacity.effective_bytes: must be > 0"),
    ("short", rep("hit_fraction = [1, 0.64, 0.32]", "hit_fraction = [1, 0.64]"),
     "l2_capacity.hit_fraction: has 2 values for the 3 of l2_capacity.sizes"),
    ("above one", rep("hit_fraction = [1,", "hit_fraction = [1.5,"),
     r"l2_capacity.hit_fraction\[0\]: a fraction is at most 1"),
    ("negative", rep("hit_fraction = [1,", "hit_fraction = [-0.1,"), r"l2_capacity.hit_fraction\[0\]: must be >= 0"),
    ("unknown key", rep("[l2_capacity]\n", "[l2_capacity]\nways = 3\n"), "l2_capacity.ways: unknown key"),
    other_device_case("l2_capacity"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 1 << 31), st.floats(-1.0, 2.0), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["effective_bytes", "sizes", "hit_fraction"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["l2_capacity"][key] = value
    try:
        profile = load_profile(str(write(tmp_path, naive_dumps(doc))))
    except ProfileError as error:
        assert "\n" not in str(error) and f"l2_capacity.{key}" in str(error), str(error)
    else:  # whatever loads simulates whole sets, within the L2
        capacity = profile.l2_capacity
        assert len(capacity.sizes) == len(capacity.hit_fraction) and all(0 <= h <= 1 for h in capacity.hit_fraction)
        assert 0 < profile.l2_model_bytes <= profile.l2_bytes and profile.l2_model_bytes % SET_BYTES == 0


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "l2_capacity", CAPACITY,
                               dataclasses.replace(CAPACITY, effective_bytes=900_000),
                               "effective_bytes = 1000000", "effective_bytes = 900000")


def test_new_curves_keep_the_capacity_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "l2_capacity", CAPACITY, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be an? L2Capacity, got dict"):
        measured_section("l2_capacity", {"sizes": [1]}, "x")
    with pytest.raises(ProfileError, match=r"l2_capacity.hit_fraction\[0\]: must be a number"):
        measured_section("l2_capacity", dataclasses.replace(CAPACITY, hit_fraction=("all", 1.0, 1.0)), "x")
