"""L2 and row-buffer cache models for the operator machine (seed 003 §6.4, DESIGN.md).

Fully associative LRU by stack distance (`stack`) and a sectored set-associative LRU (`setassoc`),
both fed the stream of 32-byte sector ids that coalescing produces; `partitions` follows which of a
partitioned L2's partitions hold each sector, `lru_list` is the row buffers' LRU, and `l1` each SM's L1
under the coupled kernels' bitmask reads.
"""
from .setassoc import SetAssocGeometry, SetAssocState, setassoc_hits
from .stack import lru_hits, miss_ratio_curve, stack_distances

__all__ = [
    "SetAssocGeometry",
    "SetAssocState",
    "lru_hits",
    "miss_ratio_curve",
    "setassoc_hits",
    "stack_distances",
]
