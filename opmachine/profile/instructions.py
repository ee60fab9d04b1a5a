"""The optional `[instructions]` table of a GPU profile: measured costs of warp instructions and
shared-memory accesses (DESIGN.md "Operator machine": the issue server, the ALU pipe and the shared-memory server).

Every cost is in SM cycles, measured with clock64() inside the kernels, and `clock_mhz` is the SM
clock measured in the same run (clock64 cycles over globaltimer ns), so `cycle_ns` turns cycles into
the model's ns. The table names the run that measured it in `[instructions.provenance]` (method,
device, driver, date, command; the device is the profile's [device]). CPU profiles and the papers'
GPU profiles have no such table: `GPUProfile.instructions` is then None.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError

from .schema import Checker, describe

__all__ = ["INSTRUCTION_KEYS", "INSTRUCTION_NOTES", "INSTRUCTION_RUN_KEYS", "OPTIONAL_INSTRUCTION_KEYS",
           "InstructionCosts", "parse_instructions"]

INSTRUCTION_NOTES = {
    "clock_mhz": "measured: SM clock while measuring, clock64 cycles / globaltimer ns, median over the timed launches",
    "sub_partitions": "spec: SM sub-partitions (warp schedulers, each issuing one warp instruction a cycle) per SM",
    "issue_per_cycle": "warp instructions issued per cycle per sub-partition, every SM full of warps of independent adds",
    "alu_latency_cycles": "one warp, a chain of dependent integer adds (IADD3 / IMAD.SHL): cycles per add",
    "shuffle_latency_cycles": "one warp, a chain of dependent __shfl_sync (SHFL.IDX): cycles per shuffle",
    "shared_latency_cycles": "one warp, a conflict-free pointer chase in shared memory (LDS): cycles per load",
    "shared_cycles_per_wavefront": "SM cycles per shared-memory wavefront: conflict-free 32-bit loads, every SM full",
    "shared_conflict_cycles": "[k, SM cycles per warp-level 32-bit shared load] with k lanes on one bank, other words",
    "barrier_cycles": "one __syncthreads() in a 256-thread block, 8 such blocks per SM (the BFS kernels' configuration)",
    "block_scan_cycles": "one block-wide prefix sum of 256 ints as scan.cu does it, 8 blocks of 256 per SM",
    "alu_per_cycle": "ALU-pipe warp instructions per cycle per sub-partition, every SM full of warps of independent LOP3s",
}
"""What each key of [instructions] is: the profile writer puts it after the value as a comment."""
INSTRUCTION_KEYS = tuple(INSTRUCTION_NOTES)
OPTIONAL_INSTRUCTION_KEYS = ("alu_per_cycle",)
"""Keys a table measured before they were added lacks (its costs then leave that server out)."""
INSTRUCTION_RUN_KEYS = ("method", "device", "driver", "date", "command")
"""[instructions.provenance]: how the costs were measured and the run that measured them, all required."""

MAX_CLOCK_MHZ = 10000.0
MAX_SUB_PARTITIONS = 16
MAX_ISSUE_PER_CYCLE = 2.0  # a sub-partition dispatches one warp instruction a cycle (two with dual issue)
MAX_CYCLES = 1e6
_CYCLE_KEYS = ("alu_latency_cycles", "shuffle_latency_cycles", "shared_latency_cycles",
               "shared_cycles_per_wavefront", "barrier_cycles", "block_scan_cycles")


def _positive_sms(sms) -> int:
    if isinstance(sms, bool) or not isinstance(sms, (int, np.integer)) or sms < 1:
        raise InputError(f"sms must be an integer >= 1, got {sms!r}")
    return int(sms)


@dataclass(frozen=True)
class InstructionCosts:
    """Measured instruction-side costs of one GPU, in SM cycles at `clock_mhz` (see INSTRUCTION_NOTES).

    `shared_conflict_cycles` is the table ((k, cycles), ...) of SM cycles per warp-level shared load
    with k lanes on one bank (k = 1 first: conflict-free, one wavefront); `provenance` holds the keys
    of INSTRUCTION_RUN_KEYS.
    """

    clock_mhz: float
    sub_partitions: int
    issue_per_cycle: float
    alu_latency_cycles: float
    shuffle_latency_cycles: float
    shared_latency_cycles: float
    shared_cycles_per_wavefront: float
    shared_conflict_cycles: tuple[tuple[int, float], ...]
    barrier_cycles: float
    block_scan_cycles: float
    alu_per_cycle: float = 0.0  # 0: not measured (no ALU-pipe server)
    provenance: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        table = tuple((int(k), float(c)) for k, c in self.shared_conflict_cycles)
        object.__setattr__(self, "shared_conflict_cycles", table)

    @property
    def cycle_ns(self) -> float:
        """One SM cycle in ns: 1000 / clock_mhz."""
        return 1000.0 / self.clock_mhz

    def issue_ns_per_inst_gpu(self, sms: int) -> float:
        """ns per warp instruction for the whole GPU of `sms` SMs issuing at full rate:
        cycle_ns / (issue_per_cycle x sub_partitions x sms)."""
        return self.cycle_ns / (self.issue_per_cycle * self.sub_partitions * _positive_sms(sms))

    def alu_ns_per_inst_gpu(self, sms: int) -> float:
        """ns per ALU-pipe warp instruction for the whole GPU of `sms` SMs, every ALU pipe busy:
        cycle_ns / (alu_per_cycle x sub_partitions x sms); 0 where the rate was not measured."""
        if self.alu_per_cycle <= 0:
            return 0.0
        return self.cycle_ns / (self.alu_per_cycle * self.sub_partitions * _positive_sms(sms))

    def shared_ns_per_wavefront_gpu(self, sms: int) -> float:
        """ns per shared-memory wavefront for the whole GPU of `sms` SMs, every SM serving its own:
        cycle_ns x shared_cycles_per_wavefront / sms."""
        return self.cycle_ns * self.shared_cycles_per_wavefront / _positive_sms(sms)

    def conflict_wavefronts(self, k):
        """Wavefronts a warp-level shared access with a k-way bank conflict costs, in conflict-free
        accesses: cycles(k) / cycles(1), linear in k between the measured k. `k` is a number or an
        array in 1..the largest measured k (a float k is an average conflict degree)."""
        ways = np.array([w for w, _ in self.shared_conflict_cycles], dtype=np.float64)
        cycles = np.array([c for _, c in self.shared_conflict_cycles], dtype=np.float64)
        try:
            values = np.asarray(k, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"conflict degree k must be a number, got {k!r}") from None
        if isinstance(k, bool) or values.ndim > 1 or not np.all(np.isfinite(values)) \
                or np.any(values < 1) or np.any(values > ways[-1]):
            raise InputError(f"conflict degree k must be in 1..{ways[-1]:g}, got {k!r}")
        out = np.interp(values, ways, cycles) / cycles[0]
        return float(out) if out.ndim == 0 else out

    @property
    def wait_cycles(self) -> tuple[float, float, float]:
        """Latency of a waited-on shared load, shuffle / vote and block barrier, in the order of
        `opmachine.instructions.WAITS`."""
        return (self.shared_latency_cycles, self.shuffle_latency_cycles, self.barrier_cycles)

    def values(self) -> dict:
        """The [instructions] keys (INSTRUCTION_KEYS; an optional one only when measured) and their values, in
        order; the conflict table as a list of [k, cycles] pairs."""
        out = {key: getattr(self, key) for key in INSTRUCTION_KEYS
               if key not in OPTIONAL_INSTRUCTION_KEYS or getattr(self, key) > 0}
        out["shared_conflict_cycles"] = [[k, c] for k, c in self.shared_conflict_cycles]
        return out


def _bounded(check: Checker, value, key: str, high: float, unit: str = "") -> float:
    value = check.number(value, key)
    if value > high:
        check.fail(key, f"must be at most {high:g}{unit}, got {value:g}")
    return value


def _conflict_table(check: Checker, value, key: str, warp_size: int) -> tuple[tuple[int, float], ...]:
    if not isinstance(value, list):
        check.fail(key, f"must be an array of [k, cycles] pairs, got {describe(value)}")
    if len(value) < 2:
        check.fail(key, f"needs at least 2 [k, cycles] pairs (k = 1 and a conflict), got {len(value)}")
    table = []
    for i, pair in enumerate(value):
        where = f"{key}[{i}]"
        if not isinstance(pair, list) or len(pair) != 2:
            check.fail(where, f"must be a pair [k, cycles], got {describe(pair)}")
        k = pair[0]
        if isinstance(k, bool) or not isinstance(k, int):
            check.fail(where, f"k must be an integer, got {describe(k)}")
        if not 1 <= k <= warp_size:
            check.fail(where, f"k must be in 1..{warp_size} (lanes of a warp on one bank), got {k}")
        cycles = _bounded(check, pair[1], where, MAX_CYCLES, " cycles")
        if table and k <= table[-1][0]:
            check.fail(where, f"k must increase (k = {k} after {table[-1][0]})")
        if table and cycles < table[-1][1]:
            check.fail(where, f"cycles must not fall as k grows ({cycles:g} at k = {k} after {table[-1][1]:g})")
        table.append((k, cycles))
    if table[0][0] != 1:
        check.fail(f"{key}[0]", f"must be k = 1 (the conflict-free access), got k = {table[0][0]}")
    return tuple(table)


def parse_instructions(check: Checker, table, device_name: str, warp_size: int) -> InstructionCosts:
    """The InstructionCosts of an [instructions] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "instructions")
    required = tuple(key for key in INSTRUCTION_KEYS if key not in OPTIONAL_INSTRUCTION_KEYS)
    check.keys(table, "instructions", required + ("provenance",), OPTIONAL_INSTRUCTION_KEYS)
    values = {"clock_mhz": _bounded(check, table["clock_mhz"], "instructions.clock_mhz", MAX_CLOCK_MHZ, " MHz")}
    sub = check.positive_int(table["sub_partitions"], "instructions.sub_partitions")
    if sub > MAX_SUB_PARTITIONS:
        check.fail("instructions.sub_partitions", f"must be at most {MAX_SUB_PARTITIONS}, got {sub}")
    values["sub_partitions"] = sub
    values["issue_per_cycle"] = _bounded(check, table["issue_per_cycle"], "instructions.issue_per_cycle",
                                         MAX_ISSUE_PER_CYCLE, " warp instructions a cycle per sub-partition")
    if "alu_per_cycle" in table:
        values["alu_per_cycle"] = _bounded(check, table["alu_per_cycle"], "instructions.alu_per_cycle",
                                           MAX_ISSUE_PER_CYCLE, " ALU-pipe warp instructions a cycle per sub-partition")
    for key in _CYCLE_KEYS:
        values[key] = _bounded(check, table[key], f"instructions.{key}", MAX_CYCLES, " cycles")
    conflicts = _conflict_table(check, table["shared_conflict_cycles"], "instructions.shared_conflict_cycles",
                                warp_size)
    if not math.isclose(conflicts[0][1], values["shared_cycles_per_wavefront"], rel_tol=1e-9):
        check.fail("instructions.shared_conflict_cycles[0]",
                   f"cycles at k = 1 ({conflicts[0][1]:g}) must equal shared_cycles_per_wavefront "
                   f"({values['shared_cycles_per_wavefront']:g}): a conflict-free access is one wavefront")
    values["shared_conflict_cycles"] = conflicts
    provenance = check.run_provenance(table["provenance"], "instructions.provenance", INSTRUCTION_RUN_KEYS,
                                      device_name, "the costs")
    return InstructionCosts(**values, provenance=provenance)
