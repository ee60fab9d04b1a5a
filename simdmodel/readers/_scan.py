"""All numba code of the text readers: byte-level helpers and one body scanner per format.

Kept in one module on purpose: numba's on-disk cache (`cache=True`) revalidates a function only
against its own source file, so a scanner cached in another module would keep a stale copy of an
edited helper. With everything here, any edit invalidates every cached scanner together.

Each scanner takes the file as a `uint8` buffer and the byte offset and line number where its
body starts, validates every token while it parses, and returns the parsed ids plus an error
(code, line number, line start offset, token index); the format module words the message.
Entries beyond the allocated capacity are counted, never written.

Weights: integer weights are parsed exactly (`parse_int`, the whole int64 range). Real weights go
through `parse_number`, which is exact where a single IEEE operation is (Clinger's fast path: at
most 2**53 for the significant digits, a power of ten up to 1e22, so one correctly rounded
multiply or divide); any other token is a "slow" one: the scanner only counts them (no array
grows inside a hot loop: that alone slowed the SNAP scanner by a fifth), and when there are any,
`slow_weight_tokens` finds them in a second walk and `_text.resolve_slow_weights` converts them
exactly with numpy. A weight array is allocated only when the first data line has a weight (and a
SNAP file that turns out mixed drops it).
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
_INT64_TENTH = 922_337_203_685_477_580  # int64 max // 10; int64 max ends in 7
_BIG = 100_000_000_000_000_000  # 1e17: below this, ten times the value plus a digit fits int64


@numba.njit(cache=True, nogil=True)
def is_space(c):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


@numba.njit(cache=True, nogil=True)
def line_end(buf, pos):
    """Index of the newline ending the line that starts at `pos` (or len(buf))."""
    size = buf.size
    while pos < size and buf[pos] != 10:
        pos += 1
    return pos


@numba.njit(cache=True, nogil=True)
def skip_space(buf, pos, end):
    while pos < end and is_space(buf[pos]):
        pos += 1
    return pos


@numba.njit(cache=True, nogil=True)
def token_end(buf, pos, end):
    while pos < end and not is_space(buf[pos]):
        pos += 1
    return pos


@numba.njit(cache=True, nogil=True)
def parse_int(buf, start, end):
    """(status, value) of the decimal integer buf[start:end]: INT_OK, INT_BAD or INT_BIG (outside
    -(2**63 - 1)..2**63 - 1)."""
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
        if value < _INT64_TENTH or (value == _INT64_TENTH and digit <= 7):
            value = value * 10 + digit
        else:
            big = True
        i += 1
    if big:
        return INT_BIG, np.int64(0)
    if negative:
        value = -value
    return INT_OK, value


@numba.njit(cache=True, nogil=True)
def _lower(c):
    if 65 <= c <= 90:
        return np.int64(c) + 32
    return np.int64(c)


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
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


NUM_OK, NUM_BAD, NUM_SLOW, NUM_NONFINITE = range(4)
_POW10 = np.array([float(10**k) for k in range(23)])  # each exactly representable
_EXACT = 2**53  # integers up to this are exact doubles
_EXP_CAP = 100_000  # a decimal exponent beyond this is certainly 0 or inf: left to the slow path


@numba.njit(cache=True, nogil=True)
def parse_number(buf, start, end):
    """(status, value) of buf[start:end] read as `is_number` reads it.

    NUM_OK with the correctly rounded double where Clinger's fast path applies (significant digits
    at most 2**53 after dropping trailing zeros, decimal exponent within what one exact power of
    ten can carry); NUM_SLOW for any other valid number (the caller converts it exactly);
    NUM_NONFINITE for nan and inf; NUM_BAD for anything `is_number` rejects.
    """
    i = start
    negative = False
    if buf[i] == 43 or buf[i] == 45:
        negative = buf[i] == 45
        i += 1
    if i == end:
        return NUM_BAD, 0.0
    if _is_word(buf, i, end, _NAN) or _is_word(buf, i, end, _INF) or _is_word(buf, i, end, _INFINITY):
        return NUM_NONFINITE, 0.0
    mantissa = np.int64(0)
    scale = np.int64(0)  # value = mantissa * 10**(scale + exponent)
    slow = False
    digits = 0
    while i < end and 48 <= buf[i] <= 57:
        if mantissa < _BIG:
            mantissa = mantissa * 10 + (np.int64(buf[i]) - 48)
        else:
            slow = True
        i += 1
        digits += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            if mantissa < _BIG:
                mantissa = mantissa * 10 + (np.int64(buf[i]) - 48)
                scale -= 1
            else:
                slow = True
            i += 1
            digits += 1
    if digits == 0:
        return NUM_BAD, 0.0
    exponent = np.int64(0)
    if i < end and (buf[i] == 101 or buf[i] == 69):
        i += 1
        exp_negative = False
        if i < end and (buf[i] == 43 or buf[i] == 45):
            exp_negative = buf[i] == 45
            i += 1
        exp_digits = 0
        while i < end and 48 <= buf[i] <= 57:
            if exponent < _EXP_CAP:
                exponent = exponent * 10 + (np.int64(buf[i]) - 48)
            else:
                slow = True
            i += 1
            exp_digits += 1
        if exp_digits == 0:
            return NUM_BAD, 0.0
        if exp_negative:
            exponent = -exponent
    if i != end:
        return NUM_BAD, 0.0
    if slow:
        return NUM_SLOW, 0.0
    if mantissa == 0:
        return NUM_OK, -0.0 if negative else 0.0
    while mantissa % 10 == 0:
        mantissa //= 10
        scale += 1
    power = scale + exponent
    if mantissa > _EXACT:
        return NUM_SLOW, 0.0
    if 22 < power <= 22 + 15:  # move the excess power into the mantissa while that stays exact
        while power > 22 and mantissa <= _EXACT // 10:
            mantissa *= 10
            power -= 1
    if 0 <= power <= 22:
        value = np.float64(mantissa) * _POW10[power]
    elif -22 <= power < 0:
        value = np.float64(mantissa) / _POW10[-power]
    else:
        return NUM_SLOW, 0.0
    return NUM_OK, -value if negative else value


@numba.njit(cache=True, nogil=True)
def slow_weight_tokens(buf, pos, comment1, comment2, nslow):
    """Entry index and byte offset of the first `nslow` weights `parse_number` leaves to the slow
    path, found by a second walk over the body from `pos`.

    The walk mirrors the Matrix Market and SNAP scanners: every line that is neither blank nor
    starts with `comment1` or `comment2` is the next entry, and its third field is its weight.
    """
    at = np.empty(nslow, dtype=np.int64)
    starts = np.empty(nslow, dtype=np.int64)
    found = 0
    entry = 0
    size = buf.size
    while pos < size and found < nslow:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != comment1 and buf[p] != comment2:
            p = skip_space(buf, token_end(buf, p, eol), eol)
            p = skip_space(buf, token_end(buf, p, eol), eol)
            if p < eol:
                status, _ = parse_number(buf, p, token_end(buf, p, eol))
                if status == NUM_SLOW:
                    at[found] = entry
                    starts[found] = p
                    found += 1
            entry += 1
        pos = eol + 1
    return at[:found], starts[:found]


@numba.njit(cache=True, nogil=True)
def pack_tokens(buf, starts):
    """The tokens starting at `starts`, NUL-padded into the rows of a (k, width) uint8 matrix
    (a numpy `S<width>` array once viewed so)."""
    ends = np.empty(starts.size, dtype=np.int64)
    width = 1
    for k in range(starts.size):
        ends[k] = token_end(buf, starts[k], line_end(buf, starts[k]))
        width = max(width, ends[k] - starts[k])
    packed = np.zeros((starts.size, width), dtype=np.uint8)
    for k in range(starts.size):
        for j in range(ends[k] - starts[k]):
            packed[k, j] = buf[starts[k] + j]
    return packed


# --- mtx ---------------------------------------------------------------------------------------

(MTX_OK, MTX_BAD_INDEX, MTX_RANGE, MTX_BAD_VALUE, MTX_COUNT, MTX_TOO_MANY, MTX_TOO_FEW, MTX_NONFINITE,
 MTX_BIG_VALUE) = range(9)
KEEP_NONE, KEEP_INT, KEEP_REAL = range(3)


@numba.njit(cache=True, nogil=True)
def scan_mtx(buf, pos, line, nrows, ncols, nnz, cap, nvalues, int_values, keep):
    """Parse entry lines `row col [value [imag]]` after the size line.

    Returns (rows, cols, int_weights, real_weights, nslow, count, code, line, line_start, token).
    `keep` names the weight array that is filled (KEEP_INT or KEEP_REAL); the other one, or both
    with KEEP_NONE, has size 0; `nslow` real weights are left to `slow_weight_tokens`. Blank and
    `%` lines are skipped. After `nnz` entries, further entry lines are only counted (a TOO_MANY
    error at the first).
    """
    rows = np.empty(cap, dtype=np.int32)
    cols = np.empty(cap, dtype=np.int32)
    int_weights = np.empty(cap if keep == KEEP_INT else 0, dtype=np.int64)
    real_weights = np.empty(cap if keep == KEEP_REAL else 0, dtype=np.float64)
    nslow = 0
    expected = 2 + nvalues
    size = buf.size
    count = np.int64(0)
    err = MTX_OK
    err_line = np.int64(0)
    err_pos = np.int64(0)
    err_token = 0
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
                whole = np.int64(0)
                real = 0.0
                fail = MTX_OK
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
                        limit = nrows if t == 0 else ncols
                        if status == INT_BAD:
                            fail = MTX_BAD_INDEX
                        elif status != INT_OK or value < 1 or value > limit:
                            fail = MTX_RANGE
                        elif t == 0:
                            r = value
                        else:
                            c = value
                    elif int_values:
                        status, whole = parse_int(buf, q, e)
                        if status == INT_BAD:
                            fail = MTX_BAD_VALUE
                        elif status == INT_BIG and keep == KEEP_INT:
                            fail = MTX_BIG_VALUE
                    elif keep == KEEP_REAL:
                        status, real = parse_number(buf, q, e)
                        if status == NUM_BAD:
                            fail = MTX_BAD_VALUE
                        elif status == NUM_NONFINITE:
                            fail = MTX_NONFINITE
                        elif status == NUM_SLOW:
                            nslow += 1
                            real = np.nan  # a placeholder until slow_weight_tokens
                    elif not is_number(buf, q, e):
                        fail = MTX_BAD_VALUE
                    if fail != MTX_OK:
                        break
                    t += 1
                    q = e
                if fail == MTX_OK and t != expected:
                    fail = MTX_COUNT
                if fail != MTX_OK:
                    err, err_line, err_pos, err_token = fail, line, pos, t
                    break
                if count < cap:  # always true (cap >= lines left); guards the unchecked write
                    rows[count] = r - 1
                    cols[count] = c - 1
                    if keep == KEEP_INT:
                        int_weights[count] = whole
                    elif keep == KEEP_REAL:
                        real_weights[count] = real
            count += 1
        pos = eol + 1
        line += 1
    if err == MTX_OK and count < nnz:
        err = MTX_TOO_FEW
    return rows, cols, int_weights, real_weights, nslow, count, err, err_line, err_pos, err_token


# --- snap ---------------------------------------------------------------------------------------

SNAP_OK, SNAP_FIELDS, SNAP_NEGATIVE, SNAP_TOO_BIG, SNAP_WEIGHT, SNAP_NONFINITE = range(6)


@numba.njit(cache=True, nogil=True)
def _first_has_weight(buf, pos):
    """Whether the first edge line from `pos` (not blank, not a `#` or `%` comment) has three or
    more fields."""
    size = buf.size
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 35 and buf[p] != 37:
            t = 0
            while True:
                p = skip_space(buf, p, eol)
                if p == eol:
                    break
                p = token_end(buf, p, eol)
                t += 1
            return t >= 3
        pos = eol + 1
    return False


@numba.njit(cache=True, nogil=True)
def scan_snap(buf, pos, line, cap, max_id):
    """Edge lines from byte `pos` (line number `line`: after any count lines the caller read).
    Returns (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest id, code,
    line, line_start, token).

    The weight array (size `cap`) is allocated when the first edge line has a third column; the
    first line with and the first line without one are returned (0: none), so the caller can tell
    a weighted file (no line without) from a mixed one. Every third column is checked to be a
    finite number, in a mixed file too; `nslow` counts those left to `slow_weight_tokens`.
    """
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    weights = np.empty(cap if _first_has_weight(buf, pos) else 0, dtype=np.float64)
    nslow = 0
    weighted_line = np.int64(0)
    unweighted_line = np.int64(0)
    size = buf.size
    count = np.int64(0)
    largest = np.int64(-1)
    pos = np.int64(pos)
    line = np.int64(line)
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 35 and buf[p] != 37:
            t = 0
            q = p
            u = np.int64(0)
            v = np.int64(0)
            real = 0.0
            while True:
                q = skip_space(buf, q, eol)
                if q == eol:
                    break
                if t == 3:
                    return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                            SNAP_FIELDS, line, pos, t)
                e = token_end(buf, q, eol)
                if t < 2:
                    status, value = parse_int(buf, q, e)
                    if status == INT_BAD:
                        return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                                SNAP_FIELDS, line, pos, t)
                    if status == INT_OK and value < 0:
                        return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                                SNAP_NEGATIVE, line, pos, t)
                    if status != INT_OK or value > max_id:
                        return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                                SNAP_TOO_BIG, line, pos, t)
                    if t == 0:
                        u = value
                    else:
                        v = value
                else:
                    status, real = parse_number(buf, q, e)
                    if status == NUM_BAD:
                        return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                                SNAP_WEIGHT, line, pos, t)
                    if status == NUM_NONFINITE:
                        return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                                SNAP_NONFINITE, line, pos, t)
                    if status == NUM_SLOW:
                        nslow += 1
                        real = np.nan  # a placeholder until slow_weight_tokens
                t += 1
                q = e
            if t < 2:
                return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
                        SNAP_FIELDS, line, pos, t)
            if t == 3:
                if weighted_line == 0:
                    weighted_line = line
                if count < weights.size:
                    weights[count] = real
            elif unweighted_line == 0:
                unweighted_line = line
            if count < cap:  # always true (cap >= lines left); guards the unchecked write
                src[count] = u
                dst[count] = v
            largest = max(largest, max(u, v))
            count += 1
        pos = eol + 1
        line += 1
    return (src, dst, weights, nslow, weighted_line, unweighted_line, count, largest,
            SNAP_OK, line, pos, 0)


# --- dimacs ------------------------------------------------------------------------------------

(DIMACS_OK, DIMACS_BAD_INT, DIMACS_RANGE, DIMACS_COUNT, DIMACS_DUP_P, DIMACS_UNKNOWN,
 DIMACS_TOO_MANY, DIMACS_TOO_FEW, DIMACS_BIG_WEIGHT) = range(9)


@numba.njit(cache=True, nogil=True)
def _dimacs_tag(buf, p, eol):
    """The line's type letter if its first token is one letter, else 0 (any line starting c: 99)."""
    c = buf[p]
    if c == 99:
        return c
    if p + 1 == eol or is_space(buf[p + 1]):
        return c
    return 0


@numba.njit(cache=True, nogil=True)
def scan_dimacs(buf, pos, line, n, m, cap):
    """Arcs after the problem line. Returns (src, dst, weights, count, code, line, line_start, token)."""
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    weights = np.empty(cap, dtype=np.int64)
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
                    w = np.int64(0)
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
                            return src, dst, weights, count, DIMACS_BAD_INT, line, pos, t + 1
                        if t < 2:
                            if status != INT_OK or value < 1 or value > n:
                                return src, dst, weights, count, DIMACS_RANGE, line, pos, t + 1
                            if t == 0:
                                u = value
                            else:
                                v = value
                        elif status != INT_OK:
                            return src, dst, weights, count, DIMACS_BIG_WEIGHT, line, pos, t + 1
                        else:
                            w = value
                        t += 1
                        q = e
                    if t != 3:
                        return src, dst, weights, count, DIMACS_COUNT, line, pos, t
                    if count < cap:  # always true (cap >= lines left); guards the unchecked write
                        src[count] = u - 1
                        dst[count] = v - 1
                        weights[count] = w
                count += 1
            elif tag == 112:
                if err == DIMACS_OK:
                    return src, dst, weights, count, DIMACS_DUP_P, line, pos, 0
            elif err == DIMACS_OK:
                return src, dst, weights, count, DIMACS_UNKNOWN, line, pos, 0
        pos = eol + 1
        line += 1
    if err == DIMACS_OK and count < m:
        err = DIMACS_TOO_FEW
    return src, dst, weights, count, err, err_line, err_pos, 0


# --- metis -------------------------------------------------------------------------------------

(METIS_OK, METIS_BAD_INT, METIS_RANGE, METIS_COUNT, METIS_MISSING, METIS_EXTRA,
 METIS_MISMATCH, METIS_BIG_WEIGHT) = range(8)


@numba.njit(cache=True, nogil=True)
def scan_metis(buf, pos, line, n, entries, cap, head, step):
    """Vertex lines after the header. Returns (src, dst, weights, count, code, line, line_start,
    token).

    `head` numbers (size, weights) open each line; then neighbours, each followed by `step - 1`
    edge weights (kept in `weights`, of size `cap` when step is 2, else 0). Entries beyond `cap`
    are counted but not stored.
    """
    src = np.empty(cap, dtype=np.int32)
    dst = np.empty(cap, dtype=np.int32)
    weights = np.empty(cap if step == 2 else 0, dtype=np.int64)
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
                return src, dst, weights, count, METIS_BAD_INT, line, pos, t
            if t >= head and (t - head) % step == 0:
                if status != INT_OK or value < 1 or value > n:
                    return src, dst, weights, count, METIS_RANGE, line, pos, t
                if count < cap:
                    src[count] = vertex
                    dst[count] = value - 1
                count += 1
            elif step == 2 and t > head:  # the edge weight after a neighbour
                if status != INT_OK:
                    return src, dst, weights, count, METIS_BIG_WEIGHT, line, pos, t
                if count <= cap:
                    weights[count - 1] = value
            t += 1
            q = e
        if t < head or (t - head) % step != 0:
            return src, dst, weights, count, METIS_COUNT, line, pos, t
        vertex += 1
        pos = eol + 1
        line += 1
    if vertex < n:
        return src, dst, weights, count, METIS_MISSING, line, pos, vertex
    while pos < size:
        eol = line_end(buf, pos)
        p = skip_space(buf, pos, eol)
        if p < eol and buf[p] != 37:
            return src, dst, weights, count, METIS_EXTRA, line, pos, 0
        pos = eol + 1
        line += 1
    if count != entries or count > cap:
        return src, dst, weights, count, METIS_MISMATCH, line, pos, 0
    return src, dst, weights, count, METIS_OK, line, pos, 0
