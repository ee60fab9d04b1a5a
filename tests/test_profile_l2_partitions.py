"""The optional [l2_partitions] section of GPU profiles (opmachine.profile.l2_partitions): loading with one
line naming the key on a mistake, and writing and replacing it."""
from __future__ import annotations

import dataclasses
import tomllib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.profile import L2Partitions, ProfileError, load_profile, render_gpu_profile
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-27",
       "command": "python -m gpu_validate.l2_probe --base k40c --record probe.json --write k40c.toml"}
PARTITIONS = L2Partitions(groups=2, sectors=(1, 4, 32), near_ns=(140.0, 150.0, 170.0), far_ns=(230.0, 240.0, 270.0),
                          provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", l2_partitions=PARTITIONS, **GPU_FIELDS)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.l2_partitions == PARTITIONS
    assert "sectors = [1, 4, 32]\n" in TEXT
    assert profile.field_provenance("l2_partitions.far_ns")["command"] == RUN["command"]
    assert load_profile("k40c").l2_partitions is None


CASES = [
    ("one group", rep("groups = 2", "groups = 1"), "l2_partitions.groups: partitions are at least 2"),
    ("not from one", rep("sectors = [1, 4, 32]", "sectors = [2, 4, 32]"),
     "l2_partitions.sectors: starts at one sector"),
    ("falling", rep("sectors = [1, 4, 32]", "sectors = [1, 32, 4]"), r"l2_partitions.sectors\[2\]: must be larger"),
    ("short", rep("far_ns = [230, 240, 270]", "far_ns = [230, 240]"),
     "l2_partitions.far_ns: has 2 values for the 3 of l2_partitions.sectors"),
    ("far faster", rep("far_ns = [230,", "far_ns = [130,"),
     r"l2_partitions.far_ns\[0\]: a load across partitions is no faster than within one"),
    ("unknown key", rep("[l2_partitions]\n", "[l2_partitions]\nways = 3\n"), "l2_partitions.ways: unknown key"),
    other_device_case("l2_partitions"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 64), st.floats(-1.0, 400.0), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["groups", "sectors", "near_ns", "far_ns"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["l2_partitions"][key] = value
    try:
        profile = load_profile(str(write(tmp_path, naive_dumps(doc))))
    except ProfileError as error:
        assert "\n" not in str(error) and f"l2_partitions.{key}" in str(error), str(error)
    else:  # whatever loads gives latencies for 1..32 sectors, a far one never below the near one
        section = profile.l2_partitions
        near, far = section.latency("near", 32), section.latency("far", 32)
        assert section.groups >= 2 and (far >= near).all() and (near[1:] > 0).all()


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "l2_partitions", PARTITIONS,
                               dataclasses.replace(PARTITIONS, groups=4), "groups = 2", "groups = 4")


def test_new_curves_keep_the_partitions_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "l2_partitions", PARTITIONS, RUN)
