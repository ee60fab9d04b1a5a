"""A kernel's compiled code reduced to what one trip of each event costs: warp instructions by class,
scheduled stall cycles, and the variable-latency instructions its path waits on.

`kernel_code("ws", "sm_90")` reads the package's listing (`listing.load_listing`), finds the trip
event of every basic block (`blocks.block_events`) and sums, per event, the block's instructions by
class (`listing.CLASSES`), the stall cycles the compiler scheduled after each (a lone warp's issue
time through fixed-latency dependences) and its shared-memory loads, shuffles / votes and block
barriers, whose latency the profile's microbenchmarks give. A launch then costs, per warp,
sum over events of trips(event) x these rows (`instructions.WarpInstructions`). A region the compiler
copied into several loops whose trips count all its copies' runs together (ONE_COPY_A_TRIP) costs the
copies' mean a trip.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from simdmodel.errors import InputError

from .blocks import NEVER, block_events, target_index
from .listing import CLASSES, load_listing

DIVERGENCE = ("parked", "regroup", "diverged")
"""Events of a warp whose lanes leave its per-lane loop (the `round` loop) at different times and meet
again at the warp sync after it (independent thread scheduling). Where that sync is a `WARPSYNC.ALL`
(topo, sm-S): `parked`, each loop iteration run while some lanes already wait at it (they re-issue it
once per iteration: one instruction), and `regroup`, each extra group of lanes that reaches it on its
own (that group runs the code from the loop's exit to the sync). Where it is a `BRA.DIV` to the
`WARPSYNC.COLLECTIVE` fallback of `__syncwarp` (ws: the lanes wait at the loop's `BSYNC` without
re-issuing, so no `parked`): `regroup`, each extra group, which runs the code from the loop's exit to
the `BRA.DIV` and the fallback's per-group part (up to its `WARPSYNC.COLLECTIVE`, and from its
`ENDCOLLECTIVE` to its `BSYNC`), and `diverged`, once per step whose lanes leave in two or more
groups: the first group's fallback and the collective's body run instead of the converged path from
the `BRA.DIV` back to the join (its row is the one less the other). Measured per instruction on an
H100 (tests/fixtures/instructions/h100_ws_divergence/). Their trips come from the lanes' own trip
counts (`trips.lane_divergence`); a launch whose lanes are not counted runs them zero times."""
WAITS = ("shared_ld", "shuffle", "barrier")
"""Variable-latency instructions a warp's path waits on beyond their scheduled stall: shared-memory
loads (LDS), shuffles and votes (SHFL, VOTE), block barriers (BAR)."""


@dataclass(frozen=True)
class KernelCode:
    """Per trip event: warp instructions by class (events x CLASSES), stall cycles (events),
    waited-on variable-latency instructions (events x WAITS) and the ALU pipe's instructions (events,
    `listing.ALU_PIPE`); whole numbers but for the events of ONE_COPY_A_TRIP, whose copies' mean they are."""

    kernel: str
    arch: str
    events: tuple[str, ...]
    counts: np.ndarray
    stall_cycles: np.ndarray
    waits: np.ndarray
    alu_pipe: np.ndarray
    fallbacks: tuple[tuple[str, str], ...] = ()
    """(event, the event whose trips stand in for it where the launch's trips lack it): the round loop's
    preheader (`blocks.ENTERED`) where the lanes are not counted."""

    def row(self, event: str) -> int:
        return self.events.index(event)

    def path_cycles(self, event: str, wait_cycles) -> float:
        """One trip of `event` on a lone warp's path: its scheduled stall cycles plus the latency of the
        variable-latency instructions it waits on (`wait_cycles`, in WAITS order)."""
        i = self.row(event)
        return float(self.stall_cycles[i] + self.waits[i] @ np.asarray(wait_cycles, dtype=np.float64))

    def per_trip(self, event: str) -> dict:
        """One trip of `event`: instructions by class, stall cycles, waits (a readable summary)."""
        i = self.row(event)
        return {**dict(zip(CLASSES, self.counts[i].tolist())), "alu_pipe": float(self.alu_pipe[i]),
                "stall_cycles": float(self.stall_cycles[i]),
                **{f"wait_{w}": float(self.waits[i, k]) for k, w in enumerate(WAITS)}}


def _wait_kind(ins) -> int:
    if ins.cls == "shared_ld":
        return 0
    if ins.op in ("SHFL", "VOTE", "VOTEU", "MATCH"):
        return 1
    if ins.op == "BAR":
        return 2
    return -1


def _region_start(code, i: int) -> int:
    """Index of the first instruction of the straight-line run that ends at `i` (after the last branch
    or exit before it)."""
    while i > 0 and code[i - 1].op not in ("BRA", "EXIT", "RET", "CALL"):
        i -= 1
    return i


def _first(indices, listing, what: str) -> int:
    found = next(iter(indices), None)
    if found is None:
        raise InputError(f"{listing.kernel}: the BRA.DIV after the `round` loop leads to no __syncwarp fallback "
                         f"({what} missing)")
    return found


def divergence_code(listing) -> dict:
    """The DIVERGENCE events' instructions: event -> [(instruction, on the warp's path, sign)]; empty
    when no warp sync follows the `round` loop. The sync is the first unguarded `WARPSYNC.ALL` or
    `BRA.DIV` after the loop's last back-edge branch."""
    code = listing.instructions
    index_of = {ins.offset: i for i, ins in enumerate(code)}
    loop_end = max((i for i, ins in enumerate(code) if ins.op == "BRA" and ins.target and not ins.divergent_only
                    and listing.marker_of(ins) == "round" and target_index(listing, ins, index_of) <= i),
                   default=None)
    if loop_end is None:
        return {}
    sync = next((i for i in range(loop_end + 1, len(code))
                 if (code[i].opcode == "WARPSYNC.ALL" and not code[i].guard) or code[i].divergent_only), None)
    if sync is None:
        return {}
    exit_run = [(ins, True, 1) for ins in code[_region_start(code, sync):sync + 1]]
    if not code[sync].divergent_only:
        return {"parked": [(code[sync], False, 1)], "regroup": exit_run}
    slow = target_index(listing, code[sync], index_of)
    back = _first((i for i in range(slow, len(code)) if code[i].op == "BRA" and not code[i].conditional), listing,
                  "the branch back")
    join = target_index(listing, code[back], index_of)
    begin = _first((i for i in range(slow, back) if code[i].opcode.startswith("WARPSYNC.COLLECTIVE")), listing,
                   "WARPSYNC.COLLECTIVE")
    end = _first((i for i in range(begin, back) if code[i].op == "ENDCOLLECTIVE"), listing, "ENDCOLLECTIVE")
    close = _first((i for i in range(end, back) if code[i].op == "BSYNC"), listing, "BSYNC")
    per_group = [(ins, True, 1) for ins in code[slow:begin + 1] + code[end + 1:close + 1]]
    once = [(ins, True, 1) for ins in code[begin + 1:end + 1] + code[close + 1:back + 1]]
    converged = [(ins, True, -1) for ins in code[sync + 1:join]]
    return {"regroup": exit_run + per_group, "diverged": per_group + once + converged}


ONE_COPY_A_TRIP = ("enqueue", "probe", "claim", "bitstore")
"""Region events whose code the compiler copied into several places of which one trip runs one: a
fused lookup's enqueue (`couplings.cu`'s `warp_enqueue`), inlined into each gathering phase's loop, and a
lookup's label read, compare-and-swap and bitmask store (`status_lookup.cuh`), inlined with the lookup and
unrolled over a contraction's ids a thread. Their trips count every copy's runs together, so a trip costs
the copies' mean."""


def _copies(listing, event: str) -> int:
    """How many forward-branch regions of the listing carry the marker `event` (its copies)."""
    return sum(1 for ins in listing.instructions
               if ins.op == "BRA" and ins.target and ins.conditional and not ins.divergent_only
               and listing.marker_of(ins) == event and listing.labels.get(ins.target, -1) > ins.offset)


def code_from_listing(listing, arch: str) -> KernelCode:
    """`KernelCode` of a parsed listing."""
    blocks = [b for b in block_events(listing) if b.event != NEVER]
    divergence = divergence_code(listing)
    events = tuple(dict.fromkeys(b.event for b in blocks)) + tuple(divergence)
    counts = np.zeros((len(events), len(CLASSES)), dtype=np.float64)
    stalls = np.zeros(len(events), dtype=np.float64)
    waits = np.zeros((len(events), len(WAITS)), dtype=np.float64)
    alu = np.zeros(len(events), dtype=np.float64)
    runs = [(b.event, [(ins, True, 1) for ins in listing.instructions[b.first:b.end]]) for b in blocks]
    for event, instructions in runs + list(divergence.items()):
        e = events.index(event)
        for ins, on_path, sign in instructions:
            counts[e, CLASSES.index(ins.cls)] += sign
            alu[e] += sign * ins.alu_pipe
            if on_path:
                stalls[e] += sign * ins.stall
                kind = _wait_kind(ins)
                if kind >= 0:
                    waits[e, kind] += sign
    for event in ONE_COPY_A_TRIP:
        if event in events and (copies := _copies(listing, event)) > 1:
            e = events.index(event)
            counts[e], stalls[e], waits[e], alu[e] = counts[e] / copies, stalls[e] / copies, waits[e] / copies, \
                alu[e] / copies
    fallbacks = tuple(dict.fromkeys((b.event, b.fallback) for b in blocks if b.fallback))
    if len({event for event, _ in fallbacks}) != len(fallbacks):
        raise InputError(f"{listing.kernel}: the round loop's preheader sits in two different trip events")
    return KernelCode(listing.kernel, arch, events, counts, stalls, waits, alu, fallbacks)


@functools.cache
def kernel_code(kernel: str, arch: str) -> KernelCode:
    """The package listing's `KernelCode` of `kernel` (topo, compact, sm-S, ws, scan) for `arch`."""
    return code_from_listing(load_listing(kernel, arch), arch)


def trip_matrix(code: KernelCode, trips: dict) -> np.ndarray:
    """Events x warps: the trips of each of `code.events` per launched warp, from `trips` (event -> trips
    per warp; an event of `code.fallbacks` it lacks runs its stand-in's trips)."""
    trips = {**{e: trips[f] for e, f in code.fallbacks if e not in trips and f in trips}, **trips}
    missing = [e for e in code.events if e not in trips and e not in DIVERGENCE]
    if missing:
        raise KeyError(f"{code.kernel}: no trip counts for event(s) {', '.join(missing)}")
    warps = len(next(iter(trips.values())))
    return np.vstack([np.asarray(trips[e], dtype=np.float64) if e in trips else np.zeros(warps)
                      for e in code.events])
