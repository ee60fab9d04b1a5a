"""One set of defaults for every command that predicts time (`opm`, `recommend`, `report`), and the
header line that states them.

- GPU profile: the measured profile of the GPU this machine has (found by its CUDA name and SM
  count, `gpu_validate.device.profile_for_device`), else `h200`, whose service curves and
  instruction costs were measured and against which the committed validation run was measured.
- L2: the profile's sectored set-associative geometry, kept warm from launch to launch, as a
  BFS's back-to-back launches find it (the validation's time mode).
- Time model: `critical` (`opmachine.critical`).
- Sources: the first K of one seeded sequence (`simdmodel.pick_sources(graph, K, SEED)`), so the
  default source of `opm` and `recommend` is the first source of `analyze` and `report`.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import lru_cache

FALLBACK_GPU = "h200"
L2_MODEL = "setassoc"
TIME_MODEL = "critical"
SEED = 1
"""The seed of every command's sources (seed 000 §5.1 picks pseudo-random sources)."""


@dataclass(frozen=True)
class GpuChoice:
    """The profile a command predicts on, and why that one (for the output header)."""

    profile: str
    reason: str


@lru_cache(maxsize=1)
def default_gpu() -> GpuChoice:
    """This machine's GPU's profile when CuPy sees a GPU that a shipped profile describes, else `h200`."""
    if importlib.util.find_spec("cupy") is None:
        return GpuChoice(FALLBACK_GPU, "the default: no GPU detected")
    from gpu_validate.device import device_info, profile_for_device
    from simdmodel.errors import InputError

    try:
        info = device_info()
    except InputError:
        return GpuChoice(FALLBACK_GPU, "the default: no GPU detected")
    try:
        return GpuChoice(profile_for_device(info), f"the profile of this {info['device']}")
    except InputError:
        return GpuChoice(FALLBACK_GPU, f"the default: no shipped profile describes this {info['device']}")


def choose_gpu(name: str | None) -> GpuChoice:
    """The profile named on the command line, else `default_gpu()`."""
    return GpuChoice(name, "named") if name else default_gpu()


def settings_line(profile, choice: GpuChoice | None, l2_model: str, warm_l2: bool, time_model: str) -> str:
    """The settings in words: `profile h200 (the default: no GPU detected; measured on NVIDIA H200), L2
    set-associative warm from launch to launch, time model critical`."""
    measured = (f"measured on {profile.provenance.get('device', profile.device_name or 'its GPU')}"
                if profile.measured else "derived from published figures, not measured")
    why = f"{choice.reason}; " if choice is not None and choice.reason != "named" else ""
    l2 = "set-associative" if l2_model == "setassoc" else "fully associative LRU"
    state = "warm from launch to launch" if warm_l2 else "cold at each launch"
    return f"profile {profile.name} ({why}{measured}), L2 {l2} {state}, time model {time_model}"
