"""Sectored set-associative LRU cache, what a GPU L2 is (seed 003 §6.4; DESIGN.md).

The paper simulates a fully associative LRU cache (`stack`); this is the option with the hardware
profile's real geometry. A line of `line_bytes` holds `line_bytes / sector_bytes` sectors, each
valid on its own: a request for a sector of a resident line whose sector is not yet valid is a
sector miss but a line hit (only that sector is fetched). Reads only.
"""
from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from simdmodel.errors import InputError

from .stack import _as_int64, _check_nonnegative

_MAX_SECTORS_PER_LINE = 64  # one uint64 valid mask per way


def _positive_int(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InputError(f"cache {name} must be an integer, got {value!r}")
    if value <= 0:
        raise InputError(f"cache {name} must be positive, got {value}")
    return int(value)


@dataclass(frozen=True)
class SetAssocGeometry:
    """Geometry of a sectored set-associative cache: sets x ways lines of line_bytes each."""

    sets: int
    ways: int
    line_bytes: int
    sector_bytes: int

    def __post_init__(self):
        for name in ("sets", "ways", "line_bytes", "sector_bytes"):
            object.__setattr__(self, name, _positive_int(getattr(self, name), name))
        if self.line_bytes % self.sector_bytes:
            raise InputError(f"cache line_bytes {self.line_bytes} is not a multiple of "
                             f"sector_bytes {self.sector_bytes}")
        if self.sectors_per_line > _MAX_SECTORS_PER_LINE:
            raise InputError(f"cache lines of {self.sectors_per_line} sectors are not supported "
                             f"(at most {_MAX_SECTORS_PER_LINE})")

    @property
    def sectors_per_line(self) -> int:
        return self.line_bytes // self.sector_bytes

    @property
    def capacity_bytes(self) -> int:
        return self.sets * self.ways * self.line_bytes

    @classmethod
    def from_capacity(cls, capacity_bytes: int, ways: int, line_bytes: int = 128,
                      sector_bytes: int = 32) -> SetAssocGeometry:
        """The geometry of a cache of capacity_bytes: sets = capacity / (ways * line_bytes)."""
        capacity_bytes = _positive_int(capacity_bytes, "capacity_bytes")
        ways = _positive_int(ways, "ways")
        line_bytes = _positive_int(line_bytes, "line_bytes")
        if capacity_bytes % (ways * line_bytes):
            raise InputError(f"cache capacity {capacity_bytes} B is not divisible by "
                             f"ways x line_bytes = {ways} x {line_bytes} B")
        return cls(capacity_bytes // (ways * line_bytes), ways, line_bytes, sector_bytes)


# Per set, the ways in recency order packed as 4-bit way numbers, most recent in the low nibble.
_NIBBLES = np.uint64(0x1111111111111111)
_NIBBLE_HIGH_BITS = np.uint64(0x8888888888888888)
_LANES = 16  # ways searched by one vector compare; the packed order also holds at most 16 ways


@intrinsic
def _lanes_equal(typingctx, array, start, value):
    """Bit k set iff array[start + k] == value, for k < 16: one vector load and compare."""
    if not (isinstance(array, types.Array) and isinstance(array.dtype, types.Integer)
            and isinstance(start, types.Integer) and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        array_type, _, value_type = signature.args
        element = context.get_data_type(array_type.dtype)
        vector_type = ir.VectorType(element, _LANES)
        data = context.make_array(array_type)(context, builder, args[0]).data
        pointer = builder.bitcast(builder.gep(data, [args[1]]), vector_type.as_pointer())
        vector = builder.load(pointer, align=element.width // 8)
        scalar = context.cast(builder, args[2], value_type, array_type.dtype)
        undefined = ir.Constant(vector_type, ir.Undefined)
        lane0 = builder.insert_element(undefined, scalar, ir.IntType(32)(0))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), _LANES), [0] * _LANES)
        splat = builder.shuffle_vector(lane0, undefined, zeros)
        mask = builder.bitcast(builder.icmp_unsigned("==", vector, splat), ir.IntType(_LANES))
        return builder.zext(mask, ir.IntType(64))

    return types.uint64(array, start, value), codegen


@intrinsic
def _mulhi(typingctx, a, b):
    """High 64 bits of the 128-bit product of two uint64 (division by a precomputed reciprocal)."""
    if a != types.uint64 or b != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, wide(64)), ir.IntType(64))

    return types.uint64(types.uint64, types.uint64), codegen


@intrinsic
def _trailing_zeros(typingctx, word):
    """Trailing zero bits of a uint64 (64 for 0)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        function = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, ir.IntType(1)]), "llvm.cttz.i64")
        return builder.call(function, [args[0], ir.IntType(1)(0)])

    return types.uint64(types.uint64), codegen


@numba.njit(cache=True, nogil=True)
def _setassoc_general_njit(sector_ids, sets, ways, sectors_per_line, valid, tags, stamps, clock):
    """Any geometry. Per set: `ways` line tags (-1 = empty), a sector-valid mask and a last-use
    stamp per way (0 = never used, so empty ways are filled before any line is evicted); stamps
    continue from clock[0], which is advanced past this stream."""
    n = sector_ids.size
    sector_hit = np.zeros(n, dtype=np.bool_)
    line_hit = np.zeros(n, dtype=np.bool_)
    start = clock[0]
    one = valid.dtype.type(1)
    for i in range(n):
        sector = sector_ids[i]
        line = sector // sectors_per_line
        bit = one << valid.dtype.type(sector - line * sectors_per_line)
        base = (line % sets) * ways
        way = -1
        for w in range(base, base + ways):
            if tags[w] == line:
                way = w
                break
        if way >= 0:
            line_hit[i] = True
            if valid[way] & bit:
                sector_hit[i] = True
            else:
                valid[way] |= bit
        else:
            way = base
            oldest = stamps[base]
            for w in range(base + 1, base + ways):
                if stamps[w] < oldest:
                    oldest = stamps[w]
                    way = w
            tags[way] = line
            valid[way] = bit
        stamps[way] = start + i + 1
    clock[0] = start + n
    return sector_hit, line_hit


@numba.njit(cache=True, nogil=True, inline="always")
def small_access(sector, shift_u, sector_mask, reciprocal, sets_u, lru_shift, valid, tags, order, previous_line,
                 previous_slot):
    """One access of the small-geometry cache (see `_setassoc_small_njit`): returns (sector hit,
    line hit, line, slot); pass the returned line and slot back in as `previous_line` and
    `previous_slot` with the next access (start with all ones and 0)."""
    one = valid.dtype.type(1)
    u1 = np.uint64(1)
    u15 = np.uint64(15)
    line = np.uint64(sector) >> shift_u
    bit = one << valid.dtype.type(np.uint64(sector) & sector_mask)
    if line == previous_line:
        v = valid[previous_slot]
        valid[previous_slot] = v | bit
        return (v & bit) != 0, True, line, previous_slot
    tag = _mulhi(reciprocal, line)
    s = line - tag * sets_u
    base = s * np.uint64(_LANES)
    match = _lanes_equal(tags, base, tag)
    recency = order[s]
    hit = match != 0
    way = _trailing_zeros(match) if hit else (recency >> lru_shift) & u15
    # position of `way` in the recency order: the lowest nibble equal to it
    difference = recency ^ (way * _NIBBLES)
    zero_nibbles = (difference - _NIBBLES) & ~difference & _NIBBLE_HIGH_BITS
    position4 = (_trailing_zeros(zero_nibbles) >> np.uint64(2)) << np.uint64(2)
    # move it to the front: the nibbles before it shift up by one
    before = (u1 << position4) - u1
    order[s] = ((recency & ~(before | (u15 << position4)))
                | ((recency & before) << np.uint64(4)) | way)
    slot = base + way
    v = valid[slot]
    valid[slot] = (v | bit) if hit else bit
    tags[slot] = tag
    return hit & ((v & bit) != 0), hit, line, slot


def small_constants(geometry: SetAssocGeometry, shift: int) -> tuple:
    """`small_access`'s constants for a geometry: (shift, sector mask, reciprocal, sets, LRU shift)."""
    sets_u = np.uint64(geometry.sets)
    return (np.uint64(shift), np.uint64((1 << shift) - 1), np.uint64(0xFFFFFFFFFFFFFFFF) // sets_u + np.uint64(1),
            sets_u, np.uint64(4 * (geometry.ways - 1)))


@numba.njit(cache=True, nogil=True, _nrt=False)
def _setassoc_small_njit(sector_ids, shift_u, sector_mask, reciprocal, sets_u, lru_shift, valid, tags, order, hits):
    """The common GPU L2 case, about 5x faster than the general kernel: 2 <= sets, ways <= 16,
    a power-of-two number of sectors per line, every line id < 2**31 (the caller checks).

    Per set: 16 tag lanes (`tags`, all -1 = empty; int16 when every quotient line // sets fits,
    else int32, as the caller chooses) searched by one vector compare, and one uint64 (`order`)
    holding the ways in recency order as 4-bit nibbles, most recent in the low nibble (the initial
    order, `_identity_order`, leaves the empty ways last, so they fill before any eviction).
    The set and tag come from a multiply by a precomputed reciprocal, exact for lines < 2**32.
    Hit and miss are resolved without branches. An access to the previous access's line (the
    sectors of a sequential run) skips the lookup: that line is already its set's MRU. Indices
    are unsigned so numba emits no negative-index wraparound. Writes sector hits to hits[:n] and
    line hits to hits[n:]; no reference counting in the loop (`_nrt=False`)."""
    n = sector_ids.size
    previous_line = np.uint64(0xFFFFFFFFFFFFFFFF)
    previous_slot = np.uint64(0)
    for i in range(n):
        hits[i], hits[n + i], previous_line, previous_slot = small_access(
            sector_ids[i], shift_u, sector_mask, reciprocal, sets_u, lru_shift, valid, tags, order, previous_line,
            previous_slot)


def _valid_dtype(sectors_per_line: int):
    for dtype in (np.uint8, np.uint16, np.uint32, np.uint64):
        if sectors_per_line <= np.iinfo(dtype).bits:
            return dtype


def _identity_order(ways: int) -> np.uint64:
    """A set's recency order with way w at position w (empty ways in order, last one evicted first)."""
    return np.uint64(sum(w << (4 * w) for w in range(ways)))


class SetAssocState:
    """The contents of a sectored set-associative LRU cache, kept from one access stream to the next.

    `hits(stream)` runs a stream through the cache as it was left by the streams before it: a warm
    cache. A fresh state is an empty (cold) cache. `universe` bounds the sector ids it will see.
    `holders` (empty until `follow_partitions`) says which partitions of a partitioned L2 hold a copy of
    each sector (`opmachine.cache.partitions`); the cache passes of `opmachine.memory` keep it.
    """

    def __init__(self, geometry: SetAssocGeometry, universe: int):
        if not isinstance(geometry, SetAssocGeometry):
            raise InputError(f"geometry must be a SetAssocGeometry, got {type(geometry).__name__}")
        self.geometry = geometry
        self.universe = _positive_int(universe, "universe")
        spl = geometry.sectors_per_line
        self.shift = spl.bit_length() - 1
        top_line = (self.universe - 1) >> self.shift
        self.small = geometry.sets >= 2 and geometry.ways <= _LANES and spl == 1 << self.shift and top_line < 2**31
        if self.small:
            self.valid = np.zeros(geometry.sets * _LANES, dtype=_valid_dtype(spl))
            # int16 tags put a set's 16 lanes in half a cache line (measured about 5% faster)
            narrow = top_line // geometry.sets < 2**15
            self.tags = np.full(geometry.sets * _LANES, -1, dtype=np.int16 if narrow else np.int32)
            self.order = np.full(geometry.sets, _identity_order(geometry.ways), dtype=np.uint64)
        else:
            self.valid = np.zeros(geometry.sets * geometry.ways, dtype=_valid_dtype(spl))
            self.tags = np.full(geometry.sets * geometry.ways, -1, dtype=np.int64)
            self.stamps = np.zeros(geometry.sets * geometry.ways, dtype=np.int64)
            self.clock = np.zeros(1, dtype=np.int64)
        self.holders = np.zeros(0, dtype=np.uint8)
        self.filled = False  # `fill` made every line resident: every access hits from then on

    def follow_partitions(self) -> np.ndarray:
        """`holders`, one byte per sector of the universe (no copies yet) the first time."""
        if self.holders.size == 0:
            self.holders = np.zeros(self.universe, dtype=np.uint8)
        return self.holders

    def written(self, sector_ids: np.ndarray) -> None:
        """The sectors were written (by a kernel this model does not follow): their copies are gone."""
        if self.holders.size:
            self.holders[np.asarray(sector_ids, dtype=np.int64)] = 0

    def holds_universe(self) -> bool:
        """Whether every line of the universe fits at once (set = line % sets, so lines 0..L-1 put at
        most ceil(L / sets) in a set): then no set ever evicts a line."""
        lines = -(-self.universe // self.geometry.sectors_per_line)
        return lines <= self.geometry.sets * self.geometry.ways

    def fill(self) -> None:
        """Every line of the universe resident with every sector valid (`holds_universe` must hold): the
        state any stream leaves for the sectors it touched, when nothing is ever evicted."""
        if not self.holds_universe():
            raise ValueError("the cache cannot hold every line of its universe at once")
        g = self.geometry
        line = np.arange(-(-self.universe // g.sectors_per_line), dtype=np.int64)
        tag, s = np.divmod(line, g.sets)
        slot = s * (_LANES if self.small else g.ways) + tag  # line // sets < ways: way `tag` of its set
        self.tags[slot] = tag if self.small else line
        self.valid[slot] = np.iinfo(self.valid.dtype).max >> (self.valid.dtype.itemsize * 8 - g.sectors_per_line)
        if not self.small:
            self.stamps[slot] = self.clock[0] = 1
        self.holders[:] = 0
        self.filled = True

    def hits(self, sector_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(sector_hit, line_hit) of `sector_ids` in access order; the cache keeps what they leave."""
        sector_ids = _as_int64(sector_ids, "sector_ids")
        # the largest id read as unsigned: a negative id shows up as >= 2**63
        top = int(sector_ids.view(np.uint64).max()) if sector_ids.size else 0
        if top >= self.universe:
            _check_nonnegative(sector_ids, "sector_ids")
            raise InputError(f"sector id {top} is outside the cache state's universe of {self.universe}")
        g = self.geometry
        if self.small:
            hits = np.empty(2 * sector_ids.size, dtype=np.bool_)
            _setassoc_small_njit(sector_ids, *small_constants(g, self.shift), self.valid, self.tags, self.order, hits)
            return hits[: sector_ids.size], hits[sector_ids.size:]
        return _setassoc_general_njit(sector_ids, g.sets, g.ways, g.sectors_per_line, self.valid, self.tags,
                                      self.stamps, self.clock)


def setassoc_hits(sector_ids: np.ndarray,
                  geometry: SetAssocGeometry) -> tuple[np.ndarray, np.ndarray]:
    """Sector and line hit masks of a sectored set-associative LRU cache (seed 003 §6.4), cold.

    sector_ids: integer sector ids (>= 0) in access order. line = sector_id // sectors_per_line,
    set = line % sets. A resident line with the sector valid: sector hit. A resident line without
    it: sector miss, line hit, the sector becomes valid. A line not resident: both miss; the set's
    least recently used line is evicted and this line is allocated with only this sector valid.
    Every access makes its line the set's most recently used. Returns (sector_hit, line_hit).
    """
    if not isinstance(geometry, SetAssocGeometry):
        raise InputError(f"geometry must be a SetAssocGeometry, got {type(geometry).__name__}")
    sector_ids = _as_int64(sector_ids, "sector_ids")
    _check_nonnegative(sector_ids, "sector_ids")
    top = int(sector_ids.max()) if sector_ids.size else 0
    return SetAssocState(geometry, top + 1).hits(sector_ids)
