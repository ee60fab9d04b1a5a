"""Where the team's shared real graphs are: $SIMDMODEL_GRAPHS, else a shared/graphs folder beside
the project (None when there is none: the tests that need them skip)."""
import os
from pathlib import Path

import pytest


def _find() -> Path | None:
    folder = os.environ.get("SIMDMODEL_GRAPHS")
    if folder:
        return Path(folder)
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "graphs"
        if candidate.is_dir():
            return candidate
    return None


SHARED = _find()
needs_shared = pytest.mark.skipif(SHARED is None, reason="no shared/graphs folder beside the project "
                                                         "(or SIMDMODEL_GRAPHS)")
