"""A `simdmodel validate`-style folder of measurements made on the CPU, for testing the report's
prediction-beside-measurement path without a GPU.

Every launch's "measured" time is the opmachine prediction times `time_factor`, and the lane slots
are gpu_validate's expected lane slots times `slot_factor` (useful lanes as expected), so the
report's errors and measured ME have known exact values: error = 1 / time_factor - 1 and
measured ME = model ME / slot_factor.
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import opmachine as om
import simdmodel as sm
from gpu_validate.lanes import lanes_model

KERNELS = ("scan", "ws", "sm-4", "topo")


def write_measured_folder(folder, spec: str, kernels=KERNELS, sources: int = 2, time_factor: float = 1.5,
                          slot_factor: int = 2, profile: str = "h200", device: str = "Test GPU") -> dict:
    """Write measured.csv, lanes_model.csv and device.json into `folder`; return device.json's dict."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    graph = sm.load_graph(spec)
    chosen = [int(s) for s in sm.pick_sources(graph, sources, 1)]
    gpu = om.load_profile(profile)
    measured, expected = [], []
    for label in kernels:
        kernel = om.parse_kernel(label)
        for source in chosen:
            launches = om.predict_bfs(graph, source, kernel, gpu, l2_model="setassoc", warm_l2=True).per_level
            lanes = lanes_model(graph, kernel, source, sm.bfs(graph, source))
            expected.append(lanes)
            table = launches[["level", "phase", "block", "grid", "frontier_vertices"]].copy()
            table["time_ns"] = launches["predicted_ns"] * time_factor
            table = table.merge(lanes[["level", "phase", "lane_slots", "useful_lanes"]], on=["level", "phase"],
                                how="left")
            table["lane_slots"] = table["lane_slots"] * slot_factor
            table.insert(0, "source", source)
            table.insert(0, "kernel", label)
            measured.append(table)
    measured_table = pd.concat(measured, ignore_index=True)
    measured_table.insert(0, "graph", graph.name)
    lanes_table = pd.concat(expected, ignore_index=True)
    lanes_table.insert(0, "graph", graph.name)
    measured_table.to_csv(folder / "measured.csv", index=False)
    lanes_table.to_csv(folder / "lanes_model.csv", index=False)
    info = {"device": device, "profile": profile, "graph": graph.name, "graph_n": graph.n, "graph_m": graph.m,
            "sources": chosen}
    (folder / "device.json").write_text(json.dumps(info, indent=2))
    return info
