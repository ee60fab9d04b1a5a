"""A CPU profile (seed 003 §4-5): cache levels with their service times, then memory."""
from __future__ import annotations

from dataclasses import dataclass

from .schema import Checker, describe

__all__ = ["CPUProfile", "CacheLevel", "parse_cpu"]


@dataclass(frozen=True)
class CacheLevel:
    """One CPU cache level of seed 003 §4-5: capacity, associativity and service time (MLP 1)."""

    name: str
    bytes: int
    ways: int
    service_ns: float


@dataclass(frozen=True)
class CPUProfile:
    """A CPU for the operator machine (seed 003 §4-5): cache levels in order L1, L2, ..., then memory."""

    name: str
    description: str
    path: str
    clock_ghz: float
    line_bytes: int
    levels: tuple[CacheLevel, ...]
    memory_ns: float
    measured: bool
    provenance: dict[str, str]


CPU_TOP_KEYS = ("name", "kind", "description", "hardware", "levels", "memory", "service")


def parse_cpu(check: Checker, doc: dict, name: str, description: str, where: str) -> CPUProfile:
    """The CPUProfile of a parsed TOML document whose top-level keys `check` has already checked."""
    hardware = check.table(doc["hardware"], "hardware")
    service = check.table(doc["service"], "service")
    levels = doc["levels"]
    check.keys(hardware, "hardware", ("clock_ghz", "line_bytes"))
    clock_ghz = check.number(hardware["clock_ghz"], "hardware.clock_ghz")
    line_bytes = check.positive_int(hardware["line_bytes"], "hardware.line_bytes")
    if not isinstance(levels, list) or not levels:
        check.fail("levels", f"must be a non-empty array of tables ([[levels]]), got {describe(levels)}")
    parsed: list[CacheLevel] = []
    for i, level in enumerate(levels):
        key = f"levels[{i}]"
        level = check.table(level, key)
        check.keys(level, key, ("name", "bytes", "ways", "service_ns"))
        item = CacheLevel(
            name=check.string(level["name"], f"{key}.name"),
            bytes=check.positive_int(level["bytes"], f"{key}.bytes"),
            ways=check.positive_int(level["ways"], f"{key}.ways"),
            service_ns=check.number(level["service_ns"], f"{key}.service_ns"),
        )
        if item.bytes % (item.ways * line_bytes):
            check.fail(f"{key}.bytes",
                       f"{item.bytes} is not a multiple of ways x line_bytes = {item.ways * line_bytes}")
        if parsed and item.bytes <= parsed[-1].bytes:
            check.fail(f"{key}.bytes", f"{item.bytes} must be larger than levels[{i - 1}].bytes = {parsed[-1].bytes}")
        if any(item.name == other.name for other in parsed):
            check.fail(f"{key}.name", f"{item.name!r} appears twice")
        parsed.append(item)
    memory = check.table(doc["memory"], "memory")
    check.keys(memory, "memory", ("service_ns",))
    memory_ns = check.number(memory["service_ns"], "memory.service_ns")
    measured, provenance = check.service(service, (), run_required=False)
    return CPUProfile(name=name, description=description, path=where, clock_ghz=clock_ghz, line_bytes=line_bytes,
                      levels=tuple(parsed), memory_ns=memory_ns, measured=measured, provenance=provenance)
