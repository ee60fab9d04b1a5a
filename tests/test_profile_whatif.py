"""What-if GPU profiles: each knob changes exactly the figures it names, by its factor."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine.kernels import parse_kernel
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from opmachine.profile.whatif import (
    DRAM_CURVES,
    KNOBS,
    L2_CURVES,
    derive_profile,
    format_what_if,
    parse_profile_spec,
    parse_what_if,
    what_if_value,
)
from simdmodel import load_graph
from simdmodel.errors import InputError

H200 = load_profile("h200", kind="gpu")
FACTORS = st.sampled_from([0.125, 0.25, 0.5, 0.75, 1.5, 2.0, 3.0, 4.0])


def test_parse_what_if():
    assert parse_what_if("l2=0.5,2") == ("l2", (0.5, 2.0))
    assert parse_what_if(" DRAM = 1e-1 ") == ("dram", (0.1,))
    assert parse_profile_spec("h200:l2*2,sms*1.5") == ("h200", {"l2": 2.0, "sms": 1.5})
    assert parse_profile_spec("h200") == ("h200", {})


@pytest.mark.parametrize("text", ["l2", "l2=", "l2=0", "l2=-1", "l2=x", "l2=nan", "l2=inf", "l3=2", "=2",
                                  "l2=1,1", "l2=0.5,,2"])
def test_bad_what_ifs_are_one_input_error(text):
    with pytest.raises(InputError, match="what-if"):
        parse_what_if(text)


@pytest.mark.parametrize("spec", [":l2*2", "h200:", "h200:l2", "h200:l2*0", "h200:l2*2,l2*3", "h200:cores*2"])
def test_bad_profile_specs_are_one_input_error(spec):
    with pytest.raises(InputError, match="profile"):
        parse_profile_spec(spec)


@given(st.text(max_size=30))
@settings(max_examples=300, deadline=None)
def test_what_if_parsers_raise_only_input_errors(text):
    for parse in (parse_what_if, parse_profile_spec):
        try:
            parse(text)
        except InputError:
            pass


@given(st.dictionaries(st.sampled_from(list(KNOBS)), FACTORS, min_size=1))
@settings(max_examples=100, deadline=None)
def test_a_derived_profiles_name_reads_back_as_its_changes(changes):
    derived = derive_profile(H200, changes)
    assert derived.name == f"h200:{format_what_if(changes)}"
    assert parse_profile_spec(derived.name) == ("h200", changes)


def test_l2_is_scaled_to_whole_sets():
    set_bytes = H200.l2_ways * H200.l2_line_bytes
    assert derive_profile(H200, {"l2": 2}).l2_bytes == 2 * H200.l2_bytes
    assert derive_profile(H200, {"l2": 0.5}).l2_bytes == H200.l2_bytes // 2
    tiny = derive_profile(H200, {"l2": 1e-9})
    assert tiny.l2_bytes == set_bytes  # at least one set
    odd = derive_profile(H200, {"l2": 0.3})
    assert odd.l2_bytes % set_bytes == 0 and abs(odd.l2_bytes - 0.3 * H200.l2_bytes) <= set_bytes / 2


@given(FACTORS)
@settings(max_examples=20, deadline=None)
def test_dram_bandwidth_scales_the_curves_floor_and_keeps_their_latency(factor):
    derived = derive_profile(H200, {"dram": factor})
    assert derived.dram_bandwidth_gbs == pytest.approx(H200.dram_bandwidth_gbs * factor)
    for name, curve in H200.curves.items():
        new = derived.curves[name]
        if name not in DRAM_CURVES:
            assert new == curve
            continue
        floor = curve.ns.min()
        assert new.ns.min() == pytest.approx(floor / factor, rel=1e-12)  # full-bandwidth time per request / f
        assert new.ns[0] == pytest.approx(curve.ns[0] + floor * (1 / factor - 1), rel=1e-12)
        assert np.all(np.diff(new.ns) <= 0)  # still never slower with more requests in flight
    assert derived.l2_bytes == H200.l2_bytes and derived.sms == H200.sms


def test_every_service_curve_is_a_dram_or_an_l2_curve():
    from opmachine.profile import CURVE_NAMES

    assert sorted(DRAM_CURVES + L2_CURVES) == sorted(CURVE_NAMES)


def test_l2_bandwidth_touches_only_the_l2_curves():
    derived = derive_profile(H200, {"l2bw": 0.5})
    assert derived.l2_bandwidth_gbs == H200.l2_bandwidth_gbs * 0.5
    for name, curve in H200.curves.items():
        assert (derived.curves[name] == curve) == (name not in L2_CURVES)


def test_sms_and_launch_constants():
    assert derive_profile(H200, {"sms": 1.5}).sms == 198
    assert derive_profile(H200, {"sms": 0.001}).sms == 1
    cheap = derive_profile(H200, {"launch": 0.5})
    assert cheap.launch_overhead_ns == H200.launch_overhead_ns / 2 and cheap.grid_scan_ns == H200.grid_scan_ns / 2
    for n in (1, 1000, 2_000_000, 9_000_000):
        assert cheap.compaction.at(n) == pytest.approx(H200.compaction.at(n) / 2, rel=1e-12)
    assert what_if_value(cheap, "launch") == H200.launch_overhead_ns / 2
    assert derive_profile(H200, {}) is H200 and derive_profile(H200, {"l2": 1.0, "sms": 1}) is H200


@pytest.mark.parametrize("factor", [0, -1, math.nan, math.inf, True, "2"])
def test_derive_refuses_bad_factors(factor):
    with pytest.raises(InputError):
        derive_profile(H200, {"l2": factor})


def test_what_ifs_move_the_prediction_the_way_the_hardware_would():
    graph = load_graph("rmat:scale=15,ef=16")
    kernel = parse_kernel("sm-8")

    def predict(changes):
        return predict_bfs(graph, 7, kernel, derive_profile(H200, changes), l2_model="setassoc", warm_l2=True)

    base = predict({})
    small_l2 = predict({"l2": 1 / 64})
    assert small_l2.per_level["dram_sectors"].sum() > base.per_level["dram_sectors"].sum()
    assert small_l2.predicted_ns > base.predicted_ns
    slow_dram = predict({"l2": 1 / 64, "dram": 0.25})
    assert slow_dram.per_level["dram_sectors"].sum() == small_l2.per_level["dram_sectors"].sum()
    assert slow_dram.predicted_ns > small_l2.predicted_ns
    launches = predict({"launch": 2})
    assert np.allclose(launches.per_level["fixed_ns"], 2 * base.per_level["fixed_ns"])
    constants = base.per_level["fixed_ns"].sum() + base.per_level["store_flush_ns"].sum()  # each doubles
    assert base.per_level["store_flush_ns"].sum() > 0
    assert launches.predicted_ns - base.predicted_ns == pytest.approx(constants, rel=1e-9)
