"""The GPU this process runs on: a clear error when there is none, what it is (for provenance and
for its profile), and which hardware profile describes it.

CuPy is imported here, lazily, and nowhere at package import: `simdmodel` and `opmachine` work on
machines without CUDA. A profile describes one GPU, named in its [device] table, with its SM count
(`opmachine.profile`): `profile_for_device` finds the one for this GPU and `check_profile_device`
refuses one made for another (an H100 SXM5 profile, 132 SMs, on an H100 PCIe with 114, say).
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from opmachine.profile import available_profiles, load_profile
from opmachine.profile.schema import RUN_KEYS
from simdmodel.errors import InputError

MAKE_PROFILE = "python -m gpu_validate.profile_gpu --out opmachine/profiles/NAME.toml"
"""The command that writes a profile for the GPU it runs on (gpu_validate.profile_gpu)."""
ATTRIBUTES = {
    "warp_size": ("cudaDevAttrWarpSize", 10),
    "max_threads_per_block": ("cudaDevAttrMaxThreadsPerBlock", 1),
    "sms": ("cudaDevAttrMultiProcessorCount", 16),
    "max_threads_per_sm": ("cudaDevAttrMaxThreadsPerMultiProcessor", 39),
    "max_blocks_per_sm": ("cudaDevAttrMaxBlocksPerMultiprocessor", 106),
    "l2_bytes": ("cudaDevAttrL2CacheSize", 38),
    "sm_clock_khz": ("cudaDevAttrClockRate", 13),
    "memory_clock_khz": ("cudaDevAttrMemoryClockRate", 36),
    "memory_bus_bits": ("cudaDevAttrGlobalMemoryBusWidth", 37),
    "cc_major": ("cudaDevAttrComputeCapabilityMajor", 75),
    "cc_minor": ("cudaDevAttrComputeCapabilityMinor", 76),
}
"""The CUDA device attributes (cudaDeviceGetAttribute: enum name and number) a GPU profile is built from."""


class GpuUnavailable(InputError):
    """No CuPy, or no CUDA device it can use."""


class ProfileMismatch(InputError):
    """No profile, or more than one, describes this GPU (its name and SM count), or a profile describes another."""


def require_gpu():
    """The `cupy` module, once a CUDA device is known to work; GpuUnavailable with one line otherwise."""
    try:
        import cupy
    except ImportError:
        raise GpuUnavailable("CuPy is not installed: gpu_validate needs an NVIDIA GPU and "
                             "`pip install '.[gpu]'` (CuPy for the installed CUDA)") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # noqa: BLE001 (CUDARuntimeError, or a missing driver library)
        raise GpuUnavailable(f"no usable CUDA GPU: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
    if count < 1:
        raise GpuUnavailable("no CUDA GPU is visible to this process")
    return cupy


def _attribute(cupy, name: str, number: int) -> int:
    runtime = cupy.cuda.runtime
    return int(runtime.deviceGetAttribute(getattr(runtime, name, number), 0))


def _driver_version() -> str:
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            out = subprocess.run([smi, "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                                 text=True, timeout=30, check=True).stdout.strip().splitlines()
            if out and out[0].strip():
                return out[0].strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return "unknown"


def device_slug(name: str) -> str:
    """A file-name form of the device name: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


def device_info() -> dict:
    """Name, driver, CUDA runtime, compute capability, SMs, L2, clocks and the date (provenance)."""
    cupy = require_gpu()
    runtime = cupy.cuda.runtime
    props = runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    version = runtime.runtimeGetVersion()
    return {
        "device": name,
        "slug": device_slug(name),
        "driver": _driver_version(),
        "cuda_runtime": f"{version // 1000}.{version % 1000 // 10}",
        "cupy": cupy.__version__,
        "compute_capability": f"{props['major']}.{props['minor']}",
        "sms": int(props["multiProcessorCount"]),
        "l2_bytes": int(props["l2CacheSize"]),
        "sm_clock_mhz": _attribute(cupy, "cudaDevAttrClockRate", 13) / 1000,
        "memory_clock_mhz": _attribute(cupy, "cudaDevAttrMemoryClockRate", 36) / 1000,
        "date": datetime.date.today().isoformat(),
    }


def device_attributes() -> dict:
    """The CUDA device attributes of GPU 0 that a profile is built from (ATTRIBUTES' keys, integers),
    with its `device` name and `compute_capability` ("9.0")."""
    cupy = require_gpu()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    out = {key: _attribute(cupy, attr, number) for key, (attr, number) in ATTRIBUTES.items()}
    return {"device": name, "compute_capability": f"{out.pop('cc_major')}.{out.pop('cc_minor')}", **out}


def _device_of(info) -> tuple[str, int]:
    """(name, SMs) of a device_info()-style dict; InputError when it has neither."""
    if not isinstance(info, dict):
        raise InputError(f"device info must be a dict with 'device' and 'sms', got {type(info).__name__}")
    name, sms = info.get("device"), info.get("sms")
    if not isinstance(name, str) or not name.strip():
        raise InputError(f"device info: 'device' must be the GPU's name, got {name!r}")
    if isinstance(sms, bool) or not isinstance(sms, int) or sms < 1:
        raise InputError(f"device info: 'sms' must be the GPU's SM count, got {sms!r}")
    return " ".join(name.split()), sms


def check_profile_device(profile, info: dict) -> None:
    """ProfileMismatch (one line) unless GPU profile `profile` describes the GPU of `info`
    (device_info(): its `device` name and `sms`), by name (up to case and spaces) and SM count."""
    name, sms = _device_of(info)
    if not profile.describes(name, sms):
        raise ProfileMismatch(
            f"profile {profile.name} describes {profile.device_name} with {profile.sms} SMs, not this "
            f"{name} with {sms} SMs: make this GPU's profile on it with `{MAKE_PROFILE}`")


def profile_for_device(info: dict, profiles=None) -> str:
    """The profile that describes the GPU of `info` (device_info(): its `device` name and `sms`).

    A profile matches when its [device] name is the GPU's name (up to case and spaces) AND its
    SM count is the GPU's. `profiles` are the names or .toml paths to look in (default: every
    shipped GPU profile); the one that matches is returned as given. ProfileMismatch, one line,
    when none matches (saying whether a profile of the same name has other SMs) or several do.
    """
    name, sms = _device_of(info)
    entries = available_profiles("gpu") if profiles is None else [str(p) for p in profiles]
    loaded = [(entry, load_profile(entry, kind="gpu")) for entry in entries]
    same_name = [(entry, p) for entry, p in loaded if p.describes(name, p.sms)]
    matches = [entry for entry, p in same_name if p.sms == sms]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise ProfileMismatch(f"profiles {', '.join(matches)} all describe {name} with {sms} SMs: name one explicitly")
    if same_name:
        entry, p = same_name[0]
        raise ProfileMismatch(
            f"profile {entry} describes {p.device_name} with {p.sms} SMs, but this {name} has {sms} SMs (another "
            f"model or a MIG slice): make its own profile on it with `{MAKE_PROFILE} --base {entry}`")
    known = "; ".join(f"{entry}: {p.device_name}, {p.sms} SMs" for entry, p in loaded) or "none"
    raise ProfileMismatch(f"no profile describes {name} with {sms} SMs (profiles: {known}): make one on it with "
                          f"`{MAKE_PROFILE}` (--base PROFILE of the same architecture for what the device "
                          "cannot report)")


def run_record(prog: str, argv=None) -> dict:
    """The provenance a microbenchmark's record starts with: the device's name and driver, today's date
    (UTC) and the command that ran (`prog` and `argv`, the process's own arguments when None)."""
    info = device_info()
    return {"device": info["device"], "driver": info["driver"],
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d"),
            "command": f"{prog} " + " ".join(sys.argv[1:] if argv is None else argv)}


def run_of(record: dict) -> dict:
    """The run a microbenchmark's record names (`run_record`'s device, driver, date and command): the
    provenance of the profile sections made from it."""
    return {key: record[key] for key in RUN_KEYS}


def measure_section(argv, prog: str, description: str, tables: tuple[str, ...], measure, values) -> int:
    """The command line of a microbenchmark that measures measured sections `tables` of a GPU profile
    (`opmachine.profile.MEASURED_SECTIONS`): `--gpu` (the profile giving the launch geometry), `--repeats`,
    `--write PROFILE.toml`. `measure(profile, repeats)` gives the record's measurements (a dict), `values(record)`
    the sections' values in `tables` order, which `--write` writes into that copy of the profile
    (`opmachine.profile.write_gpu_section`); with no `tables` (a measurement no profile section takes) there is
    no `--write`. Prints the record as JSON; exit 2 with one line on bad input or without a GPU."""
    from opmachine.profile import write_gpu_section

    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--gpu", default="h200", help="hardware profile giving the full-wave grid (default h200)")
    parser.add_argument("--repeats", type=int, default=7, help="timed launches per measurement (default 7)")
    if tables:
        parser.add_argument("--write", metavar="PROFILE.toml",
                            help="write the result into this copy of the --gpu profile as its "
                                 + " and ".join(f"[{table}]" for table in tables) + " section" + "s" * (len(tables) > 1))
    args = parser.parse_args(argv)
    if args.repeats < 1:
        print(f"error: --repeats must be at least 1, got {args.repeats}", file=sys.stderr)
        return 2
    try:
        profile = load_profile(args.gpu, kind="gpu")
        measured = measure(profile, args.repeats)
        record = {**run_record(prog, argv), **measured}
        if tables and args.write:
            for table, value in zip(tables, values(record)):
                profile = write_gpu_section(args.write, profile, table, value)
    except (GpuUnavailable, InputError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(record, indent=1))
    return 0


def recorded_run(folder, tables, what: str, command: str, keys=None):
    """An earlier run's folder read back for `--measured` (the model again, no GPU): its summary.json record,
    with `predict_command` set to `command` and each key of `keys` (key -> type) made that type, and the
    tables named in `tables` (file names under `folder`), in that order. One InputError line, naming the
    folder as not `what` run's, when any is missing or unreadable or a key's value is not of its type."""
    import pandas as pd

    try:
        record = json.loads((Path(folder) / "summary.json").read_text())
        frames = [pd.read_csv(Path(folder) / name) for name in tables]
        for key, kind in (keys or {}).items():
            record[key] = kind(record[key])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InputError(f"{folder}: not {what} run's folder ({error})") from None
    record["predict_command"] = command
    return record, frames
