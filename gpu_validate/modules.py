"""The CUDA C sources of the modelled kernels (package data) compiled with cupy.RawModule.

One source file per kernel, sharing `bfs_common.cuh`, built twice on demand: plain for timing
and Nsight Compute, and with `-DCOUNT_LANES=1` for the lane and job counters. An expansion by a
registered mapping strategy is found by the strategy's name: `cuda/<name>.cu` defines
`bfs_expand_<name>`, a template over the strategy's parameters that are not the block size
(`bfs_expand_group<S>`), or a plain `extern "C"` kernel when there are none (`ws`, `scan`).
"""
from __future__ import annotations

import functools
import hashlib
import importlib.resources
from pathlib import Path

from simdmodel.errors import InputError

FIXED_SOURCES = {"topo": ("topo.cu", "bfs_topo"), "compact": ("compact.cu", "bfs_compact"),
                 "hold": ("hold.cu", "hold_until"), "empty": ("hold.cu", "empty_launch"),
                 "store": ("hold.cu", "store_launch"),
                 "touch-spin": ("hold.cu", "touch_and_spin"),
                 "spin": ("hold.cu", "spin_cycles"), "gather": ("gather.cu", "gather_random"),
                 "gather-ca": ("gather.cu", "gather_random_ca"),
                 "atomic-same": ("atomics.cu", "atomic_same"), "chase": ("atomics.cu", "chase"),
                 "atomic-after-loads": ("atomics.cu", "atomic_after_loads"),
                 "bitmask-rmw": ("bitmask.cu", "bitmask_rmw"), "bitmask-or": ("bitmask.cu", "bitmask_or"),
                 "memory-mix": ("memory_mix.cu", "memory_mix"), "barrier-rounds": ("barrier.cu", "barrier_rounds")}


def cuda_dir() -> Path:
    """The folder holding the .cu / .cuh sources."""
    return Path(str(importlib.resources.files("gpu_validate").joinpath("cuda")))


def source_file(name: str) -> str:
    """The .cu file of a fixed kernel (`topo`, `compact`, ...) or of a strategy's expansion."""
    return FIXED_SOURCES[name][0] if name in FIXED_SOURCES else f"{name}.cu"


def source_text(name: str) -> str:
    """The CUDA source of `name` (see `source_file`)."""
    return (cuda_dir() / source_file(name)).read_text(encoding="utf-8")


def compile_options(instrumented: bool, defines: tuple[str, ...] = ()) -> tuple[str, ...]:
    """nvcc/NVRTC options of a kernel build; `defines`: further `-D` options (a kernel variant)."""
    return ("-std=c++17", f"-I{cuda_dir()}", *defines, f"-DCOUNT_LANES={int(instrumented)}", "-lineinfo")


def expansion_source(mapping) -> tuple[str, str, bool]:
    """(source file, kernel name expression, is a template) of the expansion by `mapping`."""
    spec = mapping.spec
    arguments = [str(v) for p, v in zip(spec.params, mapping.params) if not p.binds_block]
    file_name = source_file(spec.name)
    if not (cuda_dir() / file_name).is_file():
        raise InputError(f"strategy {spec.name!r} has no CUDA kernel (gpu_validate/cuda/{file_name})")
    name = f"bfs_expand_{spec.name}"
    return file_name, f"{name}<{','.join(arguments)}>" if arguments else name, bool(arguments)


def headers_digest() -> str:
    """A digest of the kernels' headers (`cuda/*.cuh`). CuPy keys its cache of compiled modules by the source
    text it is given, not by what that text includes: `_module` appends this digest (as a last comment
    line, so no line number moves), so that editing a header compiles the kernels again."""
    digest = hashlib.sha256()
    for header in sorted(cuda_dir().glob("*.cuh")):
        digest.update(header.name.encode() + b"\0" + header.read_bytes())
    return digest.hexdigest()


@functools.cache
def _module(file_name: str, instrumented: bool, expressions: tuple[str, ...], defines: tuple[str, ...] = ()):
    import cupy

    code = (cuda_dir() / file_name).read_text(encoding="utf-8") + f"\n// headers {headers_digest()}\n"
    return cupy.RawModule(code=code, options=compile_options(instrumented, defines),
                          name_expressions=list(expressions) or None)


def function(name: str, instrumented: bool = False):
    """A compiled fixed kernel: `topo`, `compact`, `hold`, `empty`, `store`, `touch-spin`, `spin`, `gather`,
    `gather-ca`, `atomic-same`, `chase`, `atomic-after-loads`, `bitmask-rmw`, `bitmask-or`, `memory-mix` or
    `barrier-rounds`."""
    file_name, entry = FIXED_SOURCES[name]
    return _module(file_name, instrumented, ()).get_function(entry)


def lookup(mode: int):
    """The compiled isolated status lookup (`cuda/lookup.cu`) of mode index `mode` (`simdmodel.lookup.MODES`)."""
    expressions = tuple(f"lookup_status<{k}>" for k in range(5))
    return _module("lookup.cu", False, expressions).get_function(expressions[mode])


COUPLING_KERNELS = {"expand": "couple_expand", "pieces": "couple_copy_pieces", "contract": "couple_contract",
                    "expand-contract": "couple_expand_contract", "contract-expand": "couple_contract_expand",
                    "lookup-pieces": "couple_lookup_pieces"}
"""The kernel of each launch phase of a coupled BFS (`cuda/couplings.cu`); all but the first two are
templates over the lookup mode index (1..4, `simdmodel.couplings.COUPLING_MODES`); `lookup-pieces`
runs the pieces of an expand-contract launch."""


BITMASK_LOADS = ("l1", "l2")
"""Where the atomic lookup's bitmask loads go: through the SM's L1 (the default build) or to the L2 only
(`-DBITMASK_L1=0`, every load seeing the stores that reached the L2)."""
BITMASK_STORES = ("claim", "plain")
"""Who sets the atomic lookup's bitmask bits: only the lane whose compare-and-swap claimed the vertex, with one
atomicOr (the default build, `-DBITMASK_CLAIM=1`: no byte store clobbers another lane's bit, and the stores are
one a discovered vertex), or every lane that found its bit unset, with a plain byte store of the byte it read
(`plain`, seed 001's; the only build before the claim build became the default). The model follows either
(`simdmodel.couplings.coupled_launches(claim=...)`). The other lookup modes, and `lookup.cu`'s, store bytes."""
DEFAULT_BUILD = (BITMASK_LOADS[0], BITMASK_STORES[0])
"""(bitmask loads, bitmask stores) of the coupled kernels as they run unless told otherwise."""
RECORDED_BEFORE_NAMES = ("l1", "plain")
"""The build of a coupling run whose record names none (recorded before the builds had names: the plain one)."""


def recorded_build(record: dict) -> tuple[str, str]:
    """(bitmask loads, bitmask stores) of the build a coupling run's record (summary.json) names, the plain
    build where it names none."""
    return (str(record.get("bitmask_loads", RECORDED_BEFORE_NAMES[0])),
            str(record.get("bitmask_stores", RECORDED_BEFORE_NAMES[1])))


def coupling_defines(bitmask_loads: str = DEFAULT_BUILD[0],
                     bitmask_stores: str = DEFAULT_BUILD[1]) -> tuple[str, ...]:
    """The `-D` options of the coupled kernels' build that `bitmask_loads` (BITMASK_LOADS) and `bitmask_stores`
    (BITMASK_STORES) name (the CUDA sources' own defaults are the L1 loads and plain stores); InputError naming
    the known ones otherwise."""
    for what, value, known in (("loads", bitmask_loads, BITMASK_LOADS), ("stores", bitmask_stores, BITMASK_STORES)):
        if value not in known:
            raise InputError(f"unknown bitmask {what} {value!r} (choose {', '.join(known)})")
    return (*(() if bitmask_loads == "l1" else ("-DBITMASK_L1=0",)),
            *(() if bitmask_stores == "plain" else ("-DBITMASK_CLAIM=1",)))


def coupling(phase: str, mode: int, instrumented: bool = False, bitmask_loads: str = DEFAULT_BUILD[0],
             bitmask_stores: str = DEFAULT_BUILD[1]):
    """The compiled kernel of coupled-BFS launch `phase` with lookup mode index `mode`, of the build
    `coupling_defines` names."""
    defines = coupling_defines(bitmask_loads, bitmask_stores)
    names = list(COUPLING_KERNELS.values())
    expressions = (*names[:2], *(f"{name}<{m}>" for name in names[2:] for m in range(1, 5)))
    entry = COUPLING_KERNELS[phase] if phase in ("expand", "pieces") else f"{COUPLING_KERNELS[phase]}<{mode}>"
    return _module("couplings.cu", instrumented, expressions, defines).get_function(entry)


def expansion(mapping, instrumented: bool = False):
    """The compiled expansion kernel of `mapping` (a simdmodel Mapping)."""
    file_name, entry, template = expansion_source(mapping)
    return _module(file_name, instrumented, (entry,) if template else ()).get_function(entry)
