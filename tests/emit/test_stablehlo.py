"""emit-stablehlo on hand-built tensor-core IR: the rows where a careless lowering would
differ from the language (integer division and remainders, shifts past the width, casts,
NaN in min/max, empty reductions, half-dtype accumulation, contractions, literals), the
runner's diagnostics, and `linnet stablehlo` on the command line.

Each program is printed by `emit_stablehlo`, parsed, verified, compiled and run by XLA on
the CPU (`run_stablehlo`), and compared with values written here and with the PyTorch
interpreter.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

pytest.importorskip("jax")
ml_dtypes = pytest.importorskip("ml_dtypes")

from irbuild import Blk, L, T  # noqa: E402
from linnet.cli.main import main as cli_main  # noqa: E402
from linnet.emit import stablehlo_ops as ops  # noqa: E402
from linnet.emit.stablehlo import emit_stablehlo  # noqa: E402
from linnet.ir import tensor as ir  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402
from linnet.fuzz.stablehlo_run import StableHLOError, run_stablehlo  # noqa: E402
from linnet.torch.interpreter import run as interpret  # noqa: E402

I32_MIN, I32_MAX = -(2 ** 31), 2 ** 31 - 1


class Options:
    def __init__(self, numerics: str = "exact") -> None:
        self.numerics = numerics


def entry(params: list[ir.TType], build) -> ir.Program:
    """A program whose entry takes `params` and returns what `build(block, *vars)` gives."""
    xs = [ir.Var(f"x{k}", t) for k, t in enumerate(params)]
    b = Blk()
    result = build(b, *xs)
    if isinstance(result, (list, tuple)):
        result = b.tup(*result)
    return ir.Program((ir.Func("main", "entry", tuple(xs), b.done(result)),), "main")


def run(program: ir.Program, *inputs: np.ndarray, numerics: str = "exact",
        compare: bool = True) -> tuple[np.ndarray, ...]:
    """The program's results through StableHLO; also checked against the interpreter
    (bit for bit, NaN equal to NaN) when `compare`."""
    got = run_stablehlo(emit_stablehlo(program, Options(numerics)), *inputs)
    if compare:
        want = interpret(program, *(_torch(np.array(x)) for x in inputs))
        for g, w in zip(got, want):
            w = w.float().numpy() if w.dtype == torch.bfloat16 else w.numpy()
            g = g.astype(np.float32) if g.dtype == ml_dtypes.bfloat16 else g
            np.testing.assert_array_equal(g, w)
    return got


def _torch(x: np.ndarray) -> torch.Tensor:
    if x.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(x.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(x)


def arr(values, dtype) -> np.ndarray:
    return np.array(values, dtype=dtype)


# ------------------------------------------------------------- integer arithmetic

def test_integer_division_truncates_and_wraps() -> None:
    a = arr([-7, 7, -7, I32_MIN, I32_MIN, 5], np.int32)
    b = arr([2, -2, -2, -1, 1, 3], np.int32)
    t = T("i32", 6)
    div, rem = run(entry([t, t], lambda k, x, y: [k.p("div", x, y, ty=t),
                                                  k.p("mod", x, y, ty=t)]), a, b)
    assert div.tolist() == [-3, -3, 3, I32_MIN, I32_MIN, 1]
    assert rem.tolist() == [-1, 1, -1, 0, 0, 2]


def test_unsigned_division_is_unsigned() -> None:
    t = T("u8", 3)
    (q,) = run(entry([t, t], lambda k, x, y: k.p("div", x, y, ty=t)),
               arr([250, 255, 7], np.uint8), arr([3, 128, 2], np.uint8))
    assert q.tolist() == [83, 1, 3]


def test_float_mod_takes_the_dividends_sign() -> None:
    t = T("f32", 3)
    (r,) = run(entry([t, t], lambda k, x, y: k.p("mod", x, y, ty=t)),
               arr([-7.5, 7.5, -1.0], np.float32), arr([2.0, -2.0, 3.0], np.float32))
    assert r.tolist() == [-1.5, 1.5, -1.0]


def test_arithmetic_wraps_and_abs_of_min_is_min() -> None:
    t = T("i8", 3)
    s, n, a = run(entry([t], lambda k, x: [k.p("add", x, L(100, "i8"), ty=t),
                                           k.p("neg", x, ty=t), k.p("abs", x, ty=t)]),
                  arr([100, -128, -5], np.int8))
    assert s.tolist() == [-56, -28, 95]
    assert n.tolist() == [-100, -128, 5]
    assert a.tolist() == [100, -128, 5]


def test_shifts_past_the_width() -> None:
    t, c = T("i32", 5), T("i64", 5)
    x = arr([-8, -8, 1, 1, -1], np.int32)
    n = arr([1, 40, 31, 32, 33], np.int64)
    left, right = run(entry([t, c], lambda k, v, m: [k.p("shl", v, m, ty=t),
                                                     k.p("shr", v, m, ty=t)]), x, n)
    assert left.tolist() == [-16, 0, I32_MIN, 0, 0]
    assert right.tolist() == [-4, -1, 0, 0, -1]


def test_unsigned_shift_right_is_logical() -> None:
    t = T("u32", 3)
    (r,) = run(entry([t, t], lambda k, v, m: k.p("shr", v, m, ty=t)),
               arr([0x80000000, 0xFFFFFFFF, 0xFFFFFFFF], np.uint32),
               arr([31, 32, 4], np.uint32))
    assert r.tolist() == [1, 0, 0x0FFFFFFF]


def test_bitwise_and_comparisons_by_signedness() -> None:
    u, s = T("u8", 2), T("i8", 2)
    lt_u, lt_s, x = run(entry([u, s], lambda k, a, b: [
        k.p("lt", a, L(1, "u8"), ty=T("bool", 2)), k.p("lt", b, L(1, "i8"), ty=T("bool", 2)),
        k.p("xor", a, L(0x0F, "u8"), ty=u)]), arr([255, 0], np.uint8), arr([-1, 3], np.int8))
    assert lt_u.tolist() == [False, True]
    assert lt_s.tolist() == [True, False]
    assert x.tolist() == [0xF0, 0x0F]


# -------------------------------------------------------------------------- casts

@pytest.mark.parametrize("src, dst, values, expected", [
    ("f32", "i32", [-2.75, 2.75, -0.5, 0.5], [-2, 2, 0, 0]),
    ("f32", "u8", [3.9, 0.2, 255.0, 1.0], [3, 0, 255, 1]),
    ("f32", "bool", [0.0, -0.0, 0.5, math.nan], [False, False, True, True]),
    ("i32", "bool", [0, 2, -1, I32_MIN], [False, True, True, True]),
    ("i32", "i8", [300, -129, 127, -1], [44, 127, 127, -1]),
    ("i8", "u32", [-1, 5, -128, 0], [0xFFFFFFFF, 5, 0xFFFFFF80, 0]),
    ("u8", "i32", [255, 0, 128, 7], [255, 0, 128, 7]),
    ("bool", "f32", [True, False, True, False], [1.0, 0.0, 1.0, 0.0]),
    ("f64", "f16", [65520.0, 1.0 + 2 ** -11, 2049.0, -0.1],
     [math.inf, 1.0, 2048.0, float(np.float16(-0.1))]),
])
def test_casts(src: str, dst: str, values: list, expected: list) -> None:
    np_src = {"f32": np.float32, "i32": np.int32, "i8": np.int8, "u8": np.uint8,
              "bool": np.bool_, "f64": np.float64}[src]
    (got,) = run(entry([T(src, 4)], lambda k, x: k.p("cast", x, ty=T(dst, 4))),
                 arr(values, np_src))
    assert got.tolist() == expected


# ----------------------------------------------------------------------- min, max

def test_min_and_max_propagate_nan() -> None:
    t = T("f32", 3)
    hi, lo, top = run(entry([t, t], lambda k, a, b: [
        k.p("max", a, b, ty=t), k.p("min", a, b, ty=t),
        k.p("reduce_max", a, ty=T("f32"), axes=(0,))]),
        arr([math.nan, 1.0, 2.0], np.float32), arr([1.0, math.nan, 3.0], np.float32))
    assert np.isnan(hi[:2]).all() and hi[2] == 3.0
    assert np.isnan(lo[:2]).all() and lo[2] == 2.0
    assert np.isnan(top)


# ------------------------------------------------------------------ reductions

@pytest.mark.parametrize("op, dtype, expected", [
    ("reduce_max", "f32", -math.inf), ("reduce_max", "i32", I32_MIN),
    ("reduce_max", "u8", 0), ("reduce_min", "i8", 127), ("reduce_min", "f16", math.inf),
    ("reduce_min", "u16", 0xFFFF), ("reduce_sum", "i64", 0), ("reduce_prod", "bf16", 1.0),
    ("reduce_any", "bool", False), ("reduce_all", "bool", True),
])
def test_empty_reductions(op: str, dtype: str, expected: object) -> None:
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bf16" else np.dtype(
        {"f32": "float32", "i32": "int32", "u8": "uint8", "i8": "int8", "f16": "float16",
         "u16": "uint16", "i64": "int64", "bool": "bool"}[dtype])
    program = entry([T(dtype, 2, 0)], lambda k, x: k.p(op, x, ty=T(dtype, 2), axes=(1,)))
    (got,) = run(program, np.zeros((2, 0), np_dtype))
    assert got.dtype == np_dtype
    assert got.astype(np.float64).tolist() == [float(expected)] * 2


def test_half_sums_and_scans_accumulate_in_f32() -> None:
    t = T("f16", 3)
    total, running = run(entry([t], lambda k, x: [
        k.p("reduce_sum", x, ty=T("f16"), axes=(0,)), k.p("cumsum", x, ty=t, axis=0)]),
        arr([2048.0, 1.0, 1.0], np.float16))
    assert float(total) == 2050.0  # f16 steps would stay at 2048
    assert running.tolist() == [2048.0, 2048.0, 2050.0]


def test_integer_sums_wrap() -> None:
    t = T("u8", 2, 3)
    total, running = run(entry([t], lambda k, x: [
        k.p("reduce_sum", x, ty=T("u8", 2), axes=(1,)), k.p("cumsum", x, ty=t, axis=1)]),
        arr([[200, 100, 1], [1, 2, 3]], np.uint8))
    assert total.tolist() == [45, 6]
    assert running.tolist() == [[200, 44, 45], [1, 3, 6]]


# ------------------------------------------------------------------ shapes

def test_index_slices_with_steps_and_positions() -> None:
    x = np.arange(24, dtype=np.int32).reshape(4, 6)
    items = (("slice", 1, 4, 2), ("at", 5))
    at = (("at", 2),)
    picked, row = run(entry([T("i32", 4, 6)], lambda k, v: [
        k.p("index", v, ty=T("i32", 2), items=items), k.p("index", v, ty=T("i32", 6), items=at)
    ]), x)
    assert picked.tolist() == [11, 23]
    assert row.tolist() == x[2].tolist()


def test_dyn_index_reads_a_runtime_position() -> None:
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    (got,) = run(entry([T("f32", 2, 3, 4), T("i64"), T("i64")], lambda k, v, i, j: k.p(
        "dyn_index", v, i, j, ty=T("f32", 4))), x, np.int64(1), np.int64(2))
    assert got.tolist() == x[1, 2].tolist()


def test_diagonal_of_unequal_axes() -> None:
    x = np.arange(2 * 3 * 5, dtype=np.int32).reshape(2, 5, 3)
    (got,) = run(entry([T("i32", 2, 5, 3)], lambda k, v: k.p(
        "diagonal", v, ty=T("i32", 5, 2), axes=(0, 2))), x)
    assert got.tolist() == np.diagonal(x, 0, 0, 2).tolist()


def test_iota_fill_concat_permute_broadcast() -> None:
    a, b, c = run(entry([T("f32", 2, 3)], lambda k, v: [
        k.p("iota", ty=T("f16", 4)),
        k.p("concat", v, k.p("fill", L(7.5, "f32"), ty=T("f32", 1, 3)), ty=T("f32", 3, 3),
            axis=0),
        k.p("permute", k.p("broadcast_to", v, ty=T("f32", 4, 2, 3)), ty=T("f32", 3, 4, 2),
            perm=(2, 0, 1))]), np.arange(6, dtype=np.float32).reshape(2, 3))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert a.dtype == np.float16 and a.tolist() == [0, 1, 2, 3]
    assert b.tolist() == [[0, 1, 2], [3, 4, 5], [7.5, 7.5, 7.5]]
    assert c.tolist() == np.transpose(np.broadcast_to(x, (4, 2, 3)), (2, 0, 1)).tolist()


# -------------------------------------------------------------- contractions

@pytest.mark.parametrize("spec, shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ii->i", [(3, 3)]),
    ("ij->", [(3, 4)]), ("i,j->ji", [(3,), (2,)]), ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ik,j->ij", [(3, 4), (2,)]),
])
def test_einsum_matches_numpy(spec: str, shapes: list[tuple[int, ...]]) -> None:
    rng = np.random.default_rng(0)
    xs = [rng.integers(-4, 5, s).astype(np.float64) for s in shapes]
    want = np.einsum(spec, *xs)
    program = entry([T("f64", *s) for s in shapes], lambda k, *vs: k.let(
        ir.Einsum(spec, vs, T("f64", *want.shape), "f64")))
    (got,) = run(program, *xs)
    assert got.tolist() == want.tolist()


def test_integer_einsum_wraps() -> None:
    a = np.full((2, 3), 100, np.int8)
    program = entry([T("i8", 2, 3)], lambda k, v: k.let(
        ir.Einsum("ij,kj->ik", (v, v), T("i8", 2, 2), "i8")))
    (got,) = run(program, a)
    assert got.tolist() == [[(30000 + 128) % 256 - 128] * 2] * 2


def test_bf16_dot_accumulates_in_f32_at_full_precision() -> None:
    a = np.array([[1.0, 2.0 ** -9, 2.0 ** -9]], ml_dtypes.bfloat16)
    b = np.ones((3, 1), ml_dtypes.bfloat16)
    program = entry([T("bf16", 1, 3), T("bf16", 3, 1)], lambda k, x, y: [
        k.p("dot", x, y, ty=T("f32", 1, 1), precision=""),
        k.p("dot", x, y, ty=T("bf16", 1, 1), precision="")])
    wide, narrow = run(program, a, b)
    assert wide.tolist() == [[1.0 + 2.0 ** -8]]
    assert narrow.astype(np.float32).tolist() == [[1.0 + 2.0 ** -8 - 2.0 ** -8]]  # ties to 1.0
    text = emit_stablehlo(program, Options("exact"))
    assert text.count("precision_config = [#stablehlo<precision HIGHEST>, "
                      "#stablehlo<precision HIGHEST>]") == 2
    assert "precision_config" not in emit_stablehlo(program, Options("fast"))


# ----------------------------------------------------------------------- literals

@pytest.mark.parametrize("value, dtype, text", [
    (math.inf, "f32", "0x7F800000"), (-math.inf, "f16", "0xFC00"),
    (math.nan, "bf16", "0x7FC0"), (math.inf, "f64", "0x7FF0000000000000"),
    (1e30, "f32", "1.0000000150474662e+30"), (0.5, "f16", "0.5"), (-0.0, "f32", "-0.0"),
    (65520.0, "f16", "0x7C00"), (2.0 ** -25, "f16", "0.0"),
    (3 * 2.0 ** -26, "f16", "5.960464477539063e-08"),
    (2 ** 64 - 1, "u64", "18446744073709551615"), (-1, "u8", "255"),
    (-(2 ** 63), "i64", "-9223372036854775808"), (True, "bool", "true"),
])
def test_literal_text(value: object, dtype: str, text: str) -> None:
    assert ops.literal_text(value, dtype) == text


@pytest.mark.parametrize("dtype, np_dtype", [("f16", np.float16), ("f32", np.float32),
                                             ("bf16", ml_dtypes.bfloat16)])
def test_float_rounding_matches_numpy(dtype: str, np_dtype) -> None:
    rng = np.random.default_rng(1)
    values = list(rng.normal(0, 1e3, 200)) + [0.1, 1 / 3, 2049.0, 2051.0, 1 + 2 ** -8,
                                              6.1e-5, 1e-7, 3.4e38, 1e39]
    for v in values:
        with np.errstate(over="ignore"):
            want = float(np.array(v, np.float64).astype(np_dtype).astype(np.float64))
        assert ops.round_float(float(v), dtype) == want, (v, dtype)


def test_literals_reach_the_device_exactly() -> None:
    program = entry([T("u64", 1)], lambda k, x: [
        k.p("add", x, L(2 ** 64 - 1, "u64"), ty=T("u64", 1)),
        k.p("fill", L(-(2 ** 63), "i64"), ty=T("i64", 2)),
        k.p("fill", L(0.1, "f16"), ty=T("f16", 1)),
        k.p("fill", L(-math.inf, "bf16"), ty=T("bf16", 1))])
    big, low, tenth, neg = run(program, arr([3], np.uint64), compare=False)
    assert big.tolist() == [2] and low.tolist() == [-(2 ** 63)] * 2
    assert tenth[0] == np.float16(0.1) and neg.astype(np.float32)[0] == -math.inf


# ------------------------------------------------------------------- the runner

def test_invalid_text_raises_with_mlir_diagnostics() -> None:
    with pytest.raises(StableHLOError, match="expected 2 operands"):
        run_stablehlo('func.func public @main() {\n  %0 = "stablehlo.add"() : () -> '
                      'tensor<f32>\n  "func.return"() : () -> ()\n}')
    with pytest.raises(StableHLOError, match="element type"):
        run_stablehlo('func.func public @main(%a: tensor<f32>) -> tensor<f32> {\n'
                      '  %0 = "stablehlo.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> '
                      'tensor<i32>\n  "func.return"(%a) : (tensor<f32>) -> ()\n}')


def test_runner_checks_the_inputs() -> None:
    text = emit_stablehlo(entry([T("f32", 2)], lambda k, x: x), Options())
    with pytest.raises(ValueError, match="shape"):
        run_stablehlo(text, np.zeros(3))
    with pytest.raises(TypeError, match="takes 1 inputs"):
        run_stablehlo(text)


# ------------------------------------------------------------- programs and the CLI

SOURCE = """module t
op scaled<N: Dim>(x: Tensor[N; f32], s: f32) -> (Tensor[N; f32], f32) {
    return (x * s, s)
}
entry main<N: Dim>(x: Tensor[N; f32]) -> (Tensor[N; f32], f32, i64) {
    let (y, s) = scaled(x, 2.0)
    var k = 0
    while k < 3 { k = k + 1 }
    let z = if s > 1.0 { y } else { x }
    return (z, s, k)
}
"""


def test_calls_tuples_while_and_if() -> None:
    text = compile_source(SOURCE, target="stablehlo", bind={"N": 3}, numerics="exact").text
    assert "func.func public @main(" in text and "func.func private @f1_op(" in text
    assert '"func.call"' in text and '"stablehlo.while"' in text and '"stablehlo.if"' in text
    z, s, k = run_stablehlo(text, np.array([1.0, 2.0, 3.0]))
    assert z.tolist() == [2.0, 4.0, 6.0] and float(s) == 2.0 and int(k) == 3


def test_cli_prints_text_that_runs(tmp_path, capsys) -> None:
    path = tmp_path / "t.linnet"
    path.write_text(SOURCE)
    assert cli_main(["stablehlo", str(path), "--bind", "N=2"]) == 0
    text = capsys.readouterr().out
    assert text.lstrip().startswith("//") and "module @linnet" in text
    z, s, k = run_stablehlo(text, np.array([0.5, -1.0], np.float32))
    assert z.tolist() == [1.0, -2.0] and int(k) == 3


def test_user_names_reach_only_comments() -> None:
    text = compile_source(SOURCE.replace("scaled", "scaled_ok"), target="stablehlo",
                          bind={"N": 1}, numerics="exact").text
    code = [line.split("//")[0] for line in text.splitlines()]
    assert not any("scaled_ok" in line for line in code)
    assert any("scaled_ok" in line for line in text.splitlines())


SCAN = """module s
fn pair<N: Dim>(x: Tensor[N; f32]) -> ((Tensor[N; f32], f64), i64) {
    return ((x, 1.5), 2)
}
entry main<N: Dim, M: Dim>(x: Tensor[N; f32], m: Tensor[M, N; f32]) ->
    (Tensor[M, N; f32], Tensor[N; f32], f64, i64) {
    var acc = x
    let ys = for i in 0..M {
        acc = acc + m[i]
        yield acc * 2.0
    }
    let (p, q) = pair(x)
    let (a, b) = p
    return (ys, acc, b, q)
}
"""


@pytest.mark.parametrize("trips", [0, 3])
def test_scans_and_nested_tuples(trips: int) -> None:
    """A scan reading `m[i]` verifies and runs even when it makes no trips (an empty axis)."""
    text = compile_source(SCAN, target="stablehlo", bind={"N": 2, "M": trips},
                          numerics="exact").text
    m = np.arange(2 * trips, dtype=np.float32).reshape(trips, 2)
    ys, acc, b, q = run_stablehlo(text, np.ones(2, np.float32), m)
    assert ys.shape == (trips, 2) and ys.tolist() == ((np.cumsum(m, 0) + 1) * 2).tolist()
    assert acc.tolist() == (m.sum(0) + 1).tolist()
    assert b.dtype == np.float64 and float(b) == 1.5 and int(q) == 2


def test_while_loops_whose_step_passes_the_bound_keep_their_trips() -> None:
    """XLA counts the trips of a `while` over constants and got these wrong (none for the
    first, one for the second); the loops' first values pass a barrier now."""
    from tests.jax.test_runtime import STEP_PAST
    text = compile_source(STEP_PAST, path="step_past.linnet", entry="main",
                          target="stablehlo").text
    assert text.count('"stablehlo.optimization_barrier"') == 2
    assert [float(y) for y in run_stablehlo(text, np.float32(3.0))] == [4.0, 3.0]
