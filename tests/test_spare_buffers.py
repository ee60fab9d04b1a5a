"""Job buffers kept from one prediction for the next (`kernels.spare_buffer`): the largest is taken first,
the kept memory stays under its cap and is let go for a prediction that needs it, and a prediction in a
buffer an earlier one filled is the same; job arrays from either allocator (`kernels.job_array`), and
let-go job arrays handed out again (`kernels.recycle`) only where nothing refers to them any more."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from opmachine.footprint import check_simulation_fits, simulation_bytes
from opmachine.kernels import _jobs, hand_back, parse_kernel, release_spares, spare_buffer
from opmachine.layout import layout_for
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from simdmodel import resources
from simdmodel.algorithms import BFS
from simdmodel.errors import InputError
from simdmodel.load import load_graph


@pytest.fixture
def no_spares(monkeypatch):
    monkeypatch.setattr(_jobs, "_spares", [])
    monkeypatch.setattr(_jobs, "_pool", [])


def test_the_largest_kept_buffer_is_taken_first_and_a_new_one_when_none_is_kept(no_spares):
    small, large = _jobs.JobBuffer(10, 100), _jobs.JobBuffer(1000, 10_000)
    hand_back(small)
    hand_back(large)
    assert spare_buffer() is large
    assert spare_buffer() is small
    fresh = spare_buffer()
    assert fresh is not small and fresh is not large and _jobs._spares == []


def test_releasing_lets_every_kept_buffer_go_and_says_how_much_they_held(no_spares):
    kept = [_jobs.JobBuffer(10, 100), _jobs.JobBuffer(20, 300)]
    for buffer in kept:
        hand_back(buffer)
    assert release_spares() == sum(buffer.reserved_bytes for buffer in kept)
    assert _jobs._spares == [] and release_spares() == 0


def test_buffers_past_the_cap_are_let_go(no_spares, monkeypatch):
    first, second = _jobs.JobBuffer(100, 1000), _jobs.JobBuffer(100, 1000)
    monkeypatch.setattr(_jobs, "SPARE_BYTES", first.reserved_bytes + second.reserved_bytes - 1)
    hand_back(first)
    hand_back(second)
    assert _jobs._spares == [first]


def test_a_prediction_in_buffers_an_earlier_one_filled_is_the_same(no_spares):
    graph = load_graph("rmat:scale=12,ef=16,seed=4")
    profile = load_profile("h100", kind="gpu")

    def table(label):
        return predict_bfs(graph, 0, parse_kernel(label), profile, l2_model="setassoc", warm_l2=True).per_level

    first = table("sm-4")
    assert _jobs._spares  # handed back
    table("topo")  # fills the kept buffers with other jobs
    pd.testing.assert_frame_equal(table("sm-4"), first, check_exact=True)


@pytest.mark.parametrize("limit", [0, 1 << 20])
def test_job_arrays_of_either_allocator_hold_what_is_written(limit, monkeypatch):
    monkeypatch.setattr(_jobs, "SMALL_PAGES_BYTES", limit)  # 0: every array from numpy
    values = np.arange(1000, dtype=np.int64) * 3
    array = _jobs.job_array(values.size, np.int64)
    array[:] = values
    assert array.dtype == np.int64 and array.shape == (1000,) and np.array_equal(array, values)
    assert array.flags.writeable and array.ctypes.data % 8 == 0


def test_a_prediction_that_fits_only_without_the_kept_buffers_lets_them_go_first(no_spares, monkeypatch):
    graph = load_graph("rmat:scale=10,ef=8,seed=1")
    profile = load_profile("h100", kind="gpu")
    frontiers, layout = BFS.rounds(graph, 0, "sorted"), layout_for(graph.n, graph.m)
    needed, _ = simulation_bytes(graph, layout, frontiers, None, profile, False, 0)
    kept = _jobs.JobBuffer(1000, 1000)
    free = iter([needed - 1, needed])  # short by a byte until the kept buffer is let go
    monkeypatch.setattr(resources, "available_bytes", lambda: next(free))
    hand_back(kept)
    check_simulation_fits("opm topo", graph, layout, frontiers, None, profile, False, 0)
    assert _jobs._spares == []
    monkeypatch.setattr(resources, "available_bytes", lambda: needed - 1)
    with pytest.raises(InputError, match="needs about"):
        check_simulation_fits("opm topo", graph, layout, frontiers, None, profile, False, 0)


def _memory(array) -> int:
    return array.__array_interface__["data"][0]


def test_a_let_go_job_array_is_handed_out_again_for_a_request_it_fits(no_spares, monkeypatch):
    monkeypatch.setattr(_jobs, "POOLED_SMALLEST", 1024)
    first = _jobs.job_array(1000, np.int32)
    address = _memory(first)
    held = [first]
    del first
    _jobs.recycle(held)
    assert held == [] and len(_jobs._pool) == 1
    again = _jobs.job_array(500, np.int64)  # 4000 bytes again, as another type
    assert _memory(again) == address and again.dtype == np.int64 and again.size == 500 and _jobs._pool == []
    again[:] = np.arange(500)
    assert np.array_equal(again, np.arange(500))


def test_memory_a_view_still_refers_to_is_not_handed_out_again(no_spares, monkeypatch):
    monkeypatch.setattr(_jobs, "POOLED_SMALLEST", 1024)
    array = _jobs.job_array(1000, np.int32)
    array[:] = 7
    trace_view = array[:10]  # a trace's view of its buffer
    held = [array]
    del array
    _jobs.recycle(held)
    assert _jobs._pool == []
    _jobs.job_array(1000, np.int32)[:] = 0
    assert (trace_view == 7).all()


def test_a_small_request_leaves_a_much_larger_array_for_a_later_one(no_spares, monkeypatch):
    monkeypatch.setattr(_jobs, "POOLED_SMALLEST", 1024)
    held = [_jobs.job_array(100_000, np.uint8)]
    _jobs.recycle(held)
    small = _jobs.job_array(10_000, np.uint8)
    assert len(_jobs._pool) == 1 and not np.shares_memory(small, _jobs._pool[0])
    assert _jobs.job_array(60_000, np.uint8).size == 60_000 and _jobs._pool == []


def test_idle_job_memory_stays_under_its_cap_and_is_let_go_on_release(no_spares, monkeypatch):
    monkeypatch.setattr(_jobs, "POOLED_SMALLEST", 1024)
    monkeypatch.setattr(_jobs, "POOLED_BYTES", 5000)
    held = [_jobs.job_array(size, np.uint8) for size in (4000, 3000, 2000, 1000)]
    _jobs.recycle(held)  # from the end: 1000 is too small to keep, 2000 and 3000 are kept, 4000 more passes the cap
    assert sorted(owner.size for owner in _jobs._pool) == [2000, 3000]
    assert release_spares() == 5000 and _jobs._pool == []


def test_a_warm_prediction_in_memory_an_earlier_one_let_go_is_the_same(no_spares, monkeypatch):
    monkeypatch.setattr(_jobs, "POOLED_SMALLEST", 0)
    graph = load_graph("rmat:scale=12,ef=16,seed=4")
    profile = load_profile("h100", kind="gpu")

    def table(label):
        return predict_bfs(graph, 0, parse_kernel(label), profile, l2_model="setassoc", warm_l2=True).per_level

    first = table("ws")
    assert _jobs._pool  # the prior run's traces, let go
    table("sm-2")  # fills that memory with other jobs
    pd.testing.assert_frame_equal(table("ws"), first, check_exact=True)
