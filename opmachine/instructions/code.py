"""A kernel's compiled code reduced to what one trip of each event costs: warp instructions by class,
scheduled stall cycles, and the variable-latency instructions its path waits on.

`kernel_code("ws", "sm_90")` reads the package's listing (`listing.load_listing`), finds the trip
event of every basic block (`blocks.block_events`) and sums, per event, the block's instructions by
class (`listing.CLASSES`), the stall cycles the compiler scheduled after each (a lone warp's issue
time through fixed-latency dependences) and its shared-memory loads, shuffles / votes and block
barriers, whose latency the profile's microbenchmarks give. A launch then costs, per warp,
sum over events of trips(event) x these rows (`warp_instructions`).
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .blocks import NEVER, block_events
from .listing import CLASSES, load_listing

DIVERGENCE = ("parked", "regroup")
"""Events of a warp whose lanes leave a loop at different times and meet again at its `WARPSYNC.ALL`
(independent thread scheduling): `parked`, each loop iteration run while some lanes already wait at
the sync (they re-issue the WARPSYNC once per iteration: one instruction); `regroup`, each extra group
of lanes that reaches the sync on its own (it runs the code from the loop's exit to the sync). Their
trips come from the lanes' own trip counts (`trips.lane_divergence`); a kernel without a WARPSYNC.ALL
has neither event, and a launch whose lanes are not counted runs them zero times."""
WAITS = ("shared_ld", "shuffle", "barrier")
"""Variable-latency instructions a warp's path waits on beyond their scheduled stall: shared-memory
loads (LDS), shuffles and votes (SHFL, VOTE), block barriers (BAR)."""


@dataclass(frozen=True)
class KernelCode:
    """Per trip event: warp instructions by class (events x CLASSES), stall cycles (events) and
    waited-on variable-latency instructions (events x WAITS)."""

    kernel: str
    arch: str
    events: tuple[str, ...]
    counts: np.ndarray
    stall_cycles: np.ndarray
    waits: np.ndarray

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
        return {**dict(zip(CLASSES, self.counts[i].tolist())), "stall_cycles": float(self.stall_cycles[i]),
                **{f"wait_{w}": int(self.waits[i, k]) for k, w in enumerate(WAITS)}}


def _wait_kind(ins) -> int:
    if ins.cls == "shared_ld":
        return 0
    if ins.op in ("SHFL", "VOTE", "VOTEU", "MATCH"):
        return 1
    if ins.op == "BAR":
        return 2
    return -1


def _divergence_code(listing) -> dict:
    """The DIVERGENCE events' instructions: (event -> [(instruction, stall counted)]); empty without a
    WARPSYNC.ALL. `regroup` runs from the fall-through region's start (after the last branch or exit
    before the sync) through the sync; `parked` re-issues the sync alone, off the warp's own path."""
    code = listing.instructions
    sync = next((i for i, ins in enumerate(code) if ins.opcode == "WARPSYNC.ALL" and not ins.guard), None)
    if sync is None:
        return {}
    start = sync
    while start > 0 and code[start - 1].op not in ("BRA", "EXIT", "RET", "CALL"):
        start -= 1
    return {"parked": [(code[sync], False)], "regroup": [(ins, True) for ins in code[start:sync + 1]]}


def code_from_listing(listing, arch: str) -> KernelCode:
    """`KernelCode` of a parsed listing."""
    blocks = [b for b in block_events(listing) if b.event != NEVER]
    divergence = _divergence_code(listing)
    events = tuple(dict.fromkeys(b.event for b in blocks)) + tuple(divergence)
    counts = np.zeros((len(events), len(CLASSES)), dtype=np.int64)
    stalls = np.zeros(len(events), dtype=np.float64)
    waits = np.zeros((len(events), len(WAITS)), dtype=np.int64)
    runs = [(b.event, [(ins, True) for ins in listing.instructions[b.first:b.end]]) for b in blocks]
    for event, instructions in runs + list(divergence.items()):
        e = events.index(event)
        for ins, on_path in instructions:
            counts[e, CLASSES.index(ins.cls)] += 1
            if on_path:
                stalls[e] += ins.stall
                kind = _wait_kind(ins)
                if kind >= 0:
                    waits[e, kind] += 1
    return KernelCode(listing.kernel, arch, events, counts, stalls, waits)


@functools.cache
def kernel_code(kernel: str, arch: str) -> KernelCode:
    """The package listing's `KernelCode` of `kernel` (topo, compact, sm-S, ws, scan) for `arch`."""
    return code_from_listing(load_listing(kernel, arch), arch)


def warp_instructions(code: KernelCode, trips: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per launched warp: instructions by class (warps x CLASSES), stall cycles and waits (warps x WAITS),
    from `trips` (event -> trips per warp, one array per event of `code`)."""
    missing = [e for e in code.events if e not in trips and e not in DIVERGENCE]
    if missing:
        raise KeyError(f"{code.kernel}: no trip counts for event(s) {', '.join(missing)}")
    warps = len(next(iter(trips.values())))
    matrix = np.vstack([np.asarray(trips[e], dtype=np.float64) if e in trips else np.zeros(warps)
                        for e in code.events])  # events x warps
    return matrix.T @ code.counts, matrix.T @ code.stall_cycles, matrix.T @ code.waits
