"""The PyTorch backends on hand-built tensor-core IR: every primitive and control-flow node.

Each program runs through BOTH the interpreter (`linnet.torch.interpreter.run`) and the
generated module (`emit_torch`, imported from a file by `linnet.torch.runtime`); the two
must agree bit for bit, and both are compared with references computed here (exact Python
integers for integer semantics, NumPy for floats).
"""

from __future__ import annotations

import itertools
import math
import os
import random

import numpy as np
import pytest
import torch

from linnet.emit.torch import emit_torch
from linnet.ir import tensor as ir
from irbuild import Blk, L, T  # noqa: E402
from linnet.torch.interpreter import run
from linnet.torch.runtime import import_generated

# ------------------------------------------------------------------ building IR

def P(name: str, ty: ir.Ty) -> ir.Var:
    return ir.Var(name, ty)


def program(params: list[ir.Var], body: ir.Block, *others: ir.Func) -> ir.Program:
    return ir.Program((ir.Func("main", "entry", tuple(params), body),) + others, "main")


# ------------------------------------------------------------------- running


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    a, b = a.cpu(), b.cpu()
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        return bool(torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
                    and torch.equal(a.isnan(), b.isnan()))
    return bool(torch.equal(a, b))


#: `LINNET_TEST_DEVICE=cuda` runs every program on CUDA tensors (the GPU check).
DEVICE = os.environ.get("LINNET_TEST_DEVICE", "cpu")


def both(prog: ir.Program, *inputs) -> tuple:
    """Run the interpreter and the generated module; they must agree exactly."""
    inputs = tuple(x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in inputs)
    interp = run(prog, *inputs)
    module = import_generated(emit_torch(prog), "test")
    gen = module.main(*inputs)
    assert isinstance(gen, tuple) and isinstance(interp, tuple) and len(gen) == len(interp)
    for x, y in zip(_flat(interp), _flat(gen)):
        if DEVICE != "cpu" and any(isinstance(i, torch.Tensor) for i in inputs):
            assert x.device.type == y.device.type == DEVICE
        assert _same(x, y), (x, y)
    return _cpu(gen)


def _cpu(x):
    return tuple(_cpu(y) for y in x) if isinstance(x, tuple) else x.cpu()


def _flat(xs):
    for x in xs:
        if isinstance(x, tuple):
            yield from _flat(x)
        else:
            yield x


TORCH = {"bool": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
         "i64": torch.int64, "u8": torch.uint8, "u16": torch.uint16, "u32": torch.uint32,
         "u64": torch.uint64, "f16": torch.float16, "bf16": torch.bfloat16,
         "f32": torch.float32, "f64": torch.float64}
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
INTS = list(BITS)


def wrap(v: int, dtype: str) -> int:
    bits = BITS[dtype]
    v %= 1 << bits
    if dtype.startswith("i") and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def tensor(values, dtype: str) -> torch.Tensor:
    return torch.tensor(values, dtype=TORCH[dtype]) if dtype not in ("u16", "u32", "u64") else \
        torch.as_tensor(np.array(values, dtype={"u16": np.uint16, "u32": np.uint32,
                                                "u64": np.uint64}[dtype]))


def values(t: torch.Tensor) -> list:
    if t.dtype in (torch.uint16, torch.uint32, torch.uint64):
        return [int(v) for v in t.numpy().reshape(-1)]
    return t.reshape(-1).tolist()


def edge_values(dtype: str, n: int, rng: random.Random) -> list[int]:
    bits = BITS[dtype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if dtype[0] == "i" else (0, (1 << bits) - 1)
    edges = [lo, hi, 0, 1, -1, 2, -7, 7, lo + 1, hi - 1]
    vs = [wrap(v, dtype) for v in edges]
    while len(vs) < n:
        vs.append(rng.randint(lo, hi))
    return vs[:n]


# ---------------------------------------------------------- integer semantics


def _tdiv(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


INT_OPS = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": _tdiv, "mod": lambda x, y: x - _tdiv(x, y) * y,
    "min": min, "max": max, "and": lambda x, y: x & y, "or": lambda x, y: x | y,
    "xor": lambda x, y: x ^ y,
}
CMP_OPS = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}


@pytest.mark.parametrize("dtype", INTS)
def test_integer_binary_ops_wrap_and_truncate(dtype):
    rng = random.Random(BITS[dtype] * 7 + len(dtype))
    n = 24
    xs = edge_values(dtype, n, rng)
    ys = [v if v != 0 else 3 for v in reversed(edge_values(dtype, n, rng))]
    shifts = [rng.randrange(BITS[dtype]) for _ in range(n)]
    shifts[:3] = [0, BITS[dtype] - 1, 1]
    a, b, s = P("a", T(dtype, n)), P("b", T(dtype, n)), P("s", T(dtype, n))
    blk = Blk()
    outs = [blk.p(op, a, b, ty=T(dtype, n)) for op in INT_OPS]
    outs += [blk.p(op, a, b, ty=T("bool", n)) for op in CMP_OPS]
    outs += [blk.p("shl", a, s, ty=T(dtype, n)), blk.p("shr", a, s, ty=T(dtype, n))]
    outs += [blk.p(op, a, ty=T(dtype, n)) for op in ("neg", "not", "abs")]
    got = both(program([a, b, s], blk.done(blk.tup(*outs))),
               tensor(xs, dtype), tensor(ys, dtype), tensor(shifts, dtype))
    for op, out in zip(list(INT_OPS) + list(CMP_OPS), got):
        ref = INT_OPS.get(op) or CMP_OPS[op]
        want = [ref(x, y) if op in CMP_OPS else wrap(ref(x, y), dtype) for x, y in zip(xs, ys)]
        assert out.dtype == (torch.bool if op in CMP_OPS else TORCH[dtype]), op
        assert values(out) == want, (dtype, op)
    shl, shr, neg, inv, ab = got[-5:]
    assert values(shl) == [wrap(x << k, dtype) for x, k in zip(xs, shifts)]
    assert values(shr) == [x >> k for x, k in zip(xs, shifts)]  # Python: arithmetic; unsigned x >= 0
    assert values(neg) == [wrap(-x, dtype) for x in xs]
    assert values(inv) == [wrap(~x, dtype) for x in xs]
    assert values(ab) == [wrap(abs(x), dtype) for x in xs]


def _scalar_prog(op: str, dtype: str, args: list, result: str | None = None) -> ir.Program:
    params = [P(f"x{i}", T(dtype)) for i in range(len(args))]
    blk = Blk()
    return program(params, blk.done(blk.p(op, *params, ty=T(result or dtype))))


def _one(op: str, dtype: str, *args, result: str | None = None):
    (out,) = both(_scalar_prog(op, dtype, list(args), result), *args)
    assert out.shape == () and out.dtype == TORCH[result or dtype]
    return out.item() if out.dtype not in (torch.uint16, torch.uint32, torch.uint64) else values(out)[0]


def test_the_named_integer_cases():
    assert _one("add", "i8", 127, 1) == -128
    assert _one("div", "i32", -7, 2) == -3
    assert _one("mod", "i32", -7, 2) == -1
    assert _one("mod", "i32", 7, -2) == 1
    assert _one("div", "i32", -2**31, -1) == -2**31  # wraps; torch alone would trap
    assert _one("div", "i64", -2**63, -1) == -2**63
    assert _one("mod", "i8", -128, -1) == 0
    assert _one("mul", "i32", 65536, 65536) == 0
    assert _one("neg", "i16", -2**15) == -2**15
    assert _one("abs", "i32", -2**31) == -2**31
    assert _one("shr", "i32", -8, 1) == -4
    assert _one("shr", "i32", -1, 31) == -1
    assert _one("shr", "u32", 2**32 - 8, 1) == 2**31 - 4  # logical on unsigned
    assert _one("shr", "u64", 2**64 - 1, 60) == 15
    assert _one("add", "u8", 250, 10) == 4
    assert _one("sub", "u8", 3, 5) == 254
    assert _one("sub", "u16", 3, 5) == 65534
    assert _one("mul", "u32", 2**31, 2) == 0
    assert _one("div", "u64", 2**64 - 1, 2**63) == 1
    assert _one("div", "u64", 2**64 - 2, 3) == (2**64 - 2) // 3
    assert _one("mod", "u64", 2**64 - 1, 10) == (2**64 - 1) % 10
    assert _one("lt", "u64", 2**63, 1, result="bool") is False


def test_u64_division_on_random_values():
    rng = random.Random(5)
    xs = [rng.getrandbits(64) for _ in range(200)] + [2**64 - 1, 2**63, 0, 5]
    ys = [rng.getrandbits(rng.choice([3, 20, 40, 63, 64])) or 1 for _ in range(200)] + [1, 2**63 + 1, 7, 2**64 - 1]
    n = len(xs)
    a, b = P("a", T("u64", n)), P("b", T("u64", n))
    blk = Blk()
    q = blk.p("div", a, b, ty=T("u64", n))
    r = blk.p("mod", a, b, ty=T("u64", n))
    mx = blk.p("max", a, b, ty=T("u64", n))
    got = both(program([a, b], blk.done(blk.tup(q, r, mx))), tensor(xs, "u64"), tensor(ys, "u64"))
    assert values(got[0]) == [x // y for x, y in zip(xs, ys)]
    assert values(got[1]) == [x % y for x, y in zip(xs, ys)]
    assert values(got[2]) == [max(x, y) for x, y in zip(xs, ys)]


# ------------------------------------------------------------------- floats

FLOAT_BIN = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
             "mod": np.fmod, "min": np.minimum, "max": np.maximum}
FLOAT_UN = {"neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt,
            "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin, "cos": np.cos, "tanh": np.tanh}


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64"])
def test_float_ops(dtype):
    rng = np.random.default_rng(1)
    n = 16
    x = rng.uniform(0.1, 4.0, n) * rng.choice([-1, 1], n)
    y = rng.uniform(0.5, 3.0, n) * rng.choice([-1, 1], n)
    x[0], y[0] = -7.5, 2.0  # fmod: the sign of the dividend
    xt, yt = torch.tensor(x, dtype=TORCH[dtype]), torch.tensor(y, dtype=TORCH[dtype])
    a, b = P("a", T(dtype, n)), P("b", T(dtype, n))
    blk = Blk()
    outs = [blk.p(op, a, b, ty=T(dtype, n)) for op in FLOAT_BIN]
    outs += [blk.p(op, a, b, ty=T("bool", n)) for op in CMP_OPS]
    absx = blk.p("abs", a, ty=T(dtype, n))
    outs += [blk.p(op, absx if op in ("log", "sqrt", "rsqrt") else a, ty=T(dtype, n)) for op in FLOAT_UN]
    got = both(program([a, b], blk.done(blk.tup(*outs))), xt, yt)
    xr, yr = xt.double().numpy(), yt.double().numpy()
    tol = {"f16": 2e-3, "bf16": 1.6e-2, "f32": 1e-6, "f64": 1e-12}[dtype]
    for op, out in zip(list(FLOAT_BIN) + list(CMP_OPS), got):
        assert out.dtype == (torch.bool if op in CMP_OPS else TORCH[dtype])
        if op in CMP_OPS:
            assert out.numpy().tolist() == [CMP_OPS[op](p, q) for p, q in zip(xr, yr)]
        else:
            np.testing.assert_allclose(out.double().numpy(), FLOAT_BIN[op](xr, yr), rtol=tol, atol=tol)
    assert got[list(FLOAT_BIN).index("mod")].double()[0].item() == -1.5  # fmod(-7.5, 2) == -1.5
    for op, out in zip(FLOAT_UN, got[len(FLOAT_BIN) + len(CMP_OPS):]):
        src = np.abs(xr) if op in ("log", "sqrt", "rsqrt") else xr
        np.testing.assert_allclose(out.double().numpy(), FLOAT_UN[op](src), rtol=tol, atol=tol)


def test_select_and_bool_logic():
    n = 4
    c, x, y = P("c", T("bool", n)), P("x", T("f32", n)), P("y", T("f32", 1))
    blk = Blk()
    s = blk.p("select", c, x, y, ty=T("f32", n))  # broadcasts y
    nc = blk.p("not", c, ty=T("bool", n))
    both_ = blk.p("and", c, nc, ty=T("bool", n))
    either = blk.p("or", c, nc, ty=T("bool", n))
    ex = blk.p("xor", c, L(True, "bool"), ty=T("bool", n))
    cv = [True, False, True, False]
    got = both(program([c, x, y], blk.done(blk.tup(s, nc, both_, either, ex))),
               torch.tensor(cv), torch.arange(4.0), torch.tensor([9.0]))
    assert got[0].tolist() == [0.0, 9.0, 2.0, 9.0]
    assert got[1].tolist() == [not v for v in cv]
    assert got[2].tolist() == [False] * 4 and got[3].tolist() == [True] * 4
    assert got[4].tolist() == [not v for v in cv]


def test_broadcasting_is_right_aligned():
    x, y = P("x", T("i32", 2, 3)), P("y", T("i32", 3))
    blk = Blk()
    s = blk.p("add", x, y, ty=T("i32", 2, 3))
    t = blk.p("mul", s, L(2, "i32"), ty=T("i32", 2, 3))
    (out,) = both(program([x, y], blk.done(t)), torch.arange(6, dtype=torch.int32).reshape(2, 3),
                  torch.tensor([10, 20, 30], dtype=torch.int32))
    assert out.tolist() == [[20, 42, 64], [26, 48, 70]]


# ------------------------------------------------------------------- casts

_CAST_INTS = [0, 1, -1, 127, -128, 255, 256, 65535, -65536, 2**31 - 1, -2**31, 2**32 + 5,
              2**63 - 1, -2**63]


@pytest.mark.parametrize("src", INTS + ["bool"])
def test_casts_between_integers_keep_the_low_bits(src):
    vs = [True, False, True] if src == "bool" else sorted({wrap(v, src) for v in _CAST_INTS})
    n = len(vs)
    x = P("x", T(src, n))
    blk = Blk()
    dsts = INTS + ["bool"]
    outs = [blk.p("cast", x, ty=T(d, n)) for d in dsts]
    # the same values seen through a float: what a program holds, not only what it returns
    floats = [blk.p("cast", o, ty=T("f64", n)) for o in outs]
    got = both(program([x], blk.done(blk.tup(*outs, *floats))),
               tensor(vs, src) if src != "bool" else torch.tensor(vs))
    for d, out, f in zip(dsts, got, got[len(dsts):]):
        assert out.dtype == TORCH[d]
        want = [v != 0 for v in vs] if d == "bool" else [wrap(int(v), d) for v in vs]
        assert values(out) == want, (src, d)
        assert values(f) == [float(v) for v in want], (src, d)


def test_float_to_int_casts_truncate():
    fs = [-2.7, 2.7, -0.5, 0.9, 100.99, -100.99]
    x = P("x", T("f32", len(fs)))
    blk = Blk()
    i32 = blk.p("cast", x, ty=T("i32", len(fs)))
    i8 = blk.p("cast", x, ty=T("i8", len(fs)))
    got = both(program([x], blk.done(blk.tup(i32, i8))), torch.tensor(fs))
    assert got[0].tolist() == [-2, 2, 0, 0, 100, -100]
    assert got[1].tolist() == [-2, 2, 0, 0, 100, -100]
    assert _one("cast", "f32", -2.7, result="i32") == -2
    us = [0.0, 2.7, 255.9, 65535.5, 4294967295.0, 9.3e18, 1.8e19]
    y = P("y", T("f64", len(us)))
    blk = Blk()
    outs = [blk.p("cast", y, ty=T(d, len(us))) for d in ("u8", "u16", "u32", "u64")]
    got = both(program([y], blk.done(blk.tup(*outs))), torch.tensor(us, dtype=torch.float64))
    assert values(got[0])[:3] == [0, 2, 255]
    assert values(got[1])[:4] == [0, 2, 255, 65535]
    assert values(got[2])[:5] == [0, 2, 255, 65535, 4294967295]
    assert values(got[3]) == [int(v) for v in us]


def test_integer_to_float_casts_round_once():
    big = [0, 1, 2**53 + 1, 2**63, 2**63 + 2**10 + 1, 2**64 - 1, 2**64 - 2**11 - 1]
    x = P("x", T("u64", len(big)))
    blk = Blk()
    f64 = blk.p("cast", x, ty=T("f64", len(big)))
    f32 = blk.p("cast", x, ty=T("f32", len(big)))
    got = both(program([x], blk.done(blk.tup(f64, f32))), tensor(big, "u64"))
    assert got[0].tolist() == [float(v) for v in big]  # Python rounds exactly once
    assert got[1].tolist() == [float(np.float32(v)) for v in [float(b) for b in big]]
    i = P("i", T("i32", 3))
    blk = Blk()
    h = blk.p("cast", i, ty=T("f16", 3))
    b16 = blk.p("cast", i, ty=T("bool", 3))
    got = both(program([i], blk.done(blk.tup(h, b16))), torch.tensor([-3, 0, 2049], dtype=torch.int32))
    assert got[0].tolist() == [-3.0, 0.0, 2048.0] and got[1].tolist() == [True, False, True]


def test_float_casts():
    x = P("x", T("f32", 3))
    blk = Blk()
    h = blk.p("cast", x, ty=T("f16", 3))
    b = blk.p("cast", x, ty=T("bf16", 3))
    d = blk.p("cast", h, ty=T("f64", 3))
    got = both(program([x], blk.done(blk.tup(h, b, d))), torch.tensor([1.0, 1e5, 0.1]))
    assert got[0].tolist()[:2] == [1.0, math.inf]
    assert got[1].dtype == torch.bfloat16 and got[2].dtype == torch.float64


# -------------------------------------------------------------- shape ops


def test_shape_primitives():
    x = P("x", T("i32", 2, 3, 4))
    blk = Blk()
    perm = blk.p("permute", x, ty=T("i32", 4, 2, 3), perm=(2, 0, 1))
    resh = blk.p("reshape", x, ty=T("i32", 6, 4))
    bc = blk.p("broadcast_to", resh, ty=T("i32", 2, 6, 4))
    cat = blk.p("concat", resh, resh, ty=T("i32", 6, 8), axis=-1)
    cat0 = blk.p("concat", resh, resh, resh, ty=T("i32", 18, 4), axis=0)
    idx = blk.p("index", x, ty=T("i32", 2), items=(("at", 1), ("slice", 0, 3, 2), ("at", 3)))
    idx2 = blk.p("index", x, ty=T("i32", 1, 3, 4), items=(("slice", 1, 2, 1),))
    got = both(program([x], blk.done(blk.tup(perm, resh, bc, cat, cat0, idx, idx2))),
               torch.arange(24, dtype=torch.int32).reshape(2, 3, 4))
    ref = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    r6 = ref.reshape(6, 4)
    expect = [ref.transpose(2, 0, 1), r6, np.broadcast_to(r6, (2, 6, 4)),
              np.concatenate([r6, r6], -1), np.concatenate([r6] * 3, 0), ref[1, 0:3:2, 3],
              ref[1:2]]
    for out, want in zip(got, expect):
        assert out.dtype == torch.int32 and np.array_equal(out.numpy(), want)
    assert got[2].is_contiguous()  # outputs are contiguous even when broadcast


def test_index_drops_at_axes_and_keeps_slices():
    x = P("x", T("i32", 2, 3, 4))
    blk = Blk()
    idx = blk.p("index", x, ty=T("i32", 2, 2), items=(("slice", 0, 2, 1), ("at", 1), ("slice", 0, 4, 2)))
    one = blk.p("index", x, ty=T("i32"), items=(("at", 1), ("at", 2), ("at", 3)))
    ref = np.arange(24).reshape(2, 3, 4)
    got = both(program([x], blk.done(blk.tup(idx, one))), torch.arange(24, dtype=torch.int32).reshape(2, 3, 4))
    assert got[0].tolist() == ref[0:2, 1, 0:4:2].tolist()
    assert got[1].shape == () and got[1].item() == ref[1, 2, 3]


def test_dyn_index_reads_runtime_positions():
    x, i, j = P("x", T("f32", 3, 4, 2)), P("i", T("i64")), P("j", T("i64"))
    blk = Blk()
    row = blk.p("dyn_index", x, i, ty=T("f32", 4, 2))
    cell = blk.p("dyn_index", x, i, j, ty=T("f32", 2))
    xs = torch.arange(24.0).reshape(3, 4, 2)
    got = both(program([x, i, j], blk.done(blk.tup(row, cell))), xs, 2, 1)  # Python ints convert
    assert torch.equal(got[0], xs[2]) and torch.equal(got[1], xs[2, 1])


def test_construction_iota_fill_cumsum():
    s = P("s", T("f32"))
    blk = Blk()
    outs = [blk.p("iota", ty=T(d, 5)) for d in ("i64", "f32", "u16", "u64", "i8")]
    fill = blk.p("fill", s, ty=T("f32", 2, 3))
    fill_lit = blk.p("fill", L(7, "u32"), ty=T("u32", 2))
    c8 = blk.p("iota", ty=T("i8", 20))
    c8 = blk.p("mul", c8, L(10, "i8"), ty=T("i8", 20))
    cs = blk.p("cumsum", c8, ty=T("i8", 20), axis=0)
    m = blk.p("reshape", blk.p("iota", ty=T("f32", 6)), ty=T("f32", 2, 3))
    cs2 = blk.p("cumsum", m, ty=T("f32", 2, 3), axis=-1)
    u = blk.p("iota", ty=T("u16", 4))
    u = blk.p("mul", u, L(30000, "u16"), ty=T("u16", 4))
    cu = blk.p("cumsum", u, ty=T("u16", 4), axis=0)
    got = both(program([s], blk.done(blk.tup(*outs, fill, fill_lit, cs, cs2, cu))), 2.5)
    for d, out in zip(("i64", "f32", "u16", "u64", "i8"), got):
        assert out.dtype == TORCH[d] and values(out) == [0, 1, 2, 3, 4]
    assert got[5].tolist() == [[2.5] * 3] * 2 and got[5].is_contiguous()
    assert values(got[6]) == [7, 7]
    assert got[7].tolist() == [wrap(sum(10 * k for k in range(i + 1)), "i8") for i in range(20)]
    assert got[8].tolist() == [[0.0, 1.0, 3.0], [3.0, 7.0, 12.0]]
    assert values(got[9]) == [wrap(v, "u16") for v in itertools.accumulate(30000 * k for k in range(4))]


def test_diagonal_merges_axes_into_the_last():
    x = P("x", T("i32", 3, 2, 3))
    y = P("y", T("i32", 2, 2, 2))
    blk = Blk()
    d = blk.p("diagonal", x, ty=T("i32", 2, 3), axes=(0, 2))
    d3 = blk.p("diagonal", y, ty=T("i32", 2), axes=(0, 1, 2))
    xs = np.arange(18, dtype=np.int32).reshape(3, 2, 3)
    ys = np.arange(8, dtype=np.int32).reshape(2, 2, 2)
    got = both(program([x, y], blk.done(blk.tup(d, d3))), torch.from_numpy(xs), torch.from_numpy(ys))
    assert got[0].tolist() == [[xs[i, j, i] for i in range(3)] for j in range(2)]
    assert got[1].tolist() == [ys[0, 0, 0], ys[1, 1, 1]]


# --------------------------------------------------------------- reductions


def test_reductions_accumulate_in_the_result_dtype():
    x8 = P("x8", T("i8", 2, 3))
    h = P("h", T("f16", 70))
    blk = Blk()
    s8 = blk.p("reduce_sum", x8, ty=T("i8", 2), axes=(1,))
    s32 = blk.p("reduce_sum", blk.p("cast", x8, ty=T("i32", 2, 3)), ty=T("i32"), axes=(0, 1))
    hs = blk.p("reduce_sum", h, ty=T("f32"), axes=(0,))  # f16 in, f32 accumulator: cast first
    hh = blk.p("reduce_sum", h, ty=T("f16"), axes=(0,))
    pr = blk.p("reduce_prod", x8, ty=T("i8"), axes=(0, 1))
    mx = blk.p("reduce_max", x8, ty=T("i8", 3), axes=(0,))
    mn = blk.p("reduce_min", x8, ty=T("i8", 2), axes=(1,))
    none = blk.p("reduce_sum", x8, ty=T("i8", 2, 3), axes=())
    xs = [[100, 100, 1], [-128, -1, 5]]
    got = both(program([x8, h], blk.done(blk.tup(s8, s32, hs, hh, pr, mx, mn, none))),
               torch.tensor(xs, dtype=torch.int8), torch.full((70,), 1000.0, dtype=torch.float16))
    assert got[0].tolist() == [wrap(201, "i8"), wrap(-124, "i8")]
    assert got[1].item() == 77
    assert got[2].dtype == torch.float32 and got[2].item() == 70000.0
    assert got[3].item() == math.inf  # 70000 does not fit f16
    assert got[4].item() == wrap(100 * 100 * 1 * -128 * -1 * 5, "i8")
    assert got[5].tolist() == [100, 100, 5] and got[6].tolist() == [1, -128]
    assert got[7].tolist() == xs


def test_empty_max_is_the_lowest_value():
    blk = Blk()
    xf, xi, xu, xl = (P("xf", T("f32", 3, 0)), P("xi", T("i32", 0)), P("xu", T("u64", 2, 0)),
                      P("xl", T("bool", 0)))
    a = blk.p("reduce_max", xf, ty=T("f32", 3), axes=(1,))
    b = blk.p("reduce_max", xi, ty=T("i32"), axes=(0,))
    c = blk.p("reduce_min", xi, ty=T("i32"), axes=(0,))
    d = blk.p("reduce_max", xu, ty=T("u64", 2), axes=(1,))
    e = blk.p("reduce_min", xu, ty=T("u64", 2), axes=(1,))
    f = blk.p("reduce_min", xf, ty=T("f32", 3), axes=(1,))
    g = blk.p("reduce_any", xl, ty=T("bool"), axes=(0,))
    k = blk.p("reduce_all", xl, ty=T("bool"), axes=(0,))
    s = blk.p("reduce_sum", xf, ty=T("f32", 3), axes=(1,))
    p = blk.p("reduce_prod", xi, ty=T("i32"), axes=(0,))
    got = both(program([xf, xi, xu, xl], blk.done(blk.tup(a, b, c, d, e, f, g, k, s, p))),
               torch.zeros(3, 0), torch.zeros(0, dtype=torch.int32), tensor(np.zeros((2, 0)).tolist(), "u64"),
               torch.zeros(0, dtype=torch.bool))
    assert got[0].tolist() == [-math.inf] * 3
    assert got[1].item() == -2**31 and got[2].item() == 2**31 - 1
    assert values(got[3]) == [0, 0] and values(got[4]) == [2**64 - 1] * 2
    assert got[5].tolist() == [math.inf] * 3
    assert got[6].item() is False and got[7].item() is True
    assert got[8].tolist() == [0.0] * 3 and got[9].item() == 1


def test_max_min_any_all():
    x = P("x", T("u64", 2, 3))
    f = P("f", T("f32", 2, 3))
    blk = Blk()
    mx = blk.p("reduce_max", x, ty=T("u64", 2), axes=(1,))
    mn = blk.p("reduce_min", x, ty=T("u64", 3), axes=(0,))
    pos = blk.p("gt", f, L(0.0, "f32"), ty=T("bool", 2, 3))
    an = blk.p("reduce_any", pos, ty=T("bool", 3), axes=(0,))
    al = blk.p("reduce_all", pos, ty=T("bool"), axes=(0, 1))
    fm = blk.p("reduce_max", f, ty=T("f32"), axes=(1, 0))
    xs = [[1, 2**63 + 5, 2**64 - 1], [7, 2**63, 3]]
    fs = [[-1.0, 2.0, 0.0], [-3.0, 5.0, 1.0]]
    got = both(program([x, f], blk.done(blk.tup(mx, mn, an, al, fm))), tensor(xs, "u64"), torch.tensor(fs))
    assert values(got[0]) == [2**64 - 1, 2**63]
    assert values(got[1]) == [1, 2**63, 3]
    assert got[2].tolist() == [False, True, True] and got[3].item() is False
    assert got[4].item() == 5.0


# ------------------------------------------------------------------- einsum


def test_einsum_matmul_and_accumulators():
    a, b = P("a", T("f32", 3, 4)), P("b", T("f32", 4, 5))
    h1, h2 = P("h1", T("f16", 2, 64)), P("h2", T("f16", 64, 2))
    i1, i2 = P("i1", T("i32", 2, 2)), P("i2", T("i32", 2, 2))
    blk = Blk()
    mm = blk.let(ir.Einsum("ik,kj->ij", (a, b), T("f32", 3, 5), "f32"))
    hf = blk.let(ir.Einsum("ik,kj->ij", (h1, h2), T("f32", 2, 2), "f32"))
    hh = blk.let(ir.Einsum("ik,kj->ij", (h1, h2), T("f16", 2, 2), "f32"))
    im = blk.let(ir.Einsum("ik,kj->ij", (i1, i2), T("i32", 2, 2), "i32"))
    tr = blk.let(ir.Einsum("ii->", (i1,), T("i64"), "i64"))
    three = blk.let(ir.Einsum("ij,jk,k->i", (a, b, blk.p("iota", ty=T("f32", 5))), T("f32", 3), "f32"))
    rng = np.random.default_rng(0)
    an, bn = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    hn1 = np.full((2, 64), 30.0, np.float16)
    hn2 = np.full((64, 2), 40.0, np.float16)
    ii = [[2**20, 3], [2**12, -1]]
    got = both(program([a, b, h1, h2, i1, i2], blk.done(blk.tup(mm, hf, hh, im, tr, three))),
               torch.from_numpy(an), torch.from_numpy(bn), torch.from_numpy(hn1), torch.from_numpy(hn2),
               torch.tensor(ii, dtype=torch.int32), torch.tensor(ii, dtype=torch.int32))
    np.testing.assert_allclose(got[0].numpy(), an @ bn, rtol=1e-5, atol=1e-5)
    assert got[1].dtype == torch.float32 and got[1].tolist() == [[76800.0] * 2] * 2
    assert got[2].dtype == torch.float16 and got[2].tolist() == [[math.inf] * 2] * 2
    want = [[wrap(sum(ii[i][k] * ii[k][j] for k in range(2)), "i32") for j in range(2)] for i in range(2)]
    assert got[3].tolist() == want
    assert got[4].dtype == torch.int64 and got[4].item() == 2**20 - 1
    np.testing.assert_allclose(got[5].numpy(), an @ bn @ np.arange(5.0, dtype=np.float32), rtol=1e-5)


# ------------------------------------------------------------- control flow


def test_if_takes_either_branch():
    c, x = P("c", T("bool")), P("x", T("f32", 3))
    then, orelse = Blk(), Blk()
    t = then.p("mul", x, L(2.0, "f32"), ty=T("f32", 3))
    e = orelse.p("neg", x, ty=T("f32", 3))
    blk = Blk()
    r = blk.let(ir.If(c, then.done(t), orelse.done(e), T("f32", 3)))
    lit_if = blk.let(ir.If(c, Blk().done(L(1, "i32")), Blk().done(L(2, "i32")), T("i32")))
    prog = program([c, x], blk.done(blk.tup(r, lit_if)))
    xs = torch.tensor([1.0, -2.0, 3.0])
    y, k = both(prog, True, xs)
    assert y.tolist() == [2.0, -4.0, 6.0] and k.item() == 1
    y, k = both(prog, torch.tensor(False), xs)
    assert y.tolist() == [-1.0, 2.0, -3.0] and k.item() == 2


def test_counted_loop_carries_values():
    x = P("x", T("i64"))
    acc, cnt, i = P("acc", T("i64")), P("cnt", T("i32")), P("i", T("i64"))
    body = Blk()
    sq = body.p("mul", i, i, ty=T("i64"))
    acc2 = body.p("add", acc, sq, ty=T("i64"))
    cnt2 = body.p("add", cnt, L(1, "i32"), ty=T("i32"))
    loop = ir.Loop(i, 2, 7, (acc, cnt), (x, L(0, "i32")), body.done(body.tup(acc2, cnt2)),
                   ir.TupleTy((T("i64"), T("i32"))))
    blk = Blk()
    r = blk.let(loop)
    s = blk.let(ir.GetItem(r, 0, T("i64")))
    # one carried value, the body returning it directly (not as a 1-tuple)
    j, v = P("j", T("i64")), P("v", T("i64"))
    b2 = Blk()
    v2 = b2.p("sub", v, j, ty=T("i64"))
    r2 = blk.let(ir.Loop(j, 0, 4, (v,), (s,), b2.done(v2), ir.TupleTy((T("i64"),))))
    got = both(program([x], blk.done(blk.tup(r, r2))), 100)
    (acc_out, cnt_out), (v_out,) = got
    assert acc_out.item() == 100 + sum(k * k for k in range(2, 7)) and cnt_out.item() == 5
    assert cnt_out.dtype == torch.int32
    assert v_out.item() == acc_out.item() - 6


def test_scan_stacks_yields_on_a_new_leading_axis():
    x = P("x", T("f32", 2))
    h, i = P("h", T("f32", 2)), P("i", T("i64"))
    body = Blk()
    fi = body.p("cast", i, ty=T("f32"))
    h2 = body.p("add", h, fi, ty=T("f32", 2))
    y = body.p("mul", h2, L(10.0, "f32"), ty=T("f32", 2))
    scan = ir.Loop(i, 1, 4, (h,), (x,), body.done(body.tup(h2, y)),
                   ir.TupleTy((T("f32", 2), T("f32", 3, 2))), yields=True)
    # a scan with no trips gives an empty stack; a scan carrying nothing
    k = P("k", T("i64"))
    b0 = Blk()
    b1 = Blk()
    z = b1.p("cast", k, ty=T("i32"))
    blk = Blk()
    r = blk.let(scan)
    empty = blk.let(ir.Loop(P("e", T("i64")), 5, 5, (h,), (x,), b0.done(b0.tup(h, h)),
                            ir.TupleTy((T("f32", 2), T("f32", 0, 2))), yields=True))
    only = blk.let(ir.Loop(k, 0, 3, (), (), b1.done(b1.tup(z)), ir.TupleTy((T("i32", 3),)), yields=True))
    got = both(program([x], blk.done(blk.tup(r, empty, only))), torch.tensor([0.0, 1.0]))
    (last, ys), (same, none), (ks,) = got
    assert last.tolist() == [6.0, 7.0]
    assert ys.tolist() == [[10.0, 20.0], [30.0, 40.0], [60.0, 70.0]]
    assert same.tolist() == [0.0, 1.0] and none.shape == (0, 2) and none.dtype == torch.float32
    assert ks.tolist() == [0, 1, 2] and ks.dtype == torch.int32


def test_while_loop():
    limit = P("limit", T("i32"))
    v, n = P("v", T("i32")), P("n", T("i32"))
    cond = Blk()
    c = cond.p("lt", v, limit, ty=T("bool"))
    body = Blk()
    v2 = body.p("mul", v, L(3, "i32"), ty=T("i32"))
    n2 = body.p("add", n, L(1, "i32"), ty=T("i32"))
    w = ir.While((v, n), (L(1, "i32"), L(0, "i32")), cond.done(c), body.done(body.tup(v2, n2)),
                 ir.TupleTy((T("i32"), T("i32"))))
    blk = Blk()
    r = blk.let(w)
    prog = program([limit], blk.done(r))
    v_out, n_out = both(prog, 100)
    assert (v_out.item(), n_out.item()) == (243, 5)
    v_out, n_out = both(prog, torch.tensor(0, dtype=torch.int32))
    assert (v_out.item(), n_out.item()) == (1, 0)


def test_calls_tuples_and_get_item():
    # an op returning a tuple, called twice; the entry returns a nested tuple
    a, b = P("a", T("f32", 2)), P("b", T("f32", 2))
    ob = Blk()
    s = ob.p("add", a, b, ty=T("f32", 2))
    d = ob.p("sub", a, b, ty=T("f32", 2))
    op = ir.Func("sumdiff", "op", (a, b), ob.done(ob.tup(s, d)), source="sumdiff<N=2>")
    x = P("x", T("f32", 2))
    blk = Blk()
    tt = ir.TupleTy((T("f32", 2), T("f32", 2)))
    r1 = blk.let(ir.Call("sumdiff", (x, x), tt))
    s1 = blk.let(ir.GetItem(r1, 0, T("f32", 2)))
    r2 = blk.let(ir.Call("sumdiff", (s1, x), tt))
    alias = blk.let(r2)  # a binding of a plain variable
    got = both(program([x], blk.done(blk.tup(s1, alias)), op), torch.tensor([1.0, 2.0]))
    assert got[0].tolist() == [2.0, 4.0]
    assert [t.tolist() for t in got[1]] == [[3.0, 6.0], [1.0, 2.0]]


def test_unsigned_inputs_and_outputs_keep_their_dtypes():
    for d, vs in (("u16", [0, 65535, 3]), ("u32", [0, 2**32 - 1, 3]), ("u64", [0, 2**64 - 1, 3])):
        x = P("x", T(d, 3))
        blk = Blk()
        y = blk.p("add", x, L(1, d), ty=T(d, 3))
        z = blk.p("shl", y, L(BITS[d] - 1, d), ty=T(d, 3))
        (yo, zo) = both(program([x], blk.done(blk.tup(y, z))), tensor(vs, d))
        assert yo.dtype == TORCH[d] and values(yo) == [wrap(v + 1, d) for v in vs]
        assert values(zo) == [wrap((v + 1) << (BITS[d] - 1), d) for v in vs]


def test_literals_of_every_dtype():
    blk = Blk()
    lits = [L(v, d) for d, v in (("bool", True), ("i8", -128), ("u8", 255), ("u16", 65535),
                                 ("u32", 2**32 - 1), ("u64", 2**64 - 1), ("i64", -2**63),
                                 ("f16", 0.1), ("bf16", 1.5), ("f32", math.inf), ("f64", -0.0))]
    r = blk.tup(*lits)
    got = both(program([], blk.done(r)))
    assert [values(t)[0] for t in got[:7]] == [True, -128, 255, 65535, 2**32 - 1, 2**64 - 1, -2**63]
    assert got[7].dtype == torch.float16 and got[9].item() == math.inf
    assert [t.dtype for t in got] == [TORCH[d] for d in ("bool", "i8", "u8", "u16", "u32", "u64", "i64",
                                                           "f16", "bf16", "f32", "f64")]
    nan = Blk()
    (out,) = both(program([], nan.done(L(math.nan, "f32"))))
    assert math.isnan(out.item())


def test_inputs_are_checked_and_numbers_converted():
    x = P("x", T("i32", 2))
    s = P("s", T("f64"))
    blk = Blk()
    c = blk.p("cast", x, ty=T("f64", 2))
    r = blk.p("mul", c, s, ty=T("f64", 2))
    prog = program([x, s], blk.done(r))
    (out,) = both(prog, [1, 2], 0.5)  # a list and a Python number take the parameter dtypes
    assert out.tolist() == [0.5, 1.0]
    with pytest.raises(TypeError):
        run(prog, torch.tensor([1.0, 2.0]), 0.5)
    with pytest.raises(ValueError):
        run(prog, torch.tensor([1, 2, 3], dtype=torch.int32), 0.5)
    with pytest.raises(TypeError):
        run(prog, torch.tensor([1, 2], dtype=torch.int32))


def test_comprehensions_must_be_lowered_first():
    x = P("x", T("f32", 2))
    blk = Blk()
    y = blk.let(ir.Comprehension((("i", 2),), ir.IxAccess(x, ("i",), "f32"), T("f32", 2)))
    with pytest.raises(ValueError, match="lower-index-notation"):
        run(program([x], blk.done(y)), torch.zeros(2))


@pytest.mark.parametrize("dtype", ["u8", "u16", "u32", "u64", "i8", "i32"])
def test_wrapped_values_feed_later_ops(dtype):
    """Every op stays in its dtype: an overflow is visible to the division, shift, comparison,
    cast and reduction after it (not only at the output boundary)."""
    rng = random.Random(BITS[dtype])
    n = 12
    xs = edge_values(dtype, n, rng)
    ys = list(reversed(edge_values(dtype, n, rng)))
    x, y = P("x", T(dtype, n)), P("y", T(dtype, n))
    blk = Blk()
    ty = T(dtype, n)
    outs = []
    for op in ("add", "sub", "mul"):
        s = blk.p(op, x, y, ty=ty)
        outs += [blk.p("div", s, L(3, dtype), ty=ty), blk.p("shr", s, L(1, dtype), ty=ty),
                 blk.p("gt", s, x, ty=T("bool", n)), blk.p("cast", s, ty=T("f64", n)),
                 blk.p("reduce_max", s, ty=T(dtype), axes=(0,)),
                 blk.p("cumsum", s, ty=ty, axis=0)]
    for op in ("neg", "not"):
        s = blk.p(op, x, ty=ty)
        outs += [blk.p("div", s, L(3, dtype), ty=ty), blk.p("lt", s, y, ty=T("bool", n))]
    got = list(both(program([x, y], blk.done(blk.tup(*outs))), tensor(xs, dtype), tensor(ys, dtype)))
    for op in ("add", "sub", "mul"):
        s = [wrap(INT_OPS[op](a, b), dtype) for a, b in zip(xs, ys)]
        d, sh, gt, f, mx, cs = (got.pop(0) for _ in range(6))
        assert values(d) == [wrap(_tdiv(v, 3), dtype) for v in s], op
        assert values(sh) == [v >> 1 for v in s], op
        assert values(gt) == [v > a for v, a in zip(s, xs)], op
        assert values(f) == [float(v) for v in s], op
        assert values(mx) == [max(s)], op
        assert values(cs) == [wrap(v, dtype) for v in itertools.accumulate(s)], op
    for op, fn in (("neg", lambda v: -v), ("not", lambda v: ~v)):
        s = [wrap(fn(a), dtype) for a in xs]
        d, lt = got.pop(0), got.pop(0)
        assert values(d) == [wrap(_tdiv(v, 3), dtype) for v in s], op
        assert values(lt) == [v < b for v, b in zip(s, ys)], op
