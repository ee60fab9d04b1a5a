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
import tempfile
from pathlib import Path

import pandas as pd

from simdmodel.atomic import atomic_path, staged_directory, write_text
from simdmodel.errors import InputError

from .sweep_plan import SweepTask
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

    def rows(self, tasks, known: dict | None = None) -> pd.DataFrame:
        """The rows of the finished ones among `tasks`, in task order; `known` (task id -> rows) holds
        those this process wrote, which are not read back."""
        known = known or {}
        parts = [known[task.task_id] if task.task_id in known else pd.read_parquet(self.part(task))
                 for task in tasks if task.task_id in known or self.done(task)]
        return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()

    def finish(self, tables: dict[str, pd.DataFrame], figures: dict[str, bytes], record: dict) -> None:
        """Write the last run's tables (NAME.csv), figures (replacing the previous ones) and sweep.json."""
        self._folder(self.root)
        for name, table in tables.items():
            with atomic_path(self.root / f"{name}.csv") as temp:
                table.to_csv(temp, index=False)
        with staged_directory(self.root / "figures") as staging:
            for name, png in figures.items():
                (staging / f"{name}.png").write_bytes(png)
        write_text(self.root / "sweep.json", json.dumps(record, indent=1) + "\n")
