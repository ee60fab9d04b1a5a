"""The project's two graph suites: the report's default suite and the committed validation suite.

`DEFAULT_SUITE` (what `simdmodel report` draws without SPECs): generated graphs standing in for
seed 000's Table 1 classes. Seed 000 §3.1 profiles fifteen graphs of 0.4-5 M vertices: sparse
meshes and a road map with long diameters, small-world RMAT graphs at two densities, uniform
random graphs at three densities and the Graph500 Kronecker graph kron20. The generated stand-ins below keep each class's mean
degree and shape but are scaled down (except kron20) so the whole default report runs in a few
minutes on two CPU cores. kron20 keeps its full size because it is also in the committed GPU
validation run (`gpu_validate/results/`), so the default report shows prediction beside
measurement for it.

`VALIDATION_SUITE` (what `python -m simdreport.validation_suite` measures on a GPU and compares):
six graphs of 1-2 M vertices, every modelled kernel, `VALIDATION_SOURCES` seeded sources each.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SuiteGraph:
    """One graph of a report: its spec, a short label for axes, and the Table 1 class it stands for
    (empty for a graph given on the command line; a real graph's kind). A file from a suite's
    manifest also carries its `load_graph` options and the sha256 its file must have."""

    spec: str
    label: str
    stands_for: str
    loader: dict = field(default_factory=dict, compare=False)
    sha256: str | None = None

    def load(self):
        """The graph, loaded with this entry's options; a file whose sha256 differs is refused."""
        from simdmodel.load import load_graph

        graph = load_graph(self.spec, **self.loader)
        if self.sha256 is not None:
            check_sha256(graph, self.sha256, self.spec)
        return graph


def size_hint(graph: SuiteGraph) -> int:
    """A graph's size before loading it, to start the largest first: a generator spec's declared edge
    entries, a file's bytes (0 where neither is known)."""
    from simdmodel import generators

    try:
        if generators.is_generator_spec(graph.spec):
            return generators.declared_size(graph.spec)[1]
        return os.path.getsize(graph.spec)
    except (OSError, ValueError, TypeError):
        return 0


def check_sha256(graph, expected: str, where) -> None:
    """InputError unless `graph` was read from a file whose sha256 is `expected`."""
    from simdmodel.errors import InputError

    actual = graph.origin.sha256 if graph.origin is not None else None
    if actual != expected:
        raise InputError(f"{where}: the file's sha256 is {actual or 'unknown (not read from a file)'}, "
                         f"not {expected} as recorded; it is not the graph that was described or measured")


DEFAULT_SUITE: tuple[SuiteGraph, ...] = (
    SuiteGraph("mesh6:side=500", "mesh", "mesh: 6-point 2D mesh, mean degree 6"),
    SuiteGraph("grid2d:side=500", "grid", "ecology: 2D 5-point grid, mean degree 4"),
    SuiteGraph("delaunay:n=250000", "delaunay", "FLA-road: planar and road-like, long diameter"),
    SuiteGraph("rmat:scale=18,ef=6", "rmat d12", "rmat1: small-world RMAT, mean degree 12"),
    SuiteGraph("rmat:scale=16,ef=25", "rmat d50", "rmat2: small-world RMAT, mean degree 50"),
    SuiteGraph("random:n=131072,m=786432", "random d12", "random3: uniform random, mean degree 12"),
    SuiteGraph("random:n=131072,m=3276800", "random d50", "random2: uniform random, mean degree 50"),
    SuiteGraph("random:n=131072,m=4194304", "random d64", "random1: uniform random, mean degree 64"),
    SuiteGraph("kron:scale=20,ef=16", "kron20", "kron20: Graph500 Kronecker, highly skewed"),
)


def suite_for(specs) -> tuple[SuiteGraph, ...]:
    """The graphs of a report: DEFAULT_SUITE without specs, else one entry per spec (labels made unique)."""
    if not specs:
        return DEFAULT_SUITE
    known = {graph.spec: graph for graph in DEFAULT_SUITE}
    graphs, seen = [], {}
    for spec in specs:
        base = known[spec].label if spec in known else _short(spec)
        seen[base] = seen.get(base, 0) + 1
        label = base if seen[base] == 1 else f"{base} ({seen[base]})"
        stands_for = known[spec].stands_for if spec in known else ""
        graphs.append(SuiteGraph(spec, label, stands_for))
    return tuple(graphs)


def _short(spec: str) -> str:
    """An axis label for a user spec: a file's name, or the generator spec itself."""
    text = str(spec).rstrip("/").rsplit("/", 1)[-1]
    return text if len(text) <= 28 else text[:27] + "…"


VALIDATION_SUITE: tuple[str, ...] = (
    "rmat:scale=21,ef=16",
    "kron:scale=20,ef=16",
    "random:n=2000000,m=32000000",
    "grid2d:side=1400",
    "mesh6:side=1000",
    "delaunay:n=1000000",
)
"""The graphs of the committed validation run (`gpu_validate/results/<device>/`)."""
VALIDATION_KERNELS: tuple[str, ...] = ("topo", "sm-1", "sm-2", "sm-4", "sm-8", "sm-16", "sm-32", "ws", "scan")
"""The kernels of the committed validation suite (`gpu_validate/results/nvidia-h200/`), which its runs
measure and compare unless `--kernels` says otherwise."""
MODELLED_KERNELS: tuple[str, ...] = (*VALIDATION_KERNELS, "swc")
"""Every modelled kernel: what `simdmodel validate` runs by default."""
VALIDATION_SOURCES = 3
"""Seeded BFS sources per graph of the validation suite."""
VALIDATION_SEED = 1
"""The seed of the validation suite's sources (`simdmodel.pick_sources(graph, VALIDATION_SOURCES, seed)`)."""


def graph_slug(spec: str) -> str:
    """A folder name for a graph spec: 'rmat:scale=21,ef=16' -> 'rmat_scale21_ef16'."""
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9]+", "_", spec.replace("=", ""))).strip("_")
