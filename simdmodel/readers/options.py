"""`ReadOptions`: how to read a graph file where its format leaves a choice to the user.

Each field belongs to some formats only (CSV/TSV: `header`, `columns`; SNAP edge lists:
`count_lines`); `readers.read` refuses a non-default option on a file of another format rather
than ignoring it, so a mistyped suffix or a misplaced flag never goes unnoticed. `choices()` gives
the options that were set, for the run's record. Every field has a CLI flag (`flag`), the name
error messages use.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError

FLAGS = {"header": "--header", "columns": "--columns", "count_lines": "--count-lines"}
"""The CLI flag of each option (`header=False` is `--no-header`)."""


@dataclass(frozen=True)
class ReadOptions:
    """Reader choices a file's format leaves open; the defaults read every file as before.

    `header` (CSV/TSV): True = the first content line is a header row, False = it is data, None =
    detect (a header when its src/dst fields are not both integers). `columns` (CSV/TSV): the src,
    dst and optional weight columns, each a header name or a 0-based index as a string (a single
    comma-separated string is split: "node_1,node_2"); names need a header row. `count_lines`
    (SNAP edge lists): accept up to two leading lines holding one bare integer each, the vertex
    count and then the edge count.
    """

    header: bool | None = None
    columns: tuple[str, ...] | None = None
    count_lines: bool = False

    def __post_init__(self):
        if self.header is not None and not isinstance(self.header, bool):
            raise InputError(f"read option header must be True, False or None, got {self.header!r}")
        if not isinstance(self.count_lines, bool):
            raise InputError(f"read option count_lines must be True or False, got {self.count_lines!r}")
        if self.columns is not None:
            object.__setattr__(self, "columns", _parse_columns(self.columns))

    def choices(self) -> dict:
        """The options set to other than their defaults, as JSON-ready values (empty: defaults)."""
        out = {}
        if self.header is not None:
            out["header"] = self.header
        if self.columns is not None:
            out["columns"] = list(self.columns)
        if self.count_lines:
            out["count_lines"] = True
        return out

    def flag(self, name: str) -> str:
        """The CLI flag that sets option `name` to its value here (`--no-header` for header=False)."""
        if name == "header" and self.header is False:
            return "--no-header"
        return FLAGS[name]


def _parse_columns(columns) -> tuple[str, ...]:
    """2 or 3 distinct, non-empty column names or indices (ints are taken as indices)."""
    if isinstance(columns, str):
        columns = columns.split(",")
    try:
        items = tuple(str(c).strip() if isinstance(c, (str, int)) and not isinstance(c, bool) else None
                      for c in columns)
    except TypeError:
        raise InputError(f"read option columns must be 2 or 3 column names or indices, got "
                         f"{columns!r}") from None
    if None in items or "" in items or len(items) not in (2, 3):
        raise InputError(f"columns must be 2 or 3 column names or 0-based indices (src, dst "
                         f"[, weight]), got {columns!r}")
    if len(set(items)) != len(items):
        raise InputError(f"columns must name different columns, got {', '.join(items)}")
    return items
