"""The report as a person sees it: index.html in headless Chromium (Debian's `chromium`, driven by
Playwright without a browser download of its own) loads with no console errors and shows every
figure at a non-zero size. The full-page screenshot is kept in test-artifacts/report.png (ignored
by git) for a person to look at."""
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest
from shared_graphs import SHARED, needs_shared
from synthetic_measured import write_measured_folder

from simdreport.cli import main

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _skip_or_fail(reason: str):
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; .ci/run installs it, so CI must have it")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser_context(tmp_path_factory):
    executable = chromium_path()
    if executable is None:
        _skip_or_fail("needs Debian's chromium (apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _skip_or_fail("needs the playwright package (pip install '.[test]')")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=executable, headless=True, args=CHROMIUM_FLAGS,
            viewport={"width": 1400, "height": 1000})
        yield context
        context.close()


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    measured = base / "measured"
    write_measured_folder(measured, "rmat:scale=8,ef=4")
    out = base / "report"
    code = main(["report", "rmat:scale=8,ef=4", "mesh6:side=16", "--sources", "3", "--measured", str(measured),
                 "--out", str(out), "--quiet"])
    assert code == 0
    return out


def test_page_loads_cleanly_and_every_figure_renders(browser_context, report_dir):
    check_page(browser_context, report_dir, "report.png")


def check_page(browser_context, report_dir, screenshot: str):
    """index.html loads with no console problem, every figure of figures/ renders, screenshot kept."""
    page = browser_context.new_page()
    problems = []
    page.on("console", lambda message: problems.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
    response = page.goto((report_dir / "index.html").as_uri(), wait_until="load")
    assert response is None or response.ok
    figures = page.evaluate("""() => [...document.querySelectorAll('figure img, figure svg')].map(e => {
        const box = e.getBoundingClientRect();
        return {key: e.closest('figure').id, tag: e.tagName, complete: e.complete === undefined ? true : e.complete,
                natural: e.naturalWidth === undefined ? box.width : e.naturalWidth, width: box.width,
                height: box.height};
    })""")
    expected = sorted(p.stem for p in (report_dir / "figures").iterdir())
    assert sorted(f["key"] for f in figures) == expected
    for figure in figures:
        assert figure["complete"] and figure["natural"] > 0, figure
        assert figure["width"] > 100 and figure["height"] > 50, figure
    assert page.title().startswith("simdmodel report")
    assert page.locator("table").first.is_visible()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / screenshot), full_page=True)
    assert (ARTIFACTS / screenshot).stat().st_size > 10_000
    assert problems == []
    page.close()


def test_the_page_fits_an_800_pixel_window(browser_context, report_dir):
    page = browser_context.new_page()
    page.set_viewport_size({"width": 800, "height": 900})
    page.goto((report_dir / "index.html").as_uri(), wait_until="load")
    assert page.evaluate("document.documentElement.scrollWidth") <= 800
    box = page.locator("table.summary").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 800
    page.close()


REAL_SUBSET = ("graphtool_power.el.gz", "snap_email-Eu-core.txt.gz", "snap_wiki-Vote.txt.gz")


@needs_shared
def test_a_real_graph_report_renders_beside_its_committed_measurements(browser_context, tmp_path):
    # three of the real suite's graphs, loaded as its manifest says, each with its H200 measurement
    import tomllib

    from simdreport.manifest import SUITES

    entries = [e for e in tomllib.loads(SUITES["real"].read_text())["graph"] if e["file"] in REAL_SUBSET]
    lines = []
    for entry in entries:
        lines.append("[[graph]]")
        lines += [f"{key} = {json.dumps(value)}" for key, value in entry.items()]
    manifest = tmp_path / "three.toml"
    manifest.write_text("\n".join(lines) + "\n")
    out = tmp_path / "report"
    assert main(["report", "--graphs-dir", str(SHARED), "--manifest", str(manifest), "--sources", "3",
                 "--out", str(out), "--quiet"]) == 0
    check_page(browser_context, out, "report-real.png")
    measured = pd.read_csv(out / "tables" / "measured_time_errors.csv")
    assert set(measured["graph"]) == {e["label"] for e in entries}  # the report names graphs by label
    summary = pd.read_csv(out / "tables" / "summary.csv")
    assert summary["n"].tolist() == [e["n"] for e in entries]
    assert f"Graphs: the files of {SHARED.name}/ as the manifest {manifest.name} describes them." in (out / "report.md").read_text()
