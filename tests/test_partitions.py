"""The L2's two partitions (`opmachine.cache.partitions`, `[l2_partitions]`): which partitions hold a
sector access by access, a load's far hit by hand through the launch pass, the section's latencies, and
the committed probe runs: the two-partition picture predicts the probe's `first` visits."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from gpu_validate import l2_probe
from opmachine.cache import SetAssocState
from opmachine.cache.partitions import home_partition, slot_partition, visit
from opmachine.critical import CriticalPathModel
from opmachine.kernels import ANI, JobTrace
from opmachine.memory import l2_geometry, simulate_launch_loads
from opmachine.profile import L2Partitions, load_profile
from simdmodel.errors import InputError

RECORDS = Path(__file__).resolve().parents[1] / "gpu_validate" / "results" / "l2-probe"


def _sector_with_home(part: int, start: int = 0) -> int:
    return next(s for s in range(start, start + 4096, 4) if home_partition(s) == part)


def _slot_of(part: int) -> int:
    return next(s for s in range(0, 4096, 8) if slot_partition(s) == part)


def test_homes_and_slots_split_in_halves():
    homes = np.array([home_partition(s) for s in range(0, 4 * 20000, 4)])
    assert set(homes.tolist()) == {0, 1} and abs(homes.mean() - 0.5) < 0.02
    assert all(home_partition(s) == home_partition(s - s % 4) for s in range(400))  # a line's sectors share it
    parts = np.array([slot_partition(s) for s in range(8 * 4000)])
    assert abs(parts.mean() - 0.5) < 0.02 and all(parts[i] == parts[i - i % 8] for i in range(800))  # a block's


def test_visit_by_hand():
    holders = np.zeros(64, dtype=np.uint8)
    mine, theirs = _sector_with_home(0), _sector_with_home(1)
    assert not visit(holders, mine, 0, False, True)  # its home partition holds it
    assert visit(holders, theirs, 0, False, True) and holders[theirs] == 1  # across, and now copied
    assert not visit(holders, theirs, 0, False, True)
    assert not visit(holders, theirs, 1, True, True) and holders[theirs] == 2  # a store from partition 1
    assert visit(holders, theirs, 0, False, True) and holders[theirs] == 3  # the copy in 0 went with it
    assert not visit(holders, mine, 1, False, False) and holders[mine] == 2  # a miss fills through partition 1


def test_a_far_hit_waits_the_far_latency():
    # one load of two sectors a launch, each from a warp slot of one partition: near 100 ns, far 190 ns
    profile = SimpleNamespace(l2_bytes=2**16, l2_model_bytes=2**16, l2_ways=16, l2_line_bytes=128, sector_bytes=32,
                              dram_block_bytes=256, row_buffers=4, physical_warps=4096,
                              l2_partitions=L2Partitions(2, (1,), (100.0,), (190.0,)))
    latency = np.zeros((3, 33))
    latency[0, 1:], latency[1:, 1:] = 100.0, 500.0
    far = np.zeros(33)
    far[1:] = 190.0
    model = CriticalPathModel(("L2H", "RBH", "RBM"), np.array([0, 1, 2]), latency, np.ones(3), 0.0, far_ns=far)
    layout = SimpleNamespace(total_sectors=4096)
    state = SetAssocState(l2_geometry(profile), 4096)
    home0, home1 = _sector_with_home(0), _sector_with_home(1)
    slot0, slot1 = _slot_of(0), _slot_of(1)

    def waited(slot, sectors):
        trace = JobTrace(np.array([ANI], np.int8), np.array([slot], np.int32), np.array([0, len(sectors)]),
                         np.array(sectors, np.int32), slot + 1)
        _, _, ((_, _, waiting, waits, _),) = simulate_launch_loads(trace, layout, profile, "setassoc", state, [model])
        return waits.sum(), int(np.flatnonzero(waiting.sum(axis=1))[0])

    assert waited(slot0, [home0, home1]) == (500.0, 2)  # both miss (a cold L2)
    assert waited(slot0, [home0, home1]) == (100.0, 0)  # hits its partition holds: home, and filled through it
    assert waited(slot1, [home1]) == (100.0, 0)  # its home
    assert waited(slot1, [home0, home1]) == (190.0, 0)  # home0 is only in partition 0
    assert waited(slot1, [home0]) == (100.0, 0)  # copied


def test_latency_interpolates_in_log2_and_holds_beyond():
    section = L2Partitions(2, (1, 4), (100.0, 120.0), (200.0, 260.0))
    near = section.latency("near", 8)
    assert near[0] == 0 and near[1] == 100 and near[2] == pytest.approx(110) and near[4] == 120 and near[8] == 120
    assert section.latency("far", 4)[2] == pytest.approx(230)


@pytest.mark.parametrize("name", ["h200", "h100"])
def test_the_shipped_sections_are_the_committed_probe_runs(name):
    record = json.loads((RECORDS / f"nvidia-{name}.json").read_text(encoding="utf-8"))
    section = l2_probe.l2_partitions(record)
    assert load_profile(name).l2_partitions == section
    assert section.provenance["command"] == record["command"] and section.groups == 2


@pytest.mark.parametrize("name", ["h200", "h100"])
def test_two_partitions_predict_the_first_visits(name):
    # a sector that one SM, any of them, read before is far for a chasing SM when its home is the other
    # partition (1/2) and the SM that read it was of the other partition too (1/2): a load of m such
    # sectors waits the far latency unless all m are near, (3/4)^m
    record = json.loads((RECORDS / f"nvidia-{name}.json").read_text(encoding="utf-8"))
    section = l2_probe.l2_partitions(record)
    first = pd.DataFrame(record["revisits"]).query("case == 'first'").groupby("lanes")["ns_per_hop"].median()
    for m, near, far in zip(section.sectors, section.near_ns, section.far_ns):
        predicted = 0.75**m * near + (1 - 0.75**m) * far
        assert predicted == pytest.approx(first[m], rel=0.05)


def test_a_record_without_homes_gives_no_partitions():
    with pytest.raises(InputError, match="no homes part"):
        l2_probe.l2_partitions({"revisits": [], "capacity": []})


def test_the_cache_state_keeps_the_copies_until_written_or_filled():
    state = SetAssocState(l2_geometry(SimpleNamespace(l2_model_bytes=2**14, l2_ways=16, l2_line_bytes=128,
                                                      sector_bytes=32)), 64)
    assert state.holders.size == 0
    state.written(np.arange(4))  # nothing followed yet: nothing to clear
    holders = state.follow_partitions()
    assert holders.size == 64 and state.follow_partitions() is holders
    holders[:] = 3
    state.written(np.array([5, 9]))
    assert holders[[5, 9]].tolist() == [0, 0] and holders[[4, 6]].tolist() == [3, 3]
    state.fill()  # every line resident, as the runs before left it: only the homes are known
    assert not holders.any()
