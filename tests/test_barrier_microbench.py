"""The fork-join microbenchmark (`gpu_validate.barrier`) and the L1 gathers (`gpu_validate.gather`'s
`l1_gathers`): their command lines without a GPU, and the H200 records the README's findings rest on
(`gpu_validate/results/nvidia-h200-coupling-loads/`)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from gpu_validate import barrier, device, gather
from opmachine.profile import load_profile

RESULTS = Path(__file__).resolve().parents[1] / "gpu_validate" / "results" / "nvidia-h200-coupling-loads"


def _no_gpu():
    raise device.GpuUnavailable("CuPy is not installed")


@pytest.mark.parametrize("module", [barrier, gather])
def test_without_a_gpu_the_command_is_one_error_line(module, monkeypatch, capsys):
    monkeypatch.setattr(device, "require_gpu", _no_gpu)
    assert module.main(["--repeats", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


@pytest.mark.parametrize("argv, fragment", [(["--repeats", "0"], "--repeats must be at least 1, got 0"),
                                            (["--gpu", "nosuch"], "nosuch")])
def test_bad_options_are_one_error_line(argv, fragment, capsys):
    assert barrier.main(argv) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1


def test_no_profile_section_takes_the_barrier_rounds():
    with pytest.raises(SystemExit) as exit_:
        barrier.main(["--write", "x.toml"])
    assert exit_.value.code == 2


@pytest.fixture(scope="module")
def rounds() -> pd.DataFrame:
    record = json.loads((RESULTS / "barrier-h200.json").read_text())
    assert record["device"] == "NVIDIA H200" and record["command"].startswith("python -m gpu_validate.barrier")
    assert record["rounds"] == barrier.ROUNDS
    rows = pd.DataFrame(record["rows"])
    assert (rows["round_ns"] - rows["ns"] / barrier.ROUNDS).abs().max() < 0.01
    return rows.pivot_table(index=["table", "lanes", "loads"], columns="ending", values="round_ns")


def test_the_record_has_every_table_lane_count_load_count_and_ending(rounds):
    assert len(rounds) == len(barrier.TABLES) * len(barrier.LANES) * len(barrier.LOADS)
    assert list(rounds.columns.sort_values()) == sorted(barrier.ENDINGS)
    assert (rounds > 0).all().all()


def test_a_barrier_alone_costs_a_round_little(rounds):
    # the finding the README states: fork-join rounds of loaded latencies end about as soon as the free warps'
    assert ((rounds["barrier"] - rounds["free"]).abs() <= 0.07 * rounds["free"]).all()
    assert (rounds["barrier"] - rounds["free"]).max() <= 150


def test_a_reservation_makes_every_warp_of_the_block_wait_the_atomics_round_trip(rounds):
    l2 = rounds.loc["l2"]
    assert (l2["reserve_own"] - l2["barrier"] >= 90).all()
    assert (l2["reserve"] >= l2["reserve_own"] - 1).all()


def test_the_l1_serves_scattered_hits_faster_than_the_l2():
    record = json.loads((RESULTS / "gather-h200.json").read_text())
    l1 = {row["bytes"]: row["per_ns"] for row in record["l1_gathers"]}
    l2 = {row["bytes"]: row["per_ns"] for row in record["gathers"]}
    assert sorted(l1) == sorted(gather.L1_SIZES) and sorted(l2) == sorted(gather.SIZES)
    assert min(l1[16 << 10], l1[64 << 10]) >= 4 * l2[1 << 20]
    assert l1[1 << 20] < 1.2 * l2[1 << 20]  # a table the L1 cannot hold gathers at the L2's rate
    profile = load_profile("h200").gather  # measured two days before: the L2-resident rates reproduce
    for size in (1 << 20, 4 << 20, 16 << 20):
        assert l2[size] == pytest.approx(profile.at(size), rel=0.02)
