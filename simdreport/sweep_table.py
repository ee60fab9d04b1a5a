"""A sweep's tables: the whole BFS of each task, and per graph and hardware which mapping is
fastest and by how much."""
from __future__ import annotations

import pandas as pd

from .sweep_task import IDENTITY_COLUMNS


def whole_bfs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per task: its inputs, the whole-BFS predicted time (ms), levels, launches, and the
    bottleneck that holds the most of the predicted time."""
    if rows.empty:
        return pd.DataFrame()
    sums = rows.groupby("task_id", sort=False).agg(predicted_ns=("predicted_ns", "sum"), levels=("level", "size"),
                                                   launches=("launches", "sum"))
    by_server = rows.groupby(["task_id", "bottleneck"], sort=False)["predicted_ns"].sum().reset_index()
    top = by_server.loc[by_server.groupby("task_id", sort=False)["predicted_ns"].idxmax(), ["task_id", "bottleneck"]]
    first = rows.drop_duplicates("task_id")[list(IDENTITY_COLUMNS)]
    out = first.merge(sums, left_on="task_id", right_index=True).merge(top, on="task_id")
    out["predicted_ms"] = out.pop("predicted_ns") / 1e6
    return out.reset_index(drop=True)


def fastest_table(whole: pd.DataFrame) -> pd.DataFrame:
    """One row per graph and profile: the mapping (kernel, and block size where the sweep set one)
    with the lowest predicted BFS time (median over sources), that time, the runner-up and its margin, and the change of the fastest time against
    the base profile's fastest (NaN where the base profile is not in the sweep)."""
    if whole.empty:
        return pd.DataFrame(columns=["graph", "profile", "fastest", "predicted_ms", "runner_up", "margin",
                                     "vs_base"])
    times = (whole.groupby(["graph_label", "base_profile", "profile", "mapping"], sort=False)["predicted_ms"]
             .median().reset_index())
    rows = []
    for (graph, base, profile), group in times.groupby(["graph_label", "base_profile", "profile"], sort=False):
        ranked = group.sort_values("predicted_ms", kind="stable")
        best = ranked.iloc[0]
        second = ranked.iloc[1] if len(ranked) > 1 else None
        rows.append({"graph": graph, "base_profile": base, "profile": profile, "fastest": best["mapping"],
                     "predicted_ms": best["predicted_ms"],
                     "runner_up": second["mapping"] if second is not None else "",
                     "margin": (second["predicted_ms"] / best["predicted_ms"] - 1 if second is not None
                                else float("nan"))})
    out = pd.DataFrame(rows)
    base_best = out.loc[out["profile"] == out["base_profile"]].set_index(["graph", "base_profile"])["predicted_ms"]
    at_base = pd.MultiIndex.from_frame(out[["graph", "base_profile"]]).map(base_best.to_dict())
    out["vs_base"] = out["predicted_ms"].to_numpy() / pd.to_numeric(pd.Series(at_base), errors="coerce").to_numpy() - 1
    return out.drop(columns="base_profile")


def render_fastest(table: pd.DataFrame) -> str:
    """The fastest-kernel table as text: times in ms, margins and changes in percent."""
    shown = table.assign(predicted_ms=table["predicted_ms"].map(lambda v: f"{v:.4g}"),
                         margin=table["margin"].map(lambda v: "" if pd.isna(v) else f"+{100 * v:.1f}%"),
                         vs_base=table["vs_base"].map(lambda v: "" if pd.isna(v) else f"{100 * v:+.1f}%"))
    return shown.to_string(index=False) + "\n"
