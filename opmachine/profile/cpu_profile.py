"""A CPU profile (seed 003 §4-5): cache levels with their service times, then memory; and, where the
profile was measured on its machine, the measured costs of Listing 1's loop (`[loop]`, `LoopCosts`) and
of its multi-threaded form (`[parallel_loop]`)."""
from __future__ import annotations

from dataclasses import dataclass

from .schema import Checker, describe

__all__ = ["CPUProfile", "CacheLevel", "LoopCosts", "parse_cpu"]


@dataclass(frozen=True)
class CacheLevel:
    """One CPU cache level of seed 003 §4-5: capacity, associativity and service time (MLP 1)."""

    name: str
    bytes: int
    ways: int
    service_ns: float


@dataclass(frozen=True)
class LoopCosts:
    """What each event of Listing 1's loop costs on one core, in ns, measured by running the compiled
    loop itself on synthetic inputs (`opmachine.cpu.loop_costs`): the out-of-order overlap and the
    prefetching the machine achieves are inside each figure, none is assumed.

    - `call_ns`: one round's fixed cost (calling the compiled round and timing it);
    - `scan_ns`: one node's level test that fails (the sequential NF1 stream);
    - `vertex_ns`: a frontier node's extra work with no edges (ERL loads, loop set-up);
    - `branch_ns`: one mispredicted branch of the node loop (frontier test, inner-loop exit);
    - `gather_ns`: one edge (EDL stream, NF2 load and test) whose level load is served at each cache
      level and memory, L1 first: the memory-level parallelism of independent loads is inside;
    - `store_ns`: an edge's extra cost when it stores (OP), over `gather_ns`;
    - `store_branch_ns`: one mispredicted "unvisited?" branch, which waits for its level load;
    - `threads`: None for the serial loop (`[loop]`). For the multi-threaded loop (`[parallel_loop]`)
      every cost is one thread's, measured on one thread (numba compiles the body of a `prange` loop
      apart, and it runs slower than the serial loop), but `call_ns`: a round's fixed cost on this
      many threads (waking them and waiting for the last).
    """

    call_ns: float
    scan_ns: float
    vertex_ns: float
    branch_ns: float
    gather_ns: tuple[float, ...]
    store_ns: float
    store_branch_ns: float
    threads: int | None = None


LOOP_KEYS = ("call_ns", "scan_ns", "vertex_ns", "branch_ns", "gather_ns", "store_ns", "store_branch_ns")


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
    loop: LoopCosts | None = None
    parallel_loop: LoopCosts | None = None
    chains: tuple[int, ...] = ()
    chains_ns: dict[str, tuple[float, ...]] | None = None

    def achieved_mlp(self) -> dict[str, float] | None:
        """Per level and memory, the most loads the core overlaps: S(1) / min_k S(k) of `[mlp]`."""
        if not self.chains_ns:
            return None
        return {name: values[0] / min(values) for name, values in self.chains_ns.items()}


CPU_TOP_KEYS = ("name", "kind", "description", "hardware", "levels", "memory", "service")
CPU_OPTIONAL_KEYS = ("loop", "parallel_loop", "mlp")


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
    loop = _parse_loop(check, doc["loop"], "loop", len(parsed) + 1) if "loop" in doc else None
    parallel = _parse_loop(check, doc["parallel_loop"], "parallel_loop", len(parsed) + 1) if "parallel_loop" in doc else None
    chains, chains_ns = _parse_mlp(check, doc["mlp"], [level.name for level in parsed]) if "mlp" in doc else ((), None)
    return CPUProfile(name=name, description=description, path=where, clock_ghz=clock_ghz, line_bytes=line_bytes,
                      levels=tuple(parsed), memory_ns=memory_ns, measured=measured, provenance=provenance,
                      loop=loop, parallel_loop=parallel, chains=chains, chains_ns=chains_ns)


def _parse_mlp(check: Checker, table, level_names: list[str]) -> tuple[tuple[int, ...], dict[str, tuple[float, ...]]]:
    """`[mlp]`: `chains` (ascending counts of independent chases, from 1) and, per level and `memory`,
    ns per load at each count."""
    table = check.table(table, "mlp")
    names = [*level_names, "memory"]
    check.keys(table, "mlp", ("chains", *names))
    chains = table["chains"]
    if (not isinstance(chains, list) or not chains or chains[0] != 1
            or any(isinstance(k, bool) or not isinstance(k, int) for k in chains)
            or any(b <= a for a, b in zip(chains, chains[1:]))):
        check.fail("mlp.chains", f"must be ascending whole numbers from 1, got {describe(chains)}")
    out = {}
    for name in names:
        values = table[name]
        if not isinstance(values, list) or len(values) != len(chains):
            check.fail(f"mlp.{name}", f"must be an array of {len(chains)} numbers (one per chain count), "
                                      f"got {describe(values)}")
        out[name] = tuple(check.number(value, f"mlp.{name}[{i}]") for i, value in enumerate(values))
    return tuple(chains), out


def _parse_loop(check: Checker, table, key: str, servers: int) -> LoopCosts:
    """`[loop]` or `[parallel_loop]` (which adds `threads`): every cost > 0 but `call_ns` and `store_ns`
    (>= 0); `gather_ns` one per cache level and memory."""
    table = check.table(table, key)
    parallel = key == "parallel_loop"
    check.keys(table, key, LOOP_KEYS + (("threads",) if parallel else ()))
    gather = table["gather_ns"]
    if not isinstance(gather, list) or len(gather) != servers:
        check.fail(f"{key}.gather_ns", f"must be an array of {servers} numbers (each cache level, then memory), "
                                       f"got {describe(gather)}")
    return LoopCosts(
        call_ns=check.number(table["call_ns"], f"{key}.call_ns", allow_zero=True),
        scan_ns=check.number(table["scan_ns"], f"{key}.scan_ns"),
        vertex_ns=check.number(table["vertex_ns"], f"{key}.vertex_ns"),
        branch_ns=check.number(table["branch_ns"], f"{key}.branch_ns"),
        gather_ns=tuple(check.number(value, f"{key}.gather_ns[{i}]") for i, value in enumerate(gather)),
        store_ns=check.number(table["store_ns"], f"{key}.store_ns", allow_zero=True),
        store_branch_ns=check.number(table["store_branch_ns"], f"{key}.store_branch_ns"),
        threads=check.positive_int(table["threads"], f"{key}.threads") if parallel else None,
    )
