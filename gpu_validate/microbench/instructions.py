"""Instruction-side microbenchmarks: the [instructions] section of a GPU profile (DESIGN.md "Operator
machine": warp instructions go to an issue server, shared-memory accesses to a shared-memory server).

The kernels (`gpu_validate/cuda/inst_microbench.cu`) time themselves with clock64() (SM cycles) and
globaltimer (ns) between two __syncthreads(); each block records its SM, start and end. Per SM, the
span from its first block's start to its last block's end is that SM's time (clock64 counts per SM);
a launch's `cycles` and `ns` are the medians over its SMs, and cycles / ns is the SM clock. Eight
tests (TESTS), each a set of launches of about `target_ms` after a probe and a warm-up, `repeats`
timed launches (CUDA events around each too):

- alu_latency, shuffle_latency, shared_latency: one warp, one chain of dependent adds, shuffles or
  shared loads; cycles / ops = the latency of one;
- issue: 8 blocks of 256 threads on every SM (the BFS kernels' configuration, 64 warps per SM on
  Hopper), 8 independent add chains a thread: ops = warp instructions per SM, and
  issue_per_cycle = ops / cycles / sub_partitions;
- alu_pipe: the same blocks, 8 independent chains of LOP3s a thread (logic ops, which only the ALU pipe
  executes; ptxas sends adds to the FMA pipe as well): alu_per_cycle = ops / cycles / sub_partitions;
- shared: the same blocks, 4 independent shared-memory chases a thread, k lanes of a warp on one
  bank (k = 1, 2, ..., 32; CONFLICT_WAYS): SM cycles per warp-level load; k = 1 is one wavefront;
- barrier, block_scan: the same blocks; cycles per __syncthreads() and per block prefix sum as each
  block sees it, all 8 blocks of the SM doing the same.

The derived numbers are the medians over repeats of cycles / ops per (test, ways), 6 significant
digits (`derive`). The raw table (RAW_COLUMNS, one row per timed launch) is plain pandas, checked by
`check_raw` and read back by `read_raw` (lines starting with '#' are comments).
"""
from __future__ import annotations

import importlib.resources
import math
import textwrap
from dataclasses import dataclass

import numpy as np
import pandas as pd

from simdmodel.errors import InputError

from ..device import require_gpu
from .raw import read_table, refuse_first, typed_table

ALU_UNROLL = 128
SHFL_UNROLL = 64
SHARED_UNROLL = 64
BARRIER_UNROLL = 32
"""Operations per step of each kernel: the #defines IM_*_UNROLL of inst_microbench.cu."""
BLOCK_THREADS = 256
"""Threads per block of the many-warp tests: BFS_BLOCK of bfs_common.cuh."""
CONFLICT_WAYS = (1, 2, 4, 8, 16, 32)
"""Lanes of a warp on one shared-memory bank in the conflict test (k = 1: conflict-free)."""
SUB_PARTITIONS = {7: 4, 8: 4, 9: 4, 10: 4, 12: 4}
"""Spec, by compute capability major: Volta, Turing, Ampere, Ada, Hopper and Blackwell SMs have four
sub-partitions (processing blocks), each with its own warp scheduler issuing one warp instruction a
cycle."""


@dataclass(frozen=True)
class Test:
    """One test: its kernel, whether it runs one warp (else every SM full of BLOCK_THREADS blocks),
    the operations of one step, and what they are counted over (`warp`: the one warp's chain;
    `sm`: every warp of an SM; `block`: one block)."""

    kernel: str
    one_warp: bool
    per_step: int
    per: str


TESTS = {
    "alu_latency": Test("im_alu_1", True, ALU_UNROLL, "warp"),
    "issue": Test("im_alu_8", False, 8 * ALU_UNROLL, "sm"),
    "alu_pipe": Test("im_lop_8", False, 8 * ALU_UNROLL, "sm"),
    "shuffle_latency": Test("im_shfl", True, SHFL_UNROLL, "warp"),
    "shared_latency": Test("im_shared_1", True, SHARED_UNROLL, "warp"),
    "shared": Test("im_shared_4", False, 4 * SHARED_UNROLL, "sm"),
    "barrier": Test("im_barrier", False, BARRIER_UNROLL, "block"),
    "block_scan": Test("im_block_scan", False, 1, "block"),
}
"""The tests, by the name the raw table gives them."""
OPTIONAL_TESTS = ("alu_pipe",)
"""Tests a raw table measured before they were added lacks (its values then lack theirs)."""
RAW_COLUMNS = ("test", "ways", "sms", "blocks_per_sm", "threads", "ops", "cycles", "ns", "event_ns", "cycles_per_op")
"""One row per timed launch: `ops` operations (see Test.per) took `cycles` SM cycles and `ns`
globaltimer ns (medians over the `sms` SMs of the launch, each running `blocks_per_sm` blocks of
`threads`), `event_ns` the CUDA-event time of the whole launch, cycles_per_op = cycles / ops."""
SIGNIFICANT = 6


@dataclass(frozen=True)
class Setup:
    """What one measurement runs: the GPU's SMs, blocks per SM, repeats, launch length and the
    sub-partitions per SM (SUB_PARTITIONS) the issue rate is divided by."""

    sms: int
    blocks_per_sm: int
    repeats: int
    target_ns: float
    sub_partitions: int
    ways: tuple[int, ...] = CONFLICT_WAYS

    def as_comment(self) -> dict:
        return {"blocks_per_sm": self.blocks_per_sm, "repeats": self.repeats, "target_ms": self.target_ns / 1e6,
                "sub_partitions": self.sub_partitions}


def make_setup(profile, quick: bool = False, repeats: int | None = None, target_ms: float | None = None,
               sub_partitions: int | None = None) -> Setup:
    """The measurement for GPU profile `profile` (its SMs, and blocks of 256 threads per SM as the BFS
    kernels run them): 5 repeats of about 2 ms launches (3 of 0.5 ms with `quick`). The sub-partitions
    per SM: `sub_partitions` when given, else the profile's own [instructions] value, else the spec
    for its compute capability (SUB_PARTITIONS)."""
    if repeats is not None and (isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1):
        raise InputError(f"repeats must be an integer >= 1, got {repeats!r}")
    target_ms = target_ms if target_ms is not None else (0.5 if quick else 2.0)
    if not 0.01 <= target_ms <= 1000:
        raise InputError(f"target_ms must be in 0.01..1000, got {target_ms:g}")
    if sub_partitions is None and getattr(profile, "instructions", None) is not None:
        sub_partitions = profile.instructions.sub_partitions
    if sub_partitions is None:
        major = int(profile.compute_capability.split(".")[0])
        if major not in SUB_PARTITIONS:
            raise InputError(f"no sub-partition count is known for compute capability {profile.compute_capability} "
                             f"(known majors: {', '.join(map(str, SUB_PARTITIONS))}): pass --sub-partitions N")
        sub_partitions = SUB_PARTITIONS[major]
    if isinstance(sub_partitions, bool) or not isinstance(sub_partitions, int) or not 1 <= sub_partitions <= 16:
        raise InputError(f"sub-partitions must be an integer in 1..16, got {sub_partitions!r}")
    return Setup(sms=profile.sms, blocks_per_sm=profile.blocks_per_sm(BLOCK_THREADS),
                 repeats=repeats or (3 if quick else 5), target_ns=target_ms * 1e6, sub_partitions=sub_partitions)


# ----------------------------------------------------------------------------------------------
# Records -> one launch's numbers, and the raw table -> the profile's numbers (no GPU)


def reduce_records(records: np.ndarray, blocks_per_sm: int, label: str = "launch") -> tuple[int, float, float]:
    """(SMs, cycles, ns) of one launch from its block records (rows: smid, clock64 start, end,
    globaltimer start, end): per SM the last end minus the first start of its blocks, in cycles and
    in ns; the medians over the SMs. InputError when an SM ran another number of blocks than
    `blocks_per_sm` or its blocks did not all run at once (the GPU is shared, or the blocks did not
    fit), or a span is not positive."""
    records = np.asarray(records, dtype=np.int64).reshape(-1, 5)
    sm, order = np.unique(records[:, 0], return_inverse=True)
    counts = np.bincount(order, minlength=len(sm))
    if np.any(counts != blocks_per_sm):
        i = int(np.flatnonzero(counts != blocks_per_sm)[0])
        raise InputError(f"{label}: SM {sm[i]} ran {counts[i]} blocks, not {blocks_per_sm}: is another process "
                         "using the GPU?")
    spans = []
    for column, clock in ((1, "clock64"), (3, "globaltimer")):
        starts, ends = records[:, column], records[:, column + 1]
        first, last_start = np.full(len(sm), starts.max()), np.full(len(sm), starts.min())
        first_end, last = np.full(len(sm), ends.max()), np.full(len(sm), ends.min())
        np.minimum.at(first, order, starts)
        np.maximum.at(last_start, order, starts)
        np.minimum.at(first_end, order, ends)
        np.maximum.at(last, order, ends)
        if np.any(ends <= starts):
            raise InputError(f"{label}: a block's {clock} span is not positive")
        if column == 1 and blocks_per_sm > 1 and np.any(last_start >= first_end):
            i = int(np.flatnonzero(last_start >= first_end)[0])
            raise InputError(f"{label}: the blocks of SM {sm[i]} did not all run at once (one ended before another "
                             "started): is another process using the GPU?")
        spans.append(last - first)
    return len(sm), float(np.median(spans[0])), float(np.median(spans[1]))


def check_raw(table: pd.DataFrame, label: str = "raw instruction table") -> pd.DataFrame:
    """Validate a raw table (RAW_COLUMNS) and return it typed; InputError names the row.

    Rules: test is one of TESTS; ways, sms, blocks_per_sm, threads, ops are integers >= 1; ways is
    1 except in the `shared` test, where it is one of CONFLICT_WAYS; cycles, ns, event_ns are numbers
    > 0; cycles_per_op = cycles / ops (relative 1e-6).
    """
    out = typed_table(table, label, RAW_COLUMNS, tuple(TESTS), ("cycles", "ns", "event_ns", "cycles_per_op"))
    shared = (out["test"] == "shared").to_numpy()
    refuse_first((
        (shared & ~out["ways"].isin(CONFLICT_WAYS).to_numpy(),
         f"ways of the shared test must be one of {', '.join(map(str, CONFLICT_WAYS))}"),
        (~shared & (out["ways"] != 1).to_numpy(), "ways must be 1 outside the shared test"),
        (~np.isclose(out["cycles_per_op"], out["cycles"] / out["ops"], rtol=1e-6, atol=0),
         "cycles_per_op must equal cycles / ops"),
    ), label)
    return out


def read_raw(path) -> pd.DataFrame:
    """Read and validate a raw instruction table (CSV, RAW_COLUMNS; '#' lines are comments)."""
    return read_table(path, check_raw, comment="#")


def _round(x: float) -> float:
    return float(f"{x:.{SIGNIFICANT}g}")


def derive(raw: pd.DataFrame, sub_partitions: int) -> dict:
    """The [instructions] values (all but provenance) from a raw table: for each (test, ways) the
    median of cycles_per_op over its repeats; issue_per_cycle = 1 / (issue's median x
    sub_partitions), alu_per_cycle the same of alu_pipe's; shared_cycles_per_wavefront = the shared
    median at k = 1; clock_mhz = the median over every row of 1000 x cycles / ns. 6 significant digits.
    InputError when a test is missing (but for OPTIONAL_TESTS) or the shared test lacks k = 1 or a conflict."""
    raw = check_raw(raw)
    if isinstance(sub_partitions, bool) or not isinstance(sub_partitions, int) or sub_partitions < 1:
        raise InputError(f"sub_partitions must be an integer >= 1, got {sub_partitions!r}")
    missing = [name for name in TESTS if not (raw["test"] == name).any() and name not in OPTIONAL_TESTS]
    if missing:
        raise InputError(f"raw instruction table: no rows for test(s) {', '.join(missing)}")
    medians = raw.groupby(["test", "ways"])["cycles_per_op"].median()
    shared = medians["shared"].sort_index()
    if 1 not in shared.index or len(shared) < 2:
        raise InputError("raw instruction table: the shared test needs ways = 1 and at least one conflict (ways > 1)")
    conflicts = [[int(k), _round(c)] for k, c in shared.items()]
    return {
        "clock_mhz": _round(float(np.median(1000.0 * raw["cycles"] / raw["ns"]))),
        "sub_partitions": sub_partitions,
        "issue_per_cycle": _round(1.0 / (medians[("issue", 1)] * sub_partitions)),
        "alu_latency_cycles": _round(medians[("alu_latency", 1)]),
        "shuffle_latency_cycles": _round(medians[("shuffle_latency", 1)]),
        "shared_latency_cycles": _round(medians[("shared_latency", 1)]),
        "shared_cycles_per_wavefront": conflicts[0][1],
        "shared_conflict_cycles": conflicts,
        "barrier_cycles": _round(medians[("barrier", 1)]),
        "block_scan_cycles": _round(medians[("block_scan", 1)]),
        **({"alu_per_cycle": _round(1.0 / (medians[("alu_pipe", 1)] * sub_partitions))}
           if ("alu_pipe", 1) in medians.index else {}),
    }


def method_provenance(by: str = "gpu_validate.microbench --instructions") -> str:
    """[instructions.provenance] method text: how the costs were measured, by `by`."""
    return (f"measured by {by} (gpu_validate/cuda/inst_microbench.cu): clock64 cycles between "
            "__syncthreads() per SM, median over SMs and over repeats; SM clock = clock64 cycles / globaltimer ns")


def method_notes(setup: Setup, values: dict) -> list[str]:
    """The comment lines written above [instructions]: how each number was measured."""
    s = setup.as_comment()
    paragraphs = [
        ("Measured by gpu_validate/cuda/inst_microbench.cu. Each block reads clock64 (SM cycles) and "
         "globaltimer (ns) after a __syncthreads() and again after its last step and a second one; per "
         "SM the span from its first block's start to its last block's end, the median over the SMs of "
         "a launch, then the median over "
         f"{s['repeats']} timed launches of about {s['target_ms']:g} ms (after a probe and a warm-up). "
         "Chains are asm volatile PTX, the result of one instruction an operand of the next."),
        (f"Latencies (alu, shuffle, shared): one warp, one chain of {ALU_UNROLL} adds (x += x: one IADD3 "
         f"or IMAD.SHL each), {SHFL_UNROLL} __shfl_sync or {SHARED_UNROLL} dependent LDS (each loads the "
         "next one's shared address, conflict-free) per step."),
        (f"Throughputs: {s['blocks_per_sm']} blocks of {BLOCK_THREADS} threads on every SM (the BFS kernels' "
         "configuration), all resident at once. issue_per_cycle: 8 independent add chains a thread, "
         f"add instructions per SM per cycle / {s['sub_partitions']} sub-partitions (the loop's own few "
         f"instructions per {8 * ALU_UNROLL} adds are not counted). alu_per_cycle: the same with 8 independent "
         "chains of LOP3s (lop3.b32, which only the ALU pipe executes, where ptxas sends half the adds to the FMA "
         "pipe). shared: 4 independent shared chases a "
         "thread, SM cycles per warp-level 32-bit load with k lanes on one bank (different words) for k = "
         f"{', '.join(str(k) for k, _ in values['shared_conflict_cycles'])}; k = 1 is one wavefront. "
         "barrier_cycles and block_scan_cycles: per __syncthreads() and per block prefix sum (scan.cu's: "
         "warp_inclusive_sum, warp totals in shared memory, __syncthreads, the loop over the 8 totals, "
         "__syncthreads, plus one add and one and feeding the next scan) as one block sees it, every block "
         "of the SM doing the same."),
    ]
    return [line for text in paragraphs for line in textwrap.wrap(text, 98, break_on_hyphens=False)]


def summary(values: dict) -> list[str]:
    """Console lines: the measured numbers."""
    ways = ", ".join(f"{k}: {c:g}" for k, c in values["shared_conflict_cycles"])
    return [f"SM clock {values['clock_mhz']:g} MHz; issue {values['issue_per_cycle']:g} warp instructions a cycle "
            f"per sub-partition ({values['sub_partitions']} per SM)"
            + (f", ALU pipe {values['alu_per_cycle']:g}" if "alu_per_cycle" in values else ""),
            f"latency in cycles: alu {values['alu_latency_cycles']:g}, shuffle {values['shuffle_latency_cycles']:g}, "
            f"shared load {values['shared_latency_cycles']:g}",
            f"shared: {values['shared_cycles_per_wavefront']:g} SM cycles per wavefront; k-way conflicts {ways}",
            f"barrier {values['barrier_cycles']:g} cycles, block scan of 256 {values['block_scan_cycles']:g} cycles"]


# ----------------------------------------------------------------------------------------------
# The measurement on the GPU (CuPy, imported only to measure)


class _Bench:
    """The compiled kernels; `time_test` times one (test, ways)."""

    def __init__(self, cupy, setup: Setup):
        from ..modules import cuda_dir

        self.cp = cupy
        self.setup = setup
        source = importlib.resources.files("gpu_validate").joinpath("cuda/inst_microbench.cu").read_text(encoding="utf-8")
        self.module = cupy.RawModule(code=source, options=("-std=c++17", f"-I{cuda_dir()}"))
        self.kernels = {name: self.module.get_function(test.kernel) for name, test in TESTS.items()}
        self.sink = cupy.zeros(4, dtype=cupy.uint32)

    def _shape(self, name: str) -> tuple[int, int, int, int]:
        """(grid, threads, SMs, blocks per SM) of a test's launch."""
        if TESTS[name].one_warp:
            return 1, 32, 1, 1
        s = self.setup
        return s.sms * s.blocks_per_sm, BLOCK_THREADS, s.sms, s.blocks_per_sm

    def _ops(self, name: str, steps: int) -> int:
        test = TESTS[name]
        ops = test.per_step * steps
        if test.per == "sm":
            ops *= self.setup.blocks_per_sm * (BLOCK_THREADS // 32)
        return ops

    def _launch(self, name: str, ways: int, steps: int) -> tuple[float, np.ndarray]:
        """(CUDA-event ns, block records) of one launch."""
        cp = self.cp
        grid, threads, _, _ = self._shape(name)
        records = cp.zeros(grid * 5, dtype=cp.int64)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        self.kernels[name]((grid,), (threads,), (records, np.int64(steps), np.int32(ways), self.sink))
        end.record()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end) * 1e6, cp.asnumpy(records).reshape(grid, 5)

    def time_test(self, name: str, ways: int = 1) -> list[dict]:
        """Rows (one per timed repeat) of test `name` with `ways` lanes per bank."""
        grid, threads, sms, blocks = self._shape(name)
        steps = 1
        for _ in range(2):  # a one-step probe, then a warm-up at about the target length
            elapsed, _ = self._launch(name, ways, steps)
            steps = int(min(max(math.ceil(self.setup.target_ns * steps / max(elapsed, 1.0)), 1), 2**40))
        rows = []
        for repeat in range(self.setup.repeats):
            elapsed, records = self._launch(name, ways, steps)
            label = f"{name} (ways {ways}), repeat {repeat + 1}"
            seen, cycles, ns = reduce_records(records, blocks, label)
            if seen != sms:
                raise InputError(f"{label}: its blocks ran on {seen} SMs, not {sms}: is another process using the GPU?")
            ops = self._ops(name, steps)
            rows.append({"test": name, "ways": ways, "sms": sms, "blocks_per_sm": blocks, "threads": threads,
                         "ops": ops, "cycles": cycles, "ns": ns, "event_ns": elapsed, "cycles_per_op": cycles / ops})
        return rows


def measure(setup: Setup) -> pd.DataFrame:
    """Run every test on the current GPU; returns the raw table (RAW_COLUMNS, one row per timed launch)."""
    bench = _Bench(require_gpu(), setup)
    rows = []
    for name in TESTS:
        for ways in (setup.ways if name == "shared" else (1,)):
            rows += bench.time_test(name, ways)
    return check_raw(pd.DataFrame(rows, columns=list(RAW_COLUMNS)))


def costs(values: dict, provenance: dict):
    """The opmachine InstructionCosts of derived `values` and a run's provenance (INSTRUCTION_RUN_KEYS)."""
    from opmachine.profile import InstructionCosts

    return InstructionCosts(**values, provenance=dict(provenance))


def run(setup: Setup) -> tuple[pd.DataFrame, dict]:
    """Measure on the current GPU: (the raw table, the derived [instructions] values)."""
    raw = measure(setup)
    return raw, derive(raw, setup.sub_partitions)
