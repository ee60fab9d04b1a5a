"""Basic blocks of a SASS listing and the trip event that says how often each one runs per warp.

The control-flow graph splits the listing at labels and after branches and exits. Loops are the
natural loops of its back edges (a branch to a block that dominates it); a loop runs as often as
the `// trips: EVENT` marker on its back-edge branch's source line says (`step`, `round`, `search`,
...). A marker on a line whose branches only jump forward marks a conditional region instead: the
blocks that branch skips (`if (threadIdx.x == 0) ...  // trips: block`). Each block takes the event
of the innermost loop or region holding it, and outside them all `warp` (once per launched warp), or
`active` after an early exit (`@P0 EXIT`: once per warp that has work, `for` loops' first test).
Blocks reached only through `BRA.DIV` (the fallback a diverged warp takes before a warp-wide
shuffle) never run in a converged warp and count zero, as do blocks no path reaches. A loop with no
marker is an error: its trip count would be a guess.

The `round` loop's preheader (the blocks between a conditional branch that jumps past the whole loop,
its first test, and the loop's header) runs only in the steps where some lane enters the loop:
event ENTERED, whose trips the lanes give (`trips.lane_divergence`); where they are not counted, the
event the preheader would otherwise take stands in for it (`Block.fallback`).
"""
from __future__ import annotations

from dataclasses import dataclass

from simdmodel.errors import InputError

from .listing import Instruction, Listing

WARP = "warp"
ACTIVE = "active"
NEVER = "never"
ENTERED = "entered"


@dataclass(frozen=True)
class Block:
    """Instructions first .. end - 1 of the listing (indices), and the trip event that runs it."""

    first: int
    end: int
    event: str
    fallback: str | None = None
    """For an ENTERED block, the event it takes where the lanes are not counted."""


def _blocks(listing: Listing) -> tuple[list[int], dict[int, int]]:
    """Leader indices, and instruction index -> block index."""
    code = listing.instructions
    index_of = {ins.offset: i for i, ins in enumerate(code)}
    leaders = {0}
    for offset in listing.labels.values():
        if offset in index_of:
            leaders.add(index_of[offset])
    for i, ins in enumerate(code):
        if ins.op in ("BRA", "EXIT", "RET", "BRX", "JMP") and i + 1 < len(code):
            leaders.add(i + 1)
    starts = sorted(leaders)
    block_of = {}
    for b, start in enumerate(starts):
        end = starts[b + 1] if b + 1 < len(starts) else len(code)
        for i in range(start, end):
            block_of[i] = b
    return starts, block_of


def target_index(listing: Listing, ins: Instruction, index_of: dict) -> int:
    """Index of the instruction that branch `ins` jumps to (`index_of`: offset -> index); an unknown
    label is an InputError."""
    offset = listing.labels.get(ins.target)
    if offset is None or offset not in index_of:
        raise InputError(f"{listing.kernel}: branch at {ins.offset:#06x} to unknown label {ins.target}")
    return index_of[offset]


def _predecessors(succ: list[list[int]], reachable: list[int]) -> dict[int, list[int]]:
    pred = {b: [] for b in reachable}
    for b in reachable:
        for s in succ[b]:
            if s in pred:
                pred[s].append(b)
    return pred


def _dominators(pred: dict[int, list[int]], reachable: list[int]) -> dict[int, set[int]]:
    everything = set(reachable)
    dom = {b: set(everything) for b in reachable}
    dom[reachable[0]] = {reachable[0]}
    changed = True
    while changed:
        changed = False
        for b in reachable[1:]:
            new = set.intersection(*(dom[p] for p in pred[b])) if pred[b] else set()
            new = new | {b}
            if new != dom[b]:
                dom[b], changed = new, True
    return dom


def block_events(listing: Listing) -> list[Block]:
    """The listing's basic blocks with the trip event of each (see the module docstring)."""
    code = listing.instructions
    index_of = {ins.offset: i for i, ins in enumerate(code)}
    starts, block_of = _blocks(listing)
    ends = starts[1:] + [len(code)]
    count = len(starts)
    succ: list[list[int]] = [[] for _ in range(count)]
    for b in range(count):
        last = code[ends[b] - 1]
        falls = b + 1 < count
        if last.op == "BRA" and last.target:
            target = block_of[target_index(listing, last, index_of)]
            if not last.divergent_only:
                succ[b].append(target)
            falls = falls and last.conditional
        elif last.op in ("EXIT", "RET"):
            falls = falls and bool(last.guard)
        if falls:
            succ[b].append(b + 1)
    order, seen, stack = [], {0}, [0]  # reachable blocks, entry first
    while stack:
        b = stack.pop()
        order.append(b)
        for s in succ[b]:
            if s not in seen:
                seen.add(s)
                stack.append(s)
    reachable = [0] + sorted(seen - {0})
    pred = _predecessors(succ, reachable)
    dom = _dominators(pred, reachable)
    # natural loops, one per header: body and the marker of its back-edge branches
    loops: dict[int, tuple[set[int], str | None, int]] = {}
    for b in reachable:
        for h in succ[b]:
            if h in dom[b]:
                body = {h, b}
                work = [b] if b != h else []  # a one-block loop has no other members
                while work:
                    x = work.pop()
                    for p in pred[x]:
                        if p not in body:
                            body.add(p)
                            work.append(p)
                branch = code[ends[b] - 1]
                event = listing.marker_of(branch)
                old = loops.get(h)
                if old is not None:
                    body |= old[0]
                    event = event or old[1]
                loops[h] = (body, event, branch.offset)
    loop_lines = set()
    for h, (body, event, offset) in loops.items():
        if event is None:
            branch = code[index_of[offset]]
            where = ", ".join(f"{f}:{n}" for f, n in branch.frames) or "no line info"
            raise InputError(f"{listing.kernel}: the loop whose back edge is at {offset:#06x} ({where}) has no "
                             "`// trips:` marker, so its trip count is unknown")
        loop_lines.update(code[index_of[offset]].frames[:1])
    # forward conditional branches on a marked line that is no loop's: the blocks they skip
    regions = []
    for i, ins in enumerate(code):
        if ins.op != "BRA" or not ins.target or ins.divergent_only or not ins.conditional:
            continue
        target = target_index(listing, ins, index_of)
        event = listing.marker_of(ins)
        if target > i and event is not None and not (set(ins.frames) & loop_lines):
            regions.append((i + 1, target, event))
    exits = {b for b in reachable if code[ends[b] - 1].op == "EXIT" and code[ends[b] - 1].guard}
    blocks = []
    for b in range(count):
        if b not in seen:
            blocks.append(Block(starts[b], ends[b], NEVER))
            continue
        best, event = None, WARP
        for body, loop_event, _ in loops.values():
            if b in body:
                size = sum(ends[x] - starts[x] for x in body)
                if best is None or size < best:
                    best, event = size, loop_event
        for first, end, region_event in regions:
            if first <= starts[b] and ends[b] <= end:
                size = end - first
                if best is None or size < best:
                    best, event = size, region_event
        if event == WARP and any(x in dom[b] and x != b for x in exits):
            event = ACTIVE
        blocks.append(Block(starts[b], ends[b], event))
    return _mark_preheader(listing, blocks, loops, starts, ends, index_of)


def _mark_preheader(listing: Listing, blocks: list[Block], loops: dict, starts: list[int], ends: list[int],
                    index_of: dict):
    """`blocks` with the `round` loop's preheader marked ENTERED (module docstring): the blocks laid out
    after a block ending in a conditional forward branch past the loop's last instruction, up to the
    loop's header, none of them in the loop."""
    code = listing.instructions
    for header, (body, event, offset) in loops.items():
        if event != "round":
            continue
        last = index_of[offset]
        guard = header - 1
        while guard >= 0 and guard not in body:
            branch = code[ends[guard] - 1]
            if (branch.op == "BRA" and branch.target and branch.conditional and not branch.divergent_only
                    and target_index(listing, branch, index_of) > last):
                break
            guard -= 1
        if guard < 0 or guard in body or guard == header - 1:
            continue
        for b in range(guard + 1, header):
            if blocks[b].event != NEVER:
                blocks[b] = Block(starts[b], ends[b], ENTERED, blocks[b].event)
    return blocks
