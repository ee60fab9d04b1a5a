"""The GPU this process runs on: a clear error when there is none, and what it is (for provenance).

CuPy is imported here, lazily, and nowhere at package import: `simdmodel` and `opmachine` work on
machines without CUDA.
"""
from __future__ import annotations

import datetime
import re
import shutil
import subprocess

from simdmodel.errors import InputError


class GpuUnavailable(InputError):
    """No CuPy, or no CUDA device it can use."""


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


def profile_name_for(device_name: str) -> str | None:
    """The shipped opmachine profile that describes this device (h100, h200), if any."""
    for profile in ("h200", "h100"):
        if profile in device_name.lower():
            return profile
    return None


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
