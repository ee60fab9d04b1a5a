"""The report's worker processes: one process serves many calls, and a failure in one call is reported
without losing the pool."""
import os

import pytest

from simdmodel.errors import InputError
from simdreport.report import check_specs
from simdreport.workers import WorkerPool, run_calls


def test_one_worker_serves_every_call_and_the_results_keep_the_calls_order():
    pids = run_calls([(os.getpid, ())] * 4, 1)
    assert len(set(pids)) == 1 and pids[0] != os.getpid()
    assert run_calls([(abs, (-3,)), (max, (1, 5, 2)), (divmod, (7, 2))], 1) == [3, 5, (3, 1)]


def test_two_workers_start_only_as_calls_need_them():
    with WorkerPool(2) as pool:
        first = pool.call(os.getpid)
        assert pool.call(os.getpid) == first  # the idle worker, not a second one
    assert len(set(run_calls([(os.getpid, ())] * 6, 2))) <= 2


def test_a_bad_input_in_a_worker_is_its_message_here_and_the_worker_serves_on():
    with WorkerPool(1) as pool:
        before = pool.call(os.getpid)
        with pytest.raises(InputError, match="no-such-graph: no such file"):
            pool.call(check_specs, ["no-such-graph"])
        assert pool.call(os.getpid) == before


def test_what_a_call_prints_does_not_garble_its_outcome(capfd):
    with WorkerPool(1) as pool:
        assert pool.call(print, "a line a call prints") is None
        assert pool.call(abs, -2) == 2
    assert "a line a call prints" in capfd.readouterr().err


def test_a_worker_that_dies_is_one_error_and_a_fresh_worker_takes_the_next_call():
    with WorkerPool(1) as pool:
        before = pool.call(os.getpid)
        with pytest.raises(RuntimeError, match="a worker process stopped with status 3"):
            pool.call(os._exit, 3)
        after = pool.call(os.getpid)
        assert after != before


def test_an_error_in_a_call_names_its_type_and_message():
    with pytest.raises(RuntimeError, match="a worker process failed: ZeroDivisionError"):
        run_calls([(divmod, (1, 0))], 2)
