"""Seed 004's CTE cost analysis (opmachine.cte): hand-computed Eqs. 4.1-4.3, invariants, the launch
makespan against a naive twin, the per-round comparator over a BFS, and its figure."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import naive_cte
from opmachine.cte import (
    ROUND_COLUMNS, CteCosts, costs_from_code, cte_launches, cte_rounds, kernel_model, launch_costs, makespan_ns, reduction_steps, t_1d, t_cte,
    t_sw, warp_ns_1d, warp_ns_cte, warp_ns_sw,
)
from opmachine.kernels import parse_kernel
from opmachine.predict import fixed_ns, predict_bfs
from opmachine.profile import load_profile
from simdmodel.algorithms import BFS
from simdmodel.errors import InputError
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.load import load_graph
from simdmodel.strategies import Mapping
from simdreport.figures import cte_time_figure, render

COSTS = CteCosts(3.0, 2.0)  # T_MAP = 3 ns, T_RED = 2 ns
ONE_HUB = [23] + [0] * 31
LINE = [4 * lane for lane in range(32)]  # seed 004 Fig. 4.25's LINE scenario: 4 x laneID
H200 = load_profile("h200", kind="gpu")


# Eqs. 4.1-4.3 by hand

def test_eq41_one_hub():
    assert t_1d(ONE_HUB, COSTS) == 23 * (3 + 2)


@pytest.mark.parametrize("S, expected", [
    (1, 3 * 23),  # one round, no reduction step: T_MAP max L
    (2, 2 * 1 * 2 + 3 * 12),  # rounds of 16 tasks: ceil(23/2) = 12, then 0; log2 2 = 1 per round
    (4, 4 * 2 * 2 + 3 * 6),  # ceil(23/4) = 6
    (8, 8 * 3 * 2 + 3 * 3),  # 8 rounds of 4 tasks, 3 reduction steps each; ceil(23/8) = 3 in round 1
    (16, 16 * 4 * 2 + 3 * 2),
    (32, 32 * 5 * 2 + 3 * 1),
])
def test_eq42_one_hub(S, expected):
    assert t_sw(ONE_HUB, S, COSTS) == expected


def test_eq43_one_hub():
    assert t_cte(ONE_HUB, COSTS) == 1 * (3 + 2 * 5)  # ceil(23 / 32) = 1 round of T_MAP + T_RED log2 32


def test_line_scenario_depends_on_max_for_1d_and_on_average_for_cte():
    maps_only = CteCosts(1.0, 0.0)
    assert t_1d(LINE, maps_only) == 124
    assert t_cte(LINE, maps_only) == 62  # sum 1984 / 32
    # S = 4: rounds of 8 lanes whose largest load is 4 x (8s - 1): ceil(.../4) = 7, 15, 23, 31
    assert t_sw(LINE, 4, maps_only) == 7 + 15 + 23 + 31


def test_a_short_set_is_padded_with_empty_tasks():
    assert t_sw([23], 8, COSTS) == t_sw(ONE_HUB, 8, COSTS)
    assert t_cte([], COSTS) == 0.0 and t_1d([], COSTS) == 0.0


def test_reduction_steps():
    assert [reduction_steps(w) for w in (1, 2, 3, 4, 5, 8, 16, 31, 32)] == [0, 1, 2, 2, 3, 3, 4, 5, 5]


def test_costs_from_cycles():
    assert CteCosts.from_cycles(20, 4, 2000.0) == CteCosts(10.0, 2.0)


@pytest.mark.parametrize("call", [
    lambda: CteCosts(-1.0, 0.0), lambda: CteCosts(1.0, float("nan")), lambda: CteCosts("1", 0.0),
    lambda: CteCosts.from_cycles(1, 1, 0.0), lambda: CteCosts.from_cycles(-1, 1, 1000.0),
    lambda: t_sw(ONE_HUB, 3, COSTS), lambda: t_sw(ONE_HUB, 0, COSTS), lambda: t_1d([1] * 33, COSTS),
    lambda: t_1d([-1], COSTS), lambda: t_1d([1.5], COSTS), lambda: warp_ns_sw([1], 33, COSTS),
    lambda: warp_ns_cte([1], COSTS, 48), lambda: makespan_ns([1.0], 0, 1), lambda: makespan_ns([1.0], 2, 1, 4),
])
def test_bad_input_is_refused(call):
    with pytest.raises(InputError):
        call()


# Per virtual warp of our kernels

def test_sm8_virtual_warps_are_the_rounds_of_eq42():
    # our sm-8 virtual warp holds 4 vertices: round 1 holds the hub, rounds 2..8 only pay the reduction
    assert warp_ns_sw(ONE_HUB, 8, COSTS).tolist() == [3 * 2 + 3 * 3] + [3 * 2] * 7


def test_non_power_of_two_group():
    # sm-3: 10 vertices a virtual warp, ceil(log2 3) = 2 reduction steps, ceil(23/3) = 8 map steps
    assert warp_ns_sw(ONE_HUB, 3, COSTS).tolist() == [2 * 2 + 3 * 8, 4.0, 4.0, 4.0]


def test_cta_spreads_its_fine_tasks_over_its_warps():
    maps_only = CteCosts(1.0, 0.0)
    # a unit of C = 64 tasks, 2 warps: warp j runs ceil((E - 32j) / 64) rounds
    assert warp_ns_cte([100] + [0] * 63, maps_only, 64).tolist() == [2.0, 2.0]
    assert warp_ns_cte([70] + [0] * 63, maps_only, 64).tolist() == [2.0, 1.0]
    assert warp_ns_cte([30], maps_only, 64).tolist() == [1.0, 0.0]
    assert warp_ns_cte([30, 40], maps_only).tolist() == [3.0]  # ws: one warp, Eq. 4.3


def test_makespan_by_hand():
    costs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    # launched warp c % 3 = 0 1 2 0 1 2 0 1, slot w % 2 = 0 1 0 0 1 0 0 1
    assert makespan_ns(costs, 3, 2) == 1 + 3 + 4 + 6 + 7
    # units of 2 warps on 4 launched warps (2 unit slots): launched 0 1 2 3 0 1 2 3, slot w % 3
    assert makespan_ns(costs, 4, 3, 2) == 1 + 4 + 5 + 8
    assert makespan_ns([], 4, 3) == 0.0


def test_launch_by_hand():
    row = launch_costs(np.array(ONE_HUB), parse_kernel("sm-8"), COSTS, warps=8, physical_warps=4)
    # t_sw: virtual warps 0 and 4 share slot 0: 15 + 6
    assert row == {"t_1d_ns": 115.0, "t_sw_ns": 21.0, "t_cte_ns": 13.0, "cte_model_ns": 21.0, "cte_model": "SW(8)"}
    assert launch_costs(ONE_HUB, parse_kernel("ws"), COSTS, 8, 4)["cte_model_ns"] == 13.0
    assert np.isnan(launch_costs(ONE_HUB, parse_kernel("ws"), COSTS, 8, 4)["t_sw_ns"])
    # SW(32): one vertex a virtual warp, 32 of them; slot 0 runs virtual warps 0, 4, .., 28
    assert launch_costs(ONE_HUB, parse_kernel("ws"), COSTS, 8, 4, sub_warp=32)["t_sw_ns"] == (2 * 5 + 3) + 7 * 2 * 5
    assert launch_costs(ONE_HUB, parse_kernel("sm-1"), COSTS, 8, 4)["cte_model_ns"] == 115.0
    # a sub-warp asked for does not change the sm-S kernel's own equation
    assert launch_costs(ONE_HUB, parse_kernel("sm-8"), COSTS, 8, 4, sub_warp=2)["cte_model_ns"] == 21.0


def test_kernel_model():
    assert [kernel_model(parse_kernel(k)) for k in ("topo", "sm-1", "sm-4", "ws", "scan")] == [
        ("1d", 1), ("1d", 1), ("sw", 4), ("cte", 32), ("cte", 256)]
    assert kernel_model(Mapping("scan", 128)) == ("cte", 128)


# Invariants

loads32 = st.lists(st.integers(0, 300), min_size=0, max_size=32)
costs = st.builds(CteCosts, st.integers(0, 50).map(float), st.integers(0, 50).map(float))
divisors = st.sampled_from([1, 2, 4, 8, 16, 32])


@settings(max_examples=200, deadline=None)
@given(loads32, st.integers(0, 50).map(float), divisors)
def test_cte_never_slower_without_reduction_cost(loads, t_map, S):
    # ceil(sum L / W) <= max L, and <= sum_s ceil(max_s / S) since sum L / W <= sum_s max_s / S
    maps_only = CteCosts(t_map, 0.0)
    assert t_cte(loads, maps_only) <= t_1d(loads, maps_only)
    assert t_cte(loads, maps_only) <= t_sw(loads, S, maps_only)


@settings(max_examples=200, deadline=None)
@given(loads32, costs)
def test_sw1_is_1d_without_its_reduction_and_sw32_sums_every_task(loads, c):
    top = max(loads, default=0)
    assert t_sw(loads, 1, c) == t_1d(loads, c) - c.t_red_ns * top
    assert t_sw(loads, 32, c) == c.t_red_ns * 32 * 5 + c.t_map_ns * sum(-(-x // 32) for x in loads)


@settings(max_examples=200, deadline=None)
@given(loads32, costs, costs, st.integers(0, 4), st.integers(0, 4), divisors)
def test_linear_in_the_costs(loads, c1, c2, a, b, S):
    mixed = CteCosts(a * c1.t_map_ns + b * c2.t_map_ns, a * c1.t_red_ns + b * c2.t_red_ns)
    for f in (t_1d, t_cte, lambda L, c: t_sw(L, S, c)):
        assert f(loads, mixed) == a * f(loads, c1) + b * f(loads, c2)


@settings(max_examples=200, deadline=None)
@given(loads32, costs, st.randoms(use_true_random=False))
def test_1d_and_cte_ignore_task_order(loads, c, rng):
    shuffled = list(loads)
    rng.shuffle(shuffled)
    assert t_1d(shuffled, c) == t_1d(loads, c) and t_cte(shuffled, c) == t_cte(loads, c)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=200), costs, divisors)
def test_one_warp_launch_is_the_seed_scaled_to_many_sets(loads, c, S):
    # "bigger ones by scaling": one launched warp runs every set of W tasks in turn. A short last
    # set is padded: the seed's Eq. 4.2 charges all S rounds, our kernel runs only the virtual
    # warps that hold a task, so the unpadded launch is never slower.
    short = launch_costs(np.array(loads, dtype=np.int64), parse_kernel(f"sm-{S}"), c, 1, 1)["cte_model_ns"]
    loads = loads + [0] * (-len(loads) % 32)
    sets = [loads[i:i + 32] for i in range(0, len(loads), 32)]
    seeds = {"1d": t_1d, "cte": t_cte, "sw": lambda L, cc: t_sw(L, S, cc)}
    for name in ("topo", "ws", f"sm-{S}"):
        kernel = parse_kernel(name)
        row = launch_costs(np.array(loads, dtype=np.int64), kernel, c, warps=1, physical_warps=1)
        expected = sum(seeds[kernel_model(kernel)[0]](s, c) for s in sets)
        assert row["cte_model_ns"] == pytest.approx(expected, rel=1e-12, abs=1e-9)
    assert short <= row["cte_model_ns"] + 1e-9


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4).flatmap(lambda uw: st.tuples(
    st.just(uw), st.lists(st.integers(0, 1000).map(float), max_size=60 * uw).map(lambda t: t[:len(t) // uw * uw]),
    st.integers(uw, 24), st.integers(1, 12))))
def test_makespan_matches_naive_placement(case):
    unit_warps, times, warps, physical = case
    assert makespan_ns(np.array(times), warps, physical, unit_warps) == naive_cte.makespan(times, warps, physical,
                                                                                          unit_warps)


kinds = st.one_of(st.just(("1d", 32)), divisors.map(lambda S: ("sw", S)), st.sampled_from([32, 64, 128, 256]).map(
    lambda C: ("cte", C)))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 120), max_size=300), kinds, costs, st.integers(1, 24), st.integers(1, 12))
def test_launch_matches_naive_twin(loads, kind, c, warps, physical):
    model, width = kind
    unit_warps = width // 32 if model == "cte" else 1
    warps = max(warps, unit_warps)
    array = np.array(loads, dtype=np.int64)
    if model == "1d":
        per_warp = warp_ns_1d(array, c)
    elif model == "sw":
        per_warp = warp_ns_sw(array, width, c)
    else:
        per_warp = warp_ns_cte(array, c, width)
    fast = makespan_ns(per_warp, warps, physical, unit_warps)
    assert fast == pytest.approx(naive_cte.launch(loads, model, width, c.t_map_ns, c.t_red_ns, warps, physical),
                                 rel=1e-12, abs=1e-9)
    total = float(per_warp.sum())
    assert per_warp.max(initial=0.0) <= fast <= total + 1e-9
    assert fast >= total / min(physical, warps) - 1e-9


# The comparator over a whole BFS

def star(leaves):
    """Vertex 0 joined to `leaves` leaves (undirected): level 0 is the hub, level 1 every leaf."""
    src = np.zeros(leaves, dtype=np.int64)
    dst = np.arange(1, leaves + 1, dtype=np.int64)
    return csr_from_edges(EdgeList(src, dst, leaves + 1, undirected=True, name="star"))


@pytest.mark.parametrize("kernel, level0, level1", [
    # hub of degree 40, then 40 leaves of degree 1 (T_MAP 3, T_RED 2)
    ("ws", (200.0, 26.0, 26.0), (5.0, 13.0, 13.0)),  # (t_1d, t_cte, model); CTE: ceil(40/32) rounds of 13
    ("sm-8", (200.0, 26.0, 6 + 3 * 5), (5.0, 13.0, 6 + 3)),  # 4 vertices a virtual warp, ceil(40/8) = 5
    ("topo", (200.0, 26.0, 200.0), (5.0, 13.0, 5.0)),
    ("scan", (200.0, 13.0, 13.0), (5.0, 13.0, 13.0)),  # the CTA's 2 warps take 1 block of 32 each
])
def test_star_rounds_by_hand(kernel, level0, level1):
    graph = star(40)
    table = cte_rounds(graph, BFS.rounds(graph, 0, "sorted"), parse_kernel(kernel), COSTS, H200)
    assert list(table.columns) == list(ROUND_COLUMNS)
    assert table["level"].tolist() == [0, 1] and set(table["kernel"]) == {kernel}
    got = [tuple(row) for row in table[["t_1d_ns", "t_cte_ns", "cte_model_ns"]].itertuples(index=False)]
    assert got == [level0, level1]
    assert table["frontier_edges"].tolist() == [40, 40]


@pytest.mark.parametrize("kernel", ["topo", "sm-4", "ws", "scan"])
def test_rounds_use_the_predictions_launches(kernel):
    graph = star(300)
    ours = cte_rounds(graph, BFS.rounds(graph, 0, "sorted"), parse_kernel(kernel), COSTS, H200)
    predicted = predict_bfs(graph, 0, parse_kernel(kernel), H200, time_model="eq4").per_level
    launches = predicted[predicted["phase"] != "compact"]
    assert ours[["level", "block", "grid", "frontier_vertices", "frontier_edges"]].values.tolist() == \
        launches[["level", "block", "grid", "frontier_vertices", "frontier_edges"]].values.tolist()


def test_rounds_refuse_bad_geometry():
    graph = star(4)
    with pytest.raises(InputError):
        cte_rounds(graph, BFS.rounds(graph, 0, "sorted"), parse_kernel("ws"), COSTS, H200, block=48)


# The figure

def _figure_table():
    rows = []
    for kernel, model in (("sm-8", "SW(8)"), ("ws", "CTE")):
        for level in range(4):
            rows.append({"level": level, "kernel": kernel, "measured_ns": 1000.0 * (level + 1),
                         "predicted_ns": 900.0 * (level + 1), "cte_model_ns": 100.0 * (level + 1) ** 2,
                         "cte_model": model})
    return pd.DataFrame(rows)


def test_cte_figure_renders_one_panel_per_kernel():
    figure = cte_time_figure(_figure_table(), "star", "NVIDIA H200")
    assert render(figure).startswith(b"\x89PNG")
    axes = figure.axes
    assert [ax.get_title() for ax in axes] == ["sm-8", "ws"]
    assert all(len(ax.get_lines()) == 3 for ax in axes)
    assert axes[0].get_lines()[2].get_ydata().tolist() == [0.1, 0.4, 0.9, 1.6]  # µs
    assert "SW(8)" in axes[0].get_legend().get_texts()[2].get_text()


def test_cte_figure_refuses_a_table_without_its_columns():
    with pytest.raises(InputError, match="cte_model_ns"):
        cte_time_figure(_figure_table().drop(columns="cte_model_ns"), "star", "H200")


# T_MAP and T_RED from the compiled code, and the comparator as a prediction mode

def test_costs_from_code_by_hand():
    # ws's per-edge loop: 110 scheduled stall cycles and two shared loads waited on (the measured shared
    # latency, about 23 cycles); its owner search step: 58 stall cycles and one shared load
    measured = H200.instructions
    cycle, shared = measured.cycle_ns, measured.shared_latency_cycles
    assert shared == pytest.approx(23.0, abs=0.01) and measured.clock_mhz == pytest.approx(1980, abs=1)
    costs = costs_from_code(parse_kernel("ws"), H200)
    assert costs.t_map_ns == pytest.approx((110 + 2 * shared) * cycle)
    assert costs.t_red_ns == pytest.approx((58 + shared) * cycle)
    # topo has no search: its reduction step is the seed's shuffle and add
    reduction = measured.shuffle_latency_cycles + measured.alu_latency_cycles
    assert reduction == pytest.approx(31.0, abs=0.1)
    assert costs_from_code(parse_kernel("topo"), H200).t_red_ns == pytest.approx(reduction * cycle)
    assert costs_from_code(parse_kernel("ws"), load_profile("k40c", kind="gpu")) is None  # no [instructions]


@pytest.mark.parametrize("label", ["topo", "sm-4", "ws"])
def test_cte_launches_are_the_rounds_plus_the_constants(label):
    graph = load_graph("rmat:scale=9,ef=8")
    kernel = parse_kernel(label)
    launches = cte_launches(graph, 0, kernel, H200)
    rounds = cte_rounds(graph, BFS.rounds(graph, 0, "sorted"), kernel, costs_from_code(kernel, H200), H200)
    simulated = predict_bfs(graph, 0, kernel, H200).per_level
    assert launches[["level", "phase"]].values.tolist() == simulated[["level", "phase"]].values.tolist()
    assert set(launches["mode"]) == {"cte"} and launches["jobs_total"].isna().all()
    first = launches[launches["phase"] != "compact"]
    assert first["predicted_ns"].to_numpy() == pytest.approx(
        rounds["cte_model_ns"].to_numpy() + fixed_ns(H200, first["phase"].iloc[0]))
    # a compaction costs the profile's measured compaction time at the graph's size: 512 vertices here
    compactions = launches[launches["phase"] == "compact"]
    assert (compactions["predicted_ns"] == fixed_ns(H200, "compact", graph.n)).all()
    assert launches["fixed_ns"].tolist() == [fixed_ns(H200, phase, graph.n) for phase in launches["phase"]]
    assert graph.n == 512 and fixed_ns(H200, "compact", 512) == pytest.approx(8480 + (8456 - 8480) * 511 / 1023)
