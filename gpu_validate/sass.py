"""SASS listings of the modelled kernels, the compiled code the instruction model counts.

`python -m gpu_validate.sass --out opmachine/sass` compiles every kernel the validation runs
(`topo`, `compact`, `sm-1` .. `sm-32`, `ws`, `scan`, `swc`, and seed 001's coupled kernels `couple-PHASE`
with the default `atomic` lookup) exactly as `modules` builds it for timing (uninstrumented, same
options; the coupled kernels as their default build, `modules.DEFAULT_BUILD`), disassembles it with
`nvdisasm -c -gi -hex` (instructions, their control words and inlined source lines) and writes one
listing per kernel to `<out>/<arch>/<kernel>.sass`, headed by its provenance and by the `// trips: EVENT`
markers of the CUDA sources (which loop or branch runs how often: `opmachine.instructions` reads them).
`--nvrtc LIB` compiles with the NVRTC library the validation's CuPy uses (the `nvidia-cuda-nvrtc` wheel
carries it), `--nvcc` with nvcc; neither needs a GPU.
"""
from __future__ import annotations

import argparse
import datetime
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from simdmodel.atomic import write_text
from opmachine.kernels.couple import listing_name
from simdmodel.errors import InputError
from simdmodel.lookup import ATOMIC
from simdmodel.strategies import Mapping

from .modules import COUPLING_KERNELS, FIXED_SOURCES, compile_options, coupling_defines, cuda_dir, expansion_source

GROUP_SIZES = (1, 2, 4, 8, 16, 32)
CUPY_NVRTC_OPTIONS = ("-ftz=true", "--device-as-default-execution-space")
"""What CuPy 14's RawModule adds to the options it is given (besides include paths), so NVRTC here
builds the binary CuPy builds (seen on the device by wrapping cupy_backends' nvrtc.compileProgram)."""
_MARKER = re.compile(r"//\s*trips:\s*([a-z_]+)")


CHASE = ("microbench.cu", "mb_chase_1", False, ())
"""The memory microbenchmarks' one-chain pointer chase (`gpu_validate.microbench`): its listing says how
many cycles a hop spends issuing its own instructions, which the measured one-warp latencies include."""


def listed_kernels() -> dict[str, tuple[str, str, bool, tuple[str, ...]]]:
    """Kernel label -> (source file, entry name expression, is a template, its build's `-D` options), in
    listing order."""
    kernels = {name: (FIXED_SOURCES[name][0], FIXED_SOURCES[name][1], False, ()) for name in ("topo", "compact")}
    for mapping in (*(Mapping("group", s) for s in GROUP_SIZES), Mapping("ws"), Mapping("scan"), Mapping("swc")):
        kernels[mapping.label] = (*expansion_source(mapping), ())
    for phase, name in COUPLING_KERNELS.items():  # the coupled kernels with the default (atomic) lookup and build
        template = phase not in ("expand", "pieces")
        kernels[listing_name(phase)] = ("couplings.cu", f"{name}<{ATOMIC}>" if template else name, template,
                                        coupling_defines())
    kernels["chase"] = CHASE
    return kernels


def trip_markers() -> list[tuple[str, int, str]]:
    """(file, line, event) of every `// trips: EVENT` marker in the CUDA sources."""
    markers = []
    for path in sorted(cuda_dir().glob("*.cu*")):
        for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            found = _MARKER.search(text)
            if found:
                markers.append((path.name, number, found.group(1)))
    return markers


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise InputError(f"{name} is not on PATH (it comes with the CUDA toolkit, or the nvidia-cuda-{name} wheel)")
    return found


def cubin_nvcc(file_name: str, entry: str, template: bool, arch: str, work: Path,
               defines: tuple[str, ...] = ()) -> bytes:
    """The uninstrumented build of one kernel (with `defines`) compiled by nvcc for `arch` (sm_XX)."""
    source = work / (re.sub(r"\W+", "_", entry) + ".cu")
    text = f'#include "{file_name}"\n'
    if template:  # a host reference instantiates the template, as NVRTC's name expression does
        text += f"void* simdmodel_instantiate() {{ return (void*)&{entry}; }}\n"
    source.write_text(text, encoding="utf-8")
    out = source.with_suffix(".cubin")
    command = [_tool("nvcc"), "-cubin", f"-arch={arch}", *compile_options(False, defines), "-ftz=true", "-o", str(out),
               str(source)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"nvcc failed on {file_name}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return out.read_bytes()


def cubin_nvrtc(file_name: str, entry: str, template: bool, arch: str, library: str,
                defines: tuple[str, ...] = ()) -> bytes:
    """The uninstrumented build of one kernel (with `defines`) compiled by the NVRTC shared library at
    `library` (the compiler CuPy uses; the `nvidia-cuda-nvrtc` wheel carries it), called through ctypes: no
    GPU needed."""
    import ctypes

    nvrtc = ctypes.CDLL(library)
    program = ctypes.c_void_p()
    code = (cuda_dir() / file_name).read_text(encoding="utf-8").encode()

    def check(status, what):
        if status != 0:
            size = ctypes.c_size_t()
            nvrtc.nvrtcGetProgramLogSize(program, ctypes.byref(size))
            log = ctypes.create_string_buffer(size.value)
            nvrtc.nvrtcGetProgramLog(program, log)
            raise InputError(f"NVRTC {what} failed on {file_name}: {log.value.decode(errors='replace').strip() or status}")

    check(nvrtc.nvrtcCreateProgram(ctypes.byref(program), code, file_name.encode(), 0, None, None), "create")
    try:
        if template:
            check(nvrtc.nvrtcAddNameExpression(program, entry.encode()), "name expression")
        options = [o.encode() for o in (*compile_options(False, defines), *CUPY_NVRTC_OPTIONS, f"-arch={arch}")]
        check(nvrtc.nvrtcCompileProgram(program, len(options), (ctypes.c_char_p * len(options))(*options)), "compile")
        size = ctypes.c_size_t()
        check(nvrtc.nvrtcGetCUBINSize(program, ctypes.byref(size)), "cubin size")
        cubin = ctypes.create_string_buffer(size.value)
        check(nvrtc.nvrtcGetCUBIN(program, cubin), "cubin")
        return cubin.raw
    finally:
        nvrtc.nvrtcDestroyProgram(ctypes.byref(program))


def nvrtc_version(library: str) -> str:
    import ctypes

    major, minor = ctypes.c_int(), ctypes.c_int()
    ctypes.CDLL(library).nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
    return f"NVRTC {major.value}.{minor.value} ({Path(library).name}, called directly)"


def disassemble(cubin: bytes, work: Path, function: str | None = None) -> str:
    """`nvdisasm -c -gi -hex` of a cubin, with source paths cut to their file names; with `function`,
    only that function's section (a cubin of several kernels; a template `name<4>` of integer arguments
    matches its mangled name)."""
    path = work / "kernel.cubin"
    path.write_bytes(cubin)
    done = subprocess.run([_tool("nvdisasm"), "-c", "-gi", "-hex", str(path)], capture_output=True, text=True)
    if done.returncode != 0:
        raise InputError(f"nvdisasm failed: {done.stderr.strip()}")
    text = re.sub(r'"[^"\n]*/([^"/\n]+)"', r'"\1"', done.stdout)
    if function is None:
        return text
    parts = re.split(r"(?m)^(?=//-+ \.text\.)", text)
    name, _, arguments = function.partition("<")
    mangled = "I" + "".join(f"Li{a.strip()}E" for a in arguments.rstrip(">").split(",")) + "E" if arguments else "I"
    pattern = rf"//-+ \.text\.(?:{re.escape(name)}|_Z\d+{re.escape(name)}{mangled}\S*)\s"
    kept = [p for p in parts[1:] if re.match(pattern, p)]
    if len(kept) != 1:
        raise InputError(f"nvdisasm: no single function {function} in the cubin")
    return parts[0] + kept[0]


def nvcc_version() -> str:
    done = subprocess.run([_tool("nvcc"), "--version"], capture_output=True, text=True)
    return "nvcc " + done.stdout.strip().splitlines()[-1]


def write_listings(out: Path, arch: str, command: str, library: str | None = None) -> list[Path]:
    """Compile with the NVRTC `library` (or nvcc when None), disassemble and write every listed kernel;
    returns the files written."""
    markers = trip_markers()
    compiler = nvrtc_version(library) if library else nvcc_version()
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if library is None:
            for path in cuda_dir().glob("*.cu*"):
                shutil.copy(path, work / path.name)
        for label, (file_name, entry, template, defines) in listed_kernels().items():
            cubin = (cubin_nvrtc(file_name, entry, template, arch, library, defines) if library
                     else cubin_nvcc(file_name, entry, template, arch, work, defines))
            options = (*compile_options(False, defines), *(CUPY_NVRTC_OPTIONS if library else ("-ftz=true",)))
            header = [f"// SASS of kernel {label} ({entry}, {file_name}) for {arch}",
                      f"// compiler: {compiler}, options: {' '.join(o for o in options if not o.startswith('-I'))} -arch={arch}",
                      "// disassembled by: nvdisasm -c -gi -hex",
                      f"// made by: {command} ({date})"]
            header += [f"// trips {file}:{line} {event}" for file, line, event in markers]
            target = out / arch / f"{label}.sass"
            target.parent.mkdir(parents=True, exist_ok=True)
            write_text(target, "\n".join(header) + "\n" + disassemble(cubin, work, entry))
            written.append(target)
    return written


def main(argv=None) -> int:
    """CLI: write the SASS listings (exit 2 with one line on bad input or a missing tool)."""
    parser = argparse.ArgumentParser(prog="python -m gpu_validate.sass", description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="folder of the listings (the package's is opmachine/sass)")
    parser.add_argument("--arch", required=True, help="target architecture, e.g. sm_90")
    compilers = parser.add_mutually_exclusive_group(required=True)
    compilers.add_argument("--nvcc", action="store_true", help="compile with nvcc (no GPU needed)")
    compilers.add_argument("--nvrtc", metavar="LIB", help="compile with this NVRTC library (libnvrtc.so.13, from the "
                           "nvidia-cuda-nvrtc wheel), CuPy's compiler without CuPy (no GPU needed)")
    args = parser.parse_args(argv)
    command = "python -m gpu_validate.sass " + " ".join(sys.argv[1:] if argv is None else argv)
    try:
        arch = args.arch
        if not re.fullmatch(r"sm_\d+a?", arch):
            raise InputError(f"--arch must look like sm_90, got {arch!r}")
        if args.nvrtc and not Path(args.nvrtc).is_file():
            raise InputError(f"--nvrtc {args.nvrtc}: no such file")
        written = write_listings(Path(args.out), arch, command, args.nvrtc)
    except InputError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"wrote {len(written)} listings to {Path(args.out) / arch}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
