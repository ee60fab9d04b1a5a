"""Write a complete, validated hardware profile for the GPU this runs on (seed 003 §6.5, Fig. 6).

    python -m gpu_validate.profile_gpu --out opmachine/profiles/NAME.toml [--base PROFILE] [--name NAME]
        [--description TEXT] [--raw RAW.csv] [--raw-instructions RAW.csv] [--launches N] [--quick]
        [sweep and hardware options]

One run on the GPU makes the whole profile (`opmachine.profile`'s schema):

- [device]: the name CUDA reports and the compute capability; with the SM count they are what a
  GPU is matched to its profile by (`gpu_validate.device.profile_for_device`).
- [hardware], from the device's own attributes where it has them (DEVICE_SOURCES: warp size, SMs,
  warps, blocks and threads per SM and block, L2 size, SM clock, and the peak DRAM bandwidth from
  the memory clock and bus width); what it cannot report (UNREPORTED: L1 size, L2 ways and line,
  sector, DRAM row block, row buffers, L2 bandwidth) from an option (`--l2-ways 16`) or else from
  `--base PROFILE`, a profile of the same compute capability; the per-launch constants
  `launch_overhead_ns` and `grid_scan_ns` measured as `gpu_validate.overheads` measures them.
- [service]: the S(m) curves of the `gpu_validate.microbench` sweep, and the run (command,
  device, driver, date).
- [provenance]: every [hardware] value's origin: `device`, `measured` or `option` (this run) or
  `base NAME` (with that profile's note).
- [instructions]: the costs of warp instructions and shared-memory accesses in SM cycles, with the
  SM clock measured beside them (`gpu_validate.microbench.instructions`), and the run.

Everything that can be checked before measuring is (options, the device, the base, a draft of the
profile through the schema); an existing --out made for another GPU is refused. The profile is
written to a temporary file beside --out, loaded back with every check, and renamed into place.
Bad input exits 2 with one line and writes nothing.
"""
from __future__ import annotations

import argparse
import datetime
import math
import shlex
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from opmachine.profile import (
    GPU_HARDWARE_KEYS,
    GPUProfile,
    ProfileError,
    available_profiles,
    load_profile,
    parse_profile_bytes,
    render_gpu_profile,
    write_gpu_profile,
)
from opmachine.profile.schema import NAME_RE
from simdmodel.atomic import check_target, write_text
from simdmodel.errors import InputError

from . import microbench, overheads
from .device import device_attributes, device_info, require_gpu

DEVICE_SOURCES = {
    "warp_size": "device: cudaDevAttrWarpSize",
    "sms": "device: cudaDevAttrMultiProcessorCount",
    "max_warps_per_sm": "device: cudaDevAttrMaxThreadsPerMultiProcessor / warp size",
    "max_blocks_per_sm": "device: cudaDevAttrMaxBlocksPerMultiprocessor",
    "max_threads_per_block": "device: cudaDevAttrMaxThreadsPerBlock",
    "l2_bytes": "device: cudaDevAttrL2CacheSize",
    "clock_mhz": "device: cudaDevAttrClockRate, the maximum SM clock",
    "dram_bandwidth_gbs": ("device: peak = 2 (double data rate) x cudaDevAttrMemoryClockRate x "
                           "cudaDevAttrGlobalMemoryBusWidth / 8"),
}
"""[hardware] keys read from the device's own attributes, and how."""
UNREPORTED = {"l1_bytes": int, "l2_ways": int, "l2_line_bytes": int, "sector_bytes": int,
              "dram_block_bytes": int, "row_buffers": int, "l2_bandwidth_gbs": float}
"""[hardware] keys the device cannot report: each from its option (`--l2-ways`) or from --base."""
MEASURED = ("launch_overhead_ns", "grid_scan_ns")
"""[hardware] keys measured by this run (gpu_validate.overheads' method)."""
OVERRIDABLE = ("dram_bandwidth_gbs",)
"""Device-derived keys an option may replace (a spec figure instead of the clock x bus-width peak)."""
PLACEHOLDER_CURVES = {name: ([1.0, 2.0], [2.0, 1.0]) for name in ("l2_hit", "row_hit", "row_miss")}
DEFAULT_LAUNCHES = 2000
assert set(DEVICE_SOURCES) | set(UNREPORTED) | set(MEASURED) == set(GPU_HARDWARE_KEYS)


def _option(key: str) -> str:
    return "--" + key.replace("_", "-")


# ----------------------------------------------------------------------------------------------
# The hardware section (no measurement)


def hardware_from_device(attrs: dict) -> dict:
    """[hardware] values the device reports (DEVICE_SOURCES), from device_attributes()."""
    warp = attrs["warp_size"]
    return {
        "warp_size": warp,
        "sms": attrs["sms"],
        "max_warps_per_sm": attrs["max_threads_per_sm"] // warp if warp > 0 else 0,
        "max_blocks_per_sm": attrs["max_blocks_per_sm"],
        "max_threads_per_block": attrs["max_threads_per_block"],
        "l2_bytes": attrs["l2_bytes"],
        "clock_mhz": attrs["sm_clock_khz"] / 1000,
        "dram_bandwidth_gbs": round(2 * attrs["memory_clock_khz"] * 1e3 * attrs["memory_bus_bits"] / 8 / 1e9, 1),
    }


def _base_note(base: GPUProfile, key: str) -> str:
    """The base profile's own account of a value: its [provenance] entry, else its `# note`."""
    if key in base.hardware_provenance:
        return base.hardware_provenance[key]
    return microbench.hardware_notes(base.path).get(key, "no note there")


def hardware_plan(attrs: dict, options: dict, base: GPUProfile | None) -> tuple[dict, dict]:
    """([hardware] values, [provenance] entries) for everything but the measured keys.

    Device attributes first (an option replaces the OVERRIDABLE ones), then each UNREPORTED key
    from its option, else from `base`. InputError naming every key left without a source.
    """
    values = hardware_from_device(attrs)
    sources = dict(DEVICE_SOURCES)
    for key in OVERRIDABLE:
        if options.get(key) is not None:
            values[key], sources[key] = options[key], f"option: {_option(key)} {options[key]:g}"
    missing = []
    for key in UNREPORTED:
        if options.get(key) is not None:
            values[key], sources[key] = options[key], f"option: {_option(key)} {options[key]:g}"
        elif base is not None:
            values[key], sources[key] = getattr(base, key), f"base {base.name}: {_base_note(base, key)}"
        else:
            missing.append(key)
    if missing:
        same = [name for name in available_profiles("gpu")
                if load_profile(name).compute_capability == attrs["compute_capability"]]
        hint = f" ({', '.join(same)} for compute capability {attrs['compute_capability']})" if same else ""
        raise InputError(f"the device cannot report {', '.join(missing)}: pass --base PROFILE of the same "
                         f"architecture{hint} or {' '.join(_option(k) + ' ...' for k in missing)}")
    if values["sector_bytes"] != microbench.SECTOR_BYTES:
        raise InputError(f"sector_bytes {values['sector_bytes']}: the microbenchmarks measure "
                         f"{microbench.SECTOR_BYTES}-byte sectors")
    return values, sources


def check_base(base: GPUProfile | None, attrs: dict) -> None:
    """InputError unless `base` (if any) is of the device's compute capability (its architecture)."""
    if base is not None and base.compute_capability != attrs["compute_capability"]:
        raise InputError(f"--base {base.name} is for compute capability {base.compute_capability}, but this "
                         f"{attrs['device']} is {attrs['compute_capability']}: name a profile of the same "
                         "architecture, or give the values as options")


def check_existing(out: Path, attrs: dict) -> None:
    """InputError when `out` already holds a profile of another GPU (or a CPU profile): never overwritten."""
    if not out.is_file():
        return
    try:
        existing = load_profile(str(out))
    except ProfileError:
        return  # not a usable profile: replaced
    if not isinstance(existing, GPUProfile):
        raise InputError(f"{out}: holds a cpu profile; write this GPU's profile to another file")
    if not existing.describes(attrs["device"], attrs["sms"]):
        raise InputError(f"{out}: holds profile {existing.name} of {existing.device_name} with {existing.sms} SMs, "
                         f"not of this {attrs['device']} with {attrs['sms']} SMs: write to another file")


# ----------------------------------------------------------------------------------------------
# The run


@dataclass(frozen=True)
class Plan:
    """Everything checked before measuring: where to write, the device, the hardware and the sweep."""

    out: Path
    raw: Path | None
    raw_instructions: Path | None
    name: str
    description: str
    info: dict
    attrs: dict
    hardware: dict
    sources: dict
    draft: GPUProfile
    setup: microbench.Setup
    inst_setup: microbench.instructions.Setup
    command: str
    compaction_sizes: tuple[int, ...] = overheads.COMPACTION_SIZES
    placements: int = overheads.PLACEMENTS


QUICK_COMPACTIONS = {"compaction_sizes": (1, 1024, 65536), "placements": 4}
"""--quick: the compaction timed on three sizes and four allocations (a smoke run)."""


def _draft(plan_fields: dict, label: str) -> GPUProfile:
    """The profile with placeholder curves and launch constants, through the schema: the hardware
    section is checked before anything is measured, and the sweep and launches are sized from it."""
    hardware = dict(plan_fields["hardware"], launch_overhead_ns=0.0, grid_scan_ns=0.0)
    text = render_gpu_profile(name=plan_fields["name"], description=plan_fields["description"],
                              device_name=plan_fields["attrs"]["device"],
                              compute_capability=plan_fields["attrs"]["compute_capability"], hardware=hardware,
                              curves=PLACEHOLDER_CURVES, provenance=_run_provenance(plan_fields, "min", "draft"),
                              label=label)
    return parse_profile_bytes(text.encode("utf-8"), label, label)


def _run_provenance(fields: dict, across: str, date: str) -> dict[str, str]:
    return {"provenance": microbench.curve_provenance(across, by="gpu_validate.profile_gpu"),
            "device": fields["attrs"]["device"], "driver": fields["info"]["driver"], "date": date,
            "command": fields["command"]}


def make_plan(args, argv: list[str]) -> Plan:
    """Check the options, the device and the base, and size the run; InputError on any problem."""
    out = Path(args.out)
    if out.suffix != ".toml":
        raise InputError(f"{out}: a profile file must end in .toml")
    check_target(out)
    raw = Path(args.raw) if args.raw else None
    if raw is not None:
        check_target(raw)
        if raw.resolve() == out.resolve():
            raise InputError(f"--raw {raw} is the --out file")
    raw_instructions = Path(args.raw_instructions) if args.raw_instructions else None
    if raw_instructions is not None:
        check_target(raw_instructions)
        if raw_instructions.resolve() in {out.resolve()} | ({raw.resolve()} if raw else set()):
            raise InputError(f"--raw-instructions {raw_instructions} is the --out or --raw file")
    name = args.name or out.stem
    if not NAME_RE.match(name):
        raise InputError(f"--name must be letters, digits, '_', '.', '+' or '-' (starting with a letter or "
                         f"digit), got {name!r}")
    if args.target_ms is not None and not 0.01 <= args.target_ms <= 1000:
        raise InputError(f"--target-ms must be in 0.01..1000, got {args.target_ms:g}")
    base = load_profile(args.base, kind="gpu") if args.base else None
    require_gpu()
    info = device_info()
    attrs = device_attributes()
    check_base(base, attrs)
    check_existing(out, attrs)
    options = {key: getattr(args, key) for key in (*UNREPORTED, *OVERRIDABLE)}
    hardware, sources = hardware_plan(attrs, options, base)
    description = args.description or (f"{attrs['device']} ({attrs['sms']} SMs, compute capability "
                                       f"{attrs['compute_capability']}), profiled on the device")
    fields = {"name": name, "description": description, "info": info, "attrs": attrs, "hardware": hardware,
              "command": "python -m gpu_validate.profile_gpu " + shlex.join(argv)}
    draft = _draft(fields, str(out))
    setup = microbench.make_setup(draft, args.quick, args.repeats, args.dram_mib, args.l2_mib, args.target_ms)
    sub_partitions = args.sub_partitions
    if sub_partitions is None and base is not None and base.instructions is not None:
        sub_partitions = base.instructions.sub_partitions  # the base's constant, else the spec's
    inst_setup = microbench.instructions.make_setup(draft, args.quick, args.repeats, args.target_ms, sub_partitions)
    return Plan(out=out, raw=raw, raw_instructions=raw_instructions, name=name, description=description, info=info,
                attrs=attrs, hardware=hardware, sources=sources, draft=draft, setup=setup, inst_setup=inst_setup,
                command=fields["command"], **(QUICK_COMPACTIONS if args.quick else {}))


def header_comment(plan: Plan, date: str, samples: dict, side: dict, launch: dict, launches: int,
                   across: str) -> list[str]:
    """The profile's `#` header: what it is, how to read [provenance], how everything was measured."""
    a = plan.attrs
    paragraphs = [
        (f"GPU profile {plan.name}: {a['device']} ({a['sms']} SMs, compute capability {a['compute_capability']}, "
         f"driver {plan.info['driver']}), written on the device by python -m gpu_validate.profile_gpu, {date}. "
         "[provenance] gives each [hardware] value's origin: 'device' (the device's own attributes) and "
         "'measured' come from this run, named in [service] (command, device, driver, date); 'option' "
         "from its command line; 'base NAME' from that profile."),
        microbench.method_comment(samples, side, dict(plan.setup.as_comment(), across=across)),
        (f"Per-launch constants, timed as BFS launches are (back to back behind the hold kernel, CUDA "
         f"events around each), median of {launches} launches each: an empty one-block launch "
         f"{launch['empty_one_block_ns']:.1f} ns (launch_overhead_ns); an empty full-wave launch "
         f"({launch['full_wave_blocks']} blocks) {launch['empty_full_wave_ns']:.1f} ns; a one-node compaction "
         f"{launch['compact_one_node_ns']:.1f} ns (median over {launch['placements']} fresh allocations, 10th to "
         f"90th percentile {launch['compact_one_node_p10_ns']:.1f} to {launch['compact_one_node_p90_ns']:.1f} ns), "
         "minus the empty one-block launch = grid_scan_ns."),
    ]
    return [line for text in paragraphs for para in text.split("\n") for line in (textwrap.wrap(para, 98) or [""])]


def run(plan: Plan, launches: int, seed: int, across: str) -> tuple[GPUProfile, dict, dict, float]:
    """Measure on the device and write the profile (and the raw tables); returns the written profile,
    the curve samples, the per-launch numbers and the seconds the measurements took."""
    started = datetime.datetime.now(datetime.UTC)
    date = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    launch = overheads.measure(plan.draft, launches, plan.placements, seed)
    compactions = overheads.measure_compactions(plan.draft, max(launches // plan.placements, 16), plan.placements,
                                                plan.compaction_sizes, seed)
    raw = microbench.measure(plan.setup, seed)
    inst_raw, inst_values = microbench.instructions.run(plan.inst_setup)
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    samples = {**microbench.curve_samples(raw, across=across), **microbench.one_warp_samples(raw)}
    side = microbench.side_numbers(raw)
    hardware = dict(plan.hardware)
    sources = dict(plan.sources)
    hardware["launch_overhead_ns"] = round(launch["launch_overhead_ns"], 1)
    hardware["grid_scan_ns"] = round(launch["grid_scan_ns"], 1)
    sources["launch_overhead_ns"] = (f"measured: an empty one-block kernel, median of {launches} launches back to "
                                     "back behind the hold kernel (gpu_validate.overheads' method)")
    sources["grid_scan_ns"] = ("measured: a one-node compaction (full-wave launch, counts, arrivals, one block's "
                               f"scan of the counts, offsets polled; median over {launch['placements']} fresh "
                               "allocations) minus the empty "
                               "one-block launch, same launches")
    if plan.raw is not None:
        write_text(plan.raw, raw.to_csv(index=False, float_format="%.17g"))
    if plan.raw_instructions is not None:
        write_text(plan.raw_instructions, inst_raw.to_csv(index=False, float_format="%.17g"))
    fields = {"attrs": plan.attrs, "info": plan.info, "command": plan.command}
    inst_provenance = {"method": microbench.instructions.method_provenance("gpu_validate.profile_gpu"),
                       "device": plan.attrs["device"], "driver": plan.info["driver"], "date": date,
                       "command": plan.command}
    profile = write_gpu_profile(
        plan.out, name=plan.name, description=plan.description, device_name=plan.attrs["device"],
        compute_capability=plan.attrs["compute_capability"], hardware=hardware, curves=samples,
        provenance=_run_provenance(fields, across, date),
        hardware_provenance={key: sources[key] for key in GPU_HARDWARE_KEYS},
        header=header_comment(plan, date, samples, side, launch, launches, across),
        instructions=microbench.instructions.costs(inst_values, inst_provenance),
        instructions_notes=microbench.instructions.method_notes(plan.inst_setup, inst_values),
        compaction=overheads.compaction_costs({"compactions": compactions, "device": plan.attrs["device"],
                                               "driver": plan.info["driver"], "date": date,
                                               "command": plan.command}))
    return profile, samples, launch, seconds


# ----------------------------------------------------------------------------------------------
# CLI


class _Parser(argparse.ArgumentParser):
    """argparse whose mistakes are one InputError line (exit 2 through main), not usage text."""

    def error(self, message):
        raise InputError(f"{message} (see --help)")


def _positive(kind):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            value = None
        if value is None or not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"must be {'an integer' if kind is int else 'a number'} > 0, "
                                             f"got {text!r}")
        return value

    parse.__name__ = kind.__name__
    return parse


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m gpu_validate.profile_gpu",
                     description="Measure this GPU and write its complete, validated hardware profile.")
    parser.add_argument("--out", required=True, help="profile file to write (.toml), e.g. opmachine/profiles/NAME.toml")
    parser.add_argument("--name", help="the profile's name (default: --out's file name without .toml)")
    parser.add_argument("--description", help="one line describing the GPU (default: its name, SMs and "
                                              "compute capability)")
    parser.add_argument("--base", help="profile of the same compute capability (name or .toml) giving what the "
                                       "device cannot report: " + ", ".join(UNREPORTED))
    parser.add_argument("--raw", help="also write the sweep's raw measurements here (CSV)")
    parser.add_argument("--raw-instructions", help="also write the instruction measurements' raw table here (CSV)")
    parser.add_argument("--sub-partitions", type=_positive(int),
                        help="SM sub-partitions the issue rate is divided by (default: --base's [instructions] "
                             "value, else the spec for the compute capability, 4 from Volta on)")
    parser.add_argument("--launches", type=_positive(int), default=DEFAULT_LAUNCHES,
                        help=f"timed launches per per-launch case (default {DEFAULT_LAUNCHES})")
    parser.add_argument("--quick", action="store_true", help="fewer warps, splits and repeats (a smoke run)")
    parser.add_argument("--repeats", type=_positive(int), help="timed launches per sweep configuration "
                                                               "(default 5, quick 3)")
    parser.add_argument("--dram-mib", type=_positive(int), help="DRAM buffer in MiB, a power of two (default 1024)")
    parser.add_argument("--l2-mib", type=_positive(int), help="L2 buffer in MiB, a power of two (default: about L2/3)")
    parser.add_argument("--target-ms", type=_positive(float), help="length of each timed sweep launch "
                                                                   "(default 2, quick 0.5)")
    parser.add_argument("--across", choices=("min", "median"), default="min",
                        help="how the (warps, per_warp) splits of one m are combined (default min)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random chase orders and offsets")
    hardware = parser.add_argument_group("hardware the device cannot report (else from --base)")
    for key, kind in UNREPORTED.items():
        hardware.add_argument(_option(key), dest=key, type=_positive(kind), metavar="N" if kind is int else "X")
    hardware.add_argument("--dram-bandwidth-gbs", dest="dram_bandwidth_gbs", type=_positive(float), metavar="X",
                          help="instead of the device's memory clock x bus width peak (e.g. a spec figure)")
    return parser


def main(argv=None) -> int:
    """CLI: measure this GPU and write its profile (exit 2 with one line on bad input or no GPU)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        plan = make_plan(args, argv)
        profile, samples, launch, seconds = run(plan, args.launches, args.seed, args.across)
    except InputError as error:
        print(f"error: {microbench._one_line(error)}", file=sys.stderr)
        return 2
    print("\n".join(microbench.curve_summary(samples)))
    print(f"launch_overhead_ns = {profile.launch_overhead_ns:g}, grid_scan_ns = {profile.grid_scan_ns:g}")
    print("\n".join(microbench.instructions.summary(profile.instructions.values())))
    written = [str(path) for path in (plan.out, plan.raw, plan.raw_instructions) if path is not None]
    print(f"{profile.device_name}, {profile.sms} SMs: measured in {seconds:.1f} s; wrote {', '.join(written[:-1])}"
          + (" and " if len(written) > 1 else "") + written[-1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
