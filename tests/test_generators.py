"""Seeded graph generators: exact structure of lattices, G(n, M) guarantees, R-MAT / Kronecker
statistics, determinism, canonical names and spec errors."""
from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.sparse.csgraph import connected_components
from scipy.spatial import Delaunay

from simdmodel import generators as gen
from simdmodel.generators import _kernels
from simdmodel.errors import InputError
from simdmodel.graph import EdgeList, count_duplicates, count_self_loops, csr_from_edges


def build(spec: str):
    edges = gen.generate(spec)
    return edges, csr_from_edges(edges)


def adjacency(graph):
    import scipy.sparse as sp

    return sp.csr_matrix((np.ones(graph.m), graph.indices, graph.indptr), shape=(graph.n, graph.n))


def rows_sorted(graph) -> bool:
    return all(np.all(np.diff(graph.neighbors(v)) > 0) for v in range(graph.n))


# ---------------------------------------------------------------------------------------------
# Lattices: exact degrees and edge counts
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("side", [1, 2, 3, 7])
def test_grid2d_stencil5_exact(side):
    edges, g = build(f"grid2d:side={side}")
    assert edges.undirected and edges.n == side * side
    assert g.m == 2 * (2 * side * (side - 1))
    deg = g.degrees().reshape(side, side)
    if side >= 2:
        for corner in (deg[0, 0], deg[0, -1], deg[-1, 0], deg[-1, -1]):
            assert corner == 2
    if side >= 3:
        assert np.all(deg[0, 1:-1] == 3) and np.all(deg[-1, 1:-1] == 3)
        assert np.all(deg[1:-1, 0] == 3) and np.all(deg[1:-1, -1] == 3)
        assert np.all(deg[1:-1, 1:-1] == 4)
    assert count_self_loops(g) == 0 and count_duplicates(g) == 0


def test_grid2d_ids_are_row_major_and_rows_sorted():
    side = 6
    _, g = build(f"grid2d:side={side}")
    v = 2 * side + 3  # row 2, col 3
    assert list(g.neighbors(v)) == [v - side, v - 1, v + 1, v + side]
    assert rows_sorted(g)


def test_grid2d_stencil9():
    side = 7
    edges, g = build(f"grid2d:side={side},stencil=9")
    assert edges.name == f"grid2d:side={side},stencil=9"
    assert g.m == 2 * (2 * side * (side - 1) + 2 * (side - 1) ** 2)
    deg = g.degrees().reshape(side, side)
    assert np.all(deg[1:-1, 1:-1] == 8)
    assert deg[0, 0] == 3 and np.all(deg[0, 1:-1] == 5)
    v = 3 * side + 3
    assert list(g.neighbors(v)) == sorted(v + dr * side + dc for dr in (-1, 0, 1) for dc in (-1, 0, 1) if dr or dc)
    assert rows_sorted(g)


def test_mesh6_triangular_lattice():
    side = 8
    _, g = build(f"mesh6:side={side}")
    assert g.m == 2 * (2 * side * (side - 1) + (side - 1) ** 2)
    deg = g.degrees().reshape(side, side)
    assert np.all(deg[1:-1, 1:-1] == 6)
    assert deg[0, 0] == 3 and deg[-1, -1] == 3 and deg[0, -1] == 2 and deg[-1, 0] == 2
    v = 4 * side + 4
    assert list(g.neighbors(v)) == [v - side - 1, v - side, v - 1, v + 1, v + side, v + side + 1]
    assert count_self_loops(g) == 0 and count_duplicates(g) == 0


def test_grid3d_seven_point():
    side = 5
    edges, g = build(f"grid3d:side={side}")
    assert edges.n == side**3
    assert g.m == 2 * 3 * side * side * (side - 1)
    deg = g.degrees().reshape(side, side, side)
    assert np.all(deg[1:-1, 1:-1, 1:-1] == 6)
    assert deg[0, 0, 0] == 3 and deg[0, 0, 2] == 4 and deg[0, 2, 2] == 5
    x, y, z = 1, 2, 3
    v = (z * side + y) * side + x
    assert list(g.neighbors(v)) == [v - side * side, v - side, v - 1, v + 1, v + side, v + side * side]
    assert rows_sorted(g)


# ---------------------------------------------------------------------------------------------
# G(n, M)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,m", [(2000, 30000), (30, 400), (30, 435), (2, 1), (1, 0), (50, 0)])
def test_random_undirected_exact(n, m):
    edges, g = build(f"random:n={n},m={m},seed=3")
    assert edges.undirected and edges.src.size == m
    assert g.m == 2 * m
    assert count_self_loops(g) == 0 and count_duplicates(g) == 0


@pytest.mark.parametrize("n,m", [(1000, 20000), (20, 300), (20, 380)])
def test_random_directed_exact(n, m):
    edges, g = build(f"random:n={n},m={m},seed=5,directed=1")
    assert not edges.undirected and edges.name.endswith("directed=1")
    assert g.m == m
    assert count_self_loops(g) == 0 and count_duplicates(g) == 0


def test_random_order_is_shuffled_and_degrees_binomial():
    n, m = 5000, 50000
    edges, g = build(f"random:n={n},m={m}")
    # Not sorted by source: the seed shuffles the edge order.
    assert np.any(np.diff(edges.src.astype(np.int64)) < 0) and np.any(np.diff(edges.src.astype(np.int64)) > 0)
    deg = g.degrees()
    assert abs(deg.mean() - 2 * m / n) < 1e-9
    assert deg.var() == pytest.approx(2 * m / n, rel=0.1)  # ~ Poisson(20)


def test_random_too_many_edges():
    with pytest.raises(InputError, match=r"m=46 .*45"):
        gen.generate("random:n=10,m=46")
    with pytest.raises(InputError, match="n=1"):
        gen.generate("random:n=1,m=1")


# ---------------------------------------------------------------------------------------------
# Delaunay and random geometric graphs
# ---------------------------------------------------------------------------------------------
def test_delaunay_mean_degree_and_connected():
    edges, g = build("delaunay:n=20000,seed=2")
    assert 5.8 <= g.m / g.n <= 6.0
    assert count_self_loops(g) == 0 and count_duplicates(g) == 0
    assert connected_components(adjacency(g), directed=False)[0] == 1


def test_delaunay_matches_scipy_in_point_order():
    n, seed = 500, 4
    edges = gen.generate(f"delaunay:n={n},seed={seed}")
    points = _kernels.unit_points(n, _kernels.key(seed, _kernels.TAG_POINTS))
    tri = Delaunay(points).simplices
    a, b = tri[:, [0, 1, 2]].ravel(), tri[:, [1, 2, 0]].ravel()
    expect = {(min(x, y), max(x, y)) for x, y in zip(a.tolist(), b.tolist())}
    got = set(zip(edges.src.tolist(), edges.dst.tolist()))
    assert got == expect and len(got) == edges.src.size


def test_rgg_default_radius_and_brute_force():
    n, seed = 400, 7
    edges = gen.generate(f"rgg:n={n},seed={seed}")
    r = 0.55 * math.sqrt(math.log(n) / n)
    assert edges.name == f"rgg:n={n},seed={seed},r={r!r}"
    points = _kernels.unit_points(n, _kernels.key(seed, _kernels.TAG_POINTS))
    dist = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    i, j = np.nonzero(np.triu(dist <= r, 1))
    assert np.array_equal(edges.src, i) and np.array_equal(edges.dst, j)
    assert gen.generate(f"rgg:n={n},seed={seed},r=0.2").src.size > edges.src.size


# ---------------------------------------------------------------------------------------------
# R-MAT and Graph500 Kronecker
# ---------------------------------------------------------------------------------------------
def test_rmat_sizes_and_top_bit_frequency():
    scale, ef = 12, 16
    edges, g = build(f"rmat:scale={scale},ef={ef},seed=9")
    n = 2**scale
    assert edges.n == n and g.n == n and edges.undirected
    assert g.report.entries_read == ef * n
    half = n // 2
    # First recursion level: source bit 0 with probability a+b, destination bit 0 with a+c.
    assert np.mean(edges.src < half) == pytest.approx(0.57 + 0.19, abs=0.01)
    assert np.mean(edges.dst < half) == pytest.approx(0.57 + 0.19, abs=0.01)
    both = np.mean((edges.src < half) & (edges.dst < half))
    assert both == pytest.approx(0.57, abs=0.01)
    # No relabelling: vertex 0 is the hub.
    assert int(np.argmax(g.degrees())) == 0


def test_rmat_custom_probabilities_and_directed():
    edges, g = build("rmat:scale=12,ef=8,a=0.45,b=0.15,c=0.25,seed=2,directed=1")
    assert not edges.undirected and g.m == 8 * 4096
    half = 2048
    assert np.mean(edges.src < half) == pytest.approx(0.60, abs=0.015)
    assert np.mean(edges.dst < half) == pytest.approx(0.70, abs=0.015)
    assert edges.name == "rmat:scale=12,ef=8,a=0.45,b=0.15,c=0.25,seed=2,directed=1"


def test_kron_skewed_and_relabelled():
    scale, ef = 12, 16
    k_edges, k = build(f"kron:scale={scale},ef={ef},seed=1")
    r_edges, r = build(f"rmat:scale={scale},ef={ef},seed=1")
    assert k.n == 2**scale and k.report.entries_read == ef * 2**scale
    deg = k.degrees()
    assert deg.max() > 20 * deg.mean()
    # Same initiator, so the same degree statistics; the permutation moves the hub off vertex 0.
    assert np.sort(deg)[-1] == pytest.approx(np.sort(r.degrees())[-1], rel=0.3)
    assert int(np.argmax(deg)) != 0
    assert not np.array_equal(k_edges.src, r_edges.src)
    # The edge order is shuffled: neither endpoint array is sorted, and the lowest id is not
    # systematically the hub's.
    assert np.any(np.diff(k_edges.src.astype(np.int64)) < 0)


# ---------------------------------------------------------------------------------------------
# Determinism and names
# ---------------------------------------------------------------------------------------------
DETERMINISM_SPECS = [
    "rmat:scale=10,ef=4",
    "kron:scale=10,ef=4",
    "random:n=3000,m=20000",
    "random:n=30,m=400,directed=1",
    "delaunay:n=300",
    "rgg:n=300",
]


@pytest.mark.parametrize("spec", DETERMINISM_SPECS)
def test_same_seed_identical_other_seed_different(spec):
    one, two = gen.generate(spec), gen.generate(spec)
    assert np.array_equal(one.src, two.src) and np.array_equal(one.dst, two.dst)
    assert one.src.dtype == np.int32 and one.dst.dtype == np.int32
    other = gen.generate(spec + ",seed=2")
    assert not (np.array_equal(one.src, other.src) and np.array_equal(one.dst, other.dst))
    again = gen.generate(one.name)  # the canonical name reproduces the graph
    assert again.name == one.name and np.array_equal(one.src, again.src) and np.array_equal(one.dst, again.dst)


@pytest.mark.skipif(numba.config.NUMBA_NUM_THREADS < 2, reason="needs two numba threads")
@pytest.mark.parametrize("spec", ["rmat:scale=11,ef=8", "kron:scale=11,ef=8", "random:n=5000,m=40000"])
def test_independent_of_thread_count(spec):
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        serial = gen.generate(spec)
    finally:
        numba.set_num_threads(before)
    parallel = gen.generate(spec)
    assert np.array_equal(serial.src, parallel.src) and np.array_equal(serial.dst, parallel.dst)


def test_canonical_names():
    assert gen.generate("rmat:scale=10").name == "rmat:scale=10,ef=16,a=0.57,b=0.19,c=0.19,seed=1"
    assert gen.generate(" RMAT : scale = 4 , ef=2 ").name == "rmat:scale=4,ef=2,a=0.57,b=0.19,c=0.19,seed=1"
    assert gen.generate("kron:scale=5,ef=2,directed=1").name == "kron:scale=5,ef=2,seed=1,directed=1"
    assert gen.generate("random:n=1e3,m=10").name == "random:n=1000,m=10,seed=1"
    assert gen.generate("grid2d:side=3").name == "grid2d:side=3,stencil=5"
    assert gen.generate("mesh6:side=3").name == "mesh6:side=3"
    assert gen.generate("delaunay:n=10").name == "delaunay:n=10,seed=1"
    assert gen.canonical_spec("grid3d:side=2") == "grid3d:side=2"


def test_registry_and_is_generator_spec():
    assert set(gen.GENERATORS) == {"rmat", "kron", "random", "grid2d", "mesh6", "grid3d", "delaunay", "rgg"}
    for name, g in gen.GENERATORS.items():
        assert g.description and "\n" not in g.description, name
        assert all(isinstance(p, gen.Param) for p in g.params.values())
    assert gen.is_generator_spec("rmat:scale=3")
    assert gen.is_generator_spec("Grid2D:side=4")
    assert not gen.is_generator_spec("graph.mtx")
    assert not gen.is_generator_spec("C:\\graphs\\x.mtx")
    assert not gen.is_generator_spec("/tmp/rmat.mtx")
    assert not gen.is_generator_spec("foo:scale=3")


# ---------------------------------------------------------------------------------------------
# Spec errors: InputError with one line
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec,needle",
    [
        ("rmat:scale=5,foo=1", "unknown key 'foo'"),
        ("bogus:n=5", "known: rmat, kron, random, grid2d, mesh6, grid3d, delaunay, rgg"),
        ("rmat:scale=5,a=0.5,b=0.3,c=0.2", "a+b+c < 1"),
        ("rmat:scale=5,a=0.6,b=0.3,c=0.2", "a+b+c < 1"),
        ("rmat:scale=5,a=-0.1", "outside"),
        ("rmat:scale=0", "scale=0 outside"),
        ("kron:scale=31", "scale=31 outside"),
        ("rmat:scale=2.5", "not an integer"),
        ("rmat:ef=4", "'scale' is required"),
        ("grid2d:side=4,stencil=7", "stencil=7"),
        ("grid2d:side=0", "side=0 outside"),
        ("grid2d:side=50000", "int32"),
        ("grid3d:side=1300", "int32"),
        ("random:n=10,m=5,seed=-1", "seed=-1 outside"),
        ("random:n=10,m=5,directed=2", "directed=2 outside"),
        ("rgg:n=10,r=nan", "r=nan"),
        ("delaunay:n=0", "n=0 outside"),
        ("rmat:scale", "expected key=value"),
    ],
)
def test_spec_errors(spec, needle):
    with pytest.raises(InputError) as info:
        gen.generate(spec)
    message = str(info.value)
    assert needle in message and "\n" not in message


# ---------------------------------------------------------------------------------------------
# Property: every generator returns valid ids for small random parameters
# ---------------------------------------------------------------------------------------------
@st.composite
def small_specs(draw):
    name = draw(st.sampled_from(sorted(gen.GENERATORS)))
    seed = draw(st.integers(0, 2**40))
    directed = draw(st.integers(0, 1))
    if name in ("rmat", "kron"):
        spec = f"{name}:scale={draw(st.integers(1, 8))},ef={draw(st.integers(1, 8))},seed={seed},directed={directed}"
        if name == "rmat":
            a = draw(st.floats(0.0, 0.9))
            b = draw(st.floats(0.0, 0.95 - a))
            c = draw(st.floats(0.0, 0.97 - a - b))
            spec += f",a={a!r},b={b!r},c={c!r}"
        return spec
    if name == "random":
        n = draw(st.integers(1, 60))
        possible = n * (n - 1) // (1 if directed else 2)
        return f"random:n={n},m={draw(st.integers(0, possible))},seed={seed},directed={directed}"
    if name in ("grid2d", "mesh6", "grid3d"):
        side = draw(st.integers(1, 12 if name != "grid3d" else 6))
        stencil = f",stencil={draw(st.sampled_from([5, 9]))}" if name == "grid2d" else ""
        return f"{name}:side={side}{stencil}"
    n = draw(st.integers(1, 300))
    if name == "rgg":
        return f"rgg:n={n},seed={seed},r={draw(st.floats(0.0, 1.5))!r}"
    return f"delaunay:n={n},seed={seed}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_specs())
def test_small_specs_give_valid_ids(spec):
    edges = gen.generate(spec)
    assert isinstance(edges, EdgeList)
    assert edges.src.dtype == np.int32 and edges.dst.dtype == np.int32
    assert edges.src.shape == edges.dst.shape
    if edges.src.size:
        assert 0 <= min(edges.src.min(), edges.dst.min())
        assert max(edges.src.max(), edges.dst.max()) < edges.n
    assert gen.generate(edges.name).name == edges.name
    graph = csr_from_edges(edges)
    assert graph.n == edges.n
