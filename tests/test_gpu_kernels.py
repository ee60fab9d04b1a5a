"""The CUDA BFS kernels: they compile (nvcc, sm_90), and on a GPU they reproduce the model exactly.

Without a GPU: every source compiles, plain and instrumented, with the sm-S template for every S.
With one (tests marked `gpu`): each kernel's BFS levels equal the CPU BFS, its lane slots and
useful lanes equal simdmodel's accounting, and its warp-level loads per server equal opmachine's
job counts launch by launch (stores, which race between warps, are not compared exactly).
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import opmachine as om
import simdmodel as sm
from gpu_validate import modules
from simdmodel.errors import InputError
from gpu_validate.lanes import lanes_model

NVCC = shutil.which("nvcc")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc (CUDA toolkit) not installed")


def _compile(tmp_path, name: str, instrumented: bool, extra: str = "") -> str:
    source = tmp_path / f"{name}_{int(instrumented)}.cu"
    source.write_text(modules.source_text(name) + extra)
    out = subprocess.run([NVCC, "-arch=sm_90", "-cubin", "-o", str(source.with_suffix(".cubin")),
                          f"-I{modules.cuda_dir()}", f"-DCOUNT_LANES={int(instrumented)}", "-Xptxas", "-v",
                          str(source)], check=False, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stderr


@needs_nvcc
@pytest.mark.parametrize("instrumented", [False, True])
@pytest.mark.parametrize("name", ["topo", "ws", "scan", "swc", "compact", "hold", "gather", "atomic-same", "bitmask-rmw",
                                  "bitmask-or", "memory-mix", "barrier-rounds", "lookup", "couplings"])
def test_kernel_sources_compile_for_sm90(tmp_path, name, instrumented):
    report = _compile(tmp_path, name, instrumented)
    # 8 blocks of 256 threads per SM (one full wave co-resident) needs <= 32 registers a thread.
    registers = [int(line.split("Used ")[1].split(" registers")[0]) for line in report.splitlines() if "Used " in line]
    assert registers and max(registers) <= 32


@needs_nvcc
@pytest.mark.parametrize("bitmask_stores", modules.BITMASK_STORES)
@pytest.mark.parametrize("bitmask_loads", modules.BITMASK_LOADS)
def test_the_coupled_builds_read_and_set_the_bitmask_as_named(tmp_path, bitmask_loads, bitmask_stores):
    defines = modules.coupling_defines(bitmask_loads, bitmask_stores)
    ptx = tmp_path / "couplings.ptx"
    done = subprocess.run([NVCC, "-arch=sm_90", "-ptx", "-o", str(ptx), *modules.compile_options(False, defines)[:-1],
                           str(modules.cuda_dir() / "couplings.cu")], check=False, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = ptx.read_text()
    # the atomic lookup's bitmask bytes: through the L1 (ld.global.ca), or from the L2 like the other modes' (.cg)
    assert ("ld.global.ca.u8" in text) == (bitmask_loads == "l1")
    assert "ld.global.cg.u8" in text
    # its bits: a plain byte store by every lane that found one unset (the other modes store bytes too), or one
    # atomic OR by the lane that claimed the vertex
    assert "st.global.u8" in text
    assert (".or.b32" in text) == (bitmask_stores == "claim")


def test_a_header_edit_changes_the_source_cupy_compiles(tmp_path, monkeypatch):
    import shutil as copying
    import sys
    import types

    for path in modules.cuda_dir().glob("*.cu*"):
        copying.copy(path, tmp_path / path.name)
    monkeypatch.setattr(modules, "cuda_dir", lambda: tmp_path)
    compiled = []
    monkeypatch.setitem(sys.modules, "cupy", types.SimpleNamespace(
        RawModule=lambda code, options, name_expressions: compiled.append(code)))
    modules._module.cache_clear()
    try:
        modules._module("couplings.cu", False, ())
        header = tmp_path / "status_lookup.cuh"
        header.write_text(header.read_text() + "// edited\n")
        modules._module.cache_clear()
        modules._module("couplings.cu", False, ())
    finally:
        modules._module.cache_clear()
    source = (tmp_path / "couplings.cu").read_text().splitlines()
    before, after = (code.splitlines() for code in compiled)
    assert before != after  # CuPy's cache key (the source text) changes with the header
    assert before[:len(source)] == after[:len(source)] == source  # and no line of the kernel moves


def test_an_unknown_bitmask_build_is_one_line():
    with pytest.raises(InputError, match="unknown bitmask loads 'l3'"):
        modules.coupling("contract", 4, bitmask_loads="l3")
    with pytest.raises(InputError, match=r"unknown bitmask stores 'atomic' \(choose claim, plain\)"):
        modules.coupling("contract", 4, bitmask_stores="atomic")


@needs_nvcc
@pytest.mark.parametrize("instrumented", [False, True])
def test_group_kernel_compiles_for_every_group_size(tmp_path, instrumented):
    signature = "(const int*, int, const int*, const int*, int*, int, unsigned long long*)"
    extra = "".join(f"\ntemplate __global__ void bfs_expand_group<{s}>{signature};" for s in range(1, 33))
    _compile(tmp_path, "group", instrumented, extra)


def test_every_kernel_strategy_has_a_source():
    for name in ("topo", "group", "ws", "scan", "swc", "compact"):
        assert "bfs_common.cuh" in modules.source_text(name)
    assert modules.compile_options(True)[-2] == "-DCOUNT_LANES=1"


@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-3", "sm-32", "ws", "scan", "swc"])
def test_expected_lanes_equal_the_models_warp_iterations(label):
    # Lane slots = 32 x EDL jobs (one lockstep iteration each), useful lanes = frontier edges.
    graph = sm.load_graph("rmat:scale=11,ef=8,seed=3")
    source = int(sm.pick_sources(graph, 1, seed=2)[0])
    kernel = om.parse_kernel(label)
    lanes = lanes_model(graph, kernel, source, sm.frontier.bfs(graph, source))
    predicted = om.predict_bfs(graph, source, kernel, om.load_profile("h200")).per_level
    predicted = predicted[predicted["phase"] != "compact"]
    assert np.array_equal(lanes["lane_slots"].to_numpy(), 32 * predicted["jobs_edl"].to_numpy())
    assert np.array_equal(lanes["useful_lanes"].to_numpy(), predicted["frontier_edges"].to_numpy())


def test_topo_lanes_by_hand():
    # Path 0-1-2 plus 0-33: level 1 = {1, 33}; node 1 (degree 2) sits in warp step 0 and node 33
    # (degree 1) in step 1, so 32 x (2 + 1) lane slots and 3 useful lanes.
    edges = np.array([[0, 1], [1, 2], [0, 33]])
    graph = sm.load_graph(__import__("scipy.sparse", fromlist=["coo_matrix"]).coo_matrix(
        (np.ones(3), (edges[:, 0], edges[:, 1])), shape=(34, 34)), undirected=True)
    lanes = lanes_model(graph, om.parse_kernel("topo"), 0, sm.frontier.bfs(graph, 0))
    assert lanes.loc[1, "lane_slots"] == 32 * 3 and lanes.loc[1, "useful_lanes"] == 3


GPU_GRAPHS = ["rmat:scale=13,ef=16,seed=2", "grid2d:side=90", "random:n=5000,m=30000,seed=4"]


@pytest.mark.gpu
@pytest.mark.parametrize("spec", GPU_GRAPHS)
@pytest.mark.parametrize("label", ["topo", "sm-1", "sm-5", "sm-8", "sm-32", "ws", "scan", "swc"])
def test_gpu_bfs_matches_cpu_and_model_exactly(spec, label):
    from gpu_validate.bfs import GpuBfs

    graph = sm.load_graph(spec)
    source = int(sm.pick_sources(graph, 1, seed=1)[0])
    kernel = om.parse_kernel(label)
    profile = om.load_profile("h200")
    counts = GpuBfs(graph, kernel, profile, instrumented=True).count_bfs(source)  # raises on wrong levels
    predicted = om.predict_bfs(graph, source, kernel, profile).per_level
    assert list(zip(counts["level"], counts["phase"])) == list(zip(predicted["level"], predicted["phase"]))
    for server in ("ani", "nf1", "erl", "edl", "nf2"):
        assert np.array_equal(counts[f"gpu_jobs_{server}"].to_numpy(), predicted[f"jobs_{server}"].to_numpy()), server
    lanes = lanes_model(graph, kernel, source, sm.frontier.bfs(graph, source))
    expand = counts[counts["phase"] != "compact"].reset_index(drop=True)
    assert np.array_equal(expand["lane_slots"].to_numpy(), lanes["lane_slots"].to_numpy())
    assert np.array_equal(expand["useful_lanes"].to_numpy(), lanes["useful_lanes"].to_numpy())


@pytest.mark.gpu
def test_gpu_timing_has_one_positive_time_per_launch():
    from gpu_validate.bfs import GpuBfs

    graph = sm.load_graph("rmat:scale=12,ef=8")
    table = GpuBfs(graph, om.parse_kernel("ws"), om.load_profile("h200")).time_bfs(0, repeats=3)
    assert (table["time_ns"] > 0).all() and (table["time_ns_min"] <= table["time_ns"]).all()
    assert set(table["phase"]) == {"expand", "compact"}
