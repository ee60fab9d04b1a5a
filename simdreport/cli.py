"""The `simdmodel` command line: `analyze`, `opm`, `validate`, `report`, `graph info`, `graph convert`.

The app layer's front door: argument parsing and printing only; the work is the library calls of
the layers below (`simdmodel.analyze`, `opmachine.predict_bfs`, `gpu_validate.pipeline.validate_graph`,
`simdreport.build_report`). User mistakes (bad files, options, ids) print one line
`simdmodel: error: ...` and exit 2; data a run goes on without prints one `simdmodel: warning: ...`
line; output files are written atomically, so a failed run leaves none behind. Heavy modules load
lazily. `python -m simdreport` runs it too.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import warnings

from .suites import VALIDATION_KERNELS

DEFAULT_SPEC = "rmat:scale=16,ef=16,seed=1"
EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad option on one line instead of usage plus message."""

    def error(self, message):
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(EXIT_USAGE)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None
    if not values:
        raise argparse.ArgumentTypeError("expected at least one integer")
    return values


def _name_list(text: str) -> list[str]:
    names = [part.strip().lower() for part in text.split(",") if part.strip()]
    if not names:
        raise argparse.ArgumentTypeError("expected at least one name")
    return names


def _graph_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("graph loading")
    group.add_argument("--undirected", action="store_true", help="store every edge in both directions")
    group.add_argument("--drop-self-loops", action="store_true", help="drop edges v -> v")
    group.add_argument("--drop-duplicates", action="store_true", help="keep only the first copy of a repeated edge")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress bars or notes on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="simdmodel",
        description="SIMD lane efficiency of GPU BFS work mappings (UA / UR / ME), from a graph file "
        "or generator spec such as rmat:scale=20,ef=16.",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    analyze = commands.add_parser("analyze", help="lane accounting per mapping strategy")
    analyze.add_argument("spec", nargs="?", default=DEFAULT_SPEC,
                         help=f"graph file or generator spec (default {DEFAULT_SPEC})")
    sources = analyze.add_mutually_exclusive_group()
    sources.add_argument("--source", type=int, help="one BFS source vertex")
    sources.add_argument("--sources", type=int, default=10,
                         help="number of seeded random sources with out-degree > 0 (default 10, as seed 000)")
    analyze.add_argument("--seed", type=int, default=1, help="seed for picking sources (default 1)")
    analyze.add_argument("--group-sizes", type=_int_list, default=[1, 2, 4, 8, 16, 32],
                         help="group sizes S for the group strategy (default 1,2,4,8,16,32)")
    analyze.add_argument("--strategies", type=_name_list, default=["group", "ws", "scan"],
                         help="strategies to account (default group,ws,scan)")
    analyze.add_argument("--cta-size", type=int, default=256, help="CTA size C for scan (default 256)")
    analyze.add_argument("--order", choices=["sorted", "discovery"], default="sorted",
                         help="frontier order (default sorted)")
    analyze.add_argument("--per-level", action="store_true", help="one row per level (and source)")
    analyze.add_argument("--format", choices=["table", "csv", "json"], default="table")
    analyze.add_argument("--out", help="write to this file instead of stdout")
    _graph_options(analyze)
    _common(analyze)

    _opm_parser(commands)
    _validate_parser(commands)
    _report_parser(commands)

    graph = commands.add_parser("graph", help="graph utilities")
    graph_commands = graph.add_subparsers(dest="graph_command", required=True, parser_class=_Parser)
    info = graph_commands.add_parser("info", help="size, degree statistics, average search depth")
    info.add_argument("spec", help="graph file or generator spec")
    info.add_argument("--sources", type=int, default=0,
                      help="average BFS depth over this many seeded random sources (default: skip)")
    info.add_argument("--seed", type=int, default=1)
    info.add_argument("--format", choices=["table", "json"], default="table")
    _graph_options(info)
    _common(info)

    convert = graph_commands.add_parser("convert", help="save a graph as native .npz")
    convert.add_argument("spec", help="graph file or generator spec")
    convert.add_argument("out", help="output .npz path")
    _graph_options(convert)
    _common(convert)
    return parser


def _validate_parser(commands) -> None:
    validate = commands.add_parser("validate", help="run the modelled kernels on the GPU and compare with the model")
    validate.add_argument("spec", help="graph file or generator spec")
    validate.add_argument("--kernels", type=_name_list, default=list(VALIDATION_KERNELS),
                          help=f"kernels to run (default {','.join(VALIDATION_KERNELS)})")
    sources = validate.add_mutually_exclusive_group()
    sources.add_argument("--source", type=int, help="one BFS source vertex")
    sources.add_argument("--sources", type=int, default=3, help="seeded random sources (default 3)")
    validate.add_argument("--seed", type=int, default=1, help="seed for picking sources (default 1)")
    validate.add_argument("--repeats", type=int, default=5, help="timed runs per BFS; the median is kept (default 5)")
    validate.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    validate.add_argument("--counters", action="store_true",
                          help="also profile sampled rounds of the first source with Nsight Compute (ncu)")
    validate.add_argument("--ncu-levels", type=int, default=24,
                          help="rounds per kernel ncu profiles, evenly spaced over the BFS (default 24)")
    validate.add_argument("--gpu", help="opmachine GPU profile for the predictions (default: the one for this device)")
    validate.add_argument("--l2", choices=["lru", "setassoc"], default="setassoc",
                          help="L2 model of the predictions (default setassoc)")
    validate.add_argument("--measure-only", action="store_true", help="write the measured tables, predict nothing")
    validate.add_argument("--measured", metavar="DIR",
                          help="predict and compare from an earlier run's measured tables (no GPU needed)")
    validate.add_argument("--out", default="validation", help="output directory (default ./validation)")
    _graph_options(validate)
    _common(validate)


def _report_parser(commands) -> None:
    report = commands.add_parser("report", help="figures and tables for a suite of graphs: index.html, report.md, CSVs")
    report.add_argument("specs", nargs="*", metavar="SPEC",
                        help="graph files or generator specs (default: the built-in suite of generated graphs)")
    report.add_argument("--gpu", default="h200", metavar="NAME",
                        help="GPU profile name or .toml path for the predictions (default h200: measured service "
                        "curves, and the committed GPU measurements are from an H200)")
    report.add_argument("--sources", type=int, default=10, metavar="K",
                        help="seeded random BFS sources per graph for the lane accounting (default 10, as seed 000)")
    report.add_argument("--measured", action="append", default=[], metavar="DIR",
                        help="also compare with this `simdmodel validate` output folder (repeatable)")
    report.add_argument("--out", default="report", metavar="DIR", help="output directory (default ./report)")
    _common(report)


def _opm_parser(commands) -> None:
    opm = commands.add_parser("opm", help="operator-machine prediction of BFS time per round (seed 003)")
    opm.add_argument("spec", nargs="?", default=DEFAULT_SPEC,
                     help=f"graph file or generator spec (default {DEFAULT_SPEC})")
    opm.add_argument("--kernel", default="topo", help="topo, sm-S (S in 1..32), ws or scan (default topo)")
    opm.add_argument("--gpu", default="k40c", help="GPU profile name or .toml path (default k40c, seed 003's GPU)")
    opm.add_argument("--cpu", help="predict the serial CPU BFS (seed 003 §4) on this CPU profile instead")
    opm.add_argument("--threads", type=int, help="launch exactly N threads (a multiple of 32)")
    opm.add_argument("--block", type=int, help="threads per block (default 256; the CTA size of scan)")
    opm.add_argument("--grid", type=int, help="blocks (default: one full wave for topo, what the frontier "
                     "needs up to a full wave for an expansion)")
    opm.add_argument("--source", type=int, help="BFS source (default: a seeded random vertex with edges)")
    opm.add_argument("--seed", type=int, default=1, help="seed for picking the default source (default 1)")
    opm.add_argument("--l2", choices=["lru", "setassoc"], default="lru",
                     help="L2 model: fully associative LRU (seed 003) or the profile's set-associative geometry")
    opm.add_argument("--warm-l2", action="store_true",
                     help="keep the L2's contents from launch to launch, as back-to-back launches find it "
                     "(needs --l2 setassoc; default: every launch starts cold, as Nsight Compute measures)")
    opm.add_argument("--time-model", choices=["critical", "eq4"],
                     help="critical (default): the load falls as warps finish and the last warps wait their "
                     "own latency; eq4: seed 003's Eq. 4 with one load N_G / W_max per launch")
    opm.add_argument("--occupancy", type=float,
                     help="measured achieved occupancy (0..1) to use as Eq. 4's load instead of N_G / W_max "
                     "(implies --time-model eq4)")
    opm.add_argument("--counters", help="counters mode: CSV of measured counts per launch (see opmachine.counters)")
    opm.add_argument("--per-level", action="store_true", help="one row per kernel launch")
    opm.add_argument("--format", choices=["table", "csv", "json"], default="table")
    opm.add_argument("--out", help="write to this file instead of stdout")
    _graph_options(opm)
    _common(opm)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # the command as given, for provenance
    return run_command(_dispatch, args)


def run_command(command, *args) -> int:
    """`command(*args)`'s exit status, run as the command line runs a command: each warning one
    `simdmodel: warning: ...` line, and an InputError or OSError one `simdmodel: error: ...` line and
    exit 2 (no traceback)."""
    from simdmodel.errors import InputError

    with _warnings_as_lines():
        try:
            return command(*args)
        except InputError as error:
            sys.stderr.write(f"simdmodel: error: {error}\n")
            return EXIT_USAGE
        except OSError as error:
            where = f"{error.filename}: " if getattr(error, "filename", None) else ""
            sys.stderr.write(f"simdmodel: error: {where}{error.strerror or error}\n")
            return EXIT_USAGE
        except MemoryError:
            sys.stderr.write("simdmodel: error: out of memory (try a smaller graph)\n")
            return 1
        except KeyboardInterrupt:
            sys.stderr.write("simdmodel: interrupted\n")
            return 130


def _dispatch(args) -> int:
    if args.command == "analyze":
        return _run_analyze(args)
    if args.command == "opm":
        return _run_opm(args)
    if args.command == "validate":
        return _run_validate(args)
    if args.command == "report":
        return _run_report(args)
    if args.graph_command == "info":
        return _run_info(args)
    return _run_convert(args)


@contextlib.contextmanager
def _warnings_as_lines():
    """Show each DataWarning raised while a command runs as one `simdmodel: warning: ...` line on
    stderr (other warnings as Python shows them)."""
    from simdmodel.errors import DataWarning

    with warnings.catch_warnings():
        original = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None):
            if issubclass(category, DataWarning):
                sys.stderr.write(f"simdmodel: warning: {message}\n")
            else:
                original(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _progress(args) -> bool:
    return not args.quiet and sys.stderr.isatty()


def _load(args):
    from simdmodel.load import load_graph

    return load_graph(args.spec, undirected=args.undirected, drop_self_loops=args.drop_self_loops,
                      drop_duplicates=args.drop_duplicates)


def _run_analyze(args) -> int:
    from simdmodel import render
    from simdmodel.atomic import check_target
    from simdmodel.frontier import check_source, pick_sources
    from simdmodel.strategies import mappings
    from simdmodel.lanes import analyze

    chosen = mappings(args.strategies, args.group_sizes, args.cta_size)
    if args.out:
        check_target(args.out)
    graph = _load(args)
    if args.source is not None:
        sources = [check_source(graph, args.source)]
    else:
        sources = pick_sources(graph, args.sources, args.seed)
    result = analyze(graph, sources, chosen, args.order, progress=_progress(args))
    text = render.render_analysis(result, args.format, args.per_level, cta_size=args.cta_size)
    render.emit(text, args.out)
    return 0


def _run_opm(args) -> int:
    from opmachine.kernels import check_block, check_grid, parse_kernel
    from opmachine.profile import load_profile

    from simdmodel.atomic import check_target
    from simdmodel.errors import InputError
    from simdmodel.frontier import check_source, pick_sources
    from simdmodel.render import emit

    kernel = parse_kernel(args.kernel)
    if args.threads is not None and (args.block is not None or args.grid is not None):
        raise InputError("--threads cannot be combined with --block or --grid")
    if args.block is not None:
        check_block(args.block)
    if args.grid is not None:
        check_grid(args.grid)
    given = {"--kernel": kernel.strategy != "topo", "--threads": args.threads is not None,
             "--block": args.block is not None, "--grid": args.grid is not None,
             "--counters": args.counters is not None, "--occupancy": args.occupancy is not None,
             "--l2": args.l2 != "lru", "--time-model": args.time_model is not None}
    gpu_only = [name for name, is_given in given.items() if is_given]
    if args.cpu and gpu_only:
        raise InputError(f"--cpu models the serial topology-driven BFS; {gpu_only[0]} applies to GPU kernels only")
    profile = load_profile(args.cpu, kind="cpu") if args.cpu else load_profile(args.gpu, kind="gpu")
    counters = None
    if args.counters:
        from opmachine.counters import read_counters

        counters = read_counters(args.counters)
    if args.out:
        check_target(args.out)
    graph = _load(args)
    source = check_source(graph, args.source) if args.source is not None else int(pick_sources(graph, 1, args.seed)[0])
    if args.cpu:
        from opmachine.cpu import predict_cpu
        from opmachine.render import render_cpu

        from simdmodel.frontier import bfs

        table = predict_cpu(graph, bfs(graph, source), profile)
        header = f"graph {graph.name}: n={graph.n:,} m={graph.m:,}  source {source}"
        emit(render_cpu(table, profile, args.format, args.per_level, header), args.out)
        return 0
    from opmachine.predict import predict_bfs
    from opmachine.render import render_gpu

    result = predict_bfs(graph, source, kernel, profile, l2_model=args.l2, block=args.block, grid=args.grid,
                         threads=args.threads, occupancy=args.occupancy, progress=_progress(args),
                         warm_l2=args.warm_l2,
                         time_model=args.time_model or ("eq4" if args.occupancy is not None else "critical"))
    if counters is not None:
        from opmachine.counters import predict_counters

        result = predict_counters(result, counters)
    emit(render_gpu(result, args.format, args.per_level), args.out)
    return 0


def _run_validate(args) -> int:
    from gpu_validate.bfs import LevelMismatch
    from gpu_validate.pipeline import validate_graph

    if args.measured:
        sources = None  # the measured ones
    else:
        sources = [args.source] if args.source is not None else args.sources
    try:
        run = validate_graph(lambda: _load(args), args.kernels, sources, args.gpu, out=args.out, seed=args.seed,
                             measured_dir=args.measured, measure_only=args.measure_only, counters=args.counters,
                             ncu_levels=args.ncu_levels, repeats=args.repeats, warmup=args.warmup, l2_model=args.l2,
                             command=" ".join(["simdmodel", *map(shlex.quote, args.argv)]), progress=_progress(args))
    except LevelMismatch as error:  # a kernel bug, not a user mistake: no timing, exit 1
        sys.stderr.write(f"simdmodel: error: {error}\n")
        return 1
    if run.summary is None:
        sys.stderr.write(f"wrote measurements of {run.launches} launches to {args.out}/\n")
        return 0
    best, summary = run.tables["time_errors"], run.summary
    lines = [f"{run.graph}: {run.launches} launches on {run.device.get('device')}; tables in {args.out}/"]
    for row in best[best["mode"] == "simulation"].itertuples():
        lines.append(f"  {row.kernel:>6}: per-level MAPE {row.mape:6.1%}  r {row.pearson_r:5.2f}  "
                     f"whole BFS {row.bfs_time_error:+7.1%}")
    lines.append(f"  lanes exact {summary['lane_exact_fraction']}, jobs exact {summary['jobs_exact_fraction']}, "
                 f"best mapping agreement {summary['best_mapping_agreement']}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


def _run_report(args) -> int:
    import time

    from .report import build_report

    started = time.perf_counter()
    command = " ".join(["simdmodel", *map(shlex.quote, args.argv)])
    report = build_report(args.specs, gpu=args.gpu, sources=args.sources, out=args.out, measured=args.measured,
                          progress=_progress(args), command=command)
    figures = sum(len(items) for items in report.figures.values())
    if not args.quiet:
        sys.stderr.write(f"wrote {args.out}/index.html, report.md, {figures} figures and {len(report.tables)} "
                         f"tables for {len(report.graphs)} graphs in {time.perf_counter() - started:.0f} s\n")
    return 0


def _run_info(args) -> int:
    from simdmodel import render
    from simdmodel.stats import graph_info

    graph = _load(args)
    info = graph_info(graph, sources=args.sources, seed=args.seed, progress=_progress(args))
    if args.format == "json":
        render.emit(json.dumps(info, indent=2) + "\n", None)
    else:
        render.emit(render.render_info(info), None)
    return 0


def _run_convert(args) -> int:
    from simdmodel.atomic import check_target
    from simdmodel.errors import InputError
    from simdmodel.readers import write_npz

    if not args.out.endswith(".npz"):
        raise InputError(f"{args.out}: output must end in .npz")
    check_target(args.out)
    graph = _load(args)
    write_npz(graph, args.out)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.out} (n={graph.n}, m={graph.m})\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
