"""Writing measured GPU profiles: TOML text in the schema's layout, checked by loading it back, then
moved into place (a temporary file beside the target, validated, renamed: nothing half-written).
The [instructions] section and the measured sections (`gpu_profile.MEASURED_SECTIONS`: [compaction],
[gather], [atomics], [bitmask], [atomic_latency], [l2_capacity], [l2_partitions], [store_flush]) are written at the end
of a profile, with comments saying what the numbers are and how they were measured; `write_gpu_instructions` and
`write_gpu_section` add or replace one in a profile file and keep everything else in that file as it is."""
from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from simdmodel.atomic import atomic_path
from simdmodel.errors import InputError

from .curve import Curve
from .errors import ProfileError
from .gpu_profile import MEASURED_SECTIONS, GPUProfile
from .compaction import CompactionCosts
from .atomic_latency import AtomicLatency
from .l2_capacity import L2Capacity
from .l2_partitions import L2Partitions
from .l1_carveout import CARVEOUT_PHASES, L1Carveout
from .memory_mix import MemoryMix
from .store_flush import StoreFlush
from .atomics import AtomicCosts
from .bitmask import BitmaskRates
from .gather import GatherRates
from .instructions import INSTRUCTION_KEYS, INSTRUCTION_NOTES, INSTRUCTION_RUN_KEYS, InstructionCosts
from .loading import parse_profile_bytes
from .schema import (CURVE_NAMES, GPU_FLOAT_KEYS, GPU_HARDWARE_KEYS, GPU_INT_KEYS, PROVENANCE_KEYS, RUN_KEYS,
                     same_device_name)

__all__ = ["instruction_section", "measured_section", "render_gpu_profile", "toml_string", "with_instruction_section",
           "with_section", "write_gpu_curves", "write_gpu_instructions", "write_gpu_profile", "write_gpu_section",
           "write_profile_text"]


def render_gpu_profile(*, name: str, description: str, device_name: str, compute_capability: str,
                       hardware: dict, curves: dict, provenance: dict[str, str], label: str,
                       header: Sequence[str] = (), hardware_notes: dict[str, str] | None = None,
                       hardware_provenance: dict[str, str] | None = None,
                       instructions: InstructionCosts | None = None, instructions_notes: Sequence[str] = (),
                       compaction: CompactionCosts | None = None, gather: GatherRates | None = None,
                       atomics: AtomicCosts | None = None, bitmask: BitmaskRates | None = None,
                       atomic_latency: AtomicLatency | None = None, l2_capacity: L2Capacity | None = None,
                       l2_partitions: L2Partitions | None = None, store_flush: StoreFlush | None = None,
                       memory_mix: MemoryMix | None = None, l1_carveout: L1Carveout | None = None) -> str:
    """The TOML text of a measured GPU profile (`measured = true`), in the layout of the shipped files.

    `hardware` maps every key of GPU_HARDWARE_KEYS to its value; `curves` maps curve names to
    (mlp, ns) samples or Curves; `provenance` needs provenance, device, driver, date and command
    (the run). `header` lines become `#` comments at the top, `hardware_notes` a `# note` after a
    [hardware] value, `hardware_provenance` the [provenance] table (ORIGIN[: note] per key),
    `instructions` the [instructions] section (`instruction_section`, with `instructions_notes`),
    and `compaction`, `gather`, `atomics`, `bitmask`, `atomic_latency`, `l2_capacity`, `l2_partitions`,
    `store_flush`, `memory_mix`, `l1_carveout` the measured sections of those names (`measured_section`).
    Raises ProfileError naming the key on a mistake the text would carry; the text itself is
    checked by `write_profile_text` (or parse_profile_bytes) when it is loaded back.
    """
    if not isinstance(curves, dict) or not isinstance(provenance, dict) or not isinstance(hardware, dict):
        raise InputError("a GPU profile needs hardware, curves and provenance as dicts")
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
                value = curves[key]
                sampled[key] = value if isinstance(value, Curve) else Curve(*value)
            except (TypeError, ValueError) as error:
                reason = str(error).removeprefix("service curve: ")
                raise ProfileError(label, f"service.{key}: {reason}") from None
    notes = dict(hardware_notes or {})
    for key in list(notes) + list(hardware):
        if key not in GPU_HARDWARE_KEYS:
            raise ProfileError(label, f"hardware.{key}: unknown key (known: {', '.join(GPU_HARDWARE_KEYS)})")
    values = [(key, _hardware_value(key, hardware.get(key), label)) for key in GPU_HARDWARE_KEYS]

    lines = [toml_comment(text, label) for line in header for text in (str(line).splitlines() or [""])]
    lines += [
        f"name = {toml_string(name, label)}",
        'kind = "gpu"',
        f"description = {toml_string(description, label)}",
        "",
        "[device]",
        f"name = {toml_string(device_name, label)}",
        f"compute_capability = {toml_string(compute_capability, label)}",
        "",
        "[hardware]",
    ]
    lines += [f"{key} = {value}" + (f"   {toml_comment(notes[key], label)}" if key in notes else "")
              for key, value in values]
    if hardware_provenance is not None:
        lines += ["", "[provenance]"]
        lines += [f"{key} = {toml_string(str(text), label)}" for key, text in hardware_provenance.items()]
    lines += ["", "[service]", "measured = true"]
    lines += [f"{key} = {toml_string(provenance[key], label)}" for key in PROVENANCE_KEYS]
    for key, curve in sampled.items():
        lines += ["", f"[service.{key}]",
                  f"mlp = [{', '.join(_toml_number(x) for x in curve.mlp)}]",
                  f"ns = [{', '.join(_toml_number(x) for x in curve.ns)}]"]
    text = "\n".join(lines) + "\n"
    if instructions is not None:
        text += "\n" + instruction_section(instructions, label, instructions_notes)
    measured = dict(compaction=compaction, gather=gather, atomics=atomics, bitmask=bitmask,
                    atomic_latency=atomic_latency, l2_capacity=l2_capacity, l2_partitions=l2_partitions,
                    store_flush=store_flush, memory_mix=memory_mix, l1_carveout=l1_carveout)
    for table in MEASURED_SECTIONS:
        if measured[table] is not None:
            text += "\n" + measured_section(table, measured[table], label)
    return text


def instruction_section(costs: InstructionCosts, label: str, notes: Sequence[str] = ()) -> str:
    """The [instructions] and [instructions.provenance] tables of `costs` as TOML text: a comment
    block first (what the section is, then `notes`, e.g. how it was measured), each value followed
    by a comment saying what it is (INSTRUCTION_NOTES). ProfileError naming the key on a value the
    text cannot carry; the ranges are checked when the profile is loaded back."""
    if not isinstance(costs, InstructionCosts):
        raise InputError(f"instructions must be an InstructionCosts, got {type(costs).__name__}")
    intro = ("[instructions]: what warp instructions and shared-memory accesses cost on this GPU, in SM cycles "
             "(clock64) at the SM clock clock_mhz measured in the same run (cycle_ns = 1000 / clock_mhz); "
             "[instructions.provenance] names the run.")
    lines = [toml_comment(text, label) for text in textwrap.wrap(intro, 98)]
    lines += [toml_comment(text, label) for line in notes for text in (str(line).splitlines() or [""])]
    lines.append("[instructions]")
    for key, value in costs.values().items():
        lines.append(f"{key} = {_instruction_value(key, value, label)}   {toml_comment(INSTRUCTION_NOTES[key], label)}")
    lines += ["", *_run_table("instructions.provenance", costs.provenance, INSTRUCTION_RUN_KEYS, label)]
    return "\n".join(lines) + "\n"


def _run_table(table: str, provenance, keys, label: str) -> list[str]:
    """The lines of a `[TABLE]` naming a measuring run: one string per key of `keys`, each required
    and nothing else; ProfileError naming the key otherwise."""
    lines = [f"[{table}]"]
    for key in keys:
        value = provenance.get(key) if isinstance(provenance, dict) else None
        if not isinstance(value, str) or not value.strip():
            raise ProfileError(label, f"{table}.{key}: needs a non-empty string")
        lines.append(f"{key} = {toml_string(value, label)}")
    extra = [key for key in provenance if key not in keys]
    if extra:
        raise ProfileError(label, f"{table}.{extra[0]}: unknown key (known: {', '.join(keys)})")
    return lines


def _instruction_number(key: str, value, label: str) -> str:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ProfileError(label, f"{key}: must be a number, got {value!r}")
    return repr(float(value))


def _instruction_value(key: str, value, label: str) -> str:
    assert key in INSTRUCTION_KEYS
    where = f"instructions.{key}"
    if key == "sub_partitions":
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise ProfileError(label, f"{where}: must be an integer, got {value!r}")
        return str(int(value))
    if key == "shared_conflict_cycles":
        pairs = []
        for i, (k, cycles) in enumerate(value):
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
                raise ProfileError(label, f"{where}[{i}]: k must be an integer, got {k!r}")
            pairs.append(f"[{int(k)}, {_instruction_number(f'{where}[{i}]', cycles, label)}]")
        return f"[{', '.join(pairs)}]"
    return _instruction_number(where, value, label)


_TABLE_HEADER = re.compile(r"\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$")


def with_section(text: str, table: str, section: str) -> str:
    """Profile `text` with its [`table`] section (the tables [`table`] and [`table`.*], and the
    comment lines right above [`table`]) replaced by `section` where it stands, or `section`
    appended when it has none; everything else is kept as it is."""
    def ours(name: str) -> bool:
        return name == table or name.startswith(table + ".")

    lines = text.splitlines(keepends=True)
    headers = [(i, m.group(1)) for i, line in enumerate(lines) if (m := _TABLE_HEADER.match(line))]
    own = [i for i, name in headers if ours(name)]
    if own:
        start = own[0]
        while start > 0 and lines[start - 1].lstrip().startswith("#"):
            start -= 1
        later = [i for i, name in headers if i > own[0] and not ours(name)]
        end = later[0] if later else len(lines)
        while end > own[0] + 1 and end < len(lines) and lines[end - 1].lstrip().startswith("#"):
            end -= 1  # the comments above the next table belong to it
        before, after = "".join(lines[:start]).rstrip("\n"), "".join(lines[end:]).lstrip("\n")
        return (before + "\n\n" if before else "") + section + ("\n" + after if after else "")
    kept = "".join(lines).rstrip("\n")
    return (kept + "\n\n" if kept else "") + section


def with_instruction_section(text: str, section: str) -> str:
    """Profile `text` with its [instructions] section replaced or appended (`with_section`)."""
    return with_section(text, "instructions", section)


def _write_section(path, base: GPUProfile, table: str, section_of) -> GPUProfile:
    """Write `base`'s profile file with its [`table`] section added or replaced by `section_of(label)`
    to `path` (which may be the base's own file): every other line, comments included, is kept.
    Loaded back with every check before it replaces `path`; returns the loaded profile."""
    if not isinstance(base, GPUProfile):
        raise InputError(f"writing a profile's [{table}] needs a GPUProfile, got {type(base).__name__}")
    label = str(path)
    if Path(label).suffix != ".toml":
        raise ProfileError(label, "a profile file must end in .toml")
    try:
        text = Path(base.path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise ProfileError(base.path, f"cannot read: {error}") from None
    return write_profile_text(path, with_section(text, table, section_of(label)))


def write_gpu_instructions(path, base: GPUProfile, costs: InstructionCosts, notes: Sequence[str] = ()) -> GPUProfile:
    """Write `base`'s profile with its [instructions] section added or replaced by `costs`
    (`instruction_section` with `notes`) to `path` (`_write_section`); returns the loaded profile."""
    return _write_section(path, base, "instructions", lambda label: instruction_section(costs, label, notes))


def _array_section(table: str, intro: str, values: dict, int_keys, provenance: dict, label: str) -> str:
    """A [`table`] of number arrays (`int_keys` written as integers) and numbers, and its
    [`table`.provenance], as TOML text after the comment `intro`; ProfileError naming the key on a value
    the text cannot carry."""
    lines = [toml_comment(text, label) for text in textwrap.wrap(intro, 98)] + [f"[{table}]"]
    for key, array in values.items():
        if not isinstance(array, (list, tuple)):  # a scalar
            if isinstance(array, (bool, np.bool_)) or not isinstance(array, (int, float, np.integer, np.floating)):
                raise ProfileError(label, f"{table}.{key}: must be a number, got {array!r}")
            lines.append(f"{key} = {int(array) if key in int_keys else _toml_number(float(array))}")
            continue
        items = []
        for i, value in enumerate(array):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                raise ProfileError(label, f"{table}.{key}[{i}]: must be a number, got {value!r}")
            items.append(str(int(value)) if key in int_keys else _toml_number(float(value)))
        lines.append(f"{key} = [{', '.join(items)}]")
    lines += ["", *_run_table(f"{table}.provenance", provenance, RUN_KEYS, label)]
    return "\n".join(lines) + "\n"


_MEASURED = {  # table -> (what it holds, its integer-valued arrays, the comment above it)
    "compaction": (CompactionCosts, ("sizes",),
                   "[compaction]: a compaction launch with an empty next frontier on an edgeless graph of `sizes` "
                   "vertices, ns per launch timed as BFS launches are, median (and 10th, 90th percentile) over fresh "
                   "allocations; opmachine.profile.compaction says how the model uses it."),
    "gather": (GatherRates, ("sizes",),
               "[gather]: random 4-byte gathers a nanosecond over the whole GPU (ld.global.cg, four in flight a "
               "thread, every SM full) from a table of `sizes` bytes, median over repeats: a BFS's status lookups, "
               "one per traversed edge; opmachine.profile.gather says how the bound uses it."),
    "atomics": (AtomicCosts, (),
                "[atomics]: same_word_ns, ns per warp-level atomicAdd when lane 0 of every warp of the full GPU adds "
                "to one word (the coupled kernels' queue counters), median over repeats; opmachine.profile.atomics "
                "says how the model uses it."),
    "bitmask": (BitmaskRates, ("sizes",),
                "[bitmask]: status lookups a nanosecond over the whole GPU that read a random byte of a bitmask of "
                "`sizes` bytes (ld.global.ca, four in flight a thread, every SM full) and store it back with the "
                "probability `write_fractions`; per_ns row by row (one row a size), median over repeats; per_ns_or "
                "the same with an atomic OR on the word for a store; opmachine.profile.bitmask says how the model "
                "uses it."),
    "atomic_latency": (AtomicLatency, ("lanes",),
                       "[atomic_latency]: one warp's dependent accesses along a random cycle of an L2-resident table, "
                       "`lanes` lanes (sectors) a step: ns per step of failing compare-and-swaps (swap_ns) and of "
                       "ld.global.cg loads (load_ns), median over repeats; opmachine.profile.atomic_latency says how "
                       "the model uses it."),
    "l2_capacity": (L2Capacity, ("effective_bytes", "sizes"),
                    "[l2_capacity]: effective_bytes, what the L2 holds of data every SM reads, the median of "
                    "hit_fraction x size over the sizes of one to two L2s; hit_fraction, a one-lane random chase's "
                    "hits over a buffer of `sizes` bytes read twice by every SM, from its ns a hop between the "
                    "flushed buffer's and a small one's; opmachine.profile.l2_capacity says how the model uses it."),
    "l2_partitions": (L2Partitions, ("groups", "sectors"),
                      "[l2_partitions]: groups, the L2 partitions the SMs read through; near_ns and far_ns, one warp's "
                      "ns to load `sectors` sectors that are all in its SM's partition or all only in the other (a "
                      "chase timed by CUDA events, median over four SMs); opmachine.profile.l2_partitions says how the "
                      "model uses it."),
    "store_flush": (StoreFlush, ("blocks",),
                    "[store_flush]: ns a launch whose `blocks` blocks each store one word takes beyond the empty "
                    "launch timed alternately with it (medians, at least 0); opmachine.profile.store_flush says how "
                    "the model uses it."),
    "memory_mix": (MemoryMix, (),
                   "[memory_mix]: launches of one sector class and of two (random L2 hits, random DRAM row misses, "
                   "DRAM row hits in order, stores beyond the L2; every warp of a full wave, no access waiting for "
                   "another): each launch's sectors of each class and its ns, median over repeats; "
                   "opmachine.profile.memory_mix says how the model uses it."),
    "l1_carveout": (L1Carveout, CARVEOUT_PHASES,
                    "[l1_carveout]: bytes of shared memory the driver configured for each coupled kernel, by launch "
                    "phase (Nsight Compute's launch__shared_mem_config_size): the SM's L1 is what they leave of "
                    "l1_bytes; opmachine.profile.l1_carveout says how the model uses it."),
}
assert tuple(_MEASURED) == MEASURED_SECTIONS


def measured_section(table: str, value, label: str) -> str:
    """The [`table`] and [`table`.provenance] tables of one measured section (MEASURED_SECTIONS: `value` a
    CompactionCosts, GatherRates, AtomicCosts, BitmaskRates, AtomicLatency, L2Capacity, L2Partitions,
    StoreFlush, MemoryMix or L1Carveout) as
    TOML text, after a comment saying what they are; ProfileError naming the key on a value the text cannot
    carry."""
    if table not in _MEASURED:
        raise InputError(f"unknown measured section {table!r} (known: {', '.join(_MEASURED)})")
    kind, int_keys, intro = _MEASURED[table]
    if not isinstance(value, kind):
        article = "an" if kind.__name__[0] in "AEIOU" else "a"
        raise InputError(f"{table} must be {article} {kind.__name__}, got {type(value).__name__}")
    return _array_section(table, intro, value.values(), int_keys, value.provenance, label)


def write_gpu_section(path, base: GPUProfile, table: str, value) -> GPUProfile:
    """Write `base`'s profile with its measured section [`table`] (`measured_section`) added or replaced by
    `value` to `path` (`_write_section`); returns the loaded profile."""
    return _write_section(path, base, table, lambda label: measured_section(table, value, label))


def _hardware_value(key: str, value, label: str) -> str:
    if value is None:
        raise ProfileError(label, f"hardware.{key}: missing key")
    if isinstance(value, (bool, np.bool_)):
        raise ProfileError(label, f"hardware.{key}: must be a number, got {value!r}")
    if key in GPU_INT_KEYS:
        if not isinstance(value, (int, np.integer)):
            raise ProfileError(label, f"hardware.{key}: must be an integer, got {value!r}")
        return str(int(value))
    assert key in GPU_FLOAT_KEYS
    try:
        return repr(float(value))
    except (TypeError, ValueError):
        raise ProfileError(label, f"hardware.{key}: must be a number, got {value!r}") from None


def write_profile_text(path, text: str) -> GPUProfile:
    """Write profile `text` to `path` (.toml) atomically: a temporary file beside it, loaded back with
    the schema's checks, then renamed over `path`. A text that does not load leaves `path` untouched."""
    label = str(path)
    if Path(label).suffix != ".toml":
        raise ProfileError(label, "a profile file must end in .toml")
    with atomic_path(path) as temp:
        temp.write_text(text, encoding="utf-8")
        profile = parse_profile_bytes(temp.read_bytes(), label, label)  # never write a file that does not load
    return profile


def write_gpu_profile(path, **fields) -> GPUProfile:
    """`render_gpu_profile(**fields)` written to `path` with `write_profile_text`; returns the loaded profile."""
    label = str(path)
    if Path(label).suffix != ".toml":
        raise ProfileError(label, "a profile file must end in .toml")
    return write_profile_text(path, render_gpu_profile(label=label, **fields))


def write_gpu_curves(path, base_profile: GPUProfile, curves: dict[str, tuple[list, list]],
                     provenance: dict[str, str], comment: str | None = None,
                     hardware_notes: dict[str, str] | None = None) -> None:
    """Write a GPU profile with `base_profile`'s hardware and new measured S(m) curves (seed 003 §6.5).

    `curves` maps server class (l2_hit, and row_hit + row_miss or dram; optionally their `_one_warp`
    curves and `l2_same`) to (mlp, ns) samples;
    `provenance` needs provenance, device, driver, date and command. The profile describes the
    device the curves were measured on: its [device] name is `provenance["device"]`, its compute
    capability the base's. Optional `comment` (lines of text, e.g. how the curves were measured)
    goes under the header as `#` lines, and `hardware_notes` maps [hardware] keys to a note written
    after the value (where the number comes from); a base with a [provenance] table passes it on,
    each entry as `base NAME: its entry`, and a base's [instructions] and measured sections
    (MEASURED_SECTIONS) measured on the same device (by name) are kept (those of another device do not
    describe this one). The text is checked by loading it back before it is
    moved, atomically, to `path` (a .toml file).
    """
    if not isinstance(base_profile, GPUProfile):
        raise InputError(f"write_gpu_curves needs a GPUProfile, got {type(base_profile).__name__}")
    label = str(path)
    if Path(label).suffix != ".toml":
        raise ProfileError(label, "a profile file must end in .toml")
    if not isinstance(curves, dict) or not isinstance(provenance, dict):
        raise InputError("write_gpu_curves: curves and provenance must be dicts")
    b = base_profile
    device = provenance.get("device")
    sources = ({key: f"base {b.name}: {text}" for key, text in b.hardware_provenance.items()}
               if b.hardware_provenance else None)
    device_name = device if isinstance(device, str) and device.strip() else b.device_name
    kept = {part: getattr(b, part) for part in ("instructions", *MEASURED_SECTIONS)}
    kept = {part: value if value is not None and same_device_name(value.provenance["device"], device_name) else None
            for part, value in kept.items()}
    text = render_gpu_profile(
        name=b.name, description=b.description, device_name=device_name, **kept,
        compute_capability=b.compute_capability,
        hardware={key: getattr(b, key) for key in GPU_HARDWARE_KEYS}, curves=curves, provenance=provenance,
        label=label, hardware_notes=hardware_notes, hardware_provenance=sources,
        header=[f"GPU profile {b.name}: the hardware of {b.name}, service curves S(m) measured on the device below.",
                *(comment or "").splitlines()])
    write_profile_text(path, text)


def toml_comment(text: str, label: str) -> str:
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
