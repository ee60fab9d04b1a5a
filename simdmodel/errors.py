"""The one error type for user mistakes (the CLI prints it as a single line and exits 2), and the one
warning for data a run goes on without (the CLI prints it as one `warning:` line)."""
from __future__ import annotations


class InputError(ValueError):
    """Bad input from the user: a malformed file, an id out of range, a bad option value."""


class GraphFormatError(InputError):
    """A graph file that cannot be parsed; names the file and, where known, the 1-based line."""

    def __init__(self, path, message: str, line: int | None = None):
        self.path = str(path)
        self.line = line
        self.reason = message
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


class DataWarning(UserWarning):
    """A measurement, file or field that is missing or was not what was expected, where the run can
    still go on honestly (the numbers it affects are left out, and this says so)."""
