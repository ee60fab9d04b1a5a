"""Seeded graph generators behind specs such as `rmat:scale=20,ef=16,seed=1`.

The suite stands for the graphs of the seed papers (seed 000 Table 1, seed 001 Table 1): R-MAT and
Graph500 Kronecker graphs (rmat1/2, kron_g500-logn20), uniform random graphs (random1-3,
random.2Mv.128Me), regular lattices (ecology = 5-point grid, mesh = 6-point 2D mesh, thermal /
grid7pt = 3D 7-point lattice) and DIMACS10-style planar / geometric graphs (delaunay_nXX, rgg_n_2_XX).

Every random draw comes from one counter-based hash (splitmix64 of a seeded key plus a counter), so
the same spec gives bit-identical edges whatever the numba thread count or numpy version. Undirected
generators return each edge once (`EdgeList(undirected=True)`); the CSR builder stores both
directions. Ids are int32. `EdgeList.name` is the canonical spec with every parameter filled in.

One module per family (`kronecker`, `gnm`, `lattice`, `geometric`), their shared numba kernels in
`_kernels`, and the registry of specs in `registry`.
"""
from __future__ import annotations

from ..spec import Param
from ._kernels import SEED_LIMIT
from .registry import GENERATORS, Generator, canonical_spec, declared_size, generate, is_generator_spec

__all__ = ["Generator", "GENERATORS", "Param", "SEED_LIMIT", "is_generator_spec", "generate", "canonical_spec",
           "declared_size"]
