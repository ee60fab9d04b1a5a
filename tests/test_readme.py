"""README's two Quick start commands stay true: CI runs the test command, the main job runs."""
import re
from pathlib import Path

from simdmodel.cli import DEFAULT_SPEC, main

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


def test_main_job_runs_on_the_built_in_default(capsys):
    assert "simdmodel analyze" in quick_start_commands()[0]
    assert main(["analyze", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert DEFAULT_SPEC.split(",")[0] in out and "best mapping:" in out
    assert out.count("sm-") >= 6
