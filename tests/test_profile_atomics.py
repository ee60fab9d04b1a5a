"""The optional [atomics] section of GPU profiles (opmachine.profile.atomics): loading with one line naming
the key on a mistake, writing and replacing it, and the critical path's same-word atomics server."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from opmachine.critical import ATOMIC, CriticalPathModel, launch_time
from opmachine.profile import AtomicCosts, ProfileError, load_profile, measured_section, render_gpu_profile
from simdmodel.errors import InputError
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-26",
       "command": "python -m gpu_validate.atomics --gpu k40c --write k40c.toml"}
COSTS = AtomicCosts(same_word_ns=0.75, provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", atomics=COSTS, **GPU_FIELDS)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.atomics == COSTS
    assert profile.field_provenance("atomics.same_word_ns")["command"] == RUN["command"]
    assert load_profile("k40c").atomics is None and load_profile("k40c").field_provenance("atomics") == {}
    assert load_profile("h200").atomics.same_word_ns > 0 and load_profile("h100").atomics.same_word_ns > 0


CASES = [
    ("negative", rep("same_word_ns = 0.75", "same_word_ns = -1"), "atomics.same_word_ns: must be > 0"),
    ("text", rep("same_word_ns = 0.75", 'same_word_ns = "fast"'), "atomics.same_word_ns: must be a number"),
    ("missing", rep("same_word_ns = 0.75\n", ""), "atomics.same_word_ns: missing key"),
    ("unknown key", rep("[atomics]\n", "[atomics]\nrate = 3\n"), "atomics.rate: unknown key"),
    other_device_case("atomics"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BAD)
def test_any_value_loads_as_a_positive_time_or_is_one_line_naming_its_key(tmp_path, value):
    doc = tomllib.loads(TEXT)
    doc["atomics"]["same_word_ns"] = value
    try:
        costs = load_profile(str(write(tmp_path, naive_dumps(doc)))).atomics
    except ProfileError as error:
        assert "\n" not in str(error) and "atomics.same_word_ns" in str(error), str(error)
    else:
        assert costs.same_word_ns > 0 and np.isfinite(costs.same_word_ns)


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "atomics", COSTS,
                               dataclasses.replace(COSTS, same_word_ns=0.5), "same_word_ns = 0.75", "same_word_ns = 0.5")


def test_new_curves_keep_the_atomics_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "atomics", COSTS, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be an AtomicCosts"):
        measured_section("atomics", {"same_word_ns": 1.0}, "x")
    with pytest.raises(ProfileError, match="atomics.same_word_ns: must be a number"):
        measured_section("atomics", dataclasses.replace(COSTS, same_word_ns="fast"), "x")


def test_atomics_on_one_word_bound_a_launch_one_after_another():
    # Ten slots of 10 jobs each, every sector an L2 hit; 50 atomics on the queue counter per slot. At
    # 0.75 ns each the 500 atomics take 375 ns, after the slice's share of the 100 sectors at the L2's peak
    # time, more than the jobs' own latency: that is the launch.
    model = dataclasses.replace(CriticalPathModel.from_profile(load_profile("h200")), atomic_ns=0.75)
    jobs = np.full(10, 10.0)
    sectors = np.zeros((3, 10))
    sectors[0] = 10.0
    latency = np.full(10, 10 * 20.0)  # 20 ns a job
    hot = np.zeros(10)
    took, bound = launch_time(jobs, sectors, latency, hot, model, atomics=np.full(10, 50.0))
    assert took == pytest.approx(500 * 0.75 + 100 * model.peak_ns[0]) and bound == ATOMIC
    took, bound = launch_time(jobs, sectors, latency, hot, model)
    assert took == pytest.approx(10 * 20.0) and bound == "latency"
