"""Real graphs in: folder manifests, the shipped real suite against the shared files, file identity,
and the committed H200 validation on the real suite."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdmodel as sm
from shared_graphs import SHARED, needs_shared
from simdmodel.errors import InputError
from simdmodel.graph import count_self_loops
from simdmodel.identity import file_sha256
from simdreport.manifest import SUITES, check_files, directory_graphs, read_manifest
from simdreport.suites import SuiteGraph

REAL = read_manifest(SUITES["real"], Path("GRAPHS"))
RESULTS = Path(__file__).resolve().parent.parent / "gpu_validate" / "results" / "nvidia-h200-real"


# --- the shipped manifest against the shared folder (skipped where the folder is absent) ----------------
@needs_shared
def test_the_real_manifest_lists_every_file_of_the_shared_folder():
    files = {p.name for p in SHARED.iterdir() if p.name != "MANIFEST.md"}
    assert files == {g.path.name for g in REAL} and len(REAL) == 18


@needs_shared
@pytest.mark.parametrize("entry", REAL, ids=[g.label for g in REAL])
def test_every_shared_graph_loads_with_the_published_n_and_m(entry):
    graph = next(g for g in directory_graphs(SHARED, "real") if g.label == entry.label).suite_graph().load()
    assert graph.n == entry.n
    assert graph.m == entry.expected_csr_m(count_self_loops(graph))
    assert graph.origin.sha256 == entry.sha256 and graph.name == entry.path.name.split(".")[0]
    source = int(sm.pick_sources(graph, 1, 1)[0])
    assert sm.bfs(graph, source).reached > 1


@needs_shared
def test_count_line_files_load_only_under_their_option():
    with pytest.raises(sm.GraphFormatError, match="--count-lines"):
        sm.load_graph(SHARED / "snap_wiki-Vote.txt.gz")


# --- manifests -------------------------------------------------------------------------------------
def edge_file(folder: Path, name: str, text: str = "0 1\n1 2\n2 0\n") -> Path:
    path = folder / name
    path.write_text(text)
    return path


def test_a_folder_without_manifest_takes_every_graph_file_as_stored(tmp_path):
    edge_file(tmp_path, "b.el")
    edge_file(tmp_path, "a.csv", "from,to\n0,1\n1,0\n")
    (tmp_path / "notes.md").write_text("not a graph")
    graphs = directory_graphs(tmp_path)
    assert [g.label for g in graphs] == ["a", "b"] and not any(g.symmetrize for g in graphs)
    loaded = graphs[0].suite_graph().load()
    assert loaded.m == 2 and "header row 'from,to' detected" in loaded.origin.notes


def test_a_folder_manifest_sets_the_loader_and_checks_the_hash(tmp_path):
    path = edge_file(tmp_path, "tri.el")
    (tmp_path / "graphs.toml").write_text(
        f'[[graph]]\nfile = "tri.el"\nlabel = "triangle"\nsymmetrize = true\nn = 3\nm = 3\nm_counts = "edges"\n'
        f'sha256 = "{file_sha256(path)}"\n')
    (entry,) = directory_graphs(tmp_path)
    graph = entry.suite_graph().load()
    assert (entry.label, graph.m, entry.expected_csr_m(0)) == ("triangle", 6, 6)
    assert graph.origin.symmetrized and graph.origin.describe().startswith("every edge stored both ways")
    path.write_text("0 1\n1 2\n")  # the file changed since the manifest was written
    with pytest.raises(InputError, match="not the graph that was described or measured"):
        entry.suite_graph().load()


@pytest.mark.parametrize("text, message", [
    ('[[graph]]\nlabel = "x"\n', "graph 1: no file"),
    ('[[graph]]\nfile = "a.el"\nsize = 3\n', "unknown key 'size'"),
    ('[[graph]]\nfile = "a.el"\nn = "3"\n', "n must be a int"),
    ('[[graph]]\nfile = "a.el"\nsymmetrize = 1\n', "symmetrize must be a bool"),
    ('[[graph]]\nfile = "a.el"\nm_counts = "pairs"\n', "m_counts must be 'arcs' or 'edges'"),
    ('[[graph]]\nfile = "a.el"\n[[graph]]\nfile = "b.el"\nlabel = "a"\n', "label 'a' is used twice"),
    ('title = "x"\n', "expected [[graph]] tables"),
    ('[[graph]\n', "not a valid TOML manifest"),
    ('[[graph]]\nfile = "a.el"\ncolumns = ["a"]\n', "columns must be 2 or 3"),
])
def test_bad_manifests_are_one_error_line(tmp_path, text, message):
    (tmp_path / "graphs.toml").write_text(text)
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        directory_graphs(tmp_path)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=120) | st.sampled_from(['[[graph]]\nfile = 3\n', '[[graph]]\n', 'graph = 1\n',
                                                    '[[graph]]\nfile = "a.el"\nheader = "yes"\n']))
def test_any_manifest_text_loads_or_is_one_input_error(tmp_path, text):
    (tmp_path / "graphs.toml").write_text(text)
    try:
        graphs = directory_graphs(tmp_path)
    except InputError as error:
        assert "\n" not in str(error).strip()
    else:
        assert all(isinstance(g.path, Path) for g in graphs)


def test_missing_files_and_folders_are_named(tmp_path):
    with pytest.raises(InputError, match="not a directory"):
        directory_graphs(tmp_path / "nowhere")
    with pytest.raises(InputError, match="no graph files"):
        directory_graphs(tmp_path)
    graphs = [g.suite_graph() for g in directory_graphs(tmp_path, "real")]
    with pytest.raises(InputError, match=r"metis_mdual.graph.gz: no such file, though the manifest lists it \(17 more"):
        check_files(graphs)
    check_files([SuiteGraph("grid2d:side=3", "grid", "")])  # a generator needs no file


def test_the_cli_takes_a_folder_instead_of_specs(tmp_path, capsys):
    from simdreport.cli import main

    assert main(["report", "--suite", "real", "--out", str(tmp_path / "r")]) == 2
    assert "--suite needs --graphs-dir" in capsys.readouterr().err
    edge_file(tmp_path, "tri.el")
    assert main(["report", "grid2d:side=3", "--graphs-dir", str(tmp_path), "--out", str(tmp_path / "r")]) == 2
    assert "SPECs or --graphs-dir, not both" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_graph_info_names_the_file_its_hash_and_the_loader_choices(tmp_path, capsys):
    from simdreport.cli import main

    path = edge_file(tmp_path, "pairs.csv", "id1,id2\n0,1\n1,2\n2,0\n3,0\n")
    assert main(["graph", "info", str(path), "--undirected", "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["n"] == 4 and info["sha256"] == file_sha256(path) and info["file"] == "pairs.csv"
    assert info["loader"] == ("every edge stored both ways; self loops kept; duplicates kept; "
                              "header row 'id1,id2' detected; columns id1,id2")
    assert info["sources_from"] == "largest connected component: 4 of 4 vertices (100.0%)"
    assert main(["graph", "info", str(path), "--no-header"]) == 2
    assert "pairs.csv:1" in capsys.readouterr().err


# --- the committed H200 validation on the real suite ---------------------------------------------------
def committed_folders():
    return sorted(p for p in RESULTS.iterdir() if (p / "device.json").is_file() and p.name != "pooled")


def test_the_committed_real_suite_is_on_an_h200_with_every_file_identified():
    folders = committed_folders()
    assert len(folders) == 18
    by_file = {g.path.name: g for g in REAL}
    for folder in folders:
        device = json.loads((folder / "device.json").read_text())
        entry = by_file[device["graph_file"]["file"]]
        assert device["device"] == "NVIDIA H200" and device["graph_file"]["sha256"] == entry.sha256
        assert device["graph"] == folder.name == entry.path.name.split(".")[0]  # the file's name without suffixes
        assert device["graph_n"] == entry.n and len(device["sources"]) == 3
        assert device["graph_file"]["symmetrized"] >= entry.symmetrize  # a symmetric .mtx is symmetrized too


def test_the_committed_real_suite_has_exact_lanes_and_jobs():
    summary = json.loads((RESULTS / "summary.json").read_text())
    assert summary["device"] == "NVIDIA H200" and len(summary["graphs"]) == 18
    assert summary["lane_exact_fraction"] == 1.0 and summary["jobs_exact_fraction"] == 1.0
    assert all("/" not in name for name in summary["graphs"])  # file names, not this machine's paths
    throughput = pd.read_csv(RESULTS / "pooled" / "throughput.csv")
    whole = pd.read_csv(RESULTS / "pooled" / "whole_bfs.csv")
    assert (throughput["reached_vertices"] >= 1).all() and (throughput["edges"] > 0).all()
    # every kernel reaches the same vertices and edges from a source: they run the same BFS
    spread = throughput.groupby(["graph", "source"])[["reached_vertices", "edges"]].nunique()
    assert (spread == 1).all().all()
    assert np.isfinite(whole.loc[whole["mode"] == "warm", "reached_edges"]).all()
