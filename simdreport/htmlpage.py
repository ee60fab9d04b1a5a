"""index.html: one self-contained page (figures embedded as base64 PNG, no scripts, no external files)."""
from __future__ import annotations

import base64
import html

import pandas as pd

from opmachine.bfs_machine import DESCRIPTIONS

from .measured import display_folder
from .tables import SUMMARY_TEXT_COLUMNS, summary_display, time_errors_display
from .text import graph_facts, reading_guide, settings_lines

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0 auto; max-width: 1500px;
       padding: 1rem 2rem 3rem; color: #222; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; } h2 { margin-top: 2.4rem; border-bottom: 2px solid #ddd; }
h3 { margin-top: 1.4rem; }
table { border-collapse: collapse; font-size: 0.86rem; margin: 0.6rem 0; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; text-align: right; vertical-align: top; }
th { background: #f3f3f3; } td:first-child, th:first-child, .text { text-align: left; }
.figures { display: grid; grid-template-columns: repeat(auto-fill, minmax(600px, 1fr)); gap: 1.2rem; }
.figures.wide { grid-template-columns: 1fr; }
figure { margin: 0; padding: 0.5rem; border: 1px solid #e4e4e4; border-radius: 4px; background: #fff; }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; }
figcaption { font-size: 0.82rem; color: #444; margin-top: 0.3rem; }
.note { background: #fff8e1; border-left: 4px solid #f0b400; padding: 0.4rem 0.8rem; font-size: 0.9rem; }
.settings { font-size: 0.9rem; } nav a { margin-right: 0.8rem; } code { font-size: 0.88em; }
table.summary { font-size: 0.8rem; } table.summary th, table.summary td { padding: 0.2rem 0.3rem; }
table.summary td.text { min-width: 4.5rem; } table.summary td:first-child { overflow-wrap: anywhere; }
"""


def _table(frame: pd.DataFrame, text_columns=(), css: str | None = None) -> str:
    text = ' class="text"'
    head = "".join(f"<th{text if c in text_columns else ''}>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for row in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, row):
            cells.append(f"<td{text if column in text_columns else ''}>{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    klass = f' class="{css}"' if css else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure(item) -> str:
    data = base64.b64encode(item.png).decode("ascii")
    return (f'<figure id="{html.escape(item.key)}"><img src="data:image/png;base64,{data}" '
            f'alt="{html.escape(item.title)}"><figcaption><b>{html.escape(item.title)}.</b> '
            f'{html.escape(item.caption)} Numbers: <code>tables/{html.escape(item.table)}.csv</code>.</figcaption>'
            f'</figure>')


def render_html(report) -> str:
    """The whole page as a string."""
    settings = report.settings
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>simdmodel report: SIMD efficiency and predicted BFS time</title>",
             f"<style>{STYLE}</style></head><body>",
             "<h1>simdmodel report: SIMD lane efficiency and predicted BFS time per round</h1>",
             '<ul class="settings">' + "".join(f"<li>{html.escape(line)}</li>" for line in settings_lines(settings))
             + "</ul>"]
    nav = " ".join(f'<a href="#graph-{i}">{html.escape(d.label)}</a>' for i, d in enumerate(report.graphs, 1))
    parts.append(f"<nav>Graphs: {nav}</nav>")
    parts.append("<h2 id=\"summary\">Summary</h2>")
    parts.append(_table(summary_display(report.tables["summary"]), text_columns=SUMMARY_TEXT_COLUMNS,
                        css="summary"))
    parts.append("<details open><summary>How to read this report</summary><ul>"
                 + "".join(f"<li>{html.escape(line)}</li>" for line in reading_guide())
                 + "<li>Operator-machine servers (seed 003 Fig. 1): "
                 + "; ".join(f"<b>{s}</b> {html.escape(d)}" for s, d in DESCRIPTIONS.items()) + ".</li></ul></details>")
    parts.append('<div class="figures wide">' + "".join(_figure(f) for f in report.figures["suite"]) + "</div>")
    for i, data in enumerate(report.graphs, 1):
        parts.append(f'<h2 id="graph-{i}">{html.escape(data.label)} <small><code>{html.escape(data.name)}</code>'
                     "</small></h2>")
        parts.append("<p>" + html.escape(graph_facts(data)) + "</p>")
        if data.measured_note:
            parts.append(f'<p class="note">{html.escape(data.measured_note)}</p>')
        parts.append('<div class="figures">' + "".join(_figure(f) for f in report.figures[data.label]) + "</div>")
        if data.measured is not None and len(data.measured.time_errors):
            run = data.measured.run
            parts.append(f"<h3>Prediction beside measurement ({html.escape(run.device_name)}, "
                         f"<code>{html.escape(display_folder(run.folder))}</code>)</h3>")
            parts.append(_table(time_errors_display(data.measured.time_errors)))
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
