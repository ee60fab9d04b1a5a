"""Python-side plumbing shared by the text readers: loading (decompression included), lines, messages.

Every text reader reads the whole file into memory as bytes. The header (a few lines) is parsed
in Python with the helpers here; the body goes through that format's numba scanner in `_scan`,
which validates every token while it parses, so one pass both reads the edges and finds the first
bad line. The format module then words the error, quoting the offending line via `line_at`.
Real weights the scanner could not convert exactly on its fast path are finished here
(`resolve_slow_weights`).
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import re
import zlib
from pathlib import Path

import numpy as np

from ..errors import GraphFormatError
from ..graph import INDEX_LIMIT
from . import _scan

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"  # then the block size, a digit 1-9
XZ_MAGIC = b"\xfd7zXZ\x00"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst")
"""Suffixes a text format's suffix may be followed by; the data itself is recognised by its magic."""
_UINT_RE = re.compile(rb"\+?[0-9]+")
HEADER_LIMIT = 2**62  # header counts beyond this cannot be real and would overflow int64 (2*m)


def load_bytes(path) -> bytes:
    """The file's bytes, decompressed when they start with the gzip, bzip2, xz or zstd magic
    (whatever the suffix)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise GraphFormatError(path, f"cannot read file: {exc.strerror or exc}") from None
    data = _decompress(path, data)
    if not data or data.isspace():
        raise GraphFormatError(path, "empty file")
    return data


def _decompress(path, data: bytes) -> bytes:
    """`data` decompressed if its magic names a compression, else as it is; corrupt or truncated
    data, or anything after the last stream but another stream, is a GraphFormatError naming the
    compression (gzip.decompress is that strict; bz2.decompress and lzma.decompress would ignore
    trailing garbage, and zstandard's readers a truncated frame)."""
    if data[:2] == GZIP_MAGIC:
        kind, decompress = "gzip", gzip.decompress
    elif data[:3] == BZIP2_MAGIC and len(data) > 3 and 0x31 <= data[3] <= 0x39:
        kind, decompress = "bzip2", lambda d: _streams(d, bz2.BZ2Decompressor)
    elif data[:6] == XZ_MAGIC:
        kind, decompress = "xz", lambda d: _streams(d, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ),
                                                   padding=b"\0")
    elif data[:4] == ZSTD_MAGIC:
        kind, decompress = "zstd", _zstd_decompress
    else:
        return data
    try:
        return decompress(data)
    except ImportError:
        raise GraphFormatError(path, "zstd-compressed data needs the zstandard package "
                               "(pip install zstandard)") from None
    except (OSError, EOFError, ValueError, zlib.error, lzma.LZMAError) as exc:
        raise GraphFormatError(path, f"corrupt {kind} data: {exc}") from None


def _streams(data: bytes, decompressor, padding: bytes = b"") -> bytes:
    """Every stream of `data`, one `decompressor()` each; EOFError for a truncated one. `padding`
    bytes between and after streams are skipped (xz's stream padding is zero bytes)."""
    parts = []
    while data:
        stream = decompressor()
        parts.append(stream.decompress(data))
        if not stream.eof:
            raise EOFError("the data ends inside a stream (truncated file?)")
        data = stream.unused_data.lstrip(padding) if padding else stream.unused_data
    return b"".join(parts)


def _zstd_decompress(data: bytes) -> bytes:
    """All zstd frames of `data` (ZstdError raised as ValueError)."""
    import zstandard  # a dependency, imported on first use: most graphs are not zstd-compressed

    try:
        return _streams(data, lambda: zstandard.ZstdDecompressor().decompressobj())
    except zstandard.ZstdError as exc:
        raise ValueError(str(exc)) from None


def split_compression(name: str) -> tuple[str, str]:
    """`name` without one compression suffix (case-insensitive), and that suffix ('' if none):
    `web.mtx.xz` -> (`web.mtx`, `.xz`)."""
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def format_suffix(path) -> str:
    """The lower-case format suffix of `path` after any compression suffix: `a.CSV.bz2` -> `.csv`."""
    return Path(split_compression(Path(path).name)[0]).suffix.lower()


def as_buffer(data: bytes) -> np.ndarray:
    """Zero-copy uint8 view of `data` for the numba scanners in `_scan`."""
    return np.frombuffer(data, dtype=np.uint8)


def next_line(data: bytes, pos: int) -> tuple[bytes, int]:
    """The line starting at `pos` (without its newline) and the position after it."""
    end = data.find(b"\n", pos)
    if end < 0:
        end = len(data)
    return data[pos:end], end + 1


def next_content_line(data: bytes, pos: int, line: int,
                      comment: bytes | tuple[bytes, ...]) -> tuple[bytes | None, int, int]:
    """Skip blank lines and lines starting with `comment` (or any of a tuple of them) from `pos`
    (1-based `line`).

    Returns (the first other line, stripped; the position after it; its line number), or
    (None, end of data, the line number past the end) when there is none.
    """
    while pos < len(data):
        text, after = next_line(data, pos)
        stripped = text.strip()
        if stripped and not stripped.startswith(comment):
            return stripped, after, line
        pos, line = after, line + 1
    return None, len(data), line


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
        raise GraphFormatError(
            path, f"{what} must be a non-negative integer, got {show(token)}", line
        )
    value = int(token)
    if value > HEADER_LIMIT:
        raise GraphFormatError(path, f"{what} {value} is too large (at most {HEADER_LIMIT})", line)
    return value


def check_vertex_count(path, n: int, line: int | None) -> None:
    """Vertex ids are stored as int32, so n may not exceed INDEX_LIMIT."""
    if n > INDEX_LIMIT:
        raise GraphFormatError(
            path, f"{n} vertices do not fit 32-bit vertex ids (at most {INDEX_LIMIT})", line
        )


def stem_name(path) -> str:
    """File name without a compression suffix and the format suffix: `web.mtx.gz` -> `web`,
    `musae_deezer_HU_edges.csv.zst` -> `musae_deezer_HU_edges`."""
    return Path(split_compression(Path(path).name)[0]).stem


def capacity(data: bytes, pos: int, declared: int, per_line: bool = True) -> int:
    """Entries to allocate: what the header declares, capped by what the rest of the file can hold.

    With `per_line` each entry takes a line; otherwise each takes a token (at least 2 bytes, the
    last one 1). The cap keeps a header that declares 10**15 entries from allocating them.
    """
    if per_line:
        room = data.count(b"\n", pos) + 1
    else:
        room = (len(data) - pos + 1) // 2
    return max(0, min(declared, room))


def take(array: np.ndarray, count: int) -> np.ndarray:
    """The first `count` parsed entries; a scanner never counts more than it stored on success."""
    if count > array.size:
        raise RuntimeError(f"reader bug: {count} entries counted but only {array.size} stored")
    return array[:count]


def line_number(data: bytes, offset: int) -> int:
    """1-based number of the line holding byte `offset`."""
    return data.count(b"\n", 0, offset) + 1


def resolve_slow_weights(path, data: bytes, weights: np.ndarray, body: int, comments: bytes,
                         nslow: int, what: str) -> None:
    """Convert the real weights the scanner left to the slow path exactly, into `weights`.

    `body` is where the scanner started and `comments` the one or two bytes that open its comment
    lines. The tokens go through numpy's string-to-float cast (correctly rounded, like Python's
    float); one that overflows to infinity is a GraphFormatError at its line. `weights` may be
    empty (a file read without weights): then the tokens are only checked.
    """
    if nslow == 0:
        return
    buf = as_buffer(data)
    at, starts = _scan.slow_weight_tokens(buf, body, comments[0], comments[-1], nslow)
    packed = _scan.pack_tokens(buf, starts)
    values = packed.view(f"S{packed.shape[1]}").ravel().astype(np.float64)
    finite = np.isfinite(values)
    if not finite.all():
        k = int(np.argmin(finite))
        start = int(starts[k])
        token = next_line(data, start)[0].split()[0]
        raise GraphFormatError(
            path, f"{what} {show(token)} is not finite (beyond the float64 range)",
            line_number(data, start),
        )
    inside = at < weights.size
    weights[at[inside]] = values[inside]
