"""The per-launch overheads: derived from recorded medians, and the profile carries them."""
from __future__ import annotations

import json
from pathlib import Path

from gpu_validate.overheads import derive, one_node_graph
from opmachine.profile import load_profile

RECORDED = Path(__file__).parent / "fixtures" / "overheads" / "h200.json"


def test_derive_from_the_recorded_h200_run():
    record = json.loads(RECORDED.read_text())
    derived = derive(record)
    # launch overhead = empty one-block launch; grid scan = one-node compaction - that: 15584 - 3424
    assert derived == {"launch_overhead_ns": 3424.0, "grid_scan_ns": 12160.0}
    assert {k: record[k] for k in derived} == derived


def test_h200_profile_carries_the_recorded_overheads():
    profile = load_profile("h200", kind="gpu")
    derived = derive(json.loads(RECORDED.read_text()))
    assert (profile.launch_overhead_ns, profile.grid_scan_ns) == (derived["launch_overhead_ns"],
                                                                  derived["grid_scan_ns"])


def test_a_faster_compaction_than_an_empty_launch_gives_no_negative_scan():
    assert derive({"empty_one_block_ns": 5000.0, "compact_one_node_ns": 4000.0})["grid_scan_ns"] == 0.0


def test_profiles_that_never_measured_a_grid_scan_say_zero():
    # grid_scan_ns is a required key: k40c states 0 with an "unknown" note (tests/test_profile.py)
    assert load_profile("k40c", kind="gpu").grid_scan_ns == 0.0


def test_one_node_graph():
    graph = one_node_graph()
    assert (graph.n, graph.m) == (1, 0)
