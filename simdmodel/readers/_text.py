"""Shared plumbing for the text readers: loading (with gzip), line helpers and numba tokenizers.

Every text reader works on the whole file as one `uint8` buffer. The header (a few lines) is
parsed in Python; the body goes through a format-specific `@njit` scanner built from the helpers
here, which validates every token while it parses, so one pass both reads the edges and finds the
first bad line. Scanners report an error as (code, line number, line start, token index) and the
format module turns that into a `GraphFormatError` quoting the offending line.
"""
from __future__ import annotations

import gzip
import re
import zlib
from pathlib import Path

import numba
import numpy as np

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT

GZIP_MAGIC = b"\x1f\x8b"
_INT_RE = re.compile(rb"[+-]?[0-9]+")
_UINT_RE = re.compile(rb"\+?[0-9]+")


def load_bytes(path) -> bytes:
    """The file's bytes, gunzipped when they start with the gzip magic (whatever the suffix)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise GraphFormatError(path, f"cannot read file: {exc.strerror or exc}") from None
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            raise GraphFormatError(path, f"corrupt gzip data: {exc}") from None
    if not data or data.isspace():
        raise GraphFormatError(path, "empty file")
    return data


def as_buffer(data: bytes) -> np.ndarray:
    """Zero-copy uint8 view of `data` for the numba scanners."""
    return np.frombuffer(data, dtype=np.uint8)


def next_line(data: bytes, pos: int) -> tuple[bytes, int]:
    """The line starting at `pos` (without its newline) and the position after it."""
    end = data.find(b"\n", pos)
    if end < 0:
        end = len(data)
    return data[pos:end], end + 1


def show(text: bytes, limit: int = 60) -> str:
    """A line or token as it appears in an error message (undecodable bytes escaped)."""
    out = text.strip().decode("utf-8", "backslashreplace")
    if len(out) > limit:
        out = out[: limit - 3] + "..."
    return repr(out)


def line_at(data: bytes, start: int) -> bytes:
    """The line beginning at byte offset `start`."""
    return next_line(data, start)[0]


def token_at(data: bytes, start: int, index: int) -> bytes:
    """Token `index` (0-based, whitespace-separated) of the line beginning at `start`."""
    tokens = line_at(data, start).split()
    return tokens[index] if index < len(tokens) else b""


def header_int(path, token: bytes, what: str, line: int) -> int:
    """A non-negative integer from a header line, or a GraphFormatError naming the field."""
    if not _UINT_RE.fullmatch(token):
        raise GraphFormatError(path, f"{what} must be a non-negative integer, got {show(token)}", line)
    return int(token)


def check_vertex_count(path, n: int, line: int | None) -> None:
    """Vertex ids are stored as int32, so n may not exceed INDEX_LIMIT."""
    if n > INDEX_LIMIT:
        raise GraphFormatError(
            path, f"{n} vertices do not fit 32-bit vertex ids (at most {INDEX_LIMIT})", line
        )


def stem_name(path) -> str:
    """File name without `.gz` and without the format suffix: `web.mtx.gz` -> `web`."""
    name = Path(path).name
    if name.lower().endswith(".gz"):
        name = name[:-3]
    return Path(name).stem


# --- numba helpers ------------------------------------------------------------------------------
# Whitespace inside a line: space, tab, CR (so CRLF files work), VT, FF -- the set bytes.split()
# uses, so Python-side error messages tokenize lines exactly as the scanners do.

INT_OK = 0
INT_BAD = 1
INT_BIG = 2
_BIG = 100_000_000_000_000_000  # 1e17: beyond this, further digits would risk int64 overflow


@numba.njit(cache=True)
def is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@numba.njit(cache=True)
def line_end(buf, pos):
    """Index of the newline ending the line that starts at `pos` (or len(buf))."""
    size = buf.size
    while pos < size and buf[pos] != 10:
        pos += 1
    return pos


@numba.njit(cache=True)
def skip_space(buf, pos, end):
    while pos < end and is_space(buf[pos]):
        pos += 1
    return pos


@numba.njit(cache=True)
def token_end(buf, pos, end):
    while pos < end and not is_space(buf[pos]):
        pos += 1
    return pos


@numba.njit(cache=True)
def parse_int(buf, start, end):
    """(status, value) of the decimal integer buf[start:end]: INT_OK, INT_BAD or INT_BIG."""
    i = start
    negative = False
    c = buf[i]
    if c == 45 or c == 43:
        negative = c == 45
        i += 1
    if i == end:
        return INT_BAD, np.int64(0)
    value = np.int64(0)
    big = False
    while i < end:
        digit = np.int64(buf[i]) - 48
        if digit < 0 or digit > 9:
            return INT_BAD, np.int64(0)
        if value < _BIG:
            value = value * 10 + digit
        else:
            big = True
        i += 1
    if big:
        return INT_BIG, np.int64(0)
    if negative:
        value = -value
    return INT_OK, value


@numba.njit(cache=True)
def _lower(c):
    if 65 <= c <= 90:
        return np.int64(c) + 32
    return np.int64(c)


@numba.njit(cache=True)
def _is_word(buf, start, end, word):
    if end - start != word.size:
        return False
    for k in range(word.size):
        if _lower(buf[start + k]) != word[k]:
            return False
    return True


_NAN = np.frombuffer(b"nan", dtype=np.uint8).astype(np.int64)
_INF = np.frombuffer(b"inf", dtype=np.uint8).astype(np.int64)
_INFINITY = np.frombuffer(b"infinity", dtype=np.uint8).astype(np.int64)


@numba.njit(cache=True)
def is_number(buf, start, end):
    """Whether buf[start:end] is a decimal number as C's strtod reads it (also nan, inf)."""
    i = start
    if buf[i] == 43 or buf[i] == 45:
        i += 1
    if i == end:
        return False
    if _is_word(buf, i, end, _NAN) or _is_word(buf, i, end, _INF) or _is_word(buf, i, end, _INFINITY):
        return True
    digits = 0
    while i < end and 48 <= buf[i] <= 57:
        i += 1
        digits += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            i += 1
            digits += 1
    if digits == 0:
        return False
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        if i < end and (buf[i] == 43 or buf[i] == 45):
            i += 1
        exp_digits = 0
        while i < end and 48 <= buf[i] <= 57:
            i += 1
            exp_digits += 1
        if exp_digits == 0:
            return False
    return i == end


def capacity(data: bytes, pos: int, declared: int) -> int:
    """Entries to allocate: what the header declares, capped by the lines left in the file."""
    return max(0, min(declared, data.count(b"\n", pos) + 1))
