"""README's two Quick start commands stay true: CI runs the test command, the main job runs."""
import re
from pathlib import Path

from simdreport.arguments import DEFAULT_SPEC
from simdreport.cli import main

ROOT = Path(__file__).resolve().parents[1]


def quick_start_commands():
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_ci_runs_readme_install_and_test_command():
    commands = quick_start_commands()
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    install, _, test = commands[1].rpartition(" && ")
    assert install in ci and test in ci
    assert ci.index(install) < ci.index(test)


def test_main_job_is_the_report_of_the_built_in_suite(tmp_path, monkeypatch):
    assert quick_start_commands()[0].endswith(".venv/bin/simdmodel report")
    # The same code path on a smaller suite (the full one takes a minute or two; bench/bench_report.py
    # times it): with no SPEC the report covers every graph of simdreport's built-in suite.
    from simdreport import suites

    small = (suites.SuiteGraph("grid2d:side=10", "grid", "ecology"), suites.SuiteGraph(DEFAULT_SPEC.replace(
        "scale=16", "scale=7"), "rmat", "rmat1"))
    monkeypatch.setattr(suites, "DEFAULT_SUITE", small)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--sources", "2", "--quiet"]) == 0
    page = (tmp_path / "report" / "index.html").read_text()
    assert all(f">{graph.label} <small>" in page for graph in small)
    assert "the built-in suite" in page
