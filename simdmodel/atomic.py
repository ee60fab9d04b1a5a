"""Write files all-or-nothing: a temporary file beside the target, renamed over it on success."""
from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .errors import InputError


@contextlib.contextmanager
def atomic_path(target):
    """Yield a temporary path in `target`'s directory; rename it to `target` if the block succeeds.

    On any exception the temporary file is removed and `target` is left untouched.
    """
    target = Path(target)
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise InputError(f"{target}: directory {directory} does not exist")
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=directory)
    os.close(handle)
    try:
        yield Path(temp_name)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise


def write_text(target, text: str) -> None:
    """Write `text` to `target` atomically."""
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")
