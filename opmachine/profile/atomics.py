"""The optional `[atomics]` table of a GPU profile: the measured time of atomics that all hit one word.

The coupled BFS kernels (`gpu_validate/cuda/couplings.cu`) reserve their output slots with atomics on a
queue counter that every CTA (a copying chunk, a contraction's group) or warp (a fused lookup's enqueue)
adds to. The L2 slice that owns the word serves such atomics one after another, however many SMs ask, so
a launch that reserves often is bound by their number times one atomic's time (`opmachine.critical`'s
`L2A` server). `same_word_ns` is that time: lane 0 of every warp of a full GPU adding to the same word
(`gpu_validate/cuda/atomics.cu`), the elapsed time over the atomics, timed with CUDA events, median over
repeats, measured by `python -m gpu_validate.atomics`.

    [atomics]
    same_word_ns = 0.751            # ns per warp-level atomic on one word, the GPU full
    [atomics.provenance]
    device = "NVIDIA H200"          # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.atomics ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .schema import RUN_KEYS, Checker

__all__ = ["ATOMIC_KEYS", "AtomicCosts", "parse_atomics"]

ATOMIC_KEYS = ("same_word_ns",)


@dataclass(frozen=True)
class AtomicCosts:
    """The measured time of one atomic on a word every warp of the GPU updates (see the module docstring)."""

    same_word_ns: float
    provenance: dict[str, str] = field(default_factory=dict)

    def values(self) -> dict:
        """The [atomics] values, in ATOMIC_KEYS order."""
        return {key: getattr(self, key) for key in ATOMIC_KEYS}


def parse_atomics(check: Checker, table, device_name: str) -> AtomicCosts:
    """The AtomicCosts of an [atomics] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "atomics")
    check.keys(table, "atomics", ATOMIC_KEYS + ("provenance",))
    same_word = check.number(table["same_word_ns"], "atomics.same_word_ns")
    provenance = check.run_provenance(table["provenance"], "atomics.provenance", RUN_KEYS, device_name,
                                      "the atomic times")
    return AtomicCosts(same_word, provenance)
