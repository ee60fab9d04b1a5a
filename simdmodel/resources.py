"""Memory a graph will need, checked against what the machine has before anything is allocated.

A header or a generator spec states sizes before any array exists: a three-line Matrix Market
file may declare two billion vertices, `rmat:scale=31` two billion vertices and 34 billion
edges. Allocating them first gets the process killed by the kernel with no message; checking the
declared size first gives one line with the bytes needed and the bytes available.
"""
from __future__ import annotations

import os

from .errors import InputError

BYTES_PER_VERTEX = 48
"""CSR row pointer and degree counts while building (int64 each), then a BFS's levels, stamps and
queue (int32 each) and the analyses' per-vertex arrays."""
BYTES_PER_ENTRY = 24
"""An edge entry's source and destination while building, its CSR index and its duplicate mask."""


def available_bytes() -> int | None:
    """Memory the system can still give this process (Linux MemAvailable), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def graph_bytes(vertices: int, entries: int) -> int:
    """Bytes a graph of `vertices` and `entries` stored edge entries needs to be built and searched."""
    return BYTES_PER_VERTEX * (int(vertices) + 1) + BYTES_PER_ENTRY * int(entries)


def format_bytes(nbytes: float) -> str:
    """`nbytes` in B, KB, MB, GB or TB (powers of 1000), as the memory errors print it."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if nbytes < 1000 or unit == "TB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1000
    return f"{nbytes:.1f} TB"


def check_graph_fits(what: str, vertices: int, entries: int) -> None:
    """InputError naming `what` unless a graph of that size fits in the memory available now."""
    needed = graph_bytes(vertices, entries)
    available = available_bytes()
    if available is not None and needed > available:
        raise InputError(f"{what}: {vertices:,} vertices and {entries:,} edge entries need about "
                         f"{format_bytes(needed)} of memory, but {format_bytes(available)} is available")
