"""Programs and helpers shared by the tuning tests (tests/tune/)."""

from __future__ import annotations

from pathlib import Path

from linnet.passes.kernels.kernel_tuning import KernelTuning, TunedChoice

ROOT = Path(__file__).resolve().parents[2]
MATMUL = ROOT / "examples" / "matmul.linnet"

# Row sums in tiles of BC columns whose loop runs C / BC trips, rounded down: right only
# where BC divides C, so a candidate tile size can change the result. `where BC <= 32`
# gives the filter something to refuse.
ROWS = """\
module tuning_rows

pub kernel rows_floor<R: Dim, C: Dim, BR: Dim, BC: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R; f32] grid((R + BR - 1) / BR) warps(4) stages(2)
where BR >= 1, BC >= 1, BC <= 32 {
    let rows = program_id(0) * BR + iota<i32>(BR)
    var acc = fill<f32>([BR], 0.0)
    for t in 0..C / BC {
        let cols = cast<i32>(t) * BC + iota<i32>(BC)
        let inside[i, j] = rows[i] < R && cols[j] < C
        let tile = load(x[rows, cols], inside, 0.0)
        let part[i] = sum[j] tile[i, j]
        acc = acc + part
    }
    store(y[rows], acc, rows < R)
}

pub op row_sums<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] kernel rows_floor<R, C, 16, 16> {
    let y[r] = sum[c] x[r, c]
    return y
}

entry sums<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] {
    return row_sums(x)
}
"""


def matmul_choice(binding: str = "M=64 N=64 K=64", numerics: str = "equivalent",
                  generics=(("BM", 32), ("BN", 64), ("BK", 16)), warps=4, stages=2,
                  kernel: str = "matmul_tiles") -> TunedChoice:
    return TunedChoice("examples.matmul.matmul", binding, numerics, kernel, tuple(generics),
                       warps, stages)


def tuning_of(*choices: TunedChoice, device: str = "cpu") -> KernelTuning:
    return KernelTuning(tuple(choices), "test choices", device)


def record(generics: dict, warps=4, stages=2, kernel: str = "matmul_tiles") -> dict:
    """A tuning file record, as `linnet tune` writes one."""
    return {"kernel": kernel, "generics": generics, "warps": warps, "stages": stages,
            "time_ms": 1.5, "date": "2025-01-31", "linnet": "0.1.0"}


LINEAR_BIND = {"M": 4096, "N": 512, "K": 512}

# An f32 linear layer (x times the transpose of a weight [N, K]) whose header binds its
# tiles BM and BN by expressions of the op's sizes, as the library's linear_2d did: the
# op the gpt example had before it took its ops from std.nn.
LINEAR_OPS = """\
module tuning_linear

pub kernel linear_tiles<M: Dim, N: Dim, K: Dim, BM: Dim, BN: Dim, BK: Dim>(x: Tensor[M, K; f32], w: Tensor[N, K; f32]) -> y: Tensor[M, N; f32] grid((M + BM - 1) / BM, (N + BN - 1) / BN) warps(8) stages(3)
where BM >= 16, BN >= 16, BK >= 16 {
    let rows = program_id(0) * BM + iota<i32>(BM)
    let cols = program_id(1) * BN + iota<i32>(BN)
    let steps = iota<i32>(BK)
    var acc = fill<f32>([BM, BN], 0.0)
    for t in 0..(K + BK - 1) / BK {
        let ks = cast<i32>(t) * BK + steps
        let x_inside[i, k] = rows[i] < M && ks[k] < K
        let w_inside[j, k] = cols[j] < N && ks[k] < K
        let x_tile = load(x[rows, ks], x_inside, 0.0)
        let w_tile = load(w[cols, ks], w_inside, 0.0)
        let partial[i, j] = sum[k] x_tile[i, k] * w_tile[j, k]
        acc = acc + partial
    }
    let y_inside[i, j] = rows[i] < M && cols[j] < N
    store(y[rows, cols], acc, y_inside)
}

pub op linear<M: Dim, N: Dim, K: Dim>(x: Tensor[M, K; f32], w: Tensor[N, K; f32]) -> Tensor[M, N; f32] kernel linear_tiles<M, N, K, min(128, max(16, next_pow2(M))), min(128, max(32, 2 * next_pow2(M))), 32> {
    let y[m, n] = sum[k] x[m, k] * w[n, k]
    return y
}
"""


def linear_program() -> str:
    """LINEAR_OPS with an entry that calls the op."""
    return (LINEAR_OPS + "\n"
            + "entry project<M: Dim, N: Dim, K: Dim>(x: Tensor[M, K; f32], "
              "w: Tensor[N, K; f32]) -> Tensor[M, N; f32] {\n    return linear(x, w)\n}\n")


# A header that binds a literal to a size: C appears in `x`'s type, so it is not a tile
# choice (changing it would change what the kernel reads), though the header writes `8`.
EIGHT_WIDE = """\
module tuning_eight

pub kernel rows_of<R: Dim, C: Dim, BR: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R; f32] grid((R + BR - 1) / BR) warps(4) stages(2)
where BR >= 1 {
    let rows = program_id(0) * BR + iota<i32>(BR)
    let cols = iota<i32>(C)
    let inside[i, j] = rows[i] < R && cols[j] < C
    let tile = load(x[rows, cols], inside, 0.0)
    let part[i] = sum[j] tile[i, j]
    store(y[rows], part, rows < R)
}

pub op eight_sums<R: Dim>(x: Tensor[R, 8; f32]) -> Tensor[R; f32] kernel rows_of<R, 8, 16> {
    let y[r] = sum[c] x[r, c]
    return y
}

entry sums<R: Dim>(x: Tensor[R, 8; f32]) -> Tensor[R; f32] {
    return eight_sums(x)
}
"""
