"""The answer a sweep gives per graph and hardware: which kernel is fastest, and by how much."""
from __future__ import annotations

import pandas as pd


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
