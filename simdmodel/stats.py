"""Graph statistics for `simdmodel graph info`: size, degree distribution, search depth, the
component sources come from, and (for a file) its sha256 and the loader's choices.

Average search depth is seed 001 Table 1's "Depth": the mean number of BFS levels from
pseudo-random sources with out-degree > 0.
"""
from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from .components import largest_component
from .errors import InputError
from .frontier import bfs_levels, is_symmetric, pick_sources
from .graph import CSRGraph, count_duplicates, count_self_loops


def average_depth(graph: CSRGraph, sources: int, seed: int, progress: bool = False) -> float:
    """Mean number of BFS levels (the source's level 0 included) over seeded random sources."""
    depths = []
    for source in tqdm(pick_sources(graph, sources, seed), desc="depth", disable=not progress, leave=False):
        _levels, level_ptr = bfs_levels(graph.indptr, graph.indices, int(source), is_symmetric(graph))
        depths.append(level_ptr.size - 1)
    return float(np.mean(depths))


def graph_info(graph: CSRGraph, sources: int = 0, seed: int = 1, progress: bool = False) -> dict:
    """Dictionary with the keys of `graph info --format json` (avg_depth None without sources)."""
    if graph.n == 0:
        raise InputError(f"{graph.name or 'graph'}: empty graph (no vertices)")
    degrees = graph.degrees()
    q1, median, q3 = (float(x) for x in np.quantile(degrees, [0.25, 0.5, 0.75]))
    low, high, mean = int(degrees.min()), int(degrees.max()), float(degrees.mean())
    info = {
        "name": graph.name,
        "n": graph.n,
        "m": graph.m,
        "weighted": graph.weighted,
        "degree_min": low,
        "degree_q1": q1,
        "degree_median": median,
        "degree_q3": q3,
        "degree_max": high,
        "degree_mean": mean,
        "self_loops": count_self_loops(graph),
        "duplicates": count_duplicates(graph),
        "avg_depth": average_depth(graph, sources, seed, progress) if sources > 0 else None,
    }
    report = graph.report
    if report is not None:
        info["input_entries"] = report.entries_read
        info["input_self_loops"] = report.self_loops
        info["input_duplicates"] = report.duplicates
    component = largest_component(graph)
    info["largest_component"] = component.size
    info["largest_component_kind"] = component.kind
    info["sources_from"] = (component.describe(graph.n) if component.size > 1
                            else "every vertex with out-degree > 0 (no cycle: no larger strong component)")
    if graph.origin is not None:
        info["file"] = graph.origin.file
        info["sha256"] = graph.origin.sha256
        info["loader"] = graph.origin.describe()
    return info
