"""The import contract: four layers, and imports only point down.

simdmodel (core) < opmachine (model) < gpu_validate (gpu) < simdreport (app). Every import in every
module of the four packages, lazy ones inside functions included, is read from the source (AST),
so an upward import fails here even if no test runs the line. Importing the lower layers stays
light: no matplotlib, no CuPy, nothing of the layers above.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("simdmodel", "opmachine", "gpu_validate", "simdreport")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path):
    """(line, absolute module name) of every import statement in `path`, relative ones resolved."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                yield node.lineno, ".".join(base + ([node.module] if node.module else []))
            else:
                yield node.lineno, node.module


def upward_imports() -> list[str]:
    found = []
    for rank, layer in enumerate(LAYERS):
        for path in sorted((ROOT / layer).rglob("*.py")):
            for line, module in imported_modules(path):
                top = module.split(".")[0]
                if top in LAYERS and LAYERS.index(top) > rank:
                    found.append(f"{path.relative_to(ROOT)}:{line} ({layer}) imports {module}")
    return found


def test_every_package_is_scanned():
    for layer in LAYERS:
        assert len(list((ROOT / layer).rglob("*.py"))) > 3, layer


def test_every_package_is_installed():
    # pyproject lets setuptools find the packages under the layers' names; every package of the
    # tree (a folder with __init__.py) must be found, and nothing else.
    import fnmatch
    import tomllib

    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]["include"]
    found = {module_name(init) for layer in LAYERS for init in (ROOT / layer).rglob("__init__.py")}
    assert found and all(any(fnmatch.fnmatchcase(name, p) for p in patterns) for name in found)
    everywhere = {module_name(init) for init in ROOT.rglob("__init__.py") if ".venv" not in init.parts}
    assert {name for name in everywhere if any(fnmatch.fnmatchcase(name, p) for p in patterns)} == found


def test_no_layer_imports_a_higher_one():
    assert upward_imports() == []


def test_the_scan_sees_relative_and_lazy_imports(tmp_path, monkeypatch):
    # a stand-in tree: a core module importing the gpu layer inside a function, and relatively
    fake = tmp_path / "simdmodel"
    fake.mkdir()
    (fake / "__init__.py").write_text("from . import a\n")
    (fake / "a.py").write_text("def f():\n    from gpu_validate import bfs\n    from .b import c\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    found = list(imported_modules(fake / "a.py"))
    assert found == [(2, "gpu_validate"), (3, "simdmodel.b")]
    assert list(imported_modules(fake / "__init__.py")) == [(1, "simdmodel")]


@pytest.mark.parametrize("package", ["simdmodel", "opmachine"])
def test_lower_layers_import_light(package):
    heavy = ("matplotlib", "cupy", "gpu_validate", "simdreport")
    code = (f"import sys, {package}\n"
            f"loaded = [m for m in {heavy!r} if m in sys.modules]\n"
            "print(','.join(loaded))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.strip() == ""


def test_the_command_line_starts_without_matplotlib():
    code = "import sys, simdreport.cli; print('matplotlib' in sys.modules, 'gpu_validate' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert done.stdout.split() == ["False", "False"]
