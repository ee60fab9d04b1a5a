"""The optional [bitmask] section of GPU profiles (opmachine.profile.bitmask): the rate at a bitmask size and
write fraction, loading with one line naming the key on a mistake, writing and replacing it, the critical
path's `L2W` server and the coupled model's use of it."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

import simdmodel as sm
from opmachine.coupled import bitmask_lookup_ns, predict_coupled_bfs
from opmachine.critical import BITMASK, CriticalPathModel, launch_time
from opmachine.kernels import NF1
from opmachine.kernels._jobs import JobTrace
from opmachine.profile import BitmaskRates, ProfileError, load_profile, measured_section, render_gpu_profile
from simdmodel.couplings import parse_coupling
from simdmodel.errors import InputError
from simdmodel.lookup import MASK_READ, MASK_WRITE
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-26",
       "command": "python -m gpu_validate.bitmask --gpu k40c --write k40c.toml"}
# Two sizes x three write fractions: 1 / rate is 0.01, 0.05, 0.09 ns at 1 KiB and half that at 4 KiB; with
# atomic ORs for stores 0.01, 0.02, 0.03 ns and half that.
RATES = BitmaskRates(sizes=(1024, 4096), write_fractions=(0.0, 0.5, 1.0),
                     per_ns=(100.0, 20.0, 1 / 0.09, 200.0, 40.0, 2 / 0.09),
                     per_ns_or=(100.0, 50.0, 1 / 0.03, 200.0, 100.0, 2 / 0.03), provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", bitmask=RATES, **GPU_FIELDS)


def test_the_time_of_a_lookup_is_linear_in_the_write_fraction_and_in_log_size():
    assert RATES.at(1024, 0.0) == pytest.approx(100.0) and RATES.at(4096, 1.0) == pytest.approx(2 / 0.09)
    assert 1 / RATES.at(1024, 0.25) == pytest.approx(0.03)  # halfway between 0.01 and 0.05 ns
    assert 1 / RATES.at(2048, 0.0) == pytest.approx(0.0075)  # halfway in log2 between 0.01 and 0.005 ns
    assert RATES.at(16, 0.5) == pytest.approx(20.0) and RATES.at(1 << 40, 0.5) == pytest.approx(40.0)
    assert 1 / RATES.at(1024, 0.25, atomic_or=True) == pytest.approx(0.015)  # the atomic ORs' grid
    with pytest.raises(InputError, match="no per_ns_or"):
        dataclasses.replace(RATES, per_ns_or=()).at(1024, 0.5, atomic_or=True)
    for size, fraction in ((0, 0.5), (1.5, 0.5), (True, 0.5), (1024, -0.1), (1024, 1.5)):
        with pytest.raises(InputError):
            RATES.at(size, fraction)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.bitmask == RATES
    before = naive_dumps({**(doc := tomllib.loads(TEXT)), "bitmask": {k: v for k, v in doc["bitmask"].items()
                                                                     if k != "per_ns_or"}})
    assert load_profile(str(write(tmp_path, before, "before.toml"))).bitmask == dataclasses.replace(RATES, per_ns_or=())
    assert profile.field_provenance("bitmask.per_ns")["command"] == RUN["command"]
    assert load_profile("k40c").bitmask is None and load_profile("k40c").field_provenance("bitmask") == {}
    h100 = load_profile("h100").bitmask
    assert h100.at(1 << 18, 1.0) < h100.at(1 << 18, 0.0)  # stores slow the reads of a 256 KiB bitmask down


CASES = [
    ("short", rep("per_ns = [100", "per_ns = [100, 1"), r"bitmask.per_ns: has 7 values for the 6 of"),
    ("short or", rep("per_ns_or = [100", "per_ns_or = [100, 1"), r"bitmask.per_ns_or: has 7 values for the 6 of"),
    ("fraction", rep("write_fractions = [0, 0.5, 1]", "write_fractions = [0, 0.5, 1.5]"),
     r"bitmask.write_fractions\[2\]: must be in 0..1, got 1.5"),
    ("order", rep("sizes = [1024, 4096]", "sizes = [4096, 1024]"), r"bitmask.sizes\[1\]: must be larger"),
    ("empty", rep("sizes = [1024, 4096]", "sizes = []"), "bitmask.sizes: must be a non-empty array"),
    ("unknown key", rep("[bitmask]\n", "[bitmask]\nrate = 3\n"), "bitmask.rate: unknown key"),
    other_device_case("bitmask"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(BAD)
def test_any_fraction_loads_in_range_or_is_one_line_naming_its_key(tmp_path, value):
    doc = tomllib.loads(TEXT)
    doc["bitmask"]["write_fractions"][1] = value
    try:
        rates = load_profile(str(write(tmp_path, naive_dumps(doc)))).bitmask
    except ProfileError as error:
        assert "\n" not in str(error) and "bitmask.write_fractions" in str(error), str(error)
    else:
        assert 0.0 < rates.write_fractions[1] < 1.0


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    changed = dataclasses.replace(RATES, per_ns=(50.0, *RATES.per_ns[1:]))
    assert_added_then_replaced(tmp_path, "bitmask", RATES, changed, "per_ns = [100,", "per_ns = [50,")


def test_new_curves_keep_the_bitmask_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "bitmask", RATES, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be a BitmaskRates"):
        measured_section("bitmask", {"per_ns": [1.0]}, "x")
    with pytest.raises(ProfileError, match=r"bitmask.per_ns\[0\]: must be a number"):
        measured_section("bitmask", dataclasses.replace(RATES, per_ns=("fast", *RATES.per_ns[1:])), "x")


def test_bitmask_lookups_bound_a_launch_at_their_measured_rate():
    # Ten slots of 10 jobs each, every sector an L2 hit, 20 ns a job; the slots' bitmask lookups take
    # 40 ns each at the GPU-wide rate: 400 ns in all, more than the jobs' own latency (200 ns).
    model = CriticalPathModel.from_profile(load_profile("h200"))
    jobs, hot = np.full(10, 10.0), np.zeros(10)
    sectors = np.zeros((3, 10))
    sectors[0] = 10.0
    latency = np.full(10, 10 * 20.0)
    took, bound = launch_time(jobs, sectors, latency, hot, model, mask_ns=np.full(10, 40.0))
    assert took == pytest.approx(400.0) and bound == BITMASK
    took, bound = launch_time(jobs, sectors, latency, hot, model, mask_ns=np.full(10, 1.0))
    assert took == pytest.approx(200.0) and bound == "latency"


def test_a_launchs_lookup_time_is_its_reads_at_the_rate_of_its_write_fraction_shared_by_slot():
    # 4 reads of which 2 store, on a graph of 8192 vertices (a 1 KiB bitmask): 4 / RATES.at(1024, 0.5) =
    # 4 x 0.05 ns, shared 1:3 by the two warps' NF1 jobs (one and three).
    profile = dataclasses.replace(load_profile("h200"), bitmask=RATES)
    flags = np.array([MASK_READ, MASK_READ | MASK_WRITE, MASK_READ | MASK_WRITE, MASK_READ, 0], dtype=np.uint8)
    trace = JobTrace(server=np.array([NF1, NF1, NF1, NF1, 0], dtype=np.int8), warp=np.array([0, 1, 1, 1, 0]),
                     ptr=np.arange(6), sectors=np.zeros(5, dtype=np.int32), warps=2)
    assert bitmask_lookup_ns(trace, flags, 8192, profile) == pytest.approx([0.05, 0.15])
    # the claim build's atomic ORs: 4 x 0.02 ns; none where the section has no such rates
    assert bitmask_lookup_ns(trace, flags, 8192, profile, atomic_or=True) == pytest.approx([0.02, 0.06])
    without_or = dataclasses.replace(profile, bitmask=dataclasses.replace(RATES, per_ns_or=()))
    assert bitmask_lookup_ns(trace, flags, 8192, without_or, atomic_or=True) is None
    assert bitmask_lookup_ns(trace, np.zeros(0, dtype=np.uint8), 8192, profile) is None
    assert bitmask_lookup_ns(trace, flags, 8192, dataclasses.replace(profile, bitmask=None)) is None


def test_a_measured_bitmask_only_adds_time_to_a_coupled_bfs():
    graph = sm.load_graph("rmat:scale=12,ef=16")
    source = sm.pick_sources(graph, 1, 1)[0]
    h100 = load_profile("h100")
    two_phase = parse_coupling("two-phase")  # the plain build: its lookups store bytes
    with_rates = predict_coupled_bfs(graph, source, two_phase, h100, claim=False)
    without = predict_coupled_bfs(graph, source, two_phase, dataclasses.replace(h100, bitmask=None), claim=False)
    bound = (with_rates["bottleneck"] == BITMASK).to_numpy()
    assert bound.any() and set(with_rates["phase"][bound]) == {"contract"}  # 60 K lookups over a 512-byte bitmask
    longer = with_rates["predicted_ns"].to_numpy() > without["predicted_ns"].to_numpy() + 1e-6
    assert (longer == bound).all()
    assert np.allclose(with_rates["predicted_ns"][~bound], without["predicted_ns"][~bound])


def test_the_claim_builds_lookups_are_bound_by_the_atomic_or_rates_not_the_byte_stores():
    # it sets its bits with an atomic OR (status_lookup.cuh, BITMASK_CLAIM): the section's per_ns_or, never the
    # byte stores' per_ns (the claim build makes none); without per_ns_or no bound. Here two contractions of the
    # claim build would be bound at the byte stores' rate.
    graph = sm.load_graph("random:n=20000,m=60000")
    source = sm.pick_sources(graph, 1, 1)[0]
    h200, two_phase = load_profile("h200"), parse_coupling("two-phase")
    rates = h200.bitmask
    byte_rates_only = dataclasses.replace(h200, bitmask=dataclasses.replace(rates, per_ns_or=()))
    none = predict_coupled_bfs(graph, source, two_phase, dataclasses.replace(h200, bitmask=None), claim=True)
    pd.testing.assert_series_equal(predict_coupled_bfs(graph, source, two_phase, byte_rates_only, claim=True)
                                   ["predicted_ns"], none["predicted_ns"])
    as_bytes = dataclasses.replace(h200, bitmask=dataclasses.replace(rates, per_ns_or=rates.per_ns))
    assert (predict_coupled_bfs(graph, source, two_phase, as_bytes, claim=True)["bottleneck"] == BITMASK).sum() >= 2
    claim = predict_coupled_bfs(graph, source, two_phase, h200, claim=True)
    assert (claim["predicted_ns"] >= none["predicted_ns"] - 1e-6).all()


def test_a_measuring_record_becomes_the_section_row_by_row():
    from gpu_validate.bitmask import bitmask_rates

    cells = [(s, f) for s in RATES.sizes for f in RATES.write_fractions]
    rows = [{"stores": how, "bytes": size, "write_fraction": fraction, "per_ns": rate}
            for how, rates in (("byte", RATES.per_ns), ("or", RATES.per_ns_or))
            for (size, fraction), rate in zip(cells, rates)]
    assert bitmask_rates({**RUN, "lookups": rows}) == RATES
    # a record from before the atomic ORs were measured: its rows say nothing of how they store
    before = [{k: v for k, v in row.items() if k != "stores"} for row in rows if row["stores"] == "byte"]
    assert bitmask_rates({**RUN, "lookups": before}) == dataclasses.replace(RATES, per_ns_or=())


@pytest.mark.parametrize("argv, message", [([], "error: "), (["--repeats", "0"], "--repeats must be at least 1")])
def test_the_measuring_command_without_a_gpu_or_with_bad_options_is_one_line(capsys, argv, message):
    import importlib.util

    from gpu_validate.bitmask import main

    if importlib.util.find_spec("cupy") is not None and not argv:
        pytest.skip("CuPy is installed: the command would measure")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.gpu
def test_real_gpu_bitmask_lookups_slow_down_as_more_of_them_store():
    # On a GPU the effect the section records is there: over a 64 KiB bitmask, lookups that all store
    # run far below the rate of lookups that store nothing.
    from gpu_validate.bitmask import measure_lookups
    from gpu_validate.device import device_info, profile_for_device

    profile = load_profile(profile_for_device(device_info()))
    rows = measure_lookups(profile, sizes=(1 << 16,), fractions=(0.0, 1.0), repeats=3)
    assert [row["write_fraction"] for row in rows] == [0.0, 1.0]
    assert rows[1]["per_ns"] < rows[0]["per_ns"] / 4 and all(row["per_ns"] > 0 for row in rows)
