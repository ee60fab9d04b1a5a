"""Write files and folders all-or-nothing: a temporary one beside the target, renamed over it on success."""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

from .errors import InputError


def check_target(target) -> Path:
    """Raise InputError unless `target` can be written: its directory exists and it is no directory.

    Call it before long work so a bad --out fails at once.
    """
    target = Path(target)
    if not target.parent.is_dir():
        raise InputError(f"{target}: directory {target.parent} does not exist")
    if target.is_dir():
        raise InputError(f"{target}: is a directory")
    return target


@contextlib.contextmanager
def atomic_path(target):
    """Yield a temporary path in `target`'s directory; rename it to `target` if the block succeeds.

    On any exception the temporary file is removed and `target` is left untouched. The result
    gets the usual umask-based mode (mkstemp creates files 0600).
    """
    target = check_target(target)
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(handle)
    try:
        yield Path(temp_name)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(temp_name, 0o666 & ~mask)
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise


def replace_directory(staging, target) -> None:
    """Put the complete folder `staging` in place of `target` (a sibling of it): an existing
    `target` is first moved aside, then removed, so `target` is always the old or the new folder."""
    staging, target = Path(staging), Path(target)
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old.", dir=target.absolute().parent))
        os.replace(target, old / target.name)
        os.replace(staging, target)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, target)


def write_text(target, text: str) -> None:
    """Write `text` to `target` atomically."""
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")
