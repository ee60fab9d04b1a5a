"""The optional [instructions] section of GPU profiles (opmachine.profile.instructions): loading,
checks with one line naming the key, writing and replacing it, and the helpers the model uses."""
from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmachine.profile import (
    INSTRUCTION_KEYS,
    INSTRUCTION_RUN_KEYS,
    InstructionCosts,
    ProfileError,
    available_profiles,
    instruction_section,
    load_profile,
    render_gpu_profile,
    with_instruction_section,
    write_gpu_curves,
    write_gpu_instructions,
    write_gpu_profile,
)
from simdmodel.errors import InputError
from test_profile import GPU_FIELDS, VALUES, load_or_profile_error, mutate, naive_dumps

RUN = {"method": "clock64 chains", "device": "Tesla K40c", "driver": "580.159.04", "date": "2026-11-23T10:00:00Z",
       "command": "python -m gpu_validate.microbench --instructions --base k40c --out k40c.toml"}
COSTS = InstructionCosts(clock_mhz=745.0, sub_partitions=4, issue_per_cycle=0.5, alu_latency_cycles=9.0,
                         shuffle_latency_cycles=24.0, shared_latency_cycles=33.0, shared_cycles_per_wavefront=2.0,
                         shared_conflict_cycles=((1, 2.0), (2, 4.0), (4, 8.0), (32, 64.0)), barrier_cycles=20.0,
                         block_scan_cycles=400.0, alu_per_cycle=0.25, provenance=RUN)
TEXT = render_gpu_profile(label="x.toml", instructions=COSTS, instructions_notes=["how: by hand"], **GPU_FIELDS)


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# Loading


@pytest.mark.parametrize("name", available_profiles())
def test_shipped_instruction_costs_are_their_recorded_runs(name):
    # the CPU profile and the papers' GPUs have none; h100 and h200 hold what their recorded raw
    # instruction tables (tests/fixtures/microbench/<name>_instructions_raw.csv) derive to
    from gpu_validate.microbench.instructions import costs, derive, read_raw

    profile = load_profile(name)
    raw = Path(__file__).parent / "fixtures" / "microbench" / f"{name}_instructions_raw.csv"
    if not raw.is_file():
        assert getattr(profile, "instructions", None) is None
        return
    shipped = profile.instructions
    assert costs(derive(read_raw(raw), shipped.sub_partitions), shipped.provenance) == shipped
    assert shipped.provenance["device"] == profile.device_name


def test_a_table_measured_before_the_alu_pipe_test_reads_without_it(tmp_path):
    doc = tomllib.loads(TEXT)
    del doc["instructions"]["alu_per_cycle"]
    costs = load_profile(write(tmp_path, naive_dumps(doc))).instructions
    assert costs.alu_per_cycle == 0.0 and costs.alu_ns_per_inst_gpu(15) == 0.0
    assert "alu_per_cycle" not in costs.values()
    assert COSTS.alu_ns_per_inst_gpu(15) == 1000.0 / 745.0 / (0.25 * 4 * 15)


def test_round_trip(tmp_path):
    profile = load_profile(write(tmp_path, TEXT))
    assert profile.instructions == COSTS and profile.instructions.provenance == RUN
    assert profile.field_provenance("instructions") == profile.field_provenance("instructions.barrier_cycles") == RUN
    assert load_profile("k40c").field_provenance("instructions.barrier_cycles") == {}
    assert profile.instructions.shared_conflict_cycles == ((1, 2.0), (2, 4.0), (4, 8.0), (32, 64.0))
    doc = tomllib.loads(TEXT)
    assert list(doc["instructions"]) == [*INSTRUCTION_KEYS, "provenance"]
    assert doc["instructions"]["shared_conflict_cycles"] == [[1, 2.0], [2, 4.0], [4, 8.0], [32, 64.0]]
    # every value carries a comment saying what it is, and the notes come before the table
    assert "# how: by hand\n[instructions]\nclock_mhz = 745.0   # measured: SM clock" in TEXT
    assert re.search(r"\nbarrier_cycles = 20.0   # one __syncthreads\(\) in a 256-thread block", TEXT)
    # the same costs written with NumPy numbers
    numpy_costs = InstructionCosts(**{**COSTS.__dict__, "clock_mhz": np.float64(745.0), "sub_partitions": np.int64(4),
                                      "shared_conflict_cycles": [(np.int64(1), np.float32(2.0)), (2, 4), (4, 8),
                                                                 (32, 64)]})
    again = write_gpu_profile(tmp_path / "n.toml", instructions=numpy_costs, **GPU_FIELDS)
    assert again.instructions == COSTS


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.floats(1.0, 9999.0), st.integers(1, 16), st.floats(1e-3, 2.0),
       st.lists(st.floats(1e-3, 1e6), min_size=5, max_size=5),
       st.lists(st.tuples(st.integers(1, 32), st.floats(1e-3, 1e6)), min_size=2, max_size=6, unique_by=lambda p: p[0]),
       st.text(min_size=1, max_size=20).filter(str.strip))
def test_round_trip_of_any_valid_costs(tmp_path, clock, sub, issue, cycles, table, note):
    table = sorted(table)
    table = [(1, table[0][1])] + [(k, c) for k, c in table[1:] if k > 1]
    ks, cs = [k for k, _ in table], np.maximum.accumulate([c for _, c in table]).tolist()
    if len(ks) < 2:
        ks, cs = [1, 2], [cs[0], cs[0]]
    costs = InstructionCosts(clock, sub, issue, *cycles[:3], cs[0], tuple(zip(ks, cs)), *cycles[3:],
                             provenance=dict(RUN, date=note))
    profile = write_gpu_profile(tmp_path / "h.toml", instructions=costs, **GPU_FIELDS)
    assert profile.instructions == costs and load_profile(tmp_path / "h.toml") == profile


# --------------------------------------------------------------------------------------------
# Each mistake: one line naming the key


def _in_section(change):
    """A mutation of the [instructions] section only (the text from its comment block on)."""
    def mutate(text):
        at = text.index("# [instructions]")
        return text[:at] + change(text[at:])
    return mutate


def rep(old, new):
    return _in_section(lambda text: text.replace(old, new, 1))


def sub(pattern, new):
    return _in_section(lambda text: re.sub(pattern, new, text, count=1))


CASES = [
    ("missing key", sub(r"\nbarrier_cycles = .*", ""), "instructions.barrier_cycles: missing key"),
    ("unknown key", rep("clock_mhz = 745.0", "clock_mhz = 745.0\nclock_ghz = 0.745"),
     "instructions.clock_ghz: unknown key"),
    ("string", rep("clock_mhz = 745.0", 'clock_mhz = "745"'), "instructions.clock_mhz: must be a number, got string"),
    ("zero clock", rep("clock_mhz = 745.0", "clock_mhz = 0.0"), "instructions.clock_mhz: must be > 0"),
    ("clock in Hz", rep("clock_mhz = 745.0", "clock_mhz = 745e6"), "instructions.clock_mhz: must be at most 10000 MHz"),
    ("nan", rep("alu_latency_cycles = 9.0", "alu_latency_cycles = nan"),
     "instructions.alu_latency_cycles: must be finite"),
    ("negative", rep("shuffle_latency_cycles = 24.0", "shuffle_latency_cycles = -24.0"),
     "instructions.shuffle_latency_cycles: must be > 0"),
    ("huge", rep("block_scan_cycles = 400.0", "block_scan_cycles = 4e9"),
     "instructions.block_scan_cycles: must be at most 1e[+]06 cycles"),
    ("float partitions", rep("sub_partitions = 4", "sub_partitions = 4.0"),
     "instructions.sub_partitions: must be an integer, got float 4.0"),
    ("too many partitions", rep("sub_partitions = 4", "sub_partitions = 64"),
     "instructions.sub_partitions: must be at most 16"),
    ("issue too high", rep("issue_per_cycle = 0.5", "issue_per_cycle = 4.0"),
     "instructions.issue_per_cycle: must be at most 2 warp instructions"),
    ("table not array", rep("shared_conflict_cycles = [[1, 2.0], [2, 4.0], [4, 8.0], [32, 64.0]]",
                            "shared_conflict_cycles = 2.0"), "instructions.shared_conflict_cycles: must be an array"),
    ("one pair", rep("[[1, 2.0], [2, 4.0], [4, 8.0], [32, 64.0]]", "[[1, 2.0]]"),
     "instructions.shared_conflict_cycles: needs at least 2"),
    ("not a pair", rep("[2, 4.0], [4, 8.0]", "[2, 4.0, 1], [4, 8.0]"),
     r"instructions.shared_conflict_cycles\[1\]: must be a pair"),
    ("float k", rep("[2, 4.0]", "[2.0, 4.0]"), r"instructions.shared_conflict_cycles\[1\]: k must be an integer"),
    ("k above warp", rep("[32, 64.0]", "[33, 64.0]"), r"shared_conflict_cycles\[3\]: k must be in 1..32"),
    ("k order", rep("[2, 4.0], [4, 8.0]", "[4, 4.0], [2, 8.0]"), r"shared_conflict_cycles\[2\]: k must increase"),
    ("cycles fall", rep("[4, 8.0]", "[4, 3.0]"), r"shared_conflict_cycles\[2\]: cycles must not fall"),
    ("no k = 1", rep("[[1, 2.0], [2, 4.0]", "[[2, 4.0]"), r"shared_conflict_cycles\[0\]: must be k = 1"),
    ("k = 1 not a wavefront", rep("[[1, 2.0]", "[[1, 2.5]"),
     r"shared_conflict_cycles\[0\]: cycles at k = 1 \(2.5\) must equal shared_cycles_per_wavefront \(2\)"),
    ("pair cycles string", rep("[2, 4.0]", '[2, "4"]'), r"shared_conflict_cycles\[1\]: must be a number"),
    ("no provenance", sub(r"\n\[instructions.provenance\]\n(.+\n)+", "\n"), "instructions.provenance: missing key"),
    ("no driver", sub(r'\ndriver = "580.159.04"\ndate = "2026-11-23', '\ndate = "2026-11-23'),
     "instructions.provenance.driver: missing key"),
    ("empty method", rep('method = "clock64 chains"', 'method = " "'),
     "instructions.provenance.method: must not be empty"),
    ("provenance key", rep('method = "clock64 chains"', 'method = "x"\nhost = "y"'),
     "instructions.provenance.host: unknown key"),
    ("other device", rep('device = "Tesla K40c"\ndriver = "580.159.04"\ndate = "2026-11-23',
                         'device = "Tesla K80"\ndriver = "580.159.04"\ndate = "2026-11-23'),
     r"instructions.provenance.device: 'Tesla K80' is not \[device\] name 'Tesla K40c'"),
    ("not a table", lambda t: t[:t.index("# [instructions]")].replace('kind = "gpu"', 'kind = "gpu"\ninstructions = 5'),
     "instructions: must be a table, got integer 5"),
]


@pytest.mark.parametrize("mutation, fragment", [pytest.param(m, f, id=i) for i, m, f in CASES])
def test_each_mistake_is_one_line_naming_the_key(tmp_path, mutation, fragment):
    text = mutation(TEXT)
    assert text != TEXT, "the mutation did not apply"
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as error:
        load_profile(str(path))
    message = str(error.value)
    assert message.startswith(f"profile {path}: ") and "\n" not in message
    assert re.search(fragment, message), message


NUMBER_KEYS = [k for k in INSTRUCTION_KEYS if k not in ("sub_partitions", "shared_conflict_cycles")]
ASCII = st.text(alphabet="abc 1.-x", max_size=5)  # naive_dumps writes ASCII strings
BAD_NUMBERS = st.one_of(st.floats(max_value=0.0), st.floats(min_value=1e6, exclude_min=True), st.just(math.nan),
                        st.just(math.inf), st.booleans(), ASCII, st.lists(st.integers(), max_size=2))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.tuples(st.sampled_from(NUMBER_KEYS), BAD_NUMBERS),
                 st.tuples(st.just("sub_partitions"), st.one_of(st.integers(max_value=0), st.integers(17, 2**40),
                                                                 st.floats(), ASCII)),
                 st.tuples(st.just("shared_conflict_cycles"),
                           st.one_of(st.lists(st.lists(st.one_of(st.integers(-2, 40), st.floats()), max_size=3),
                                              max_size=4), st.floats(), ASCII))))
def test_any_bad_value_is_one_line_naming_its_key(tmp_path, bad):
    key, value = bad
    doc = tomllib.loads(TEXT)
    doc["instructions"][key] = value
    path = write(tmp_path, naive_dumps(doc))
    try:
        costs = load_profile(str(path)).instructions
    except ProfileError as error:
        message = str(error)
        assert "\n" not in message and f"instructions.{key}" in message, message
    else:  # only a value in range passes: a conflict table that happens to be valid
        assert key == "shared_conflict_cycles" and costs.shared_conflict_cycles[0] == (1, 2.0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_mutations_load_or_raise_profile_error(tmp_path, data):
    doc = mutate(tomllib.loads(TEXT), data, VALUES, ["extra", "clock_mhz", "instructions", "provenance", "method"])
    load_or_profile_error(tmp_path / "m.toml", naive_dumps(doc))


# --------------------------------------------------------------------------------------------
# What the model uses


def test_helpers_by_hand():
    costs = COSTS
    # 745 MHz: a cycle is 1000 / 745 = 1.342282 ns
    assert costs.cycle_ns == pytest.approx(1.3422818791946309, rel=1e-15)
    # 15 SMs x 4 sub-partitions x 0.5 = 30 warp instructions a cycle: 1.342282 / 30 ns each
    assert costs.issue_ns_per_inst_gpu(15) == pytest.approx(1000 / 745 / 30, rel=1e-15)
    # 2 cycles per wavefront on each of 15 SMs: 2 x 1.342282 / 15 ns per wavefront of the GPU
    assert costs.shared_ns_per_wavefront_gpu(15) == pytest.approx(2 * 1000 / 745 / 15, rel=1e-15)
    # cycles(k) / cycles(1): exact at the table's k, linear in k between them
    assert costs.conflict_wavefronts(1) == 1.0 and costs.conflict_wavefronts(4) == 4.0
    assert costs.conflict_wavefronts(32) == 32.0 and costs.conflict_wavefronts(3) == 3.0
    assert costs.conflict_wavefronts(18) == 18.0  # between (4, 8) and (32, 64): 8 + 14 x 2 = 36 cycles
    assert costs.conflict_wavefronts(1.5) == 1.5
    out = costs.conflict_wavefronts(np.array([1, 2, 16]))
    assert isinstance(out, np.ndarray) and out.tolist() == [1.0, 2.0, 16.0]
    measured = InstructionCosts(**{**COSTS.__dict__, "shared_conflict_cycles": ((1, 1.02), (2, 2.02), (32, 32.2))})
    assert measured.conflict_wavefronts(2) == 2.02 / 1.02
    assert measured.conflict_wavefronts(17) == pytest.approx((2.02 + (32.2 - 2.02) / 2) / 1.02, rel=1e-15)


@pytest.mark.parametrize("call, fragment", [
    (lambda c: c.issue_ns_per_inst_gpu(0), "sms must be an integer >= 1"),
    (lambda c: c.shared_ns_per_wavefront_gpu(2.5), "sms must be an integer >= 1"),
    (lambda c: c.issue_ns_per_inst_gpu(True), "sms must be an integer >= 1"),
    (lambda c: c.conflict_wavefronts(0.5), r"conflict degree k must be in 1..32"),
    (lambda c: c.conflict_wavefronts(33), r"conflict degree k must be in 1..32"),
    (lambda c: c.conflict_wavefronts(math.nan), r"conflict degree k must be in 1..32"),
    (lambda c: c.conflict_wavefronts("x"), "conflict degree k must be a number"),
    (lambda c: c.conflict_wavefronts(True), r"conflict degree k must be in 1..32"),
])
def test_helpers_refuse_bad_arguments(call, fragment):
    with pytest.raises(InputError, match=fragment):
        call(COSTS)


@settings(max_examples=100, deadline=None)
@given(st.floats(1, 32), st.floats(1, 32))
def test_conflict_wavefronts_grow_with_k(a, b):
    lo, hi = sorted((a, b))
    assert 1.0 <= COSTS.conflict_wavefronts(lo) <= COSTS.conflict_wavefronts(hi) <= 32.0


# --------------------------------------------------------------------------------------------
# Writing: adding or replacing the section in a profile file, keeping every other line


def test_write_gpu_instructions_keeps_the_file_and_replaces_the_section(tmp_path):
    base = write(tmp_path, Path(load_profile("k40c").path).read_text(encoding="utf-8"), "k40c.toml")
    original = base.read_text(encoding="utf-8")
    profile = write_gpu_instructions(base, load_profile(base), COSTS, notes=["first run"])
    text = base.read_text(encoding="utf-8")
    assert text.startswith(original.rstrip("\n") + "\n\n# [instructions]: ") and "# first run\n" in text
    assert profile.instructions == COSTS and profile.curves == load_profile("k40c").curves
    again = write_gpu_instructions(base, profile, InstructionCosts(**{**COSTS.__dict__, "barrier_cycles": 30.0}),
                                   notes=["second run"])
    text = base.read_text(encoding="utf-8")
    assert again.instructions.barrier_cycles == 30.0 and "first run" not in text and "# second run\n" in text
    assert text.startswith(original.rstrip("\n") + "\n\n# [instructions]: ") and text.count("\n[instructions.provenance]\n") == 1
    # a profile of another device refuses the costs, and nothing is written
    with pytest.raises(ProfileError, match="instructions.provenance.device: 'Tesla K40c' is not"):
        write_gpu_instructions(tmp_path / "h200.toml", load_profile("h200"), COSTS)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k40c.toml"]


def test_with_instruction_section_in_the_middle_of_a_file():
    section = instruction_section(COSTS, "x")
    text = ("a = 1\n\n# about the section\n[instructions]\nclock_mhz = 1.0\n\n[instructions.provenance]\n"
            "method = \"m\"\n\n# about b\n[b]\nc = 2\n")
    assert with_instruction_section(text, section) == "a = 1\n\n" + section + "\n# about b\n[b]\nc = 2\n"
    assert with_instruction_section("", section) == section
    assert with_instruction_section("a = 1\n\n\n", section) == "a = 1\n\n" + section


def test_write_gpu_curves_keeps_the_costs_of_the_same_device(tmp_path):
    base = load_profile(write(tmp_path, TEXT, "base.toml"))
    curves = {key: (c.mlp, c.ns) for key, c in base.curves.items()}
    write_gpu_curves(tmp_path / "same.toml", base, curves, {"provenance": "x", **{k: RUN[k] for k in
                                                                                  ("device", "driver", "date", "command")}})
    assert load_profile(tmp_path / "same.toml").instructions == COSTS
    other = {"provenance": "x", "device": "Tesla K80", "driver": "1", "date": "2", "command": "3"}
    write_gpu_curves(tmp_path / "other.toml", base, curves, other)
    assert load_profile(tmp_path / "other.toml").instructions is None  # they describe another GPU


@pytest.mark.parametrize("change, fragment", [
    ({"sub_partitions": 4.0}, "instructions.sub_partitions: must be an integer"),
    ({"clock_mhz": "fast"}, "instructions.clock_mhz: must be a number"),
    ({"barrier_cycles": True}, "instructions.barrier_cycles: must be a number"),
    ({"provenance": {k: v for k, v in RUN.items() if k != "command"}}, "instructions.provenance.command: needs"),
    ({"provenance": dict(RUN, host="x")}, "instructions.provenance.host: unknown key"),
    ({"issue_per_cycle": 3.0}, "instructions.issue_per_cycle: must be at most 2"),
])
def test_writing_refuses_bad_costs_and_writes_nothing(tmp_path, change, fragment):
    costs = InstructionCosts(**{**COSTS.__dict__, **change})
    with pytest.raises(ProfileError, match=fragment):
        write_gpu_profile(tmp_path / "p.toml", instructions=costs, **GPU_FIELDS)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="must be an InstructionCosts"):
        instruction_section(dict(RUN), "x")
    assert set(RUN) == set(INSTRUCTION_RUN_KEYS)
