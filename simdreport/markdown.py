"""report.md: the same tables and prose as index.html, with links to the figures in figures/ beside it."""
from __future__ import annotations

import pandas as pd

from opmachine.bfs_machine import DESCRIPTIONS

from .measured import display_folder
from .tables import summary_display, time_errors_display
from .text import graph_facts, reading_guide, settings_lines


def _cell(value) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table of `frame`'s values as strings."""
    lines = ["| " + " | ".join(_cell(c) for c in frame.columns) + " |",
             "|" + "|".join("---" for _ in frame.columns) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _figures(items) -> list[str]:
    out = []
    for item in items:
        out += [f"![{item.title}](figures/{item.key}.png)", "",
                f"*{item.title}.* {item.caption} Numbers: `tables/{item.table}.csv`.", ""]
    return out


def render_markdown(report) -> str:
    """The whole report.md as a string."""
    lines = ["# simdmodel report: SIMD lane efficiency and predicted BFS time per round", ""]
    lines += [f"- {line}" for line in settings_lines(report.settings)] + ["", "## Summary", ""]
    lines += [markdown_table(summary_display(report.tables["summary"])), "", "### How to read this report", ""]
    lines += [f"- {line}" for line in reading_guide()]
    lines += ["- Operator-machine servers (seed 003 Fig. 1): "
              + "; ".join(f"**{s}** {d}" for s, d in DESCRIPTIONS.items()) + ".", ""]
    lines += _figures(report.figures["suite"])
    for data in report.graphs:
        lines += [f"## {data.label} (`{data.name}`)", "", graph_facts(data), ""]
        if data.measured_note:
            lines += [f"> {data.measured_note}", ""]
        lines += _figures(report.figures[data.label])
        if data.measured is not None and len(data.measured.time_errors):
            run = data.measured.run
            lines += [f"### Prediction beside measurement ({run.device_name}, `{display_folder(run.folder)}`)", "",
                      markdown_table(time_errors_display(data.measured.time_errors)), ""]
    return "\n".join(lines)
