"""Checks every optional section of a GPU profile ([gather], [atomics], [bitmask]) passes: a mistake is one line
naming its key, writing adds the section then replaces it keeping every other line, and measured curves
keep the section only when it describes the same device."""
from __future__ import annotations

import pytest
from hypothesis import strategies as st

from opmachine.profile import ProfileError, load_profile, render_gpu_profile, write_gpu_curves, write_gpu_section
from test_profile import GPU_FIELDS


def bad_values(elements=st.floats(-1.0, 2.0), max_size: int = 3):
    """Values a section's number or array may be fed: any float (nan and inf too), small integers, booleans,
    short text, and lists of `elements`."""
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.booleans(),
                     st.text(alphabet="abc 1.-x", max_size=5), st.lists(elements, max_size=max_size))


def write(tmp_path, text, name="p.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rep(old, new):
    return lambda text: text.replace(old, new, 1)


def other_device_case(table: str) -> tuple:
    """The (name, edit, message) case every measured section is checked for: its provenance names another device
    than the profile's (a K40c one, as the sections' test profiles are)."""
    provenance = f"[{table}.provenance]\ndevice = "
    return ("other device", rep(provenance + '"Tesla K40c"', provenance + '"H100"'),
            rf"{table}.provenance.device: 'H100' is not \[device\] name 'Tesla K40c'")


def assert_one_line_error(tmp_path, text, edit, message):
    """`edit(text)` changes the profile text and loading it is one ProfileError line matching `message`."""
    edited = edit(text)
    assert edited != text
    with pytest.raises(ProfileError, match=message) as caught:
        load_profile(str(write(tmp_path, edited)))
    assert "\n" not in str(caught.value)


def assert_added_then_replaced(tmp_path, section: str, values, changed, old_line: str, new_line: str):
    """`write_gpu_section` adds [section] to a profile without it, then replaces it by `changed` (whose text
    differs from `values`' only in `old_line` -> `new_line`), keeping every other line."""
    base = write(tmp_path, render_gpu_profile(label="x.toml", **GPU_FIELDS), "k40c.toml")
    profile = write_gpu_section(base, load_profile(str(base)), section, values)
    assert getattr(profile, section) == values
    first = base.read_text(encoding="utf-8")
    again = write_gpu_section(base, profile, section, changed)
    assert getattr(again, section) == changed
    assert base.read_text(encoding="utf-8").replace(new_line, old_line) == first


def assert_kept_for_the_same_device_only(tmp_path, text, section: str, values, run: dict):
    """New curves written over the profile `text` keep its [section] for the same device and drop it for another."""
    base = load_profile(str(write(tmp_path, text, "k40c.toml")))
    curves = {key: (c.mlp, c.ns) for key, c in base.curves.items()}
    same, other = tmp_path / "same.toml", tmp_path / "other.toml"
    write_gpu_curves(same, base, curves, {**run, "provenance": "by hand"})
    assert getattr(load_profile(str(same)), section) == values
    write_gpu_curves(other, base, curves, {**run, "device": "Tesla K80", "provenance": "by hand"})
    assert getattr(load_profile(str(other)), section) is None
