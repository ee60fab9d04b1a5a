"""What one warp's L2 load costs beyond the service curves' single number: whether its SM read the
sector before, whether the GPU was idle just before, which SMs share what one SM read (the L2's
partitions) and what a load costs within its SM's partition and across, and how much of the L2 keeps
data every SM read.

    python -m gpu_validate.l2_probe --base h200 --out probe.json [--write PROFILE.toml]
    python -m gpu_validate.l2_probe --base h200 --record probe.json --write PROFILE.toml   # no GPU

Both parts chase `gpu_validate/cuda/microbench.cu`'s random cycles with `mb_chase_1` (ld.global.cg,
one warp, each lane its own chain), every launch from a segment of the cycle that no chase of this
run visited before (`segment_starts`), timed back to back behind the hold kernel (`timing`):

- revisits: a cycle the size of `gpu_validate.microbench`'s l2_hit buffer (a power of two near
  L2 / 3), read twice by every SM with `mb_touch` first, for 1 to 32 lanes: `first` visits of
  fresh segments, each followed at once by the same segment `again`, and fresh segments
  `after_idle` (REVISIT_IDLE_S of idle GPU before each);
- placement: such a cycle read twice from SM 0 alone (`mb_touch_on_sm`), then a fresh segment chased
  from each SM in turn (`mb_chase_on_sm`), 1 and 32 lanes: whether a sector is faster only on the SM
  that read it or on a group of SMs (`partition_groups`: the SMs of SM 0's L2 partition, and the others);
- homes: such a cycle, the L2 flushed and the cycle read from SM 0, chased whole by one lane from an SM of
  the other group, each hop's latency in clock cycles (`mb_hop_cycles_on_sm`): the slow hops are the
  sectors whose home is SM 0's partition (`far_positions`). A cycle through those sectors alone, in the
  same memory, is then chased by 1 to 32 lanes, the L2 flushed and the cycle read from SM 0 before each
  case: from another SM of SM 0's group (`home`: every sector in the SM's own partition), from the other
  group (`far`: every sector in the other partition only), and, after a read from the other group too,
  from a third SM of it (`copy`: a copy of every sector in the SM's partition). `home_curves` gives each
  case's ns per warp load of m sectors, its launch's own time (the same launch with no hop) taken off;
- capacity: cycles of CAPACITY_FRACTIONS of the L2 size, each read twice by every SM (`every_sm`) or
  by one block (`one_block`), or not at all after a read of FLUSH_L2S x L2 bytes elsewhere
  (`flushed`: every hop misses, at that buffer's size), then 1 or 32 lanes chase fresh segments.
  With one lane the ns per hop is the mean of hits and misses, so against the size it shows how
  much of the L2 holds data that every SM read (the BFS kernels' case); with 32 lanes a hop waits
  for the slowest of 32 sectors.

The JSON holds the device, driver, date and command, and one row per timed launch (and the homes part's
histogram of hop cycles). `--write` puts the profile's [l2_capacity] (`opmachine.profile.l2_capacity`:
`hit_fractions` and `effective_bytes` derive it from the one-lane capacity runs) and, from a record with a
homes part, its [l2_partitions] (`opmachine.profile.l2_partitions`: `l2_partitions`, from `home_curves`)
into a copy of --base.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from simdmodel.atomic import check_target, write_text
from simdmodel.errors import InputError

from .microbench.sweep import cycle_buffer, microbench_module

REVISIT_LANES = (1, 2, 4, 8, 16, 32)
REVISIT_REPEATS = 5
REVISIT_IDLE_S = 0.05
REVISIT_NS = 1e6  # about 1 ms a launch
PLACEMENT_LANES = (1, 32)
PLACEMENT_SECTORS = 3200  # sectors a placement launch visits (lanes x hops), at most
PLACEMENT_BLOCKS_PER_SM = 8  # blocks a placement launch has per SM, so that one starts on every SM
HOME_CASES = ("home", "copy", "far")
HOME_SECTORS = 6400  # sectors a homes launch visits (lanes x hops), at most
HOME_REPEATS = 5
HOME_SMS = 4  # chasing SMs of each case, spread over their group
HOP_BIN_CYCLES = 4  # the hop histogram's bins
HOP_BINS = 512
CAPACITY_FRACTIONS = (0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.25, 1.5, 2.0, 16.0)
CAPACITY_LANES = (1, 32)
FLUSH_L2S = 8  # the flush buffer, in L2 sizes
CAPACITY_SECTORS = 12800  # sectors of the cycle a capacity launch visits (lanes x hops)
CAPACITY_REPEATS = 5
SECTOR_BYTES = 32
HIT_SIZES = 0.25  # buffers of at most this many L2s time a hit
EFFECTIVE_SIZES = (1.0, 2.0)  # the buffer sizes, in L2s, whose hits give the effective capacity
RECORD_KEYS = ("device", "driver", "date", "command", "l2_bytes", "revisits", "capacity")
CAPACITY_ROW_KEYS = ("bytes", "l2_fraction", "touched_by", "lanes", "ns_per_hop")
ANY_INDEX = 0xFFFFFFFF  # the chase's mask: a random cycle's words are indices already


def segment_starts(order: np.ndarray, first: int, lanes: int, steps: int) -> np.ndarray:
    """The start sectors of `lanes` chains of `steps` hops that visit positions first .. first + lanes x
    steps - 1 of the cycle `order` (order[i] -> order[i + 1]), each lane its own run of `steps`."""
    if lanes * steps + first > len(order):
        raise InputError(f"{lanes} chains of {steps} hops from position {first} run past the cycle's "
                         f"{len(order)} sectors")
    return order[first + np.arange(lanes) * steps]


def capacity_sizes(l2_bytes: int) -> list[int]:
    """Buffer sizes in sectors for the capacity part: CAPACITY_FRACTIONS of `l2_bytes`."""
    return [int(l2_bytes * f) // SECTOR_BYTES for f in CAPACITY_FRACTIONS]


def hit_fractions(record: dict):
    """Per capacity size (rows `bytes`, `l2_fraction`, `hit_fraction`): the one-lane chase's hits over the
    buffer every SM read, (t_miss - t) / (t_miss - t_hit), with t_miss the same size flushed and t_hit
    the median hop of the buffers of at most HIT_SIZES of the L2; clipped to 0..1."""
    import pandas as pd

    table = pd.DataFrame(record["capacity"])
    table = table[table["lanes"] == 1]
    if table.empty or not {"every_sm", "flushed"} <= set(table["touched_by"]):
        raise InputError("the record has no one-lane capacity runs with every_sm and flushed buffers")
    hop = table.groupby(["bytes", "l2_fraction", "touched_by"])["ns_per_hop"].median().unstack().reset_index()
    small = hop["l2_fraction"] <= HIT_SIZES
    if not small.any():
        raise InputError(f"the record has no buffer of at most {HIT_SIZES:g} of the L2 to time a hit on")
    t_hit = float(hop.loc[small, "every_sm"].median())
    slow = hop["flushed"] <= t_hit
    if slow.any():
        raise InputError(f"a hop over the flushed {hop.loc[slow, 'bytes'].iloc[0] / 2**20:g} MiB buffer is no slower "
                         f"than a hit ({t_hit:.4g} ns): its misses cannot be told from hits")
    fraction = ((hop["flushed"] - hop["every_sm"]) / (hop["flushed"] - t_hit)).clip(0.0, 1.0)
    return pd.DataFrame({"bytes": hop["bytes"].astype("int64"), "l2_fraction": hop["l2_fraction"],
                         "hit_fraction": fraction})


def effective_bytes(fractions) -> int:
    """What the L2 holds of data every SM read, from `hit_fractions`' table: the median of hit_fraction x
    size over the sizes of EFFECTIVE_SIZES L2s (an LRU cache of C bytes hits C / size of random accesses
    beyond C)."""
    low, high = EFFECTIVE_SIZES
    chosen = fractions[(fractions["l2_fraction"] >= low) & (fractions["l2_fraction"] <= high)]
    if chosen.empty:
        raise InputError(f"the record has no buffer of {low:g} to {high:g} L2s")
    return int(round(float((chosen["hit_fraction"] * chosen["bytes"]).median())))


def l2_capacity(record: dict):
    """The [l2_capacity] section (an opmachine L2Capacity) of a probe record, its provenance the record's run."""
    from opmachine.profile import L2Capacity

    from .device import run_of

    fractions = hit_fractions(record)
    return L2Capacity(effective_bytes(fractions), tuple(int(b) for b in fractions["bytes"]),
                      tuple(round(float(h), 4) for h in fractions["hit_fraction"]), run_of(record))


def l2_partitions(record: dict):
    """The [l2_partitions] section (an opmachine L2Partitions) of a probe record with a homes part: the two
    groups of SMs, and the `home` and `far` cases' ns per warp load at each lane count (`home_curves`)."""
    from opmachine.profile import L2Partitions

    from .device import run_of

    if not record.get("homes"):
        raise InputError("the record has no homes part to give the L2 partitions")
    curves = home_curves(record["homes"])
    return L2Partitions(2, tuple(int(m) for m in curves.index), tuple(round(float(t), 2) for t in curves["home"]),
                        tuple(round(float(t), 2) for t in curves["far"]), run_of(record))


class _Probe:
    """The kernels, one random cycle at a time, and timed launches of fresh segments."""

    def __init__(self, cp, seed: int):
        self.cp = cp
        module = microbench_module(cp)
        self.chase = module.get_function("mb_chase_1")
        self.touch_kernel = module.get_function("mb_touch")
        self.chase_on_sm = module.get_function("mb_chase_on_sm")
        self.touch_on_sm = module.get_function("mb_touch_on_sm")
        self.hop_cycles_on_sm = module.get_function("mb_hop_cycles_on_sm")
        self.sink = cp.zeros(4, dtype=cp.uint32)
        self.rng = np.random.default_rng(seed)
        self.buf = self.order = None
        self.used = 0

    def new_cycle(self, sectors: int) -> None:
        """A random cycle over `sectors` sectors (the first word of each holds the next one's index)."""
        self.buf = self.order = None  # free the last one first
        order = self.rng.permutation(sectors).astype(np.uint32)
        self.buf, self.order, self.used = cycle_buffer(self.cp, order), order, 0
        self.cp.cuda.Device().synchronize()

    def set_cycle(self, sectors: np.ndarray) -> None:
        """A random cycle through `sectors` alone, written into the present buffer (the same memory)."""
        order = self.rng.permutation(np.asarray(sectors, dtype=np.uint32))
        self.buf[...] = 0
        self.buf[self.cp.asarray(order.astype(np.int64) * 8)] = self.cp.asarray(np.roll(order, -1))
        self.order, self.used = order, 0
        self.cp.cuda.Device().synchronize()

    def touch(self, blocks: int, other=None) -> None:
        """Read the whole buffer (or `other`) twice with `blocks` blocks of 256 threads (1024: every SM)."""
        buf = self.buf if other is None else other
        for _ in range(2):
            self.touch_kernel((blocks,), (256,), (buf, np.int64(buf.size // 4), self.sink))
        self.cp.cuda.Device().synchronize()

    def launch(self, lanes: int, steps: int, first: int | None = None):
        """A launch (a callable) over the next unvisited segment, or the one from position `first`."""
        if first is None:
            first, self.used = self.used, self.used + lanes * steps
        starts = self.cp.asarray(segment_starts(self.order, first, lanes, steps))
        args = (self.buf, starts, np.int32(lanes), np.int64(steps), np.uint32(0), np.uint32(ANY_INDEX), self.sink)
        return first, lambda: self.chase((1,), (32,), args)

    def claims(self, count: int):
        """Claim words of `count` launches on one SM (`mb_on_sm`), zeroed."""
        return self.cp.zeros(count, dtype=self.cp.uint32)

    def touch_from(self, sm: int, blocks: int) -> None:
        """Read the whole buffer twice from SM `sm` alone (launches of `blocks` blocks)."""
        claims = self.claims(2)
        for i in range(2):
            self.touch_on_sm((blocks,), (256,), (self.buf, np.int64(self.buf.size // 4), self.sink, np.int32(sm),
                                                 claims[i:i + 1]))
        self.cp.cuda.Device().synchronize()
        _check_claims(self.cp.asnumpy(claims), [sm, sm], blocks)

    def launch_on(self, sm: int, lanes: int, steps: int, blocks: int, claim):
        """A launch (a callable) of one warp on SM `sm` over the next unvisited segment."""
        first, self.used = self.used, self.used + lanes * steps
        starts = self.cp.asarray(segment_starts(self.order, first, lanes, steps))
        args = (self.buf, starts, np.int32(lanes), np.int64(steps), self.sink, np.int32(sm), claim)
        return lambda: self.chase_on_sm((blocks,), (32,), args)

    def hop_cycles(self, sm: int, blocks: int) -> np.ndarray:
        """Clock cycles of each hop of one lane's chase of the whole cycle from position 0, on SM `sm`."""
        cycles = self.cp.zeros(len(self.order), dtype=self.cp.uint32)
        claim = self.claims(1)
        starts = self.cp.asarray(self.order[:1])
        self.hop_cycles_on_sm((blocks,), (32,), (self.buf, starts, np.int64(len(self.order)), cycles, self.sink,
                                                 np.int32(sm), claim))
        self.cp.cuda.Device().synchronize()
        _check_claims(self.cp.asnumpy(claim), [sm], blocks)
        return self.cp.asnumpy(cycles)

    def timed(self, launches, steps: int) -> list[float]:
        from .timing import time_launches

        return [ns / steps for ns in time_launches(self.cp, launches)]


def _revisits(probe: _Probe, buffer_bytes: int) -> list[dict]:
    rows = []
    for lanes in REVISIT_LANES:
        probe.new_cycle(buffer_bytes // SECTOR_BYTES)
        probe.touch(1024)
        _, launch = probe.launch(lanes, 64)
        steps = int(REVISIT_NS / max(probe.timed([launch], 64)[0], 1.0))
        fresh = len(probe.order) - probe.used  # positions left for 2 x REVISIT_REPEATS fresh segments
        steps = max(min(steps, fresh // (2 * REVISIT_REPEATS * lanes)), 1)
        pairs = []
        for _ in range(REVISIT_REPEATS):
            first, launch = probe.launch(lanes, steps)
            pairs += [launch, probe.launch(lanes, steps, first)[1]]
        rows += [{"lanes": lanes, "case": "again" if i % 2 else "first", "steps": steps, "ns_per_hop": t}
                 for i, t in enumerate(probe.timed(pairs, steps))]
        for _ in range(REVISIT_REPEATS):
            probe.cp.cuda.Device().synchronize()
            time.sleep(REVISIT_IDLE_S)
            rows.append({"lanes": lanes, "case": "after_idle", "steps": steps,
                         "ns_per_hop": probe.timed([probe.launch(lanes, steps)[1]], steps)[0]})
    return rows


def _check_claims(claims, sms, blocks: int) -> None:
    """One error unless every launch on one SM (claim words `claims`, SMs `sms`) found a block on its SM."""
    missed = np.flatnonzero(np.asarray(claims) != 1)
    if missed.size:
        raise InputError(f"no block of a launch meant for SM {list(sms)[int(missed[0])]} ran there: "
                         f"{blocks} blocks did not reach every SM")


def _placement(probe: _Probe, buffer_bytes: int, sms: int) -> list[dict]:
    rows = []
    blocks = sms * PLACEMENT_BLOCKS_PER_SM
    for lanes in PLACEMENT_LANES:
        probe.new_cycle(buffer_bytes // SECTOR_BYTES)
        probe.touch_from(0, blocks)
        chase = probe.claims(sms)
        steps = max(min(PLACEMENT_SECTORS, len(probe.order) // sms) // lanes, 1)
        times = probe.timed([probe.launch_on(sm, lanes, steps, blocks, chase[sm:sm + 1]) for sm in range(sms)], steps)
        _check_claims(probe.cp.asnumpy(chase), range(sms), blocks)
        rows += [{"lanes": lanes, "touched_sm": 0, "sm": sm, "steps": steps, "ns_per_hop": t}
                 for sm, t in enumerate(times)]
    return rows


def partition_groups(placement: list[dict]) -> tuple[list[int], list[int]]:
    """The SMs of the touching SM's L2 partition and the others, from the one-lane placement runs: an SM
    whose hop is nearer the fastest than the slowest is in the toucher's group (which holds it)."""
    rows = [r for r in placement if r["lanes"] == 1]
    if not rows:
        raise InputError("the record has no one-lane placement runs")
    times = np.array([r["ns_per_hop"] for r in rows])
    middle = (times.min() + times.max()) / 2
    same = [int(r["sm"]) for r in rows if r["ns_per_hop"] < middle]
    other = [int(r["sm"]) for r in rows if r["ns_per_hop"] >= middle]
    toucher = int(rows[0]["touched_sm"])
    if toucher not in same or len(same) < 2 or len(other) < 2:
        raise InputError(f"the SMs do not fall in two groups around SM {toucher} by hop time "
                         f"({times.min():.4g} to {times.max():.4g} ns)")
    return same, other


def far_positions(cycles: np.ndarray) -> tuple[np.ndarray, dict]:
    """Which hops of a one-lane chase were slow (two-means on their clock cycles, from the 10th and 90th
    percentiles) and the split's numbers; one error unless the hops fall in two clear groups."""
    cycles = np.asarray(cycles, dtype=np.float64)
    low, high = np.percentile(cycles, [10, 90])
    for _ in range(20):
        slow = cycles > (low + high) / 2
        if slow.all() or not slow.any():
            break
        low, high = float(np.median(cycles[~slow])), float(np.median(cycles[slow]))
    split = {"threshold_cycles": (low + high) / 2, "near_cycles": low, "far_cycles": high,
             "far_fraction": float(slow.mean())}
    if not 0.2 <= split["far_fraction"] <= 0.8 or high < 1.1 * low:
        raise InputError(f"the hops do not fall in two groups: {split['far_fraction']:.2f} of them above "
                         f"{split['threshold_cycles']:.4g} cycles ({low:.4g} against {high:.4g})")
    return slow, split


def _homes(probe: _Probe, buffer_bytes: int, placement: list[dict], flush, sms: int) -> dict:
    same, other = partition_groups(placement)
    blocks = sms * PLACEMENT_BLOCKS_PER_SM
    probe.new_cycle(buffer_bytes // SECTOR_BYTES)

    def prepare(readers) -> None:
        probe.touch(1024, flush)
        for sm in readers:
            probe.touch_from(sm, blocks)

    prepare([0])
    cycles = probe.hop_cycles(other[0], blocks)
    slow, split = far_positions(cycles)
    histogram = np.bincount(np.minimum(cycles // HOP_BIN_CYCLES, HOP_BINS - 1).astype(np.int64), minlength=HOP_BINS)
    probe.set_cycle(probe.order[slow])
    rows = []
    for case in HOME_CASES:
        for k in range(HOME_SMS):
            readers, sm = _home_chaser(case, k, same, other)
            for lanes in REVISIT_LANES:
                prepare(readers)
                probe.used = 0
                steps = max(min(HOME_SECTORS, len(probe.order) // HOME_REPEATS) // lanes, 1)
                claims = probe.claims(HOME_REPEATS + 1)
                launches = [probe.launch_on(sm, lanes, 0, blocks, claims[:1])]
                launches += [probe.launch_on(sm, lanes, steps, blocks, claims[i:i + 1])
                             for i in range(1, HOME_REPEATS + 1)]
                times = probe.timed(launches, 1)
                _check_claims(probe.cp.asnumpy(claims), [sm] * (HOME_REPEATS + 1), blocks)
                rows += [{"case": case, "lanes": lanes, "sm": sm, "steps": 0 if i == 0 else steps, "ns": t}
                         for i, t in enumerate(times)]
    return {"touched_sm": 0, "timed_sm": other[0], "same_group": same, "other_group": other,
            "sectors": int(slow.size), **split, "hop_bin_cycles": HOP_BIN_CYCLES, "hop_histogram": histogram.tolist(),
            "curves": rows}


def _home_chaser(case: str, k: int, same: list[int], other: list[int]) -> tuple[list[int], int]:
    """The SMs that read the far sectors' cycle before the k-th chase of `case`, and the chasing SM (spread
    over its group): `home` one of SM 0's group (not SM 0), `copy` one of the other group after a read from
    another of it, `far` one of the other group."""
    if case == "home":
        return [0], same[1 + k * (len(same) - 1) // HOME_SMS]
    sm = other[k * len(other) // HOME_SMS]
    if case == "copy":
        return [0, other[(k * len(other) // HOME_SMS + 1) % len(other)]], sm
    return [0], sm


def home_curves(homes: dict, by_sm: bool = False):
    """Per lanes (rows) and case (columns): ns of a warp load of `lanes` sectors, each chasing SM's median
    launch less its launch with no hop, per hop; the median over the case's SMs (or per SM: `by_sm`)."""
    import pandas as pd

    table = pd.DataFrame(homes["curves"])
    keys = ["case", "sm", "lanes"]
    empty = table[table["steps"] == 0].groupby(keys)["ns"].median()
    runs = table[table["steps"] > 0].groupby(keys).agg(ns=("ns", "median"), steps=("steps", "first"))
    per_hop = (runs["ns"] - empty.reindex(runs.index)) / runs["steps"]
    if by_sm:
        return per_hop.unstack(["case", "sm"])
    return per_hop.groupby(["case", "lanes"]).median().unstack("case").reindex(columns=list(HOME_CASES))


def _capacity(probe: _Probe, l2_bytes: int, flush) -> list[dict]:
    rows = []
    for sectors in capacity_sizes(l2_bytes):
        for touched_by, blocks in (("every_sm", 1024), ("one_block", 1), ("flushed", 1024)):
            probe.new_cycle(sectors)
            for lanes in CAPACITY_LANES:
                probe.touch(blocks, flush if touched_by == "flushed" else None)
                steps = CAPACITY_SECTORS // lanes
                launches = [probe.launch(lanes, steps)[1] for _ in range(CAPACITY_REPEATS)]
                rows += [{"bytes": sectors * SECTOR_BYTES, "l2_fraction": sectors * SECTOR_BYTES / l2_bytes,
                          "touched_by": touched_by, "lanes": lanes, "steps": steps, "ns_per_hop": t}
                         for t in probe.timed(launches, steps)]
    return rows


def _placement_summary(table):
    """Per lanes: ns per hop on the SM that read the cycle and the quartiles over the other SMs."""
    import pandas as pd

    rows = {}
    for lanes, runs in table.groupby("lanes"):
        own = runs["sm"] == runs["touched_sm"]
        others = runs.loc[~own, "ns_per_hop"]
        rows[lanes] = {"reader": float(runs.loc[own, "ns_per_hop"].median()),
                       **{f"others q{int(q * 100)}": float(others.quantile(q)) for q in (0.0, 0.25, 0.5, 0.75, 1.0)}}
    return pd.DataFrame(rows).T.rename_axis("lanes")


def _summary(record: dict) -> list[str]:
    import pandas as pd

    lines = [f"{record['device']}, driver {record['driver']}, {record['date']}"]
    if record["revisits"]:
        revisits = pd.DataFrame(record["revisits"]).groupby(["lanes", "case"])["ns_per_hop"].median().unstack()
        lines += ["revisits, ns per hop (median):", revisits.round(1).to_string()]
    if record.get("placement"):
        lines += ["placement, ns per hop, the SM that read the cycle and the others' quartiles:",
                  _placement_summary(pd.DataFrame(record["placement"])).round(1).to_string()]
    if record.get("homes"):
        homes = record["homes"]
        lines += [f"homes: {homes['far_fraction']:.3f} of {homes['sectors']} hops from SM {homes['timed_sm']} slow "
                  f"({homes['near_cycles']:.4g} against {homes['far_cycles']:.4g} cycles); SM {homes['touched_sm']}'s "
                  f"group {len(homes['same_group'])} SMs, the other {len(homes['other_group'])}",
                  "ns per warp load of m sectors, every sector in the SM's partition (home), copied there (copy), "
                  "or only in the other (far), median over SMs:", home_curves(homes).round(1).to_string(),
                  "per chasing SM:", home_curves(homes, by_sm=True).round(1).to_string()]
    table = pd.DataFrame(record["capacity"]).assign(mib=lambda t: t["bytes"] / 2**20)
    capacity = table.groupby(["mib", "touched_by", "lanes"])["ns_per_hop"].median()
    lines += ["capacity, ns per hop (median):", capacity.unstack([1, 2]).round(1).to_string()]
    try:
        fractions = hit_fractions(record)
        lines += ["hit fraction of data every SM read (one lane):",
                  fractions.assign(mib=fractions["bytes"] / 2**20).round(3).to_string(index=False),
                  f"effective capacity: {effective_bytes(fractions) / 2**20:.1f} MiB "
                  f"of {record['l2_bytes'] / 2**20:g}"]
    except InputError as error:
        lines.append(f"no hit fractions: {error}")
    return lines


def _measure(profile, seed: int, command: str) -> dict:
    from .device import device_info, require_gpu
    from .microbench.sweep import check_device, make_setup

    cp = require_gpu()
    check_device(cp, profile)
    info = device_info()
    l2_bytes, revisit_bytes = info["l2_bytes"], make_setup(profile).l2_bytes
    probe = _Probe(cp, seed)
    flush = cp.ones(FLUSH_L2S * l2_bytes // 4, dtype=cp.uint32)
    revisits = _revisits(probe, revisit_bytes)
    placement = _placement(probe, revisit_bytes, info["sms"])
    return {"device": info["device"], "driver": info["driver"], "date": info["date"], "command": command,
            "l2_bytes": l2_bytes, "revisit_bytes": revisit_bytes, "revisits": revisits, "placement": placement,
            "homes": _homes(probe, revisit_bytes, placement, flush, info["sms"]),
            "capacity": _capacity(probe, l2_bytes, flush)}


def _read_record(path: str) -> dict:
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(record, dict) or not all(key in record for key in RECORD_KEYS):
            raise ValueError(f"it lacks one of {', '.join(RECORD_KEYS)}")
        rows = record["capacity"]
        if not isinstance(rows, list) or not all(isinstance(r, dict) and all(k in r for k in CAPACITY_ROW_KEYS)
                                                 for r in rows):
            raise ValueError(f"a capacity row lacks one of {', '.join(CAPACITY_ROW_KEYS)}")
    except (OSError, ValueError) as error:
        raise InputError(f"--record {path}: not an l2_probe record ({error})") from None
    return record


def main(argv=None) -> int:
    """CLI: run the probe on GPU 0 (--out) or read an earlier run (--record), and with --write put its
    [l2_capacity] and [l2_partitions] into a copy of the profile (exit 2 with one line on bad input or no GPU)."""
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.l2_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="profile of this GPU (its L2 size sets the buffers)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--out", help="run the probe and write its record here (JSON)")
    source.add_argument("--record", help="an earlier run's record (JSON) instead of running the probe")
    parser.add_argument("--write", metavar="PROFILE.toml",
                        help="write the [l2_capacity] and [l2_partitions] sections into this copy of --base")
    parser.add_argument("--seed", type=int, default=1, help="seed of the cycles (default 1)")
    args = parser.parse_args(argv)
    command = "python -m gpu_validate.l2_probe " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        from opmachine.profile import load_profile, write_gpu_section

        if args.out is not None:
            if not args.out.endswith(".json"):
                raise InputError(f"--out {args.out}: the probe writes JSON, name it .json")
            check_target(args.out)
        if args.write is not None:
            check_target(args.write)
        profile = load_profile(args.base, kind="gpu")
        record = _read_record(args.record) if args.record else _measure(profile, args.seed, command)
        sections = {}
        if args.write is not None:
            sections["l2_capacity"] = l2_capacity(record)
            if record.get("homes"):
                sections["l2_partitions"] = l2_partitions(record)
        if args.out is not None:
            write_text(args.out, json.dumps(record, indent=1) + "\n")
        for table, section in sections.items():  # the second written into the first's output
            profile = write_gpu_section(args.write, profile, table, section)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(_summary(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
