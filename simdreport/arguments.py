"""The `simdmodel` command's options: one argparse parser per subcommand, one-line usage errors."""
from __future__ import annotations

import argparse
import os
import sys

from .suites import MODELLED_KERNELS

DEFAULT_SPEC = "rmat:scale=16,ef=16,seed=1"
REPORT_JOBS = min(os.cpu_count() or 1, 4)
"""`report --jobs` by default: graphs gathered at once, one worker process per CPU, at most 4."""
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
    header = group.add_mutually_exclusive_group()
    header.add_argument("--header", action="store_true", default=None,
                        help="CSV/TSV: the first line is a header row (default: detected)")
    header.add_argument("--no-header", action="store_false", dest="header", help="CSV/TSV: no header row")
    group.add_argument("--columns", metavar="SRC,DST[,WEIGHT]",
                       help="CSV/TSV: the source, target and weight columns, by header name or 0-based index")
    group.add_argument("--count-lines", action="store_true",
                       help="SNAP edge lists: accept leading bare count lines (vertices, then edges)")


def _spec_and_sources(parser: argparse.ArgumentParser, count: int, count_help: str) -> None:
    """SPEC (default DEFAULT_SPEC), then --source V or --sources K, and --seed."""
    parser.add_argument("spec", nargs="?", default=DEFAULT_SPEC,
                        help=f"graph file or generator spec (default {DEFAULT_SPEC})")
    sources = parser.add_mutually_exclusive_group()
    sources.add_argument("--source", type=int, help="one BFS source vertex")
    sources.add_argument("--sources", type=int, default=count, help=count_help)
    parser.add_argument("--seed", type=int, default=1, help="seed for picking sources (default 1)")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quiet", action="store_true", help="no progress bars, progress lines or notes on stderr")


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def _output(parser: argparse.ArgumentParser, formats=("table", "csv", "json")) -> None:
    parser.add_argument("--format", choices=list(formats),
                        help=f"output format (default: from --out's suffix, {', '.join(f'.{f}' for f in formats[1:])}; "
                        "else table)")
    parser.add_argument("--out", help="write to this regular file (atomically) instead of stdout")


def build_parser() -> argparse.ArgumentParser:
    from simdmodel import __version__

    parser = _Parser(
        prog="simdmodel",
        description="SIMD lane efficiency of GPU BFS work mappings (UA / UR / ME), from a graph file "
        "or generator spec such as rmat:scale=20,ef=16.",
    )
    parser.add_argument("--version", action="version", version=f"simdmodel {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    analyze = commands.add_parser("analyze", help="lane accounting per mapping strategy")
    _spec_and_sources(analyze, 10, "the first K seeded random sources with out-degree > 0 (default 10, as seed 000)")
    analyze.add_argument("--group-sizes", type=_int_list, default=[1, 2, 4, 8, 16, 32],
                         help="group sizes S for the group strategy (default 1,2,4,8,16,32)")
    analyze.add_argument("--strategies", type=_name_list, default=["group", "ws", "scan", "swc"],
                         help="strategies to account (default group,ws,scan,swc)")
    analyze.add_argument("--cta-size", type=int, default=256, help="CTA size C for scan and swc (default 256)")
    analyze.add_argument("--order", choices=["sorted", "discovery"], default="sorted",
                         help="frontier order (default sorted)")
    analyze.add_argument("--per-level", action="store_true", help="one row per level (and source)")
    _output(analyze)
    _graph_options(analyze)
    _common(analyze)

    _opm_parser(commands)
    _recommend_parser(commands)
    _lookup_parser(commands)
    _couplings_parser(commands)
    _validate_parser(commands)
    _report_parser(commands)
    _sweep_parser(commands)

    graph = commands.add_parser("graph", help="graph utilities")
    graph_commands = graph.add_subparsers(dest="graph_command", required=True, parser_class=_Parser)
    info = graph_commands.add_parser("info", help="size, degree statistics, average search depth")
    info.add_argument("spec", help="graph file or generator spec")
    info.add_argument("--sources", type=_non_negative, default=0,
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
    validate.add_argument("--kernels", type=_name_list, default=list(MODELLED_KERNELS),
                          help=f"kernels to run (default {','.join(MODELLED_KERNELS)})")
    sources = validate.add_mutually_exclusive_group()
    sources.add_argument("--source", type=int, help="one BFS source vertex")
    sources.add_argument("--sources", type=int,
                         help="seeded random sources (default 3; none with --measured, which compares the measured)")
    validate.add_argument("--seed", type=int, default=1, help="seed for picking sources (default 1)")
    validate.add_argument("--repeats", type=int, default=5, help="timed runs per BFS; the median is kept (default 5)")
    validate.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    validate.add_argument("--counters", action="store_true",
                          help="also profile sampled rounds of the first source with Nsight Compute (ncu)")
    validate.add_argument("--ncu-levels", type=int, default=24,
                          help="rounds per kernel ncu profiles, evenly spaced over the BFS (default 24)")
    validate.add_argument("--gpu", help="opmachine GPU profile for the predictions (default: the one whose [device] "
                          "name and SM count are this GPU's; a profile of another GPU is refused)")
    validate.add_argument("--l2", choices=["lru", "setassoc"], default="setassoc",
                          help="L2 model of the predictions (default setassoc)")
    validate.add_argument("--measure-only", action="store_true", help="write the measured tables, predict nothing")
    validate.add_argument("--measured", metavar="DIR",
                          help="predict and compare from an earlier run's measured tables (no GPU needed)")
    validate.add_argument("--out", default="validation", help="output directory (default ./validation)")
    _graph_options(validate)
    _common(validate)


def _suite_graphs(parser: argparse.ArgumentParser) -> None:
    """SPEC..., or --graphs-dir DIR with --suite or --manifest."""
    parser.add_argument("specs", nargs="*", metavar="SPEC",
                        help="graph files or generator specs (default: the built-in suite of generated graphs)")
    parser.add_argument("--graphs-dir", metavar="DIR",
                        help="a folder of graph files instead of SPECs: the files its graphs.toml manifest lists, "
                        "else every graph file in it (see --suite)")
    parser.add_argument("--suite", choices=["real"],
                        help="with --graphs-dir: the project's manifest of this suite (real: the eighteen public "
                        "real graphs, their loader options, sizes and sha256) for the files in DIR")
    parser.add_argument("--manifest", metavar="FILE", help="with --graphs-dir: this manifest instead of DIR/graphs.toml")


def _report_parser(commands) -> None:
    report = commands.add_parser("report", help="figures and tables for a suite of graphs: index.html, report.md, CSVs")
    _suite_graphs(report)
    report.add_argument("--gpu", metavar="NAME",
                        help="GPU profile name or .toml path for the predictions (default: this machine's GPU's "
                        "measured profile, else h200, whose curves were measured and against which the committed "
                        "GPU measurements were taken)")
    report.add_argument("--sources", type=int, default=10, metavar="K",
                        help="seeded random BFS sources per graph for the lane accounting (default 10, as seed 000)")
    report.add_argument("--measured", action="append", default=[], metavar="DIR",
                        help="also compare with this `simdmodel validate` output folder (repeatable)")
    report.add_argument("--cpu", metavar="NAME",
                        help="also predict each graph's BFS on this CPU profile (a shipped name such as epyc-kvm, or "
                        "a .toml from python -m opmachine.cpu_microbench), serial and multi-threaded, beside the GPU")
    report.add_argument("--out", default="report", metavar="DIR", help="output directory (default ./report)")
    report.add_argument("--jobs", type=int, default=REPORT_JOBS, metavar="N",
                        help="graphs gathered at once in worker processes (default: the CPU count, at most 4; "
                        "1 = in this process)")
    _common(report)


def _opm_parser(commands) -> None:
    opm = commands.add_parser("opm", help="operator-machine prediction of BFS time per round (seed 003)")
    opm.add_argument("spec", nargs="?", default=DEFAULT_SPEC,
                     help=f"graph file or generator spec (default {DEFAULT_SPEC})")
    opm.add_argument("--kernel", default="topo", help="topo, sm-S (S in 1..32), ws or scan (default topo)")
    opm.add_argument("--gpu", help="GPU profile name or .toml path (default: this machine's GPU's measured profile, "
                     "else h200)")
    opm.add_argument("--cpu", help="predict the serial CPU BFS (seed 003 §4) on this CPU profile instead (a "
                     "shipped name or a .toml from python -m opmachine.cpu_microbench)")
    opm.add_argument("--cpu-threads", type=int, metavar="T",
                     help="with --cpu: also predict the multi-threaded BFS on T cores, beside the serial one")
    opm.add_argument("--threads", type=int, help="launch exactly N threads (a multiple of 32)")
    opm.add_argument("--block", type=int, help="threads per block (default 256; the CTA size of scan)")
    opm.add_argument("--grid", type=int, help="blocks (default: one full wave for topo, what the frontier "
                     "needs up to a full wave for an expansion)")
    opm.add_argument("--source", type=int, help="BFS source (default: a seeded random vertex with edges)")
    opm.add_argument("--seed", type=int, default=1, help="seed for picking the default source (default 1)")
    opm.add_argument("--l2", choices=["lru", "setassoc"],
                     help="L2 model: the profile's set-associative geometry (default) or fully associative LRU "
                     "(seed 003; cold at each launch)")
    warmth = opm.add_mutually_exclusive_group()
    warmth.add_argument("--warm-l2", action="store_true",
                        help="keep the L2's contents from launch to launch, as back-to-back launches find it "
                        "(the default with the set-associative L2)")
    warmth.add_argument("--cold-l2", action="store_true",
                        help="start every launch with a cold L2, as Nsight Compute measures a kernel (with "
                        "--cpu: start the BFS with empty caches; by default they hold the previous run)")
    opm.add_argument("--time-model", choices=["critical", "eq4"],
                     help="critical (default): the load falls as warps finish and the last warps wait their "
                     "own latency; eq4: seed 003's Eq. 4 with one load N_G / W_max per launch")
    opm.add_argument("--occupancy", type=float,
                     help="measured achieved occupancy (0..1) to use as Eq. 4's load instead of N_G / W_max "
                     "(implies --time-model eq4)")
    opm.add_argument("--counters", help="counters mode: CSV of measured counts per launch (see opmachine.counters)")
    opm.add_argument("--per-level", action="store_true", help="one row per kernel launch")
    _output(opm)
    _graph_options(opm)
    _common(opm)


def _lookup_parser(commands) -> None:
    lookup = commands.add_parser("lookup", help="status lookup with culling: the ids a lookup without atomics lets "
                                 "through (seed 001 Fig. 8)")
    _spec_and_sources(lookup, 1, "the first K seeded random sources (default 1)")
    lookup.add_argument("--gpu", help="GPU profile whose full wave of 256-thread CTAs runs the lookup (default: this "
                        "machine's GPU's measured profile, else h200)")
    lookup.add_argument("--modes", type=_name_list, default=None,
                        help="lookup modes, each adding its filter: bitmask, label, warp, history, atomic (default: "
                        "all)")
    lookup.add_argument("--race-free", action="store_true",
                        help="every warp sees every earlier warp's stores (default: the warps of one wave run at once)")
    lookup.add_argument("--per-level", action="store_true", help="one row per source, level and mode")
    _output(lookup)
    _graph_options(lookup)
    _common(lookup)


def _couplings_parser(commands) -> None:
    couplings = commands.add_parser("couplings", help="seed 001's expand/contract couplings: the queues a whole BFS "
                                    "passes through, redundant expansion and explicit traffic (seed 001 §5, Fig. 7)")
    _spec_and_sources(couplings, 1, "the first K seeded random sources (default 1)")
    couplings.add_argument("--gpu", help="GPU profile whose full wave runs the lookups and sets hybrid's switch "
                           "(default: this machine's GPU's measured profile, else h200)")
    couplings.add_argument("--kernels", type=_name_list,
                           default=["expand-contract", "contract-expand", "two-phase", "hybrid"],
                           help="couplings, each optionally -MODE with MODE label, warp, history or atomic "
                           "(default: the four, atomic)")
    couplings.add_argument("--per-level", action="store_true", help="one row per source and launch")
    # gpu_validate.modules.BITMASK_STORES, the default first; spelled out so the parser imports nothing heavy
    couplings.add_argument("--bitmask-stores", choices=("claim", "plain"), default="claim",
                           help="the atomic lookup's bitmask bits: only the lane that claims the vertex sets its bit, "
                           "with an atomic OR (default, the GPU kernels' default build), or every lane that finds "
                           "one unset stores its byte (seed 001's plain stores)")
    couplings.add_argument("--no-spread", action="store_true",
                           help="launches of fewer CTAs than a full wave gather lists of up to 1024 edges themselves "
                           "(default, as the GPU kernels do: they leave lists longer than a warp to the pieces "
                           "launch after them)")
    couplings.add_argument("--time", action="store_true",
                           help="also predict each launch's time on the GPU profile (the operator machine: jobs, "
                           "warm L2, the kernels' compiled code) and each BFS's GTEPS")
    couplings.add_argument("--l1", action="store_true",
                           help="with --time: also each launch's load sectors at the SMs' L1s and the bitmask reads "
                           "they serve (l1_sectors, l1_hits; l1_hit_rate per BFS), from the profile's [l1_carveout]")
    _output(couplings)
    _graph_options(couplings)
    _common(couplings)


def _recommend_parser(commands) -> None:
    recommend = commands.add_parser("recommend", help="every mapping ranked by predicted BFS time on a GPU profile")
    _spec_and_sources(recommend, 1, "the first K seeded random sources (default 1: the first source of `analyze`)")
    recommend.add_argument("--gpu", help="GPU profile name or .toml path (default: this machine's GPU's measured "
                           "profile, else h200)")
    recommend.add_argument("--kernels", type=_name_list,
                           help="candidates (default: topo and every registered mapping: sm-1..sm-32, ws, scan)")
    recommend.add_argument("--cold-l2", action="store_true",
                           help="start every launch with a cold L2 (default: warm, as back-to-back launches find it)")
    recommend.add_argument("--per-level", action="store_true",
                           help="also the fastest mapping of every level and what a level-adaptive kernel would gain")
    _output(recommend)
    _graph_options(recommend)
    _common(recommend)


def _what_if(text: str):
    from simdmodel.errors import InputError

    from opmachine.profile.whatif import parse_what_if

    try:
        return parse_what_if(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive(text: str) -> int:
    value = _non_negative(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _sweep_parser(commands) -> None:
    sweep = commands.add_parser("sweep", help="predicted BFS time over graphs x kernels x sources x GPU profiles "
                                "(what-ifs included), on Dask; results as a Parquet dataset")
    _suite_graphs(sweep)
    sweep.add_argument("--kernels", type=_name_list,
                       help="kernels (default: topo and every registered mapping: sm-1..sm-32, ws, scan)")
    sweep.add_argument("--blocks", type=_int_list, metavar="B[,B...]",
                       help="threads per block to try for each kernel (default: each kernel's own, 256)")
    sweep.add_argument("--gpu", type=lambda text: [p.strip() for p in text.split(",") if p.strip()],
                       metavar="PROFILE[,PROFILE...]",
                       help="base GPU profiles: names or .toml paths, each optionally with what-ifs as "
                       "NAME:KNOB*FACTOR[,KNOB*FACTOR] (default: this machine's GPU's measured profile, else h200)")
    sweep.add_argument("--what-if", type=_what_if, action="append", default=[], metavar="KNOB=F[,F...]",
                       help="also each base profile with one knob scaled by each factor (repeatable); knobs: "
                       "l2 (capacity), dram (bandwidth), l2bw (L2 bandwidth), sms (SM count), launch (per-launch "
                       "constants), e.g. --what-if l2=0.5,2 --what-if dram=0.5")
    sweep.add_argument("--sources", type=_positive, default=1, metavar="K",
                       help="the first K seeded random sources per graph (default 1)")
    sweep.add_argument("--seed", type=int, default=1, help="seed for picking sources (default 1)")
    sweep.add_argument("--cold-l2", action="store_true",
                       help="start every launch with a cold L2 (default: warm, as back-to-back launches find it)")
    sweep.add_argument("--time-model", choices=["critical", "eq4"], default="critical",
                       help="time model (default critical)")
    where = sweep.add_mutually_exclusive_group()
    where.add_argument("--workers", type=_positive, metavar="N",
                       help="worker processes of the local Dask cluster (default: the CPU count)")
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="run on the existing Dask cluster at this address (e.g. tcp://host:8786); its workers "
                       "need this package and the graph files at the same paths")
    sweep.add_argument("--out", default="sweep", metavar="DIR",
                       help="output folder (default ./sweep); a rerun into it skips the tasks it holds")
    _common(sweep)
