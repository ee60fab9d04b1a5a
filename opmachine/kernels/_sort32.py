"""Sorting the 32 values of one warp's lanes with a bitonic network on one LLVM vector.

A warp's gather (`level[dst]`, seed 003 Fig. 4) touches 32 scattered sectors; coalescing them
into ascending distinct sectors by insertion costs about 600 ns a job, the bulk of job generation.
The network compiles to a few dozen vector min / max / shuffle instructions (about 35 ns with the
key computation), with no data-dependent branch.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

LANES = 32


def bitonic_layers(n: int) -> list[tuple[int, int]]:
    """The (k, j) compare-exchange layers of a bitonic sort of n = 2**p values: lane i meets lane
    i ^ j, and keeps the smaller value iff ((i & k) == 0) == (i < i ^ j)."""
    layers = []
    k = 2
    while k <= n:
        j = k // 2
        while j >= 1:
            layers.append((k, j))
            j //= 2
        k *= 2
    return layers


@intrinsic
def sort32(typingctx, keys):
    """Sort `keys[:32]` (a contiguous int32 array of at least 32) ascending, in place."""
    if not (isinstance(keys, types.Array) and keys.dtype == types.int32 and keys.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        i32 = ir.IntType(32)
        vector_type = ir.VectorType(i32, LANES)
        data = context.make_array(signature.args[0])(context, builder, args[0]).data
        pointer = builder.bitcast(data, vector_type.as_pointer())
        values = builder.load(pointer, align=4)
        undefined = ir.Constant(vector_type, ir.Undefined)
        for k, j in bitonic_layers(LANES):
            partner = builder.shuffle_vector(values, undefined, ir.Constant(vector_type, [i ^ j for i in range(LANES)]))
            less = builder.icmp_signed("<", values, partner)
            smaller = builder.select(less, values, partner)
            larger = builder.select(less, partner, values)
            keep_smaller = ir.Constant(ir.VectorType(ir.IntType(1), LANES),
                                       [int(((i & k) == 0) == (i < (i ^ j))) for i in range(LANES)])
            values = builder.select(keep_smaller, smaller, larger)
        builder.store(values, pointer, align=4)
        return context.get_dummy_value()

    return types.none(keys), codegen
