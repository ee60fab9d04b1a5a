"""Which code produced a comparison: `code_version`, recorded in summary.json beside the figures.

A validation's figures change with the model's code, so the summary names the git commit of the
working tree that compared. Uncommitted changes (tracked or untracked files) make it
"<commit>-dirty": the commit alone would not reproduce the run. The folders the run writes into
are left out of that check (`exclude`), so a second comparison over the same results folder does
not call the code dirty because the first one rewrote its tables.
"""
from __future__ import annotations

import subprocess
from pathlib import Path

UNKNOWN = "unknown"
_ROOT = Path(__file__).resolve().parent.parent


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, timeout=30)
    return done.stdout


def code_version(root=None, exclude=()) -> str:
    """`git rev-parse HEAD` of the tree holding `root` (default: this package's checkout), plus
    "-dirty" when `git status` lists changes outside the folders `exclude`; "unknown" when git is
    missing or `root` is not in a git working tree."""
    root = Path(root) if root is not None else _ROOT
    try:
        commit = _git(root, "rev-parse", "--verify", "HEAD").strip()
        top = Path(_git(root, "rev-parse", "--show-toplevel").strip()).resolve()
        spec = ["--", "."]
        for path in exclude:
            path = Path(path).resolve()
            if path == top or top in path.parents:
                spec.append(f":(top,exclude){path.relative_to(top).as_posix()}")
        changes = _git(top, "status", "--porcelain", *spec)
    except (OSError, subprocess.SubprocessError):
        return UNKNOWN
    if not commit:
        return UNKNOWN
    return f"{commit}-dirty" if changes.strip() else commit
