"""A GPU BFS whose levels differ from the CPU BFS raises LevelMismatch and yields no timing.

`HostBfs` is gpu_validate.bfs.GpuBfs with its device arrays and launches replaced by NumPy ones
(no GPU, no CuPy): a correct level-synchronous BFS on the host, and `broken` variants that give one
vertex a wrong level. Everything else (the whole-run driver, the timed replays, the round replay
Nsight Compute profiles, the check, the validate pipeline and the CLI) is the real code.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import opmachine as om
import simdmodel as sm
from gpu_validate import bfs as gb
from gpu_validate.bfs import UNVISITED, GpuBfs, LevelMismatch
from simdmodel.graph import EdgeList, csr_from_edges


class HostArray(np.ndarray):
    """A NumPy array with CuPy's `get` and `set`."""

    def get(self):
        return np.array(self)

    def set(self, values):
        self[...] = values


def host(values) -> HostArray:
    return np.array(values).view(HostArray)


class HostBfs(GpuBfs):
    """GpuBfs on the host. broken: None, or "always" / "timed" (only in the timed replays): the first
    vertex each expansion discovers gets level + 2 instead of level + 1."""

    def __init__(self, graph, kernel, profile=None, instrumented=False, broken=None):
        self.cp = None
        self.graph, self.kernel, self.profile, self.instrumented = graph, kernel, profile, instrumented
        self.n = graph.n
        self.level = host(np.full(graph.n, UNVISITED, dtype=np.int32))
        self.queue = host(np.zeros(max(graph.n, 1), dtype=np.int32))
        self.counters = host(np.zeros(8, dtype=np.uint64))
        self.broken, self.timing, self.size = broken, False, 0
        self._frontiers = {}

    def _expand_from(self, vertices, level):
        for v in vertices:
            for u in self.graph.indices[self.graph.indptr[v]:self.graph.indptr[v + 1]]:
                if self.level[u] == UNVISITED:
                    wrong = self.broken == "always" or (self.broken == "timed" and self.timing)
                    self.level[u] = level + (2 if wrong else 1)
                    self.broken = None if wrong else self.broken  # one wrong vertex is enough
        return 1

    def _launch_topo(self, level):
        return self._expand_from(np.flatnonzero(np.asarray(self.level) == level), level)

    def _launch_expand(self, size, level):
        return self._expand_from(np.array(self.queue[:size]), level)

    def launch_compact(self, level):
        found = np.flatnonzero(np.asarray(self.level) == level + 1).astype(np.int32)
        self.queue[:found.size] = found
        self.size = found.size
        return 1

    def next_size(self):
        return self.size

    def _timed_replay(self, plan):
        self.timing = True
        try:
            return super()._timed_replay(plan)
        finally:
            self.timing = False


@pytest.fixture(autouse=True)
def host_timing(monkeypatch):
    """The timed replays run each launch on the host and take 100 ns each."""
    monkeypatch.setattr(gb, "time_launches", lambda cp, launches: [100.0 for launch in launches if launch() or True])


def path_graph():
    """0 -> 1 -> 2 -> 3 and 0 -> 2: CPU BFS levels 0, 1, 1, 2 from vertex 0."""
    return csr_from_edges(EdgeList(np.array([0, 1, 2, 0]), np.array([1, 2, 3, 2]), 4, name="path"))


SMALL = "rmat:scale=7,ef=8,seed=2"


@pytest.mark.parametrize("label", ["topo", "sm-4", "ws"])
def test_a_correct_run_is_timed(label):
    graph = sm.load_graph(SMALL)
    source = int(sm.pick_sources(graph, 1, 1)[0])
    runner = HostBfs(graph, om.parse_kernel(label))
    table = runner.time_bfs(source, repeats=3, warmup=2)
    assert list(table.columns) == list(gb.TIME_COLUMNS)
    assert (table["time_ns"] == 100.0).all() and (table["repeats"] == 3).all()
    np.testing.assert_array_equal(runner.level.get(), sm.bfs(graph, source).levels)


@pytest.mark.parametrize("label", ["topo", "sm-4", "ws"])
@pytest.mark.parametrize("broken", ["always", "timed"])
def test_a_wrong_level_raises_and_gives_no_timing(label, broken):
    graph = sm.load_graph(SMALL)
    source = int(sm.pick_sources(graph, 1, 1)[0])
    runner = HostBfs(graph, om.parse_kernel(label), broken=broken)
    table = None
    with pytest.raises(LevelMismatch, match=rf"^{label} BFS from {source} on .*wrong levels .*; no timing reported$"):
        table = runner.time_bfs(source, repeats=3)
    assert table is None


def test_the_check_names_the_first_wrong_vertex():
    graph = path_graph()
    runner = HostBfs(graph, om.parse_kernel("topo"))
    front = runner.frontiers(0)
    assert front.levels.tolist() == [0, 1, 1, 2]
    runner.level = host(np.array([0, 1, 2, 2], dtype=np.int32))  # vertex 2 one level too deep
    with pytest.raises(LevelMismatch) as info:
        runner._check(0, front)
    assert str(info.value) == ("topo BFS from 0 on path: 1 vertices have wrong levels "
                               "(first: vertex 2, GPU 2, CPU 1); no timing reported")
    runner.level = host(np.array([0, 1, 1, 2], dtype=np.int32))
    runner._check(0, front)  # right: no error


def test_a_replayed_round_is_checked_up_to_the_next_level():
    graph = path_graph()
    front = HostBfs(graph, om.parse_kernel("topo")).frontiers(0)
    runner = HostBfs(graph, om.parse_kernel("topo"))
    runner._frontiers[0] = front
    runner.level = host(np.array([0, 1, 1, UNVISITED], dtype=np.int32))
    runner._check(0, front, through=1)  # after round 0: levels 0 and 1 set, vertex 3 unvisited
    runner.level = host(np.array([0, 1, 1, 2], dtype=np.int32))  # vertex 3 found a round too early
    with pytest.raises(LevelMismatch, match=r"^topo round 0 from 0 on path: 1 vertices .*vertex 3, GPU 2, CPU -1\); "
                                            r"no counters reported$"):
        runner._check(0, front, through=1)


@pytest.mark.parametrize("label", ["topo", "sm-2", "scan"])
def test_replay_round_checks_its_levels(label):
    graph = sm.load_graph(SMALL)
    source = int(sm.pick_sources(graph, 1, 1)[0])
    front = sm.bfs(graph, source)
    good = HostBfs(graph, om.parse_kernel(label))
    for level in range(front.depth):
        rows = good.replay_round(source, level)
        assert [r["phase"] for r in rows] == (["topo"] if label == "topo" else ["expand", "compact"])
    bad = HostBfs(graph, om.parse_kernel(label), broken="always")
    with pytest.raises(LevelMismatch, match=rf"^{label} round 0 from {source} .*no counters reported$"):
        bad.replay_round(source, 0)


@pytest.fixture
def host_gpu(monkeypatch):
    """validate's GPU stages on HostBfs with one wrong vertex, on a stand-in device that the h200
    profile describes (its name and SM count), since validate refuses a profile of another GPU."""
    from gpu_validate import device

    monkeypatch.setattr(device, "require_gpu", lambda: None)
    monkeypatch.setattr(device, "device_info", lambda: {"device": "NVIDIA H200", "sms": 132, "driver": "none",
                                                         "date": "2026-11-21"})
    monkeypatch.setattr(gb, "GpuBfs", lambda graph, kernel, profile, instrumented=False:
                        HostBfs(graph, kernel, profile, instrumented, broken=None if instrumented else "timed"))


def test_the_pipeline_writes_nothing_for_a_wrong_bfs(host_gpu, tmp_path):
    from gpu_validate.pipeline import validate_graph

    with pytest.raises(LevelMismatch, match="no timing reported"):
        validate_graph(sm.load_graph(SMALL), ["ws"], 1, "h200", out=tmp_path / "v", repeats=2)
    assert list(tmp_path.iterdir()) == []


def test_the_cli_exits_1_with_one_line_and_no_folder(host_gpu, tmp_path, capsys):
    from simdreport.cli import main

    code = main(["validate", SMALL, "--kernels", "sm-8", "--sources", "1", "--repeats", "2",
                 "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert code == 1 and err.startswith("simdmodel: error: sm-8 BFS from ") and err.count("\n") == 1
    assert "no timing reported" in err and list(tmp_path.iterdir()) == []


def test_a_correct_host_run_goes_through_the_pipeline(monkeypatch, host_gpu, tmp_path):
    # the same stand-in without the wrong vertex: measured tables are written (timing exists)
    from gpu_validate.pipeline import validate_graph

    monkeypatch.setattr(gb, "GpuBfs", lambda graph, kernel, profile, instrumented=False:
                        HostBfs(graph, kernel, profile, instrumented))
    run = validate_graph(sm.load_graph(SMALL), ["ws", "topo"], 1, "h200", out=tmp_path / "v", repeats=2,
                         measure_only=True)
    measured = pd.read_csv(tmp_path / "v" / "measured.csv")
    assert run.summary is None and len(measured) == run.launches > 0 and (measured["time_ns"] == 100.0).all()


@pytest.mark.parametrize("info, profile, message", [
    ({"device": "NVIDIA H100 PCIe", "sms": 114}, None, "no profile describes NVIDIA H100 PCIe with 114 SMs"),
    ({"device": "NVIDIA H100 PCIe", "sms": 114}, "h200", "profile h200 describes NVIDIA H200 with 132 SMs"),
    ({"device": "NVIDIA H200", "sms": 120}, "h200", "not this NVIDIA H200 with 120 SMs"),
])
def test_validate_refuses_a_profile_of_another_gpu(monkeypatch, tmp_path, info, profile, message):
    # The launch geometry (full waves) is the profile's: measuring with another GPU's is refused
    # before any work, by device name and SM count.
    from gpu_validate import device
    from gpu_validate.pipeline import validate_graph

    monkeypatch.setattr(device, "require_gpu", lambda: None)
    monkeypatch.setattr(device, "device_info", lambda: {**info, "driver": "none", "date": "2026-11-21"})
    with pytest.raises(device.ProfileMismatch, match=message):
        validate_graph(sm.load_graph(SMALL), ["ws"], 1, profile, out=tmp_path / "v", repeats=2)
    assert list(tmp_path.iterdir()) == []


def test_validate_measured_takes_no_sources(tmp_path, capsys):
    # --measured compares the sources that were measured: asking for others is one error line
    from simdreport.cli import main

    folder = tmp_path / "m"
    folder.mkdir()
    code = main(["validate", SMALL, "--measured", str(folder), "--sources", "5", "--out", str(tmp_path / "v")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "takes no sources" in err


def test_a_wrong_round_under_nsight_compute_is_a_level_mismatch(monkeypatch):
    # ncu only says the profiled program failed; the replay leaves its LevelMismatch beside its
    # log, so the profiled path reports a kernel bug (exit 1), not a user mistake (exit 2).
    from gpu_validate import ncu, validate
    from gpu_validate.replay import mismatch_path
    from simdmodel.errors import InputError

    def failing_ncu(argv, **kwargs):
        log = argv[argv.index("--log") + 1]
        mismatch_path(log).write_text("ws round 1 from 0 on g: 1 vertices have wrong levels\n")
        raise InputError("the profiled program failed under ncu: exit status 1")

    monkeypatch.setattr(ncu, "run_ncu", failing_ncu)
    graph = sm.load_graph(SMALL)
    profile = om.load_profile("h200")
    with pytest.raises(LevelMismatch, match="^ws round 1 from 0 on g: 1 vertices have wrong levels$"):
        validate.profile_counters(graph, graph.name, [om.parse_kernel("ws")], 0, [1], profile)

    def user_mistake(argv, **kwargs):
        raise InputError("ncu failed: bad option")

    monkeypatch.setattr(ncu, "run_ncu", user_mistake)
    with pytest.raises(InputError, match="bad option"):
        validate.profile_counters(graph, graph.name, [om.parse_kernel("ws")], 0, [1], profile)
