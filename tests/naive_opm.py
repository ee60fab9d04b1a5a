"""Slow, obviously-correct references for the operator machine's job generators.

Each kernel is replayed lane by lane from its pseudo-code: every warp instruction is a job when at
least one lane executes it, and its sectors are the set of 32-byte sectors the active lanes touch.
"""
from __future__ import annotations

ANI, NF1, ERL, EDL, NF2, OP = range(6)


def sector(base, index):
    return base + index // 8


class Replay:
    """Jobs in generation order as (server, warp, sorted sectors), and the stores seen so far."""

    def __init__(self, indptr, indices, levels, level, base):
        self.indptr, self.indices, self.levels, self.level, self.base = indptr, indices, levels, level, base
        self.jobs = []
        self.stored = set()

    def job(self, server, warp, array, elements):
        self.jobs.append((server, warp, sorted({sector(self.base[array], int(x)) for x in elements})))

    def edge_iteration(self, warp, edges):
        """EDL, NF2 and (when a lane finds an unvisited vertex) OP for one lockstep iteration."""
        self.job(EDL, warp, "edge_dst", edges)
        dsts = [int(self.indices[e]) for e in edges]
        self.job(NF2, warp, "level", dsts)
        stores = [d for d in dsts if self.levels[d] > self.level and d not in self.stored]
        if stores:
            self.job(OP, warp, "level", stores)
        self.stored.update(stores)

    def start_end(self, v):
        return int(self.indptr[v]), int(self.indptr[v + 1])


def topo(replay, n, warps):
    """Listing 2 of seed 003, lane by lane."""
    for chunk in range(-(-n // 32)):
        warp = chunk % warps
        nodes = [chunk * 32 + lane for lane in range(32) if chunk * 32 + lane < n]
        replay.job(ANI, warp, "num_nodes", [0])
        replay.job(NF1, warp, "level", nodes)
        active = [v for v in nodes if replay.levels[v] == replay.level]
        if not active:
            continue
        replay.job(ERL, warp, "row_start", active)
        replay.job(ERL, warp, "row_start", [v + 1 for v in active])
        cursor = {v: replay.start_end(v)[0] for v in active}
        while True:
            edges = [cursor[v] for v in active if cursor[v] < replay.start_end(v)[1]]
            if not edges:
                break
            replay.edge_iteration(warp, edges)
            for v in active:
                cursor[v] += 1


def group(replay, front, size, warps):
    groups = 32 // size
    for chunk in range(-(-len(front) // groups)):
        warp = chunk % warps
        positions = [p for p in range(chunk * groups, chunk * groups + groups) if p < len(front)]
        vertices = [int(front[p]) for p in positions]
        replay.job(ANI, warp, "queue", positions)
        replay.job(ERL, warp, "row_start", vertices)
        replay.job(ERL, warp, "row_start", [v + 1 for v in vertices])
        step = 0
        while True:
            edges = []
            for v in vertices:
                start, end = replay.start_end(v)
                edges.extend(e for e in (start + step * size + j for j in range(size)) if e < end)
            if not edges:
                break
            replay.edge_iteration(warp, edges)
            step += 1


def _concatenated(replay, vertices):
    return [e for v in vertices for e in range(*replay.start_end(v))]


def ws(replay, front, warps):
    for chunk in range(-(-len(front) // 32)):
        warp = chunk % warps
        positions = list(range(chunk * 32, min(chunk * 32 + 32, len(front))))
        vertices = [int(front[p]) for p in positions]
        replay.job(ANI, warp, "queue", positions)
        replay.job(ERL, warp, "row_start", vertices)
        replay.job(ERL, warp, "row_start", [v + 1 for v in vertices])
        edges = _concatenated(replay, vertices)
        for first in range(0, len(edges), 32):
            replay.edge_iteration(warp, edges[first:first + 32])


def scan(replay, front, cta, grid):
    for chunk in range(-(-len(front) // cta)):
        block = chunk % grid
        positions = list(range(chunk * cta, min(chunk * cta + cta, len(front))))
        vertices = [int(front[p]) for p in positions]
        for j in range(cta // 32):
            mine = positions[32 * j:32 * j + 32]
            if not mine:
                break
            warp = block * (cta // 32) + j
            replay.job(ANI, warp, "queue", mine)
            replay.job(ERL, warp, "row_start", [int(front[p]) for p in mine])
            replay.job(ERL, warp, "row_start", [int(front[p]) + 1 for p in mine])
        edges = _concatenated(replay, vertices)
        r = 0
        while r * cta < len(edges):
            for j in range(cta // 32):
                lanes = [edges[i] for i in range(r * cta + 32 * j, r * cta + 32 * j + 32) if i < len(edges)]
                if lanes:
                    replay.edge_iteration(block * (cta // 32) + j, lanes)
            r += 1

