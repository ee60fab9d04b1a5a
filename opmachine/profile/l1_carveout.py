"""The optional `[l1_carveout]` table of a GPU profile: the shared memory the driver carves out of each coupled
kernel's L1, and so the L1 left for its bitmask reads.

An SM's L1 and shared memory share `l1_bytes` (256 KiB on Hopper); at launch the driver configures a shared
part for the kernel, which the L1 does not have (`opmachine.cache.l1`). The configured size is the driver's
choice, not the kernel's need (on the H200 a kernel of 5 KiB of static shared memory a block gets 100 KiB), so
it is measured: Nsight Compute's `launch__shared_mem_config_size` of each coupled kernel, one value per launch
phase (keys: `simdmodel.couplings` phases, `-` written `_`), by `python -m gpu_validate.coupling_counters`.

    [l1_carveout]
    expand = 135168              # bytes of shared memory configured for the phase's kernel
    pieces = 32768
    ...
    [l1_carveout.provenance]
    device = "NVIDIA H200"       # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.coupling_counters ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .schema import RUN_KEYS, Checker

__all__ = ["CARVEOUT_PHASES", "L1Carveout", "parse_l1_carveout"]

CARVEOUT_PHASES = ("expand", "pieces", "contract", "expand_contract", "contract_expand", "lookup_pieces")
"""The [l1_carveout] keys: the coupled kernels' launch phases (`gpu_validate.modules.COUPLING_KERNELS`)."""


@dataclass(frozen=True)
class L1Carveout:
    """Bytes of shared memory configured for each coupled kernel, by launch phase (see the module docstring)."""

    shared_bytes: dict[str, int]
    provenance: dict[str, str] = field(default_factory=dict)

    def l1_lines(self, phase: str, l1_bytes: int, line_bytes: int) -> int:
        """Lines of `line_bytes` the L1 keeps for the kernel of `phase` (as `simdmodel.couplings` names it) on an
        SM of `l1_bytes` of L1 and shared memory together."""
        return max((l1_bytes - self.shared_bytes[phase.replace("-", "_")]) // line_bytes, 0)

    def values(self) -> dict:
        """The [l1_carveout] values, in CARVEOUT_PHASES order."""
        return {phase: self.shared_bytes[phase] for phase in CARVEOUT_PHASES}


def parse_l1_carveout(check: Checker, table, device_name: str) -> L1Carveout:
    """The L1Carveout of an [l1_carveout] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "l1_carveout")
    check.keys(table, "l1_carveout", CARVEOUT_PHASES + ("provenance",))
    shared = {}
    for phase in CARVEOUT_PHASES:
        value = table[phase]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            check.fail(f"l1_carveout.{phase}", f"must be an integer number of bytes >= 0, got {value!r}")
        shared[phase] = value
    provenance = check.run_provenance(table["provenance"], "l1_carveout.provenance", RUN_KEYS, device_name,
                                      "the carve-outs")
    return L1Carveout(shared, provenance)
