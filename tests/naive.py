"""Slow, obviously-correct reference implementations the fast numba paths are tested against.

Each lane-accounting reference simulates every warp lane by lane, round by round, rather than
using the closed forms of the fast kernels, and checks the per-warp identity
W*T = useful + UA + UR + idle as it goes.
"""
from __future__ import annotations

from collections import deque

W = 32
FIELDS = ("warp_iterations", "total_lanes", "useful_lanes", "ua_lanes", "ur_lanes", "idle_lanes")


def bfs_levels(indptr, indices, source):
    """Level of every vertex (-1 unreached) by a textbook FIFO BFS; also the visit order."""
    n = len(indptr) - 1
    level = [-1] * n
    level[source] = 0
    order = [source]
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for k in range(indptr[u], indptr[u + 1]):
            v = int(indices[k])
            if level[v] < 0:
                level[v] = level[u] + 1
                order.append(v)
                queue.append(v)
    return level, order


def frontiers(indptr, indices, source, order="sorted"):
    """List of frontiers (lists of vertex ids) in the requested order."""
    level, visit = bfs_levels(indptr, indices, source)
    depth = max(level) + 1
    result = [[] for _ in range(depth)]
    walk = range(len(level)) if order == "sorted" else visit
    for v in walk:
        if level[v] >= 0:
            result[level[v]].append(v)
    return result


def _add(total, warp):
    assert warp["total_lanes"] == (
        warp["useful_lanes"] + warp["ua_lanes"] + warp["ur_lanes"] + warp["idle_lanes"]
    ), warp
    for key in FIELDS:
        total[key] += warp[key]


def group_lanes(degrees, S):
    """Simulate sm-S: groups of S lanes, floor(32/S) groups per warp, lane by lane per iteration."""
    g = W // S
    total = dict.fromkeys(FIELDS, 0)
    for start in range(0, len(degrees), g):
        groups = list(degrees[start:start + g]) + [0] * (g - len(degrees[start:start + g]))
        remaining = list(groups)
        warp = dict.fromkeys(FIELDS, 0)
        done = [d == 0 for d in groups]  # a group is finished once its whole list is walked
        while not all(done):
            warp["warp_iterations"] += 1
            warp["total_lanes"] += W
            warp["idle_lanes"] += W - g * S
            for k in range(g):
                for _lane in range(S):
                    if done[k]:
                        warp["ur_lanes"] += 1  # waiting for the warp's longest group
                    elif remaining[k] > 0:
                        remaining[k] -= 1
                        warp["useful_lanes"] += 1
                    else:
                        warp["ua_lanes"] += 1  # bubble in the group's last window
                if not done[k] and remaining[k] == 0:
                    done[k] = True
        _add(total, warp)
    return total


def ws_lanes(degrees):
    """Simulate warp segmentation: a warp walks its 32 entries' concatenated edges 32 at a time."""
    total = dict.fromkeys(FIELDS, 0)
    for start in range(0, len(degrees), W):
        edges = sum(degrees[start:start + W])
        warp = dict.fromkeys(FIELDS, 0)
        i = 0
        while i < edges:
            warp["warp_iterations"] += 1
            warp["total_lanes"] += W
            active = min(W, edges - i)
            warp["useful_lanes"] += active
            warp["ua_lanes"] += W - active
            i += W
        _add(total, warp)
    return total


def _strip_mine(length, threads, phase_total):
    """`threads` lanes (warps of W) walk a list of `length` edges, `for i = tid; i < length; i += threads`:
    each warp runs a step whenever one of its lanes still has an edge."""
    for j in range(threads // W):
        warp = dict.fromkeys(FIELDS, 0)
        r = 0
        while True:
            active = [tid for tid in range(W * j, W * j + W) if tid + r * threads < length]
            if not active:
                break
            warp["warp_iterations"] += 1
            warp["total_lanes"] += W
            warp["useful_lanes"] += len(active)
            warp["ua_lanes"] += W - len(active)
            r += 1
        _add(phase_total, warp)


def scan_lanes(degrees, C):
    """Simulate `for (i = tid; i < E; i += C)` per CTA over its E concatenated edges."""
    total = dict.fromkeys(FIELDS, 0)
    for start in range(0, len(degrees), C):
        _strip_mine(sum(degrees[start:start + C]), C, total)
    return total


def swc_phase_lanes(degrees, C):
    """Simulate scan+warp+CTA gathering per CTA of C entries: each list longer than C strip-mined by the
    CTA, each longer than a warp by one warp, the rest concatenated and strip-mined as `scan` does.
    Returns {phase: lane sums} for the phases cta, warp, scan."""
    phases = {phase: dict.fromkeys(FIELDS, 0) for phase in ("cta", "warp", "scan")}
    for start in range(0, len(degrees), C):
        cta = degrees[start:start + C]
        for d in cta:
            if d > C:
                _strip_mine(d, C, phases["cta"])
            elif d > W:
                _strip_mine(d, W, phases["warp"])
        _strip_mine(sum(d for d in cta if d <= W), C, phases["scan"])
    return phases


def swc_lanes(degrees, C):
    total = dict.fromkeys(FIELDS, 0)
    for phase in swc_phase_lanes(degrees, C).values():
        _add(total, phase)
    return total


def lanes(degrees, strategy, param=None):
    """Dispatch to the reference of a strategy."""
    if strategy == "group":
        return group_lanes(degrees, param)
    if strategy == "ws":
        return ws_lanes(degrees)
    if strategy == "swc":
        return swc_lanes(degrees, param)
    return scan_lanes(degrees, param)


def weighted_rows(pairs, weights, n, undirected=False, drop_self_loops=False, drop_duplicates=False):
    """CSR rows as lists of (neighbour, weight), built edge by edge the obvious way.

    Each input edge is appended to its source's row (and, undirected, to its target's row with the
    same weight, a self loop once); then self loops and later copies of a neighbour are removed,
    so a kept duplicate has the weight of its first copy.
    """
    rows = [[] for _ in range(n)]
    for (u, v), w in zip(pairs, weights):
        rows[u].append((v, w))
        if undirected and u != v:
            rows[v].append((u, w))
    result = []
    for u, row in enumerate(rows):
        kept, seen = [], set()
        for v, w in row:
            if drop_self_loops and v == u:
                continue
            if drop_duplicates and v in seen:
                continue
            seen.add(v)
            kept.append((v, w))
        result.append(kept)
    return result


def lookup_survivors(ids, visited, mode, grid, waves=True):
    """Survivors of `lookup_flags`."""
    return lookup_flags(ids, visited, mode, grid, waves)[0]


def lookup_flags(ids, visited, mode, grid, waves=True, items=1, claim=False):
    """Status lookup with culling (simdmodel.lookup), thread by thread: tiles of 256 ids, `items` at once on
    CTA (t // items) mod grid, warps of 32 lanes as one instruction (reads before stores, the highest lane's
    store wins), and with `waves` every store of a wave of grid x items tiles held back until the wave ends
    (the atomic mode's plain label read too: its compare-and-swap sees every claim). With `claim` (atomic
    mode) only a claiming lane stores, setting its bit alone.
    Returns the survivors and each id's accesses (ACCESS_FLAGS names)."""
    label = set(v for v, seen in enumerate(visited) if seen)
    mask = [0] * ((len(visited) + 7) // 8)
    for v in label:
        mask[v // 8] |= 1 << (v % 8)
    history = [dict() for _ in range(grid)]
    survivors, held = 0, []
    did = [set() for _ in ids]
    claimed = {}  # vertex -> the wave whose compare-and-swap claimed it
    tiles = (len(ids) + 255) // 256
    for tile in range(tiles):
        cta = (tile // items) % grid
        wave = tile // (grid * items)
        for w in range(8):
            lanes = list(range(tile * 256 + w * 32, min(tile * 256 + w * 32 + 32, len(ids))))
            keep = {i: True for i in lanes}
            if mode >= 2:
                table = {}
                for i in lanes:  # the highest lane's id stays in each slot
                    table[ids[i] % 128] = ids[i]
                matched = [i for i in lanes if table[ids[i] % 128] == ids[i]]
                owner = {}
                for i in matched:
                    owner[ids[i] % 128] = i
                for i in matched:
                    keep[i] = owner[ids[i] % 128] == i
            stores = []
            if mode >= 3:
                table = history[cta]
                for i in lanes:
                    if keep[i] and table.get(ids[i] % 256) == ids[i]:
                        keep[i] = False
                stores += [("history", cta, ids[i]) for i in lanes if keep[i]]
            for i in lanes:
                if keep[i]:
                    v = ids[i]
                    byte = mask[v // 8]
                    did[i].add("mask_read")
                    if byte & (1 << (v % 8)):
                        keep[i] = False
                        continue
                    if not (claim and mode >= 4):
                        stores.append(("byte", v // 8, byte | (1 << (v % 8))))
                        did[i].add("mask_write")
                    if mode >= 1:
                        did[i].add("label_read")
                    if mode >= 4:  # atomic: the plain read sees earlier waves' claims, the swap every claim
                        if v in label and not (waves and claimed.get(v) == wave):
                            keep[i] = False
                        else:
                            keep[i] = v not in label
                            label.add(v)
                            claimed[v] = wave
                            did[i].add("label_claim")
                        if claim and keep[i]:  # the claiming lane ORs its bit in
                            stores.append(("bit", v // 8, 1 << (v % 8)))
                            did[i].add("mask_write")
                    elif mode >= 1 and v in label:
                        keep[i] = False
                    else:
                        stores.append(("label", v, None))
                        did[i].add("label_write")
            for i in lanes:
                if keep[i]:
                    did[i].add("kept")
            survivors += sum(keep.values())
            held += stores
            if not waves:
                held = _land(held, mask, label, history)
        if waves and ((tile + 1) % (grid * items) == 0 or tile == tiles - 1):
            held = _land(held, mask, label, history)
    return survivors, did


def _land(stores, mask, label, history):
    for kind, where, value in stores:
        if kind == "byte":
            mask[where] = value
        elif kind == "bit":
            mask[where] |= value
        elif kind == "label":
            label.add(where)
        else:
            history[where][value % 256] = value
    return []
