"""The optional [gather] section of GPU profiles (opmachine.profile.gather): the rate at a table size,
loading with one line naming the key on a mistake, writing and replacing it."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.profile import GatherRates, ProfileError, load_profile, measured_section, render_gpu_profile
from simdmodel.errors import InputError
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-26",
       "command": "python -m gpu_validate.gather --gpu k40c --write k40c.toml"}
RATES = GatherRates(sizes=(1024, 4096, 1 << 30), per_ns=(100.0, 80.0, 20.0), provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", gather=RATES, **GPU_FIELDS)



def test_the_rate_is_linear_in_log_size_and_flat_outside_the_measured_sizes():
    assert RATES.at(1024) == 100.0 and RATES.at(4096) == 80.0 and RATES.at(1 << 30) == 20.0
    assert RATES.at(2048) == pytest.approx(90.0)  # halfway in log2 between 1 KiB and 4 KiB
    assert RATES.at(16) == 100.0 and RATES.at(1 << 40) == 20.0
    assert RATES.at(np.int64(4096)) == 80.0


@pytest.mark.parametrize("size", [0, -4, 1.5, True, "7", None])
def test_a_size_that_is_not_a_byte_count_is_refused(size):
    with pytest.raises(InputError, match="size must be an integer >= 1 byte"):
        RATES.at(size)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.gather == RATES
    assert profile.field_provenance("gather.per_ns")["command"] == RUN["command"]
    assert load_profile("k40c").gather is None and load_profile("k40c").field_provenance("gather") == {}



CASES = [
    ("falling sizes", rep("sizes = [1024, 4096", "sizes = [4096, 1024"),
     r"gather.sizes\[1\]: must be larger than the size before it \(4096\), got 1024"),
    ("float size", rep("sizes = [1024,", "sizes = [1024.5,"), r"gather.sizes\[0\]: must be an integer"),
    ("empty", rep("per_ns = [100, 80, 20]", "per_ns = []"), "gather.per_ns: must be a non-empty array"),
    ("short", rep("per_ns = [100, 80, 20]", "per_ns = [100, 80]"), "gather.per_ns: has 2 values for the 3 of gather.sizes"),
    ("negative", rep("per_ns = [100,", "per_ns = [-1,"), r"gather.per_ns\[0\]: must be > 0"),
    ("unknown key", rep("[gather]\n", "[gather]\nrate = 3\n"), "gather.rate: unknown key"),
    other_device_case("gather"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 1 << 31), st.floats(-1.0, 2e4), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["sizes", "per_ns"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["gather"][key] = value
    try:
        rates = load_profile(str(write(tmp_path, naive_dumps(doc)))).gather
    except ProfileError as error:
        assert "\n" not in str(error) and f"gather.{key}" in str(error), str(error)
    else:  # whatever loads gives a positive rate at every size
        assert all(a < b for a, b in zip(rates.sizes, rates.sizes[1:])) and len(rates.sizes) == len(rates.per_ns)
        assert all(rates.at(size) > 0 for size in (1, rates.sizes[0], rates.sizes[-1] * 2))


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "gather", RATES, dataclasses.replace(RATES, per_ns=(100.0, 70.0, 20.0)),
                               "100, 80, 20", "100, 70, 20")


def test_new_curves_keep_the_gather_rates_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "gather", RATES, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be a GatherRates"):
        measured_section("gather", {"sizes": [1]}, "x")
    with pytest.raises(ProfileError, match=r"gather.per_ns\[0\]: must be a number"):
        measured_section("gather", dataclasses.replace(RATES, per_ns=("fast", 1.0, 2.0)), "x")
