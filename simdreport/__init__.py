"""simdreport: `simdmodel report`, the project's main job as a report people read.

From a suite of graphs (by default generated stand-ins for seed 000's Table 1 classes) to one
folder: `index.html` (self-contained), `report.md`, `figures/*.png` and `tables/*.csv`, built only
from the public APIs of simdmodel (lane accounting), opmachine (predicted time per round) and the
committed gpu_validate measurements.
"""
from .collect import GraphData, collect_graph
from .measured import MeasuredComparison, MeasuredRun, committed_runs, read_run
from .report import DEFAULT_GPU, DEFAULT_SOURCES, L2_MODEL, Report, build_report
from .suite import DEFAULT_SUITE, SuiteGraph, suite_for

__all__ = [
    "DEFAULT_GPU",
    "DEFAULT_SOURCES",
    "DEFAULT_SUITE",
    "L2_MODEL",
    "GraphData",
    "MeasuredComparison",
    "MeasuredRun",
    "Report",
    "SuiteGraph",
    "build_report",
    "collect_graph",
    "committed_runs",
    "read_run",
    "suite_for",
]
