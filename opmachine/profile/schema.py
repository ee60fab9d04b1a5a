"""The profile TOML schema: key names, typed access that names the key on any mistake, provenance rules.

A GPU profile (`kind = "gpu"`) has these top-level keys and tables:

- `name`, `kind`, `description`;
- `[device]`: `name`, the device name as CUDA reports it (cudaGetDeviceProperties), and
  `compute_capability` ("9.0"): with `[hardware].sms` they say which GPU the profile describes,
  and a GPU is matched to a profile by its name and SM count;
- `[hardware]`: every key of GPU_HARDWARE_KEYS, none optional: the per-launch constants
  `launch_overhead_ns` and `grid_scan_ns` (a compaction's grid-wide prefix sum) included, so a
  profile that does not know one says so with an explicit value and a note;
- `[service]`: `measured`, `provenance` and, in a measured profile, the run that measured it
  (`device`, `driver`, `date`, `command`, all required then; `device` must be `[device].name`),
  plus the S(m) curves of CURVE_NAMES;
- `[provenance]` (optional; written by `gpu_validate.profile_gpu`): for every `[hardware]` key,
  where its value comes from, `ORIGIN[: note]` with ORIGIN one of HARDWARE_ORIGINS. When the
  table is there it names every `[hardware]` key and nothing else;
- `[instructions]` (optional; measured by `gpu_validate.microbench --instructions` or written by
  `gpu_validate.profile_gpu`): the costs of warp instructions and shared-memory accesses in SM
  cycles, with `[instructions.provenance]` naming the run (`instructions.INSTRUCTION_KEYS`);
- `[compaction]` (optional; measured by `gpu_validate.overheads --sizes` or written by
  `gpu_validate.profile_gpu`): the compaction's time by graph size, with `[compaction.provenance]`
  naming the run (`compaction.COMPACTION_KEYS`);
- `[gather]`, `[atomics]`, `[bitmask]`, `[atomic_latency]`, `[l2_capacity]`, `[l2_partitions]`, `[store_flush]`,
  `[memory_mix]`, `[l1_carveout]` (optional; measured by `gpu_validate.gather`, `gpu_validate.atomics` (the fourth
  too), `gpu_validate.bitmask`, `gpu_validate.l2_probe` (the next two), `gpu_validate.overheads --stores`,
  `gpu_validate.memory_mix` and `gpu_validate.coupling_counters`): the other measured sections
  (`gpu_profile.MEASURED_SECTIONS`), each with its `[TABLE.provenance]` naming the run.

A CPU profile (`kind = "cpu"`) has `[hardware]` (`clock_ghz`, `line_bytes`), `[[levels]]`,
`[memory]` and `[service]` (seed 003 §5).
"""
from __future__ import annotations

import math
import re

import numpy as np

from .curve import Curve, curve_problem
from .errors import ProfileError

__all__ = [
    "CURVE_NAMES", "GPU_FLOAT_KEYS", "GPU_HARDWARE_KEYS", "GPU_INT_KEYS", "HARDWARE_ORIGINS", "NAME_RE",
    "ONE_WARP_CURVES", "PROVENANCE_KEYS", "RUN_ORIGINS", "SAME_SECTOR_CURVE", "SERVER_CURVES", "Checker",
    "describe", "hardware_origin", "same_device_name",
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
"""[service] provenance: what the numbers are and, in a measured profile, the run that measured them."""
RUN_KEYS = PROVENANCE_KEYS[1:]

GPU_INT_KEYS = (
    "warp_size", "sms", "max_warps_per_sm", "max_blocks_per_sm", "max_threads_per_block",
    "l1_bytes", "l2_bytes", "l2_ways", "l2_line_bytes", "sector_bytes", "dram_block_bytes", "row_buffers",
)
GPU_FLOAT_KEYS = ("clock_mhz", "dram_bandwidth_gbs", "l2_bandwidth_gbs", "launch_overhead_ns", "grid_scan_ns")
"""`launch_overhead_ns` and `grid_scan_ns` may be 0: the per-launch constants of predict.fixed_ns
(the launch overhead, and a compaction's grid-wide prefix sum, which has no loads or stores so the
memory machine does not see it)."""
GPU_ZERO_ALLOWED = ("launch_overhead_ns", "grid_scan_ns")
GPU_HARDWARE_KEYS = GPU_INT_KEYS + GPU_FLOAT_KEYS
DEVICE_KEYS = ("name", "compute_capability")

HARDWARE_ORIGINS = {
    "device": "read from the device's own attributes by the run named in [service]",
    "measured": "measured by the run named in [service]",
    "option": "given on the command line of the run named in [service]",
    "base": "copied from the profile named after it ('base h200: its note')",
    "spec": "a public specification",
    "assumed": "an assumption; the note says why",
    "unknown": "not known: the value stands in, and the note says what that leaves out",
}
"""Where a [hardware] value may come from, as the first word of its [provenance] entry."""
RUN_ORIGINS = ("device", "measured", "option")
"""Origins that refer to the run in [service] (its command, device, driver and date): measured profiles only."""

MAX_INT = 2**62  # sizes feed int64 arrays and numba kernels downstream
NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*\Z")
_CAPABILITY_RE = re.compile(r"[0-9]{1,3}\.[0-9]{1,3}\Z")


def same_device_name(a: str, b: str) -> bool:
    """True when two device names are the same up to case and runs of white space."""
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def hardware_origin(text: str) -> tuple[str, str | None, str]:
    """(origin, base profile name or None, note) of a [provenance] entry `ORIGIN[ NAME][: note]`.

    ValueError with the reason when `text` does not follow that form: ORIGIN is a key of
    HARDWARE_ORIGINS, `base` (only) is followed by a profile name, and a ':' has a note after it.
    """
    head, colon, note = text.partition(":")
    words, note = head.split(), note.strip()
    if colon and not note:
        raise ValueError("has ':' but no note after it")
    origin = words[0] if words else ""
    if origin not in HARDWARE_ORIGINS:
        shown = origin if len(origin) <= 20 else origin[:17] + "..."
        raise ValueError(f"must start with one of {', '.join(HARDWARE_ORIGINS)}, got {shown!r}")
    if origin == "base":
        if len(words) != 2 or not NAME_RE.match(words[1]):
            raise ValueError("'base' must name the profile it comes from ('base NAME' or 'base NAME: note')")
        return origin, words[1], note
    if len(words) != 1:
        raise ValueError(f"'{origin}' takes no words before ':' (write '{origin}: note')")
    return origin, None, note


def describe(value) -> str:
    """A short description of a TOML value for an error message: `integer 5`, `a table`."""
    kinds = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", dict: "table"}
    kind = kinds.get(type(value), type(value).__name__.replace("datetime", "date-time"))
    if isinstance(value, (list, dict)):
        return f"{'an' if kind == 'array' else 'a'} {kind}"
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    return f"{kind} {shown}"


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class Checker:
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
            self.fail(key, f"must be a table, got {describe(value)}")
        return value

    def string(self, value, key) -> str:
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {describe(value)}")
        if not value.strip():
            self.fail(key, "must not be empty")
        return value

    def boolean(self, value, key) -> bool:
        if not isinstance(value, bool):
            self.fail(key, f"must be true or false, got {describe(value)}")
        return value

    def positive_int(self, value, key) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(key, f"must be an integer, got {describe(value)}")
        if value <= 0:
            self.fail(key, f"must be > 0, got {value}")
        if value > MAX_INT:
            self.fail(key, f"is too large ({value} > 2**62)")
        return value

    def number(self, value, key, allow_zero=False) -> float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.fail(key, f"must be a number, got {describe(value)}")
        try:
            value = float(value)
        except OverflowError:
            self.fail(key, "is too large")
        if not math.isfinite(value):
            self.fail(key, f"must be finite, got {value}")
        if value < 0 or (value == 0 and not allow_zero):
            self.fail(key, f"must be {'>= 0' if allow_zero else '> 0'}, got {value:g}")
        return value

    def number_array(self, value, key, integers: bool = False, allow_zero: bool = False) -> list:
        """A non-empty array of positive numbers (>= 0 with `allow_zero`; positive integers with `integers`),
        each checked naming `key[i]`."""
        if not isinstance(value, list) or not value:
            self.fail(key, f"must be a non-empty array of numbers, got {describe(value)}")
        if integers:
            return [self.positive_int(item, f"{key}[{i}]") for i, item in enumerate(value)]
        return [self.number(item, f"{key}[{i}]", allow_zero) for i, item in enumerate(value)]

    def increasing(self, values, key, what: str = "value") -> None:
        """Fails naming `key[i]` at the first value not larger than the one (the `what`) before it."""
        for i in range(1, len(values)):
            if values[i] <= values[i - 1]:
                self.fail(f"{key}[{i}]", f"must be larger than the {what} before it ({values[i - 1]}), got {values[i]}")

    def curve(self, value, key) -> Curve:
        table = self.table(value, key)
        self.keys(table, key, ("mlp", "ns"))
        arrays = []
        for part in ("mlp", "ns"):
            items = table[part]
            if not isinstance(items, list):
                self.fail(f"{key}.{part}", f"must be an array of numbers, got {describe(items)}")
            values = []
            for i, item in enumerate(items):
                if isinstance(item, bool) or not isinstance(item, (int, float)):
                    self.fail(f"{key}.{part}[{i}]", f"must be a number, got {describe(item)}")
                try:
                    values.append(float(item))
                except OverflowError:
                    self.fail(f"{key}.{part}[{i}]", "is too large")
            arrays.append(np.array(values, dtype=np.float64))
        problem = curve_problem(*arrays)
        if problem is not None:
            self.fail(key, problem)
        return Curve(*arrays)

    def service(self, service: dict, curve_names, run_required: bool) -> tuple[bool, dict[str, str]]:
        """`measured` and the provenance strings of [service]; with `run_required`, a measured profile
        must name its run (device, driver, date and command)."""
        self.keys(service, "service", ("measured", "provenance"), RUN_KEYS + tuple(curve_names))
        measured = self.boolean(service["measured"], "service.measured")
        provenance = {}
        for key in PROVENANCE_KEYS:
            if key in service:
                if key != "provenance" and not measured:
                    self.fail(f"service.{key}", "only belongs to a measured profile (measured = true)")
                provenance[key] = self.string(service[key], f"service.{key}")
        if measured and run_required:
            for key in RUN_KEYS:
                if key not in provenance:
                    self.fail(f"service.{key}", "missing key (a measured profile names the device, driver, "
                                                "date and command of the run that measured it)")
        return measured, provenance

    def run_provenance(self, value, prefix: str, keys, device_name: str, what: str) -> dict[str, str]:
        """The `[PREFIX]` table naming a measuring run: a non-empty string for each of `keys`, whose
        `device` must be the profile's [device] name (`what` the section's numbers describe)."""
        run = self.table(value, prefix)
        self.keys(run, prefix, keys)
        provenance = {key: self.string(run[key], f"{prefix}.{key}") for key in keys}
        if not same_device_name(provenance["device"], device_name):
            self.fail(f"{prefix}.device", f"{provenance['device']!r} is not [device] name {device_name!r}: "
                                          f"{what} describe the device they were measured on")
        return provenance

    def device(self, device) -> tuple[str, str]:
        """(name, compute_capability) of the [device] table."""
        device = self.table(device, "device")
        self.keys(device, "device", DEVICE_KEYS)
        name = self.string(device["name"], "device.name")
        capability = self.string(device["compute_capability"], "device.compute_capability")
        if not _CAPABILITY_RE.match(capability):
            self.fail("device.compute_capability", f"must be MAJOR.MINOR such as \"9.0\", got {capability!r}")
        return name, capability

    def hardware_provenance(self, table, measured: bool) -> dict[str, str]:
        """The [provenance] table: one `ORIGIN[: note]` string for every [hardware] key."""
        table = self.table(table, "provenance")
        self.keys(table, "provenance", GPU_HARDWARE_KEYS)
        out = {}
        for key in GPU_HARDWARE_KEYS:
            text = self.string(table[key], f"provenance.{key}")
            try:
                origin, _, _ = hardware_origin(text)
            except ValueError as error:
                self.fail(f"provenance.{key}", str(error))
            if origin in RUN_ORIGINS and not measured:
                self.fail(f"provenance.{key}", f"'{origin}' names the run in [service], which only a measured "
                                               "profile (measured = true) has")
            out[key] = text
        return out
