"""The generator registry: spec keys, defaults and descriptions, and the spec -> EdgeList entry points."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable

from ..errors import InputError
from ..graph import INDEX_LIMIT, EdgeList
from ..spec import Param, bind_params, parse_spec
from ._kernels import SEED_LIMIT
from .geometric import delaunay, resolve_rgg, rgg
from .gnm import gnm
from .kronecker import kron, resolve_rmat, rmat
from .lattice import grid2d, grid3d, mesh6, resolve_grid2d, resolve_grid3d, resolve_mesh6


@dataclass(frozen=True)
class Generator:
    """A registered generator: its function, its spec keys and a one-line description."""

    func: Callable[..., EdgeList]
    params: dict[str, Param]
    description: str
    resolve: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    omit_defaults: tuple[str, ...] = ()  # keys left out of the canonical name when at their default


_SEED = Param(int, 1, 0, SEED_LIMIT)
_DIRECTED = Param(int, 0, 0, 1)
_SCALE = Param(int, None, 1, 30)
_EF = Param(int, 16, 1, 2**16)
_N = Param(int, None, 1, INDEX_LIMIT)
_SIDE = Param(int, None, 1, INDEX_LIMIT)

GENERATORS: dict[str, Generator] = {
    "rmat": Generator(
        rmat,
        {"scale": _SCALE, "ef": _EF, "a": Param(float, 0.57, 0.0, 1.0), "b": Param(float, 0.19, 0.0, 1.0),
         "c": Param(float, 0.19, 0.0, 1.0), "seed": _SEED, "directed": _DIRECTED},
        "R-MAT (Chakrabarti et al. 2004): 2**scale vertices, ef*2**scale edges by recursive quadrant "
        "choice a/b/c/d, no relabelling; seed 000's rmat1/2, seed 001's rmat.2Mv.128Me, seed 003's RMAT22",
        resolve_rmat,
        ("directed",),
    ),
    "kron": Generator(
        kron,
        {"scale": _SCALE, "ef": _EF, "seed": _SEED, "directed": _DIRECTED},
        "Graph500 Kronecker generator (A=0.57, B=0.19, C=0.19, random vertex relabelling and edge "
        "shuffle); seed 000's kron20 and seed 001's kron_g500-logn20",
        None,
        ("directed",),
    ),
    "random": Generator(
        gnm,
        {"n": _N, "m": Param(int, None, 0, 2**62), "seed": _SEED, "directed": _DIRECTED},
        "Erdos-Renyi G(n, M): exactly m distinct uniform edges, no self loops, random order; seed 000's "
        "random1-3 and seed 001's random.2Mv.128Me",
        None,  # m against n(n-1)/2 is checked in gnm, with the count in the message
        ("directed",),
    ),
    "grid2d": Generator(
        grid2d,
        {"side": _SIDE, "stencil": Param(int, 5, 5, 9)},
        "side x side 2D lattice, 5-point (4 neighbours) or 9-point stencil, id = row*side + col; "
        "seed 000's ecology (5-point), seed 001's grid5pt.5000",
        resolve_grid2d,
    ),
    "mesh6": Generator(
        mesh6,
        {"side": _SIDE},
        "side x side triangular lattice (4-neighbour grid plus the (r,c)-(r+1,c+1) diagonal, interior "
        "degree 6); seed 000's 'mesh' (6-point 2D mesh)",
        resolve_mesh6,
    ),
    "grid3d": Generator(
        grid3d,
        {"side": _SIDE},
        "side**3 3D lattice, 7-point stencil (6 neighbours), id = (z*side + y)*side + x; seed 000's "
        "thermal and seed 001's grid7pt.300",
        resolve_grid3d,
    ),
    "delaunay": Generator(
        delaunay,
        {"n": _N, "seed": _SEED},
        "Delaunay triangulation of n uniform points in the unit square (mean degree ~6), ids in point "
        "order; DIMACS10 delaunay_nXX, a planar stand-in for meshes and road maps",
        None,
    ),
    "rgg": Generator(
        rgg,
        {"n": _N, "seed": _SEED, "r": Param(float, 0.0, 0.0, 1.5)},
        "random geometric graph: n uniform points in the unit square joined within distance r "
        "(r=0: 0.55*sqrt(ln n / n)); DIMACS10 rgg_n_2_XX",
        resolve_rgg,
    ),
}


def _known() -> str:
    return ", ".join(GENERATORS)


def _format(value: Any) -> str:
    return repr(float(value)) if isinstance(value, float) else str(int(value))


def _bind(text: str) -> tuple[str, Generator, dict[str, Any]]:
    name, raw = parse_spec(str(text))
    gen = GENERATORS.get(name)
    if gen is None:
        raise InputError(f"unknown generator {name!r} in {str(text)!r} (known: {_known()})")
    bound = bind_params(name, raw, gen.params)
    if gen.resolve is not None:
        bound = gen.resolve(bound)
    return name, gen, bound


def _canonical(name: str, gen: Generator, bound: dict[str, Any]) -> str:
    items = [
        f"{key}={_format(value)}"
        for key, value in bound.items()
        if not (key in gen.omit_defaults and value == gen.params[key].default)
    ]
    return f"{name}:{','.join(items)}"


def is_generator_spec(text) -> bool:
    """True when the part of `text` before ':' names a registered generator."""
    if not isinstance(text, str):
        return False
    return text.partition(":")[0].strip().lower() in GENERATORS


def canonical_spec(text: str) -> str:
    """The spec with every parameter filled in (defaults, derived radius), as used in names."""
    name, gen, bound = _bind(text)
    return _canonical(name, gen, bound)


def declared_size(text: str) -> tuple[int, int]:
    """(vertices, stored edge entries) a spec asks for, from its parameters alone, before generating:
    `scale` gives 2**scale vertices and `ef` edges per vertex, `n` and `m` say it outright, `side` is
    a lattice's (side**3 for grid3d); edges default to 8 entries a vertex (meshes, Delaunay, RGG)."""
    name, _, bound = _bind(text)
    if "scale" in bound:
        n = 2 ** int(bound["scale"])
    elif "n" in bound:
        n = int(bound["n"])
    else:
        n = int(bound.get("side", 1)) ** (3 if name == "grid3d" else 2)
    if "ef" in bound:
        entries = 2 * int(bound["ef"]) * n
    elif "m" in bound:
        entries = 2 * int(bound["m"])
    else:
        entries = 8 * n
    return n, entries


def generate(text: str) -> EdgeList:
    """Generate the graph a spec names; its `name` is the canonical spec (every parameter filled in).

    `directed=0` (the default) is left out of the name, so names read like the papers' specs,
    e.g. `rmat:scale=10,ef=16,a=0.57,b=0.19,c=0.19,seed=1`.
    """
    name, gen, bound = _bind(text)
    edges = gen.func(**bound)
    return replace(edges, name=_canonical(name, gen, bound))
