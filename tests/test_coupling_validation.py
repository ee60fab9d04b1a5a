"""The couplings on the GPU (gpu_validate.couplings, coupling_validation): recorded runs re-predicted
without a GPU, the committed H200 run's exact checks, and (marked `gpu`) seed 001's formulas on hardware."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import opmachine as om
import simdmodel as sm
from gpu_validate import coupling_validation
from simdmodel.couplings import COUPLINGS, FORMULA_TRAFFIC, Coupling
from simdmodel.graph import EdgeList, csr_from_edges

RESULTS = Path(__file__).resolve().parents[1] / "gpu_validate" / "results" / "nvidia-h200-couplings"


def test_a_recorded_run_is_predicted_again_without_a_gpu(tmp_path, capsys):
    races = RESULTS / "races"
    keep = lambda table: table[table["graph"].str.startswith("kron:scale=16")]  # noqa: E731 (the fast graph)
    for name in ("measured.csv.gz", "counted.csv.gz"):
        keep(pd.read_csv(races / name)).to_csv(tmp_path / name, index=False)
    record = json.loads((races / "summary.json").read_text())
    (tmp_path / "summary.json").write_text(json.dumps({k: record[k] for k in ("device", "driver", "profile", "date",
                                                                               "command")}))
    assert coupling_validation.main(["--measured", str(tmp_path)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    rows = {row["kernel"]: row for row in summary["rows"]}
    assert rows["two-phase"]["redundant_measured"] == rows["two-phase"]["redundant_predicted"] == 1.0
    assert rows["two-phase-history"]["overflow"] and summary["redundant_expansion_max_by_mode"]["history"] is None
    assert summary["redundant_expansion_max"] == 1.0 and summary["predict_command"].endswith(str(tmp_path))
    throughput = pd.read_csv(tmp_path / "pooled" / "throughput.csv")
    done = throughput.dropna(subset=["gteps"])
    assert np.allclose(done["fraction_of_bound"], done["gteps"] / done["bound_gteps"])
    launches = pd.read_csv(tmp_path / "launches.csv.gz")
    two_phase = launches[launches["kernel"] == "two-phase"]
    assert (two_phase["predicted_output"] == two_phase["output"]).all()  # no race: the model's queues are exact


def test_a_folder_that_is_no_coupling_run_is_one_line(tmp_path, capsys):
    assert coupling_validation.main(["--measured", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert coupling_validation.main(["--measured", str(tmp_path), "--kernels", "sm-32"]) == 2
    assert "unknown coupling 'sm-32'" in capsys.readouterr().err


def test_the_committed_h200_run_is_exact_where_no_race_decides():
    traffic = pd.read_csv(RESULTS / "traffic.csv")
    summary = json.loads((RESULTS / "summary.json").read_text())
    assert summary["device"] == "NVIDIA H200" and summary["redundant_expansion_max"] == 1.0
    assert set(traffic["kernel"]) == set(COUPLINGS) and traffic["graph"].nunique() == 6
    # The atomic lookup lets no duplicate through: every edge gathered once, every vertex labelled once.
    assert (traffic["measured_column"] == traffic["reached_edges"]).all()
    assert (traffic["measured_label_write"] == traffic["reached_vertices"]).all()
    for column in ("column", "row", "edge_read", "edge_write", "vertex_read", "vertex_write", "label_write"):
        assert (traffic[f"measured_{column}"] == traffic[f"predicted_{column}"]).all(), column
    throughput = pd.read_csv(RESULTS / "pooled" / "throughput.csv")
    assert set(throughput["kernel"]) == set(COUPLINGS) and (throughput["fraction_of_bound"] > 0).all()


@pytest.mark.gpu
@pytest.mark.parametrize("name", COUPLINGS)
def test_gpu_couplings_move_seed_001s_words_on_a_tree(name):
    from gpu_validate.couplings import GpuCoupledBfs

    rng = np.random.default_rng(3)
    n = 6000
    parents = (rng.random(n - 1) * np.arange(1, n)).astype(np.int64)
    parents[:2000] = 0  # a hub: its list goes through the pieces launch
    graph = csr_from_edges(EdgeList(np.arange(1, n), parents, n, True, "tree"))
    coupling = Coupling(name, "label")
    profile = om.load_profile("h200")
    counted = GpuCoupledBfs(graph, coupling, profile, instrumented=True).count_bfs(0)  # raises on wrong levels
    words = int(counted[list(FORMULA_TRAFFIC)].to_numpy().sum()) + 2  # + the host's queue and label stores
    # hybrid's two-phase iterations pass their vertices through a vertex queue: 2 words each
    extra = 2 * int(counted[counted["phase"] == "contract"]["output"].sum()) if name == "hybrid" else 0
    assert words - extra == Coupling("contract-expand" if name == "hybrid" else name).formula_words(n, graph.m)
    timed = GpuCoupledBfs(graph, Coupling(name), profile).time_bfs(0, repeats=2)
    assert (timed["time_ns"] > 0).all() and (timed["output_min"] == timed["output_max"]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("spec", ["rmat:scale=13,ef=16,seed=2", "grid2d:side=90"])
def test_gpu_atomic_couplings_run_the_models_queues(spec):
    from gpu_validate.couplings import GpuCoupledBfs
    from simdmodel.couplings import coupled_launches

    graph = sm.load_graph(spec)
    source = int(sm.pick_sources(graph, 1, seed=1)[0])
    profile = om.load_profile("h200")
    grid = profile.full_wave_grid(256)
    for name in COUPLINGS:
        counted = GpuCoupledBfs(graph, Coupling(name), profile, instrumented=True).count_bfs(source)
        model = coupled_launches(graph, source, Coupling(name), grid, grid * 256)
        model = model[model["phase"] != "setup"]
        assert list(zip(counted["level"], counted["phase"])) == list(zip(model["level"], model["phase"]))
        assert counted["output"].tolist() == model["output"].tolist()
        for column in ("column", "row", "edge_read", "edge_write", "vertex_read", "vertex_write", "label_write"):
            assert counted[column].tolist() == model[column].tolist(), (name, column)
