"""gpu_validate.l2_probe: its segments of the cycle (each chase fresh, `again` the same), its sizes, and
the whole run on the NumPy stand-in for CuPy (tests/fake_cupy.py)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from gpu_validate import l2_probe
from opmachine.profile import load_profile
from simdmodel.errors import InputError

from fake_cupy import PROPS, fake_cupy


def test_segment_starts_are_the_cycle_positions_each_lane_begins_at():
    order = np.array([5, 3, 0, 1, 4, 2], dtype=np.uint32)
    # lane 0 visits positions 1, 2 (sectors 3, 0), lane 1 positions 3, 4 (sectors 1, 4)
    assert l2_probe.segment_starts(order, 1, 2, 2).tolist() == [3, 1]
    assert l2_probe.segment_starts(order, 0, 1, 6).tolist() == [5]
    with pytest.raises(InputError, match="run past the cycle's 6 sectors"):
        l2_probe.segment_starts(order, 1, 1, 6)


def test_capacity_sizes_are_the_fractions_of_the_l2():
    sizes = l2_probe.capacity_sizes(60 * 2**20)
    assert sizes[0] == 60 * 2**20 // 8 // 32 and sizes[7] == 60 * 2**20 // 32 and sizes[-1] == 16 * sizes[7]
    assert len(sizes) == len(l2_probe.CAPACITY_FRACTIONS)


def test_a_run_on_the_stand_in_chases_fresh_segments_and_writes_every_launch(tmp_path, monkeypatch, capsys):
    log = []
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(log, props=dict(PROPS, name=b"NVIDIA H200", l2CacheSize=2**20)))
    monkeypatch.setattr(l2_probe, "CAPACITY_FRACTIONS", (0.25, 2.0))
    monkeypatch.setattr(l2_probe, "CAPACITY_SECTORS", 64)
    monkeypatch.setattr(l2_probe, "REVISIT_NS", 2e4)
    monkeypatch.setattr(l2_probe, "REVISIT_IDLE_S", 0.0)
    monkeypatch.setattr(l2_probe, "PLACEMENT_SECTORS", 64)
    out = tmp_path / "probe.json"
    assert l2_probe.main(["--base", "h200", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["device"] == "NVIDIA H200" and record["command"].startswith("python -m gpu_validate.l2_probe")
    assert record["revisit_bytes"] == 16 * 2**20 and record["l2_bytes"] == 2**20
    repeats = l2_probe.REVISIT_REPEATS
    for lanes in l2_probe.REVISIT_LANES:
        rows = [r for r in record["revisits"] if r["lanes"] == lanes]
        assert [r["case"] for r in rows] == ["first", "again"] * repeats + ["after_idle"] * repeats
        steps = rows[0]["steps"]  # the stand-in's hop: 200 ns, plus 3000 ns a launch
        assert all(r["ns_per_hop"] == pytest.approx(200 + 3000 / steps) for r in rows)
    assert len(record["capacity"]) == 2 * 3 * len(l2_probe.CAPACITY_LANES) * l2_probe.CAPACITY_REPEATS
    assert {(r["lanes"], r["steps"]) for r in record["capacity"]} == {(1, 64), (32, 2)}
    assert {r["touched_by"] for r in record["capacity"]} == {"every_sm", "one_block", "flushed"}
    # every launch of a revisit run: the step probe, then (first, again) pairs, then the idle ones
    runs = [log[i * (1 + 3 * repeats):(i + 1) * (1 + 3 * repeats)] for i in range(len(l2_probe.REVISIT_LANES))]
    for run in runs:
        visited = [set(launch["visited"].ravel().tolist()) for launch in run]
        fresh = [visited[0]] + visited[1:1 + 2 * repeats:2] + visited[1 + 2 * repeats:]
        assert visited[2:1 + 2 * repeats:2] == visited[1:1 + 2 * repeats:2]  # again = its first
        assert sum(map(len, fresh)) == len(set().union(*fresh))  # no sector of a fresh launch seen before
    # placement: one launch from each of the 132 SMs, every one over a fresh segment
    sms = PROPS["multiProcessorCount"]
    placement = record["placement"]
    assert [(r["lanes"], r["sm"]) for r in placement] == [(lanes, sm) for lanes in l2_probe.PLACEMENT_LANES
                                                          for sm in range(sms)]
    assert {(r["lanes"], r["steps"]) for r in placement} == {(1, 64), (32, 2)}
    # the stand-in's odd SMs are the other partition: OTHER_SM_NS more a hop
    assert all(r["touched_sm"] == 0 and r["ns_per_hop"] == pytest.approx(200 + 40 * (r["sm"] % 2) + 3000 / r["steps"])
               for r in placement)
    first = len(runs) * (1 + 3 * repeats)
    for lanes_run in (log[first:first + sms], log[first + sms:first + 2 * sms]):
        visited = [set(launch["visited"].ravel().tolist()) for launch in lanes_run]
        assert sum(map(len, visited)) == len(set().union(*visited))
    # homes: the odd sectors are the slow hops; the curves chase them alone, from four SMs of each group
    homes = record["homes"]
    assert homes["same_group"] == list(range(0, sms, 2)) and homes["other_group"] == list(range(1, sms, 2))
    assert homes["timed_sm"] == 1 and homes["sectors"] == 16 * 2**20 // 32 and homes["far_fraction"] == 0.5
    assert (homes["near_cycles"], homes["far_cycles"], homes["threshold_cycles"]) == (300, 420, 360)
    assert homes["hop_histogram"][300 // 4] == homes["hop_histogram"][420 // 4] == homes["sectors"] // 2
    assert sum(homes["hop_histogram"]) == homes["sectors"]
    assert {(r["case"], r["sm"]) for r in homes["curves"]} == {
        *(("home", sm) for sm in (2, 34, 66, 98)), *((case, sm) for case in ("copy", "far") for sm in (1, 33, 67, 99))}
    assert l2_probe.home_curves(homes, by_sm=True).shape == (len(l2_probe.REVISIT_LANES), 12)
    curves = l2_probe.home_curves(homes)
    assert curves.index.tolist() == list(l2_probe.REVISIT_LANES) and curves.columns.tolist() == ["home", "copy", "far"]
    assert (curves["home"] == 200).all() and (curves["copy"] == 240).all() and (curves["far"] == 240).all()
    home_launches = log[first + 2 * sms:first + 2 * sms + 3 * 4 * len(l2_probe.REVISIT_LANES) * l2_probe.HOME_REPEATS]
    assert all((launch["visited"] % 2 == 1).all() for launch in home_launches)
    assert sum(r["steps"] > 0 for r in homes["curves"]) == len(home_launches)
    out = capsys.readouterr().out
    assert "revisits, ns per hop" in out and "placement, ns per hop" in out and "homes: 0.500 of 524288" in out


def test_partition_groups_split_the_sms_by_their_one_lane_hop():
    rows = [{"lanes": 1, "touched_sm": 0, "sm": sm, "ns_per_hop": t}
            for sm, t in enumerate([150.0, 152.0, 185.0, 149.0, 190.0, 188.0])]
    rows.append({"lanes": 32, "touched_sm": 0, "sm": 2, "ns_per_hop": 10.0})  # not the one-lane runs
    assert l2_probe.partition_groups(rows) == ([0, 1, 3], [2, 4, 5])
    with pytest.raises(InputError, match="do not fall in two groups around SM 0"):
        l2_probe.partition_groups([dict(r, ns_per_hop=200.0 - r["ns_per_hop"] / 100) for r in rows[:6]])
    with pytest.raises(InputError, match="no one-lane placement runs"):
        l2_probe.partition_groups(rows[6:])


def test_far_positions_split_the_hops_in_two_groups():
    cycles = np.array([300, 420, 305, 298, 431, 425, 301, 299])
    slow, split = l2_probe.far_positions(cycles)
    assert slow.tolist() == [False, True, False, False, True, True, False, False]
    assert split == {"threshold_cycles": 362.5, "near_cycles": 300.0, "far_cycles": 425.0, "far_fraction": 0.375}
    with pytest.raises(InputError, match="do not fall in two groups"):
        l2_probe.far_positions(np.full(8, 300) + np.arange(8))


def test_a_placement_launch_that_no_block_ran_on_its_sm_is_one_error(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(props=dict(PROPS, name=b"NVIDIA H200", l2CacheSize=2**20)))
    monkeypatch.setattr(l2_probe, "REVISIT_NS", 2e4)
    monkeypatch.setattr(l2_probe, "REVISIT_IDLE_S", 0.0)
    monkeypatch.setattr(l2_probe, "PLACEMENT_SECTORS", 64)
    launch_on = l2_probe._Probe.launch_on
    monkeypatch.setattr(l2_probe._Probe, "launch_on",  # SM 7's launch claims nothing
                        lambda self, sm, lanes, steps, blocks, claim: launch_on(self, sm, lanes, steps, blocks,
                                                                                claim if sm != 7 else claim.copy()))
    assert l2_probe.main(["--base", "h200", "--out", str(tmp_path / "probe.json")]) == 2
    err = capsys.readouterr().err
    assert "no block of a launch meant for SM 7 ran there" in err and err.count("\n") == 1
    assert not (tmp_path / "probe.json").exists()


@pytest.mark.parametrize("args, fragment", [
    (["--base", "h200", "--out", "probe.csv"], "name it .json"),
    (["--base", "nonesuch", "--out", "probe.json"], "nonesuch"),
    (["--base", "h200", "--record", "missing.json", "--write", "h200.toml"], "missing.json: not an l2_probe record"),
    (["--base", "h200", "--record", "rows.json", "--write", "h200.toml"], "a capacity row lacks one of"),
    (["--base", "h100", "--record", "good.json", "--write", "h200.toml"], "is not [device] name"),
])
def test_bad_input_is_one_line_and_exit_2(args, fragment, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.json").write_text(json.dumps(HAND))  # an H200 record
    (tmp_path / "rows.json").write_text(json.dumps(dict(HAND, capacity=[{"bytes": 1}])))
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy())
    assert l2_probe.main(args) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1
    assert not (tmp_path / "probe.json").exists() and not (tmp_path / "h200.toml").exists()


def _record(every_sm: dict, flushed: float = 301.0) -> dict:
    """A probe record by hand: an L2 of 1000 bytes, one-lane hops over buffers of `every_sm`'s L2 fractions."""
    rows = [{"bytes": int(f * 1000), "l2_fraction": f, "touched_by": by, "lanes": lanes, "steps": 4,
             "ns_per_hop": t if lanes == 1 else 999.0}
            for f, t in every_sm.items() for lanes in (1, 32)
            for by, t in (("every_sm", t), ("one_block", t / 2), ("flushed", flushed))]
    return {"device": "NVIDIA H200", "driver": "580.159.04", "date": "2026-11-26", "command": "by hand",
            "l2_bytes": 1000, "revisits": [], "capacity": rows}


HAND = _record({0.125: 100.0, 0.25: 102.0, 1.0: 181.0, 1.5: 221.0, 2.0: 261.0, 16.0: 301.0})


def test_hit_fractions_and_the_effective_capacity_by_hand():
    # t_hit = median(100, 102) = 101, t_miss = 301: (301 - t) / 200
    fractions = l2_probe.hit_fractions(HAND)
    assert fractions["bytes"].tolist() == [125, 250, 1000, 1500, 2000, 16000]
    assert fractions["hit_fraction"].round(12).tolist() == [1.0, 0.995, 0.6, 0.4, 0.2, 0.0]
    # hit_fraction x size over one to two L2s: 600, 600, 400
    assert l2_probe.effective_bytes(fractions) == 600
    capacity = l2_probe.l2_capacity(HAND)
    assert capacity.effective_bytes == 600 and capacity.sizes == (125, 250, 1000, 1500, 2000, 16000)
    assert capacity.provenance == {"device": "NVIDIA H200", "driver": "580.159.04", "date": "2026-11-26",
                                   "command": "by hand"}


@pytest.mark.parametrize("record, fragment", [
    (_record({0.125: 100.0, 1.0: 181.0}, flushed=90.0), "no slower than a hit"),
    (_record({1.0: 181.0, 2.0: 261.0}), "no buffer of at most 0.25 of the L2"),
    (_record({0.125: 100.0, 4.0: 200.0}), "no buffer of 1 to 2 L2s"),
    (dict(HAND, capacity=[r for r in HAND["capacity"] if r["touched_by"] != "flushed"]), "flushed"),
])
def test_a_record_that_cannot_give_the_capacity_is_one_error(record, fragment):
    with pytest.raises(InputError, match=fragment):
        l2_probe.effective_bytes(l2_probe.hit_fractions(record))


def test_a_recorded_run_writes_the_profile_section_without_a_gpu(tmp_path, capsys):
    record = tmp_path / "probe.json"
    record.write_text(json.dumps(dict(HAND, l2_bytes=60 * 2**20, capacity=[
        dict(r, bytes=r["bytes"] * 60 * 2**20 // 1000) for r in HAND["capacity"]])))
    out = tmp_path / "h200.toml"
    assert l2_probe.main(["--base", "h200", "--record", str(record), "--write", str(out)]) == 0
    profile = load_profile(str(out), kind="gpu")
    assert profile.l2_capacity.effective_bytes == 600 * 60 * 2**20 // 1000
    assert profile.l2_model_bytes == 37748736 and profile.instructions == load_profile("h200").instructions
    assert "effective capacity: 36.0 MiB of 60" in capsys.readouterr().out


@pytest.mark.parametrize("name, record", [("h200", "nvidia-h200.json"), ("h100", "nvidia-h100.json")])
def test_the_shipped_profiles_l2_capacity_is_their_committed_probe_run(name, record):
    path = Path(__file__).parents[1] / "gpu_validate" / "results" / "l2-probe" / record
    recorded = json.loads(path.read_text())
    profile = load_profile(name)
    assert profile.l2_capacity == l2_probe.l2_capacity(recorded)
    assert profile.l2_capacity.provenance["command"] == recorded["command"]
    # what every SM reads fills about 60% of the L2 on both (36.7 of 60 MiB, 30.9 of 50)
    assert 0.55 < profile.l2_model_bytes / profile.l2_bytes < 0.65
