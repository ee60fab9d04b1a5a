"""A kernel's SASS listing (`nvdisasm -c -gi -hex`, as `gpu_validate.sass` writes it) read into instructions.

Each instruction keeps its offset, guard, opcode and operands, the source frames of its line info
(innermost first, inlined-at frames after) and its Volta+ control word (the high 64 bits of the
128-bit encoding), of which the model reads the stall cycles the compiler scheduled after it. The
listing's header names, per source line, the `// trips: EVENT` markers that
say how often a loop or a branch runs (`instructions.blocks` applies them).
"""
from __future__ import annotations

import functools
import importlib.resources
import re
from dataclasses import dataclass

from simdmodel.errors import InputError

CLASSES = ("alu", "shared_ld", "shared_st", "global_ld", "global_st", "atomic", "control", "barrier")
"""Instruction classes of the accounting: ALU (integer, FP, conversions, constant and special-register
reads, uniform datapath), shared-memory loads and stores, global loads and stores, atomics, control
(branches, exits, convergence barriers, votes, shuffles, warp syncs, nops), block barriers."""

ALU_PIPE = ("IADD3", "ISETP", "LEA", "LOP3", "MOV", "P2R", "PLOP3", "PRMT", "SEL", "SHF", "VIMNMX")
"""Opcodes the SM's ALU pipe executes: integer adds, compares, min / max, selects, shifts, logic, moves and
predicate moves.
It takes a warp instruction every other cycle on sm_90 (`[instructions] alu_per_cycle`), so a kernel
made mostly of them is held by that pipe, not by the issue rate. Multiplies and their move and add
forms (IMAD*), VIADD and bit counts (POPC, FLO, BREV) go to other pipes. The set
is checked against Nsight Compute's `sm__inst_executed_pipe_alu.sum` launch by launch
(`gpu_validate.coupling_counters`)."""

_SHARED_LD = ("LDS", "LDSM")
_SHARED_ST = ("STS",)
_GLOBAL_LD = ("LDG", "LD")
_GLOBAL_ST = ("STG", "ST")
_ATOMIC = ("ATOMG", "ATOM", "ATOMS", "RED", "REDG")
_CONTROL = ("BRA", "BRX", "JMP", "JMX", "EXIT", "RET", "CALL", "BSSY", "BSYNC", "BREAK", "WARPSYNC", "YIELD",
            "NOP", "VOTE", "VOTEU", "SHFL", "MATCH", "BMOV", "KILL", "BPT", "NANOSLEEP", "ELECT", "ENDCOLLECTIVE")
_BARRIER = ("BAR", "MEMBAR", "DEPBAR", "ERRBAR", "CCTL", "FENCE")

_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(.*?)\s*;?\s*/\*\s*(0x[0-9a-f]{16})\s*\*/\s*$")
_CONTROL_WORD = re.compile(r"^\s*/\*\s*(0x[0-9a-f]{16})\s*\*/\s*$")
_LABEL = re.compile(r"^(\.L_x_\d+):\s*$")
_FUNCTION = re.compile(r"^\.text\.(\S+):\s*$")
_FRAME = re.compile(r'"([^"]+)", line (\d+)')
_TRIPS = re.compile(r"^//\s*trips\s+(\S+):(\d+)\s+([a-z_]+)\s*$")
_GUARD = re.compile(r"^(@!?U?P[T0-9])\s+")
_TARGET = re.compile(r"`\((\.L_x_\d+)\)")


def instruction_class(opcode: str) -> str:
    """The accounting class (CLASSES) of an opcode such as `LDG.E.STRONG.GPU`."""
    op = opcode.split(".")[0]
    for name, ops in (("shared_ld", _SHARED_LD), ("shared_st", _SHARED_ST), ("global_ld", _GLOBAL_LD),
                      ("global_st", _GLOBAL_ST), ("atomic", _ATOMIC), ("control", _CONTROL), ("barrier", _BARRIER)):
        if op in ops:
            return name
    return "alu"


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: offset (bytes), guard (`@P0`, `@!P1` or ""), opcode, operands, source frames
    ((file, line), innermost first) and the control word."""

    offset: int
    guard: str
    opcode: str
    operands: str
    frames: tuple[tuple[str, int], ...]
    control: int

    @property
    def op(self) -> str:
        return self.opcode.split(".")[0]

    @property
    def cls(self) -> str:
        return instruction_class(self.opcode)

    @property
    def alu_pipe(self) -> bool:
        """Whether the ALU pipe executes it (ALU_PIPE)."""
        return self.op in ALU_PIPE

    @property
    def stall(self) -> int:
        """Cycles the scheduler waits before this warp's next instruction (fixed-latency dependences)."""
        return (self.control >> 41) & 0xF

    @property
    def target(self) -> str | None:
        """The label a branch goes to (BRA, BRA.DIV, CALL), or None."""
        if self.op not in ("BRA", "CALL"):
            return None
        found = _TARGET.search(self.operands)
        return found.group(1) if found else None

    @property
    def divergent_only(self) -> bool:
        """BRA.DIV: taken only when the warp is diverged (the converged warps the model counts never take it)."""
        return self.opcode.startswith("BRA.DIV")

    @property
    def conditional(self) -> bool:
        """A branch or exit that may fall through: guarded, or with a predicate operand, or BRA.DIV."""
        if self.guard or self.divergent_only:
            return True
        return self.op == "BRA" and bool(re.match(r"!?U?P[0-6],", self.operands))


@dataclass(frozen=True)
class Listing:
    """The instructions of one kernel, its labels (name -> offset) and its trip markers ((file, line) -> event)."""

    kernel: str
    function: str
    instructions: tuple[Instruction, ...]
    labels: dict
    markers: dict

    def marker_of(self, instruction: Instruction) -> str | None:
        """The trip event marked on any source frame of `instruction`, innermost first."""
        for frame in instruction.frames:
            if frame in self.markers:
                return self.markers[frame]
        return None


def parse_listing(text: str, kernel: str, source: str = "listing") -> Listing:
    """Read one kernel's listing; any malformed line or a second function is one InputError."""
    instructions, labels, markers = [], {}, {}
    frames: tuple = ()
    function = None
    pending_labels: list[str] = []
    pending = None  # an instruction line waiting for its control word
    new_group = True
    lines = text.splitlines()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if pending is not None:
            found = _CONTROL_WORD.match(line)
            if not found:
                raise InputError(f"{source}:{number}: expected the control word of the instruction above")
            offset, body = pending
            guard_found = _GUARD.match(body)
            guard = guard_found.group(1) if guard_found else ""
            body = body[guard_found.end():] if guard_found else body
            opcode, _, operands = body.partition(" ")
            instructions.append(Instruction(offset, guard, opcode, operands.strip(), frames, int(found.group(1), 16)))
            pending = None
            new_group = True
            continue
        if not stripped:
            continue
        if stripped.startswith("//##"):  # a group of these before an instruction: its frames, innermost first
            chain = tuple((f, int(n)) for f, n in _FRAME.findall(stripped))
            frames = tuple(dict.fromkeys((() if new_group else frames) + chain))
            new_group = False
            continue
        if stripped.startswith("//"):
            trips = _TRIPS.match(stripped)
            if trips:
                markers[(trips.group(1), int(trips.group(2)))] = trips.group(3)
            continue
        found = _FUNCTION.match(stripped)
        if found:
            if function is not None and found.group(1) != function:
                raise InputError(f"{source}:{number}: a second function {found.group(1)} (one kernel per listing)")
            function = found.group(1)
            continue
        found = _LABEL.match(stripped)
        if found:
            pending_labels.append(found.group(1))
            continue
        found = _INSTRUCTION.match(line)
        if found:
            if function is None:
                raise InputError(f"{source}:{number}: an instruction before the function's .text label")
            offset = int(found.group(1), 16)
            for label in pending_labels:
                labels[label] = offset
            pending_labels = []
            pending = (offset, found.group(2).strip())
            continue
        if stripped.startswith((".", "//", "bfs_", "_Z")) or stripped.endswith(":"):
            continue  # section, type and size directives, symbol labels
        raise InputError(f"{source}:{number}: not a line of an nvdisasm listing: {stripped[:60]!r}")
    if pending is not None:
        raise InputError(f"{source}: the last instruction has no control word")
    if not instructions:
        raise InputError(f"{source}: no instructions")
    end = instructions[-1].offset + 16
    for label in pending_labels:
        labels[label] = end
    return Listing(kernel, function, tuple(instructions), labels, markers)


@functools.cache
def load_listing(kernel: str, arch: str) -> Listing:
    """The package's listing of `kernel` (a kernel label: topo, compact, sm-8, ws, ...) for `arch` (sm_90)."""
    path = importlib.resources.files("opmachine").joinpath("sass", arch, f"{kernel}.sass")
    if not path.is_file():
        raise InputError(f"no SASS listing of kernel {kernel!r} for {arch} (opmachine/sass/{arch}/{kernel}.sass; "
                         "python -m gpu_validate.sass writes them)")
    return parse_listing(path.read_text(encoding="utf-8"), kernel, f"opmachine/sass/{arch}/{kernel}.sass")
