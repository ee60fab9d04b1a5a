"""The `simdmodel` command line: `analyze`, `opm`, `recommend`, `validate`, `report`, `sweep`, `graph info`,
`graph convert`.

The app layer's front door: argument parsing and printing only; the work is the library calls of
the layers below (`simdmodel.analyze`, `opmachine.predict_bfs`, `gpu_validate.pipeline.validate_graph`,
`simdreport.build_report`, `simdreport.sweep.run_sweep`). User mistakes (bad files, options, ids) print one line
`simdmodel: error: ...` and exit 2; data a run goes on without prints one `simdmodel: warning: ...`
line; output files are written atomically, so a failed run leaves none behind. Heavy modules load
lazily. `python -m simdreport` runs it too.
"""
from __future__ import annotations

import contextlib
import json
import shlex
import signal
import sys
import warnings
from pathlib import Path

from .arguments import EXIT_USAGE, build_parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv`; its exit status. Without `argv` it is the `simdmodel` program
    (this process's arguments) and Ctrl-C exits at once (`interrupt.exit_at_once`, set before any heavy
    import, and ignored once the command is done so the exit status stays its own); called with `argv`, from
    Python or a notebook, Ctrl-C is a KeyboardInterrupt that `run_command` reports (exit status
    130) and the caller's process lives on."""
    program = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)

    def parse_and_run() -> int:
        args = build_parser().parse_args(argv)
        args.argv = argv  # the command as given, for provenance
        return _dispatch(args)

    if not program:
        return run_command(parse_and_run)
    from .interrupt import exit_at_once

    signal.signal(signal.SIGINT, exit_at_once)
    status = run_command(parse_and_run)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: a Ctrl-C now would only break the interpreter's exit
    return status


def run_command(command, *args) -> int:
    """`command(*args)`'s exit status, run as the command line runs a command: each warning one
    `simdmodel: warning: ...` line, an InputError or OSError one `simdmodel: error: ...` line and
    exit 2 (no traceback), and Ctrl-C anywhere (numba code included) `simdmodel: interrupted`, exit 130."""
    try:
        return _run_reporting_errors(command, *args)
    except KeyboardInterrupt:
        sys.stderr.write("simdmodel: interrupted\n")
        return 130
    except SystemError as error:  # Ctrl-C inside numba code surfaces as its dispatcher's SystemError
        if not _caused_by_interrupt(error):
            raise
        sys.stderr.write("simdmodel: interrupted\n")
        return 130


def _run_reporting_errors(command, *args) -> int:
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


def _caused_by_interrupt(error: BaseException) -> bool:
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def _dispatch(args) -> int:
    if args.command == "analyze":
        return _run_analyze(args)
    if args.command == "opm":
        return _run_opm(args)
    if args.command == "recommend":
        return _run_recommend(args)
    if args.command == "lookup":
        return _run_lookup(args)
    if args.command == "couplings":
        return _run_couplings(args)
    if args.command == "validate":
        return _run_validate(args)
    if args.command == "report":
        return _run_report(args)
    if args.command == "sweep":
        return _run_sweep(args)
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
    """Progress bars: on a terminal, unless --quiet."""
    return not args.quiet and sys.stderr.isatty()


def _progress_line(args):
    """`progress_line` when stderr is not a terminal (piped, logged), else None (bars show
    instead); None under --quiet."""
    if args.quiet or sys.stderr.isatty():
        return None
    return progress_line


def progress_line(message: str) -> None:
    """One progress line on stderr (module level, so a report's worker processes can call it)."""
    sys.stderr.write(f"simdmodel: {message}\n")
    sys.stderr.flush()


SUFFIX_FORMATS = {".csv": "csv", ".json": "json"}


def _output_format(args) -> str:
    """--format, else the one --out's suffix names (.csv, .json), else table; a --format that
    contradicts --out's suffix is an error. Checks --out can be written, before any work."""
    from simdmodel.atomic import check_target
    from simdmodel.errors import InputError

    implied = SUFFIX_FORMATS.get(Path(args.out).suffix.lower()) if args.out else None
    if args.format and implied and args.format != implied:
        raise InputError(f"--format {args.format} contradicts --out {args.out} (a .{implied} file)")
    if args.out:
        check_target(args.out)
    return args.format or implied or "table"


def _load(args):
    from simdmodel.load import load_graph

    return load_graph(args.spec, undirected=args.undirected, drop_self_loops=args.drop_self_loops,
                      drop_duplicates=args.drop_duplicates, read_options=read_options(args))


def _sources(args, graph) -> list[int]:
    """--source V (checked), else the first --sources K of the seeded sequence."""
    from simdmodel.frontier import check_source, pick_sources

    if args.source is not None:
        return [check_source(graph, args.source)]
    return [int(s) for s in pick_sources(graph, args.sources, args.seed)]


def read_options(args):
    """The reader options of the CLI's graph-loading flags (None when none is given)."""
    from simdmodel.readers.options import ReadOptions

    if args.header is None and args.columns is None and not args.count_lines:
        return None
    return ReadOptions(header=args.header, columns=args.columns, count_lines=args.count_lines)


def _run_analyze(args) -> int:
    from simdmodel import render
    from simdmodel.strategies import mappings
    from simdmodel.lanes import analyze

    chosen = mappings(args.strategies, args.group_sizes, args.cta_size)
    fmt = _output_format(args)
    graph = _load(args)
    sources = _sources(args, graph)
    result = analyze(graph, sources, chosen, args.order, progress=_progress(args))
    text = render.render_analysis(result, fmt, args.per_level, cta_size=args.cta_size)
    render.emit(text, args.out)
    return 0


def _run_opm(args) -> int:
    from opmachine.kernels import check_block, check_grid, parse_kernel
    from opmachine.profile import load_profile

    from simdmodel.errors import InputError
    from simdmodel.frontier import check_source, pick_sources
    from simdmodel.render import emit

    from .defaults import L2_MODEL, choose_gpu, settings_line

    kernel = parse_kernel(args.kernel)
    if args.threads is not None and (args.block is not None or args.grid is not None):
        raise InputError("--threads cannot be combined with --block or --grid")
    if args.block is not None:
        check_block(args.block)
    if args.grid is not None:
        check_grid(args.grid)
    given = {"--kernel": kernel.data_driven, "--gpu": args.gpu is not None, "--threads": args.threads is not None,
             "--block": args.block is not None, "--grid": args.grid is not None,
             "--counters": args.counters is not None, "--occupancy": args.occupancy is not None,
             "--l2": args.l2 is not None, "--warm-l2": args.warm_l2, "--time-model": args.time_model is not None}
    gpu_only = [name for name, is_given in given.items() if is_given]
    if args.cpu and gpu_only:
        raise InputError(f"--cpu models the serial topology-driven BFS; {gpu_only[0]} applies to GPU kernels only")
    if args.cpu_threads is not None and not args.cpu:
        raise InputError("--cpu-threads needs --cpu PROFILE (the CPU the threads run on)")
    if args.cpu_threads is not None and args.cpu_threads < 1:
        raise InputError(f"--cpu-threads: must be 1 or more, got {args.cpu_threads}")
    l2_model = args.l2 or L2_MODEL
    if args.warm_l2 and l2_model != "setassoc":  # before any prediction runs
        raise InputError("a warm L2 needs the set-associative L2 model (--l2 setassoc)")
    warm_l2 = l2_model == "setassoc" and not args.cold_l2
    choice = None if args.cpu else choose_gpu(args.gpu)
    profile = load_profile(args.cpu, kind="cpu") if args.cpu else load_profile(choice.profile, kind="gpu")
    counters = None
    if args.counters:
        from opmachine.counters import read_counters

        counters = read_counters(args.counters)
    fmt = _output_format(args)
    graph = _load(args)
    source = check_source(graph, args.source) if args.source is not None else int(pick_sources(graph, 1, args.seed)[0])
    if args.cpu:
        from opmachine.cpu import predict_cpu
        from opmachine.render import render_cpu

        from simdmodel.frontier import bfs

        front = bfs(graph, source)
        table = predict_cpu(graph, front, profile, warm=not args.cold_l2)
        threaded = None
        if args.cpu_threads is not None:
            from opmachine.cpu import predict_cpu_threads

            threaded = predict_cpu_threads(graph, front, profile, args.cpu_threads, warm=not args.cold_l2)
        header = f"graph {graph.name}: n={graph.n:,} m={graph.m:,}  source {source}"
        emit(render_cpu(table, profile, fmt, args.per_level, header, threaded), args.out)
        return 0
    from opmachine.predict import predict_bfs
    from opmachine.render import render_gpu

    time_model = args.time_model or ("eq4" if args.occupancy is not None else "critical")
    options = dict(l2_model=l2_model, block=args.block, grid=args.grid, threads=args.threads, occupancy=args.occupancy,
                   progress=_progress(args), time_model=time_model)
    reference = None
    if counters is not None and warm_l2:  # the counts are measured cold: their cold simulation corrects
        reference = predict_bfs(graph, source, kernel, profile, **options).per_level
    result = predict_bfs(graph, source, kernel, profile, warm_l2=warm_l2, counters=counters,
                         counters_reference=reference, **options)
    if counters is not None:
        from opmachine.counters import counted_result

        result = counted_result(result)
    emit(render_gpu(result, fmt, args.per_level, settings_line(profile, choice, l2_model, warm_l2, time_model)),
         args.out)
    return 0


def _run_recommend(args) -> int:
    from opmachine.profile import load_profile
    from opmachine.recommend import rank_mappings
    from opmachine.render import render_ranking

    from simdmodel.render import emit

    from .defaults import L2_MODEL, TIME_MODEL, choose_gpu, settings_line

    choice = choose_gpu(args.gpu)
    profile = load_profile(choice.profile, kind="gpu")
    if args.kernels:
        from opmachine.kernels import parse_kernel

        for name in args.kernels:
            parse_kernel(name)
    fmt = _output_format(args)
    graph = _load(args)
    sources = _sources(args, graph)
    line = _progress_line(args)
    warm_l2 = not args.cold_l2
    ranking = rank_mappings(graph, sources, profile, args.kernels, l2_model=L2_MODEL, warm_l2=warm_l2,
                            time_model=TIME_MODEL,
                            on_kernel=None if line is None else (
                                lambda i, count, label: line(f"[{i}/{count}] predicting {label}")))
    header = settings_line(profile, choice, L2_MODEL, warm_l2, TIME_MODEL)
    emit(render_ranking(ranking, fmt, args.per_level, header), args.out)
    return 0


def _graph_line(graph, sources) -> str:
    """The first line of a per-graph table: the graph, its size and the sources (the first five)."""
    shown = ", ".join(map(str, sources[:5])) + (", ..." if len(sources) > 5 else "")
    return f"graph {graph.name}: n={graph.n:,} m={graph.m:,}; {len(sources)} source(s) ({shown})\n"


def _run_lookup(args) -> int:
    import pandas as pd

    from opmachine.kernels import DEFAULT_BLOCK
    from opmachine.profile import load_profile

    from simdmodel.errors import InputError
    from simdmodel.lookup import MODES, false_negative_rates, lookup_table, mode_index
    from simdmodel.render import emit, records

    from .defaults import choose_gpu

    modes = tuple(args.modes) if args.modes else MODES
    for mode in modes:
        mode_index(mode)
    if len(set(modes)) != len(modes):
        raise InputError(f"--modes lists a mode twice: {','.join(modes)}")
    choice = choose_gpu(args.gpu)
    profile = load_profile(choice.profile, kind="gpu")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    fmt = _output_format(args)
    graph = _load(args)
    sources = _sources(args, graph)
    table = pd.concat([lookup_table(graph, s, grid, modes, waves=not args.race_free).assign(source=s)
                       for s in sources], ignore_index=True)
    table = table[["source", "level", "mode", "edges", "ideal", "survivors", "false_negatives"]]
    summary = table.groupby("mode", sort=False)[["edges", "ideal", "survivors", "false_negatives"]].sum().reset_index()
    summary["fn_rate"] = false_negative_rates(table, graph.n, graph.m).to_numpy()
    shown = table if args.per_level else summary
    rule = "race-free (every warp sees the warps before it)" if args.race_free else \
        "the warps of one wave run at once and see only earlier waves' stores"
    header = (_graph_line(graph, sources)
              + f"profile {profile.name}: one wave of {grid} CTAs of {DEFAULT_BLOCK} threads; across warps: {rule}\n")
    if fmt == "csv":
        text = shown.to_csv(index=False, float_format="%.6g")
    elif fmt == "json":
        text = json.dumps({"graph": graph.name, "n": graph.n, "m": graph.m, "sources": sources, "profile": profile.name,
                           "grid": grid, "race_free": args.race_free, "rows": records(shown)}, indent=2) + "\n"
    else:
        display = shown.copy()
        if "fn_rate" in display:
            display["fn_rate"] = display["fn_rate"].map(lambda x: f"{100 * x:.3f}%")
        text = (header + display.to_string(index=False) + "\n"
                + "fn_rate: false negatives (ids let through beyond the next frontier) over m - n, the ids an ideal "
                  "lookup culls, per source\n")
    emit(text, args.out)
    return 0


def _run_couplings(args) -> int:
    from opmachine.kernels import DEFAULT_BLOCK
    from opmachine.profile import load_profile

    from simdmodel.couplings import QUEUE_HEADROOM, coupling_summary, parse_coupling
    from simdmodel.errors import InputError
    from simdmodel.render import emit, records

    from .defaults import choose_gpu

    couplings = [parse_coupling(k) for k in args.kernels]
    if len({c.label for c in couplings}) != len(couplings):
        raise InputError(f"--kernels lists a coupling twice: {','.join(args.kernels)}")
    if args.l1 and not args.time:
        raise InputError("--l1 needs --time (the L1 is followed as the operator machine times each launch)")
    profile = load_profile(choose_gpu(args.gpu).profile, kind="gpu")
    grid = profile.full_wave_grid(DEFAULT_BLOCK)
    fmt = _output_format(args)
    graph = _load(args)
    sources = _sources(args, graph)
    predictors = {}

    def observer(coupling, source):  # --time: the operator machine follows each BFS as it runs
        from opmachine.coupled import CoupledPredictor

        predictors[coupling.label, source] = predictor = CoupledPredictor(graph, coupling, profile,
                                                                          l1_counts=args.l1)
        return predictor.observe

    summary, launches = coupling_summary(graph, sources, couplings, grid, grid * DEFAULT_BLOCK,
                                         observer=observer if args.time else None,
                                         claim=args.bitmask_stores == "claim", spread=not args.no_spread)
    if args.time:
        summary, launches = _with_predicted_time(graph, predictors, summary, launches, args.l1)
    shown = launches if args.per_level and len(launches) else summary
    unbounded = args.time and profile.bitmask is None
    no_l1 = args.l1 and profile.l1_carveout is None
    header = (_graph_line(graph, sources)
              + f"profile {profile.name}: lookups by one wave of {grid} CTAs of {DEFAULT_BLOCK} threads; hybrid runs "
              f"two-phase where the edge queue holds more than {grid * DEFAULT_BLOCK:,} ids\n"
              + ("the plain build: every lane that finds a bitmask bit unset stores its byte\n"
                 if args.bitmask_stores == "plain" else "")
              + ("--no-spread: small launches gather lists of up to 1024 edges themselves\n" if args.no_spread else "")
              + (f"profile {profile.name} has no [bitmask] rates, so the bitmask lookups that store back bound no launch "
                 "(python -m gpu_validate.bitmask measures them)\n" if unbounded else "")
              + (f"profile {profile.name} has no [l1_carveout], so no L1 is followed (python -m "
                 "gpu_validate.coupling_counters --write measures it)\n" if no_l1 else ""))
    if fmt == "csv":
        text = shown.to_csv(index=False, float_format="%.6g")
    elif fmt == "json":
        text = json.dumps({"graph": graph.name, "n": graph.n, "m": graph.m, "sources": sources, "profile": profile.name,
                           "grid": grid, "bitmask_stores": args.bitmask_stores, "spread": not args.no_spread,
                           **({"bitmask_rates": profile.bitmask is not None} if args.time else {}),
                           "rows": records(shown)}, indent=2) + "\n"
    else:
        text = (header + shown.to_string(index=False, float_format=lambda x: f"{x:.3f}") + "\n"
                + ("" if args.per_level else
                   "words: explicit global traffic (seed 001 §5's count); formula_words: its formula for the traversed "
                   "component's n and m, which a race-free traversal without culling moves; redundant_expansion: "
                   "neighbours gathered / edges a BFS traverses; overflow: a queue would outgrow "
                   f"{QUEUE_HEADROOM} m ids\n"
                   + ("predicted_ms: the operator machine's time of the BFS on the profile's GPU; predicted_gteps: the "
                      "traversed component's edges / that time\n" if args.time else "")
                   + ("l1_hit_rate: bitmask reads the SMs' L1s serve / load sectors at the L1s (the time still sends "
                      "every bitmask read to the L2)\n" if args.l1 else "")))
    emit(text, args.out)
    return 0


def _with_predicted_time(graph, predictors: dict, summary, launches, l1: bool = False):
    """`coupling_summary`'s tables with each launch's predicted time (`predicted_ns`, `bottleneck`) and each
    BFS's (`predicted_ms`, `predicted_gteps`: the traversed component's edges over it), from the
    `opmachine.coupled.CoupledPredictor` that observed each (kernel, source) BFS; with `l1`, each launch's
    `l1_sectors` and `l1_hits` and each BFS's `l1_hit_rate` (their sums' ratio)."""
    import numpy as np

    from simdmodel.couplings import traversed

    done = summary.loc[~summary["overflow"].astype(bool), ["kernel", "source"]].itertuples(index=False)
    times = {(label, int(source)): predictors[label, int(source)].times() for label, source in done}
    columns = ("predicted_ns", "bottleneck", *(("l1_sectors", "l1_hits") if l1 else ()))
    launches = launches.assign(**{column: None if column == "bottleneck" else np.nan for column in columns})
    for (label, source), table in times.items():
        at = launches.index[(launches["kernel"] == label) & (launches["source"] == source)
                            & (launches["phase"] != "setup")]
        for column in columns:
            launches.loc[at, column] = table[column].to_numpy()
    edges = {int(s): traversed(graph, int(s))[1] for s in summary["source"].unique()}
    keys = list(zip(summary["kernel"], summary["source"].astype(int)))
    ns = [float(times[key]["predicted_ns"].sum()) if key in times else np.nan for key in keys]
    summary = summary.assign(predicted_ms=np.array(ns) / 1e6,
                             predicted_gteps=[edges[int(s)] / t for s, t in zip(summary["source"], ns)])
    if l1:
        summary["l1_hit_rate"] = [times[key]["l1_hits"].sum(min_count=1) / times[key]["l1_sectors"].sum(min_count=1)
                                  if key in times else np.nan for key in keys]
    return summary, launches


def _run_validate(args) -> int:
    from gpu_validate.bfs import LevelMismatch
    from gpu_validate.pipeline import validate_graph

    sources = [args.source] if args.source is not None else args.sources  # None: the pipeline's default
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
    mode = summary.get("time_mode", "warm")  # the rows summary.json and the results README judge
    lines = [f"{run.graph}: {run.launches} launches on {run.device.get('device')}; tables in {args.out}/",
             f"  time per round, mode {mode} (predicted.csv's other modes are in time_errors.csv):"]
    for row in best[best["mode"] == mode].itertuples():
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
    graphs, graphs_from = _suite_graphs(args)
    report = build_report(args.specs, gpu=args.gpu, sources=args.sources, out=args.out, measured=args.measured,
                          progress=_progress(args), command=command, line=_progress_line(args), jobs=args.jobs,
                          graphs=graphs, graphs_from=graphs_from, cpu=args.cpu)
    figures = sum(len(items) for items in report.figures.values())
    graphs = len(report.graphs)
    if not args.quiet:
        sys.stderr.write(f"wrote {args.out}/index.html, report.md, {figures} figures and {len(report.tables)} "
                         f"tables for {graphs} graph{'s' if graphs != 1 else ''} in "
                         f"{time.perf_counter() - started:.0f} s\n")
    return 0


def _suite_graphs(args):
    """(SuiteGraphs of --graphs-dir, words on where they come from), or (None, None) for SPECs."""
    from simdmodel.errors import InputError

    from .manifest import MANIFEST_NAME, check_files, directory_graphs

    if args.graphs_dir is None and (args.suite is not None or args.manifest is not None):
        raise InputError(f"{'--suite' if args.suite else '--manifest'} needs --graphs-dir, the folder of the files")
    if args.graphs_dir is None:
        return None, None
    if args.specs:
        raise InputError("give SPECs or --graphs-dir, not both")
    graphs = tuple(g.suite_graph() for g in directory_graphs(args.graphs_dir, args.suite, args.manifest))
    check_files(graphs)
    folder = Path(args.graphs_dir).name
    own = MANIFEST_NAME if (Path(args.graphs_dir) / MANIFEST_NAME).is_file() else None
    manifest = ("the real suite's manifest" if args.suite else f"the manifest {Path(args.manifest or own).name}"
                if args.manifest or own else None)
    return graphs, (f"the files of {folder}/ as {manifest} describes them" if manifest
                    else f"every graph file of {folder}/, as stored")


def _run_sweep(args) -> int:
    import time

    started = time.perf_counter()
    graphs, _ = _suite_graphs(args)
    from .interrupt import check_interrupted, unwinding

    with unwinding():  # no numba here: unwind, so the cluster closes
        status = _sweep(args, graphs, started)
        check_interrupted()
        return status


def _sweep(args, graphs, started: float) -> int:
    import time

    from opmachine.recommend import candidate_kernels

    from .defaults import choose_gpu
    from .suites import suite_for
    from .sweep import run_sweep
    from .sweep_plan import plan_sweep
    from .sweep_table import fastest_table, render_fastest

    plan = plan_sweep(graphs if graphs is not None else suite_for(args.specs),
                      args.kernels or candidate_kernels(), args.gpu or [choose_gpu(None).profile],
                      args.what_if, sources=args.sources, seed=args.seed, warm_l2=not args.cold_l2,
                      time_model=args.time_model, blocks=args.blocks or (None,))
    command = " ".join(["simdmodel", *map(shlex.quote, args.argv)])
    outcome = run_sweep(plan, args.out, scheduler=args.scheduler, workers=args.workers, progress=_progress(args),
                        line=_progress_line(args), command=command)
    if not outcome.whole.empty:
        sys.stdout.write(render_fastest(fastest_table(outcome.whole)))
    for task, message in outcome.failed[:5]:
        sys.stderr.write(f"simdmodel: error: task failed ({task.describe()}): {message}\n")
    if not args.quiet:
        sys.stderr.write(f"wrote {args.out}/: {len(plan.tasks)} tasks ({outcome.ran} run now, {outcome.skipped} "
                         f"already there, {len(outcome.failed)} failed): levels/ (Parquet), whole_bfs.csv, "
                         f"fastest.csv, {len(outcome.figures)} figure{'s' if len(outcome.figures) != 1 else ''}, sweep.json "
                         f"in {time.perf_counter() - started:.0f} s\n")
    if outcome.failed:
        sys.stderr.write(f"simdmodel: error: {len(outcome.failed)} of {len(plan.tasks)} tasks failed; their inputs "
                         f"and errors are in {args.out}/failed/, and the same command retries them\n")
        return 1
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
