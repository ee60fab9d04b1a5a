"""Write files and folders all-or-nothing: a temporary one beside the target, renamed over it on success.

Every temporary file or folder is registered (`temporary`) while it exists, so a process that must
stop at once (the command line's Ctrl-C, which exits without unwinding) removes them all with
`remove_temporaries` and leaves no half-written output behind.
"""
from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tempfile
from pathlib import Path

from .errors import InputError

_TEMPORARIES: set[str] = set()


def track(path) -> None:
    """Register `path`, a temporary file or folder, for `remove_temporaries`."""
    _TEMPORARIES.add(os.fspath(path))


def untrack(path) -> None:
    """Forget `path` (renamed into place, or removed)."""
    _TEMPORARIES.discard(os.fspath(path))


@contextlib.contextmanager
def temporary(path):
    """`track(path)` while the block runs."""
    track(path)
    try:
        yield path
    finally:
        untrack(path)


def remove_temporaries() -> None:
    """Remove every registered temporary file and folder (for an exit that skips `finally` blocks)."""
    for key in list(_TEMPORARIES):
        if os.path.isdir(key) and not os.path.islink(key):
            shutil.rmtree(key, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(key)
        _TEMPORARIES.discard(key)


def check_target(target) -> Path:
    """The path a write to `target` replaces; InputError, naming `target`, unless it can be written.

    `target` must be a regular file or not exist yet, in a directory that exists and takes a new
    file (tried by creating and removing one). A symlink is written through: its final target is
    replaced and the link kept. A device, FIFO or socket is refused, never replaced. Call it
    before long work so a bad --out fails at once.
    """
    given = Path(target)
    path = Path(os.path.realpath(given)) if given.is_symlink() else given
    if path.is_dir():
        raise InputError(f"{given}: is a directory")
    if path.exists() and not path.is_file():
        raise InputError(f"{given}: not a regular file (a device, FIFO or socket is never replaced); "
                         "write to a regular file, or leave out --out to print")
    if not path.parent.is_dir():
        raise InputError(f"{given}: directory {path.parent} does not exist")
    try:
        handle, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    except OSError as error:
        raise InputError(f"{given}: cannot write in {path.parent}: {error.strerror or error}") from None
    os.close(handle)
    os.unlink(probe)
    return path


@contextlib.contextmanager
def atomic_path(target):
    """Yield a temporary path in `target`'s directory; rename it to `target` if the block succeeds.

    On any exception the temporary file is removed and `target` is left untouched. The result
    gets the usual umask-based mode (mkstemp creates files 0600). An OSError about the temporary
    file is raised as one about `target`, the path the user named.
    """
    given = target
    target = check_target(target)
    handle, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    with temporary(temp_name):
        os.close(handle)
        try:
            yield Path(temp_name)
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(temp_name, 0o666 & ~mask)
            os.replace(temp_name, target)
        except OSError as error:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp_name)
            if error.filename in (temp_name, str(temp_name)):
                raise OSError(error.errno, error.strerror, str(given)) from None
            raise
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
        with temporary(old):
            os.replace(target, old / target.name)
            os.replace(staging, target)
            shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, target)


@contextlib.contextmanager
def staged_directory(target):
    """Yield a new empty folder beside `target`; when the block succeeds the folder (given the
    umask's mode) takes `target`'s place (`replace_directory`), otherwise it is removed and
    `target` is left as it was."""
    target = Path(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.absolute().parent))
    with temporary(staging):
        try:
            yield staging
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(staging, 0o777 & ~mask)
            replace_directory(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def write_text(target, text: str) -> None:
    """Write `text` to `target` atomically."""
    with atomic_path(target) as temp:
        temp.write_text(text, encoding="utf-8")


def write_csv_gz(target, table) -> None:
    """`table` (a pandas DataFrame) as gzip-compressed CSV at `target`, all or nothing, and the same
    bytes for the same table: no time stamp and no file name in the gzip header."""
    with atomic_path(target) as temp, open(temp, "wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed:
        packed.write(table.to_csv(index=False).encode("utf-8"))
