"""All numba code of the text readers: byte-level helpers and one body scanner per format.

Kept in one module on purpose: numba's on-disk cache (`cache=True`) revalidates a function only
against its own source file, so a scanner cached in another module would keep a stale copy of an
edited helper. With everything here, any edit invalidates every cached scanner together.

Each scanner takes the file as a `uint8` buffer and the byte offset and line number where its
body starts, validates every token while it parses, and returns the parsed ids plus an error
(code, line number, line start offset, token index); the format module words the message.
Entries beyond the allocated capacity are counted, never written.
"""
from __future__ import annotations

import numba
import numpy as np

# --- helpers ------------------------------------------------------------------------------
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
    if _is_word(buf, i, end, _NAN) or _is_word(buf, i, end, _INF):
        return True
    if _is_word(buf, i, end, _INFINITY):
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


# --- mtx ---------------------------------------------------------------------------------------

MTX_OK, MTX_BAD_INDEX, MTX_RANGE, MTX_BAD_VALUE, MTX_COUNT, MTX_TOO_MANY, MTX_TOO_FEW = range(7)


@numba.njit(cache=True)
def scan_mtx(buf, pos, line, nrows, ncols, nnz, cap, nvalues, int_values):
    """Parse entry lines `row col [value [imag]]` after the size line.

    Returns (rows, cols, count, code, line, line_start, token). Blank and `%` lines are skipped.
    After `nnz` entries, further entry lines are only counted (a TOO_MANY error at the first).
    """
    rows = np.empty(cap, dtype=np.int32)
    cols = np.empty(cap, dtype=np.int32)
    expected = 2 + nvalues
    size = buf.size
    count = np.int64(0)
    err = MTX_OK
    err_line = np.int64(0)
    err_pos = np.int64(0)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 37:
            if count >= nnz:
                if err == MTX_OK:
                    err = MTX_TOO_MANY
                    err_line = line
                    err_pos = pos
            else:
                t = 0
                q = p
                r = np.int64(0)
                c = np.int64(0)
                while True:
                    q = skip_space(buf, q, eol)
                    if q == eol:
                        break
                    if t == expected:
                        t += 1
                        break
                    e = token_end(buf, q, eol)
                    if t < 2:
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return rows, cols, count, MTX_BAD_INDEX, line, pos, t
                        limit = nrows if t == 0 else ncols
                        if status != INT_OK or value < 1 or value > limit:
                            return rows, cols, count, MTX_RANGE, line, pos, t
                        if t == 0:
                            r = value
                        else:
                            c = value
                    elif int_values:
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return rows, cols, count, MTX_BAD_VALUE, line, pos, t
                    elif not is_number(buf, q, e):
                        return rows, cols, count, MTX_BAD_VALUE, line, pos, t
                    t += 1
                    q = e
                if t != expected:
                    return rows, cols, count, MTX_COUNT, line, pos, t
                if count < cap:  # always true (cap >= lines left); guards the unchecked write
                    rows[count] = r - 1
                    cols[count] = c - 1
            count += 1
        pos = eol + 1
        line += 1
    if err == MTX_OK and count < nnz:
        err = MTX_TOO_FEW
    return rows, cols, count, err, err_line, err_pos, 0


# --- snap --------------------------------------------------------------------------------------

SNAP_OK, SNAP_FIELDS, SNAP_NEGATIVE, SNAP_TOO_BIG, SNAP_WEIGHT = range(5)


@numba.njit(cache=True)
def scan_snap(buf, cap, max_id):
    """Returns (src, dst, count, largest id, code, line, line_start, token)."""
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    largest = np.int64(-1)
    pos = np.int64(0)
    line = np.int64(1)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 35 and buf[p] != 37:
            t = 0
            q = p
            u = np.int64(0)
            v = np.int64(0)
            while True:
                q = skip_space(buf, q, eol)
                if q == eol:
                    break
                if t == 3:
                    return src, dst, count, largest, SNAP_FIELDS, line, pos, t
                e = token_end(buf, q, eol)
                if t < 2:
                    status, value = parse_int(buf, q, e)
                    if status == INT_BAD:
                        return src, dst, count, largest, SNAP_FIELDS, line, pos, t
                    if status == INT_OK and value < 0:
                        return src, dst, count, largest, SNAP_NEGATIVE, line, pos, t
                    if status != INT_OK or value > max_id:
                        return src, dst, count, largest, SNAP_TOO_BIG, line, pos, t
                    if t == 0:
                        u = value
                    else:
                        v = value
                elif not is_number(buf, q, e):
                    return src, dst, count, largest, SNAP_WEIGHT, line, pos, t
                t += 1
                q = e
            if t < 2:
                return src, dst, count, largest, SNAP_FIELDS, line, pos, t
            if count < cap:  # always true (cap >= lines left); guards the unchecked write
                src[count] = u
                dst[count] = v
            largest = max(largest, max(u, v))
            count += 1
        pos = eol + 1
        line += 1
    return src, dst, count, largest, SNAP_OK, line, pos, 0


# --- dimacs ------------------------------------------------------------------------------------

(DIMACS_OK, DIMACS_BAD_INT, DIMACS_RANGE, DIMACS_COUNT, DIMACS_DUP_P, DIMACS_UNKNOWN,
 DIMACS_TOO_MANY, DIMACS_TOO_FEW) = range(8)


@numba.njit(cache=True)
def _dimacs_tag(buf, p, eol):
    """The line's type letter if its first token is one letter, else 0 (any line starting c: 99)."""
    c = buf[p]
    if c == 99:
        return c
    if p + 1 == eol or is_space(buf[p + 1]):
        return c
    return 0


@numba.njit(cache=True)
def scan_dimacs(buf, pos, line, n, m, cap):
    """Arcs after the problem line. Returns (src, dst, count, code, line, line_start, token)."""
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    err = DIMACS_OK
    err_line = np.int64(0)
    err_pos = np.int64(0)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol:
            tag = _dimacs_tag(buf, p, eol)
            if tag == 99:
                pass
            elif tag == 97:
                if count >= m:
                    if err == DIMACS_OK:
                        err = DIMACS_TOO_MANY
                        err_line = line
                        err_pos = pos
                else:
                    t = 0
                    q = p + 1
                    u = np.int64(0)
                    v = np.int64(0)
                    while True:
                        q = skip_space(buf, q, eol)
                        if q == eol:
                            break
                        if t == 3:
                            t += 1
                            break
                        e = token_end(buf, q, eol)
                        status, value = parse_int(buf, q, e)
                        if status == INT_BAD:
                            return src, dst, count, DIMACS_BAD_INT, line, pos, t + 1
                        if t < 2:
                            if status != INT_OK or value < 1 or value > n:
                                return src, dst, count, DIMACS_RANGE, line, pos, t + 1
                            if t == 0:
                                u = value
                            else:
                                v = value
                        t += 1
                        q = e
                    if t != 3:
                        return src, dst, count, DIMACS_COUNT, line, pos, t
                    if count < cap:  # always true (cap >= lines left); guards the unchecked write
                        src[count] = u - 1
                        dst[count] = v - 1
                count += 1
            elif tag == 112:
                if err == DIMACS_OK:
                    return src, dst, count, DIMACS_DUP_P, line, pos, 0
            elif err == DIMACS_OK:
                return src, dst, count, DIMACS_UNKNOWN, line, pos, 0
        pos = eol + 1
        line += 1
    if err == DIMACS_OK and count < m:
        err = DIMACS_TOO_FEW
    return src, dst, count, err, err_line, err_pos, 0


# --- metis -------------------------------------------------------------------------------------

(METIS_OK, METIS_BAD_INT, METIS_RANGE, METIS_COUNT, METIS_MISSING, METIS_EXTRA,
 METIS_MISMATCH) = range(7)


@numba.njit(cache=True)
def scan_metis(buf, pos, line, n, entries, cap, head, step):
    """Vertex lines after the header. Returns (src, dst, count, code, line, line_start, token).

    `head` numbers (size, weights) open each line; then neighbours, each followed by `step - 1`
    edge weights. Entries beyond `cap` are counted but not stored.
    """
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    size = buf.size
    count = np.int64(0)
    vertex = np.int64(0)
    while pos < size and vertex < n:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] == 37:
            pos = eol + 1
            line += 1
            continue
        t = np.int64(0)
        q = p
        while True:
            q = skip_space(buf, q, eol)
            if q == eol:
                break
            e = token_end(buf, q, eol)
            status, value = parse_int(buf, q, e)
            if status == INT_BAD:
                return src, dst, count, METIS_BAD_INT, line, pos, t
            if t >= head and (t - head) % step == 0:
                if status != INT_OK or value < 1 or value > n:
                    return src, dst, count, METIS_RANGE, line, pos, t
                if count < cap:
                    src[count] = vertex
                    dst[count] = value - 1
                count += 1
            t += 1
            q = e
        if t < head or (t - head) % step != 0:
            return src, dst, count, METIS_COUNT, line, pos, t
        vertex += 1
        pos = eol + 1
        line += 1
    if vertex < n:
        return src, dst, count, METIS_MISSING, line, pos, vertex
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 37:
            return src, dst, count, METIS_EXTRA, line, pos, 0
        pos = eol + 1
        line += 1
    if count != entries or count > cap:
        return src, dst, count, METIS_MISMATCH, line, pos, 0
    return src, dst, count, METIS_OK, line, pos, 0
