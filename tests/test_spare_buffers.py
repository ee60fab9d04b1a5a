"""Job buffers kept from one prediction for the next (`kernels.spare_buffer`): the largest is taken first,
the kept memory stays under its cap, and a prediction in a buffer an earlier one filled is the same."""
from __future__ import annotations

import pandas as pd
import pytest

from opmachine.kernels import _jobs, hand_back, parse_kernel, spare_buffer, spare_bytes
from opmachine.predict import predict_bfs
from opmachine.profile import load_profile
from simdmodel.load import load_graph


@pytest.fixture
def no_spares(monkeypatch):
    monkeypatch.setattr(_jobs, "_spares", [])


def test_the_largest_kept_buffer_is_taken_first_and_a_new_one_when_none_is_kept(no_spares):
    small, large = _jobs.JobBuffer(10, 100), _jobs.JobBuffer(1000, 10_000)
    hand_back(small)
    hand_back(large)
    assert spare_bytes() == small.reserved_bytes + large.reserved_bytes
    assert spare_buffer() is large
    assert spare_buffer() is small
    fresh = spare_buffer()
    assert fresh is not small and fresh is not large and spare_bytes() == 0


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
    assert spare_bytes() > 0  # handed back
    table("topo")  # fills the kept buffers with other jobs
    pd.testing.assert_frame_equal(table("sm-4"), first, check_exact=True)
