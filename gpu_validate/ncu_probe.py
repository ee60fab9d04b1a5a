"""A tiny Nsight Compute target whose global load and store instruction counts are known by hand.

`python3 -m gpu_validate.ncu_probe` launches `bfs_probe` once: N = 32768 threads in full warps
(block 256, grid 128), each doing LOADS = 4 `ld.global.cg` loads (inline PTX, so the compiler can
neither merge nor drop them) and one store. Warp-level counts: ld = 4 x 32768 / 32 = 4096,
st = 32768 / 32 = 1024; each warp load touches 128 contiguous bytes = 4 sectors.

`--multi` adds, to learn ncu's output for several launches: `bfs_probe` twice, `bfs_probe_half`
twice (block 128, grid 256; lanes 0..15 of each warp do 2 loads, all lanes store once: ld 2048,
st 1024), the template `bfs_probe_t<S>` for S = 4 and 8 (block 64, grid 512; S loads per thread:
ld 4096 / 8192, st 1024), and CuPy's own kernels (not `bfs_`), which a `^bfs_` filter skips.
The process exits non-zero if any kernel computed a wrong result.
"""
from __future__ import annotations

import sys

N = 32768
LOADS = 4

SOURCE = r"""
__device__ __forceinline__ int ld_cg(const int* p) {
    int v;
    asm volatile("ld.global.cg.s32 %0, [%1];" : "=r"(v) : "l"(p));
    return v;
}

extern "C" __global__ void bfs_probe(const int* a, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = 0;
        #pragma unroll
        for (int k = 0; k < 4; ++k) s += ld_cg(a + k * n + i);
        out[i] = s;
    }
}

extern "C" __global__ void bfs_probe_half(const int* a, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = -1;
        if ((threadIdx.x & 31) < 16) s = ld_cg(a + i) + ld_cg(a + n + i);
        out[i] = s;
    }
}

template <int S>
__global__ void bfs_probe_t(const int* a, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int s = 0;
        #pragma unroll
        for (int k = 0; k < S; ++k) s += ld_cg(a + k * n + i);
        out[i] = s;
    }
}
"""


def main(argv: list[str] | None = None) -> int:
    """Run the probe launches; return 0 when every kernel's output is right, 1 otherwise."""
    import cupy as cp  # lazy: importing this module must not need CuPy

    argv = sys.argv[1:] if argv is None else argv
    multi = "--multi" in argv
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",),
                       name_expressions=("bfs_probe_t<4>", "bfs_probe_t<8>"))
    a = cp.arange(8 * N, dtype=cp.int32)
    out = cp.empty(N, dtype=cp.int32)
    rows = a.reshape(8, N)
    n = cp.int32(N)
    ok = True

    def check(label, expected):
        nonlocal ok
        got = bool((out == expected).all())
        ok &= got
        print(f"{label}: {'ok' if got else 'WRONG'}")

    probe = mod.get_function("bfs_probe")
    half = mod.get_function("bfs_probe_half")
    lane = cp.arange(N, dtype=cp.int32) % 32
    for rep in range(2 if multi else 1):
        out.fill(0)
        probe((N // 256,), (256,), (a, out, n))
        check(f"bfs_probe #{rep}", rows[:LOADS].sum(axis=0))
        if multi:
            out.fill(0)
            half((N // 128,), (128,), (a, out, n))
            check(f"bfs_probe_half #{rep}", cp.where(lane < 16, rows[0] + rows[1], -1))
    if multi:
        for s in (4, 8):
            out.fill(0)
            mod.get_function(f"bfs_probe_t<{s}>")((N // 64,), (64,), (a, out, n))
            check(f"bfs_probe_t<{s}>", rows[:s].sum(axis=0))
    cp.cuda.Device().synchronize()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
