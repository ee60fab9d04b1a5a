"""`kernels.split`: a block's jobs made from both ends at once are the jobs made in turn, job for job,
whoever makes which piece."""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine import alongside
from opmachine.kernels import OP, SplitFill, expansion_jobs, parse_kernel, split, topo_jobs
from opmachine.layout import layout_for
from simdmodel.frontier import bfs
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.load import load_graph
from simdmodel.strategies import schedule
from test_opm_jobs import graph_of, graphs, jobs_of


def _traces(graph, kernel, fill, warps=24):
    frontiers = bfs(graph, int(np.flatnonzero(graph.degrees() > 0)[0]))
    layout = layout_for(graph.n, graph.m)
    stamp = np.full(graph.n, -1, dtype=np.int32)
    out = []
    for level in range(frontiers.depth):
        if kernel.data_driven:
            trace = expansion_jobs(graph, frontiers.levels, stamp, level, frontiers.frontier(level), kernel.expansion,
                                   layout, warps, split=fill)
        else:
            trace = topo_jobs(graph, frontiers.levels, stamp, level, layout, warps // 8, split=fill)
        out.append(jobs_of(trace))
    return out, stamp


@contextmanager
def _back_first(function, args):
    """`beside` that makes every piece from the back: the side work runs to the end before the body."""
    function(*args)
    yield


def _back_then_front(monkeypatch):
    """Make the front wait for the back's first piece, so both ends make some (on two threads; where a block
    is one piece, the back makes none and the front goes on after a second)."""
    made = threading.Event()
    real = split.generate

    def generate(fill, args, start, stop, buffer):
        if threading.current_thread() is threading.main_thread():
            made.wait(1)
            real(fill, args, start, stop, buffer)
        else:
            real(fill, args, start, stop, buffer)
            made.set()

    monkeypatch.setattr(split, "generate", generate)
    monkeypatch.setattr(alongside, "cpus", lambda: 2)


WHO = {"front": lambda mp: mp.setattr(alongside, "cpus", lambda: 1),  # the back runs after: nothing left for it
       "back": lambda mp: mp.setattr(split, "beside", _back_first),
       "both": _back_then_front}


@settings(max_examples=40, deadline=None)
@given(graphs, st.sampled_from(["topo", "sm-2", "sm-16", "sm-32"]), st.sampled_from([2, 3, 16]),
       st.sampled_from(sorted(WHO)), st.sampled_from([5, 1 << 22]))
def test_jobs_made_from_both_ends_are_the_jobs_made_in_turn(spec, label, count, who, block_edges):
    n, pairs, undirected = spec
    graph = graph_of(n, pairs, undirected)
    kernel = parse_kernel(label)
    in_turn, stamp = _traces(graph, kernel, None)
    with pytest.MonkeyPatch.context() as mp:
        WHO[who](mp)
        mp.setattr(schedule, "BLOCK_EDGES", block_edges)  # several blocks, each marking its own edges
        both_ends, split_stamp = _traces(graph, kernel, SplitFill(graph.n, min_steps=1, count=count))
    assert both_ends == in_turn
    assert np.array_equal(split_stamp, stamp)  # the round's stores are the same vertices


@pytest.mark.parametrize("who", sorted(WHO))
@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-8", "sm-32", "ws", "scan", "swc"])
def test_every_kernel_split_on_a_skewed_graph_makes_the_same_jobs(label, who, monkeypatch):
    graph = load_graph("rmat:scale=11,ef=8,seed=3")
    kernel = parse_kernel(label)
    in_turn, stamp = _traces(graph, kernel, None, warps=64)
    WHO[who](monkeypatch)
    fill = SplitFill(graph.n, min_steps=1, count=5)
    both_ends, split_stamp = _traces(graph, kernel, fill, warps=64)
    assert fill.blocks > 0  # some level was made from both ends
    assert both_ends == in_turn
    assert np.array_equal(split_stamp, stamp)


@pytest.mark.parametrize("who", sorted(WHO))
def test_a_vertex_first_reached_before_a_piece_is_not_stored_again_by_it(who, monkeypatch):
    # 0 -> 1, 2 (level 1); 1 -> 3 and 2 -> 3. sm-32 gives each vertex a unit: pieces [1] and [2]. The piece
    # of 2, made first from the back, must leave 3 to the piece of 1, which reaches it first.
    src = np.array([0, 0, 1, 2], dtype=np.int64)
    dst = np.array([1, 2, 3, 3], dtype=np.int64)
    graph = csr_from_edges(EdgeList(src, dst, 4, undirected=False, name="two-paths"), undirected=False)
    WHO[who](monkeypatch)
    fill = SplitFill(graph.n, min_steps=1, count=2)
    traces, _ = _traces(graph, parse_kernel("sm-32"), fill, warps=64)
    assert [warp for server, warp, _ in traces[1] if server == OP] == [0]  # one store, by the warp of vertex 1
    assert fill.blocks == 1  # level 1 was made from both ends


def test_marks_left_from_earlier_blocks_change_nothing(monkeypatch):
    monkeypatch.setattr(split, "beside", _back_first)
    graph = load_graph("rmat:scale=11,ef=8,seed=3")
    kernel = parse_kernel("sm-8")
    in_turn, _ = _traces(graph, kernel, None, warps=64)
    fill = SplitFill(graph.n, min_steps=1, count=4)
    fill.mark[:] = 0  # as if every vertex were reached by the first edge of the block: read, it stops every store
    both_ends, _ = _traces(graph, kernel, fill, warps=64)
    assert both_ends == in_turn


@pytest.mark.parametrize("first_step, count, expected", [
    ([0, 10, 20, 30, 40], 2, [0, 2, 4]),
    ([0, 10, 20, 30, 40], 4, [0, 1, 2, 3, 4]),
    ([0, 100, 101, 102], 3, [0, 1, 3]),  # steps bunched in the first unit
    ([0, 5, 9], 16, [0, 1, 2]),  # fewer units than pieces
])
def test_pieces_cut_at_about_equal_steps_with_at_least_one_unit_each(first_step, count, expected):
    units, edge_at = SplitFill(1, count=count).cut(np.array(first_step), 2 * np.arange(1, first_step[-1] + 1))
    assert units.tolist() == expected
    assert edge_at.tolist() == [2 * first_step[u] for u in expected]  # two edges a step
