"""A folder of graph files as a report or validation suite: its manifest, `graphs.toml`.

A manifest lists the folder's files with the loader's choices for each (symmetrize, reader
options) and, optionally, what the file should be (n, m, sha256), so a suite over real graphs
loads every file the same way on every machine and refuses a file that is not the one described
(the sha256 is checked on every load; n and m say what the loaded graph is, and the tests check
them against the shared files).
The project ships one, `manifests/real.toml`, for the eighteen public real graphs the team
validates on (`--suite real`); the files stay outside the project, in the folder given with
`--graphs-dir`. A folder without a manifest is read as the CLI would read each file given
alone: every file with a known graph suffix, as stored, in name order.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from simdmodel.errors import GraphFormatError, InputError
from simdmodel.generators import is_generator_spec
from simdmodel.readers import reader_for, stem_name
from simdmodel.readers.options import ReadOptions

from .suites import SuiteGraph

MANIFEST_NAME = "graphs.toml"
SUITES = {"real": Path(__file__).with_name("manifests") / "real.toml"}
"""Named suites shipped with the project: `--suite NAME` reads this manifest."""
KEYS = {"file": str, "label": str, "kind": str, "directed": bool, "symmetrize": bool, "count_lines": bool,
        "header": bool, "columns": list, "n": int, "m": int, "m_counts": str, "sha256": str}


@dataclass(frozen=True)
class ManifestGraph:
    """One `[[graph]]` entry: the file, how to load it, and what it should turn out to be."""

    path: Path
    label: str
    kind: str = ""
    directed: bool | None = None
    symmetrize: bool = False
    read: ReadOptions = ReadOptions()
    n: int | None = None
    m: int | None = None
    m_counts: str = "arcs"
    sha256: str | None = None

    @property
    def loader(self) -> dict:
        """`load_graph` keyword arguments for this file."""
        return {"undirected": self.symmetrize, "read_options": self.read}

    def expected_csr_m(self, self_loops: int) -> int | None:
        """The CSR's m the manifest's m implies: 2m - self loops where m counts undirected edges once."""
        if self.m is None:
            return None
        return 2 * self.m - self_loops if self.m_counts == "edges" else self.m

    def suite_graph(self) -> SuiteGraph:
        return SuiteGraph(str(self.path), self.label, self.kind, loader=self.loader, sha256=self.sha256)


def read_manifest(manifest: Path, directory: Path) -> tuple[ManifestGraph, ...]:
    """The entries of `manifest` with their files in `directory`; one InputError line for any problem."""
    try:
        data = tomllib.loads(Path(manifest).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{manifest}: cannot read the manifest: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{manifest}: not a valid TOML manifest: {exc}") from None
    extra = sorted(set(data) - {"graph"})
    entries = data.get("graph")
    if extra or not isinstance(entries, list) or not entries:
        raise InputError(f"{manifest}: expected [[graph]] tables and nothing else"
                         + (f" (found {extra[0]!r})" if extra else ""))
    graphs = [_entry(manifest, directory, i + 1, entry) for i, entry in enumerate(entries)]
    labels = [g.label for g in graphs]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise InputError(f"{manifest}: label {twice[0]!r} is used twice")
    return tuple(graphs)


def _entry(manifest, directory: Path, index: int, entry) -> ManifestGraph:
    where = f"{manifest}: graph {index}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a table")
    for key, value in entry.items():
        kind = KEYS.get(key)
        if kind is None:
            raise InputError(f"{where}: unknown key {key!r} (known: {', '.join(KEYS)})")
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise InputError(f"{where}: {key} must be a {kind.__name__}, got {value!r}")
    if "file" not in entry:
        raise InputError(f"{where}: no file")
    path = Path(directory) / entry["file"]
    if entry.get("m_counts", "arcs") not in ("arcs", "edges"):
        raise InputError(f"{where}: m_counts must be 'arcs' or 'edges', got {entry['m_counts']!r}")
    for key in ("n", "m"):
        if entry.get(key, 0) < 0:
            raise InputError(f"{where}: {key} must be >= 0, got {entry[key]}")
    read = ReadOptions(header=entry.get("header"), columns=entry.get("columns"),
                       count_lines=entry.get("count_lines", False))
    return ManifestGraph(path, entry.get("label") or stem_name(path), entry.get("kind", ""), entry.get("directed"),
                         entry.get("symmetrize", False), read, entry.get("n"), entry.get("m"),
                         entry.get("m_counts", "arcs"), entry.get("sha256"))


def directory_graphs(directory, suite: str | None = None, manifest=None) -> tuple[ManifestGraph, ...]:
    """The graphs of `directory`: those of the named `suite`'s manifest, of `manifest`, of the
    folder's own graphs.toml, or else every file with a known graph suffix (`check_files` says
    whether a manifest's files are all there)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError(f"--graphs-dir {directory}: not a directory")
    if suite is not None and manifest is not None:
        raise InputError("--suite names a shipped manifest; it cannot be combined with --manifest")
    if suite is not None:
        if suite not in SUITES:
            raise InputError(f"--suite {suite!r}: unknown (known: {', '.join(SUITES)})")
        manifest = SUITES[suite]
    elif manifest is None and (directory / MANIFEST_NAME).is_file():
        manifest = directory / MANIFEST_NAME
    if manifest is not None:
        graphs = read_manifest(Path(manifest), directory)
    else:
        graphs = tuple(ManifestGraph(path, stem_name(path)) for path in sorted(directory.iterdir())
                       if path.is_file() and _known(path))
        if not graphs:
            raise InputError(f"--graphs-dir {directory}: no graph files (and no {MANIFEST_NAME})")
    return graphs


def check_files(graphs) -> None:
    """InputError naming the first graph whose file is not there (and how many more are missing);
    generator specs need no file."""
    missing = [g.spec for g in graphs if not Path(g.spec).is_file() and not is_generator_spec(g.spec)]
    if missing:
        raise InputError(f"{missing[0]}: no such file, though the manifest lists it"
                         + (f" ({len(missing) - 1} more missing)" if len(missing) > 1 else ""))


def _known(path: Path) -> bool:
    try:
        reader_for(path)
    except GraphFormatError:  # not a graph file's suffix
        return False
    return True
