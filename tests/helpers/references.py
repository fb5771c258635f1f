"""Hand-written NumPy references for every entry of the corpus (`examples/*.linnet`,
`tests/spec/valid/*.linnet`), each computed from what the Linnet source means
(docs/language.md, "Types and generics" to "Index notation and
reductions"), never from the compiler's output.

Conventions:

- A reference takes the entry's inputs as NumPy arrays (0-d arrays for scalars): floating
  inputs arrive as float64 arrays holding exactly the values the entry receives (inputs are
  drawn on a dyadic grid, so they are representable in every float dtype, bf16 included);
  integer and bool inputs arrive in their own fixed-width dtypes.
- It returns what the entry returns: one array, or a tuple for a tuple result. Floating
  results are computed in float64 (the test compares them with a tolerance for the declared
  dtype); integer and bool results must come back in exactly the declared NumPy dtype, and
  are compared exactly.
- Integer arithmetic is done on exact Python integers (`big`) and brought back to the
  dtype's width with `wrap` (two's complement); `/` and `%` truncate toward zero (`tdiv`,
  `tmod`), as docs/language.md, "Types and generics" says.

Each entry is registered with `@ref(stem, entry, out=..., inputs=...)`: `out` lists the
declared result dtypes (one per tuple element), `inputs` is a Hypothesis strategy for a
tuple of `In` values (the generic dims of a generic entry are drawn from ranges that
satisfy its `where` clause). Small arrays are drawn element by element (so they shrink and
hit boundary values); large fixed-shape ones come from a seeded generator. An optional
`tol` loosens the comparison of one result only where a long f32 reduction needs it
(`gamma`). `EDGES` (at the end) adds fixed inputs at the integer limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from budget import generic_dims
from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

# ----------------------------------------------------------------- dtypes

NP_DTYPES: dict[str, Any] = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float64, "bf16": np.float64, "f32": np.float64, "f64": np.float64,
}
FLOATS = ("f16", "bf16", "f32", "f64")
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
SIGNED = ("i8", "i16", "i32", "i64")


def int_range(dtype: str) -> tuple[int, int]:
    bits = BITS[dtype]
    if dtype in SIGNED:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


# --------------------------------------------------- exact integer helpers

def big(a: Any) -> np.ndarray:
    """An integer array (or scalar) as exact Python integers (an object array)."""
    arr = np.asarray(a)
    flat = np.empty(arr.size, dtype=object)
    for k, v in enumerate(arr.reshape(-1)):
        flat[k] = int(v)
    return flat.reshape(arr.shape)


def wrap(v: Any, dtype: str) -> np.ndarray:
    """Exact integers reduced to `dtype`'s width, two's complement for signed dtypes."""
    v = np.asarray(v, dtype=object)
    bits = BITS[dtype]
    m = 1 << bits
    flat = [int(x) % m for x in v.reshape(-1)]
    if dtype in SIGNED:
        flat = [x - m if x >= m >> 1 else x for x in flat]
    return np.array(flat, dtype=object).reshape(v.shape).astype(NP_DTYPES[dtype])


def _tdiv1(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


tdiv = np.frompyfunc(lambda a, b: _tdiv1(int(a), int(b)), 2, 1)   # truncating division
tmod = np.frompyfunc(lambda a, b: int(a) - int(b) * _tdiv1(int(a), int(b)), 2, 1)


def f32(x: float) -> float:
    """A literal's value in f32 (a float literal typed f32 by its context)."""
    return float(np.float32(x))


# --------------------------------------------------------------- inputs

@dataclass(frozen=True)
class In:
    """One input of an entry: its value (float64 for floating dtypes) and Linnet dtype."""
    value: np.ndarray
    dtype: str

    def __repr__(self) -> str:
        return f"In({self.dtype}, {np.array2string(np.asarray(self.value), threshold=40)})"


SMALL = 64  # arrays up to this many elements are drawn element by element (so they shrink)


@dataclass(frozen=True)
class _Grid:
    """Floats k / den, k in [lo, hi]; with `signed`, k >= 1 and a random sign."""
    lo: int
    hi: int
    den: int
    signed: bool = False

    def strategy(self) -> SearchStrategy:
        s = st.integers(self.lo, self.hi)
        if self.signed:
            s = st.tuples(s, st.booleans()).map(lambda t: -t[0] if t[1] else t[0])
        return s.map(lambda k: k / self.den)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        k = rng.integers(self.lo, self.hi, endpoint=True, size=shape).astype(np.float64)
        if self.signed:
            k = k * rng.choice(np.array([-1.0, 1.0]), size=shape)
        return k / self.den


@dataclass(frozen=True)
class _Ints:
    lo: int
    hi: int
    dtype: str

    def strategy(self) -> SearchStrategy:
        return st.integers(self.lo, self.hi)

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        np_dt = NP_DTYPES[self.dtype]
        return rng.integers(self.lo, self.hi, endpoint=True, size=shape, dtype=np_dt)


@dataclass(frozen=True)
class _Bools:
    def strategy(self) -> SearchStrategy:
        return st.booleans()

    def sample(self, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
        return rng.random(shape) < 0.5


def _array(shape: tuple[int, ...], dtype: str, elems: Any) -> SearchStrategy:
    shape = tuple(int(n) for n in shape)
    n = math.prod(shape)
    np_dt = NP_DTYPES[dtype]
    if n <= SMALL:
        return st.lists(elems.strategy(), min_size=n, max_size=n).map(
            lambda xs: In(np.array(xs, dtype=np_dt).reshape(shape), dtype))
    # large fixed-shape inputs: a seeded generator (element-by-element drawing is too slow)
    return st.integers(0, 2**32 - 1).map(
        lambda seed: In(np.asarray(elems.sample(np.random.default_rng(seed), shape),
                                   dtype=np_dt), dtype))


GRID = 32  # float inputs are multiples of 1/32: exact in every float dtype, and sums are exact


def fl(shape: tuple[int, ...] = (), dtype: str = "f32", lo: float = -3.0, hi: float = 3.0,
       den: int = GRID) -> SearchStrategy:
    """Floats in [lo, hi] on a grid of 1/den."""
    return _array(shape, dtype, _Grid(round(lo * den), round(hi * den), den))


def pos(shape: tuple[int, ...] = (), dtype: str = "f32", hi: float = 3.0) -> SearchStrategy:
    """Positive floats in [1/32, hi] (for log, sqrt, rsqrt)."""
    return _array(shape, dtype, _Grid(1, round(hi * GRID), GRID))


def mag(shape: tuple[int, ...], lo: float, hi: float, dtype: str = "f32") -> SearchStrategy:
    """Floats with |x| in [lo, hi] and a random sign."""
    return _array(shape, dtype, _Grid(round(lo * GRID), round(hi * GRID), GRID, signed=True))


def it(shape: tuple[int, ...] = (), dtype: str = "i32", lo: int | None = None,
       hi: int | None = None) -> SearchStrategy:
    """Integers, over the dtype's whole range unless bounds are given."""
    dlo, dhi = int_range(dtype)
    lo = dlo if lo is None else lo
    hi = dhi if hi is None else hi
    return _array(shape, dtype, _Ints(lo, hi, dtype))


def nonzero(shape: tuple[int, ...] = (), dtype: str = "i64") -> SearchStrategy:
    """Nonzero integers over the whole range, often small (divisors)."""
    lo, hi = int_range(dtype)
    small = st.integers(-9, 9).filter(bool)
    full = st.integers(lo, hi).filter(bool)
    n = math.prod(shape)
    return st.lists(st.one_of(small, full), min_size=n, max_size=n).map(
        lambda xs: In(np.array(xs, dtype=NP_DTYPES[dtype]).reshape(shape), dtype))


def bl(shape: tuple[int, ...] = ()) -> SearchStrategy:
    return _array(shape, "bool", _Bools())


def args(*strategies: SearchStrategy) -> SearchStrategy:
    return st.tuples(*strategies)


def dims(*ranges: tuple[int, int]) -> SearchStrategy:
    """Generic dims, one per range (inclusive): from a fixed few under the "ci" profile
    (`budget.generic_dims`)."""
    return generic_dims(ranges)


D = (1, 12)  # the usual range of a generic dim


# ------------------------------------------------------------ registry

@dataclass(frozen=True)
class Reference:
    fn: Callable[..., Any]
    out: str | Callable[[tuple], str]  # declared result dtypes, space-separated (or a
                                       # function of the inputs, for a dtype generic result)
    inputs: SearchStrategy             # of tuple[In, ...]
    tol: dict[int, tuple[float, float]] = field(default_factory=dict)  # result -> (rtol, atol)

    def out_types(self, inputs: tuple) -> tuple[str, ...]:
        """The declared result dtypes; more than one means a tuple result."""
        out = self.out(inputs) if callable(self.out) else self.out
        return tuple(out.split())


REFERENCES: dict[tuple[str, str], Reference] = {}


def ref(stem: str, entry: str, *, out: str | Callable[[tuple], str], inputs: SearchStrategy,
        tol: dict[int, tuple[float, float]] | None = None) -> Callable:
    """Register a reference. `tol` overrides the (rtol, atol) of single results; it is only
    used where a long f32 reduction makes the dtype's default unsound (see `gamma`)."""
    def deco(fn: Callable) -> Callable:
        key = (stem, entry)
        if key in REFERENCES:
            raise ValueError(f"two references for {key}")
        REFERENCES[key] = Reference(fn, out, inputs, dict(tol or {}))
        return fn
    return deco


def gamma(n: int) -> float:
    """The classic bound n * u on the relative error of an f32 sum (or product) of n terms
    accumulated in f32 in any order (u = 2**-24). The language only promises accumulation in
    the reduction's dtype, and torch contracts `einsum` with a sequential dot product, whose
    error reaches ~n * u / 4 in practice (1e-5 for 768 terms), so long f32 reductions are
    compared with this bound rather than the flat 1e-5."""
    return n * 2.0 ** -24


def _softmax_rows(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


# ============================================================ examples/

def _attention(q, k, v, scale, causal: bool = False):
    """softmax(q k^T * scale) v per batch entry and head; causal: query i sees keys j <= i."""
    scores = np.einsum("bhld,bhsd->bhls", q, k) * scale
    if causal:
        n = q.shape[2]
        scores = np.where(np.tril(np.ones((n, n), dtype=bool)), scores, -np.inf)
    e = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return np.einsum("bhls,bhsd->bhld", e / e.sum(axis=-1, keepdims=True), v)


def _attention_inputs(causal: bool, dtype: str = "f32") -> SearchStrategy:
    """Generic [B, H, L, D] queries and [B, H, S, D] keys and values (S = L when causal),
    and a scale."""
    def make(d):
        b, h, n, s, w = d
        s = n if causal else s
        return args(fl((b, h, n, w), dtype), fl((b, h, s, w), dtype), fl((b, h, s, w), dtype),
                    fl(()))
    return dims((1, 2), (1, 3), (1, 9), (1, 9), (1, 8)).flatmap(make)


# The scores are exact (grid inputs, 64 terms); the weights' total and the weighted sum of
# |v| <= 3 run over S = 130 keys.
@ref("attention", "main", out="f32", tol={0: (gamma(130), 3.0 * gamma(130))},
     inputs=args(fl((1, 2, 100, 64)), fl((1, 2, 130, 64)), fl((1, 2, 130, 64))))
def _attention_main(q, k, v):
    return _attention(q, k, v, 0.125)


@ref("attention", "attention_any", out="f32", inputs=_attention_inputs(False))
def _attention_any(q, k, v, scale):
    return _attention(q, k, v, scale)


@ref("attention", "attention_causal_any", out="f32", inputs=_attention_inputs(True))
def _attention_causal_any(q, k, v, scale):
    return _attention(q, k, v, scale, causal=True)


# bf16 in and out: the body computes in f32 and rounds once.
@ref("attention", "attention_bf16_any", out="bf16", inputs=_attention_inputs(False, "bf16"))
def _attention_bf16_any(q, k, v, scale):
    return _attention(q, k, v, scale)


@ref("attention", "attention_causal_bf16_any", out="bf16",
     inputs=_attention_inputs(True, "bf16"))
def _attention_causal_bf16_any(q, k, v, scale):
    return _attention(q, k, v, scale, causal=True)


@ref("column_stats", "main", out="f32 f32", inputs=args(fl((300, 100))))
def _column_stats(x):
    return x.sum(axis=0), x.max(axis=0)


# The sum of squares runs over C = 768 columns (an einsum: sequential in torch), so 1/sqrt of
# it carries a relative error up to gamma(768) / 2, times |d * inv * w| <= 1.8 * 3.
@ref("layer_norm", "main", out="f32", tol={0: (gamma(768), 5.4 * gamma(768))},
     inputs=args(fl((64, 768)), fl((768,)), fl((768,))))
def _layer_norm(x, w, b):
    return _layer_norm_rows(x, w, b)


def _layer_norm_rows(x, w, b):
    mean = x.mean(axis=1, keepdims=True)
    d = x - mean
    var = (d * d).mean(axis=1, keepdims=True)
    return d / np.sqrt(var + f32(1e-5)) * w + b


# Rows of up to 12 columns: the f32 sums are short, the default tolerances hold.
@ref("layer_norm", "layer_norm_any", out="f32",
     inputs=dims(D, D).flatmap(lambda d: args(fl(d), fl((d[1],)), fl((d[1],)))))
def _layer_norm_any(x, w, b):
    return _layer_norm_rows(x, w, b)


# Statistics in f32, one rounding to bf16 at the end.
@ref("layer_norm", "layer_norm_bf16_any", out="bf16",
     inputs=dims(D, D).flatmap(lambda d: args(fl(d, "bf16"), fl((d[1],), "bf16"),
                                              fl((d[1],), "bf16"))))
def _layer_norm_bf16_any(x, w, b):
    return _layer_norm_rows(x, w, b)


@ref("matmul", "main", out="f32", inputs=args(fl((200, 72)), fl((72, 136))))
def _matmul(a, b):
    return a @ b


@ref("matmul", "matmul_any", out="f32",
     inputs=dims(D, D, D).flatmap(lambda d: args(fl((d[0], d[2])), fl((d[2], d[1])))))
def _matmul_any(a, b):
    return a @ b


@ref("matmul", "matmul_bf16_any", out="bf16",
     inputs=dims(D, D, D).flatmap(lambda d: args(fl((d[0], d[2]), "bf16"),
                                                   fl((d[2], d[1]), "bf16"))))
def _matmul_bf16_any(a, b):
    return a @ b  # exact products, f32 sums (the references compute in float64), one rounding


# b transposed in memory when M >= 64 (matmul_bt), read as it is below: the same product
@ref("matmul", "matmul_tf32_any", out="f32",
     inputs=dims(D, D, D).flatmap(lambda d: args(fl((d[0], d[2])), fl((d[2], d[1])))))
def _matmul_tf32_any(a, b):
    return a @ b


@ref("matmul", "matmul_bt_any", out="f32",
     inputs=dims(D, D, D).flatmap(lambda d: args(fl((d[0], d[2])), fl((d[1], d[2])))))
def _matmul_bt_any(a, bt):
    return a @ bt.T


def _mlp_inputs(d: tuple[int, ...], targets: bool) -> SearchStrategy:
    n, i, h, o = d
    shapes = [(i, h), (h,), (h, o), (o,), (n, i)] + ([(n, o)] if targets else [])
    return args(*(fl(s) for s in shapes))


def _mlp_predict(w1, b1, w2, b2, x):
    return np.tanh(x @ w1 + b1) @ w2 + b2


# tanh saturates for the larger pre-activations; the sums run over at most 12 terms.
@ref("mlp", "predict", out="f32",
     inputs=dims(D, D, D, D).flatmap(lambda d: _mlp_inputs(d, False)))
def _mlp_predict_ref(w1, b1, w2, b2, x):
    return _mlp_predict(w1, b1, w2, b2, x)


@ref("mlp", "loss", out="f32", tol={0: (1e-5, 1e-5)},
     inputs=dims(D, D, D, D).flatmap(lambda d: _mlp_inputs(d, True)))
def _mlp_loss(w1, b1, w2, b2, x, t):
    return np.mean((_mlp_predict(w1, b1, w2, b2, x) - t) ** 2)


@ref("mlp", "main", out="f32", tol={0: (1e-5, 1e-5)},
     inputs=_mlp_inputs((64, 1, 32, 1), True))
def _mlp_main(w1, b1, w2, b2, x, t):
    return _mlp_loss(w1, b1, w2, b2, x, t)


@ref("relu", "main", out="f32", inputs=args(fl((5000,)), fl((5000,))))
def _relu(x, s):
    return np.maximum(x, 0.0) * s


# |x| in [0.75, 1.5]: 200 factors stay far from f32 overflow (1.5**200 ~ 1.6e35) and
# underflow (0.75**200 ~ 1e-25) whatever order the product is taken in.
@ref("row_product", "main", out="f32", tol={0: (gamma(200), 0.0)},
     inputs=args(mag((32, 200), 0.75, 1.5)))
def _row_product(x):
    return x.prod(axis=1)


@ref("row_scan", "main", out="f32", inputs=args(fl((16, 500))))
def _row_scan(x):
    return np.cumsum(x, axis=1)


# Outputs ~1e-3: a tight atol; the denominator sums C = 1000 terms.
@ref("softmax", "main", out="f32", tol={0: (gamma(1000), 1e-9)}, inputs=args(fl((64, 1000))))
def _softmax(x):
    return _softmax_rows(x)


@ref("softmax", "softmax_any", out="f32",
     inputs=dims(D, D).flatmap(lambda d: args(fl(d))))
def _softmax_any(x):
    return _softmax_rows(x)


# ====================================================== tests/spec/valid/

@ref("01_module_and_const", "main", out="f32 i32 f32 u8",
     inputs=args(fl((8, 16)), it((), "i32"), it((), "u8")))
def _t01(x, n, b):
    return x * 0.5, wrap(big(n) - 3, "i32"), np.ones(64), wrap(big(b) & 255, "u8")


@ref("02_use_module", "main", out="f32 f32 f32 f32",
     inputs=args(fl((4, 3)), fl((4,)), fl((4,))))
def _t02(x, v, w):
    return x + x, x ** 4, x.reshape(12), 2.0 * v + w


@ref("03_fn_generics", "main", out="f32 i32",
     inputs=args(fl((3,)), it((2, 5), "i32"), it((2, 5), "i32")))
def _t03(x, a, b):
    return x * 2.0 * 1.5, wrap(big(a) + big(b), "i32")


@ref("04_shape_packs", "main", out="f32 f32 f32 f32",
     inputs=args(fl((2, 3, 4)), fl((2,)), fl((4,))))
def _t04(x, g, v):
    b = x * g[:, None, None]
    return x.sum(axis=-1), b, x + b, v.sum()


@ref("05_dtype_kinds", "main", out="bool i32 u8 bf16 f32 f64 f32 f16 i64",
     inputs=args(bl((4,)), it((4,), "i32"), it((2, 2), "u8"), fl((4,), "bf16")))
def _t05(b, i, u, h):
    with np.errstate(over="ignore"):
        as_f16 = i.astype(np.float16).astype(np.float64)  # beyond 65504 rounds to +-inf
    return (np.asarray(b[0]), wrap(big(i) ** 3, "i32"), wrap(big(u) & 1, "u8"),
            np.tanh(h) * 0.5, np.ones(4), np.ones(4), i.astype(np.float64), as_f16,
            i.astype(np.int64))


@ref("06_explicit_generics", "main", out="f32 i16 f64 f32", inputs=args(fl((4,))))
def _t06(x):
    return x * 2.0, np.zeros((2, 3), np.int16), np.zeros((2, 3)), np.arange(4.0)


@ref("07_generic_call_rule", "main", out="f32 bool bool",
     inputs=args(fl((4,)), it((), "i64"), it((), "i64"), it((), "i64"), it((), "i64")))
def _t07(x, a, b, c, d):
    ok = bool(a < b) and bool(c > d)
    z = x if ok else x * 2.0
    either = bool(a < b) or bool(c > d)
    nested = bool(a < b) and bool(big(c) > big(wrap(big(d) + 1, "i64")))  # d + 1 wraps
    return z, np.bool_(either), np.bool_(nested)


@ref("08_where_comparisons", "main", out="f32", inputs=args(fl((4, 4)), fl((3,))))
def _t08(x, y):
    return x


@ref("09_dim_expressions", "main", out="f32 f32 f32 f32 f32 f32",
     inputs=args(fl((6,)), fl((4,)), fl((2, 3))))
def _t09(a, b, m):
    return (np.concatenate([a, b]), m.reshape(6), np.zeros(2), np.ones((1, 2)),
            np.zeros((4, 6)), np.concatenate([a, np.zeros(2)]))


@ref("10_scalar_dtypes", "main",
     out="bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64",
     inputs=args(bl(), it((), "i8"), it((), "i16"), it((), "i32"), it((), "i64"),
                 it((), "u8"), it((), "u16"), it((), "u32"), it((), "u64"),
                 fl((), "f16"), fl((), "bf16"), fl((), "f32"), fl((), "f64")))
def _t10_main(b, i1, i2, i3, i4, u1, u2, u3, u4, h, bh, f, d):
    return (np.logical_not(b), wrap(big(i1) + 1, "i8"), wrap(big(i2) * 2, "i16"),
            wrap(big(i3) - 3, "i32"), wrap(tdiv(big(i4), 4), "i64"),
            wrap(big(u1) + 5, "u8"), wrap(tmod(big(u2), 6), "u16"), wrap(big(u3) | 7, "u32"),
            wrap(big(u4) ^ 8, "u64"), h * 0.5, bh + 1.0, f - 2.5, d / 3.0)


@ref("10_scalar_dtypes", "tensors",
     out="bool i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64",
     inputs=args(bl((2,)), it((2,), "i8"), it((2,), "i16"), it((2,), "i32"), it((2,), "i64"),
                 it((2,), "u8"), it((2,), "u16"), it((2,), "u32"), it((2,), "u64"),
                 fl((2,), "f16"), fl((2,), "bf16"), fl((2,), "f32"), fl((2,), "f64")))
def _t10_tensors(b, i1, i2, i3, i4, u1, u2, u3, u4, h, bh, f, d):
    with np.errstate(invalid="ignore", divide="ignore"):
        ff = f / f  # 0 / 0 is NaN
    return (b & b, wrap(big(i1) - big(i1), "i8"), wrap(big(i2) + big(i2), "i16"),
            wrap(big(i3) * big(i3), "i32"), wrap(tmod(big(i4), 3), "i64"),
            wrap(big(u1) + 250, "u8"), wrap(big(u2) - big(u2), "u16"),
            wrap(big(u3) * 2, "u32"), wrap(tdiv(big(u4), 2), "u64"),
            h + h, bh * bh, ff, d - 1.0)


@ref("11_tuples", "main", out="f32 f32 bool f64 i32",
     inputs=args(fl((5,)), it((), "i32"), fl((), "f64")))
def _t11(x, k, h):
    p, n = np.maximum(x, 0.0), np.minimum(x, 0.0)
    return p + n, x.max() - x.min(), x > 0.0, h, k


@ref("12_let_annotations", "main", out="f32 f32 i32 f64 u8 bool", inputs=args(fl((3,))))
def _t12(x):
    n = np.sqrt((x * x).sum())
    with np.errstate(invalid="ignore"):
        y = x / n  # all zeros: 0 / 0 is NaN
    return (n, y, np.int32(7), 0.25, np.full((2, 2), 200, np.uint8), np.bool_(True))


@ref("13_var_reassign", "main", out="f32 i64 f32 bool", inputs=args(fl((4,))))
def _t13(x):
    y = x * 2.0 + x
    return y, np.int64(3), 1.5, (x > 0.0) | (y > 1.0)


@ref("14_for_carry", "main", out="f32 f32 f32 f32 i64", inputs=args(fl((4,)), fl((6, 4))))
def _t14(x, xs):
    # p = x, then three trips of p = p * x; repeat_add<4, 3>: y = x, then three trips of y + x
    return xs.sum(axis=0), x ** 4, 1.0 + 2.0 + 3.0, 4.0 * x, np.int64(1 + 2 + 3)


@ref("15_scan", "main", out="f32 i64 f32", inputs=args(fl((3,))))
def _t15(x):
    ys = np.stack([x * i for i in range(4)])
    squares = np.array([j * j for j in range(2, 7)], np.int64)
    ps = np.stack([x * i for i in range(2)])
    return ys, squares, ps


# `limit` up to 40: the doubling loop runs several trips when the sum is positive.
@ref("16_while", "main", out="f32 i64 f32", inputs=args(fl((4,)), fl((), lo=-4.0, hi=40.0)))
def _t16(x, limit):
    y = x.copy()
    steps = 0
    total = x.sum()
    while total < limit and steps < 10:
        y = y * 2.0
        total = y.sum()
        steps += 1
    halvings = float(limit)
    while halvings > 1.0:
        halvings = halvings / 2.0
    return y, np.int64(steps), halvings


@ref("17_static_for", "main", out="f32 f32 f32", inputs=args(fl((3, 4)), fl((5, 5))))
def _t17(x, sq):
    return x.sum(axis=0), x[1, 2] + x[2, 3], np.trace(sq)


@ref("18_if_expressions", "main", out="i64 f32 f32 f32",
     inputs=args(fl(()), bl(), fl((4,))))
def _t18(v, flag, x):
    v, flag = float(v), bool(flag)
    k = 2 if v > 1.0 else (1 if v > 0.0 else 0)
    y = x * 2.0 + 1.0 if flag else x
    m = -v if v < 0.0 else v
    if flag and v > 2.0:
        z = x
    elif flag:
        z = x * v
    else:
        z = -x
    return np.int64(k), y, m, z


@ref("19_prelude_math", "main",
     out="f32 f32 f32 f32 f32 bf16 i32 f32 bf16 f32 f64 i64",
     inputs=args(fl((8,)), fl((8,), "bf16"), it((8,), "i32"), fl((), "f64")))
def _t19(x, h, i, s):
    p = np.abs(x) + 1.0
    s = float(s)
    sc = (math.exp(s) + math.log(abs(s) + 1.0) + math.sqrt(abs(s)) + math.sin(s) * math.cos(s)
          + math.tanh(s))
    return (np.exp(x), np.log(p), np.sqrt(p), 1.0 / np.sqrt(p), np.sin(x) + np.cos(x),
            np.tanh(h), wrap(np.abs(big(i)), "i32"),  # abs(MIN) wraps to MIN
            h, x, i.astype(np.float64), sc, i.astype(np.int64))


@ref("20_min_max_select", "main", out="f32 f32 i32 f32 f32 i32 f32 f32",
     inputs=args(fl((4,), den=4), fl((4,), den=4), it((4,), "i32"), it((4,), "i32"),
                 fl((), den=4), fl((), den=4)))
def _t20(a, b, i, j, p, q):
    return (np.minimum(a, b), np.maximum(a, b), np.maximum(i, j),
            np.minimum(np.maximum(a, -1.0), 1.0), np.where(a > b, a, b), np.where(i < j, i, j),
            p if p > q else q, min(float(p), float(q)))


@ref("21_shifts", "main", out="i32 i32 u32 u32 i64 i64",
     inputs=args(it((4,), "i32"), it((4,), "u32"), it((), "i64")))
def _t21(x, u, k):
    X, U, K = big(x), big(u), big(k)
    # Python's >> on ints is arithmetic (floor); on the non-negative u32 values it is logical
    return (wrap(X << 2, "i32"), wrap(X >> 1, "i32"), wrap(U >> 3, "u32"), wrap(U << 1, "u32"),
            wrap(K << 4, "i64"), wrap(K >> 2, "i64"))


@ref("22_reshape_broadcast_permute", "main", out="f32 f32 f32 f32 f32 f32 f32",
     inputs=args(fl((2, 3, 4)), fl((4,)), fl((3, 5))))
def _t22(x, v, m):
    b = x.reshape(24)
    return (x.reshape(6, 4), b, np.broadcast_to(v, (3, 4)), m.T, np.transpose(x, (2, 0, 1)),
            np.broadcast_to(v.reshape(4, 1), (4, 6)), b.reshape(3, 2, 4))


@ref("23_concat", "main", out="f32 f32 f32 i32",
     inputs=args(fl((2, 3)), fl((2, 5)), fl((4, 3)), it((3,), "i32")))
def _t23(x, y, z, i):
    return (np.concatenate([x, y], axis=1), np.concatenate([x, z, x], axis=0),
            np.concatenate([x, y, x], axis=1), np.concatenate([i, i]))


@ref("24_iota_fill", "main", out="i64 u16 f32 bool f32 i8", inputs=args(it((5,), "i64")))
def _t24(x):
    return (wrap(big(np.arange(5)) + big(x), "i64"), np.arange(5, dtype=np.uint16),
            np.full((2, 3), 0.25), np.ones(4, np.bool_), np.arange(5.0),
            np.full((3, 2), -7, np.int8))


@ref("25_cumsum", "main", out="f32 f32 i32 u8",
     inputs=args(fl((3, 4)), it((6,), "i32"), it((2, 2), "u8")))
def _t25(x, i, u):
    return (np.cumsum(x, axis=1), np.cumsum(x, axis=0), wrap(np.cumsum(big(i)), "i32"),
            wrap(np.cumsum(big(u), axis=1), "u8"))


@ref("26_int_literals", "main", out="i32 u8 i64 i64 i32 u16 u8 i64",
     inputs=args(it((4,), "i32"), it((4,), "u8")))
def _t26(x, y):
    return (np.int32(1000), np.uint8(255), np.int64(10), np.int64(42),
            wrap(big(x) + 16, "i32"), np.uint16(65535), wrap(big(y) & 0xF0, "u8"),
            np.int64(1_000_000 + 0 + 0xFFFF))


@ref("27_float_literals", "main", out="f32 f64 f16 bf16 f32 f16",
     inputs=args(fl((4,)), fl((4,), "f16")))
def _t27(x, hx):
    return x * 0.5 + f32(1e-5), 300.0 + 2.5e-3, 0.5, 300.0, f32(1e30), hx * 0.25 - 100.0


@ref("28_comments", "main", out="f32", inputs=args(fl((2,))))
def _t28(x):
    return (x + x) * (1.5 + 1.5)


@ref("29_bitwise", "main", out="i32 i32 i32 bool bool bool u64 i32",
     inputs=args(it((4,), "i32"), it((4,), "i32"), bl((4,)), bl((4,)), it((), "u64")))
def _t29(x, y, m, n, u):
    X, Y, U = big(x), big(y), big(u)
    # `|` < `^` < `&` < `+`:  u & 0xf0 | u ^ 3 is (u & 0xf0) | (u ^ 3);
    # x | y ^ x & y + 1 is x | (y ^ (x & (y + 1)))
    h = X | (Y ^ (X & big(wrap(Y + 1, "i32"))))
    return (wrap(X | 0xFF, "i32"), wrap(X ^ Y, "i32"), wrap(X & 0b1010, "i32"), m | n, m ^ n,
            m & n, wrap((U & 0xF0) | (U ^ 3), "u64"), wrap(h, "i32"))


# Coarse grids and small integers, so that ties and the literal 3 and 0 occur.
@ref("30_elementwise_compare", "main",
     out="bool bool bool bool bool bool bool bool bool",
     inputs=args(fl((4,), lo=-1, hi=1, den=2), fl((4,), lo=-1, hi=1, den=2),
                 it((4,), "i32", -4, 4), fl((3, 4), lo=-1, hi=1, den=2),
                 fl((), lo=0, hi=2, den=2)))
def _t30(a, b, i, m, s):
    return (a < b, a <= b, a > 0.0, a >= b, i == 3, i != 0, (a < b) & (i != 0), m >= a,
            np.bool_(s <= 1.0))


@ref("31_broadcast", "main", out="f32 f32 f32 f32 f32 f32",
     inputs=args(fl((3, 1)), fl((1, 4)), fl((2, 3, 4)), fl((4,)), fl(()), fl((1,))))
def _t31(c, r, x, bias, s, one):
    o = c * r
    return o, x + o, o + bias, x * s, x + 1.0, x - one


@ref("32_indexing", "main", out="f32 f32 f32 f32 f32 f32 f32",
     inputs=args(fl((4, 6)), fl((5, 3))))
def _t32(x, xs):
    return (x[1], x[3, 5], x[:, 2], x[0:4:2, 1:6:2], xs.sum(axis=0), x[1, 0], x[3])


@ref("33_index_matmul_transpose", "main", out="f32 f32 f32 bool",
     inputs=args(fl((2, 3)), fl((3, 4)), bl((2, 5))))
def _t33(a, b, flags):
    c = a @ b
    return c, c.T, a.T, flags.T


@ref("34_index_row_max_diagonal", "main", out="f32 f32 f32 f32",
     inputs=args(fl((3, 5)), fl((4, 4))))
def _t34(x, sq):
    top = x.max(axis=1)
    return top, np.diagonal(sq), np.trace(sq), x - top[:, None]


@ref("35_index_packs", "main", out="f32 f32 f32 f32",
     inputs=args(fl((2, 3, 4)), fl((5, 4)), fl((2,)), fl((4,))))
def _t35(x, w, g, v):
    return (np.einsum("abi,oi->abo", x, w), w @ v, x * g[:, None, None] + 1.0,
            np.tanh(x) * 0.5)


@ref("36_index_accumulator_dtype", "main", out="f32 i64 f16",
     inputs=args(fl((2, 3), "bf16"), fl((3, 4), "bf16"), it((6,), "i64"), fl((2, 8), "f16")))
def _t36(a, b, i, h):
    return a @ b, wrap(big(i).sum(), "i64"), h.max(axis=1)


@ref("37_index_any_all", "main", out="bool bool bool bool",
     inputs=args(fl((3, 4)), bl((5,)), bl((3, 4))))
def _t37(x, m, b):
    return (x < 0.0).any(axis=1), np.bool_(m.all()), b.all(axis=0), np.bool_(b.any())


@ref("38_index_prod_min", "main", out="f32 f32 f32 f32 i32 i32 i32",
     inputs=args(fl((3, 4)), it((2, 5), "i32")))
def _t38(x, i):
    return (x.prod(axis=1), x.min(axis=1), x.max(axis=1), x.sum(axis=1),
            wrap(np.prod(big(i), axis=1), "i32"), i.min(axis=1), wrap(np.prod(big(i)), "i32"))


@ref("39_index_reduction_extent", "main", out="f32 f32 f32 f32 f32",
     inputs=args(fl((3,)), fl((3, 4)), fl((4,)), fl((4, 5))))
def _t39(bias, a, v, b):
    return bias + a @ v, 1.0 + v @ v, v.sum() * 2.0, (a * a).sum(), (a @ b).max(axis=1)


@ref("40_index_bool_masks", "main", out="bool bool f32",
     inputs=args(it((4,), "i32", -8, 8), it((8,), "i32", -8, 8), fl((2, 3), lo=-2, hi=2)))
def _t40(rows, ks, x):
    r_in = rows[:, None] < 3
    k_in = ks[None, :] < 5
    inside = r_in & k_in
    outside = ~r_in | (ks[None, :] >= 5)
    return inside, outside, np.where((x > -1.0) & (x < 1.0), x, 0.0)


@ref("41_kernel_grid1", "main", out="f32", inputs=args(fl((1000,)), fl((1000,))))
def _t41(x, y):
    return x + y


@ref("42_kernel_grid2", "main", out="f32", inputs=args(fl((100, 70))))
def _t42(x):
    return x.T


@ref("43_kernel_grid3", "main", out="f32", inputs=args(fl((3, 40, 100)), fl((3, 100))))
def _t43(x, bias):
    return x + bias[:, None, :]


@ref("44_kernel_load_forms", "main", out="f32 i32 f32 f32",
     inputs=args(fl((8, 300)), it((8, 300), "i32"), fl((8, 64))))
def _t44(x, i, e):
    return x.max(axis=1), i.min(axis=1), e, x.sum(axis=1)


@ref("45_kernel_store_forms", "main", out="f32 f32 f32", inputs=args(fl((6, 300))))
def _t45(x):
    t = x.sum(axis=1)
    return t, np.broadcast_to(t[:, None], (6, 300)), x * 2.0


@ref("46_kernel_atomics", "main", out="i32 i32 i32 f32 f16",
     inputs=args(it((50, 20), "i32"), fl((5000,)), fl((600,), "f16")))
def _t46(x, f, h):
    return (wrap(big(x).sum(axis=0), "i32"), x.max(axis=0), x.min(axis=0),
            np.array([f.sum()]), np.array([h.sum()]))


@ref("47_kernel_scalar_params", "main", out="f32 i32",
     inputs=args(fl((300,)), it((300,), "i32"), it((), "i32")))
def _t47(x, i, k):
    return 2.0 * x + -0.5, wrap(big(i) * big(k) + 1, "i32")


@ref("48_kernel_no_generics", "main", out="f32 f32",
     inputs=args(fl((16,)), fl((16,)), fl((4, 32))))
def _t48(x, y, m):
    return x + y, m * 0.5


@ref("49_kernel_loops_and_fns", "main", out="f32 f32", tol={0: (gamma(1000), 1e-5)},
     inputs=args(fl((10, 1000))))
def _t49(x):
    return (x / (1.0 + np.exp(-x))).sum(axis=1), np.abs(x).max(axis=1)


@ref("50_grad_single", "main", out="f32 f32 f32 bf16 f64",
     inputs=args(fl((8,)), bl((8,)), it((8,), "i32"), fl((2, 3), "bf16"), fl((4,), "f64")))
def _t50(x, keep, idx, b, d):
    return (x * x, (x * x).sum(), np.where(keep, x * 0.5, 0.0), b / (np.abs(b) + 1.0),
            np.exp(d))


@ref("51_grad_multi", "main", out="f32 f32 f32",
     inputs=args(fl((4,)), fl((4,)), fl((4,)), fl((4, 3)), fl((3,)), bl((4,))))
def _t51(a, b, c, w, v, g):
    return a * b + c, np.einsum("i,ij,j->", a, w, v), np.where(g, a * b, a)


@ref("52_entries", "fixed", out="f32", inputs=args(fl((8,))))
def _t52_fixed(x):
    with np.errstate(invalid="ignore", divide="ignore"):
        return x / x.sum()  # a zero sum gives +-inf and NaN


@ref("52_entries", "generic", out="f32",
     inputs=dims(D).flatmap(lambda d: args(fl(d))))  # where N >= 1
def _t52_generic(x):
    return x.sum() / x.shape[0]


@ref("52_entries", "constant", out="f32", inputs=args())
def _t52_constant():
    return np.ones(3)


@ref("52_entries", "both", out="f32 f32", inputs=dims(D, D).flatmap(lambda d: args(fl(d))))
def _t52_both(x):
    return x * 2.0, x.sum(axis=0)


@ref("53_pub_items", "main", out="f32 f32", inputs=args(fl((32,)), fl((2,))))
def _t53(x, y):
    return -(x * 2.0), y + y * 3.0


@ref("54_fn_inferred_result", "main", out="f32 i32 i32",
     inputs=args(fl((4,)), it((), "i32"), it((), "i32")))
def _t54(x, a, b):
    return x * 0.5, wrap(big(a) + big(b), "i32"), wrap(big(a) - big(b), "i32")


@ref("55_partial_index", "main", out="f32 f32", inputs=args(fl((3,)), fl((4, 3))))
def _t55(x, m):
    return sum(x * i for i in range(5)), m[1]


@ref("56_slice_default_step", "main", out="f32 f32 f32", inputs=args(fl((4, 6))))
def _t56(x):
    return x[1:3, 0:6], x[0:4, 0:3], x[0:4:2, 2:4]


@ref("57_index_fn_call", "main", out="f32 f32 f32",
     inputs=args(fl((2, 3)), it((3,), "i32")))
def _t57(x, g):
    root = np.sqrt(np.where(x > 0.0, x, 0.0))
    return (np.log(1.0 + np.exp(x)), np.where(x > 0.0, root, g.astype(np.float64)[None, :]),
            np.sqrt((x * x).sum(axis=1)))


@ref("58_scan_with_carry", "main", out="f32 f32", inputs=args(fl((5, 3))))
def _t58(xs):
    peaks = np.maximum.accumulate(np.maximum(xs.max(axis=1), f32(-1e30)))
    return np.cumprod(xs, axis=0), peaks


@ref("59_unary_and_precedence", "main", out="f32 f32 i64 i64 bool bool i64 f32",
     inputs=args(fl((4,)), it((), "i64"), nonzero(()), nonzero(()), bl(), bl()))
def _t59(x, a, b, c, p, q):
    A, B, C = big(a), big(b), big(c)
    w64 = lambda v: big(wrap(v, "i64"))  # noqa: E731
    # a + b * c - a / b % c  is  (a + (b * c)) - ((a / b) % c); MIN / -1 wraps to MIN
    arith = wrap(A + w64(B * C) - tmod(w64(tdiv(A, B)), C), "i64")
    # a | b ^ c & a + 1  is  a | (b ^ (c & (a + 1)))
    bits = wrap(A | (B ^ (C & w64(A + 1))), "i64")
    logic = bool(p) or (bool(q) and not bool(p))
    # a + 1 < b * 2 == (c > 0)  is  ((a + 1) < (b * 2)) == (c > 0)
    cmp = bool(w64(A + 1) < w64(B * 2)) == bool(C > 0)
    return (-x, x * 2.0 - (-x), arith, bits, np.bool_(logic), np.bool_(cmp),
            wrap(A - B - C, "i64"), -x[0] * 2.0)


@ref("60_line_continuation", "main", out="f32", inputs=args(fl((2, 3)), fl((2, 3))))
def _t60(x, y):
    return (x + y) * 0.5  # R = 2 > 0 picks `total`


@ref("61_kernel_dtype_generic", "main", out="f32 bf16",
     inputs=args(fl((1000,)), fl((1000,), "bf16")))
def _t61_main(x, h):
    return -x * 1.5, -h * 1.5


@st.composite
def _t61_any_inputs(draw):
    (n,) = draw(dims(D))
    dtype = draw(st.sampled_from(["f16", "bf16", "f32", "f64"]))
    return (draw(fl((n,), dtype)),)


# `any_dtype` returns a Tensor[N; T] of its input's dtype T
@ref("61_kernel_dtype_generic", "any_dtype", out=lambda inputs: inputs[0].dtype,
     inputs=_t61_any_inputs())
def _t61_any(x):
    return -x * 1.5


@ref("62_op_calls", "main", out="f32 f32", inputs=args(fl((10,))))
def _t62(x):
    c = x - x.mean()
    v = (c * c).mean()
    return c / np.sqrt(v + f32(1e-5)), v


@ref("63_op_where", "main", out="f32 f32 f32", inputs=args(fl((6, 4)), fl((2, 1000))))
def _t63(x, wide):
    return x[0:2, 0:4], x * 3.0, wide * 0.5


@ref("64_contextual_words", "main", out="f32 f32 f32 f32", inputs=args(fl((4,))))
def _t64(x):
    s = x.sum()
    prod = s * 1.5
    any_ = 1.5 * 0.5 + prod
    return s, prod, any_, 2.0 + any_



# Scans that yield tuples: each item stacked on a new leading axis of its own.
@ref("85_scan_tuples", "main", out="f32 f32 f32 i64 bool f32 f32 f32 i32",
     inputs=args(fl((4,)), fl((3, 4))))
def _t85(x, xs):
    w, ws = x, []
    for k in range(3):
        w = w * 0.5 + xs[k]
        ws.append(w)
    peaks = xs.max(axis=1)
    squares = np.array([k * k for k in range(2, 5)], np.int64)
    scaled = np.stack([x * (k + 1) for k in range(2)])
    totals = scaled.sum(axis=1)
    return (np.stack(ws), 2.0 * np.stack(ws), peaks, squares, peaks > 0.0, totals,
            scaled - totals[:, None], np.zeros((0, 4)), np.zeros((0,), np.int32))


@ref("86_scan_value_forms", "main", out="f32 f32 f32 f32 i64", inputs=args(fl((4, 3))))
def _t86(xs):
    sums = np.cumsum(xs, axis=0)
    return (xs * 2.0 + 1.0, sums, sums.sum(axis=1), xs[2:4] * 2.0,
            np.array([11, 12], np.int64))


@ref("87_kernel_scans", "main", out="f32 f32 i32", inputs=args(fl((4, 50))))
def _t87(x):
    return np.cumsum(x, axis=0), x.max(axis=1), (x > 0.0).sum(axis=1).astype(np.int32)

# ============================================================ edge cases
#
# Inputs that Hypothesis may or may not reach, run on every test run: the integer limits
# where wrap-around, truncating division (MIN / -1), abs(MIN), shifts of the sign bit and
# f16 overflow happen.

def val(dtype: str, values: Any, shape: tuple[int, ...] | None = None) -> In:
    """An input with the given values (a scalar for a single value without a shape)."""
    arr = np.array(values, dtype=NP_DTYPES[dtype])
    if dtype in FLOATS:
        arr = arr.astype(np.float64)
    return In(arr.reshape(shape) if shape is not None else arr, dtype)


def zeros(shape: tuple[int, ...], dtype: str = "f32") -> In:
    return In(np.zeros(shape, dtype=NP_DTYPES[dtype]), dtype)


I8, I16, I32, I64 = (int_range(d) for d in ("i8", "i16", "i32", "i64"))
U8, U16, U32, U64 = (int_range(d)[1] for d in ("u8", "u16", "u32", "u64"))

EDGES: dict[tuple[str, str], list[tuple[In, ...]]] = {
    ("01_module_and_const", "main"): [
        (zeros((8, 16)), val("i32", I32[0]), val("u8", U8)),
        (zeros((8, 16)), val("i32", I32[0] + 2), val("u8", 0))],
    ("03_fn_generics", "main"): [
        (zeros((3,)), val("i32", [I32[1]] * 5 + [I32[0]] * 5, (2, 5)),
         val("i32", [1, I32[1], I32[0], -1, 0] * 2, (2, 5)))],
    ("05_dtype_kinds", "main"): [
        (val("bool", [True, False, True, False]), val("i32", [I32[0], I32[1], 65519, 65520]),
         val("u8", [[U8, 254], [1, 0]]), val("bf16", [0.0, 1.0, -3.0, 0.5])),
        (val("bool", [False] * 4), val("i32", [-65520, -65519, 1290, -1291]),
         val("u8", [[3, 2], [128, 129]]), val("bf16", [2.0, -2.0, 0.25, 3.0]))],
    ("07_generic_call_rule", "main"): [
        (zeros((4,)), val("i64", 0), val("i64", 1), val("i64", 0), val("i64", I64[1])),
        (zeros((4,)), val("i64", I64[0]), val("i64", I64[1]), val("i64", I64[0]),
         val("i64", I64[1]))],
    ("10_scalar_dtypes", "main"): [
        (val("bool", True), val("i8", I8[1]), val("i16", 16384), val("i32", I32[0]),
         val("i64", I64[0]), val("u8", 251), val("u16", U16), val("u32", U32),
         val("u64", U64), val("f16", 0.5), val("bf16", -1.0), val("f32", 2.5),
         val("f64", -3.0)),
        (val("bool", False), val("i8", -1), val("i16", -16385), val("i32", I32[0] + 2),
         val("i64", -7), val("u8", 250), val("u16", 5), val("u32", 8), val("u64", 8),
         val("f16", -0.5), val("bf16", 3.0), val("f32", -3.0), val("f64", 1.5))],
    ("10_scalar_dtypes", "tensors"): [
        (val("bool", [True, False]), val("i8", [I8[0], I8[1]]), val("i16", [I16[1], I16[0]]),
         val("i32", [65536, I32[0]]), val("i64", [I64[0], -7]), val("u8", [6, U8]),
         val("u16", [U16, 0]), val("u32", [2**31, U32]), val("u64", [U64, 2**63]),
         val("f16", [1.0, -3.0]), val("bf16", [3.0, -0.5]), val("f32", [0.0, -1.5]),
         val("f64", [2.0, -2.0]))],
    ("19_prelude_math", "main"): [
        (zeros((8,)), zeros((8,), "bf16"),
         val("i32", [I32[0], I32[0] + 1, I32[1], -1, 0, 1, 2**24 + 1, -(2**24) - 1]),
         val("f64", 0.0))],
    ("21_shifts", "main"): [
        (val("i32", [I32[0], -1, I32[1], 2**29]), val("u32", [U32, 2**31, 7, 0]),
         val("i64", I64[0])),
        (val("i32", [-2**29 - 1, 1, -3, 2**30]), val("u32", [2**31 - 1, 8, 1, 2**30]),
         val("i64", I64[1])),
        (val("i32", [0, 0, 0, 0]), val("u32", [0, 0, 0, 0]), val("i64", -1))],
    ("24_iota_fill", "main"): [(val("i64", [I64[1], I64[1] - 1, I64[0], -1, 0]),)],
    ("25_cumsum", "main"): [
        (zeros((3, 4)), val("i32", [I32[1], 1, I32[1], I32[0], I32[0], -1]),
         val("u8", [[U8, 1], [200, 100]]))],
    ("26_int_literals", "main"): [
        (val("i32", [I32[1], I32[1] - 15, I32[0], -16]), val("u8", [U8, 0x0F, 0xF0, 0x80]))],
    ("29_bitwise", "main"): [
        (val("i32", [I32[0], -1, I32[1], 0]), val("i32", [I32[1], I32[1], -1, I32[0]]),
         val("bool", [True, True, False, False]), val("bool", [True, False, True, False]),
         val("u64", U64)),
        (val("i32", [5, -6, 10, -11]), val("i32", [-1, 0, 2**30, -(2**30)]),
         val("bool", [False] * 4), val("bool", [True] * 4), val("u64", 2**63 + 0xF3))],
    ("36_index_accumulator_dtype", "main"): [
        (zeros((2, 3), "bf16"), zeros((3, 4), "bf16"),
         val("i64", [I64[1], I64[1], I64[1], 1, 0, -1]), zeros((2, 8), "f16"))],
    ("38_index_prod_min", "main"): [
        (zeros((3, 4)), val("i32", [I32[0], -1, 1, 1, 1, 65536, 65536, 3, 5, -7], (2, 5)))],
    ("44_kernel_load_forms", "main"): [
        (zeros((8, 300)), In(np.full((8, 300), I32[1], np.int32), "i32"), zeros((8, 64)))],
    ("46_kernel_atomics", "main"): [
        (In(np.full((50, 20), I32[1], np.int32), "i32"), zeros((5000,)), zeros((600,), "f16")),
        (In(np.full((50, 20), I32[0], np.int32), "i32"), zeros((5000,)), zeros((600,), "f16"))],
    ("47_kernel_scalar_params", "main"): [
        (zeros((300,)), In(np.full(300, I32[1], np.int32), "i32"), val("i32", I32[1])),
        (zeros((300,)), In(np.full(300, I32[0], np.int32), "i32"), val("i32", -1))],
    ("54_fn_inferred_result", "main"): [
        (zeros((4,)), val("i32", I32[1]), val("i32", I32[0])),
        (zeros((4,)), val("i32", I32[0]), val("i32", 1))],
    ("59_unary_and_precedence", "main"): [
        # MIN / -1 wraps to MIN, and MIN % -1 is 0
        (zeros((4,)), val("i64", I64[0]), val("i64", -1), val("i64", -1),
         val("bool", True), val("bool", False)),
        (zeros((4,)), val("i64", I64[0]), val("i64", -1), val("i64", 7),
         val("bool", False), val("bool", True)),
        (zeros((4,)), val("i64", I64[1]), val("i64", I64[1]), val("i64", I64[0]),
         val("bool", False), val("bool", False)),
        (zeros((4,)), val("i64", -7), val("i64", 2), val("i64", -3),
         val("bool", True), val("bool", True)),
        (zeros((4,)), val("i64", 7), val("i64", -2), val("i64", 3),
         val("bool", False), val("bool", True))],
}


# ===================================================== names beside builtins

@ref("75_names_beside_builtins", "main", out="f32 f32 bool", inputs=args(pos((4,))))
def _t75(x):
    total, product = x.sum(), x.prod()
    accumulated = total * product + 3.0
    awaited = np.exp(np.sqrt(x)) * 0.5
    return accumulated, awaited, np.bool_((x > 0).any() and (x < 10.0).all())


# =============================================== index notation at positions

@st.composite
def _t76_inputs(draw):
    r, c = draw(dims((1, 12), (3, 12)))
    return draw(fl((r, c))), draw(fl((c,)))


@ref("76_index_notation_positions", "positions", out="f32 f32 f32 f32 f32 f32", inputs=_t76_inputs())
def _t76(x, v):
    c = v.shape[0]
    return (v * np.arange(c), x[:, 0] * 2.0, x[:, c - 1] + x[:, 2] - x[:, 1],
            (x * 2.0).sum(axis=0), (x[0, :] * v).sum(), 3.0 * v)


# ======================================================= where sets and strides

@ref("70_where_sets_and_strides", "main", out="f32 f32 f32 f32",
     inputs=args(fl((12,)), fl((2, 3, 12))))
def _t70(v, x):
    o = v[1::2][::2]
    return v.reshape(3, 4), v[0::2], x.reshape(2, 3, 4, 3), np.concatenate([o, o])

# ===================================== operands of different ranks, empty axes (90-94)

def _rows(a: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """An operand broadcast right-aligned to `shape`, as exact integers."""
    return np.broadcast_to(big(a), shape)


@ref("90_integer_division_ranks", "main",
     out="i32 i32 i32 i32 i32 i32 u64 u64 f32",
     inputs=args(nonzero((2, 3), "i32"), nonzero((3,), "i32"), nonzero((), "i32"),
                 it((2, 3), "u64", 1), it((3,), "u64", 1), fl((2, 3)), mag((3,), 0.5, 3.0)))
def _t90(x, y, s, u, v, f, g):
    X, Y, S = big(x), _rows(y, (2, 3)), _rows(s, (2, 3))
    q = wrap(tdiv(X, Y), "i32")  # MIN / -1 wraps to MIN
    return (q, wrap(tmod(X, Y), "i32"), wrap(tdiv(Y, X), "i32"), wrap(tmod(S, X), "i32"),
            wrap(tdiv(X, S), "i32"), wrap(big(wrap(tmod(big(y), big(s)), "i32")) + big(q), "i32"),
            wrap(tdiv(big(u), _rows(v, (2, 3))), "u64"), wrap(tmod(_rows(v, (2, 3)), big(u)), "u64"),
            np.fmod(f, g))


def _shift(x: Any, n: Any, dtype: str, left: bool) -> np.ndarray:
    """`shl`/`shr` on exact integers: counts of the width or more give 0 or the sign."""
    x, n = np.broadcast_arrays(big(x), big(n))
    bits = BITS[dtype]
    out = [(v << min(k, bits)) if left else (v >> min(k, bits)) for v, k in
           zip(x.reshape(-1), n.reshape(-1))]
    return wrap(np.array(out, dtype=object).reshape(x.shape), dtype)


@ref("90_integer_division_ranks", "shifts", out="i32 i32 u16 u16",
     inputs=args(it((2, 3), "i32"), it((3,), "i32", 0, 40), it((2, 3), "i32", 0, 40),
                 it((2, 3), "u16"), it((), "u16", 0, 20)))
def _t90_shifts(x, n, c, u, k):
    # Python's >> on exact integers is arithmetic; u16 values are non-negative, so logical
    return (_shift(x, n, "i32", True), _shift(n, c, "i32", False),
            _shift(u, k, "u16", False), _shift(k, u, "u16", True))


EDGES[("90_integer_division_ranks", "main")] = [
    # MIN / -1 wraps to MIN and MIN % -1 is 0, with the -1 broadcast along rows
    (val("i32", [I32[0], I32[0], 7, -7, I32[1], I32[0]], (2, 3)), val("i32", [-1, 2, -2]),
     val("i32", -1), val("u64", [U64, 2**63, 5, 1, U64, 7], (2, 3)),
     val("u64", [2**63, U64, 3]), zeros((2, 3)), val("f32", [1.5, -2.0, 3.0]))]


@ref("91_empty_axes", "sums", out="f32 f32 f32 f64 f32",
     inputs=args(fl((0, 3)), fl((2, 0), "f64")))
def _t91_sums(x, w):
    return (np.zeros(3), np.ones(3), np.float64(0.0), np.ones(2), np.zeros(0))


@ref("91_empty_axes", "highest", out="f32 f32", inputs=args(fl((0, 3))))
def _t91_highest(x):
    return (np.full(3, -np.inf), np.float64(-np.inf))


@ref("91_empty_axes", "lowest", out="f64", inputs=args(fl((0, 3), "f64")))
def _t91_lowest(x):
    return np.full(3, np.inf)


@ref("91_empty_axes", "exact", out="i32 i32 i32 i32 u8 u8 bool bool",
     inputs=args(it((0, 3), "i32"), it((2, 0), "u8"), bl((0, 3))))
def _t91_exact(k, u, b):
    lo, hi = int_range("i32")
    return (np.zeros(3, np.int32), np.ones(3, np.int32), np.full(3, lo, np.int32),
            np.full(3, hi, np.int32), np.zeros(2, np.uint8), np.full(2, U8, np.uint8),
            np.zeros(3, np.bool_), np.ones(3, np.bool_))


@ref("91_empty_axes", "scanned", out="f32 f32", inputs=args(fl((3,))))
def _t91_scanned(x):
    return (np.float64(-np.inf), x)


@ref("91_empty_axes", "no_rows", out="f32", inputs=args(fl((0, 3)), fl((3,))))
def _t91_no_rows(xs, y):
    return y


@ref("92_cast_round_trips", "main", out="bool i8 i8",
     inputs=args(bl((4,)), bl((4,)), it((4,), "i8")))
def _t92(x, y, k):
    K = big(k)
    return (x | y, wrap(K * 4, "i8"), wrap(K + 3 * tdiv(K, 2), "i8"))


@ref("93_scalar_store_and_clause", "main", out="f32 f32", inputs=args(fl((3, 10)), fl((4,))))
def _t93(x, w):
    truncated = np.trunc(np.float32(w * 4.0))  # w is on a grid of 1/32: w * 4 is exact
    return (np.broadcast_to(x.sum(axis=1, keepdims=True), x.shape), (truncated * w).sum())


# ============================================================ limits (95-99)

@ref("95_blank_line_runs", "main", out="f32", inputs=args(fl((4,)), it((), "i64", -2, 2)))
def _t95(x, n):
    return 40 * x + 50 if n > 0 else -x  # 41 unary minuses negate


# ====================================================== kernel loops with run-time bounds

def _strictly_below(n: int) -> np.ndarray:
    return np.arange(n)[None, :] < np.arange(n)[:, None]  # [r, c]: c < r


@ref("96_kernel_runtime_loops", "main", out="f32 f32 f32", inputs=args(fl((37, 37))))
def _t96(x):
    pos = np.arange(37)
    band = (pos[None, :] <= pos[:, None]) & (pos[None, :] >= pos[:, None] - 16)
    below = _strictly_below(37)
    return ((x * below).sum(axis=1), (x * band).sum(axis=1), np.where(below, 2 * x, 0.0))


@ref("97_kernel_loop_bound_params", "main", out="f32",
     inputs=args(fl((20, 40)), it((), "i32", -100, 100)))
def _t97(x, n):
    return x[:, :max(0, min(int(n), 40))].sum(axis=1)


# ============================================================ dimension expressions (110-119)

@ref("110_next_pow2", "tiles", out="f32 f32 i32 i64",
     inputs=dims(D, D).flatmap(lambda d: args(fl(d), fl((d[1],)))))
def _t110(x, v):
    width = 1
    while width < x.shape[1]:
        width *= 2
    padded = np.concatenate([v, np.zeros(width - v.shape[0])])
    return (x.max(axis=1), padded, np.arange(width, dtype=np.int32), np.int64(width + 1 + 8))


@ref("111_pack_products", "main", out="f32 f32 f32 f32 i64 i64",
     inputs=args(fl((2, 3, 4)), fl((4,))))
def _t111(x, v):
    def shifted(a):
        return a - a.max(axis=-1, keepdims=True)
    return (shifted(x), shifted(v), x.reshape(6, 4), x.mean(), np.int64(6), np.int64(1))


# ============================================================ the model layer's values

def _register_values() -> None:
    """The references of spec programs 140-147, kept in `references_values.py`."""
    import importlib.util
    import sys
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "linnet_body_references_values", Path(__file__).with_name("references_values.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.register(sys.modules[__name__])


_register_values()
