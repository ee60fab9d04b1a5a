"""Seed 001's couplings of expansion and contraction (§5): the queues a whole BFS passes through, launch
by launch, and the explicit global traffic each launch moves.

A BFS iteration expands a frontier (gathers its adjacency lists: scan+warp+CTA) and contracts the
result (the status lookup of `simdmodel.lookup` keeps the unvisited ids). The couplings differ in
which of the two frontiers goes through global memory as a queue:

- `expand-contract` (§5.1): one launch per iteration, vertex queue in, vertex queue out; every
  gathered neighbour is looked up at once. Traffic 5n + 2m words.
- `contract-expand` (§5.2): one launch per iteration, edge queue in, edge queue out: the lookup
  first, then the survivors' lists copied into the next edge queue. 3n + 4m (+ 2: the source goes
  once through a vertex queue, into the expansion that makes the first edge queue).
- `two-phase` (§5.3): an expansion (vertex queue -> edge queue) and a contraction (edge queue ->
  vertex queue) per iteration. 5n + 4m.
- `hybrid` (§5.4): contract-expand's queues, but an iteration whose edge queue holds more ids than
  the GPU has resident threads runs as a contraction and an expansion (two-phase). Between 3n + 4m
  + 2 and 5n + 4m.

A coupling's label is its name, or its name and a lookup mode of `COUPLING_MODES`: `-label` (no
culling: seed 001 Fig. 7's "simplified" two-phase BFS), `-warp`, `-history` (both culling heuristics,
plain label stores: seed 001's lookup). Without one it is `atomic`: both culling heuristics, and the
label claimed by a compare-and-swap, so no race lets a duplicate through; in the default (claim) build
only the claiming lane then sets the vertex's bitmask bit, with an atomic OR, where the plain build
(`claim=False`, seed 001's bitmask) has every lane that found the bit unset store its byte. Seed 001's
plain label stores keep redundant expansion under 1.05x on a 14-SM GPU; a GPU of 132 SMs runs 13 times as
many lookups at once, and measured on one (gpu_validate/results) they let the queues of a scale-16
Kronecker graph outgrow twice its m. The lookup always checks the label behind an unset bit, so levels are exact
whatever races let through.

Traffic (TRAFFIC, words; a bitmask byte counts one): column indices read, row offsets read (two per
expanded vertex), edge- and vertex-queue reads and writes, bitmask inspections and label stores:
seed 001's accounting, which the formulas above count with n the vertices reached and m their edges,
exactly when no race lets a duplicate through and the lookup does not cull (mode `label`). Bitmask
stores and label reads behind unset bits are counted too, outside the formulas. The host's set-up (the
source into the first vertex queue, its label) counts as one vertex-queue write and one label store.

Lists longer than BIG_LIST leave an expanding launch as pieces, which a `pieces` launch after it
gathers over the whole grid (their edges, and an expand-contract's lookups of them, are that launch's).
With `spread` (the kernels' default), a launch of fewer CTAs than a full wave leaves every list longer
than a warp (SPREAD_LIST) as pieces: its few CTAs would otherwise gather them while the other SMs idle
(`big_list`). Graphs without lists longer than BIG_LIST have no `pieces` launches, so nothing is spread.

The model runs the launches in queue order: an expansion writes its lists in vertex order, a lookup
walks its ids in tiles of 256 (`lookup_launch`, the wave rule across warps; a contraction's CTA takes
CONTRACT_ITEMS tiles at once, so its waves are that much longer). The GPU places each CTA's block of a
queue where an atomic counter puts it, and its fused expand-contract looks neighbours up in gathering
order, so where races occur the model is approximate
(measured on an H200 it overstates seed 001's plain-store races tenfold over a whole BFS); the atomic
lookup has none, and there the queues and the column, row-offset, queue and label-store counts are
exact (bitmask reads and stores and label reads depend on what culling and stale bits let through).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .errors import InputError
from .frontier import bfs, check_source
from .graph import CSRGraph
from .lookup import ATOMIC, MODES, NO_FLAGS, STATUS_ACCESSES, TILE, WARP, edge_frontier, lookup_launch, status_arrays

COUPLINGS = ("expand-contract", "contract-expand", "two-phase", "hybrid")
COUPLING_MODES = ("label", "warp", "history", "atomic")
"""Lookup modes a coupling may run: the label is always checked (the bitmask alone could mislabel)."""
DEFAULT_MODE = "atomic"
TRAFFIC = ("column", "row", "edge_read", "edge_write", "vertex_read", "vertex_write", "mask_read", "label_write",
           "mask_write", "label_read")
"""Explicit global traffic categories, in the order of the CUDA kernels' T_* counters."""
FORMULA_TRAFFIC = TRAFFIC[:8]
"""The categories seed 001's formulas count."""
FORMULAS = {"expand-contract": (5, 2, 0), "contract-expand": (3, 4, 2), "two-phase": (5, 4, 0), "hybrid": (3, 4, 2)}
"""(a, b, c): a race-free traversal of n vertices and m edges moves a n + b m + c words (hybrid: at least)."""
PHASES = ("setup", "expand", "contract", "expand-contract", "contract-expand", "pieces")
BIG_LIST = 1024
"""Lists longer than this are left by the expanding launch as pieces of PIECE edges, which a `pieces`
launch spreads over the whole grid (a hub's list would hold one CTA, and the launch, up)."""
SPREAD_LIST = WARP
"""With `spread`, lists longer than this leave a launch of fewer CTAs than a full wave as pieces."""
PIECE = 1024
CONTRACT_ITEMS = 2
"""Tiles of 256 ids a contraction's CTA looks up at once (gpu_validate/cuda/couplings.cu)."""
LOOKUP_PHASES = ("contract", "expand-contract", "contract-expand")
QUEUE_HEADROOM = 2
"""A queue holds QUEUE_HEADROOM * m ids (at least n + 1), on the GPU and in the model alike."""
SETUP_WORDS = {"vertex_write": 1, "label_write": 1, "mask_write": 1}
"""The host's set-up of every coupled BFS: the source into the first vertex queue, its label and bit."""
LAUNCH_COLUMNS = ("level", "phase", "input", "output", "logical_vertices", "logical_edges", *TRAFFIC)


class QueueOverflow(InputError):
    """A queue needed more room than it has: redundant expansion (seed 001 Fig. 7) ran away."""


class QueueTurns:
    """Which of the two vertex and two edge queues each launch of a coupled BFS reads and writes, on the GPU
    (`gpu_validate.couplings`) and in the operator machine alike: `step(phase)` gives (input, output), each
    (kind, index). An output goes to its kind's other queue when the input is of its kind, else to the one
    its kind last used; a `pieces` launch reads and writes the expanding launch's output. The source starts
    in vertex queue 0."""

    def __init__(self):
        self.slot = {"vertex": 0, "edge": 0}
        self.current = ("vertex", 0)

    def step(self, phase: str) -> tuple[tuple[str, int], tuple[str, int]]:
        if phase == "pieces":
            return self.current, self.current
        kind = "edge" if phase in ("expand", "contract-expand") else "vertex"
        if kind == self.current[0]:
            self.slot[kind] = 1 - self.slot[kind]
        into, self.current = self.current, (kind, self.slot[kind])
        return into, self.current


def queue_capacity(graph: CSRGraph) -> int:
    """The ids one queue holds (QUEUE_HEADROOM)."""
    return queue_slots(graph.n, graph.m)


def queue_slots(n: int, m: int) -> int:
    """The ids one queue of a graph of n vertices and m edges holds: QUEUE_HEADROOM x m, at least n + 1."""
    return int(min(max(QUEUE_HEADROOM * m, n + 1), 2**31 - 1))


def _no_ids() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class LaunchWork:
    """What one coupled launch works on, in the order the model runs it (`coupled_launches`' `observe`):
    the entries of its input queue (vertex ids, or the ids of an edge queue; a `pieces` launch: none), the
    vertices whose lists it gathers (a `pieces` launch: the long lists; an expanding launch: all it
    expands, the long ones left as pieces), where each gathered list starts in its output queue (-1 for
    none: a fused lookup enqueues survivors instead), and the ids it looks up with their accesses
    (`simdmodel.lookup.ACCESS_FLAGS`), and whether those lookups store with atomic ORs (the claim build's atomic
    lookup: only the claiming lane sets its bit) rather than byte stores."""

    level: int
    phase: str
    queue: np.ndarray = field(default_factory=_no_ids)
    expanded: np.ndarray = field(default_factory=_no_ids)
    out_at: np.ndarray = field(default_factory=_no_ids)
    looked_up: np.ndarray = field(default_factory=_no_ids)
    flags: np.ndarray = field(default_factory=lambda: NO_FLAGS)
    big_list: int = BIG_LIST  # an expanding launch's: lists longer than this left as pieces (`big_list`)
    atomic_or: bool = False


@dataclass(frozen=True)
class Coupling:
    """A coupling of COUPLINGS and the lookup mode (COUPLING_MODES) its contractions use."""

    name: str
    mode: str = DEFAULT_MODE

    def __post_init__(self):
        if self.name not in COUPLINGS:
            raise InputError(f"unknown coupling {self.name!r} (choose {', '.join(COUPLINGS)})")
        if self.mode not in COUPLING_MODES:
            raise InputError(f"{self.name}: lookup mode {self.mode!r} is not one a coupling runs "
                             f"(choose {', '.join(COUPLING_MODES)}; the label is always checked)")

    @property
    def label(self) -> str:
        return self.name if self.mode == DEFAULT_MODE else f"{self.name}-{self.mode}"

    @property
    def mode_index(self) -> int:
        return MODES.index(self.mode)

    def formula_words(self, n: int, m: int) -> int:
        """Seed 001's explicit traffic of a race-free traversal of n vertices and m edges (hybrid: the
        least it moves, all iterations contract-expand)."""
        a, b, c = FORMULAS[self.name]
        return a * n + b * m + c

    def start(self) -> tuple[str, ...]:
        """The launches before the first iteration: the source's expansion into the first edge queue."""
        return ("expand",) if self.name in ("contract-expand", "hybrid") else ()

    def iteration(self, queued: int, resident_threads: int) -> tuple[str, ...]:
        """The launches of one iteration whose input queue holds `queued` ids."""
        if self.name == "expand-contract":
            return ("expand-contract",)
        if self.name == "two-phase":
            return ("expand", "contract")
        if self.name == "hybrid" and queued > resident_threads:
            return ("contract", "expand")
        return ("contract-expand",)


def has_long_lists(graph: CSRGraph) -> bool:
    """Whether `graph` has lists longer than BIG_LIST: then each expanding launch is followed by `pieces`."""
    return graph.n > 0 and int(np.diff(graph.indptr).max()) > BIG_LIST


def big_list(queued: int, full_wave: int, spread: bool, long_lists: bool) -> int:
    """Lists longer than this leave an expanding launch of `queued` input entries as pieces: BIG_LIST, or
    SPREAD_LIST where `spread` and the launch's grid (a CTA per TILE entries, `full_wave` at most) is short
    of a full wave, on a graph with `long_lists` (`has_long_lists`: others have no `pieces` launch)."""
    small = -(-int(queued) // TILE) < full_wave
    return SPREAD_LIST if spread and long_lists and small else BIG_LIST


def with_pieces(phases: tuple[str, ...], long_lists: bool) -> tuple[str, ...]:
    """`phases` with a `pieces` launch after each expanding one where the graph has long lists."""
    out = []
    for phase in phases:
        out.append(phase)
        if long_lists and phase in ("expand", "expand-contract", "contract-expand"):
            out.append("pieces")
    return tuple(out)


def is_coupling(text: str) -> bool:
    """Whether `text` names a coupling (with or without a mode), so its errors are a coupling's."""
    name = text.strip().lower()
    return any(name == c or name.startswith(c + "-") for c in COUPLINGS)


def parse_coupling(text: str) -> Coupling:
    """`two-phase`, `hybrid-warp`, ...: a coupling and an optional lookup mode."""
    name = text.strip().lower()
    for coupling in COUPLINGS:
        if name == coupling:
            return Coupling(coupling)
        if name.startswith(coupling + "-"):
            return Coupling(coupling, name[len(coupling) + 1:])
    raise InputError(f"unknown coupling {text!r} (choose {', '.join(COUPLINGS)}, optionally -MODE with MODE in "
                     f"{', '.join(COUPLING_MODES)})")


def _words(**counts) -> dict:
    return {key: int(counts.get(key, 0)) for key in TRAFFIC}


def coupled_launches(graph: CSRGraph, source: int, coupling: Coupling, grid: int, resident_threads: int,
                     waves: bool = True, observe=None, claim: bool = True, spread: bool = True) -> pd.DataFrame:
    """One row per launch of a whole BFS from `source` (LAUNCH_COLUMNS): its iteration (`level`; its
    lookups label level + 1), phase, queue entries in and out, the level's logical vertex and edge
    frontier, and its traffic. `grid` CTAs take the lookup's tiles (a full wave: the profile's
    `full_wave_grid(256)`); `resident_threads` decides hybrid's iterations. QueueOverflow where a queue
    would outgrow `queue_capacity(graph)`, as on the GPU. `observe`, when given, is called with each
    launch's `LaunchWork` (the set-up excepted) as it runs. `claim`: the GPU's claim build (its default),
    whose atomic lookup has only the claiming lane set its bitmask bit (`lookup_launch`); else the plain
    one. `spread`: a launch of fewer CTAs than `grid` leaves lists longer than a warp as pieces (`big_list`;
    the GPU's default)."""
    source = check_source(graph, int(source))
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 1:
        raise InputError(f"a lookup needs a grid of at least one CTA, got {grid!r}")
    logical = bfs(graph, source)
    vertex_sizes = logical.vertex_frontier_sizes()
    edge_sizes = logical.edge_frontier_sizes(graph)
    visited = np.zeros(graph.n, dtype=np.bool_)
    visited[source] = True
    label, mask = status_arrays(visited)
    degrees = np.diff(graph.indptr)
    capacity = queue_capacity(graph)
    has_long = has_long_lists(graph)
    rows = []

    def pieces(long):
        return int(((degrees[long] + PIECE - 1) // PIECE).sum())

    def check(size):
        if size > capacity:
            raise QueueOverflow(f"{coupling.label} from {source} on {graph.name}: a queue would outgrow its "
                                f"{capacity:,} slots at level {level} (redundant expansion; seed 001 Fig. 7)")

    def gather(queue, queued=True):  # (an expand-contract queues only the survivors)
        if queued:
            check(int(degrees[queue].sum()))
        return edge_frontier(graph, queue)

    flags = NO_FLAGS

    def lookup(ids, items=1):
        nonlocal flags
        kept = np.empty(ids.size, dtype=np.int64)
        accesses = np.zeros(len(STATUS_ACCESSES), dtype=np.int64)
        flags = np.empty(ids.size, dtype=np.uint8) if observe is not None else NO_FLAGS
        count = lookup_launch(ids, label, mask, coupling.mode_index, int(grid), bool(waves), kept, accesses, flags,
                              items, bool(claim)) if ids.size else 0
        return kept[:count], dict(zip(STATUS_ACCESSES, accesses))

    def starts(lists):  # where each list begins in the queue the launch gathers it into
        return list_starts(degrees[lists])

    atomic_or = bool(claim) and coupling.mode_index >= ATOMIC  # lookup_launch's claims

    def tell(level, phase, **work):
        if observe is not None:
            observe(LaunchWork(level, phase, atomic_or=atomic_or, **work))


    def record(level, phase, queue_size, out_size, words):
        inside = level < logical.depth
        rows.append({"level": level, "phase": phase, "input": int(queue_size), "output": int(out_size),
                     "logical_vertices": int(vertex_sizes[level]) if inside else 0,
                     "logical_edges": int(edge_sizes[level]) if inside else 0, **words})

    def launch(level, phase, queue):
        if phase == "contract":
            out, status = lookup(queue, CONTRACT_ITEMS)
            record(level, phase, queue.size, out.size, _words(edge_read=queue.size, vertex_write=out.size, **status))
            tell(level, phase, queue=queue, looked_up=queue, flags=flags)
            return out
        threshold = big_list(queue.size, int(grid), spread, has_long)
        if phase == "expand-contract":  # short lists looked up by the launch, long ones by its pieces after it
            long = degrees[queue] > threshold
            ids = gather(queue[~long], queued=False)
            out, status = lookup(ids)
            check(out.size)
            record(level, phase, queue.size, out.size, _words(vertex_read=queue.size, row=2 * queue.size,
                                                              column=ids.size, vertex_write=out.size, **status))
            tell(level, phase, queue=queue, expanded=queue, looked_up=ids, flags=flags, big_list=threshold)
            if has_long:
                ids = gather(queue[long], queued=False)
                more, status = lookup(ids)
                out = np.concatenate((out, more))
                check(out.size)
                record(level, "pieces", pieces(queue[long]), out.size,
                       _words(column=ids.size, vertex_write=more.size, **status))
                tell(level, "pieces", expanded=queue[long], out_at=np.full(int(long.sum()), -1, dtype=np.int64),
                     looked_up=ids, flags=flags)
            return out
        if phase == "expand":
            expanded = queue
            words = _words(vertex_read=queue.size, row=2 * queue.size)
            seen = {}
        else:  # contract-expand
            expanded, status = lookup(queue)
            words = _words(edge_read=queue.size, row=2 * expanded.size, **status)
            seen = {"looked_up": queue, "flags": flags}
        out = gather(expanded)
        tell(level, phase, queue=queue, expanded=expanded, out_at=starts(expanded), big_list=threshold, **seen)
        long = degrees[expanded] > threshold
        short = out.size - int(degrees[expanded[long]].sum())
        record(level, phase, queue.size, out.size, {**words, "column": short, "edge_write": short})
        if has_long:
            record(level, "pieces", pieces(expanded[long]), out.size, _words(column=out.size - short,
                                                                             edge_write=out.size - short))
            tell(level, "pieces", expanded=expanded[long], out_at=starts(expanded)[long])
        return out

    rows.append({"level": 0, "phase": "setup", "input": 0, "output": 1, "logical_vertices": 1,
                 "logical_edges": int(degrees[source]), **_words(**SETUP_WORDS)})
    queue = np.array([source], dtype=np.int64)
    level = 0
    for phase in coupling.start():  # (pieces are recorded by the launch they follow)
        queue = launch(0, phase, queue)
    while queue.size:
        if level > logical.depth + 1:  # a race never adds a level: labels are checked
            raise RuntimeError(f"{coupling.label} on {graph.name}: more iterations than the BFS has levels")
        for phase in coupling.iteration(queue.size, resident_threads):
            queue = launch(level, phase, queue)
        level += 1
    return pd.DataFrame(rows, columns=list(LAUNCH_COLUMNS))


def list_starts(lengths) -> np.ndarray:
    """Where each of lists of `lengths` begins when they are laid out one after another (int64)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.cumsum(lengths) - lengths


def traversed(graph: CSRGraph, source: int) -> tuple[int, int]:
    """The n and m of seed 001's formulas for a BFS from `source`: the vertices it reaches and their edges."""
    front = bfs(graph, int(source))
    return int(front.reached), int(front.edge_frontier_sizes(graph).sum())


def explicit_words(launches: pd.DataFrame) -> int:
    """The words of the formula's categories (FORMULA_TRAFFIC) over all launches."""
    return int(launches[list(FORMULA_TRAFFIC)].to_numpy().sum())


def redundant_expansion(launches: pd.DataFrame) -> float:
    """Neighbours gathered (column indices read, which every coupling enqueues or looks up) over the
    edges a BFS logically traverses (seed 001 §4.2's redundant expansion factor)."""
    logical = launches.drop_duplicates("level")["logical_edges"].sum()
    return float(launches["column"].sum() / max(int(logical), 1))


SUMMARY_COLUMNS = ("kernel", "source", "overflow", "launches", "edge_queue", "vertex_queue", "words", "formula_words",
                   "redundant_expansion")


def coupling_summary(graph: CSRGraph, sources, couplings, grid: int, resident_threads: int,
                     waves: bool = True, observer=None, claim: bool = True,
                     spread: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary, launches) of each coupling's BFS from each source: per (kernel, source) SUMMARY_COLUMNS
    (ids enqueued into edge and vertex queues, explicit words, the formula's words for the traversed
    component, redundant expansion; `overflow` where a queue would outgrow `queue_capacity`, the rest
    then empty), and every launch (`coupled_launches`, with kernel and source). `observer(coupling,
    source)`, when given, returns the `observe` of that BFS's `coupled_launches` (or None). `claim`: the
    GPU's claim build; `spread`: small launches spread lists longer than a warp (`coupled_launches`)."""
    summary, launches = [], []
    reach = {int(source): traversed(graph, source) for source in sources}
    for coupling in couplings:
        for source in sources:
            row = {"kernel": coupling.label, "source": int(source), "formula_words": coupling.formula_words(*reach[int(source)])}
            try:
                table = coupled_launches(graph, int(source), coupling, grid, resident_threads, waves,
                                         observer(coupling, int(source)) if observer is not None else None, claim,
                                         spread)
            except QueueOverflow:  # seed 001's runaway redundant expansion: a result, not an error
                summary.append({**row, "overflow": True})
                continue
            launches.append(table.assign(kernel=coupling.label, source=int(source)))
            summary.append({**row, "overflow": False, "launches": int((table["phase"] != "setup").sum()),
                            "edge_queue": int(table["edge_write"].sum()), "vertex_queue": int(table["vertex_write"].sum()),
                            "words": explicit_words(table), "redundant_expansion": redundant_expansion(table)})
    counts = {c: "Int64" for c in ("launches", "edge_queue", "vertex_queue", "words")}
    table = pd.DataFrame(summary).reindex(columns=list(SUMMARY_COLUMNS)).astype(counts)
    columns = ["kernel", "source", *LAUNCH_COLUMNS]
    return table, (pd.concat(launches, ignore_index=True)[columns] if launches else pd.DataFrame(columns=columns))
