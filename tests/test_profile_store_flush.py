"""The optional [store_flush] section of GPU profiles (opmachine.profile.store_flush) and what the model does
with it (opmachine.store_flush): loading with one line naming the key on a mistake, writing and replacing
it, the `launch` what-if, and each launch with a store predicted that much longer."""
from __future__ import annotations

import dataclasses
import tomllib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.kernels import parse_kernel
from opmachine.predict import predict_bfs
from opmachine.profile import ProfileError, StoreFlush, load_profile, measured_section, render_gpu_profile
from opmachine.profile.whatif import derive_profile
from opmachine.store_flush import store_flush_ns, storing_blocks, stores_per_warp
from simdmodel.errors import InputError
from simdmodel.load import load_graph
from section_checks import (assert_added_then_replaced, assert_kept_for_the_same_device_only, assert_one_line_error,
                            bad_values, other_device_case, rep, write)
from test_profile import GPU_FIELDS, naive_dumps

RUN = {"device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-27",
       "command": "python -m gpu_validate.overheads --gpu k40c --stores --write k40c.toml"}
FLUSH = StoreFlush(blocks=(1, 8, 120), ns=(100.0, 200.0, 250.0), provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", store_flush=FLUSH, **GPU_FIELDS)


def test_the_section_loads_back_as_written_and_names_its_run(tmp_path):
    profile = load_profile(str(write(tmp_path, TEXT)))
    assert profile.store_flush == FLUSH
    assert "blocks = [1, 8, 120]\n" in TEXT
    assert profile.field_provenance("store_flush.ns")["command"] == RUN["command"]
    assert load_profile("k40c").store_flush is None


@pytest.mark.parametrize("blocks, ns", [(0, 0.0), (-3, 0.0), (1, 100.0), (4, 100.0 + 3 * 100.0 / 7), (8, 200.0),
                                        (64, 225.0), (120, 250.0), (10_000, 250.0)])
def test_the_cost_by_storing_blocks(blocks, ns):
    assert FLUSH.at(blocks) == pytest.approx(ns)


def test_no_table_no_cost():
    assert store_flush_ns(load_profile("k40c"), 50) == 0.0
    assert store_flush_ns(load_profile("h200"), 0) == 0.0
    assert store_flush_ns(load_profile("h200"), 1) == load_profile("h200").store_flush.ns[0]


def test_the_launch_what_if_scales_the_costs():
    profile = load_profile("h200")
    halved = derive_profile(profile, {"launch": 0.5})
    assert halved.store_flush.ns == tuple(ns / 2 for ns in profile.store_flush.ns)
    assert halved.store_flush.blocks == profile.store_flush.blocks
    assert derive_profile(profile, {"l2": 2.0}).store_flush == profile.store_flush


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=70), st.sampled_from([32, 64, 256, 1024]))
def test_storing_blocks_counts_the_blocks_with_a_store(stores, block):
    per_block = block // 32
    naive = len({w // per_block for w, s in enumerate(stores) if s > 0})
    assert storing_blocks(np.array(stores, dtype=np.int64), block) == naive


CASES = [
    ("falling blocks", rep("blocks = [1, 8", "blocks = [8, 1"),
     r"store_flush.blocks\[1\]: must be larger than the block count before it \(8\), got 1"),
    ("zero blocks", rep("blocks = [1,", "blocks = [0,"), r"store_flush.blocks\[0\]: must be > 0"),
    ("float blocks", rep("blocks = [1,", "blocks = [1.5,"), r"store_flush.blocks\[0\]: must be an integer"),
    ("short", rep("ns = [100, 200, 250]", "ns = [100, 200]"), "store_flush.ns: has 2 values for the 3 of"),
    ("negative", rep("ns = [100,", "ns = [-1,"), r"store_flush.ns\[0\]: must be >= 0"),
    ("unknown key", rep("[store_flush]\n", "[store_flush]\nways = 3\n"), "store_flush.ways: unknown key"),
    other_device_case("store_flush"),
]


@pytest.mark.parametrize("name, edit, message", CASES, ids=[c[0] for c in CASES])
def test_a_bad_section_is_one_line_naming_its_key(tmp_path, name, edit, message):
    assert_one_line_error(tmp_path, TEXT, edit, message)


BAD = bad_values(st.one_of(st.integers(-3, 1 << 31), st.floats(-1.0, 2.0), st.booleans()), max_size=4)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["blocks", "ns"]), BAD)
def test_any_value_loads_consistently_or_is_one_line_naming_its_key(tmp_path, key, value):
    doc = tomllib.loads(TEXT)
    doc["store_flush"][key] = value
    try:
        profile = load_profile(str(write(tmp_path, naive_dumps(doc))))
    except ProfileError as error:
        assert "\n" not in str(error) and f"store_flush.{key}" in str(error), str(error)
    else:  # whatever loads gives a cost >= 0 at any count of blocks, none without a store
        flush = profile.store_flush
        assert len(flush.blocks) == len(flush.ns) and list(flush.blocks) == sorted(set(flush.blocks))
        assert flush.at(0) == 0.0 and all(flush.at(b) >= 0 for b in (1, 7, 1 << 20))


def test_writing_adds_the_section_then_replaces_it_keeping_every_other_line(tmp_path):
    assert_added_then_replaced(tmp_path, "store_flush", FLUSH, dataclasses.replace(FLUSH, ns=(100.0, 200.0, 260.0)),
                               "ns = [100, 200, 250]", "ns = [100, 200, 260]")


def test_new_curves_keep_the_section_of_the_same_device_only(tmp_path):
    assert_kept_for_the_same_device_only(tmp_path, TEXT, "store_flush", FLUSH, RUN)


def test_the_writer_refuses_what_the_text_cannot_carry():
    with pytest.raises(InputError, match="must be a StoreFlush, got dict"):
        measured_section("store_flush", {"blocks": [1]}, "x")


# --------------------------------------------------------------------------------------------
# The model: every launch that stores is predicted its blocks' [store_flush] longer


@pytest.mark.parametrize("kernel", ["topo", "sm-8", "ws"])
@pytest.mark.parametrize("time_model", ["critical", "eq4"])
def test_a_launch_with_stores_is_predicted_its_flush_longer(kernel, time_model):
    graph = load_graph("rmat:scale=10,ef=8,seed=3")
    h200 = load_profile("h200")
    without = dataclasses.replace(h200, store_flush=None)
    args = dict(l2_model="setassoc", time_model=time_model)
    rows = predict_bfs(graph, 5, parse_kernel(kernel), h200, **args).per_level
    plain = predict_bfs(graph, 5, parse_kernel(kernel), without, **args).per_level
    flush = np.array([h200.store_flush.at(b) for b in rows["storing_blocks"]])
    assert rows["store_flush_ns"].to_numpy() == pytest.approx(flush)
    assert rows["predicted_ns"].to_numpy() == pytest.approx(plain["predicted_ns"].to_numpy() + flush)
    assert (plain["store_flush_ns"] == 0).all()
    assert ((rows["storing_blocks"] > 0) == (rows["jobs_op"] > 0)).all()  # a launch stores where it has OP jobs
    assert (rows["storing_blocks"] <= rows["grid"]).all()


def test_storing_blocks_of_a_trace_are_its_op_jobs_blocks():
    from opmachine.kernels import compact_jobs
    from opmachine.kernels._jobs import OP
    from opmachine.layout import layout_for

    front = np.array([3, 40, 41, 700, 5000, 9000], dtype=np.int32)
    trace = compact_jobs(10_000, front, 64, layout_for(10_000, 0))
    stores = stores_per_warp(trace)
    assert stores.sum() == np.count_nonzero(trace.server == OP) and stores.size == 64
    blocks = {int(w) // 8 for w in trace.warp[trace.server == OP]}
    assert storing_blocks(stores, 256) == len(blocks)
