"""Cache models of the operator machine (seed 003 §6.4): fast kernels against slow references.

The references below are deliberately naive: an OrderedDict LRU, a per-set OrderedDict sectored
cache, and stack distances counted from a last-access table. pycachesim, an independent C cache
simulator, checks the set-associative model's hit and miss counts.
"""
from collections import OrderedDict

import numpy as np
import pytest
from cachesim import Cache, CacheSimulator, MainMemory
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine.cache import (
    SetAssocGeometry,
    SetAssocState,
    lru_hits,
    miss_ratio_curve,
    setassoc_hits,
    stack_distances,
)
from opmachine.cache.lru_list import LruList, lru_access, lru_drop, lru_list_hits
from simdmodel.errors import InputError


# ---------------------------------------------------------------- naive references
def naive_stack_distances(ids):
    """Distinct ids whose latest access lies strictly between this access and the previous one
    to the same id; -1 for a first access."""
    last = {}
    out = []
    for t, x in enumerate(ids):
        if x in last:
            p = last[x]
            out.append(sum(1 for y, q in last.items() if y != x and q > p))
        else:
            out.append(-1)
        last[x] = t
    return np.array(out, dtype=np.int64)


def naive_stack_distances_numpy(ids, universe):
    """Same definition as above, one vectorised count per access (for longer traces)."""
    last = np.full(universe, -1, dtype=np.int64)
    out = np.empty(len(ids), dtype=np.int64)
    for t, x in enumerate(ids):
        p = last[x]
        out[t] = -1 if p < 0 else np.count_nonzero(last > p)
        last[x] = t
    return out


def naive_lru_hits(ids, capacity):
    cache = OrderedDict()
    hits = []
    for x in ids:
        if x in cache:
            cache.move_to_end(x)
            hits.append(True)
        else:
            hits.append(False)
            cache[x] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
    return np.array(hits, dtype=bool)


def naive_setassoc(sector_ids, sets, ways, sectors_per_line):
    """Per set an OrderedDict line -> set of valid sectors, least recently used first."""
    cache = [OrderedDict() for _ in range(sets)]
    sector_hit, line_hit = [], []
    for sector in sector_ids:
        line, offset = divmod(int(sector), sectors_per_line)
        lines = cache[line % sets]
        if line in lines:
            lines.move_to_end(line)
            line_hit.append(True)
            sector_hit.append(offset in lines[line])
            lines[line].add(offset)
        else:
            line_hit.append(False)
            sector_hit.append(False)
            if len(lines) == ways:
                lines.popitem(last=False)
            lines[line] = {offset}
    return np.array(sector_hit, dtype=bool), np.array(line_hit, dtype=bool)


def pycachesim_counts(byte_addresses, sets, ways, line_bytes):
    """(hits, misses, loads) of pycachesim's LRU cache fed one 1-byte load per address."""
    memory = MainMemory()
    cache = Cache("L2", sets, ways, line_bytes, "LRU")
    memory.load_to(cache)
    memory.store_from(cache)
    simulator = CacheSimulator(cache, memory)
    simulator.load([int(a) for a in byte_addresses], length=1)
    stats = cache.stats()
    return stats["HIT_count"], stats["MISS_count"], stats["LOAD_count"]


def mixed_trace(n, universe, seed):
    """Sequential runs mixed with skewed random ids, like coalesced BFS sector streams."""
    rng = np.random.default_rng(seed)
    out = np.empty(n, dtype=np.int64)
    i = 0
    while i < n:
        length = min(n - i, int(rng.integers(1, 40)))
        if rng.random() < 0.5:
            out[i:i + length] = (int(rng.integers(0, universe)) + np.arange(length)) % universe
        else:
            out[i:i + length] = (universe * rng.random(length) ** 3).astype(np.int64)
        i += length
    return out


traces = st.integers(1, 100).flatmap(
    lambda universe: st.tuples(st.just(universe),
                               st.lists(st.integers(0, universe - 1), max_size=300)))


# ---------------------------------------------------------------- stack distances / LRU
def test_stack_distances_hand_example():
    ids = [0, 1, 2, 0, 1, 1, 3, 0]
    # t0..t2: first accesses -> -1. t3 (id 0, previous t0): ids 1, 2 since -> 2.
    # t4 (id 1, previous t1): ids 2, 0 -> 2.  t5 (id 1, previous t4): none -> 0.
    # t6: id 3 is new -> -1.  t7 (id 0, previous t3): ids 1 (twice) and 3 -> 2.
    expected = [-1, -1, -1, 2, 2, 0, -1, 2]
    assert stack_distances(np.array(ids), 4).tolist() == expected
    # hit iff 0 <= d < capacity: capacity 2 hits only t5; capacity 3 hits t3, t4, t5, t7.
    assert np.flatnonzero(lru_hits(ids, 4, 2)).tolist() == [5]
    assert np.flatnonzero(lru_hits(ids, 4, 3)).tolist() == [3, 4, 5, 7]
    # 8 accesses, 4 cold. C=1: 1 hit (d=0) -> 7/8; C=2: same; C=3: 4 hits -> 4/8.
    assert miss_ratio_curve(stack_distances(ids, 4), [1, 2, 3]).tolist() == [0.875, 0.875, 0.5]


@settings(max_examples=150, deadline=None)
@given(traces)
def test_stack_distances_match_naive(trace):
    universe, ids = trace
    assert stack_distances(np.array(ids, dtype=np.int64), universe).tolist() == \
        naive_stack_distances(ids).tolist()


@pytest.mark.parametrize("hits", [lru_hits, lru_list_hits], ids=["stack distances", "recency list"])
@settings(max_examples=120, deadline=None)
@given(trace=traces, capacity=st.integers(1, 64))
def test_lru_hits_match_ordered_dict(hits, trace, capacity):
    universe, ids = trace
    assert hits(np.array(ids, dtype=np.int64), universe, capacity).tolist() == naive_lru_hits(ids, capacity).tolist()


def test_lru_list_by_hand_and_refuses_no_capacity():
    # capacity 2: 0, 1 miss; 0 hits; 2 evicts 1 (least recent); 1 misses and evicts 0; 2 hits
    assert lru_list_hits(np.array([0, 1, 0, 2, 1, 2]), 3, 2).tolist() == [False, False, True, False, False, True]
    assert lru_list_hits(np.array([4, 4, 5, 4]), 6, 1).tolist() == [False, True, False, False]
    with pytest.raises(InputError, match="capacity must be at least 1"):
        lru_list_hits(np.array([1]), 2, 0)


def test_a_dropped_block_leaves_an_empty_node_the_next_miss_takes_first():
    cache = LruList(6, 2)
    assert [lru_access(b, *cache.arrays) for b in (0, 1)] == [False, False]
    lru_drop(1, *cache.arrays)  # 1, the most recent, is gone; 0 stays
    lru_drop(5, *cache.arrays)  # not held: nothing
    assert [lru_access(b, *cache.arrays) for b in (2, 0, 2, 1)] == [False, True, True, False]
    assert lru_access(0, *cache.arrays) is False  # 1's return evicted 0, the least recent after the empty node


@pytest.mark.parametrize("universe, n, seed", [(700, 6000, 1), (3000, 20000, 2), (40, 5000, 3)])
def test_stack_distances_across_blocks_and_compactions(universe, n, seed):
    # 2 * universe slots: several 512-slot Fenwick blocks and many compactions per trace
    ids = mixed_trace(n, universe, seed)
    assert (stack_distances(ids, universe) == naive_stack_distances_numpy(ids, universe)).all()


def test_stack_distances_accept_any_integer_dtype():
    ids = [3, 1, 3, 2, 1]
    expected = stack_distances(np.array(ids, dtype=np.int64), 4)
    for dtype in (np.int8, np.uint8, np.int32, np.uint32, np.uint64):
        assert (stack_distances(np.array(ids, dtype=dtype), 4) == expected).all()


def test_empty_traces():
    assert stack_distances(np.array([], dtype=np.int64), 0).shape == (0,)
    assert stack_distances([], 10).shape == (0,)
    assert miss_ratio_curve(np.array([], dtype=np.int64), [1, 8]).tolist() == [0.0, 0.0]
    sector_hit, line_hit = setassoc_hits([], SetAssocGeometry(4, 2, 128, 32))
    assert sector_hit.shape == line_hit.shape == (0,)


@settings(max_examples=60, deadline=None)
@given(traces, st.lists(st.integers(1, 120), min_size=1, max_size=8))
def test_miss_ratio_curve_equals_lru_hits(trace, capacities):
    universe, ids = trace
    ids = np.array(ids, dtype=np.int64)
    curve = miss_ratio_curve(stack_distances(ids, universe), capacities)
    for capacity, ratio in zip(capacities, curve):
        expected = 1.0 - lru_hits(ids, universe, capacity).mean() if ids.size else 0.0
        assert ratio == pytest.approx(expected, abs=1e-12)
    ordered = miss_ratio_curve(stack_distances(ids, universe), sorted(capacities))
    assert (np.diff(ordered) <= 0).all()  # a bigger LRU cache never misses more (inclusion)


def test_miss_ratio_curve_keeps_shape():
    distances = np.array([-1, 0, 5, 2])
    assert miss_ratio_curve(distances, 3).shape == ()
    # C=3: hits are d in {0, 2} -> 2 of 4 miss
    assert float(miss_ratio_curve(distances, 3)) == 0.5
    assert miss_ratio_curve(distances, [[1, 6]]).tolist() == [[0.75, 0.25]]


def test_miss_ratio_curve_huge_capacity_and_all_cold():
    distances = stack_distances([0, 1, 0, 2, 1], 3)  # [-1, -1, 1, -1, 2]
    # C = 10**12 holds everything: only the 3 cold misses remain -> 3/5
    assert miss_ratio_curve(distances, [2, 10**12]).tolist() == [0.8, 0.6]
    assert miss_ratio_curve(np.array([-1, -1]), [1, 5]).tolist() == [1.0, 1.0]


# ---------------------------------------------------------------- set associative
def test_setassoc_hand_example_sectors():
    # 2 sets x 1 way, 64 B lines of two 32 B sectors: line = sector // 2, set = line % 2.
    geometry = SetAssocGeometry(sets=2, ways=1, line_bytes=64, sector_bytes=32)
    sectors = [0, 1, 0, 4, 0, 2, 3]
    # 0: line 0 -> set 0, line miss.            1: line 0 resident, sector 1 invalid: line hit only.
    # 0: both hit.                              4: line 2 -> set 0, miss, evicts line 0.
    # 0: line 0 again, miss (evicts line 2).    2: line 1 -> set 1, miss.
    # 3: line 1 resident, sector 1 invalid: line hit only.
    sector_hit, line_hit = setassoc_hits(np.array(sectors), geometry)
    assert sector_hit.tolist() == [False, False, True, False, False, False, False]
    assert line_hit.tolist() == [False, True, True, False, False, False, True]


def test_setassoc_hand_example_lru_not_fifo():
    # one set of 2 ways: 0 1 0 2 -> 2 evicts 1 (least recently used, not first in); then 1 misses
    # and evicts 0 (2 is more recent); then 0 misses. FIFO would hit the access to 1.
    sector_hit, line_hit = setassoc_hits([0, 1, 0, 2, 1, 0], SetAssocGeometry(1, 2, 32, 32))
    assert sector_hit.tolist() == [False, False, True, False, False, False]
    assert (line_hit == sector_hit).all()


geometries = st.tuples(st.integers(1, 8), st.integers(1, 20), st.sampled_from([1, 2, 3, 4, 8, 64]))


@settings(max_examples=150, deadline=None)
@given(geometries, st.lists(st.integers(0, 300), max_size=400))
def test_setassoc_matches_naive(geometry, sectors):
    sets, ways, sectors_per_line = geometry
    result = setassoc_hits(np.array(sectors, dtype=np.int64),
                           SetAssocGeometry(sets, ways, 32 * sectors_per_line, 32))
    expected = naive_setassoc(sectors, sets, ways, sectors_per_line)
    assert result[0].tolist() == expected[0].tolist()
    assert result[1].tolist() == expected[1].tolist()


@settings(max_examples=150, deadline=None)
@given(geometries, st.lists(st.lists(st.integers(0, 300), max_size=150), min_size=1, max_size=4))
def test_warm_state_continues_where_the_last_stream_left(geometry, streams):
    # A state fed streams one after another hits exactly as one cold run over their concatenation.
    sets, ways, sectors_per_line = geometry
    shape = SetAssocGeometry(sets, ways, 32 * sectors_per_line, 32)
    state = SetAssocState(shape, 301)
    pieces = [state.hits(np.array(part, dtype=np.int64)) for part in streams]
    whole = naive_setassoc([x for part in streams for x in part], sets, ways, sectors_per_line)
    assert np.concatenate([p[0] for p in pieces]).tolist() == whole[0].tolist()
    assert np.concatenate([p[1] for p in pieces]).tolist() == whole[1].tolist()


def test_warm_state_refuses_ids_outside_its_universe():
    state = SetAssocState(SetAssocGeometry(4, 2, 128, 32), 100)
    with pytest.raises(InputError, match="outside the cache state's universe of 100"):
        state.hits(np.array([5, 100]))
    with pytest.raises(InputError, match="sector_ids must be >= 0, found -1"):
        state.hits(np.array([5, -1]))


@pytest.mark.parametrize("first_line", [2**40, 2**31 - 200, 2**31 - 400])
def test_setassoc_large_ids(first_line):
    # The fast kernel needs line ids < 2**31; 2**31 - 200 + 400 lines crosses that boundary, so
    # the trace falls back to the general kernel, while 2**31 - 400 stays just below it.
    for sets, ways, sectors_per_line in [(3, 4, 4), (1, 16, 1), (7, 16, 2)]:
        sectors = mixed_trace(3000, 400 * sectors_per_line, 5) + first_line * sectors_per_line
        result = setassoc_hits(sectors, SetAssocGeometry(sets, ways, 32 * sectors_per_line, 32))
        expected = naive_setassoc(sectors, sets, ways, sectors_per_line)
        assert (result[0] == expected[0]).all() and (result[1] == expected[1]).all()


@pytest.mark.parametrize("first_line", [2 * 2**15 - 500, 2 * 2**15 - 200])
def test_setassoc_tag_width_boundary(first_line):
    # 2 sets: tag = line // 2. Lines up to 2**16 - 101 keep tags < 2**15 (int16 lanes); lines up
    # to 2**16 + 199 need int32 lanes. Both must agree with the reference.
    sectors = mixed_trace(4000, 400 * 4, 6) + first_line * 4
    result = setassoc_hits(sectors, SetAssocGeometry(2, 5, 128, 32))
    expected = naive_setassoc(sectors, 2, 5, 4)
    assert (result[0] == expected[0]).all() and (result[1] == expected[1]).all()


@settings(max_examples=60, deadline=None)
@given(traces, st.integers(1, 64))
def test_fully_associative_setassoc_equals_lru_hits(trace, capacity):
    universe, ids = trace
    ids = np.array(ids, dtype=np.int64)
    sector_hit, line_hit = setassoc_hits(ids, SetAssocGeometry(1, capacity, 32, 32))
    assert (sector_hit == lru_hits(ids, universe, capacity)).all()
    assert (line_hit == sector_hit).all()


@pytest.mark.parametrize("sets, ways, line_bytes", [
    (64, 4, 32), (3, 2, 32), (1, 16, 32), (96, 16, 32), (5, 20, 32), (768, 16, 32),
])
def test_setassoc_counts_equal_pycachesim_one_sector_lines(sets, ways, line_bytes):
    sectors = mixed_trace(60000, 20000, sets + ways)
    sector_hit, line_hit = setassoc_hits(sectors, SetAssocGeometry(sets, ways, line_bytes, 32))
    hits, misses, loads = pycachesim_counts(sectors * 32, sets, ways, line_bytes)
    assert loads == sectors.size
    assert (int(sector_hit.sum()), int((~sector_hit).sum())) == (hits, misses)
    assert (line_hit == sector_hit).all()


@pytest.mark.parametrize("sets, ways, line_bytes",
                         [(96, 16, 128), (7, 3, 64), (16, 8, 256), (4, 24, 128)])
def test_setassoc_line_hits_equal_pycachesim(sets, ways, line_bytes):
    # pycachesim has no sectors: it allocates whole lines, so a sector miss in a resident line is
    # one of its hits. Its hit count is therefore our line-hit count, not our sector-hit count.
    sectors = mixed_trace(60000, 20000, sets * ways)
    sector_hit, line_hit = setassoc_hits(sectors, SetAssocGeometry(sets, ways, line_bytes, 32))
    hits, misses, _ = pycachesim_counts(sectors * 32, sets, ways, line_bytes)
    assert (int(line_hit.sum()), int((~line_hit).sum())) == (hits, misses)
    assert sector_hit.sum() < line_hit.sum()


def test_geometry_from_capacity():
    # 1.5 MiB, 16 ways, 128 B lines: 1572864 / (16 * 128) = 768 sets of 4 sectors per line
    geometry = SetAssocGeometry.from_capacity(1572864, 16)
    assert geometry == SetAssocGeometry(768, 16, 128, 32)
    assert geometry.sectors_per_line == 4
    assert geometry.capacity_bytes == 1572864


# ---------------------------------------------------------------- user mistakes
@pytest.mark.parametrize("args", [
    (0, 4, 128, 32), (4, 0, 128, 32), (4, 4, -128, 32), (4, 4, 128, 0),
    (4, 4, 96, 64),                  # line not a multiple of the sector
    (4, 4, 4096, 32),                # 128 sectors per line: more than one valid mask holds
    (4.0, 4, 128, 32), (4, True, 128, 32),
])
def test_bad_geometry(args):
    with pytest.raises(InputError):
        SetAssocGeometry(*args)


@pytest.mark.parametrize("kwargs", [
    {"capacity_bytes": 1000000, "ways": 16},  # not divisible by 16 * 128
    {"capacity_bytes": 0, "ways": 16},
    {"capacity_bytes": 4096, "ways": -1},
    {"capacity_bytes": 4096, "ways": 4, "line_bytes": 100, "sector_bytes": 32},
])
def test_bad_capacity(kwargs):
    with pytest.raises(InputError):
        SetAssocGeometry.from_capacity(**kwargs)


def test_bad_ids_and_arguments():
    geometry = SetAssocGeometry(4, 2, 128, 32)
    with pytest.raises(InputError, match=">= 0"):
        stack_distances(np.array([1, -1]), 4)
    with pytest.raises(InputError, match="< universe"):
        stack_distances(np.array([1, 4]), 4)
    with pytest.raises(InputError):
        stack_distances(np.array([1.0, 2.0]), 4)
    with pytest.raises(InputError):
        stack_distances(np.zeros((2, 2), dtype=np.int64), 4)
    with pytest.raises(InputError):
        stack_distances(np.array([1]), -1)
    with pytest.raises(InputError):
        stack_distances(np.array([np.iinfo(np.uint64).max], dtype=np.uint64), 4)
    with pytest.raises(InputError):
        lru_hits(np.array([1]), 4, 0)
    with pytest.raises(InputError):
        setassoc_hits(np.array([3, -2]), geometry)
    with pytest.raises(InputError):
        setassoc_hits(np.array([3]), (4, 2, 128, 32))
    with pytest.raises(InputError):
        miss_ratio_curve(np.array([0, 1]), [0, 4])
    with pytest.raises(InputError):
        miss_ratio_curve(np.array([0, -2]), [4])
    with pytest.raises(InputError):
        miss_ratio_curve(np.array([0, 1]), [1.5])



@settings(max_examples=150, deadline=None)
@given(geometries, st.integers(1, 300), st.data())
def test_a_filled_state_hits_as_the_state_a_prior_stream_leaves_when_nothing_is_evicted(geometry, universe, data):
    # a cache that holds every line of the universe never evicts: after any prior stream, a stream of
    # sectors that stream touched hits on every access, as it does in a filled cache
    sets, ways, sectors_per_line = geometry
    shape = SetAssocGeometry(sets, ways, 32 * sectors_per_line, 32)
    filled, run = SetAssocState(shape, universe), SetAssocState(shape, universe)
    if not filled.holds_universe():
        assert -(-universe // sectors_per_line) > sets * ways
        with pytest.raises(ValueError, match="cannot hold every line"):
            filled.fill()
        return
    prior = data.draw(st.lists(st.integers(0, universe - 1), min_size=1, max_size=200))
    again = data.draw(st.lists(st.sampled_from(prior), max_size=200))
    run.hits(np.array(prior, dtype=np.int64))
    filled.fill()
    after_prior = run.hits(np.array(again, dtype=np.int64))
    after_fill = filled.hits(np.array(again, dtype=np.int64))
    assert after_prior[0].all() and after_fill[0].all() and after_fill[1].all()
    assert filled.hits(np.arange(universe, dtype=np.int64))[0].all()
