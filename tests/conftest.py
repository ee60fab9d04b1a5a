"""Shared test set-up: tests marked `gpu` run only where CuPy sees a CUDA device."""
from __future__ import annotations

import pytest


def _gpu_reason() -> str | None:
    try:
        import cupy
    except ImportError:
        return "needs CuPy and an NVIDIA GPU (not installed here)"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "needs a CUDA GPU (none visible)"
    except Exception as error:  # noqa: BLE001 (no driver, or the runtime refuses)
        return f"needs a CUDA GPU ({type(error).__name__})"
    return None


def pytest_collection_modifyitems(config, items):
    marked = [item for item in items if "gpu" in item.keywords]
    if not marked:
        return
    reason = _gpu_reason()
    if reason:
        skip = pytest.mark.skip(reason=reason)
        for item in marked:
            item.add_marker(skip)
