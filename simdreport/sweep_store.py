"""A sweep's output folder: a Parquet dataset that grows task by task and survives being killed.

    DIR/levels/part-<task id>.parquet   one file per finished task, one row per level (sweep_task.COLUMNS)
    DIR/failed/<task id>.json           a failed task's inputs and its error line (gone once it succeeds)
    DIR/whole_bfs.csv                   one row per task of the last run: whole-BFS predicted time
    DIR/fastest.csv                     per graph and profile of the last run: the fastest kernel
    DIR/figures/*.png                   predicted time against each swept hardware knob
    DIR/sweep.json                      the last run's settings, command, code version and counts

Each file is written to a temporary name and renamed into place, so a run killed at any moment
leaves only whole files: a part that exists is a finished task, and a rerun skips it.
`pandas.read_parquet("DIR/levels")` reads every task's rows at once (temporary files start with '.'
and are not part of the dataset). Tasks of earlier runs with other settings stay in the dataset;
`whole_bfs.csv`, `fastest.csv`, the figures and `sweep.json` describe the last run.
"""
from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from simdmodel.atomic import atomic_path, replace_directory, temporary, write_text
from simdmodel.errors import InputError

from .sweep_plan import SweepTask
from .sweep_task import IDENTITY_COLUMNS
from .write import check_output_folder

ENTRIES = {"levels", "failed", "figures", "whole_bfs.csv", "fastest.csv", "sweep.json"}


class SweepStore:
    """The folder of one sweep (see the module docstring): checked on creation, made on the first write."""

    def __init__(self, out):
        self.root = Path(out)
        root = self.root
        check_output_folder(root, ENTRIES, "a sweep")
        probe_in = root if root.exists() else root.absolute().parent
        try:
            tempfile.NamedTemporaryFile(dir=probe_in, prefix=".probe.").close()
        except OSError as error:
            raise InputError(f"{root}: cannot write in {probe_in} ({error.strerror or error})") from None

    @property
    def levels(self) -> Path:
        return self.root / "levels"

    @property
    def failed(self) -> Path:
        return self.root / "failed"

    def _folder(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        return folder

    def part(self, task: SweepTask) -> Path:
        return self.levels / f"part-{task.task_id}.parquet"

    def done(self, task: SweepTask) -> bool:
        """True when an earlier run (or this one) finished `task`."""
        return self.part(task).is_file()

    def write(self, task: SweepTask, rows: pd.DataFrame) -> None:
        """Keep a finished task's rows (and forget an earlier failure of it)."""
        self._folder(self.levels)
        with atomic_path(self.part(task)) as temp:
            rows.to_parquet(temp, index=False, engine="pyarrow")
        (self.failed / f"{task.task_id}.json").unlink(missing_ok=True)

    def fail(self, task: SweepTask, message: str) -> None:
        """Record a failed task: its inputs and the error line."""
        record = {"task_id": task.task_id, **task.inputs(), "graph_label": task.graph.label, "error": message}
        write_text(self._folder(self.failed) / f"{task.task_id}.json", json.dumps(record, indent=1) + "\n")

    def rows(self, tasks) -> pd.DataFrame:
        """The rows of the finished ones among `tasks`, in task order."""
        parts = [pd.read_parquet(self.part(task)) for task in tasks if self.done(task)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def finish(self, tables: dict[str, pd.DataFrame], figures: dict[str, bytes], record: dict) -> None:
        """Write the last run's tables (NAME.csv), figures (replacing the previous ones) and sweep.json."""
        self._folder(self.root)
        for name, table in tables.items():
            with atomic_path(self.root / f"{name}.csv") as temp:
                table.to_csv(temp, index=False)
        staging = Path(tempfile.mkdtemp(prefix=".figures.", dir=self.root))
        with temporary(staging):
            try:
                for name, png in figures.items():
                    (staging / f"{name}.png").write_bytes(png)
                mask = os.umask(0)
                os.umask(mask)
                os.chmod(staging, 0o777 & ~mask)
                replace_directory(staging, self.root / "figures")
            except BaseException:
                shutil.rmtree(staging, ignore_errors=True)
                raise
        write_text(self.root / "sweep.json", json.dumps(record, indent=1) + "\n")


def whole_bfs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per task: its inputs, the whole-BFS predicted time (ms), levels, launches, and the
    bottleneck that holds the most of the predicted time."""
    if rows.empty:
        return pd.DataFrame()
    sums = rows.groupby("task_id", sort=False).agg(predicted_ns=("predicted_ns", "sum"), levels=("level", "size"),
                                                   launches=("launches", "sum"))
    by_server = rows.groupby(["task_id", "bottleneck"], sort=False)["predicted_ns"].sum().reset_index()
    top = by_server.loc[by_server.groupby("task_id", sort=False)["predicted_ns"].idxmax(), ["task_id", "bottleneck"]]
    first = rows.drop_duplicates("task_id")[list(IDENTITY_COLUMNS)]
    out = first.merge(sums, left_on="task_id", right_index=True).merge(top, on="task_id")
    out["predicted_ms"] = out.pop("predicted_ns") / 1e6
    return out.reset_index(drop=True)

