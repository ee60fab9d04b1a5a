"""Which file a graph came from and how it was read: its sha256 and the loader's choices.

A measurement is only comparable with a prediction made on the same graph, and a real graph's
file name says little (a re-download, another snapshot, a converted copy keep it). So a graph
read from a file carries its `FileIdentity`: `graph info` prints it, validation runs record it in
device.json, and a re-compare refuses a file whose hash is not the one measured.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class FileIdentity:
    """The file's name and sha256, and the choices that turned its bytes into the CSR."""

    file: str
    sha256: str
    symmetrized: bool  # the loader stored every edge line in both directions (else: as the file lists them)
    self_loops: str  # "kept" or "dropped"
    duplicates: str  # "kept" or "dropped"
    read_options: dict = field(default_factory=dict)  # ReadOptions.choices(): non-default reader options
    notes: tuple[str, ...] = ()  # what the reader decided on its own (a detected header row, count lines)

    def as_dict(self) -> dict:
        """JSON-ready: the record device.json and `graph info --format json` hold."""
        return {"file": self.file, "sha256": self.sha256, "symmetrized": self.symmetrized,
                "self_loops": self.self_loops, "duplicates": self.duplicates,
                "read_options": dict(self.read_options), "notes": list(self.notes)}

    def describe(self) -> str:
        """One line of the loader's choices, e.g. 'edges as the file lists them; self loops kept; duplicates kept'."""
        parts = ["every edge stored both ways" if self.symmetrized else "edges as the file lists them",
                 f"self loops {self.self_loops}", f"duplicates {self.duplicates}"]
        parts += [f"{key}={value}" for key, value in self.read_options.items()]
        return "; ".join(parts + list(self.notes))


def file_sha256(path) -> str:
    """Hex sha256 of the file's bytes as they are on disk (compressed files are not unpacked)."""
    digest = hashlib.sha256()
    with open(Path(path), "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
