"""The optional [atomic_latency] section of GPU profiles (opmachine.profile.atomic_latency): an atomic's wait
beyond a load's by sectors, loading with one line naming the key on a mistake, writing and replacing it, and
the coupled model's use of it (`opmachine.coupled.claim_jobs`, `atomic_wait_ns`)."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.coupled import atomic_wait_ns, claim_jobs
from opmachine.kernels import ANI, NF1, NF2, OP
from opmachine.kernels._jobs import JobTrace
from opmachine.profile import AtomicLatency, ProfileError, load_profile, measured_section, render_gpu_profile
from simdmodel.errors import InputError
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-26",
       "command": "python -m gpu_validate.atomics --gpu k40c --write k40c.toml"}
LATENCY = AtomicLatency(lanes=(1, 4, 32), swap_ns=(200.0, 260.0, 290.0), load_ns=(150.0, 160.0, 300.0), provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", atomic_latency=LATENCY, **GPU_FIELDS)


def test_the_extra_wait_is_swap_less_load_linear_in_lanes_and_never_negative():
    # 50 ns at one lane, 100 at four, none at 32 (the load there is the slower): halfway between 1 and 4 is 75.
    assert LATENCY.extra_ns([1, 4, 32]) == pytest.approx([50.0, 100.0, 0.0])
    assert LATENCY.extra_ns([2.5, 0, 64]) == pytest.approx([75.0, 50.0, 0.0])
    for name in ("h100", "h200"):
        extra = load_profile(name).atomic_latency.extra_ns([1, 32])
        assert 20 < extra[0] < extra[1] < 200  # a compare-and-swap waits longer than a load, more with more lanes


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.atomic_latency == LATENCY
    assert profile.field_provenance("atomic_latency.swap_ns")["command"] == RUN["command"]
    assert load_profile("k40c").atomic_latency is None


CASES = [
    ("short", rep("load_ns = [150, 160, 300]", "load_ns = [150, 160]"), "atomic_latency.load_ns: has 2 values for the 3"),
    ("order", rep("lanes = [1, 4, 32]", "lanes = [4, 1, 32]"), r"atomic_latency.lanes\[1\]: must be larger"),
    ("text", rep("swap_ns = [200,", 'swap_ns = ["slow",'), r"atomic_latency.swap_ns\[0\]: must be a number"),
    ("unknown key", rep("[atomic_latency]\n", "[atomic_latency]\nsteps = 3\n"), "atomic_latency.steps: unknown key"),
    other_device_case("atomic_latency"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 40), st.booleans(),
                 st.text(alphabet="abc 1.-x", max_size=5)))
def test_any_lane_count_loads_in_order_or_is_one_line_naming_its_key(tmp_path, value):
    doc = tomllib.loads(TEXT)
    doc["atomic_latency"]["lanes"][1] = value
    try:
        latency = load_profile(str(write(tmp_path, naive_dumps(doc)))).atomic_latency
    except ProfileError as error:
        assert "\n" not in str(error) and "atomic_latency.lanes" in str(error), str(error)
    else:
        assert latency.lanes[0] < latency.lanes[1] < latency.lanes[2]


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    changed = dataclasses.replace(LATENCY, swap_ns=(210.0, 260.0, 290.0))
    assert_added_then_replaced(tmp_path, "atomic_latency", LATENCY, changed,
                               "swap_ns = [200,", "swap_ns = [210,")


def test_new_curves_keep_the_atomic_latency_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "atomic_latency", LATENCY, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be an AtomicLatency"):
        measured_section("atomic_latency", {"lanes": [1]}, "x")
    with pytest.raises(ProfileError, match=r"atomic_latency.load_ns\[0\]: must be a number"):
        measured_section("atomic_latency", dataclasses.replace(LATENCY, load_ns=("fast", 1.0, 2.0)), "x")


def test_claims_and_counter_atomics_wait_their_extra_latency_on_their_warps_slot():
    # Warp 0: a lookup instruction with a bitmask read, a label read and a claim of 4 sectors (NF1, NF2, NF2),
    # then a store (OP). Warp 1: a label read (no claim) and an atomic on a counter (ANI, 1 sector). The claim
    # waits extra_ns(4) = 100 ns on slot 0, the counter atomic extra_ns(1) = 50 ns on slot 1.
    server = np.array([NF1, NF2, NF2, OP, NF2, ANI], dtype=np.int8)
    warp = np.array([0, 0, 0, 0, 1, 1], dtype=np.int32)
    sizes = np.array([1, 4, 4, 1, 2, 1])
    trace = JobTrace(server=server, warp=warp, ptr=np.r_[0, np.cumsum(sizes)], sectors=np.zeros(sizes.sum(), np.int32),
                     warps=2)
    assert claim_jobs(trace).tolist() == [False, False, True, False, False, False]
    counter = np.array([False] * 5 + [True])
    profile = dataclasses.replace(load_profile("h200"), atomic_latency=LATENCY)
    assert atomic_wait_ns(trace, [counter], profile) == pytest.approx([100.0, 50.0])
    assert atomic_wait_ns(trace, [counter], dataclasses.replace(profile, atomic_latency=None)) == 0.0


def test_the_atomics_command_writes_both_its_sections_into_the_copy(tmp_path, monkeypatch, capsys):
    # The measuring side stubbed (no GPU here): `--write` puts [atomics] and [atomic_latency] into the copy of
    # the --gpu profile, each from the record, every other section as it was.
    import gpu_validate.device as device
    from gpu_validate import atomics
    from opmachine.profile import profiles_dir

    monkeypatch.setattr(device, "device_info", lambda: {"device": "NVIDIA H200", "driver": "580.159.04"})
    copy = tmp_path / "h200.toml"
    copy.write_text((profiles_dir() / "h200.toml").read_text(encoding="utf-8"), encoding="utf-8")
    record = {"same_word": {"same_word_ns": 0.5},
              "chase": [{"lanes": 1, "swap_ns": 210.0, "load_ns": 150.0}, {"lanes": 32, "swap_ns": 300.0, "load_ns": 190.0}]}
    argv = ["--gpu", "h200", "--write", str(copy)]
    assert device.measure_section(argv, "python -m gpu_validate.atomics", "d", ("atomics", "atomic_latency"),
                                  lambda profile, repeats: record,
                                  lambda rec: (atomics.atomic_costs(rec), atomics.atomic_latency(rec))) == 0
    written, shipped = load_profile(str(copy)), load_profile("h200")
    assert written.atomics.same_word_ns == 0.5 and written.atomic_latency.extra_ns([1, 32]) == pytest.approx([60, 110])
    assert written.atomic_latency.provenance["command"] == "python -m gpu_validate.atomics " + " ".join(argv)
    assert written.bitmask == shipped.bitmask and written.gather == shipped.gather
    assert "--write" in capsys.readouterr().out
