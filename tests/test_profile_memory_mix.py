"""The optional [memory_mix] section of GPU profiles (opmachine.profile.memory_mix): loading with one line naming
the key on a mistake, writing and replacing it, the recorded runs of both Hopper GPUs (two classes together take
about their summed times), and the section made from a `gpu_validate.memory_mix` record."""
from __future__ import annotations

import dataclasses
import json
import math
import tomllib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_validate.memory_mix import PER_ROUND, ROUNDS, SECTORS_EACH, launches, memory_mix
from opmachine.profile import MemoryMix, ProfileError, load_profile, measured_section, render_gpu_profile
from opmachine.profile.memory_mix import MIX_CLASSES
from simdmodel.errors import InputError
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

FIXTURES = Path(__file__).parent / "fixtures" / "memory_mix"
RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-27",
       "command": "python -m gpu_validate.memory_mix --gpu k40c --write k40c.toml"}
# row misses alone (10 ns), row hits alone (20 ns), the two together (27 ns: nearer the sum, 30, than the
# larger, 20)
MIX = MemoryMix(sectors=((0.0, 4.0, 0.0, 0.0), (0.0, 0.0, 2.0, 0.0), (0.0, 4.0, 2.0, 0.0)), ns=(10.0, 20.0, 27.0),
                provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", memory_mix=MIX, **GPU_FIELDS)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.memory_mix == MIX
    assert "ns = [10, 20, 27]\n" in TEXT
    assert profile.field_provenance("memory_mix.ns")["command"] == RUN["command"]
    assert load_profile("k40c").memory_mix is None


def test_pairs_and_whether_the_dram_classes_add():
    assert MIX.pairs() == [{"classes": "row_miss+row_hit", "ns": 27.0, "sum_ns": 30.0, "max_ns": 20.0}]
    assert MIX.dram_classes_add
    side_by_side = dataclasses.replace(MIX, ns=(10.0, 20.0, 22.0))
    assert not side_by_side.dram_classes_add
    # a pair whose classes were not timed alone with the same sectors says nothing
    unmatched = MemoryMix(((0.0, 4.0, 0.0, 0.0), (0.0, 0.0, 3.0, 0.0), (0.0, 4.0, 2.0, 0.0)), (10.0, 20.0, 27.0))
    assert unmatched.pairs() == [] and not unmatched.dram_classes_add
    # a pair with L2 hits is recorded, but says nothing of the DRAM's classes
    with_l2 = MemoryMix(((4.0, 0.0, 0.0, 0.0), (0.0, 2.0, 0.0, 0.0), (4.0, 2.0, 0.0, 0.0)), (10.0, 20.0, 27.0))
    assert with_l2.pairs()[0]["classes"] == "l2_hit+row_miss" and not with_l2.dram_classes_add


@pytest.mark.parametrize("gpu", ["h200", "h100"])
def test_the_recorded_runs_add_and_are_the_profiles_sections(gpu):
    record = json.loads((FIXTURES / f"{gpu}.json").read_text())
    section = memory_mix(record)
    profile = load_profile(gpu)
    assert profile.memory_mix == section and section.provenance["device"] == profile.device_name
    pairs = section.pairs()
    assert len(pairs) == 6  # every pair of the four classes
    # measured: each pair within -18% .. +10% of the summed times, and 14% .. 118% above the larger one; the
    # DRAM's pairs within -7% .. +10% of the sum
    for pair in pairs:
        assert 0.8 <= pair["ns"] / pair["sum_ns"] <= 1.12 and pair["ns"] / pair["max_ns"] >= 1.14, pair
        if "l2_hit" not in pair["classes"]:
            assert 0.93 <= pair["ns"] / pair["sum_ns"] <= 1.1, pair
    assert section.dram_classes_add
    # the launches as the command makes them: each class alone, then each pair, at its accesses a round
    warps = profile.full_wave_grid(256) * 8
    for launch, sectors in zip(launches(), section.sectors):
        assert sectors == tuple(float(warps * ROUNDS * launch.get(name, 0) * SECTORS_EACH[name])
                                for name in MIX_CLASSES)
    assert [len(launch) for launch in launches()] == [1] * 4 + [2] * 6 and set(PER_ROUND) == set(MIX_CLASSES)


CASES = [
    ("short", rep("ns = [10, 20, 27]", "ns = [10, 20]"), "memory_mix.l2_hit_sectors: has 3 values for the 2 of"),
    ("negative", rep("row_hit_sectors = [0,", "row_hit_sectors = [-1,"),
     r"memory_mix.row_hit_sectors\[0\]: must be >= 0"),
    ("zero time", rep("ns = [10,", "ns = [0,"), r"memory_mix.ns\[0\]: must be > 0"),
    ("empty launch", rep("row_miss_sectors = [4,", "row_miss_sectors = [0,"),
     r"memory_mix.ns\[0\]: times a launch of no"),
    ("missing", rep("store_sectors = [0, 0, 0]\n", ""), "memory_mix.store_sectors: missing key"),
    ("unknown key", rep("[memory_mix]\n", "[memory_mix]\nways = 3\n"), "memory_mix.ways: unknown key"),
    other_device_case("memory_mix"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 1 << 31), st.floats(-1.0, 2.0), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["row_miss_sectors", "row_hit_sectors", "ns"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["memory_mix"][key] = value
    try:
        profile = load_profile(str(write(tmp_path, naive_dumps(doc))))
    except ProfileError as error:
        assert "\n" not in str(error) and "memory_mix." in str(error), str(error)
    else:  # whatever loads has a positive time for every launch of some sectors, and pairs that say so
        mix = profile.memory_mix
        assert len(mix.sectors) == len(mix.ns) and all(ns > 0 for ns in mix.ns)
        assert all(any(row) and min(row) >= 0 for row in mix.sectors)
        assert all(math.isfinite(p["ns"] / p["sum_ns"]) and p["sum_ns"] >= p["max_ns"] for p in mix.pairs())
        assert isinstance(mix.dram_classes_add, bool)


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "memory_mix", MIX, dataclasses.replace(MIX, ns=(10.0, 20.0, 28.0)),
                               "ns = [10, 20, 27]", "ns = [10, 20, 28]")


def test_new_curves_keep_the_section_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "memory_mix", MIX, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be a MemoryMix, got dict"):
        measured_section("memory_mix", {"ns": [1]}, "x")
