"""Status lookup with culling (seed 001 §4.2): which vertex ids of an edge frontier a lookup lets through.

A BFS's contraction inspects every id of the logical edge frontier (the adjacency lists of a level's
frontier, concatenated in queue order) and keeps the unvisited ones. Seed 001 does it without
atomics, so ids that race through it are false negatives: the same vertex enqueued more than once,
and expanded again in the next round. The modes add one filter each, in this order per thread:

- `bitmask`: one bit per vertex, read and set with plain byte stores (two lanes of one warp
  instruction that set bits of the same byte keep only one of them);
- `label`: behind an unset bit, the vertex's 4-byte label decides (safe against a clobbered bit);
- `warp`: warp culling first: each lane hashes its id into the warp's 128-entry table in shared
  memory, reads back, and where its id is still there writes its lane id; lanes that then read
  another lane's id are duplicates and are culled;
- `history`: then history culling: a CTA's 256-entry table of recently seen ids, a hit culls;
- `atomic`: both culling heuristics, and behind an unset bit a plain read of the label, then, where it
  finds the vertex unvisited, an atomic compare-and-swap that claims it: no id of an unvisited vertex
  gets through twice (seed 001 §4.2: atomic updates yield zero false negatives). The plain read sees
  the claims of earlier waves only (the wave rule below), so the lanes of one wave that find the same
  vertex each try a compare-and-swap, and all but the first fail (`label_claim` without `kept`).

The kernel (`gpu_validate/cuda/lookup.cu`) takes the edge frontier in tiles of 256 ids, tile t on
CTA t mod grid, eight warps a tile, one full wave of CTAs. The model walks the tiles in that order,
each warp's 32 lanes as one instruction. Within a warp it is exact given that order: the lanes of one
instruction read the same status, and of conflicting stores to one shared word or global byte the
highest lane's wins. Across warps it follows one documented rule, and is approximate there: the warps
of one wave (tiles w * grid .. w * grid + grid - 1, which the resident CTAs take at once) run at the
same time, so each sees the stores of earlier waves only; a wave's status and history stores land
when it ends, plain byte stores in order (the last store to a byte keeps only its own bit: the
bitmask's clobbering). `waves=False` lets every warp see all earlier warps' stores instead (no
cross-warp race: the fewest false negatives any order gives). The ideal survivors of a level are the
next frontier; false negatives are the rest, reported against m - n, the ids an ideal lookup culls
over the whole traversal (seed 001 Fig. 8).
"""
from __future__ import annotations

import numba
import numpy as np
import pandas as pd

from .errors import InputError
from .frontier import bfs
from .graph import CSRGraph

MODES = ("bitmask", "label", "warp", "history", "atomic")
"""Each mode adds its filter to the ones before it (seed 001 Fig. 8's progression), `atomic` makes the
label's test-and-set one atomic operation."""
ATOMIC = MODES.index("atomic")
STATUS_ACCESSES = ("mask_read", "label_read", "mask_write", "label_write")
"""The global status accesses a lookup counts (`lookup_launch`'s `accesses`), one word or byte each."""
TILE = 256
WARP = 32
WARP_HASH = 128
HISTORY = 256
ACCESS_FLAGS = ("mask_read", "label_read", "label_claim", "mask_write", "label_write", "kept")
"""What one looked-up id did (`lookup_launch`'s `flags`, bit k for ACCESS_FLAGS[k]): read its bitmask
byte, read its label, claimed the label by compare-and-swap (`atomic`), stored its bitmask byte, stored
its label (a plain store), passed into the next frontier. The operator machine's jobs follow them."""
MASK_READ, LABEL_READ, LABEL_CLAIM, MASK_WRITE, LABEL_WRITE, KEPT = (1 << k for k in range(len(ACCESS_FLAGS)))


def mode_index(mode: str) -> int:
    """The position of `mode` in MODES; InputError naming the known ones otherwise."""
    try:
        return MODES.index(mode)
    except ValueError:
        raise InputError(f"unknown lookup mode {mode!r} (choose {', '.join(MODES)})") from None


@numba.njit(cache=True, nogil=True)
def lookup_launch(ids, label, mask, mode, grid, waves, kept, accesses, flags, items=1, claim=False):
    """One lookup launch over `ids` that updates the status it finds (`label`, bool per vertex, and
    `mask`, its bitmask bytes) as the launch leaves them, and writes the ids that pass to `kept` in
    the order their lanes run; returns how many (see `lookup_survivors`). Adds its global status
    accesses to `accesses` (STATUS_ACCESSES order: bitmask bytes read, labels read, bitmask bytes
    stored, labels stored). `flags` (uint8, one per id, or empty for none) gets each id's accesses
    (ACCESS_FLAGS bits). A CTA takes `items` consecutive tiles at once (tiles t .. t + items - 1 on CTA
    t // items mod grid), so a wave is grid x items tiles. With `claim` (the `atomic` mode only: the GPU's
    claim build, `gpu_validate.modules.BITMASK_STORES`) only the lane whose compare-and-swap claimed a vertex
    stores, and it ORs its bit into the bitmask instead of storing the byte it read."""
    record = flags.size > 0
    claims = claim and mode >= ATOMIC  # stores only by the claiming lanes, each ORing its bit in
    history = np.full((grid, HISTORY), -1, dtype=np.int64)
    warp_table = np.full(WARP_HASH, -1, dtype=np.int64)
    valid = np.zeros(WARP, dtype=np.bool_)
    matched = np.zeros(WARP, dtype=np.bool_)
    stored = np.zeros(WARP, dtype=np.int64)  # the byte a lane stores, -1 for none
    wave_tiles = grid * items
    claimed = np.full(label.size if mode >= ATOMIC else 0, -1, dtype=np.int64)  # the wave that claimed a label
    wave_ids = np.empty(wave_tiles * TILE, dtype=np.int64)  # a wave's pending stores: the id, its byte, kept or not
    wave_bytes = np.empty(wave_tiles * TILE, dtype=np.int64)
    wave_kept = np.empty(wave_tiles * TILE, dtype=np.bool_)
    wave_history = np.empty(wave_tiles * TILE, dtype=np.int64)
    wave_cta = np.empty(wave_tiles * TILE, dtype=np.int64)
    pending = 0
    pending_history = 0
    survivors = 0
    size = ids.size
    tiles = (size + TILE - 1) // TILE
    for tile in range(tiles):
        cta = (tile // items) % grid
        wave = tile // wave_tiles
        for w in range(TILE // WARP):
            base = tile * TILE + w * WARP
            if base >= size:
                break
            lanes = min(WARP, size - base)
            for lane in range(lanes):
                valid[lane] = True
            if mode >= 2:  # warp culling: ids into the table, read back, lane ids where still there
                for lane in range(lanes):
                    warp_table[ids[base + lane] & (WARP_HASH - 1)] = ids[base + lane]
                for lane in range(lanes):
                    v = ids[base + lane]
                    matched[lane] = warp_table[v & (WARP_HASH - 1)] == v
                for lane in range(lanes):
                    if matched[lane]:
                        warp_table[ids[base + lane] & (WARP_HASH - 1)] = -2 - lane  # a lane id, never an id
                for lane in range(lanes):
                    if matched[lane] and warp_table[ids[base + lane] & (WARP_HASH - 1)] != -2 - lane:
                        valid[lane] = False
            if mode >= 3:  # history culling: every read of the instruction, then its stores
                for lane in range(lanes):
                    v = ids[base + lane]
                    if valid[lane] and history[cta, v & (HISTORY - 1)] == v:
                        valid[lane] = False
                for lane in range(lanes):
                    if valid[lane]:
                        if waves:
                            wave_history[pending_history] = ids[base + lane]
                            wave_cta[pending_history] = cta
                            pending_history += 1
                        else:
                            history[cta, ids[base + lane] & (HISTORY - 1)] = ids[base + lane]
            for lane in range(lanes):  # the bit, then the label, read before any store
                stored[lane] = -1
                if record:
                    flags[base + lane] = 0
                if valid[lane]:
                    v = ids[base + lane]
                    byte = np.int64(mask[v >> 3])
                    accesses[0] += 1
                    if record:
                        flags[base + lane] = MASK_READ | (LABEL_READ if mode >= 1 and not byte & (1 << (v & 7)) else 0)
                    if byte & (1 << (v & 7)):
                        valid[lane] = False
                    else:
                        stored[lane] = byte | (1 << (v & 7))
                        accesses[1] += mode >= 1
                        if mode >= ATOMIC:  # the read sees earlier waves' claims; the compare-and-swap all
                            if label[v] and not (waves and claimed[v] == wave):
                                valid[lane] = False
                            else:  # a compare-and-swap: it claims the label unless a lane of this wave did
                                valid[lane] = not label[v]
                                label[v] = True
                                claimed[v] = wave
                                if record:
                                    flags[base + lane] |= LABEL_CLAIM
                        elif mode >= 1 and label[v]:
                            valid[lane] = False
            for lane in range(lanes):  # stores: of one byte, the highest lane's wins (claims: each sets its bit)
                if stored[lane] >= 0 and (valid[lane] or not claims):
                    v = ids[base + lane]
                    accesses[2] += 1
                    accesses[3] += valid[lane]
                    if record:
                        flags[base + lane] |= MASK_WRITE | (LABEL_WRITE if valid[lane] and mode < ATOMIC else 0)
                    if waves:
                        wave_ids[pending] = v
                        wave_bytes[pending] = stored[lane]
                        wave_kept[pending] = valid[lane]
                        pending += 1
                    elif claims:
                        mask[v >> 3] |= np.uint8(1 << (v & 7))
                    else:
                        mask[v >> 3] = np.uint8(stored[lane])
                        if valid[lane]:
                            label[v] = True
            for lane in range(lanes):
                if valid[lane]:
                    kept[survivors] = ids[base + lane]
                    survivors += 1
                    if record:
                        flags[base + lane] |= KEPT
        if waves and ((tile + 1) % wave_tiles == 0 or tile == tiles - 1):  # the wave ends: its stores land
            for k in range(pending):
                v = wave_ids[k]
                if claims:  # an atomic OR: every claim's bit lands
                    mask[v >> 3] |= np.uint8(1 << (v & 7))
                else:
                    mask[v >> 3] = np.uint8(wave_bytes[k])  # a plain byte store: the last one lands
                if wave_kept[k]:
                    label[v] = True
            for k in range(pending_history):
                history[wave_cta[k], wave_history[k] & (HISTORY - 1)] = wave_history[k]
            pending = 0
            pending_history = 0
    return survivors


NO_FLAGS = np.zeros(0, dtype=np.uint8)
"""`lookup_launch`'s `flags` when they are not wanted."""


def status_arrays(visited: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The label (a copy of `visited`) and bitmask bytes of a status where `visited` vertices are set."""
    visited = np.asarray(visited, dtype=np.bool_)
    return visited.copy(), np.packbits(visited, bitorder="little")


def lookup_survivors(ids, visited, mode: int, grid: int, waves: bool = True) -> int:
    """Survivors of one lookup launch over `ids` (the edge frontier) with `visited` (bool per vertex, the
    status before it; not modified) in mode index `mode` (MODES), `grid` CTAs (see the module docstring).
    With `waves`, the warps of one wave (the `grid` tiles the CTAs take at once) see only the stores of
    earlier waves: every status and history store of a wave lands when the wave ends."""
    label, mask = status_arrays(visited)
    ids = np.asarray(ids, dtype=np.int64)
    return int(lookup_launch(ids, label, mask, int(mode), int(grid), bool(waves), np.empty(ids.size, dtype=np.int64),
                             np.zeros(len(STATUS_ACCESSES), dtype=np.int64), NO_FLAGS))


@numba.njit(cache=True, nogil=True)
def _concatenated(indptr, indices, frontier, out):
    """`edge_frontier`'s loop: the adjacency lists of `frontier`, one after another, into `out`."""
    at = 0
    for v in frontier:
        for e in range(indptr[v], indptr[v + 1]):
            out[at] = indices[e]
            at += 1


def edge_frontier(graph: CSRGraph, frontier: np.ndarray) -> np.ndarray:
    """The ids of the frontier's adjacency lists, concatenated in queue order (int64)."""
    indptr = graph.indptr
    frontier = np.asarray(frontier, dtype=np.int64)
    out = np.empty(int((indptr[frontier + 1] - indptr[frontier]).sum()), dtype=np.int64)
    _concatenated(indptr, graph.indices, frontier, out)
    return out


def lookup_table(graph: CSRGraph, source: int, grid: int, modes=MODES, waves: bool = True) -> pd.DataFrame:
    """One row per (level, mode) of a BFS from `source`: the edge frontier's `edges`, the `ideal`
    survivors (the next frontier), the model's `survivors` and `false_negatives` (survivors - ideal);
    `grid` CTAs (a full wave of the GPU: its profile's `full_wave_grid(256)`)."""
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 1:
        raise InputError(f"a lookup needs a grid of at least one CTA, got {grid!r}")
    indices = [mode_index(m) for m in modes]
    frontiers = bfs(graph, int(source))
    level = frontiers.levels
    rows = []
    for depth in range(frontiers.depth):
        ids = edge_frontier(graph, frontiers.frontier(depth))
        visited = (level >= 0) & (level <= depth)
        ideal = frontiers.frontier(depth + 1).size if depth + 1 < frontiers.depth else 0
        for mode, index in zip(modes, indices):
            survivors = int(lookup_survivors(ids, visited, index, int(grid), waves)) if ids.size else 0
            rows.append({"level": depth, "mode": mode, "edges": int(ids.size), "ideal": int(ideal),
                         "survivors": survivors, "false_negatives": survivors - int(ideal)})
    return pd.DataFrame(rows)


def false_negative_rates(table: pd.DataFrame, n: int, m: int, column: str = "survivors") -> pd.Series:
    """Per mode, the ids `column` lets through beyond the `ideal` over the whole traversal, as a share
    of m - n (seed 001 Fig. 8), averaged over the table's sources (a `source` column, else one)."""
    sources = table["source"].nunique() if "source" in table else 1
    extra = (table[column] - table["ideal"]).groupby(table["mode"], sort=False).sum()
    return extra / (max(m - n, 1) * max(sources, 1))
