"""The analysis notebooks: committed without outputs, and run top to bottom at small sizes.

Each notebook's first code cell is tagged `parameters`; the run inserts a cell after it with small
values (as papermill does), executes the notebook in a fresh kernel of this interpreter with
nbclient, and checks that every cell ran, every figure cell drew a figure and the key results exist.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
RESULTS = ROOT / "gpu_validate" / "results" / "nvidia-h200"
NAMES = ("01_simd_efficiency", "02_operator_machine", "03_model_vs_hardware", "04_hardware_what_ifs")
ALLOWED_NOTEBOOK_METADATA = {"kernelspec", "language_info"}


def smallest_result_folders(count: int) -> list[str]:
    """The `count` graph folders of the committed validation run with the fewest bytes (quick to read)."""
    folders = [p for p in RESULTS.iterdir()
               if p.is_dir() and any((p / f"exact{suffix}").is_file() for suffix in (".csv", ".csv.gz"))]
    size = {p.name: sum(f.stat().st_size for f in p.iterdir()) for p in folders}
    return sorted(size, key=size.get)[:count]


# Small sizes for CI, and a last cell that reports the results each notebook must have produced.
SMALL = {
    "01_simd_efficiency": "SCALE = 10\nSOURCES = 2",
    "02_operator_machine": ('GRAPH = "rmat:scale=10,ef=8,seed=1"\nKERNELS = ("topo", "scan")\n'
                            "WHAT_IF_FACTORS = (0.5, 2.0)"),
    "03_model_vs_hardware": None,  # filled in by small_parameters(): the smallest committed result folders
    "04_hardware_what_ifs": ('GRAPHS = ["rmat:scale=10,ef=8", "grid2d:side=30"]\nKERNELS = ["topo", "sm-8"]\n'
                             'WHAT_IFS = {"l2": (0.0625,), "launch": (0.5,)}\nWORKERS = 1\n'
                             "OUT = __import__('tempfile').mkdtemp() + '/sweep'"),
}
REPORT = {
    "01_simd_efficiency": 'json.dumps({"graphs": len(analyses), "ua_23": level0["ua_lanes"].tolist(), '
                          '"tradeoff_rows": len(tradeoff), "best_rows": len(choice)})',
    "02_operator_machine": 'json.dumps({"example": example.bottleneck, "slow_edl": slow_edl.bottleneck, '
                           '"kernels": sorted(results), "rounds": len(completions), "launches": len(per_level), '
                           '"what_if": len(sensitivity), "curves": len(profile.curves)})',
    "03_model_vs_hardware": 'json.dumps({"graphs": chosen, "cupy": "cupy" in sys.modules, '
                            '"lanes_checked": int(len(lane_defined)), "rounds": len(sim_rounds), '
                            '"summary_lines": len(lines)})',
    "04_hardware_what_ifs": 'json.dumps({"tasks": len(plan.tasks), "rows": len(whole), "fastest": len(fastest), '
                            '"knobs": sorted(tables), "failed": len(outcome.failed)})',
}


def small_parameters(name: str) -> str:
    if name == "03_model_vs_hardware":
        return f"GRAPHS = {smallest_result_folders(2)!r}"
    return SMALL[name]


def load(name: str):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@pytest.fixture
def kernel_env(tmp_path, monkeypatch):
    """A `python3` kernelspec that runs this interpreter, found first, with the repository importable."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name):
    notebook = load(name)
    nbformat.validate(notebook)
    assert set(notebook.metadata) <= ALLOWED_NOTEBOOK_METADATA, f"metadata noise: {set(notebook.metadata)}"
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    for index, cell in enumerate(notebook.cells):
        assert set(cell.metadata) <= {"tags"}, f"cell {index} carries metadata {dict(cell.metadata)}"
        if cell.cell_type == "code":
            assert cell.outputs == [], f"cell {index} has outputs"
            assert cell.execution_count is None, f"cell {index} has an execution count"


@pytest.mark.parametrize("name", NAMES)
def test_first_code_cell_holds_the_parameters(name):
    code = [cell for cell in load(name).cells if cell.cell_type == "code"]
    assert "parameters" in code[0].metadata.get("tags", [])
    assert all("parameters" not in cell.metadata.get("tags", []) for cell in code[1:])
    # Every small value overrides a name the parameters cell defines.
    defined = {line.split("=")[0].strip() for line in code[0].source.splitlines()
               if "=" in line and not line.startswith((" ", "#"))}
    overridden = {line.split("=")[0].strip() for line in small_parameters(name).splitlines()}
    assert overridden <= defined


@pytest.mark.parametrize("name", NAMES)
def test_no_private_names(name):
    """Notebooks use the packages' public API only: no `module._name` access, no `from x import _name`."""
    import re

    for cell in load(name).cells:
        if cell.cell_type == "code":
            assert not re.search(r"\b(sm|om|simdmodel|opmachine|gpu_validate)\.\w*\._|\b(sm|om)\._", cell.source)
            assert not re.search(r"from\s+(simdmodel|opmachine|gpu_validate)[\w.]*\s+import\s+[^\n]*\b_\w", cell.source)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_at_small_sizes(name, kernel_env):
    notebook = load(name)
    position = next(i for i, cell in enumerate(notebook.cells) if "parameters" in cell.metadata.get("tags", []))
    injected = nbformat.v4.new_code_cell(small_parameters(name))
    injected.metadata["tags"] = ["injected-parameters"]
    notebook.cells.insert(position + 1, injected)
    notebook.cells.append(nbformat.v4.new_code_cell("import json, sys\nprint(" + REPORT[name] + ")"))
    client = NotebookClient(notebook, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails

    figure_cells = [cell for cell in notebook.cells if cell.cell_type == "code" and "plt.show()" in cell.source]
    assert figure_cells
    for cell in figure_cells:
        images = [out for out in cell.outputs if "image/png" in out.get("data", {})]
        assert images, f"no figure from cell:\n{cell.source[:200]}"
    report = json.loads(notebook.cells[-1].outputs[-1]["text"])

    if name == "01_simd_efficiency":
        assert report["graphs"] == report["tradeoff_rows"] == report["best_rows"] == 8
        assert report["ua_23"] == [9, 9, 1, 1, 1, 0]  # seed 000 §4: degree 23, S = 32..1
    elif name == "02_operator_machine":
        assert report["example"] == "ANI" and report["slow_edl"] == "EDL"  # seed 003 §3.2
        assert report["kernels"] == ["scan", "topo"]
        assert report["launches"] == report["rounds"]  # topo: one launch per round
        assert report["what_if"] == 2 * report["curves"]
    elif name == "03_model_vs_hardware":
        assert report["cupy"] is False
        assert report["graphs"] == smallest_result_folders(2)
        assert report["lanes_checked"] > 0 and report["rounds"] > 0 and report["summary_lines"] >= 4
    else:
        assert report["tasks"] == report["rows"] == 2 * 2 * 3 and report["failed"] == 0  # graphs x kernels x profiles
        assert report["fastest"] == 2 * 3 and report["knobs"] == ["l2", "launch"]
