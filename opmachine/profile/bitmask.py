"""The optional `[bitmask]` table of a GPU profile: the measured rate of bitmask lookups that store back.

The status lookup of seed 001 §4.2 reads one bitmask byte per looked-up id and, where the id's bit was
unset, stores the byte with the bit set (`gpu_validate/cuda/status_lookup.cuh`). Reads of bytes that
other warps are storing into wait for those stores: on an H200 a lookup over a 256 KiB bitmask runs at a
tenth of the rate of the same reads without stores when every lookup stores, and the smaller the bitmask
(the more warps share each of its sectors) the slower. A contraction that claims many vertices is bound
by it (`opmachine.critical`'s `L2W` server). The table holds the GPU-wide rate of such lookups for
bitmasks of `sizes` bytes and for `write_fractions` of them storing, measured by
`python -m gpu_validate.bitmask` (`gpu_validate/cuda/bitmask.cu`): random bytes read with ld.global.ca,
four in flight a thread, every SM full, each stored back with a probability of the write fraction, timed
with CUDA events, median over repeats. `per_ns_or` (optional) is the same grid for lookups whose storing
ones set their bit with an atomic OR on the bitmask's word instead (the couplings' claim build), measured by
the same command (`bitmask_or`); a table measured before it was added lacks it.

    [bitmask]
    sizes = [16384, 65536, ...]          # bitmask bytes, strictly increasing
    write_fractions = [0.0, 0.03125, ...]  # lookups that store their byte, strictly increasing in 0..1
    per_ns = [...]                       # lookups a nanosecond, the whole GPU: sizes x write_fractions,
                                         # row by row (per_ns[i * len(write_fractions) + j])
    per_ns_or = [...]                    # the same with atomic ORs for stores (optional)
    [bitmask.provenance]
    device = "NVIDIA H200"               # the profile's [device] name
    driver = "..."
    date = "..."
    command = "python -m gpu_validate.bitmask ..."
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from simdmodel.errors import InputError

from .schema import RUN_KEYS, Checker

__all__ = ["BITMASK_KEYS", "OPTIONAL_BITMASK_KEYS", "BitmaskRates", "parse_bitmask"]

BITMASK_KEYS = ("sizes", "write_fractions", "per_ns", "per_ns_or")
OPTIONAL_BITMASK_KEYS = ("per_ns_or",)


@dataclass(frozen=True)
class BitmaskRates:
    """Measured bitmask lookups a nanosecond by bitmask bytes and write fraction (see the module docstring)."""

    sizes: tuple[int, ...]
    write_fractions: tuple[float, ...]
    per_ns: tuple[float, ...]  # len(sizes) x len(write_fractions), row by row
    per_ns_or: tuple[float, ...] = ()  # the same grid with atomic ORs for stores; () where not measured
    provenance: dict[str, str] = field(default_factory=dict)

    def at(self, mask_bytes, write_fraction, atomic_or: bool = False) -> float:
        """The rate for a bitmask of `mask_bytes` of whose lookups `write_fraction` store (`atomic_or`: with an
        atomic OR on the word, `per_ns_or`; InputError where it was not measured). The time of one
        lookup (1 / rate) is interpolated, linear in the fraction (each store adds its own wait) and in
        log2(size) between measured points, the nearest measured point's outside them."""
        if isinstance(mask_bytes, bool) or not isinstance(mask_bytes, (int, np.integer)) or mask_bytes < 1:
            raise InputError(f"a bitmask's size must be an integer >= 1 byte, got {mask_bytes!r}")
        fraction = float(write_fraction)
        if not 0.0 <= fraction <= 1.0:
            raise InputError(f"a write fraction must be in 0..1, got {write_fraction!r}")
        if atomic_or and not self.per_ns_or:
            raise InputError("the [bitmask] table has no per_ns_or (rates with atomic ORs for stores)")
        rates = self.per_ns_or if atomic_or else self.per_ns
        grid = 1.0 / np.asarray(rates, dtype=np.float64).reshape(len(self.sizes), len(self.write_fractions))
        by_size = [np.interp(fraction, self.write_fractions, row) for row in grid]
        return 1.0 / float(np.interp(np.log2(float(mask_bytes)), np.log2(np.asarray(self.sizes, dtype=np.float64)),
                                     by_size))

    def values(self) -> dict:
        """The [bitmask] arrays, in BITMASK_KEYS order (per_ns_or only where measured)."""
        return {key: list(getattr(self, key)) for key in BITMASK_KEYS if getattr(self, key)}


def parse_bitmask(check: Checker, table, device_name: str) -> BitmaskRates:
    """The BitmaskRates of a [bitmask] table; every mistake is `check.fail` naming the key."""
    table = check.table(table, "bitmask")
    required = tuple(key for key in BITMASK_KEYS if key not in OPTIONAL_BITMASK_KEYS)
    check.keys(table, "bitmask", required + ("provenance",), OPTIONAL_BITMASK_KEYS)
    arrays = {"sizes": check.number_array(table["sizes"], "bitmask.sizes", integers=True),
              "write_fractions": check.number_array(table["write_fractions"], "bitmask.write_fractions",
                                                    allow_zero=True),
              "per_ns": check.number_array(table["per_ns"], "bitmask.per_ns")}
    if "per_ns_or" in table:
        arrays["per_ns_or"] = check.number_array(table["per_ns_or"], "bitmask.per_ns_or")
    for i, fraction in enumerate(arrays["write_fractions"]):
        if not 0.0 <= fraction <= 1.0:
            check.fail(f"bitmask.write_fractions[{i}]", f"must be in 0..1, got {fraction}")
    for key in ("sizes", "write_fractions"):
        check.increasing(arrays[key], f"bitmask.{key}")
    cells = len(arrays["sizes"]) * len(arrays["write_fractions"])
    for key in ("per_ns", "per_ns_or"):
        if key in arrays and len(arrays[key]) != cells:
            check.fail(f"bitmask.{key}", f"has {len(arrays[key])} values for the {cells} of bitmask.sizes x "
                       "bitmask.write_fractions")
    provenance = check.run_provenance(table["provenance"], "bitmask.provenance", RUN_KEYS, device_name,
                                      "the bitmask rates")
    return BitmaskRates(tuple(arrays["sizes"]), tuple(arrays["write_fractions"]), tuple(arrays["per_ns"]),
                        tuple(arrays.get("per_ns_or", ())), provenance)
