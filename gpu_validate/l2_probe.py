"""What one warp's L2 load costs beyond the service curves' single number: whether its SM read the
sector before, whether the GPU was idle just before, and how much of the L2 keeps data every SM read.

    python -m gpu_validate.l2_probe --base h200 --out probe.json [--write PROFILE.toml]
    python -m gpu_validate.l2_probe --base h200 --record probe.json --write PROFILE.toml   # no GPU

Both parts chase `gpu_validate/cuda/microbench.cu`'s random cycles with `mb_chase_1` (ld.global.cg,
one warp, each lane its own chain), every launch from a segment of the cycle that no chase of this
run visited before (`segment_starts`), timed back to back behind the hold kernel (`timing`):

- revisits: a cycle the size of `gpu_validate.microbench`'s l2_hit buffer (a power of two near
  L2 / 3), read twice by every SM with `mb_touch` first, for 1 and for 32 lanes: `first` visits of
  fresh segments, each followed at once by the same segment `again`, and fresh segments
  `after_idle` (REVISIT_IDLE_S of idle GPU before each);
- capacity: cycles of CAPACITY_FRACTIONS of the L2 size, each read twice by every SM (`every_sm`) or
  by one block (`one_block`), or not at all after a read of FLUSH_L2S x L2 bytes elsewhere
  (`flushed`: every hop misses, at that buffer's size), then 1 or 32 lanes chase fresh segments.
  With one lane the ns per hop is the mean of hits and misses, so against the size it shows how
  much of the L2 holds data that every SM read (the BFS kernels' case); with 32 lanes a hop waits
  for the slowest of 32 sectors.

The JSON holds the device, driver, date and command, and one row per timed launch. `--write` puts
the profile's [l2_capacity] (`opmachine.profile.l2_capacity`) into a copy of --base: `hit_fractions`
and `effective_bytes` derive it from the one-lane capacity runs.
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

REVISIT_LANES = (1, 32)
REVISIT_REPEATS = 5
REVISIT_IDLE_S = 0.05
REVISIT_NS = 1e6  # about 1 ms a launch
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


class _Probe:
    """The kernels, one random cycle at a time, and timed launches of fresh segments."""

    def __init__(self, cp, seed: int):
        self.cp = cp
        module = microbench_module(cp)
        self.chase = module.get_function("mb_chase_1")
        self.touch_kernel = module.get_function("mb_touch")
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


def _capacity(probe: _Probe, l2_bytes: int) -> list[dict]:
    rows = []
    flush = probe.cp.ones(FLUSH_L2S * l2_bytes // 4, dtype=probe.cp.uint32)
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


def _summary(record: dict) -> list[str]:
    import pandas as pd

    lines = [f"{record['device']}, driver {record['driver']}, {record['date']}"]
    if record["revisits"]:
        revisits = pd.DataFrame(record["revisits"]).groupby(["lanes", "case"])["ns_per_hop"].median().unstack()
        lines += ["revisits, ns per hop (median):", revisits.round(1).to_string()]
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
    return {"device": info["device"], "driver": info["driver"], "date": info["date"], "command": command,
            "l2_bytes": l2_bytes, "revisit_bytes": revisit_bytes,
            "revisits": _revisits(probe, revisit_bytes), "capacity": _capacity(probe, l2_bytes)}


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
    [l2_capacity] into a copy of the profile (exit 2 with one line on bad input or no GPU)."""
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.l2_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="profile of this GPU (its L2 size sets the buffers)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--out", help="run the probe and write its record here (JSON)")
    source.add_argument("--record", help="an earlier run's record (JSON) instead of running the probe")
    parser.add_argument("--write", metavar="PROFILE.toml",
                        help="write the [l2_capacity] section into this copy of the --base profile")
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
        section = l2_capacity(record) if args.write else None
        if args.out is not None:
            write_text(args.out, json.dumps(record, indent=1) + "\n")
        if section is not None:
            write_gpu_section(args.write, profile, "l2_capacity", section)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print("\n".join(_summary(record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
