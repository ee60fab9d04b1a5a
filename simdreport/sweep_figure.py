"""A sweep's figures: predicted whole-BFS time against each swept hardware knob.

One figure per knob that the sweep varied (`time_vs_<knob>.png`): a panel per graph, a line per
mapping (kernel, with its block size where the sweep sets one), x = the knob's factor on the base profile (log 2), y = predicted BFS time (median over
sources, ms; log where it spans decades). Only tasks whose profile differs from its base in that
knob alone are drawn, so a line shows one knob's effect. Profiles that change several knobs at once stay in the tables.
"""
from __future__ import annotations

import math

import pandas as pd

from matplotlib.ticker import FuncFormatter, NullFormatter

from opmachine.profile.whatif import KNOB_FIELDS

from .figures import _log_if_positive, _new, _ylabel, render


def knob_tables(whole: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per varied knob: graph, mapping, base_profile, factor, value (the figure it scales) and
    predicted_ms (median over sources), from the whole-BFS table of a sweep."""
    out: dict[str, pd.DataFrame] = {}
    if whole.empty:
        return out
    factors = whole[[f"{knob}_factor" for knob in KNOB_FIELDS]].to_numpy()
    changed = factors != 1.0
    for index, knob in enumerate(KNOB_FIELDS):
        others = changed.sum(axis=1) - changed[:, index]
        keep = others == 0
        if not changed[keep, index].any():
            continue
        rows = whole.loc[keep].assign(factor=factors[keep, index], value=whole.loc[keep, KNOB_FIELDS[knob]])
        table = (rows.groupby(["graph_label", "mapping", "base_profile", "factor", "value"], sort=False)
                 ["predicted_ms"].median().reset_index())
        out[knob] = table.sort_values(["graph_label", "mapping", "base_profile", "factor"], kind="stable")
    return out


AXES = {"l2": ("L2 capacity", lambda v: f"{v / 2**20:g} MiB"),
        "dram": ("DRAM bandwidth", lambda v: f"{v:g} GB/s"),
        "l2bw": ("L2 bandwidth", lambda v: f"{v:g} GB/s"),
        "sms": ("SM count", lambda v: f"{v:g} SMs"),
        "launch": ("launch overhead", lambda v: f"{v / 1000:g} us")}
"""Per knob: its name on the axis and how its base value is written."""


def sweep_figures(whole: pd.DataFrame) -> dict[str, bytes]:
    """{'time_vs_<knob>': PNG bytes} for every knob the sweep varied."""
    return {f"time_vs_{knob}": render(_knob_figure(table, knob)) for knob, table in knob_tables(whole).items()}


def _knob_figure(table: pd.DataFrame, knob: str):
    graphs = list(dict.fromkeys(table["graph_label"]))
    cols = min(3, len(graphs))
    rows = math.ceil(len(graphs) / cols)
    width = max(3.4 * cols + 0.6, 7.2)  # room for the title, axis label and legend with one panel
    figure, axes = _new((width, 2.8 * rows + 0.8), rows=rows, cols=cols)
    bases = list(dict.fromkeys(table["base_profile"]))
    name, written = AXES[knob]
    at_base = table.loc[table["factor"] == 1.0].drop_duplicates("base_profile")
    base_values = ", ".join(f"{written(v)}" + (f" ({b})" if len(bases) > 1 else "")
                            for b, v in zip(at_base["base_profile"], at_base["value"], strict=True)) or "value"
    for ax, graph in zip(axes.flat, graphs, strict=False):
        for (mapping, base), line in table.loc[table["graph_label"] == graph].groupby(["mapping", "base_profile"],
                                                                                      sort=False):
            label = mapping if len(bases) == 1 else f"{mapping} ({base})"
            ax.plot(line["factor"], line["predicted_ms"], marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"x{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        log = _log_if_positive(ax, table.loc[table["graph_label"] == graph, "predicted_ms"])
        ax.set_title(graph, fontsize=9)
        ax.set_xlabel(f"{name}, x the base's {base_values}", fontsize=8)
        _ylabel(ax, "predicted BFS time (ms)", log)
        ax.yaxis.label.set_fontsize(8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", alpha=0.3)
    for ax in list(axes.flat)[len(graphs):]:
        ax.set_visible(False)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncol=min(len(labels), 6), fontsize=7, frameon=False)
    figure.suptitle(f"Predicted BFS time against {name} (base {', '.join(bases)}; median over sources)", fontsize=10)
    return figure
