"""Which mapping to use: every kernel ranked by its predicted BFS time, per whole BFS and per level.

The answer a user acts on is the fastest mapping on their GPU, not the one that wastes the fewest
lanes: a mapping with a high ME can still lose to one whose warps wait less on memory (seed 003's
point). `rank_mappings` predicts a whole BFS from each source with every candidate kernel (`topo`
and every registered strategy at its default parameters, so a strategy registered later competes
too), on one profile and one time model, ranks them by predicted time (mean over the sources; ties
keep the candidates' order), and sets beside each its lane accounting over the same BFS runs (ME,
UA, UR, idle: seed 000) and the server that bounds most of its time. `Ranking.why()` says in one
sentence which waste the pick avoids against the runner-up and which server bounds it;
`Ranking.level_picks()` gives the fastest mapping of every level and what a level-adaptive kernel
would gain over the single pick.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from simdmodel.algorithms import BFS
from simdmodel.lanes import add_rates, lane_degrees
from simdmodel.strategies import LANE_FIELDS, STRATEGIES, mappings
from simdmodel.topology import topology_lanes

from .kernels import TOPO, parse_kernel
from .predict import SharedCompactions, predict_bfs

WASTES = {"ua": "intra-group waste (UA)", "ur": "inter-group waste (UR)", "idle": "idle lanes"}
MAPPING_COLUMNS = ["rank", "mapping", "predicted_ns", "vs_best", "me", "ua", "ur", "idle", "bottleneck",
                   "bottleneck_share"]
LEVEL_COLUMNS = ["source", "level", "mapping", "predicted_ns", "rank"]


def candidate_kernels() -> list[str]:
    """`topo` and every registered strategy's mappings at their default parameters (sm-1 .. sm-32, ws, scan)."""
    return [TOPO, *(m.label for m in mappings(tuple(STRATEGIES)))]


@dataclass(frozen=True, eq=False)
class Ranking:
    """Candidate kernels ranked by predicted BFS time on one profile (see the module docstring)."""

    graph_name: str
    n: int
    m: int
    sources: tuple[int, ...]
    settings: dict
    mappings: pd.DataFrame = field(repr=False)
    """One row per candidate, fastest first: MAPPING_COLUMNS (predicted_ns: mean whole-BFS time over
    the sources; vs_best: predicted_ns / the pick's)."""
    levels: pd.DataFrame = field(repr=False)
    """One row per (source, level, candidate): LEVEL_COLUMNS (rank 1 = the fastest on that level)."""
    results: dict = field(repr=False, default_factory=dict)
    """The first source's `OpmResult` per candidate (its launches, servers and bottlenecks)."""

    @property
    def pick(self) -> pd.Series:
        return self.mappings.iloc[0]

    @property
    def runner_up(self) -> pd.Series | None:
        return self.mappings.iloc[1] if len(self.mappings) > 1 else None

    @property
    def margin(self) -> float:
        """How much slower the runner-up is predicted than the pick (0.25 = 25%); NaN with one candidate."""
        second = self.runner_up
        if second is None or self.pick["predicted_ns"] <= 0:
            return float("nan")
        return float(second["predicted_ns"] / self.pick["predicted_ns"] - 1.0)

    def level_picks(self) -> pd.DataFrame:
        """Per (source, level): the fastest candidate, its time, and the single pick's time on that level."""
        best = self.levels[self.levels["rank"] == 1].drop(columns="rank")
        pick = self.levels[self.levels["mapping"] == self.pick["mapping"]][["source", "level", "predicted_ns"]]
        out = best.merge(pick.rename(columns={"predicted_ns": "pick_ns"}), on=["source", "level"])
        return out.sort_values(["source", "level"], kind="stable", ignore_index=True)

    def adaptive_gain(self) -> float:
        """The pick's predicted time over a level-adaptive kernel's (each level's fastest), mean over sources."""
        picks = self.level_picks()
        totals = picks.groupby("source")[["predicted_ns", "pick_ns"]].sum()
        adaptive = totals["predicted_ns"].mean()
        return float(totals["pick_ns"].mean() / adaptive) if adaptive > 0 else float("nan")

    def why(self) -> str:
        """One sentence: the pick's margin, the waste it avoids against the runner-up, its bottleneck."""
        pick, second = self.pick, self.runner_up
        bound = f"{pick['bottleneck']} bounds {pick['bottleneck_share']:.0%} of its predicted time"
        if second is None:
            return f"{pick['mapping']} is the only candidate; {bound}."
        head = (f"{pick['mapping']} is predicted {1 + self.margin:.2f}x as fast as the runner-up "
                f"{second['mapping']} ({pick['predicted_ns'] / 1e6:.3g} vs {second['predicted_ns'] / 1e6:.3g} ms)")
        avoided = {w: float(second[w] - pick[w]) for w in WASTES}
        waste = max(avoided, key=avoided.get)
        if pick["me"] >= second["me"] and avoided[waste] > 0.005:
            lanes = (f"it avoids {avoided[waste]:.0%} of lane slots of {WASTES[waste]} "
                     f"(ME {pick['me']:.2f} vs {second['me']:.2f})")
        elif pick["me"] < second["me"]:
            lanes = (f"it wastes more lanes (ME {pick['me']:.2f} vs {second['me']:.2f}) but its warps wait less "
                     f"({second['mapping']}: {second['bottleneck']} bounds {second['bottleneck_share']:.0%})")
        else:
            lanes = f"both use their lanes alike (ME {pick['me']:.2f} vs {second['me']:.2f})"
        return f"{head}: {lanes}; {bound}."


def rank_mappings(graph, sources: Sequence[int], profile, kernels: Sequence[str] | None = None,
                  l2_model: str = "setassoc", warm_l2: bool = True, time_model: str = "critical",
                  on_kernel: Callable[[int, int, str], None] | None = None, threads: int = 1) -> Ranking:
    """Predict a whole BFS from every source with every kernel in `kernels` (default
    `candidate_kernels()`) and rank them by predicted time (see the module docstring).

    `on_kernel(index, count, label)` is called before each kernel's predictions (for progress lines).
    `threads` > 1 runs that many predictions at once (the simulation's compiled loops release the GIL);
    each holds its own simulation in memory. The ranking is the same either way.
    """
    labels = list(dict.fromkeys(k.strip().lower() for k in (kernels or candidate_kernels())))
    parsed = [parse_kernel(label) for label in labels]
    sources = tuple(int(s) for s in sources)
    rounds = {source: BFS.rounds(graph, source, "sorted") for source in sources}  # once, for every kernel
    compactions = {source: SharedCompactions() for source in sources}  # the same for every data-driven kernel

    def predict(index: int) -> list:
        label, kernel = labels[index], parsed[index]
        if on_kernel is not None:
            on_kernel(index + 1, len(labels), label)
        return [predict_bfs(graph, source, kernel, profile, l2_model=l2_model, warm_l2=warm_l2,
                            time_model=time_model, frontiers=rounds[source], shared=compactions[source])
                for source in sources]

    if threads > 1 and len(labels) > 1:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            predicted = list(pool.map(predict, range(len(labels))))
    else:
        predicted = [predict(index) for index in range(len(labels))]
    totals, level_rows, results = {}, [], {}
    for label, by_source in zip(labels, predicted):
        results[label] = by_source[0]
        for source, result in zip(sources, by_source):
            per_round = result.per_level.groupby("level", sort=True)["predicted_ns"].sum()
            level_rows.append(pd.DataFrame({"source": source, "level": per_round.index.to_numpy(),
                                            "mapping": label, "predicted_ns": per_round.to_numpy()}))
        totals[label] = float(np.mean([result.predicted_ns for result in by_source]))
    lanes = _lane_rates(graph, rounds, parsed, labels)
    table = pd.DataFrame({"mapping": labels, "predicted_ns": [totals[k] for k in labels]})
    table = table.merge(lanes, on="mapping", how="left")
    shares = [results[k].summary()["bottleneck_time_share"] for k in labels]
    table["bottleneck"] = [max(s, key=s.get) if s else "" for s in shares]
    table["bottleneck_share"] = [max(s.values()) if s else float("nan") for s in shares]
    table = table.sort_values("predicted_ns", kind="stable", ignore_index=True)
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    best = table["predicted_ns"].iloc[0]
    table["vs_best"] = table["predicted_ns"] / best if best > 0 else np.nan
    levels = pd.concat(level_rows, ignore_index=True)
    levels["rank"] = levels.groupby(["source", "level"])["predicted_ns"].rank(method="first").astype(int)
    settings = {"profile": profile.name, "curves_measured": bool(profile.measured), "l2_model": l2_model,
                "warm_l2": warm_l2, "time_model": time_model}
    return Ranking(graph.name, graph.n, graph.m, sources, settings, table[MAPPING_COLUMNS],
                   levels[LEVEL_COLUMNS], results)


def _lane_rates(graph, rounds: dict, kernels, labels) -> pd.DataFrame:
    """ME, UA, UR and idle of every kernel over the BFS `rounds` (by source; topo: its masked walk)."""
    degrees = lane_degrees(graph)
    sums = np.zeros((len(kernels), len(LANE_FIELDS)), dtype=np.int64)
    for frontiers in rounds.values():
        walk = degrees[frontiers.vertices]
        for i, kernel in enumerate(kernels):
            if kernel.data_driven:
                counts = kernel.expansion.count_lanes(walk, frontiers.level_ptr)
            else:
                counts = topology_lanes(degrees, frontiers)
            sums[i] += np.asarray(counts, dtype=np.int64).sum(axis=0)
    table = add_rates(pd.DataFrame(sums, columns=list(LANE_FIELDS)))
    table.insert(0, "mapping", labels)
    return table[["mapping", "me", "ua", "ur", "idle"]]
