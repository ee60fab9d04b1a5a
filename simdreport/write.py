"""Writing a report folder all or nothing: a staging folder beside DIR that replaces DIR when complete.

The staging folder is made as soon as the target is checked, so an unwritable DIR fails before any
work, and on any failure it is removed: DIR is either the previous report, untouched, or the new one.
A DIR that exists must be empty or hold only an earlier report's files, so nothing else is replaced.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from simdmodel.atomic import replace_directory, track, untrack
from simdmodel.errors import InputError

from .htmlpage import render_html
from .markdown import render_markdown

REPORT_ENTRIES = {"index.html", "report.md", "figures", "tables"}


def check_output_folder(target: Path, entries, holder: str) -> None:
    """InputError unless `target` is a folder holding only `entries` (an earlier run's files), or
    does not exist yet in a folder that does; `holder` names what writes it ('a report')."""
    if target.exists():
        if not target.is_dir():
            raise InputError(f"{target}: exists and is not a directory")
        strangers = sorted(p.name for p in target.iterdir() if p.name not in entries)
        if strangers:
            raise InputError(f"{target}: exists and holds files that are not {holder}'s ({strangers[0]}); "
                             "choose another --out")
    elif not target.absolute().parent.is_dir():
        raise InputError(f"{target}: directory {target.absolute().parent} does not exist")


class ReportTarget:
    """The output folder of a report and its staging folder."""

    def __init__(self, out):
        self.target = Path(out)
        target = self.target
        check_output_folder(target, REPORT_ENTRIES, "a report")
        parent = target.absolute().parent
        try:
            self.staging: Path | None = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=parent))
        except OSError as error:
            raise InputError(f"{target}: cannot write in {parent} ({error.strerror or error})") from None
        track(self.staging)

    def write(self, report) -> None:
        """Write every file of `report` into the staging folder, then put it in place of the target."""
        staging = self.staging
        (staging / "figures").mkdir()
        (staging / "tables").mkdir()
        for items in report.figures.values():
            for item in items:
                (staging / "figures" / f"{item.key}.png").write_bytes(item.png)
        for name, table in report.tables.items():
            table.to_csv(staging / "tables" / f"{name}.csv", index=False)
        (staging / "report.md").write_text(render_markdown(report), encoding="utf-8")
        (staging / "index.html").write_text(render_html(report), encoding="utf-8")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(staging, 0o777 & ~mask)
        self._swap()

    def _swap(self) -> None:
        replace_directory(self.staging, self.target)
        untrack(self.staging)
        self.staging = None

    def discard(self) -> None:
        """Remove the staging folder (after a failure); the target is left as it was."""
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
            untrack(self.staging)
            self.staging = None
