"""A NumPy stand-in for CuPy, so GPU host code runs on the CPU: the microbenchmark sweep (its kernels
execute the pointer chase), the per-launch overhead cases (kernels that take a fixed time) and the
device facts. Time is a fake clock that each kernel launch advances; CUDA events read it.

- a chase kernel (mb_chase_C) advances it by 3000 + steps x max(200, 0.01 m) ns: a closed queue of
  200 ns latency and 100 requests/ns, so S(m) = max(200, 0.01 m) / m per request;
- `empty_launch` by EMPTY_NS, `bfs_compact` by COMPACT_NS, any other kernel by OTHER_NS, the
  L2 flush (`mb_touch`) by 1000 ns and the hold kernel by nothing;
- the placement kernels (`mb_chase_on_sm`, `mb_touch_on_sm`, `mb_hop_cycles_on_sm`) set their claim word,
  as the block on the asked SM does, and run as mb_chase_1 with one warp and as mb_touch; the hop
  cycles are FAR_CYCLES for an odd sector (homed in the other partition) and NEAR_CYCLES for an even one,
  and a chase on an odd SM (the other partition's) takes OTHER_SM_NS more a hop;
- an instruction kernel (im_*, `gpu_validate.microbench.instructions`) writes each block's record
  (SM, clock64 and globaltimer at start and end) as a GPU whose costs are INST_CYCLES would, blocks
  spread round-robin over the SMs, its SM clock the attributes' cudaDevAttrClockRate, and advances
  the clock by 3000 ns + the launch's span.
"""
from __future__ import annotations

import re
import types

from gpu_validate.microbench import instructions as im

import numpy as np

EMPTY_NS = 3000.0
COMPACT_NS = 15000.0
OTHER_NS = 5000.0
FIXED_NS = {"empty_launch": EMPTY_NS, "bfs_compact": COMPACT_NS, "hold_until": 0.0, "mb_touch": 1000.0}

NEAR_CYCLES, FAR_CYCLES = 300, 420
OTHER_SM_NS = 40.0

PROPS = {"name": b"Fake H200", "multiProcessorCount": 132, "maxThreadsPerMultiProcessor": 2048,
         "major": 9, "minor": 0, "l2CacheSize": 60 * 2**20}
"""The device the microbenchmark test describes (an H200's geometry)."""
ATTRIBUTES = {1: 1024, 10: 32, 13: 1980000, 16: 132, 36: 3201000, 37: 6016, 38: 60 * 2**20, 39: 2048,
              75: 9, 76: 0, 106: 32}
"""cudaDeviceGetAttribute answers by attribute number (see gpu_validate.device.ATTRIBUTES)."""


INST_CYCLES = {"alu_latency": 4.5, "issue": 0.25, "shuffle_latency": 23.0, "shared_latency": 29.0, "shared": 1.0,
               "barrier": 20.0, "block_scan": 400.0, "alu_pipe": 0.5}
"""Cycles per operation of each instruction test (im.TESTS): an add, one SM's warp instruction (4
sub-partitions issuing one a cycle each), one SM's ALU-pipe warp instruction (half that rate), a
shuffle, a shared load, one SM's wavefront (k of them for a k-way conflict), a barrier, a block scan."""
_INST_BY_KERNEL = {test.kernel: name for name, test in im.TESTS.items()}


class Clock:
    now_ns = 0.0


class Event:
    def record(self):
        self.t = Clock.now_ns

    def synchronize(self):
        pass


class Kernel:
    """One compiled function; `log` (a list, or None) gets the visits of every chase launch."""

    def __init__(self, name, log, sms=132, clock_khz=1980000):
        self.name, self.log, self.sms, self.clock_khz = name, log, sms, clock_khz
        self.kernel = types.SimpleNamespace(ptr=0)  # RawKernel.kernel: the cuda.Function (occupancy queries)

    def _instruction(self, grid, block, args):
        records, steps, ways, _sink = args
        name = _INST_BY_KERNEL[self.name]
        test = im.TESTS[name]
        blocks = grid[0]
        sms = min(blocks, self.sms)
        assert blocks % sms == 0 and block[0] % 32 == 0
        per_sm = blocks // sms
        ops = test.per_step * int(steps) * (per_sm * block[0] // 32 if test.per == "sm" else 1)
        span = int(round(ops * INST_CYCLES[name] * (int(ways) if name == "shared" else 1)))
        span_ns = span * 1e6 / self.clock_khz
        for b in range(blocks):
            sm, j = b % sms, b // sms  # round-robin; block j of an SM starts j cycles late, ends j early
            start = 1000 * (sm + 1) + j
            records[5 * b: 5 * b + 5] = [sm, start, start + span - 2 * j, int(Clock.now_ns) + j,
                                         int(Clock.now_ns + span_ns) - j]
        Clock.now_ns += 3000.0 + span_ns

    def __call__(self, grid, block, args, shared_mem=0):
        if self.name.startswith("im_"):
            self._instruction(grid, block, args)
            return
        if self.name.endswith("_on_sm"):
            args[-1][0] = 1  # the claim of the block on the asked SM
            if self.name == "mb_touch_on_sm":
                Clock.now_ns += FIXED_NS["mb_touch"]
                return
            if self.name == "mb_hop_cycles_on_sm":
                buf, starts, steps, cycles = args[:4]
                idx = int(starts[0])
                for s in range(int(steps)):
                    cycles[s] = FAR_CYCLES if idx & 1 else NEAR_CYCLES
                    idx = int(buf[idx * 8])
                Clock.now_ns += 3000.0 + int(steps) * 200.0
                return
            buf, starts, lanes, steps, sink, sm = args[:6]
            Clock.now_ns += int(steps) * OTHER_SM_NS * (int(sm) & 1)
            grid, block, args = (1,), (32,), (buf, starts, lanes, steps, 0, 0xFFFFFFFF, sink)
        if self.name in FIXED_NS:
            Clock.now_ns += FIXED_NS[self.name]
            return
        if not self.name.startswith("mb_chase_"):
            Clock.now_ns += OTHER_NS
            return
        buf, starts, lanes, steps, add, mask, _sink = args
        chains = 1 if self.name.endswith("_on_sm") else int(self.name.split("_")[2])
        warps = grid[0] * block[0] // 32
        assert block[0] % 32 == 0 and block[0] <= 256
        idx = starts.astype(np.int64).reshape(warps, chains, int(lanes))
        visited = []
        for _ in range(int(steps)):
            if self.log is not None:
                visited.append(idx.copy())
            idx = (buf[idx * 8].astype(np.int64) + int(add)) & int(mask)
        if self.log is not None and visited:
            sequential = np.array_equal(buf[:128:8], np.arange(1, 17))
            self.log.append({"sectors": int(mask) + 1, "sequential": sequential, "visited": np.stack(visited)})
        m = warps * chains * int(lanes)
        Clock.now_ns += 3000.0 + int(steps) * max(200.0, 0.01 * m)  # a closed queue: latency, then a rate


class Pinned(bytearray):
    """Pinned host memory: a buffer with a device pointer."""

    ptr = 0


SHARED_PER_SM = 228 * 1024


def resident_blocks(function_ptr, block, dynamic_shared_bytes):
    """Blocks of `block` threads an SM holds: 2048 threads and SHARED_PER_SM bytes of shared memory."""
    return min(2048 // block, SHARED_PER_SM // max(int(dynamic_shared_bytes), 1))


def fake_cupy(log=None, props=None, attributes=None):
    """A `cupy` module stand-in for a device of `props` (getDeviceProperties) and `attributes`
    (cudaDeviceGetAttribute by number); defaults PROPS and ATTRIBUTES."""
    props = dict(PROPS if props is None else props)
    attributes = dict(ATTRIBUTES if attributes is None else attributes)
    cp = types.ModuleType("cupy")
    for name in ("uint32", "uint64", "int64", "int32", "zeros", "ones", "empty", "arange", "tile", "roll", "asarray"):
        setattr(cp, name, getattr(np, name))
    cp.asnumpy = np.asarray
    cp.__version__ = "fake"
    runtime = types.SimpleNamespace(getDeviceCount=lambda: 1, getDeviceProperties=lambda i: props,
                                    runtimeGetVersion=lambda: 13000,
                                    deviceGetAttribute=lambda a, d: attributes[int(a)])
    device = types.SimpleNamespace(id=0, synchronize=lambda: None)
    cp.cuda = types.SimpleNamespace(runtime=runtime, Device=lambda: device, Event=Event,
                                    get_elapsed_time=lambda a, b: (b.t - a.t) / 1e6,
                                    alloc_pinned_memory=lambda size: Pinned(size), driver=types.SimpleNamespace(
                                        occupancyMaxActiveBlocksPerMultiprocessor=resident_blocks))
    cp.random = types.SimpleNamespace(RandomState=np.random.RandomState)

    class RawModule:
        def __init__(self, code, options, name_expressions=None):
            if "mb_chase_1" in code:  # the microbenchmark source: NVRTC without include paths
                assert options == ("-std=c++17",)
            self.code, self.expressions = code, tuple(name_expressions or ())

        def get_function(self, name):
            assert name in self.expressions or re.search(rf"\b{name}\b", self.code), name
            return Kernel(name, log, int(props["multiProcessorCount"]), int(attributes[13]))

    cp.RawModule = RawModule
    return cp
