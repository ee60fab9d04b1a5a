"""The CUDA C sources of the modelled kernels (package data) compiled with cupy.RawModule.

One source file per kernel (`cuda/<name>.cu`, sharing `bfs_common.cuh`), built twice on demand:
plain for timing and Nsight Compute, and with `-DCOUNT_LANES=1` for the lane and job counters.
`sm-S` is a template instantiated for the group sizes asked for.
"""
from __future__ import annotations

import functools
import importlib.resources
from pathlib import Path

SOURCES = {"topo": "topo.cu", "group": "group.cu", "ws": "ws.cu", "scan": "scan.cu", "compact": "compact.cu",
           "hold": "hold.cu", "empty": "hold.cu"}
FUNCTIONS = {"topo": "bfs_topo", "ws": "bfs_expand_ws", "scan": "bfs_expand_scan", "compact": "bfs_compact",
             "hold": "hold_until", "empty": "empty_launch"}


def cuda_dir() -> Path:
    """The folder holding the .cu / .cuh sources."""
    return Path(str(importlib.resources.files("gpu_validate").joinpath("cuda")))


def source_text(name: str) -> str:
    return (cuda_dir() / SOURCES[name]).read_text(encoding="utf-8")


def compile_options(instrumented: bool) -> tuple[str, ...]:
    return ("-std=c++17", f"-I{cuda_dir()}", f"-DCOUNT_LANES={int(instrumented)}", "-lineinfo")


@functools.cache
def _module(name: str, instrumented: bool, group_sizes: tuple[int, ...]):
    import cupy

    expressions = [f"bfs_expand_group<{s}>" for s in group_sizes] if name == "group" else None
    return cupy.RawModule(code=source_text(name), options=compile_options(instrumented),
                          name_expressions=expressions)


def function(name: str, instrumented: bool = False, group_size: int | None = None):
    """The compiled kernel `name` (a SOURCES key); `group_size` picks the sm-S instantiation."""
    if name == "group":
        return _module("group", instrumented, (group_size,)).get_function(f"bfs_expand_group<{group_size}>")
    return _module(name, instrumented, ()).get_function(FUNCTIONS[name])
