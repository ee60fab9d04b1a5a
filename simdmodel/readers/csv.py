"""CSV / TSV edge lists (`.csv` comma-, `.tsv` tab-separated, optionally compressed).

One edge per line: `src,dst` or `src,dst,weight`, 0-based non-negative integer ids, an optional
header row (`node_1,node_2`, `from,to`, `id1,id2`: the MUSAE/GEMSEC sets, Kaggle, pandas
exports). Lines whose first non-blank character is `#` or `%` are comments, blank lines are
skipped, a UTF-8 byte-order mark is dropped, fields may be quoted as in Excel's CSV dialect but a
quoted field may not span lines. The graph has n = max id + 1 vertices and is directed, as a SNAP
list; a weight column gives float64 weights, each finite.

The header row is detected (its src/dst fields are not both integers) unless `ReadOptions.header`
says; more than three columns need `ReadOptions.columns` (names from the header row, or 0-based
indices). Every data line must have as many fields as the first (header or data) line. What the
reader chose goes into the EdgeList's `notes`.

Two paths, one result. The fast path is pandas' C parser; its output is used only where it
certainly equals the slow path's: no quotes, control bytes or lone CRs in the data, every line with
the first line's field count, id fields made only of digits, signs and blanks (pandas would read
`1.0` or `1e3` as an integer id), weight fields only of digits, signs, `.`, `e` and `E` (it reads
`+1e 1` as 10), and every id and weight in range. Anything else goes to the slow path, a Python
pass with the stdlib csv module that is the definition of a valid file: it reads the edges or
raises a GraphFormatError at the first bad line.
"""
from __future__ import annotations

import csv as csvlib
import io
import re
import warnings
from dataclasses import dataclass

import numpy as np

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT, EdgeList
from . import _text
from .options import ReadOptions

OPTIONS = ("header", "columns")
SEPARATORS = {".csv": ",", ".tsv": "\t"}
SEPARATOR_NAMES = {",": "commas", "\t": "tabs"}
COMMENTS = (b"#", b"%")
BOM = b"\xef\xbb\xbf"
MAX_ID = INDEX_LIMIT - 1  # as in SNAP lists: n = max id + 1 must fit INDEX_LIMIT

_INT = re.compile(r"[ \t]*[+-]?[0-9]+[ \t]*")
_NUMBER = re.compile(r"[ \t]*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[ \t]*")
_NON_FINITE = re.compile(r"[ \t]*[+-]?(?:nan|inf|infinity)[ \t]*", re.IGNORECASE)
_INDEX = re.compile(r"[0-9]+")
_COMMENT_LINE = re.compile(rb"(?m)^[ \t]*[#%][^\n]*")
_DIGITS = b"0123456789"
_ID_BYTES = _DIGITS + b"+- \t\r"  # \r: only before \n (lone CRs go to the slow path)
_WEIGHT_BYTES = _DIGITS + b"+-.eE\r"
_UNSAFE = bytes(b for b in range(32) if b not in b"\t\n\r") + b'"\x7f'  # quotes, control bytes
_SAFE = bytes(b for b in range(256) if b not in _UNSAFE)


@dataclass(frozen=True)
class _Layout:
    """Where the data lines start and which fields hold what, from the first content line."""

    sep: str
    first_line: int  # number of the header row, or of the first data line
    body: int  # byte offset of the first line after the header row (0 without one)
    body_line: int
    ncols: int
    src: int
    dst: int
    weight: int | None
    notes: tuple[str, ...]

    @property
    def used(self) -> list[int]:
        """The columns read: src, dst and the weight column if there is one."""
        return [c for c in (self.src, self.dst, self.weight) if c is not None]


def read(path, options: ReadOptions | None = None) -> EdgeList:
    """Read a CSV (`.csv`) or TSV (`.tsv`) edge list as a directed EdgeList with n = max id + 1."""
    options = options or ReadOptions()
    data = _text.load_bytes(path)
    if data.startswith(BOM):
        data = data[len(BOM):]
    layout = _layout(path, data, SEPARATORS[_text.format_suffix(path)], options)
    parsed = _fast(data, layout)
    if parsed is None:
        parsed = _slow(path, data, layout)
    src, dst, weights = parsed
    if src.size == 0:  # (without a header row the first content line is an edge or an error)
        raise GraphFormatError(path, "no edges (only a header row, comments or blank lines)")
    n = int(max(src.max(), dst.max())) + 1
    return EdgeList(src.astype(np.int32), dst.astype(np.int32), n, undirected=False,
                    name=_text.stem_name(path), weights=weights, notes=layout.notes)


# --- layout: header row and columns --------------------------------------------------------------

def _fields(path, raw: bytes, sep: str, line: int) -> list[str]:
    """The fields of one line (its newline and a CR before it dropped), decoded as latin-1 so that
    each byte is one character and error messages can show the bytes as they are."""
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if b"\r" in raw:
        raise GraphFormatError(path, f"carriage return inside the line {_text.show(raw)} (lines end "
                               "with \\n or \\r\\n)", line)
    try:
        return next(csvlib.reader([raw.decode("latin-1")], delimiter=sep, strict=True))
    except csvlib.Error as exc:
        hint = "; a quoted field must end on its line" if "end of data" in str(exc) else ""
        raise GraphFormatError(path, f"malformed line {_text.show(raw)} ({exc}{hint})", line) from None


def _name(field: str) -> str:
    """A header field as text (the bytes read as UTF-8)."""
    return field.encode("latin-1").decode("utf-8", "replace").strip()


def _layout(path, data: bytes, sep: str, options: ReadOptions) -> _Layout:
    """Header row or not, the field count and the src/dst/weight columns, from the first content
    line and the options; a GraphFormatError at that line where they do not fit together."""
    text, after, line = _text.next_content_line(data, 0, 1, COMMENTS)
    if text is None:
        raise GraphFormatError(path, "no edges (only comments or blank lines)")
    start = data.rfind(b"\n", 0, after - 1) + 1
    raw = data[start:after - 1]
    fields = _fields(path, raw, sep, line)
    columns = options.columns
    named = columns is not None and not all(_INDEX.fullmatch(c) for c in columns)
    if options.header is not None:
        header, how = options.header, ("--header" if options.header else "")
    elif named:
        header, how = True, "implied by the --columns names"
    else:
        src, dst = (int(c) for c in columns[:2]) if columns else (0, 1)
        header = max(src, dst) < len(fields) and not (
            _INT.fullmatch(fields[src]) and _INT.fullmatch(fields[dst]))
        how = "detected"
    names = [_name(f) for f in fields] if header else None
    ncols = len(fields)
    if columns is None:
        if ncols < 2:
            raise GraphFormatError(
                path, f"expected 2 or 3 fields (src, dst [, weight]) separated by "
                f"{SEPARATOR_NAMES[sep]}, got {_text.show(raw)}", line)
        if ncols > 3:
            raise GraphFormatError(
                path, f"{ncols} fields in {_text.show(raw)}: say which columns are src, dst [and "
                "weight] with --columns (header names or 0-based indices)", line)
        picked = list(range(ncols))
    else:
        picked = [_column(path, spec, names, fields, raw, line) for spec in columns]
        if len(set(picked)) != len(picked):
            raise GraphFormatError(path, f"--columns {','.join(columns)} names column "
                                   f"{_label(names, max(picked, key=picked.count))} twice", line)
    notes = []
    if header:
        notes.append(f"header row {_text.show(raw)} " + (f"({how})" if how != "detected" else how))
    else:
        notes.append("no header row")
    labels = [_label(names, c) for c in picked]
    notes.append("columns " + ",".join(labels[:2]) + (f",{labels[2]} (weight)" if len(labels) > 2 else ""))
    body, body_line = (after, line + 1) if header else (0, 1)
    return _Layout(sep, line, min(body, len(data)), body_line, ncols, picked[0], picked[1],
                   picked[2] if len(picked) > 2 else None, tuple(notes))


def _label(names: list[str] | None, column: int) -> str:
    """A column as notes and messages name it: its header name, else its index."""
    return names[column] if names is not None else str(column)


def _column(path, spec: str, names: list[str] | None, fields: list[str], raw: bytes, line: int) -> int:
    """The index of the column `spec` names: a header name, else a 0-based index."""
    if names is not None and spec in names:
        if names.count(spec) > 1:
            raise GraphFormatError(path, f"column name {spec!r} appears {names.count(spec)} times "
                                   f"in the header row {_text.show(raw)}; give its 0-based index", line)
        return names.index(spec)
    if _INDEX.fullmatch(spec):
        index = int(spec)
        if index >= len(fields):
            raise GraphFormatError(path, f"--columns: no column {index} in {_text.show(raw)} "
                                   f"({len(fields)} fields, indices 0..{len(fields) - 1})", line)
        return index
    if names is None:
        raise GraphFormatError(path, f"--columns {spec!r} is a column name, but --no-header says "
                               "the file has no header row; give 0-based column indices", line)
    raise GraphFormatError(path, f"--columns: no column {spec!r} in the header row "
                           f"{_text.show(raw)} (columns: {', '.join(names)})", line)


# --- the fast path: pandas, used only where it certainly agrees with the slow path ---------------

def _fast(data: bytes, layout: _Layout):
    """(src, dst, weights) from pandas' C parser, or None where the slow path must decide."""
    import pandas as pd  # here: pandas takes a moment to import and most runs read no CSV

    body = data[layout.body:]
    plain = _ID_BYTES if layout.weight is None else bytes(set(_ID_BYTES) & set(_WEIGHT_BYTES))
    foreign = body.translate(None, plain + layout.sep.encode() + b"\n")  # bytes translate: fast
    if foreign.translate(None, _SAFE):
        return None
    returns = body.count(b"\r")
    if returns and returns != body.count(b"\r\n"):
        return None
    if b"#" in foreign or b"%" in foreign:
        body = _COMMENT_LINE.sub(b"", body)  # comment lines become blank lines: pandas skips them
    dtypes = {layout.src: np.int64, layout.dst: np.int64}
    if layout.weight is not None:
        dtypes[layout.weight] = np.float64
    precision = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            frame = pd.read_csv(
                io.BytesIO(body), sep=layout.sep, header=None, names=list(range(layout.ncols)),
                usecols=layout.used, index_col=False, dtype=dtypes, engine="c",
                quoting=csvlib.QUOTE_NONE, encoding="latin-1", skip_blank_lines=True, **precision,
            )
    except Exception:  # noqa: BLE001 -- whatever pandas refuses, the slow path words (or reads)
        return None
    src = frame[layout.src].to_numpy(dtype=np.int64)
    dst = frame[layout.dst].to_numpy(dtype=np.int64)
    if src.size == 0 or min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) > MAX_ID:
        return None
    weights = None
    if layout.weight is not None:
        weights = frame[layout.weight].to_numpy(dtype=np.float64)
        if not np.isfinite(weights).all():
            return None
    if not _fields_certain(np.frombuffer(body, dtype=np.uint8), set(foreign), layout):
        return None
    return src, dst, weights


def _fields_certain(buf: np.ndarray, foreign: set[int], layout: _Layout) -> bool:
    """Whether every line has 0 (blank) or the layout's separators, and every id and weight field
    holds only bytes on which pandas and the slow path agree (see the module docstring).

    `foreign` holds the byte values outside the digits, signs and separators (and, without a
    weight column, blanks); where there are any, the field each one stands in is worked out.
    """
    sep = ord(layout.sep)
    structural = np.flatnonzero((buf == sep) | (buf == 10))
    is_newline = buf[structural] == 10
    newlines = np.flatnonzero(is_newline)
    per_line = np.diff(newlines, prepend=-1) - 1
    last = structural.size - 1 - (newlines[-1] if newlines.size else -1)
    per_line = np.append(per_line, last)
    if not np.all((per_line == 0) | (per_line == layout.ncols - 1)):
        return False
    if not foreign:
        return True
    if len(foreign) <= 8:  # a few comparisons beat a table lookup per byte
        mask = np.zeros(buf.size, dtype=np.bool_)
        for value in foreign:
            mask |= buf == value
    else:
        table = np.zeros(256, dtype=np.bool_)
        table[list(foreign)] = True
        mask = table[buf]
    at = np.flatnonzero(mask)
    if (per_line[np.searchsorted(structural[newlines], at)] == 0).any():
        return False  # a line without separators is blank only if made of blanks
    before = np.searchsorted(structural, at) - 1  # the last separator or newline before it
    line_start = np.maximum.accumulate(np.where(is_newline, np.arange(structural.size), -1))
    field = np.where(before >= 0, before - line_start[np.maximum(before, 0)], 0)
    values = buf[at]
    ids = (field == layout.src) | (field == layout.dst)
    if not _allowed(values[ids], _ID_BYTES):
        return False
    if layout.weight is not None and not _allowed(values[field == layout.weight], _WEIGHT_BYTES):
        return False
    return True


def _allowed(values: np.ndarray, allowed: bytes) -> bool:
    """Whether every byte in `values` is one of `allowed`."""
    return not values.tobytes().translate(None, allowed)


# --- the slow path: the definition of a valid file ----------------------------------------------

def _slow(path, data: bytes, layout: _Layout):
    """(src, dst, weights) read line by line with the csv module, or the first bad line's error."""
    src, dst, weights = [], [], []
    with io.BytesIO(data) as stream:
        stream.seek(layout.body)
        for number, raw in enumerate(stream, layout.body_line):
            stripped = raw.strip()
            if not stripped or stripped.startswith(COMMENTS):
                continue
            fields = _fields(path, raw, layout.sep, number)
            if len(fields) != layout.ncols:
                raise GraphFormatError(
                    path, f"expected {layout.ncols} fields separated by "
                    f"{SEPARATOR_NAMES[layout.sep]} (as on line {layout.first_line}), got "
                    f"{len(fields)} in {_text.show(raw)}", number)
            src.append(_vertex(path, fields[layout.src], raw, number))
            dst.append(_vertex(path, fields[layout.dst], raw, number))
            if layout.weight is not None:
                weights.append(_weight(path, fields[layout.weight], raw, number))
    return (np.array(src, dtype=np.int64), np.array(dst, dtype=np.int64),
            np.array(weights, dtype=np.float64) if layout.weight is not None else None)


def _vertex(path, field: str, raw: bytes, line: int) -> int:
    if not _INT.fullmatch(field):
        raise GraphFormatError(path, f"vertex id {_show(field)} is not an integer in "
                               f"{_text.show(raw)}", line)
    value = int(field)
    if value < 0:
        raise GraphFormatError(path, f"negative vertex id {field.strip()}", line)
    if value > MAX_ID:
        raise GraphFormatError(path, f"vertex id {field.strip()} does not fit 32-bit ids (at most "
                               f"{MAX_ID})", line)
    return value


def _weight(path, field: str, raw: bytes, line: int) -> float:
    if _NON_FINITE.fullmatch(field):
        raise GraphFormatError(path, f"weight {_show(field)} is not a finite number (edge weights "
                               "must be)", line)
    if not _NUMBER.fullmatch(field):
        raise GraphFormatError(path, f"weight {_show(field)} is not a number in {_text.show(raw)}",
                               line)
    value = float(field)
    if not np.isfinite(value):
        raise GraphFormatError(path, f"weight {_show(field)} is not finite (beyond the float64 "
                               "range)", line)
    return value


def _show(field: str, limit: int = 60) -> str:
    """A field as it appears in an error message: its bytes as UTF-8, undecodable ones escaped,
    blanks kept (a field ' 1\x0b' is not the id 1)."""
    out = repr(field.encode("latin-1").decode("utf-8", "backslashreplace"))
    return out if len(out) <= limit else out[: limit - 4] + "...'"
