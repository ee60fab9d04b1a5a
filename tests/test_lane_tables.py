"""Whole-run lane accounting against the naive BFS + lane-by-lane simulation; summaries and picks."""
import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

import naive
from simdmodel import analyze, mappings
from simdmodel.graph import EdgeList, csr_from_edges
from simdmodel.strategies import LANE_FIELDS


def random_graph(n, m, seed):
    rng = np.random.default_rng(seed)
    # A few hubs make the degree distribution skewed, as in the papers' RMAT graphs.
    dst = rng.integers(0, n, m)
    src = np.where(rng.random(m) < 0.3, rng.integers(0, 3, m), rng.integers(0, n, m))
    return csr_from_edges(EdgeList(src, dst, n, undirected=True))


@settings(max_examples=15, deadline=None)
@given(n=st.integers(5, 150), factor=st.integers(1, 8), seed=st.integers(0, 999),
       order=st.sampled_from(["sorted", "discovery"]))
def test_analysis_equals_naive_pipeline(n, factor, seed, order):
    graph = random_graph(n, n * factor, seed)
    sources = np.flatnonzero(graph.degrees() > 0)[:2]
    chosen = mappings(group_sizes=[1, 3, 8, 32], cta_size=64)
    result = analyze(graph, sources, chosen, order)
    summary = result.summary()
    degrees = graph.degrees()
    for mapping, row in zip(chosen, summary.itertuples(index=False)):
        expected = dict.fromkeys(LANE_FIELDS, 0)
        for source in sources:
            for frontier in naive.frontiers(graph.indptr, graph.indices, int(source), order):
                level = naive.lanes([int(degrees[v]) for v in frontier], mapping.strategy, mapping.param)
                for key in LANE_FIELDS:
                    expected[key] += level[key]
        assert tuple(getattr(row, k) for k in LANE_FIELDS) == tuple(expected.values())
        assert np.isclose(row.me + row.ua + row.ur + row.idle, 1.0)
        assert 0.0 <= row.me <= 1.0


def test_per_level_summary_and_recommendations():
    graph = random_graph(300, 2400, 1)
    result = analyze(graph, [int(np.argmax(graph.degrees()))])
    per_level = result.summary(per_level=True)
    assert list(per_level.columns[:3]) == ["level", "strategy", "group_size"]
    assert per_level["level"].nunique() == result.frontier_sizes["level"].nunique()
    # Summing the per-level rows gives the whole-run rows.
    whole = result.summary().set_index(["strategy", "group_size"])
    summed = per_level.groupby(["strategy", "group_size"], sort=False, dropna=False)["total_lanes"].sum()
    assert summed.tolist() == whole["total_lanes"].tolist()
    best = result.best()
    top = result.summary()["me"].max()
    assert best["me"][0] == top and len(best) == 1
    best_group = result.best(strategy="group")
    assert best_group["strategy"][0] == "group"
    assert best_group["mapping"][0] == f"sm-{best_group['group_size'][0]}"
    per_level_best = result.best(per_level=True)
    assert per_level_best["level"].tolist() == sorted(per_level["level"].unique())
    # Useful lanes of any mapping equal the edge frontier.
    ws_rows = per_level[per_level["strategy"] == "ws"].reset_index(drop=True)
    assert ws_rows["useful_lanes"].tolist() == result.frontier_sizes["edges"].tolist()
    assert pd.api.types.is_integer_dtype(per_level["total_lanes"])
