"""simdreport: the app layer, the only package that knows every other one.

- `simdmodel report`, the project's main job as a report people read: from a suite of graphs (by
  default generated stand-ins for seed 000's Table 1 classes) to one folder: `index.html`
  (self-contained), `report.md`, `figures/*.png` and `tables/*.csv`, built only from the public
  APIs of simdmodel (lane accounting), opmachine (predicted time per round) and the committed
  gpu_validate measurements (`build_report`, `collect_graph`, `committed_runs`, `read_run`).
- `cli`: the `simdmodel` command line (`python -m simdreport` runs it too); `defaults`: the one
  set of defaults (profile, L2, time model, seed) every command that predicts shares.
- `suites`: the report's default suite and the committed validation suite;
  `validation_suite`: the driver that measures and compares the latter
  (`python -m simdreport.validation_suite measure|compare DIR`).

The public names below load on first use, so the command line starts without matplotlib.
"""
from __future__ import annotations

import importlib

_PUBLIC = {
    "DEFAULT_SOURCES": "report", "Report": "report", "FALLBACK_GPU": "defaults", "L2_MODEL": "defaults",
    "TIME_MODEL": "defaults", "default_gpu": "defaults",
    "build_report": "report", "GraphData": "collect", "collect_graph": "collect",
    "MeasuredComparison": "measured", "MeasuredRun": "measured", "committed_runs": "measured",
    "read_run": "measured", "DEFAULT_SUITE": "suites", "SuiteGraph": "suites", "suite_for": "suites",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'simdreport' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_PUBLIC[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted({*globals(), *__all__})
