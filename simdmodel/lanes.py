"""Lane tables over whole BFS runs: per (source, level, mapping) lane sums, summaries, the ME pick.

For each source and level, the frontier's out-degrees in walk order go through each mapping's
numba `count_lanes` (seed 000 §4-5, DESIGN.md "Lane accounting"). Rates are lanes divided by
total lane slots, so ME = useful / slots = 1 - UA - UR - idle.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from .algorithms import BFS, Algorithm
from .graph import CSRGraph
from .strategies import LANE_FIELDS, Mapping, mappings as make_mappings

RATE_FIELDS = ("ua", "ur", "idle", "me")
SUMMARY_COLUMNS = ("strategy", "group_size", *LANE_FIELDS, *RATE_FIELDS, "mapping")
PHASE_COLUMNS = ("mapping", "phase", *LANE_FIELDS, "ua", "me", "share")
"""`Analysis.phase_summary`: a phased mapping's lanes per phase; `ua` is the phase's UA lanes over the
mapping's lane slots (the phases' `ua` add up to the mapping's), `me` the phase's own useful / slots,
`share` the phase's part of the mapping's lane slots."""


@dataclass(frozen=True, eq=False)
class Analysis:
    """Lane accounting of one graph: per (source, level, mapping) lane sums, plus run settings."""

    graph_name: str
    n: int
    m: int
    sources: tuple[int, ...]
    order: str
    mappings: tuple[Mapping, ...]
    per_level: pd.DataFrame = field(repr=False)
    frontier_sizes: pd.DataFrame = field(repr=False)
    phase_lanes: pd.DataFrame = field(repr=False, default=None)
    """One row per (source, level, mapping, phase) of the mappings that gather in phases (swc), with
    the LANE_FIELDS sums; empty when there are none."""

    def phase_summary(self) -> pd.DataFrame:
        """The phased mappings' lanes per phase over every source and level (PHASE_COLUMNS)."""
        table = self.phase_lanes
        if table is None or table.empty:
            return pd.DataFrame(columns=list(PHASE_COLUMNS))
        summed = table.groupby(["mapping", "phase"], sort=False)[list(LANE_FIELDS)].sum().reset_index()
        slots = summed.groupby("mapping", sort=False)["total_lanes"].transform("sum").to_numpy(dtype=np.float64)
        own = summed["total_lanes"].to_numpy(dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            summed["ua"] = np.where(slots > 0, summed["ua_lanes"] / slots, np.nan)
            summed["me"] = np.where(own > 0, summed["useful_lanes"] / own, np.nan)
            summed["share"] = np.where(slots > 0, own / slots, np.nan)
        return summed[list(PHASE_COLUMNS)]

    def summary(self, per_level: bool = False, per_source: bool | None = None) -> pd.DataFrame:
        """Lane sums and rates per mapping; with `per_level` per level too (and per source when
        there are several, unless `per_source=False`)."""
        if per_source is None:
            per_source = per_level and len(self.sources) > 1
        keys = (["source"] if per_source else []) + (["level"] if per_level else [])
        return summarize(self.per_level, keys)

    def best(self, per_level: bool = False, strategy: str | None = None) -> pd.DataFrame:
        """The mapping with the highest ME (over all sources), overall or per level; restricted to
        one strategy (e.g. "group" for the best group size) when `strategy` is given."""
        table = self.summary(per_level=per_level, per_source=False)
        if strategy is not None:
            table = table[table["strategy"] == strategy]
        return recommend(table, ["level"] if per_level else [])


def summarize(per_level: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """Sum lane counts over everything but `keys` and the mapping, then add the rate columns."""
    group_keys = [*keys, "strategy", "group_size", "mapping"]
    summed = (
        per_level.groupby(group_keys, sort=False, dropna=False)[list(LANE_FIELDS)]
        .sum()
        .reset_index()
    )
    if keys:
        summed = summed.sort_values(list(keys), kind="stable", ignore_index=True)
    return add_rates(summed)[[*keys, *SUMMARY_COLUMNS]]


def add_rates(table: pd.DataFrame) -> pd.DataFrame:
    """UA, UR, idle and ME as fractions of total lanes (NaN where a row has no lane slots)."""
    out = table.copy()
    total = out["total_lanes"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        for rate, lanes in zip(RATE_FIELDS, ("ua_lanes", "ur_lanes", "idle_lanes", "useful_lanes")):
            out[rate] = np.where(total > 0, out[lanes].to_numpy(dtype=np.float64) / total, np.nan)
    return out


def recommend(summary: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """Per `keys` group, the row with the highest ME (first listed wins ties; NaN rows skipped)."""
    rated = summary.dropna(subset=["me"])
    if rated.empty:
        return rated[[*keys, "mapping", "strategy", "group_size", "me"]]
    if keys:
        best_index = rated.groupby(list(keys), sort=True)["me"].idxmax()
    else:
        best_index = [rated["me"].idxmax()]
    best = rated.loc[best_index, [*keys, "mapping", "strategy", "group_size", "me"]].reset_index(drop=True)
    return best


def lane_degrees(graph: CSRGraph) -> np.ndarray:
    """Out-degrees as the lane kernels read them: int32 where they fit (half the memory traffic)."""
    degrees = graph.degrees()
    if degrees.size and degrees.max() <= np.iinfo(np.int32).max:
        return degrees.astype(np.int32)
    return degrees


def frontier_sizes(graph: CSRGraph, frontiers, source: int) -> pd.DataFrame:
    """One row per level of the BFS `frontiers` from `source`: `vertices` and `edges` (seed 000 Fig. 2)."""
    return pd.DataFrame({
        "source": int(source),
        "level": np.arange(frontiers.depth, dtype=np.int64),
        "vertices": frontiers.vertex_frontier_sizes(),
        "edges": frontiers.edge_frontier_sizes(graph),
    })


def _phase_block(phased: np.ndarray, mapping: Mapping, source: int) -> pd.DataFrame:
    """Rows (source, level, mapping, phase, LANE_FIELDS) of one source's levels x phases x fields."""
    levels, phases = phased.shape[0], len(mapping.phases)
    block = pd.DataFrame(phased.reshape(levels * phases, -1), columns=list(LANE_FIELDS))
    block.insert(0, "phase", list(mapping.phases) * levels)
    block.insert(0, "mapping", mapping.label)
    block.insert(0, "level", np.repeat(np.arange(levels, dtype=np.int64), phases))
    block.insert(0, "source", int(source))
    return block


def lane_table(graph: CSRGraph, sources: Sequence[int], mappings: Sequence[Mapping],
               order: str = "sorted", progress: bool = False,
               algorithm: Algorithm = BFS) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Long table, one row per (source, level, mapping) with the LANE_FIELDS sums; the frontier sizes,
    one row per (source, level) with `vertices` and `edges` (seed 000 Fig. 2); and the phased mappings'
    sums per phase (`Analysis.phase_lanes`). Levels are the rounds of `algorithm` (BFS: its levels)."""
    degrees = lane_degrees(graph)
    blocks, sizes, phase_blocks = [], [], []
    for source in tqdm(sources, desc="BFS sources", unit="src", disable=not progress, leave=False):
        frontiers = algorithm.rounds(graph, int(source), order)
        walk_degrees = degrees[frontiers.vertices]
        levels = np.arange(frontiers.depth, dtype=np.int64)
        sizes.append(frontier_sizes(graph, frontiers, source))
        for mapping in mappings:
            phased = mapping.count_phase_lanes(walk_degrees, frontiers.level_ptr)
            if phased is None:
                lanes = mapping.count_lanes(walk_degrees, frontiers.level_ptr)
            else:
                lanes = phased.sum(axis=1)
                phase_blocks.append(_phase_block(phased, mapping, source))
            block = pd.DataFrame(lanes, columns=list(LANE_FIELDS))
            block.insert(0, "group_size", pd.array([mapping.group_size] * len(levels), dtype="Int64"))
            block.insert(0, "strategy", mapping.strategy)
            block.insert(0, "level", levels)
            block.insert(0, "source", int(source))
            block["mapping"] = mapping.label
            blocks.append(block)
    phase_table = (pd.concat(phase_blocks, ignore_index=True) if phase_blocks
                   else pd.DataFrame(columns=["source", "level", "mapping", "phase", *LANE_FIELDS]))
    return pd.concat(blocks, ignore_index=True), pd.concat(sizes, ignore_index=True), phase_table


def analyze(
    graph: CSRGraph,
    sources: Sequence[int],
    mappings: Sequence[Mapping] | None = None,
    order: str = "sorted",
    progress: bool = False,
    algorithm: Algorithm = BFS,
) -> Analysis:
    """Lane accounting of `graph` from each source for each mapping (default: sm-1..32, ws, scan, swc)
    over the rounds of `algorithm` (default BFS)."""
    chosen = tuple(mappings) if mappings is not None else tuple(make_mappings())
    table, sizes, phases = lane_table(graph, sources, chosen, order, progress, algorithm)
    return Analysis(graph.name, graph.n, graph.m, tuple(int(s) for s in sources), order, chosen,
                    table, sizes, phases)
