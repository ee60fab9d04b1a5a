"""The report's figures, each drawn from one tidy table that holds every number it plots.

Drawn with matplotlib's object API (`matplotlib.figure.Figure`, Agg canvas), never pyplot, so
building a report leaves a caller's backend and global state alone. Sizes that span decades are on
log axes; every axis names its quantity and unit. The figures follow the seeds: frontier sizes per
level (seed 000 Fig. 2), out-degree boxplots (Fig. 3), UA / UR / idle / ME per mapping (Fig. 6),
jobs per round and visits per job by server (seed 003 Figs. 9 and 8), DRAM row-buffer misses by
server (Fig. 10), MLP per launch (Fig. 11), predicted against measured time per round (Fig. 7),
seed 004's instruction-only CTE analysis (§4.2) beside both, and from committed GPU runs seed 001's
redundant expansion (Fig. 7: a two-phase BFS's edge queues against the logical edge frontiers) and
its couplings' traversal rates (Fig. 10).
"""
from __future__ import annotations

import io
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from opmachine import SERVERS
from simdmodel.errors import InputError

DPI = 110
WIDE = (7.2, 3.7)
LANE_COLORS = {"me": "#2e7d32", "ua": "#64b5f6", "ur": "#fb8c00", "idle": "#9e9e9e"}
LANE_NAMES = {"me": "useful (ME)", "ua": "UA (intra-group)", "ur": "UR (inter-group)", "idle": "idle lanes"}
SERVER_COLORS = dict(zip(SERVERS, ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")))
SERVER_LINES = {"ANI": {}, "NF1": {"linestyle": "--"}, "ERL": {}, "EDL": {"linewidth": 3.5, "alpha": 0.5},
                "NF2": {"linestyle": "--"}, "OP": {}}
"""EDL and NF2 (and ANI and NF1) often run the same number of jobs; a wide pale line under a dashed
one keeps both visible where they coincide."""
MEMORY_COLORS = {"L2H": "#1f77b4", "RBH": "#2ca02c", "RBM": "#d62728", "DRAM": "#9467bd", "L2S": "#17becf",
                 "L2A": "#bcbd22", "L2W": "#8c564b", "ISSUE": "#e377c2", "ALU": "#ffbb78", "SHM": "#98df8a",
                 "latency": "#ff7f0e", "none": "#7f7f7f"}
MEMORY_NAMES = {"L2H": "L2 hits", "RBH": "DRAM row-buffer hits", "RBM": "DRAM row-buffer misses",
                "DRAM": "DRAM", "L2S": "one hot L2 sector", "L2A": "atomics on one word",
                "L2W": "bitmask lookups that store back", "ISSUE": "instruction issue", "ALU": "the ALU pipe",
                "SHM": "shared memory", "latency": "latency (the last warps)",
                "none": "no memory job"}


@dataclass(frozen=True)
class ReportFigure:
    """A drawn figure: `key` names its file (figures/KEY.png), `table` the CSV in tables/ with its numbers."""

    key: str
    title: str
    caption: str
    table: str
    png: bytes


def render(figure: Figure) -> bytes:
    """PNG bytes of `figure`."""
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def _new(size=WIDE, rows: int = 1, cols: int = 1, **kw):
    figure = Figure(figsize=size, layout="constrained")
    axes = figure.subplots(rows, cols, squeeze=False, **kw)
    return figure, axes


def _log_if_positive(ax, values, decades: float = 1.3) -> bool:
    """Log y axis when the positive values span more than `decades` decades; returns whether it did."""
    values = np.asarray(values, dtype=np.float64)
    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size and np.log10(positive.max() / positive.min()) > decades:
        ax.set_yscale("log")
        return True
    ax.set_ylim(bottom=0)
    return False


def _ylabel(ax, text: str, log: bool) -> None:
    ax.set_ylabel(f"{text}, log scale" if log else text)


def _title(figure: Figure, text: str) -> None:
    figure.suptitle(text, fontsize=10.5)


def _marker(points: int) -> dict:
    """Markers on short series (a few BFS rounds), plain lines on deep ones."""
    return {"marker": "o", "markersize": 3.5} if points <= 40 else {}


def _round_axis(ax, levels) -> None:
    ax.set_xlabel("BFS round (level)")
    levels = np.asarray(levels)
    if levels.size and levels.max() <= 20:
        ax.set_xticks(np.arange(0, levels.max() + 1, 1 if levels.max() <= 12 else 2))
    ax.grid(True, which="major", alpha=0.3)


def frontier_figure(frontiers: pd.DataFrame, label: str, source: int) -> Figure:
    """Vertex- and edge-frontier size per level from one source (seed 000 Fig. 2)."""
    figure, axes = _new()
    ax = axes[0, 0]
    style = _marker(len(frontiers))
    ax.plot(frontiers["level"], frontiers["vertices"], label="vertex frontier (vertices)", color="#1f77b4", **style)
    ax.plot(frontiers["level"], frontiers["edges"], label="edge frontier (edges)", color="#d62728", **style)
    _ylabel(ax, "frontier size (count)", _log_if_positive(ax, frontiers[["vertices", "edges"]].to_numpy()))
    _round_axis(ax, frontiers["level"])
    _title(figure, f"{label}: concurrency per BFS level (source {source})")
    ax.legend(loc="best", fontsize=8)
    return figure


def degree_figure(degrees: pd.DataFrame) -> Figure:
    """Out-degree distribution per graph as boxplots: whiskers at min and max, box at the quartiles,
    line at the median, x at the mean (seed 000 Fig. 3)."""
    figure, axes = _new((max(6.0, 0.75 * len(degrees) + 2.5), 4.0))
    ax = axes[0, 0]
    stats = [{"label": row.graph, "whislo": row.degree_min, "q1": row.degree_q1, "med": row.degree_median,
              "q3": row.degree_q3, "whishi": row.degree_max, "mean": row.degree_mean, "fliers": []}
             for row in degrees.itertuples()]
    ax.bxp(stats, showmeans=True, meanprops={"marker": "x", "markeredgecolor": "#d62728", "markersize": 7},
           medianprops={"color": "#1f77b4", "linewidth": 2}, widths=0.6)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel("out-degree (edges per vertex, symlog)")
    _title(figure, "Out-degree distribution across the report's graphs")
    ax.tick_params(axis="x", labelrotation=30)
    for tick in ax.get_xticklabels():
        tick.set_horizontalalignment("right")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(handles=[Line2D([], [], color="#1f77b4", linewidth=2, label="median"),
                       Line2D([], [], color="#d62728", marker="x", linestyle="", label="mean"),
                       Patch(facecolor="white", edgecolor="black", label="quartiles (box)"),
                       Line2D([], [], color="black", label="min and max (whiskers)")],
              fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return figure


def redundant_expansion_figure(levels: pd.DataFrame) -> Figure:
    """One panel per graph: the edge queue each two-phase contraction read, per level and lookup mode,
    beside the logical edge frontier; a mode whose queue overflowed is named in the panel (seed 001
    Fig. 7; `queue_levels_measured`)."""
    graphs = list(dict.fromkeys(levels["graph"]))
    kernels = [k for k in dict.fromkeys(levels["kernel"]) if k != "two-phase"]
    cols = min(3, max(1, len(graphs)))
    rows = -(-len(graphs) // cols)
    figure, axes = _new((3.2 * cols + 1.6, 2.5 * rows + 0.9), rows, cols)
    palette = ("#d62728", "#ff7f0e", "#9467bd", "#1f77b4", "#8c564b")
    colors = {kernel: palette[k % len(palette)] for k, kernel in enumerate(kernels)}
    for k, ax in enumerate(axes.flat):
        if k >= len(graphs):
            ax.set_visible(False)
            continue
        mine = levels[levels["graph"] == graphs[k]]
        logical = mine[mine["kernel"] == "two-phase"]
        ax.plot(logical["level"], logical["logical_edges"], color="#7f7f7f", linewidth=3, alpha=0.5)
        for kernel in kernels:
            rows_of = mine[(mine["kernel"] == kernel) & ~mine["overflow"].astype(bool)]
            ax.plot(rows_of["level"], rows_of["edge_queue"], color=colors[kernel], **_marker(len(rows_of)))
        over = mine[mine["overflow"].astype(bool)]["kernel"].tolist()
        if over:
            ax.text(0.02, 0.96, "overflow:\n" + "\n".join(over), transform=ax.transAxes, fontsize=7, va="top",
                    color="#d62728")
        ax.set_yscale("log")
        ax.set_title(re.sub(r",stencil=5|,seed=\d+", "", graphs[k]), fontsize=9)
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("ids (log)")
    for ax in axes[-1, :]:
        ax.set_xlabel("BFS level")
    handles = [Line2D([], [], color="#7f7f7f", linewidth=3, alpha=0.5, label="logical edge frontier")] + [
        Line2D([], [], color=color, label=f"{kernel} edge queue") for kernel, color in colors.items()]
    figure.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=min(4, len(handles)))
    _title(figure, "Redundant expansion: a two-phase BFS's edge queues against the logical edge frontiers")
    return figure


def couplings_figure(table: pd.DataFrame) -> Figure:
    """Seed 001 Fig. 10 from a committed GPU run (`couplings_table`): per graph, each coupling's GTEPS over
    expand-contract's, measured (left) and predicted (right, where the run was predicted), the GTEPS printed
    above each bar."""
    graphs = list(dict.fromkeys(table["graph"]))
    kernels = list(dict.fromkeys(table["kernel"]))
    panels = [("measured", "gteps", "vs_expand_contract")]
    if table["predicted_gteps"].notna().any():
        panels.append(("predicted", "predicted_gteps", "predicted_vs_expand_contract"))
    figure, axes = _new((max(6.5, 1.3 * len(graphs) + 2.5) * len(panels) * 0.75 + 1.0, 4.0), cols=len(panels),
                        sharey=True)
    x = np.arange(len(graphs))
    width = 0.8 / max(len(kernels), 1)
    colors = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b")
    short = [re.sub(r",(a|b|c)=0\.\d+|,stencil=5|,seed=\d+", "", g) for g in graphs]  # the generators' defaults
    for ax, (name, gteps, ratio) in zip(axes[0], panels):
        for k, kernel in enumerate(kernels):
            rows = table[table["kernel"] == kernel].set_index("graph").reindex(graphs)
            bars = ax.bar(x + (k - (len(kernels) - 1) / 2) * width, rows[ratio].to_numpy(dtype=np.float64), width,
                          color=colors[k % len(colors)], label=kernel)
            for bar, value in zip(bars, rows[gteps]):
                if value == value:
                    ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{value:.3g}", ha="center",
                            va="bottom", fontsize=6, rotation=90)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(name, fontsize=9)
        ax.set_xticks(x, short, rotation=25, ha="right", fontsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    axes[0, 0].set_ylabel("GTEPS / expand-contract's")
    axes[0, -1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _title(figure, f"Seed 001's couplings on {table['device'].iloc[0]}: measured and predicted (GTEPS above each bar)")
    return figure


def gpu_cpu_figure(summary: pd.DataFrame, gpu: str, cpu: str) -> Figure:
    """Predicted whole-BFS time per graph: the GPU's pick beside the CPU's serial and multi-threaded BFS
    (the summary's columns), log scale: which machine to use for which graph."""
    figure, axes = _new((max(6.0, 0.8 * len(summary) + 2.5), 4.0))
    ax = axes[0, 0]
    x = np.arange(len(summary))
    threads = int(summary["cpu_threads"].max()) if len(summary) else 0
    bars = [(f"GPU {gpu}, the pick", summary["predicted_bfs_ms"], "#1f77b4"),
            (f"CPU {cpu}, serial", summary["cpu_serial_ms"], "#ff7f0e")]
    if threads:
        bars.append((f"CPU {cpu}, {threads} threads", summary["cpu_threads_ms"], "#2ca02c"))
    width = 0.8 / len(bars)
    for k, (name, values, color) in enumerate(bars):
        ax.bar(x + (k - (len(bars) - 1) / 2) * width, values.to_numpy(dtype=np.float64), width, color=color, label=name)
    ax.set_yscale("log")
    ax.set_ylabel("predicted BFS time (ms, log)")
    ax.set_xticks(x, summary["graph"], rotation=30, ha="right")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _title(figure, "GPU or CPU: predicted time of one BFS per graph")
    return figure


def lanes_figure(lanes: pd.DataFrame, label: str, best: str) -> Figure:
    """Share of lane slots that are useful (ME), UA, UR and idle per mapping, over all levels and
    sources (seed 000 Fig. 6); the mapping with the highest ME is starred."""
    figure, axes = _new()
    ax = axes[0, 0]
    x = np.arange(len(lanes))
    bottom = np.zeros(len(lanes))
    for rate in ("me", "ua", "ur", "idle"):
        values = lanes[rate].fillna(0).to_numpy(dtype=np.float64)
        ax.bar(x, values, bottom=bottom, color=LANE_COLORS[rate], label=LANE_NAMES[rate], width=0.7)
        bottom += values
    for i, me in enumerate(lanes["me"].to_numpy(dtype=np.float64)):
        if np.isfinite(me):
            ax.text(i, min(me, 0.97) / 2, f"{me:.2f}", ha="center", va="center", fontsize=7.5, color="white",
                    rotation=90 if len(lanes) > 10 else 0)
    names = [f"{m} *" if m == best else m for m in lanes["mapping"]]
    ax.set_xticks(x, names)
    ax.set_ylim(0, 1)
    ax.set_ylabel("fraction of lane slots")
    ax.set_xlabel("work mapping (sm-S: S lanes per vertex; ws: warp segmentation; scan: CTA scan gathering)")
    _title(figure, f"{label}: where the SIMD lanes go (* = highest ME)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return figure


def ranking_figure(ranked: pd.DataFrame, label: str, gpu: str) -> Figure:
    """Predicted whole-BFS time of every mapping (rows of tables/recommendation.csv), fastest on top,
    each bar coloured by the bottleneck of most of its time and labelled with its ME; the pick starred."""
    figure, axes = _new()
    ax = axes[0, 0]
    ranked = ranked.sort_values("rank", kind="stable")
    times = ranked["predicted_bfs_ms"].to_numpy(dtype=np.float64)
    y = np.arange(len(ranked))[::-1]
    ax.barh(y, times, color=[MEMORY_COLORS.get(b, "#7f7f7f") for b in ranked["bottleneck"]], height=0.7)
    positive = times[np.isfinite(times) & (times > 0)]
    log = bool(positive.size) and np.log10(positive.max() / positive.min()) > 1.3
    if log:
        ax.set_xscale("log")
    for yi, t, me in zip(y, times, ranked["me"].to_numpy(dtype=np.float64)):
        if np.isfinite(t) and t > 0:
            ax.text(t, yi, f" ME {me:.2f}" if np.isfinite(me) else "", va="center", fontsize=7.5)
    names = [f"{m} *" if r == 1 else m for m, r in zip(ranked["mapping"], ranked["rank"])]
    ax.set_yticks(y, names)
    ax.set_xlabel("predicted BFS time (ms)" + (", log scale" if log else ""))
    if len(times) and np.isfinite(times).any():
        ax.set_xlim(right=float(np.nanmax(times)) * (3.0 if log else 1.25))
    _title(figure, f"{label}: predicted BFS time per mapping on {gpu} (* = pick)")
    present = [b for b in MEMORY_COLORS if b in set(ranked["bottleneck"])]
    ax.legend(handles=[Patch(color=MEMORY_COLORS[b], label=MEMORY_NAMES[b]) for b in present], loc="upper left",
              bbox_to_anchor=(1.0, 1.0), fontsize=8, title="bottleneck", title_fontsize=8)
    return figure


def me_levels_figure(per_level: pd.DataFrame, label: str) -> Figure:
    """ME per level for the chosen mappings (lines), over all sources."""
    figure, axes = _new()
    ax = axes[0, 0]
    styles = ({"linewidth": 3.5, "alpha": 0.45}, {"linestyle": "--"}, {"linestyle": ":", "linewidth": 1.8})
    for i, (mapping, rows) in enumerate(per_level.groupby("mapping", sort=False)):
        ax.plot(rows["level"], rows["me"], label=mapping, color=f"C{i}", **{**_marker(len(rows)), **styles[i % 3]})
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("mapping efficiency ME (useful / lane slots)")
    _round_axis(ax, per_level["level"])
    _title(figure, f"{label}: ME per level of the best mappings")
    ax.legend(loc="lower left", fontsize=8, ncols=3)
    return figure


def _server_lines(ax, server_rounds: pd.DataFrame, column: str, positive_only: bool = False) -> None:
    """One line per operator-machine server of `column` against the round (zeros dropped if asked,
    so a log axis skips them)."""
    for server in SERVERS:
        rows = server_rounds[server_rounds["server"] == server]
        values = rows[column].to_numpy(dtype=np.float64)
        if positive_only:
            values = np.where(values > 0, values, np.nan)
        ax.plot(rows["level"], values, label=server, color=SERVER_COLORS[server],
                **{**_marker(len(rows)), **SERVER_LINES[server]})


def jobs_figure(server_rounds: pd.DataFrame, label: str, kernel: str) -> Figure:
    """Jobs (warp-level memory instructions) per round by server (seed 003 Fig. 9)."""
    figure, axes = _new()
    ax = axes[0, 0]
    _server_lines(ax, server_rounds, "jobs", positive_only=True)
    _ylabel(ax, "jobs per round (warp instructions)", _log_if_positive(ax, server_rounds["jobs"]))
    _round_axis(ax, server_rounds["level"])
    _title(figure, f"{label}: jobs per round by server, kernel {kernel}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="server", title_fontsize=8)
    return figure


def visits_figure(server_rounds: pd.DataFrame, label: str, kernel: str) -> Figure:
    """L2 sectors per job by server and round: the visits per job of seed 003 Fig. 8."""
    figure, axes = _new()
    ax = axes[0, 0]
    _server_lines(ax, server_rounds, "sectors_per_job")
    top = np.nanmax(server_rounds["sectors_per_job"].to_numpy(dtype=np.float64), initial=1.0)
    ax.set_ylim(0, max(4.0, top * 1.08))
    ax.set_ylabel("visits per job (32-byte L2 sectors)")
    _round_axis(ax, server_rounds["level"])
    _title(figure, f"{label}: sectors per warp instruction by server, kernel {kernel}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="server", title_fontsize=8)
    return figure


def dram_figure(server_rounds: pd.DataFrame, label: str, kernel: str) -> Figure:
    """DRAM sectors per round split into row-buffer hits and misses (top), and each server's share of
    the row-buffer misses (bottom; seed 003 Fig. 10)."""
    figure, axes = _new((7.2, 5.2), rows=2, sharex=True)
    top, bottom = axes[0, 0], axes[1, 0]
    totals = server_rounds.groupby("level", sort=True)[["row_hits", "row_misses"]].sum()
    style = _marker(len(totals))
    for column, name in (("row_misses", "RBM"), ("row_hits", "RBH")):
        values = totals[column].to_numpy(dtype=np.float64)
        top.plot(totals.index, np.where(values > 0, values, np.nan), color=MEMORY_COLORS[name],
                 label=MEMORY_NAMES[name], **style)
    _ylabel(top, "DRAM sectors per round", _log_if_positive(top, totals.to_numpy()))
    top.grid(True, alpha=0.3)
    top.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    _title(figure, f"{label}: DRAM sectors per round and the servers behind row misses, kernel {kernel}")
    shares = server_rounds.pivot(index="level", columns="server", values="row_miss_share").reindex(
        columns=list(SERVERS)).fillna(0.0)
    bottom.stackplot(shares.index, *(shares[s].to_numpy() for s in SERVERS), colors=[SERVER_COLORS[s] for s in SERVERS],
                     labels=list(SERVERS), step="mid" if len(shares) <= 40 else None, alpha=0.9)
    bottom.set_ylim(0, 1)
    bottom.set_ylabel("share of row-buffer misses")
    _round_axis(bottom, shares.index)
    bottom.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="server", title_fontsize=8)
    return figure


def mlp_figure(launches: pd.DataFrame, label: str, kernel: str, saturation_mlp: float | None) -> Figure:
    """Memory-level parallelism per launch at L2 and DRAM, m_i = V_i x n (seed 003 Fig. 11); the dashed
    line is the MLP that would keep DRAM busy at full bandwidth (bandwidth x unloaded latency / sector)."""
    figure, axes = _new()
    ax = axes[0, 0]
    phases = list(dict.fromkeys(launches["phase"]))
    styles = {"expand": "-", "topo": "-", "compact": ":"}
    columns = [("mlp_l2h", "L2H"), ("mlp_rbh", "RBH"), ("mlp_rbm", "RBM")]
    if launches[["mlp_rbh", "mlp_rbm"]].fillna(0).to_numpy().sum() == 0 and launches["mlp_dram"].fillna(0).sum() > 0:
        columns = [("mlp_l2h", "L2H"), ("mlp_dram", "DRAM")]
    for phase in phases:
        rows = launches[launches["phase"] == phase]
        for column, server in columns:
            values = rows[column].to_numpy(dtype=np.float64)
            ax.plot(rows["level"], np.where(values > 0, values, np.nan), linestyle=styles.get(phase, "-"),
                    color=MEMORY_COLORS[server], label=f"{MEMORY_NAMES[server]} ({phase})", **_marker(len(rows)))
    if saturation_mlp:
        ax.axhline(saturation_mlp, color="black", linestyle="--", linewidth=1,
                   label=f"MLP for full DRAM bandwidth ({saturation_mlp:,.0f})")
    values = launches[[c for c, _ in columns]].to_numpy(dtype=np.float64)
    if saturation_mlp:
        values = np.append(values, saturation_mlp)
    _ylabel(ax, "requests in flight (MLP)", _log_if_positive(ax, values))
    _round_axis(ax, launches["level"])
    _title(figure, f"{label}: memory-level parallelism per launch, kernel {kernel}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7.5)
    return figure


def time_figure(rounds: pd.DataFrame, label: str, gpu: str) -> Figure:
    """Predicted time per round of each kernel; each round's marker is coloured by the bottleneck
    (server, hot sector or latency) of its longest launch."""
    figure, axes = _new()
    ax = axes[0, 0]
    kernels = list(dict.fromkeys(rounds["kernel"]))
    line_styles = ["-", "--", ":"]
    for i, kernel in enumerate(kernels):
        rows = rounds[rounds["kernel"] == kernel]
        times_us = rows["predicted_ns"].to_numpy(dtype=np.float64) / 1e3
        ax.plot(rows["level"], times_us, color="0.2" if i == 0 else "0.55", linestyle=line_styles[i % 3],
                linewidth=1.2, label=kernel, zorder=1)
        ax.scatter(rows["level"], times_us, s=14 if len(rows) <= 60 else 3, zorder=2,
                   c=[MEMORY_COLORS.get(b, "#7f7f7f") for b in rows["bottleneck"]])
        if len(rows):
            ax.annotate(f" {kernel}", (rows["level"].iloc[-1], times_us[-1]), fontsize=8, va="center",
                        annotation_clip=False)
    _ylabel(ax, "predicted time per round (µs)", _log_if_positive(ax, rounds["predicted_ns"]))
    _round_axis(ax, rounds["level"])
    if len(rounds):
        last = float(rounds["level"].max())
        ax.set_xlim(-0.03 * max(last, 1), last + 0.1 * max(last, 1))  # room for the kernel names at the line ends
    _title(figure, f"{label}: predicted time per round on {gpu}")
    kernel_legend = ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, title="kernel",
                              title_fontsize=8)
    ax.add_artist(kernel_legend)
    present = [b for b in MEMORY_COLORS if b in set(rounds["bottleneck"])]
    ax.legend(handles=[Line2D([], [], marker="o", linestyle="", color=MEMORY_COLORS[b], label=MEMORY_NAMES[b])
                       for b in present], loc="lower left", bbox_to_anchor=(1.0, 0.0), fontsize=8,
              title="bottleneck", title_fontsize=8)
    return figure


def measured_time_figure(rounds: pd.DataFrame, errors: pd.DataFrame, label: str, device: str) -> Figure:
    """Predicted against measured time per round, one panel per kernel, with a +-20% band around the
    measurement (seed 003 Fig. 7)."""
    kernels = list(dict.fromkeys(rounds["kernel"]))
    figure, axes = _new((max(7.2, 3.8 * len(kernels)), 3.8), cols=len(kernels))
    for ax, kernel in zip(axes[0], kernels):
        rows = rounds[rounds["kernel"] == kernel]
        style = _marker(len(rows))
        ax.fill_between(rows["level"], rows["band_low_ns"] / 1e3, rows["band_high_ns"] / 1e3, color="0.8",
                        label="measured ±20%", linewidth=0)
        ax.plot(rows["level"], rows["measured_ns"] / 1e3, color="black", label=f"measured ({device})", **style)
        ax.plot(rows["level"], rows["predicted_ns"] / 1e3, color="#d62728", linestyle="--", label="predicted",
                **style)
        _ylabel(ax, "time per round (µs)", _log_if_positive(ax, rows[["measured_ns", "predicted_ns"]].to_numpy()))
        _round_axis(ax, rows["level"])
        stats = errors[errors["kernel"] == kernel] if len(errors) else errors
        if len(stats):
            row = stats.iloc[0]
            ax.set_title(f"{kernel}: MAPE {row['mape']:.0%}, r {row['pearson_r']:.2f}", fontsize=10)
        else:
            ax.set_title(kernel, fontsize=10)
        ax.legend(loc="best", fontsize=7.5)
    _title(figure, f"{label}: predicted vs measured time per round (source {int(rounds['source'].iloc[0])})")
    return figure


def measured_me_figure(me: pd.DataFrame, label: str, device: str) -> Figure:
    """Mapping efficiency from simdmodel's lane accounting beside the GPU's lane counters, per kernel."""
    figure, axes = _new()
    ax = axes[0, 0]
    x = np.arange(len(me))
    ax.bar(x - 0.2, me["me_model"], width=0.4, color="#64b5f6", label="model (simdmodel analyze)")
    ax.bar(x + 0.2, me["me_measured"], width=0.4, color="#2e7d32", label=f"measured lane counters ({device})")
    ax.set_xticks(x, me["kernel"])
    ax.set_ylim(0, 1.15)
    ax.set_ylabel("ME (useful lanes / lane slots)")
    ax.set_xlabel("kernel (expansion launches, all measured sources)")
    diff = np.nanmax(np.abs(me["me_model"].to_numpy(float) - me["me_measured"].to_numpy(float)), initial=0.0)
    _title(figure, f"{label}: predicted vs measured ME (largest difference {diff:.2g})")
    ax.legend(loc="upper left", fontsize=8, ncols=2)
    ax.grid(True, axis="y", alpha=0.3)
    return figure


CTE_COLUMNS = ("level", "kernel", "measured_ns", "predicted_ns", "cte_model_ns")


def cte_time_figure(rounds: pd.DataFrame, label: str, device: str) -> Figure:
    """Measured time per round beside our prediction (memory + instructions) and seed 004's
    instruction-only CTE analysis (`opmachine.cte`, Eqs. 4.1-4.3 as the kernel's mapping takes
    them), one panel per kernel; a `cte_model` column, if present, names the equation."""
    missing = [c for c in CTE_COLUMNS if c not in rounds.columns]
    if missing:
        raise InputError(f"per-round table lacks column(s) {', '.join(missing)}")
    if rounds.empty:
        raise InputError("per-round table has no rows")
    kernels = list(dict.fromkeys(rounds["kernel"]))
    figure, axes = _new((max(7.2, 3.8 * len(kernels)), 3.8), cols=len(kernels))
    for ax, kernel in zip(axes[0], kernels):
        rows = rounds[rounds["kernel"] == kernel].sort_values("level")
        style = _marker(len(rows))
        equation = ""
        if "cte_model" in rows.columns and rows["cte_model"].notna().any():
            equation = f", {rows['cte_model'].dropna().iloc[0]}"
        ax.plot(rows["level"], rows["measured_ns"] / 1e3, color="black", label=f"measured ({device})", **style)
        ax.plot(rows["level"], rows["predicted_ns"] / 1e3, color="#d62728", linestyle="--",
                label="predicted (memory + instructions)", **style)
        ax.plot(rows["level"], rows["cte_model_ns"] / 1e3, color="#1f77b4", linestyle=":", linewidth=1.8,
                label=f"CTE analysis (instructions only{equation})", **style)
        values = rows[["measured_ns", "predicted_ns", "cte_model_ns"]].to_numpy(dtype=np.float64)
        _ylabel(ax, "time per round (µs)", _log_if_positive(ax, values))
        _round_axis(ax, rows["level"])
        ax.set_title(kernel, fontsize=10)
        ax.legend(loc="best", fontsize=7.5)
    _title(figure, f"{label}: measured vs predicted vs seed 004's CTE analysis per round")
    return figure
