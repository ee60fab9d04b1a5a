"""The command `python -m gpu_validate.microbench`: measure S(m) on this GPU and write the profile, or,
with `--instructions`, measure the instruction costs and add them to a profile as [instructions]."""
from __future__ import annotations

import argparse
import datetime
import sys
from pathlib import Path

from simdmodel.atomic import check_target, write_text
from simdmodel.errors import InputError

from ..device import device_info, require_gpu
from . import instructions
from .raw import (_one_line, curve_provenance, curve_samples, curve_summary, hardware_notes, method_comment,
                  one_warp_samples, side_numbers)
from .sweep import check_device, make_setup, measure

SWEEP_ONLY = ("raw", "dram_mib", "l2_mib", "across", "seed")
"""Options of the service-curve sweep that --instructions does not take."""
INSTRUCTIONS_ONLY = ("raw_instructions", "sub_partitions")


def _option(dest: str) -> str:
    return "--" + dest.replace("_", "-")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.microbench",
                                     description="Measure the GPU's service curves S(m) and write a hardware profile; "
                                                 "with --instructions, its instruction costs ([instructions]).")
    parser.add_argument("--base", required=True, help="profile whose hardware section is kept (name or .toml)")
    parser.add_argument("--out", required=True, help="profile file to write (.toml)")
    parser.add_argument("--instructions", action="store_true",
                        help="measure the instruction costs instead of the curves: --out gets --base's profile as it "
                             "is (curves, comments and all) with its [instructions] section added or replaced")
    parser.add_argument("--raw", help="also write the raw measurements here (CSV)")
    parser.add_argument("--raw-instructions", help="with --instructions: also write their raw measurements here (CSV)")
    parser.add_argument("--sub-partitions", type=int,
                        help="with --instructions: SM sub-partitions (default: the spec for the compute capability)")
    parser.add_argument("--quick", action="store_true", help="fewer warps, splits and repeats (a smoke run)")
    parser.add_argument("--repeats", type=int, help="timed launches per configuration (default 5, quick 3)")
    parser.add_argument("--dram-mib", type=int, help="DRAM buffer size in MiB, a power of two (default 1024)")
    parser.add_argument("--l2-mib", type=int, help="L2 buffer size in MiB, a power of two (default: about L2/3)")
    parser.add_argument("--target-ms", type=float, help="length of each timed launch (default 2, quick 0.5)")
    parser.add_argument("--across", choices=("min", "median"),
                        help="how the (warps, per_warp) splits of one m are combined (default min)")
    parser.add_argument("--seed", type=int, help="seed of the random chase orders and offsets (default 1)")
    return parser


def _check_common(args) -> Path:
    if args.repeats is not None and args.repeats < 1:
        raise InputError(f"--repeats must be at least 1, got {args.repeats}")
    if args.target_ms is not None and not 0.01 <= args.target_ms <= 1000:
        raise InputError(f"--target-ms must be in 0.01..1000, got {args.target_ms}")
    out = Path(args.out)
    if out.suffix != ".toml":
        raise InputError(f"{out}: a profile file must end in .toml")
    check_target(out)
    return out


def main(argv=None) -> int:
    """CLI: measure S(m) (or, with --instructions, the instruction costs) on this GPU and write the
    profile (exit 2 with one line on bad input or no GPU)."""
    args = build_parser().parse_args(argv)
    command = "python -m gpu_validate.microbench " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        wrong = [d for d in (SWEEP_ONLY if args.instructions else INSTRUCTIONS_ONLY) if getattr(args, d) is not None]
        if wrong:
            raise InputError(f"{_option(wrong[0])} is an option of the "
                             f"{'service-curve sweep, not of --instructions' if args.instructions else '--instructions run'}")
        if args.instructions:
            return _instructions(args, command)
        return _curves(args, command)
    except InputError as error:
        print(f"error: {_one_line(error)}", file=sys.stderr)
        return 2


def _curves(args, command: str) -> int:
    from opmachine.profile import load_profile, write_gpu_curves

    out = _check_common(args)
    if args.raw:
        check_target(args.raw)
    across = args.across or "min"
    base = load_profile(args.base, kind="gpu")
    setup = make_setup(base, args.quick, args.repeats, args.dram_mib, args.l2_mib, args.target_ms)
    check_device(require_gpu(), base)
    info = device_info()
    started = datetime.datetime.now(datetime.UTC)
    raw = measure(setup, 1 if args.seed is None else args.seed)
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    if args.raw:
        write_text(args.raw, raw.to_csv(index=False, float_format="%.17g"))
    samples = {**curve_samples(raw, across=across), **one_warp_samples(raw)}
    side = side_numbers(raw)
    provenance = {
        "provenance": curve_provenance(across),
        "device": info["device"],
        "driver": info["driver"],
        "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": command,
    }
    write_gpu_curves(out, base, samples, provenance, comment=method_comment(samples, side, dict(setup.as_comment(), across=across)),
                     hardware_notes=hardware_notes(base.path))
    print("\n".join(curve_summary(samples)))
    for name, value in side.items():
        print(f"{name}: S(1) = {value:.4g} ns")
    print(f"sweep: {len(raw)} timed launches in {seconds:.1f} s; wrote {out}" + (f" and {args.raw}" if args.raw else ""))
    return 0


def _instructions(args, command: str) -> int:
    from opmachine.profile import load_profile, write_gpu_instructions

    out = _check_common(args)
    raw_path = Path(args.raw_instructions) if args.raw_instructions else None
    if raw_path is not None:
        check_target(raw_path)
        if raw_path.resolve() == out.resolve():
            raise InputError(f"--raw-instructions {raw_path} is the --out file")
    base = load_profile(args.base, kind="gpu")
    setup = instructions.make_setup(base, args.quick, args.repeats, args.target_ms, args.sub_partitions)
    check_device(require_gpu(), base)
    info = device_info()
    started = datetime.datetime.now(datetime.UTC)
    raw, values = instructions.run(setup)
    seconds = (datetime.datetime.now(datetime.UTC) - started).total_seconds()
    if raw_path is not None:
        write_text(raw_path, raw.to_csv(index=False, float_format="%.17g"))
    provenance = {"method": instructions.method_provenance(), "device": info["device"], "driver": info["driver"],
                  "date": started.strftime("%Y-%m-%dT%H:%M:%SZ"), "command": command}
    write_gpu_instructions(out, base, instructions.costs(values, provenance),
                           notes=instructions.method_notes(setup, values))
    print("\n".join(instructions.summary(values)))
    print(f"instructions: {len(raw)} timed launches in {seconds:.1f} s; wrote {out}"
          + (f" and {raw_path}" if raw_path else ""))
    return 0
