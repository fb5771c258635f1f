"""The oracle's semantics on concrete values: integer wrapping and division, casts, shifts,
reductions (empty axes included), half-precision rounding, scans and loops, index notation,
calls, undefined behaviour, the f64 mode, finite differences and the comparison."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from linnet.fuzz.case import Case
from linnet.fuzz.oracle import (OracleError, OracleUndefined, compare, evaluate, evaluate_source,
                                 gradient_fd)

I32_MIN = -2**31


def run(body: str, params: str, result: str, *inputs, generics=None, precision="native",
        prelude: str = ""):
    src = f"module t\n{prelude}\nentry main{params} -> {result} {{\n{body}\n}}\n"
    return evaluate_source(src, "main", generics or {}, list(inputs), precision=precision)


def a(values, dtype):
    return np.array(values, dtype=dtype)


# ------------------------------------------------------------------ integers

def test_integer_arithmetic_wraps_at_the_dtype_width():
    (s, d, m), = [run("    return (x + x, x - 100 - 100, x * 3)", "(x: Tensor[3; i8])",
                      "(Tensor[3; i8], Tensor[3; i8], Tensor[3; i8])", a([100, -128, 1], np.int8))]
    assert s.tolist() == [-56, 0, 2] and s.dtype == np.int8
    assert d.tolist() == [-100, -72, 57]
    assert m.tolist() == [44, -128, 3]
    (u,) = run("    return x - 1", "(x: Tensor[2; u8])", "Tensor[2; u8]", a([0, 5], np.uint8))
    assert u.tolist() == [255, 4]


def test_integer_division_truncates_toward_zero():
    q, r = run("    return (a / b, a % b)", "(a: Tensor[6; i32], b: Tensor[6; i32])",
               "(Tensor[6; i32], Tensor[6; i32])", a([-7, 7, -7, 7, I32_MIN, I32_MIN], np.int32),
               a([2, -2, -2, 2, -1, 3], np.int32))
    assert q.tolist() == [-3, -3, 3, 3, I32_MIN, I32_MIN // 3 + 1]
    assert r.tolist() == [-1, 1, -1, 1, 0, -2]
    (uq,) = run("    return a / b", "(a: Tensor[2; u32], b: Tensor[2; u32])", "Tensor[2; u32]",
                a([2**32 - 1, 7], np.uint32), a([2, 7], np.uint32))
    assert uq.tolist() == [2**31 - 1, 1]


def test_integer_division_by_zero_gives_zero():
    q, r = run("    return (a / b, a % b)", "(a: Tensor[2; i32], b: Tensor[2; i32])",
               "(Tensor[2; i32], Tensor[2; i32])", a([7, 2], np.int32), a([2, 0], np.int32))
    assert q.tolist() == [3, 0] and r.tolist() == [1, 0]


def test_abs_and_negation_wrap():
    n, m = run("    return (-x, abs(x))", "(x: Tensor[2; i8])", "(Tensor[2; i8], Tensor[2; i8])",
               a([-128, -5], np.int8))
    assert n.tolist() == [-128, 5] and m.tolist() == [-128, 5]


def test_literals_take_the_dtype_they_meet():
    (y,) = run("    let k = 3\n    return x * k + 1", "(x: Tensor[2; i8])", "Tensor[2; i8]",
               a([50, -2], np.int8))
    assert y.tolist() == [-105, -5]  # 150 wraps to -106, + 1


# ------------------------------------------------------------------ shifts

def test_shifts_signed_unsigned_and_wide_counts():
    l, r, u, w, z = run(
        "    return (shl(x, 7), shr(x, 1), shr(u, 1), shr(x, 40), shl(u, 32))",
        "(x: Tensor[2; i32], u: Tensor[2; u32])",
        "(Tensor[2; i32], Tensor[2; i32], Tensor[2; u32], Tensor[2; i32], Tensor[2; u32])",
        a([1, -8], np.int32), a([2**32 - 2, 3], np.uint32))
    assert l.tolist() == [128, -1024]
    assert r.tolist() == [0, -4]
    assert u.tolist() == [2**31 - 1, 1]
    assert w.tolist() == [0, -1]
    assert z.tolist() == [0, 0]
    with pytest.raises(OracleUndefined):
        run("    return shl(x, n)", "(x: Tensor[2; i32], n: Tensor[2; i32])", "Tensor[2; i32]",
            a([1, 1], np.int32), a([1, -1], np.int32))


# ------------------------------------------------------------------ casts

def test_casts_truncate_keep_low_bits_and_test_nonzero():
    f2i, narrow, unsigned, to_bool = run(
        "    return (cast<i32>(x), cast<i8>(n), cast<u8>(cast<i8>(n)), cast<bool>(x))",
        "(x: Tensor[4; f32], n: Tensor[4; i32])",
        "(Tensor[4; i32], Tensor[4; i8], Tensor[4; u8], Tensor[4; bool])",
        a([-2.7, 2.7, 0.0, -0.5], np.float32), a([300, -1, 127, 128], np.int32))
    assert f2i.tolist() == [-2, 2, 0, 0]
    assert narrow.tolist() == [44, -1, 127, -128]
    assert unsigned.tolist() == [44, 255, 127, 128]
    assert to_bool.tolist() == [True, True, False, True]


@pytest.mark.parametrize("value,dtype", [(math.nan, "i32"), (math.inf, "i64"), (200.0, "i8"),
                                         (-1.0, "u8"), (2.0**63, "i64")])
def test_float_to_int_cast_outside_the_range_is_undefined(value, dtype):
    with pytest.raises(OracleUndefined):
        run(f"    return cast<{dtype}>(x)", "(x: f64)", dtype, np.array(value))


def test_float_casts_round_to_nearest_and_overflow_to_infinity():
    h, b = run("    return (cast<f16>(x), cast<bf16>(x))", "(x: Tensor[3; f32])",
               "(Tensor[3; f16], Tensor[3; bf16])", a([1e5, 1.0 + 2**-12, 3.0], np.float32))
    assert h.dtype == np.float16 and b.dtype == ml_dtypes.bfloat16
    assert np.isinf(h[0]) and h[1] == 1.0 and h[2] == 3.0
    assert float(b[0]) == 99840.0 and float(b[1]) == 1.0


# ------------------------------------------------------------------ floats

def test_half_arithmetic_rounds_each_operation():
    (y,) = run("    return x + 1.0", "(x: Tensor[2; f16])", "Tensor[2; f16]",
               a([2048.0, 0.5], np.float16))
    assert y.tolist() == [2048.0, 1.5]  # 2049 is not an f16


def test_half_sums_accumulate_in_f32():
    x = np.array([2048.0] + [1.0] * 8, dtype=np.float16)
    (s,) = run("    return sum[i] x[i]", "(x: Tensor[9; f16])", "f16", x)
    assert float(s) == 2056.0  # one f16 at a time would stay at 2048


def test_float_remainder_takes_the_dividend_sign_and_division_by_zero_is_ieee():
    r, q = run("    return (x % 2.0, x / 0.0)", "(x: Tensor[3; f32])",
               "(Tensor[3; f32], Tensor[3; f32])", a([-7.5, 7.5, 0.0], np.float32))
    assert r.tolist() == [-1.5, 1.5, 0.0]
    assert q[0] == -np.inf and q[1] == np.inf and np.isnan(q[2])


def test_min_max_propagate_nan():
    lo, hi, top = run("    let t = max[i] x[i]\n    return (min(x, y), max(x, y), t)",
                      "(x: Tensor[2; f32], y: Tensor[2; f32])",
                      "(Tensor[2; f32], Tensor[2; f32], f32)",
                      a([math.nan, 1.0], np.float32), a([0.0, 2.0], np.float32))
    assert np.isnan(lo[0]) and lo[1] == 1.0 and np.isnan(hi[0]) and hi[1] == 2.0
    assert np.isnan(top)


# ------------------------------------------------------------------ reductions

def test_reductions_over_an_empty_axis():
    src = """module t
entry main<N: Dim>(x: Tensor[N; f32], k: Tensor[N; i32], b: Tensor[N; bool]) -> (f32, f32, f32, i32, bool, bool) {
    return (sum[i] x[i], prod[i] x[i], max[i] x[i], min[i] k[i], any[i] b[i], all[i] b[i])
}
"""
    out = evaluate_source(src, "main", {"N": 0}, [a([], np.float32), a([], np.int32),
                                                  a([], np.bool_)])
    assert [v.item() for v in out] == [0.0, 1.0, -math.inf, 2**31 - 1, False, True]


def test_integer_reductions_wrap_and_contractions():
    src = """module t
entry main(x: Tensor[3; i8], a: Tensor[2, 3; i32], b: Tensor[3, 2; i32], d: Tensor[3, 3; i32]) -> (i8, Tensor[2, 2; i32], Tensor[3; i32], i32) {
    let s = sum[i] x[i]
    let c[m, n] = sum[k] a[m, k] * b[k, n]
    let diag[i] = d[i, i]
    let corner = sum[i] d[i, 0]
    return (s, c, diag, corner)
}
"""
    s, c, diag, corner = evaluate_source(
        src, "main", {}, [a([100, 100, 100], np.int8), np.arange(6, dtype=np.int32).reshape(2, 3),
                          np.arange(6, dtype=np.int32).reshape(3, 2),
                          np.arange(9, dtype=np.int32).reshape(3, 3)])
    assert s == 44  # 300 wraps
    assert c.tolist() == (np.arange(6).reshape(2, 3) @ np.arange(6).reshape(3, 2)).tolist()
    assert diag.tolist() == [0, 4, 8] and corner == 9


def test_pack_indices_and_cumsum():
    src = """module t
entry main<*S: Shape>(x: Tensor[*S, 3; f32], w: Tensor[2, 3; f32]) -> (Tensor[*S, 2; f32], Tensor[*S, 3; f32]) {
    let y[*s, o] = sum[i] x[*s, i] * w[o, i]
    return (y, cumsum(x, axis = -1))
}
"""
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
    w = np.ones((2, 3), dtype=np.float32)
    y, c = evaluate_source(src, "main", {"S": (2, 2)}, [x, w])
    assert y.shape == (2, 2, 2) and y[1, 1].tolist() == [30.0, 30.0]
    assert c[0, 0].tolist() == [0.0, 1.0, 3.0]


# ------------------------------------------------------------------ control flow

def test_scans_loops_and_while():
    src = """module t
entry main(x: Tensor[3; f32]) -> (Tensor[4, 3; f32], Tensor[3; i64], Tensor[0, 3; f32], f32, i64) {
    let ys = for i in 0..4 {
        yield x * cast<f32>(i)
    }
    let (sq, _e) = for j in 2..5 {
        yield (j * j, x)
    }
    let empty = for k in 0..0 {
        yield x
    }
    var acc = 0.0
    for i in 0..3 {
        acc = acc + cast<f64>(i)
    }
    var n: i64 = 1
    while n < 100 {
        n = n * 3
    }
    static for s in 0..2 {
        acc = acc + 1.0
    }
    return (ys, sq, empty, cast<f32>(acc), n)
}
"""
    ys, sq, none, acc, n = evaluate_source(src, "main", {}, [a([1, 2, 3], np.float32)])
    assert ys[3].tolist() == [3.0, 6.0, 9.0] and sq.tolist() == [4, 9, 16]
    assert none.shape == (0, 3) and acc == 5.0 and n == 243


def test_runtime_index_out_of_range_is_undefined():
    src = """module t
entry main(x: Tensor[3; f32]) -> f32 {
    var t: i64 = 0
    var s = 0.0
    while t < 4 {
        s = s + cast<f64>(x[t])
        t = t + 1
    }
    return cast<f32>(s)
}
"""
    with pytest.raises(OracleUndefined):
        evaluate_source(src, "main", {}, [a([1, 2, 3], np.float32)])


def test_fn_with_an_if_called_in_index_notation_runs_per_element():
    src = """module t
fn clip(v: f32) -> f32 {
    let r = if v > 1.0 { 1.0 } else { v }
    return r
}
op twice<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x * 2.0
}
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    let y[i] = clip(x[i])
    return twice(y)
}
"""
    (y,) = evaluate_source(src, "main", {}, [a([0.25, 3.0, -1.0, 1.0], np.float32)])
    assert y.tolist() == [0.5, 2.0, -2.0, 2.0]


def test_generics_bound_at_the_entry_and_written_at_calls():
    src = """module t
fn ones<K: Dim, T: Float>() -> Tensor[K; T] {
    return fill<T>([K], 1.0)
}
entry main<N: Dim, T: Float = f32>(x: Tensor[N; T]) -> Tensor[N; T] {
    return x + ones<N, T>()
}
"""
    (y,) = evaluate_source(src, "main", {"N": 2, "T": "bf16"}, [a([1, 2], ml_dtypes.bfloat16)])
    assert y.dtype == ml_dtypes.bfloat16 and y.astype(np.float32).tolist() == [2.0, 3.0]
    (y,) = evaluate_source(src, "main", {"N": 1}, [a([1], np.float32)])
    assert y.dtype == np.float32


# ------------------------------------------------------------------ modes and errors

def test_f64_precision_and_finite_differences():
    src = """module t
entry main(x: Tensor[3; f16], s: f32) -> f32 {
    let q = sum[i] cast<f32>(x[i] * x[i])
    return q * s
}
"""
    case = Case(src, "main", {}, (a([0.1, 0.2, 0.3], np.float16), np.array(2.0, np.float32)))
    (native,) = evaluate(case)
    (wide,) = evaluate(case, precision="f64")
    assert native.dtype == np.float32 and wide.dtype == np.float64
    x64 = np.array([0.1, 0.2, 0.3], dtype=np.float16).astype(np.float64)
    assert wide == pytest.approx(2.0 * float(np.sum(x64 * x64)), rel=1e-14)
    dx, ds = gradient_fd(case)
    assert dx == pytest.approx(4.0 * x64, rel=1e-7)
    assert ds == pytest.approx(float(np.sum(x64 * x64)), rel=1e-7)
    skipped, ds32 = gradient_fd(case, dtypes=("f32", "f64"))  # the f16 input is not computed
    assert np.isnan(skipped).all() and skipped.shape == (3,) and ds32 == ds


def test_gradient_slack_is_the_slope_of_a_tanh_a_few_ulps_off():
    """A `tanh` whose output is k ulps off has the slope `1 - t*t - 2 k u t*t` when reverse
    mode reads it off the output: near saturation a large part of the true slope. The
    slack is that change, either way; a program without `tanh` has none."""
    from linnet.fuzz.oracle import gradient_slack
    src = """module t
entry main(x: Tensor[3; f32]) -> f32 {
    return sum[i] tanh(x[i])
}
"""
    x = a([0.5, 3.0, 6.9], np.float32)
    case = Case(src, "main", {}, (x,))
    (dx,) = gradient_fd(case)
    t = np.tanh(x.astype(np.float64))
    assert dx == pytest.approx(1 - t * t, rel=1e-6)
    (slack,) = gradient_slack(case)
    assert slack == pytest.approx(2 * 5 * 2.0 ** -24 * t * t, abs=1e-9)  # FD: 1e-10
    assert slack[2] / dx[2] > 0.1  # 13% of the slope at 6.9
    (up,) = evaluate(case, precision="f64", tanh_skew=5.0)
    (plain,) = evaluate(case, precision="f64")
    assert up == pytest.approx(plain - 10 * 2.0 ** -24 * float(np.sum(x - t)), rel=1e-12)
    quiet = Case(src.replace("tanh(x[i])", "x[i] * x[i]"), "main", {}, (x,))
    assert gradient_slack(quiet) is None


def test_bad_cases_raise_oracle_error():
    with pytest.raises(OracleError, match="shape"):
        run("    return x", "(x: Tensor[3; f32])", "Tensor[3; f32]", a([1, 2], np.float32))
    with pytest.raises(OracleError, match="errors"):
        run("    return x + 1.0", "(x: Tensor[3; i32])", "Tensor[3; i32]", a([1, 2, 3], np.int32))
    with pytest.raises(OracleError, match="no entry"):
        evaluate_source("module t\nentry main() -> i32 {\n    return 1\n}\n", "other", {}, [])


# ------------------------------------------------------------------ comparison

def test_compare_exact_for_integers_and_special_values_for_floats():
    assert compare(a([1, 2], np.int32), a([1, 2], np.int32), "i32") is None
    assert "1 of 2" in compare(a([1, 2], np.int32), a([1, 3], np.int32), "i32")
    assert compare(a([math.nan, 1.0], np.float32), a([math.nan, 1.0], np.float32), "f32") is None
    assert "NaN" in compare(a([math.nan, 1.0], np.float32), a([0.0, 1.0], np.float32), "f32")
    assert "NaN" in compare(a([math.inf], np.float32), a([-math.inf], np.float32), "f32")
    assert "shape" in compare(a([1.0], np.float32), a([1.0, 2.0], np.float32), "f32")


def test_compare_tolerance_grows_with_the_reduction_length():
    e, x = a([1.0, 100.0], np.float32), a([1.0, 100.003], np.float32)
    assert compare(e, x, "f32") is not None  # 3e-5 relative
    assert compare(e, x, "f32", reduction_length=1024) is None  # x8: 8e-5
    assert compare(a([1.0], np.float16), a([1.005], np.float16), "f16") is None


def test_the_documented_example_runs():
    """The Python example of docs/fuzz.md, "The oracle", runs as written."""
    from pathlib import Path
    page = (Path(__file__).resolve().parents[2] / "docs" / "fuzz.md").read_text()
    section = page[page.index("## The oracle"):]
    code = section[section.index("```python\n") + 10:]
    exec(compile(code[:code.index("```")], "docs/fuzz.md", "exec"), {})


def test_unstable_outputs_are_the_ones_rounding_decides():
    from linnet.fuzz.oracle import unstable_outputs
    src = """module t
entry main(a: f32, b: f32) -> (f32, f32) {
    return ((a + b) - a, a * b)
}
"""
    case = Case(src, "main", {}, (np.array(1e8, np.float32), np.array(1.0, np.float32)))
    assert [float(v) for v in evaluate(case)] == [0.0, 1e8]
    assert unstable_outputs(case) == [0]
