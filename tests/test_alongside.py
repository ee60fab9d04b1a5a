"""`alongside.beside`: the side work runs once, beside the body or after it, and its error reaches the caller."""
import threading

import pytest

from opmachine import alongside


def _recorder(log):
    def record(value):
        log.append((value, threading.current_thread() is threading.main_thread()))
    return record


@pytest.mark.parametrize("cpus", [1, 2])
@pytest.mark.parametrize("wanted", [True, False])
def test_the_side_work_runs_once_on_a_thread_only_when_wanted_and_a_cpu_is_free(cpus, wanted, monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: cpus)
    log = []
    with alongside.beside(_recorder(log), ("side",), alongside=wanted):
        log.append(("body", True))
    assert sorted(value for value, _ in log) == ["body", "side"]
    on_main = dict(log)["side"]
    assert on_main == (not wanted or cpus < 2)
    if on_main:
        assert log[-1][0] == "side"  # in turn: after the body


@pytest.mark.parametrize("cpus", [1, 2])
def test_an_error_of_the_side_work_is_raised_to_the_caller_after_the_body(cpus, monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: cpus)
    done = []

    def fail():
        raise ValueError("side failed")

    with pytest.raises(ValueError, match="side failed"):
        with alongside.beside(fail, ()):
            done.append("body")
    assert done == ["body"]


def test_an_error_of_the_body_waits_for_the_side_thread(monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: 2)
    finished = threading.Event()
    with pytest.raises(KeyError):
        with alongside.beside(lambda: finished.wait(0.05) or finished.set(), ()):
            raise KeyError("body")
    assert finished.is_set()  # joined before the error left the `with`


def test_cpus_counts_this_process_cpus():
    assert alongside.cpus() >= 1


@pytest.mark.parametrize("cpus", [1, 2])
@pytest.mark.parametrize("count", [0, 1, 5])
def test_ahead_yields_every_item_in_order_making_the_next_off_the_callers_thread(cpus, count, monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: cpus)
    made_on_main = []

    def items():
        for i in range(count):
            made_on_main.append(threading.current_thread() is threading.main_thread())
            yield i

    assert list(alongside.ahead(items())) == list(range(count))
    assert made_on_main == [cpus < 2] * count


def test_ahead_makes_at_most_one_item_beyond_the_one_in_use(monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: 2)
    made = []

    def items():
        for i in range(6):
            made.append(i)
            yield i

    for item in alongside.ahead(items()):
        assert len(made) <= item + 2


@pytest.mark.parametrize("cpus", [1, 2])
def test_ahead_raises_the_error_of_the_item_being_made_in_its_turn(cpus, monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: cpus)

    def items():
        yield 1
        raise ValueError("second")

    got = []
    with pytest.raises(ValueError, match="second"):
        for item in alongside.ahead(items()):
            got.append(item)
    assert got == [1]


def test_leaving_ahead_early_waits_for_the_item_being_made(monkeypatch):
    monkeypatch.setattr(alongside, "cpus", lambda: 2)
    finished = threading.Event()

    def items():
        yield 1
        finished.wait(0.05)
        finished.set()
        yield 2

    walk = alongside.ahead(items())
    assert next(walk) == 1
    walk.close()
    assert finished.is_set()


@pytest.mark.parametrize("label", ["topo", "sm-8", "scan"])
def test_work_beside_the_pass_leaves_every_prediction_as_it_is(label, monkeypatch):
    # every launch's hot-sector count on a thread of its own, or none
    import pandas as pd

    from opmachine import memory, predict
    from opmachine.kernels import parse_kernel
    from opmachine.profile import load_profile
    from simdmodel.load import load_graph

    monkeypatch.setattr(alongside, "cpus", lambda: 2)
    graph = load_graph("rmat:scale=11,ef=8,seed=4")
    profile = load_profile("h100", kind="gpu")
    results = []
    for threshold in (0, 1 << 62):
        monkeypatch.setattr(memory, "BESIDE_SECTORS", threshold)
        results.append(predict.predict_bfs(graph, 3, parse_kernel(label), profile, l2_model="setassoc", warm_l2=True))
    pd.testing.assert_frame_equal(results[0].per_level, results[1].per_level, check_exact=True)
    assert results[0].predicted_ns == results[1].predicted_ns
