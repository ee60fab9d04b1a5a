"""Hardware profiles: the machine parameters and service curves S(m) of seed 003 §5 and §6.5.

A profile is a TOML file, one per machine (`opmachine/profiles/NAME.toml`). A GPU profile holds the
numbers the operator machine needs (warp size, physical warps, L2 and row-buffer geometry, clocks,
bandwidths) and the service time per memory request as a function of memory-level parallelism,
S(m), for L2 hits and DRAM row-buffer hits and misses (seed 003 §6.5, Eq. 4). A CPU profile holds
the cache hierarchy and per-level service times of seed 003 §5. Every key is checked on load; a
mistake raises `ProfileError`, one line naming the profile and the key.
"""
from __future__ import annotations

import importlib.resources
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simdmodel.atomic import write_text
from simdmodel.errors import InputError

__all__ = [
    "CURVE_NAMES",
    "CPUProfile",
    "CacheLevel",
    "Curve",
    "GPUProfile",
    "ProfileError",
    "ProfileKindError",
    "available_profiles",
    "closed_queue_curve",
    "load_profile",
    "write_gpu_curves",
]

SERVER_CURVES = ("l2_hit", "row_hit", "row_miss", "dram")
"""Server classes of the GPU memory model (seed 003 Fig. 5); `dram` stands for a profile without the row split."""
ONE_WARP_CURVES = tuple(f"{name}_one_warp" for name in SERVER_CURVES)
"""Optional: S(m) of each class when all m requests come from one warp's load (m = its distinct sectors,
1..32), so m x S(m) is the latency of a warp-level load of m sectors: the critical-path time of one job."""
SAME_SECTOR_CURVE = "l2_same"
"""Optional: S(m) of L2 hits that all go to one sector (one L2 slice serves them all), such as every
warp's re-read of `num_nodes`: the hot sector's own bandwidth limit."""
CURVE_NAMES = SERVER_CURVES + ONE_WARP_CURVES + (SAME_SECTOR_CURVE,)

PROVENANCE_KEYS = ("provenance", "device", "driver", "date", "command")

_GPU_INT_KEYS = (
    "warp_size", "sms", "max_warps_per_sm", "max_blocks_per_sm", "max_threads_per_block",
    "l1_bytes", "l2_bytes", "l2_ways", "l2_line_bytes", "sector_bytes", "dram_block_bytes", "row_buffers",
)
_GPU_FLOAT_KEYS = ("clock_mhz", "dram_bandwidth_gbs", "l2_bandwidth_gbs", "launch_overhead_ns")
# Optional [hardware] keys (default 0): grid_scan_ns, the cost of a compaction's grid-wide prefix sum
# beyond the launch overhead (it has no loads or stores, so the memory machine does not see it).
_GPU_OPTIONAL_FLOAT_KEYS = ("grid_scan_ns",)
_MAX_INT = 2**62  # sizes feed int64 arrays and numba kernels downstream
_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")


class ProfileError(InputError):
    """A profile that cannot be used: message `profile NAME: what is wrong`, on one line."""

    def __init__(self, profile: str, message: str):
        self.profile = str(profile)
        self.reason = message
        super().__init__(_one_line(f"profile {self.profile}: {message}"))


class ProfileKindError(ProfileError):
    """A GPU profile given where a CPU profile is needed, or the other way round."""

    def __init__(self, profile: str, kind: str, wanted: str):
        self.profile = str(profile)
        self.kind = kind
        self.wanted = wanted
        self.reason = f"is a {kind} profile"
        message = f"profile {profile} is a {kind} profile; --{wanted} needs a {wanted} profile"
        InputError.__init__(self, _one_line(message))


def _one_line(text: str) -> str:
    return text.replace("\r", " ").replace("\n", " ")


# ----------------------------------------------------------------------------------------------
# Service curves


@dataclass(frozen=True, eq=False)
class Curve:
    """Service time per request S(m) in ns at memory-level parallelism m (seed 003 §6.5, Fig. 6).

    `mlp` is strictly increasing and > 0; `ns` is > 0 and never increases with m (more requests in
    flight never make one request slower). Between sample points S is linear in log(m); outside
    them it is clamped to the end values. Both arrays are float64 copies and read-only.
    """

    mlp: np.ndarray
    ns: np.ndarray

    def __post_init__(self):
        try:
            mlp = np.array(self.mlp, dtype=np.float64)
            ns = np.array(self.ns, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise InputError("service curve: mlp and ns must be arrays of numbers") from None
        problem = _curve_problem(mlp, ns)
        if problem is not None:
            raise InputError(f"service curve: {problem}")
        mlp.flags.writeable = False
        ns.flags.writeable = False
        object.__setattr__(self, "mlp", mlp)
        object.__setattr__(self, "ns", ns)
        object.__setattr__(self, "_log_mlp", np.log(mlp))

    def __call__(self, m: float | np.ndarray) -> float | np.ndarray:
        """S(m) in ns for MLP `m` (a number or an array of them, each > 0)."""
        try:
            m_arr = np.asarray(m, dtype=np.float64)
        except (TypeError, ValueError):
            raise InputError(f"service curve: MLP must be a number, got {m!r}") from None
        if not np.all(m_arr > 0):  # also catches NaN
            bad = m_arr[~(m_arr > 0)] if m_arr.ndim else m_arr
            raise InputError(f"service curve: MLP must be > 0, got {float(np.ravel(bad)[0])!r}")
        out = np.interp(np.log(m_arr), self._log_mlp, self.ns)
        return float(out) if np.ndim(out) == 0 else out

    def __eq__(self, other):
        if not isinstance(other, Curve):
            return NotImplemented
        return np.array_equal(self.mlp, other.mlp) and np.array_equal(self.ns, other.ns)

    __hash__ = None

    def __repr__(self):
        return f"Curve(mlp={self.mlp.tolist()}, ns={self.ns.tolist()})"


def _curve_problem(mlp: np.ndarray, ns: np.ndarray) -> str | None:
    """What is wrong with a sampled curve, or None (the rules of the profile schema)."""
    if mlp.ndim != 1 or ns.ndim != 1:
        return "mlp and ns must be flat arrays"
    if len(mlp) != len(ns):
        return f"mlp has {len(mlp)} points but ns has {len(ns)}"
    if len(mlp) < 2:
        return f"needs at least 2 points, got {len(mlp)}"
    for label, values in (("mlp", mlp), ("ns", ns)):
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            return f"{label}[{bad[0]}] must be finite, got {values[bad[0]]!r}"
        bad = np.flatnonzero(values <= 0)
        if bad.size:
            return f"{label}[{bad[0]}] must be > 0, got {_num(values[bad[0]])}"
    bad = np.flatnonzero(np.diff(mlp) <= 0)
    if bad.size:
        i = bad[0] + 1
        return f"mlp must be strictly increasing (mlp[{i}] = {_num(mlp[i])} after {_num(mlp[i - 1])})"
    bad = np.flatnonzero(np.diff(ns) > 0)
    if bad.size:
        i = bad[0] + 1
        return (f"ns must not increase with mlp (ns[{i}] = {_num(ns[i])} after {_num(ns[i - 1])}): "
                "more requests in flight never make one slower")
    return None


def _num(x) -> str:
    return f"{float(x):g}"


def closed_queue_curve(latency_ns: float, peak_requests_per_ns: float, mlp=None) -> Curve:
    """S(m) = max(latency_ns / m, 1 / peak_requests_per_ns), sampled at `mlp` (default 1, 2, 4, ... 2**18).

    The latency/throughput form of a closed queue (seed 003 §6.5, §7.3): with m requests in flight
    a server that answers one in `latency_ns` completes m per latency, until its peak rate caps it.
    This is how the shipped, not yet measured, curves were derived. Values are rounded to 6
    significant digits, which keeps them non-increasing.
    """
    if not all(x > 0 and math.isfinite(x) for x in (latency_ns, peak_requests_per_ns)):
        raise InputError("closed_queue_curve: latency_ns and peak_requests_per_ns must be finite and > 0")
    mlp = np.asarray(2.0 ** np.arange(19) if mlp is None else mlp, dtype=np.float64)
    ns = np.maximum(latency_ns / mlp, 1.0 / peak_requests_per_ns)
    ns = np.array([float(f"{x:.6g}") for x in ns])
    return Curve(mlp, ns)


# ----------------------------------------------------------------------------------------------
# Profiles


@dataclass(frozen=True)
class GPUProfile:
    """A GPU for the operator machine (seed 003 §6): geometry, clocks, bandwidths and S(m) per server class."""

    name: str
    description: str
    path: str
    warp_size: int
    sms: int
    max_warps_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    l1_bytes: int
    l2_bytes: int
    l2_ways: int
    l2_line_bytes: int
    sector_bytes: int
    dram_block_bytes: int
    row_buffers: int
    clock_mhz: float
    dram_bandwidth_gbs: float
    l2_bandwidth_gbs: float
    launch_overhead_ns: float
    grid_scan_ns: float
    curves: dict[str, Curve]
    measured: bool
    provenance: dict[str, str]

    @property
    def physical_warps(self) -> int:
        """Warps resident at once on the whole GPU: 960 on the K40c (seed 003 §6.5)."""
        return self.sms * self.max_warps_per_sm

    @property
    def has_row_split(self) -> bool:
        """True when DRAM is split into row-buffer hits and misses (seed 003 §6.4), False for one `dram` curve."""
        return "row_hit" in self.curves

    def blocks_per_sm(self, block_threads: int) -> int:
        """Blocks of `block_threads` threads resident on one SM, limited by warps and blocks per SM.

        Registers and shared memory are ignored (the BFS kernels use little of either), so this is
        the occupancy upper bound; the load n of seed 003 §6.5 can only be lower.
        """
        block_threads = self._check_block(block_threads)
        warps_per_block = -(-block_threads // self.warp_size)
        return min(self.max_blocks_per_sm, self.max_warps_per_sm // warps_per_block)

    def full_wave_grid(self, block_threads: int) -> int:
        """Blocks in one full wave: sms x blocks_per_sm(block_threads), the grid that fills the GPU once."""
        return self.sms * self.blocks_per_sm(block_threads)

    def _check_block(self, block_threads) -> int:
        if isinstance(block_threads, bool) or not isinstance(block_threads, (int, np.integer)):
            raise InputError(f"block size must be an integer, got {block_threads!r}")
        block_threads = int(block_threads)
        if not 1 <= block_threads <= self.max_threads_per_block:
            raise InputError(f"block size {block_threads} outside 1..{self.max_threads_per_block} on {self.name}")
        return block_threads


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


# ----------------------------------------------------------------------------------------------
# Loading


def _profiles_dir():
    return importlib.resources.files(__package__).joinpath("profiles")


def available_profiles(kind: str | None = None) -> list[str]:
    """Names of the profiles shipped in `opmachine/profiles/`, sorted; only those of `kind` if given."""
    kind = _check_kind(kind)
    names = sorted(entry.name[:-5] for entry in _profiles_dir().iterdir()
                   if entry.name.endswith(".toml") and entry.is_file())
    if kind is None:
        return names
    return [name for name in names if _kind_of(load_profile(name)) == kind]


def load_profile(name_or_path, kind: str | None = None) -> GPUProfile | CPUProfile:
    """Load a profile: a bare name from the shipped `profiles/`, or a path to a `.toml` file.

    `kind` ("gpu" or "cpu") requires that kind of profile. Every key is checked; any problem
    raises ProfileError with one line naming the profile and the key.
    """
    kind = _check_kind(kind)
    if isinstance(name_or_path, Path):
        name_or_path = str(name_or_path)
    if not isinstance(name_or_path, str) or not name_or_path:
        raise InputError(f"profile must be a name or a path to a .toml file, got {name_or_path!r}")
    if name_or_path.endswith(".toml") or "/" in name_or_path or "\\" in name_or_path:
        label = name_or_path
        path = Path(name_or_path)
        if path.suffix != ".toml":
            raise ProfileError(label, "a profile file must end in .toml")
        if not path.exists():
            raise ProfileError(label, "no such file")
        if path.is_dir():
            raise ProfileError(label, "is a directory")
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ProfileError(label, f"cannot read: {error.strerror or error}") from None
        where = str(path)
    else:
        label = name_or_path
        resource = _profiles_dir().joinpath(f"{name_or_path}.toml")
        if not _NAME_RE.match(name_or_path) or not resource.is_file():
            names = ", ".join(available_profiles()) or "none"
            raise ProfileError(label, f"no such profile (available: {names})")
        data = resource.read_bytes()
        where = str(resource)
    profile = parse_profile_bytes(data, label, where)
    if kind is not None and _kind_of(profile) != kind:
        raise ProfileKindError(profile.name, _kind_of(profile), kind)
    return profile


def _check_kind(kind):
    if kind not in (None, "gpu", "cpu"):
        raise InputError(f"profile kind must be 'gpu' or 'cpu', got {kind!r}")
    return kind


def _kind_of(profile) -> str:
    return "gpu" if isinstance(profile, GPUProfile) else "cpu"


def parse_profile_bytes(data: bytes, label: str, where: str) -> GPUProfile | CPUProfile:
    """Parse and validate profile file contents; `label` names it in errors, `where` is its path."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ProfileError(label, f"not UTF-8 text (byte {error.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(label, f"TOML syntax error: {error}") from None
    except (ValueError, RecursionError) as error:  # e.g. an integer literal too long for int()
        raise ProfileError(label, f"TOML syntax error: {type(error).__name__}: {error}") from None
    return _parse_doc(doc, label, where)


class _Checker:
    """Typed access to one TOML table, raising ProfileError with the dotted key on any problem."""

    def __init__(self, label: str):
        self.label = label

    def fail(self, key: str, message: str):
        raise ProfileError(self.label, f"{key}: {message}" if key else message)

    def keys(self, table: dict, prefix: str, required, optional=()):
        for key in table:
            if key not in required and key not in optional:
                known = ", ".join(list(required) + list(optional))
                self.fail(_join(prefix, key), f"unknown key (known{' in ' + prefix if prefix else ''}: {known})")
        for key in required:
            if key not in table:
                self.fail(_join(prefix, key), "missing key")

    def table(self, value, key) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"must be a table, got {_describe(value)}")
        return value

    def string(self, value, key) -> str:
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {_describe(value)}")
        if not value.strip():
            self.fail(key, "must not be empty")
        return value

    def boolean(self, value, key) -> bool:
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {_describe(value)}")
        return value

    def positive_int(self, value, key) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {_describe(value)}")
        if value <= 0:
            self.fail(key, f"must be > 0, got {value}")
        if value > _MAX_INT:
            self.fail(key, f"is too large ({value} > 2**62)")
        return value

    def number(self, value, key, allow_zero=False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"must be a number, got {_describe(value)}")
        try:
            value = float(value)
        except OverflowError:
            self.fail(key, "is too large")
        if not math.isfinite(value):
            self.fail(key, f"must be finite, got {value}")
        if value < 0 or (value == 0 and not allow_zero):
            self.fail(key, f"must be {'>= 0' if allow_zero else '> 0'}, got {value:g}")
        return value

    def curve(self, value, key) -> Curve:
        table = self.table(value, key)
        self.keys(table, key, ("mlp", "ns"))
        arrays = []
        for part in ("mlp", "ns"):
            items = table[part]
            if not isinstance(items, list):
                self.fail(f"{key}.{part}", f"must be an array of numbers, got {_describe(items)}")
            values = []
            for i, item in enumerate(items):
                if isinstance(item, bool) or not isinstance(item, (int, float)):
                    self.fail(f"{key}.{part}[{i}]", f"must be a number, got {_describe(item)}")
                try:
                    values.append(float(item))
                except OverflowError:
                    self.fail(f"{key}.{part}[{i}]", "is too large")
            arrays.append(np.array(values, dtype=np.float64))
        problem = _curve_problem(*arrays)
        if problem is not None:
            self.fail(key, problem)
        return Curve(*arrays)


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _describe(value) -> str:
    kinds = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    kind = kinds.get(type(value), type(value).__name__.replace("datetime", "date-time"))
    if isinstance(value, (list, dict)):
        return f"{'an' if kind == 'array' else 'a'} {kind}"
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"


def _parse_doc(doc: dict, label: str, where: str) -> GPUProfile | CPUProfile:
    check = _Checker(label)
    if "kind" not in doc:
        check.fail("kind", "missing key (kind = \"gpu\" or \"cpu\")")
    kind = doc["kind"]
    if kind not in ("gpu", "cpu"):
        check.fail("kind", f"must be \"gpu\" or \"cpu\", got {_describe(kind)}")
    if kind == "gpu":
        check.keys(doc, "", ("name", "kind", "description", "hardware", "service"))
    else:
        check.keys(doc, "", ("name", "kind", "description", "hardware", "levels", "memory", "service"))
    name = check.string(doc["name"], "name")
    if not _NAME_RE.match(name):
        check.fail("name", f"must be letters, digits, '_', '.', '+' or '-', got {name!r}")
    description = check.string(doc["description"], "description")
    hardware = check.table(doc["hardware"], "hardware")
    service = check.table(doc["service"], "service")
    if kind == "gpu":
        return _parse_gpu(check, name, description, where, hardware, service)
    return _parse_cpu(check, name, description, where, hardware, doc["levels"], doc["memory"], service)


def _parse_service(check: _Checker, service: dict, curve_names) -> tuple[bool, dict[str, str]]:
    check.keys(service, "service", ("measured", "provenance"), PROVENANCE_KEYS[1:] + tuple(curve_names))
    measured = check.boolean(service["measured"], "service.measured")
    provenance = {}
    for key in PROVENANCE_KEYS:
        if key in service:
            if key != "provenance" and not measured:
                check.fail(f"service.{key}", "only belongs to a measured profile (measured = true)")
            provenance[key] = check.string(service[key], f"service.{key}")
    return measured, provenance


def _parse_gpu(check, name, description, where, hardware, service) -> GPUProfile:
    check.keys(hardware, "hardware", _GPU_INT_KEYS + _GPU_FLOAT_KEYS, _GPU_OPTIONAL_FLOAT_KEYS)
    values = {key: check.positive_int(hardware[key], f"hardware.{key}") for key in _GPU_INT_KEYS}
    for key in _GPU_FLOAT_KEYS:
        values[key] = check.number(hardware[key], f"hardware.{key}", allow_zero=key == "launch_overhead_ns")
    for key in _GPU_OPTIONAL_FLOAT_KEYS:
        values[key] = check.number(hardware.get(key, 0.0), f"hardware.{key}", allow_zero=True)
    set_bytes = values["l2_ways"] * values["l2_line_bytes"]
    if values["l2_bytes"] % set_bytes:
        check.fail("hardware.l2_bytes",
                   f"{values['l2_bytes']} is not a multiple of l2_ways x l2_line_bytes = {set_bytes}")
    for key in ("l2_line_bytes", "dram_block_bytes"):
        if values[key] % values["sector_bytes"]:
            check.fail(f"hardware.{key}", f"{values[key]} is not a multiple of sector_bytes = {values['sector_bytes']}")
    sm_threads = values["max_warps_per_sm"] * values["warp_size"]
    if values["max_threads_per_block"] > sm_threads:
        check.fail("hardware.max_threads_per_block",
                   f"{values['max_threads_per_block']} exceeds max_warps_per_sm x warp_size = {sm_threads}")

    measured, provenance = _parse_service(check, service, CURVE_NAMES)
    curves = {key: check.curve(service[key], f"service.{key}") for key in CURVE_NAMES if key in service}
    if "l2_hit" not in curves:
        check.fail("service.l2_hit", "missing key (a GPU profile needs an L2-hit curve)")
    split = [key for key in ("row_hit", "row_miss") if key in curves]
    if "dram" in curves and split:
        check.fail(f"service.{split[0]}", "a profile has either row_hit and row_miss, or dram, not both")
    if len(split) == 1:
        other = "row_miss" if split[0] == "row_hit" else "row_hit"
        check.fail(f"service.{other}", f"missing key (service.{split[0]} needs it)")
    if "dram" not in curves and not split:
        check.fail("service", "needs row_hit and row_miss curves, or one dram curve")
    for key in ONE_WARP_CURVES:
        if key in curves and key.removesuffix("_one_warp") not in curves:
            check.fail(f"service.{key}", f"no service.{key.removesuffix('_one_warp')} curve for it to refine")
    return GPUProfile(name=name, description=description, path=where, **values, curves=curves,
                      measured=measured, provenance=provenance)


def _parse_cpu(check, name, description, where, hardware, levels, memory, service) -> CPUProfile:
    check.keys(hardware, "hardware", ("clock_ghz", "line_bytes"))
    clock_ghz = check.number(hardware["clock_ghz"], "hardware.clock_ghz")
    line_bytes = check.positive_int(hardware["line_bytes"], "hardware.line_bytes")
    if not isinstance(levels, list) or not levels:
        check.fail("levels", f"must be a non-empty array of tables ([[levels]]), got {_describe(levels)}")
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
    memory = check.table(memory, "memory")
    check.keys(memory, "memory", ("service_ns",))
    memory_ns = check.number(memory["service_ns"], "memory.service_ns")
    measured, provenance = _parse_service(check, service, ())
    return CPUProfile(name=name, description=description, path=where, clock_ghz=clock_ghz, line_bytes=line_bytes,
                      levels=tuple(parsed), memory_ns=memory_ns, measured=measured, provenance=provenance)


# ----------------------------------------------------------------------------------------------
# Writing measured curves


def write_gpu_curves(path, base_profile: GPUProfile, curves: dict[str, tuple[list, list]],
                     provenance: dict[str, str], comment: str | None = None,
                     hardware_notes: dict[str, str] | None = None) -> None:
    """Write a GPU profile with `base_profile`'s hardware and new measured S(m) curves (seed 003 §6.5).

    `curves` maps server class (l2_hit, and row_hit + row_miss or dram; optionally their `_one_warp`
    curves and `l2_same`) to (mlp, ns) samples;
    `provenance` needs provenance, device, driver, date and command. Optional `comment` (lines of
    text, e.g. how the curves were measured) goes under the header as `#` lines, and
    `hardware_notes` maps [hardware] keys to a note written after the value (where the number
    comes from). The text is checked by loading it back before it is written, atomically, to
    `path` (a .toml file).
    """
    if not isinstance(base_profile, GPUProfile):
        raise InputError(f"write_gpu_curves needs a GPUProfile, got {type(base_profile).__name__}")
    label = str(path)
    if Path(label).suffix != ".toml":
        raise ProfileError(label, "a profile file must end in .toml")
    if not isinstance(curves, dict) or not isinstance(provenance, dict):
        raise InputError("write_gpu_curves: curves and provenance must be dicts")
    for key in curves:
        if key not in CURVE_NAMES:
            raise ProfileError(label, f"service.{key}: unknown curve (known: {', '.join(CURVE_NAMES)})")
    for key in provenance:
        if key not in PROVENANCE_KEYS:
            raise ProfileError(label, f"service.{key}: unknown provenance key (known: {', '.join(PROVENANCE_KEYS)})")
    for key in PROVENANCE_KEYS:
        value = provenance.get(key)
        if not isinstance(value, str) or not value.strip():
            raise ProfileError(label, f"service.{key}: a measured profile needs it as a non-empty string")
    sampled: dict[str, Curve] = {}
    for key in CURVE_NAMES:
        if key in curves:
            try:
                mlp, ns = curves[key]
                sampled[key] = Curve(mlp, ns)
            except (TypeError, ValueError) as error:
                reason = str(error).removeprefix("service curve: ")
                raise ProfileError(label, f"service.{key}: {reason}") from None

    notes = dict(hardware_notes or {})
    for key in notes:
        if key not in _GPU_INT_KEYS + _GPU_FLOAT_KEYS + _GPU_OPTIONAL_FLOAT_KEYS:
            raise ProfileError(label, f"hardware.{key}: note for an unknown key")
    b = base_profile
    lines = [f"# GPU profile {b.name}: the hardware of {b.name}, service curves S(m) measured on the device below."]
    lines += [_toml_comment(text, label) for text in (comment or "").splitlines()]
    lines += [
        f"name = {toml_string(b.name, label)}",
        'kind = "gpu"',
        f"description = {toml_string(b.description, label)}",
        "",
        "[hardware]",
    ]
    values = [(key, str(int(getattr(b, key)))) for key in _GPU_INT_KEYS]
    values += [(key, repr(float(getattr(b, key)))) for key in _GPU_FLOAT_KEYS + _GPU_OPTIONAL_FLOAT_KEYS]
    lines += [f"{key} = {value}" + (f"   {_toml_comment(notes[key], label)}" if key in notes else "")
              for key, value in values]
    lines += ["", "[service]", "measured = true"]
    lines += [f"{key} = {toml_string(provenance[key], label)}" for key in PROVENANCE_KEYS]
    for key, curve in sampled.items():
        lines += ["", f"[service.{key}]",
                  f"mlp = [{', '.join(_toml_number(x) for x in curve.mlp)}]",
                  f"ns = [{', '.join(_toml_number(x) for x in curve.ns)}]"]
    text = "\n".join(lines) + "\n"
    parse_profile_bytes(text.encode("utf-8"), label, label)  # never write a file that does not load
    write_text(path, text)


def _toml_comment(text: str, label: str) -> str:
    """One `# text` comment line; TOML comments may hold no control character but tab."""
    if any((ord(ch) < 0x20 and ch != "\t") or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF for ch in text):
        raise ProfileError(label, f"comment {text[:40]!r} holds a character a TOML comment cannot")
    return f"# {text}".rstrip()


def toml_string(value: str, label: str) -> str:
    """A TOML basic string: quotes, backslashes and control characters escaped."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif code < 0x20 or code == 0x7F:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}.get(ch, f"\\u{code:04X}"))
        elif 0xD800 <= code <= 0xDFFF:
            raise ProfileError(label, f"string {value[:40]!r} holds a lone surrogate, which TOML cannot store")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _toml_number(x) -> str:
    x = float(x)
    if x.is_integer() and abs(x) < 2**53:
        return str(int(x))
    return repr(x)
