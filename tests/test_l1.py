"""Each SM's L1 for the coupled kernels' bitmask reads (opmachine.cache.l1): hand-worked traces, a naive
reference over random ones, and bad geometry refused."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine.cache.l1 import CACHED, DROP, NONE, PASS, l1_hits


def one_job_each(kinds, sectors, sms=None):
    """A trace of one sector a job: (job_sm, job_kind, ptr, sectors)."""
    n = len(sectors)
    return (np.zeros(n, np.int64) if sms is None else np.asarray(sms), np.asarray(kinds, np.int8),
            np.arange(n + 1), np.asarray(sectors))


def test_a_hand_worked_trace_of_two_lines():
    # sectors 0-3 are line 0, 4-7 line 1, 8-11 line 2; the L1 holds two lines
    kinds = [CACHED, CACHED, CACHED, PASS, PASS, CACHED, CACHED, CACHED, DROP, CACHED, NONE, CACHED]
    sectors = [0, 0, 1, 4, 4, 1, 8, 4, 8, 8, 0, 0]
    hits = l1_hits(*one_job_each(kinds, sectors), sms=1, lines=2)
    assert hits.tolist() == [
        False,  # line 0 allocated, sector 0 valid
        True,   # sector 0 again
        False,  # line 0 resident, sector 1 not yet: a sector miss
        False,  # a .cg read takes line 1 as it passes
        False,  # ... and never hits, though it is resident now
        True,   # line 0, sector 1: valid
        False,  # line 2 evicts the least recent, line 1
        False,  # line 1 is gone: allocated again, evicting line 0
        False,  # the SM's atomic on line 2 drops it
        False,  # so line 2 misses
        False,  # a job that does nothing at the L1
        False,  # line 0 was evicted by line 1's return
    ]


def test_each_sm_has_its_own_l1_and_the_jobs_sectors_follow_their_job():
    sms = [0, 1, 0, 1]
    hits = l1_hits(*one_job_each([CACHED] * 4, [5, 5, 5, 6], sms), sms=2, lines=4)
    assert hits.tolist() == [False, False, True, False]
    # one job of three sectors, then one that reads two of them again
    hits = l1_hits(np.zeros(2, np.int64), np.array([CACHED, CACHED], np.int8), np.array([0, 3, 5]),
                   np.array([0, 1, 9, 1, 2]), sms=1, lines=8)
    assert hits.tolist() == [False, False, False, True, False]


def naive_l1(job_sm, job_kind, ptr, sectors, sms, lines, per_line):
    """The rules read literally: per SM an OrderedDict of line -> valid sectors, least recent first, SM by SM."""
    hits = np.zeros(len(sectors), bool)
    for sm in range(sms):
        cache = OrderedDict()
        for job in np.flatnonzero(np.asarray(job_sm) == sm):
            for p in range(ptr[job], ptr[job + 1]):
                line, sector = sectors[p] // per_line, sectors[p] % per_line
                if job_kind[job] == DROP:
                    cache.pop(line, None)
                elif job_kind[job] in (CACHED, PASS):
                    if line in cache:
                        hits[p] = job_kind[job] == CACHED and sector in cache[line]
                        cache.move_to_end(line)
                        cache[line].add(sector)
                    else:
                        if len(cache) == lines:
                            cache.popitem(last=False)
                        cache[line] = {sector}
    return hits


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([NONE, CACHED, PASS, DROP]),
                          st.lists(st.integers(0, 40), max_size=5)), max_size=80),
       st.integers(1, 3), st.integers(1, 9), st.sampled_from([1, 2, 4]))
def test_random_traces_match_the_naive_rules(jobs, sms, lines, per_line):
    job_sm = np.array([min(j[0], sms - 1) for j in jobs], np.int64)
    job_kind = np.array([j[1] for j in jobs], np.int8)
    ptr = np.concatenate(([0], np.cumsum([len(j[2]) for j in jobs], dtype=np.int64)))
    sectors = np.array([s for j in jobs for s in j[2]], np.int64)
    got = l1_hits(job_sm, job_kind, ptr, sectors, sms, lines, per_line)
    assert got.tolist() == naive_l1(job_sm, job_kind, ptr, sectors, sms, lines, per_line).tolist()
    assert not got[np.repeat(job_kind != CACHED, np.diff(ptr))].any()  # only cached reads hit


@pytest.mark.parametrize("sms, lines, per_line", [(0, 4, 4), (1, 0, 4), (1, 4, 0), (1, 4, 64)])
def test_a_cache_of_no_size_is_refused(sms, lines, per_line):
    with pytest.raises(ValueError, match="an L1 needs"):
        l1_hits(*one_job_each([CACHED], [0]), sms=sms, lines=lines, sectors_per_line=per_line)
