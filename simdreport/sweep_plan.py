"""What a sweep runs: one task per graph x kernel x block size x GPU profile x source, each a whole
predicted BFS.

A task names everything its prediction depends on (graph spec and loader options, kernel, block
size, profile spec with its what-if factors and, for a profile file, the file's sha256, source
index and seed, L2 warmth, time model), so its id (a hash of those inputs) says whether an
earlier run of the sweep already holds its result. `plan_sweep`
checks every input (kernels parse, profiles load and derive, graph files exist) before any work
starts, so a typo fails in a second rather than after an hour of tasks.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from simdmodel.errors import InputError

from .suites import SuiteGraph


@dataclass(frozen=True)
class SweepTask:
    """One predicted BFS of a sweep. `profile` is a profile spec: a shipped name or .toml path,
    optionally followed by `:KNOB*FACTOR[,...]` (`opmachine.profile.whatif`); `block` the threads
    per block (None: the kernel's default, as `predict_bfs` picks it); `profile_sha256` the sha256
    of a profile file when the plan was made (None for a shipped profile)."""

    graph: SuiteGraph
    kernel: str
    profile: str
    source_index: int
    seed: int
    warm_l2: bool
    time_model: str
    block: int | None = None
    profile_sha256: str | None = None

    def inputs(self) -> dict:
        """Everything the prediction depends on, as plain JSON values."""
        loader = {key: _plain(value) for key, value in sorted(self.graph.loader.items())}
        edited = {"profile_sha256": self.profile_sha256} if self.profile_sha256 is not None else {}
        return {"graph": self.graph.spec, "loader": loader,
                "sha256": self.graph.sha256, "kernel": self.kernel, "profile": self.profile, **edited,
                "source_index": self.source_index, "seed": self.seed, "warm_l2": self.warm_l2,
                "time_model": self.time_model, **({"block": self.block} if self.block is not None else {})}

    @cached_property
    def task_id(self) -> str:
        """16 hex digits of the sha256 of `inputs()`: equal inputs, equal id, in any run."""
        text = json.dumps(self.inputs(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """'rmat d12, sm-8, h200:l2*2, source #0' for messages (the block size when one is set)."""
        block = f" block {self.block}" if self.block is not None else ""
        return f"{self.graph.label}, {self.kernel}{block}, {self.profile}, source #{self.source_index}"


def _plain(value):
    """A loader option as JSON: a dataclass (`ReadOptions`) as its fields, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {key: _plain(item) for key, item in dataclasses.asdict(value).items()}
    if isinstance(value, (tuple, list)):
        return [_plain(item) for item in value]
    return value


@dataclass(frozen=True)
class SweepPlan:
    """The tasks of a sweep, graph-major (a worker keeps its last graph loaded), and its settings."""

    tasks: tuple[SweepTask, ...]
    graphs: tuple[SuiteGraph, ...]
    kernels: tuple[str, ...]
    blocks: tuple[int | None, ...]
    profiles: tuple[str, ...]
    what_ifs: tuple[tuple[str, tuple[float, ...]], ...]
    sources: int
    seed: int
    warm_l2: bool
    time_model: str

    def settings(self) -> dict:
        return {"graphs": [g.spec for g in self.graphs], "kernels": list(self.kernels), "blocks": list(self.blocks),
                "profiles": list(self.profiles), "what_ifs": {knob: list(f) for knob, f in self.what_ifs},
                "sources": self.sources, "seed": self.seed, "warm_l2": self.warm_l2,
                "time_model": self.time_model, "tasks": len(self.tasks)}


def split_profile_spec(spec: str) -> tuple[str, dict[str, float]]:
    """(base name or path, {knob: factor}) of a profile spec; a ':' inside a path's folders is the
    path's own, only one after its last '/' starts the what-ifs."""
    from opmachine.profile.whatif import parse_profile_spec

    spec = str(spec).strip()
    slash = spec.rfind("/")
    colon = spec.find(":", slash + 1)
    if colon < 0:
        if not spec:
            raise InputError("an empty GPU profile name")
        return spec, {}
    base, changes = parse_profile_spec(spec[slash + 1:])
    return spec[:slash + 1] + base, changes


def load_task_profile(spec: str):
    """The GPU profile a task's profile spec names, its what-ifs applied."""
    from opmachine.profile import load_profile
    from opmachine.profile.whatif import derive_profile

    base, changes = split_profile_spec(spec)
    return derive_profile(load_profile(base, kind="gpu"), changes)


def profile_specs(bases, what_ifs) -> tuple[str, ...]:
    """Each base profile spec, then per what-if knob and factor the base with that one knob scaled
    (a factor of 1 is the base itself and is not repeated)."""
    from opmachine.profile.whatif import format_what_if

    out: list[str] = []
    for base in bases:
        out.append(base)
        name, changes = split_profile_spec(base)
        for knob, factors in what_ifs:
            for factor in factors:
                if factor == 1.0:
                    continue
                scaled = {**changes, knob: changes.get(knob, 1.0) * factor}
                label = format_what_if(scaled)
                out.append(f"{name}:{label}" if label else name)
    return tuple(dict.fromkeys(out))


def plan_sweep(graphs, kernels, bases, what_ifs=(), sources: int = 1, seed: int = 1, warm_l2: bool = True,
               time_model: str = "critical", blocks=(None,)) -> SweepPlan:
    """Every task of graphs x profiles x kernels x blocks x sources, each input checked first
    (InputError). `blocks`: threads per block to try (None: each kernel's default)."""
    from opmachine.kernels import check_block, parse_kernel
    from opmachine.predict import TIME_MODELS

    from .manifest import check_files

    graphs = tuple(graphs)
    if not graphs:
        raise InputError("a sweep needs at least one graph")
    kernels = tuple(parse_kernel(k).label for k in kernels)
    if not kernels:
        raise InputError("a sweep needs at least one kernel")
    if len(set(kernels)) != len(kernels):
        raise InputError("a kernel is listed twice")
    blocks = tuple(None if block is None else check_block(block) for block in blocks)
    if not blocks or len(set(blocks)) != len(blocks):
        raise InputError("a sweep needs block sizes, each listed once")
    if isinstance(sources, bool) or not isinstance(sources, int) or sources < 1:
        raise InputError(f"--sources must be at least 1, got {sources!r}")
    if time_model not in TIME_MODELS:
        raise InputError(f"unknown time model {time_model!r} (choose {', '.join(TIME_MODELS)})")
    knobs = [knob for knob, _ in what_ifs]
    if len(set(knobs)) != len(knobs):
        raise InputError("a what-if knob is given twice; list its factors in one --what-if")
    profiles = profile_specs(tuple(bases), tuple(what_ifs))
    for spec in profiles:
        load_task_profile(spec)
    check_files(graphs)
    for graph in graphs:
        _check_graph_spec(graph.spec)
    files = {spec: Path(split_profile_spec(spec)[0]) for spec in profiles}
    sha = {spec: hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
           for spec, path in files.items()}
    tasks = tuple(SweepTask(graph, kernel, profile, index, int(seed), bool(warm_l2), time_model, block, sha[profile])
                  for graph in graphs for profile in profiles for kernel in kernels for block in blocks
                  for index in range(sources))
    return SweepPlan(tasks, graphs, kernels, blocks, profiles, tuple((k, tuple(f)) for k, f in what_ifs), sources,
                     int(seed), bool(warm_l2), time_model)


def _check_graph_spec(spec: str) -> None:
    """InputError for a generator spec with bad parameters or a graph path that is not a file."""
    from simdmodel.generators.registry import canonical_spec, is_generator_spec

    if is_generator_spec(spec):
        canonical_spec(spec)
    elif not Path(spec).is_file():
        raise InputError(f"{spec}: no such file (and not a generator spec)")
