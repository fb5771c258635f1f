"""emit-onnx on hand-built tensor-core IR: the rows where onnxruntime's kernels differ from
the language (integer division, remainders, shifts, casts, exact integer reductions,
empty reductions, half dtypes), the model's layout, and `linnet onnx` on the command line.

Each program is exported, checked by `onnx.checker` (inside `emit_onnx`), run by
onnxruntime's CPU provider and compared with the PyTorch interpreter bit for bit on
integers, and with values computed here.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from irbuild import Blk, T  # noqa: E402
from linnet.cli.main import main as cli_main  # noqa: E402
from linnet.emit import onnx_ops as ops  # noqa: E402
from linnet.emit.onnx import OPSET, emit_onnx  # noqa: E402
from linnet.ir import tensor as ir  # noqa: E402
from linnet.torch.interpreter import run as interpret  # noqa: E402

NP = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "f32": np.float32, "f64": np.float64}
INTS = ("i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64")
BITS = {"i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def limits(d: str) -> tuple[int, int]:
    bits = BITS[d]
    if d.startswith("i"):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def wrap(v: int, d: str) -> int:
    lo, hi = limits(d)
    return (v - lo) % (hi - lo + 1) + lo


def entry(params: list[ir.Var], body: ir.Block, *others: ir.Func) -> ir.Program:
    return ir.Program((ir.Func("main", "entry", tuple(params), body),) + others, "main")


def run_onnx(program: ir.Program, *inputs: np.ndarray) -> list[np.ndarray]:
    model = emit_onnx(program)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def run_both(program: ir.Program, *inputs: np.ndarray) -> list[np.ndarray]:
    """The ONNX results, after checking they equal the interpreter's bit for bit (NaNs
    equal), with the declared dtypes."""
    got = run_onnx(program, *inputs)
    want = interpret(program, *(torch.from_numpy(np.array(x)) for x in inputs))
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        w = w.numpy() if w.dtype != torch.bfloat16 else w.to(torch.float32).numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, f"result {k}: {g.dtype}{g.shape}"
        assert np.array_equal(g, w, equal_nan=g.dtype.kind == "f"), f"result {k}: {g} vs {w}"
    return got


def binary_program(op: str, d: str, n: int, out: str | None = None) -> ir.Program:
    a, b = ir.Var("a", T(d, n)), ir.Var("b", T(d, n))
    blk = Blk()
    return entry([a, b], blk.done(blk.p(op, a, b, ty=T(out or d, n))))


# --------------------------------------------------------------- integers

@pytest.mark.parametrize("d", INTS)
def test_integer_division_and_remainder_truncate_and_wrap(d):
    lo, hi = limits(d)
    pairs = [(7, 2), (hi, 3), (lo, 7), (hi, hi), (lo, 1), (0, 5), (1, hi)]
    if d.startswith("i"):
        pairs += [(-7, 2), (7, -2), (-7, -2), (lo, -1), (hi, -1), (lo, lo), (-1, lo)]
    a = np.array([p[0] for p in pairs], NP[d])
    b = np.array([p[1] for p in pairs], NP[d])
    q, = run_both(binary_program("div", d, len(pairs)), a, b)
    r, = run_both(binary_program("mod", d, len(pairs)), a, b)
    for (x, y), qk, rk in zip(pairs, q, r):
        t = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        assert int(qk) == wrap(t, d), (x, y)
        assert int(rk) == x - t * y, (x, y)


@pytest.mark.parametrize("d", INTS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "min", "max"])
def test_integer_arithmetic_wraps(d, op):
    lo, hi = limits(d)
    pairs = list(itertools.product([lo, lo + 1, -1 if lo else 1, 0, 3, hi - 1, hi], repeat=2))
    a = np.array([p[0] for p in pairs], NP[d])
    b = np.array([p[1] for p in pairs], NP[d])
    got, = run_both(binary_program(op, d, len(pairs)), a, b)
    fn = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
          "min": min, "max": max}[op]
    assert [int(v) for v in got] == [wrap(fn(x, y), d) for x, y in pairs]


@pytest.mark.parametrize("d", INTS)
def test_negation_and_abs_wrap(d):
    lo, hi = limits(d)
    x = ir.Var("x", T(d, 4))
    blk = Blk()
    neg, ab = blk.p("neg", x, ty=T(d, 4)), blk.p("abs", x, ty=T(d, 4))
    got = run_both(entry([x], blk.done(blk.tup(neg, ab))), np.array([lo, hi, 0, 5], NP[d]))
    assert [int(v) for v in got[0]] == [wrap(-v, d) for v in (lo, hi, 0, 5)]
    assert [int(v) for v in got[1]] == [wrap(abs(v), d) if d[0] == "i" else v
                                        for v in (lo, hi, 0, 5)]


@pytest.mark.parametrize("d", INTS)
def test_shifts_by_every_count_including_the_width_and_more(d):
    bits = BITS[d]
    lo, hi = limits(d)
    values = [1, hi, lo if lo else hi - 5, -3 if lo else 6, 0x35]
    counts = list(range(bits + 3))
    pairs = [(v, c) for v in values for c in counts]
    a = np.array([p[0] for p in pairs], NP[d])
    b = np.array([p[1] for p in pairs], NP[d])
    left, = run_both(binary_program("shl", d, len(pairs)), a, b)
    right, = run_both(binary_program("shr", d, len(pairs)), a, b)
    for (v, c), s, r in zip(pairs, left, right):
        assert int(s) == (wrap(v << c, d) if c < bits else 0), (v, c)
        assert int(r) == (v >> c if c < bits else (-1 if v < 0 else 0)), (v, c)


def cast_program(src: str, dst: str, n: int) -> ir.Program:
    x = ir.Var("x", T(src, n))
    blk = Blk()
    return entry([x], blk.done(blk.p("cast", x, ty=T(dst, n))))


def test_float_to_int_casts_truncate_toward_zero():
    x = np.array([-2.75, -0.5, 0.5, 2.75, 100.9, -100.9], np.float32)
    for d in ("i8", "i16", "i32", "i64"):
        got, = run_both(cast_program("f32", d, 6), x)
        assert got.tolist() == [-2, 0, 0, 2, 100, -100]
    for src in ("f16", "f64"):
        got, = run_both(cast_program(src, "u8", 3), np.array([0.9, 200.5, 255.0], NP[src]))
        assert got.tolist() == [0, 200, 255]


def test_integer_casts_keep_the_low_bits_and_bool_casts_test_nonzero():
    big = np.array([300, -129, -1, 1 << 40, (1 << 63) - 1], np.int64)
    assert run_both(cast_program("i64", "i8", 5), big)[0].tolist() == [44, 127, -1, 0, -1]
    assert run_both(cast_program("i64", "u16", 5), big)[0].tolist() == [300, 65407, 65535, 0,
                                                                         65535]
    assert run_both(cast_program("i64", "u64", 5), big)[0].tolist()[2] == (1 << 64) - 1
    floats = np.array([math.nan, 0.0, -0.0, 2.0], np.float32)
    assert run_both(cast_program("f32", "bool", 4), floats)[0].tolist() == [True, False,
                                                                           False, True]


@pytest.mark.parametrize("src, dst", [(s, t) for s in INTS + ("bool", "f16", "f32", "f64")
                                      for t in INTS + ("bool", "f16", "f32", "f64")])
def test_every_cast_matches_the_interpreter(src, dst):
    values = {"bool": [True, False, True]}.get(src, [0, 1, 100])
    run_both(cast_program(src, dst, 3), np.array(values, NP[src]))


@pytest.mark.parametrize("other", INTS + ("bool", "f16", "f32", "f64"))
def test_casts_to_and_from_bf16(other):
    """bf16 both ways (fed and read through f32, which holds every bf16 value)."""
    x = ir.Var("x", T(other, 4))
    blk = Blk()
    there = blk.p("cast", x, ty=T("bf16", 4))
    back = blk.p("cast", there, ty=T(other, 4))
    seen = blk.p("cast", there, ty=T("f32", 4))
    values = [True, False, True, True] if other == "bool" else [0, 1, 100, 3]
    got = run_both(entry([x], blk.done(blk.tup(back, seen))), np.array(values, NP[other]))
    assert got[1].tolist() == [float(v) for v in values]
    assert got[0].tolist() == values


ALL = INTS + ("bool", "f16", "bf16", "f32", "f64")


def boundary(d: str) -> str:
    """The dtype a value of `d` is fed and read as (bf16 through f32: no NumPy bf16)."""
    return "f32" if d == "bf16" else d


@pytest.mark.parametrize("d", ALL)
def test_data_movement_selects_and_comparisons_in_every_dtype(d):
    """Rows whose onnxruntime kernels lack some dtypes (Where, Expand, Less, Min, CumSum,
    ReduceMax), and the shape rows, over every dtype."""
    e = boundary(d)
    x, y, c = ir.Var("x", T(e, 3, 4)), ir.Var("y", T(e, 4)), ir.Var("c", T("bool", 3, 4))
    blk = Blk()
    a = blk.p("cast", x, ty=T(d, 3, 4)) if e != d else x
    b = blk.p("cast", y, ty=T(d, 4)) if e != d else y
    wide = blk.p("broadcast_to", b, ty=T(d, 3, 4))
    picked = blk.p("select", c, a, wide, ty=T(d, 3, 4))
    moved = blk.p("permute", blk.p("reshape", picked, ty=T(d, 2, 6)), ty=T(d, 6, 2), perm=(1, 0))
    joined = blk.p("concat", moved, moved, ty=T(d, 12, 2), axis=0)
    part = blk.p("index", joined, ty=T(d, 4), items=(("slice", 1, 11, 3), ("at", 1)))
    diag = blk.p("diagonal", a, ty=T(d, 3), axes=(0, 1))
    where = blk.p("fill", blk.p("index", a, ty=T(d), items=(("at", 2), ("at", 3))),
                  ty=T(d, 2, 2))
    results = [picked, moved, part, diag, where]
    results += [blk.p(op, a, wide, ty=T("bool", 3, 4)) for op in ("eq", "ne", "lt", "ge")]
    if d != "bool":
        results += [blk.p(op, a, wide, ty=T(d, 3, 4)) for op in ("min", "max")]
        results.append(blk.p("cumsum", a, ty=T(d, 3, 4), axis=1))
        results += [blk.p(f"reduce_{op}", a, ty=T(d, 4), axes=(0,)) for op in ("max", "min")]
    results = [blk.p("cast", r, ty=T("f32", *r.type.shape)) if r.type.dtype == "bf16" else r
               for r in results]
    rng = np.random.default_rng(7)
    raw = rng.integers(0, 50, size=(3, 4)) if d != "bool" else rng.integers(0, 2, size=(3, 4))
    xs = raw.astype(NP[e])
    ys = np.array([3, 0, 49, 10]).astype(NP[e])
    got = run_both(entry([x, y, c], blk.done(blk.tup(*results))), xs, ys,
                   rng.integers(0, 2, size=(3, 4)).astype(bool))
    assert got[0].tolist() == np.where(got[0] == xs, xs, np.broadcast_to(ys, (3, 4))).tolist()
    assert got[3].tolist() == [xs[0, 0], xs[1, 1], xs[2, 2]]
    assert got[2].tolist() == np.concatenate([got[1], got[1]])[1:11:3, 1].tolist()


@pytest.mark.parametrize("d", ("i8", "u16", "u64", "i64", "f16", "f64"))
def test_iota_counts_in_its_dtype(d):
    blk = Blk()
    got, = run_both(entry([], blk.done(blk.p("iota", ty=T(d, 5)))))
    assert got.tolist() == [0, 1, 2, 3, 4] and got.dtype == NP[d]


# ------------------------------------------------------------- reductions

def reduce_program(op: str, d: str, shape: tuple[int, ...], axes: tuple[int, ...],
                   out: str | None = None) -> ir.Program:
    x = ir.Var("x", T(d, *shape))
    kept = tuple(n for k, n in enumerate(shape) if k not in axes)
    blk = Blk()
    return entry([x], blk.done(blk.p(f"reduce_{op}", x, ty=T(out or d, *kept), axes=axes)))


@pytest.mark.parametrize("d", ("i8", "u16", "i32", "u32", "i64", "u64", "f16", "f32"))
def test_empty_reductions_give_their_identities(d):
    x = np.zeros((3, 0), NP[d])
    lo, hi = (-math.inf, math.inf) if d.startswith("f") else limits(d)
    for op, want in (("sum", 0), ("prod", 1), ("max", lo), ("min", hi)):
        got, = run_both(reduce_program(op, d, (3, 0), (1,)), x)
        assert got.tolist() == [want] * 3, op
    flags = np.zeros((0, 2), np.bool_)
    assert run_both(reduce_program("any", "bool", (0, 2), (0,)), flags)[0].tolist() == [False] * 2
    assert run_both(reduce_program("all", "bool", (0, 2), (0,)), flags)[0].tolist() == [True] * 2


def test_integer_sums_and_products_are_exact_and_wrap():
    # onnxruntime's own ReduceSum/ReduceProd pass integers through floating point
    x = np.array([[(1 << 62) + 1, (1 << 62) + 1, 1, 5], [(1 << 53) + 1, 2, 0, -1]], np.int64)
    total, = run_both(reduce_program("sum", "i64", (2, 4), (1,)), x)
    assert total.tolist() == [wrap(sum(map(int, row)), "i64") for row in x]
    p = np.array([[1 << 40, 1 << 30, 3], [(1 << 31) + 1, (1 << 31) - 1, 7]], np.int64)
    prod, = run_both(reduce_program("prod", "i64", (2, 3), (1,)), p)
    assert prod.tolist() == [wrap(math.prod(map(int, row)), "i64") for row in p]
    small = np.array([[120, 100, 3], [7, 200, 1]], np.uint8)
    assert run_both(reduce_program("sum", "u8", (2, 3), (0, 1)), small)[0] == (431 % 256)


@pytest.mark.parametrize("d", INTS)
def test_integer_reductions_over_several_axes_wrap_in_every_dtype(d):
    lo, hi = limits(d)
    rng = np.random.default_rng(BITS[d])
    x = rng.integers(lo, hi, size=(3, 5, 4), endpoint=True, dtype=NP[d])
    for op, fn in (("sum", sum), ("prod", math.prod), ("max", max), ("min", min)):
        got, = run_both(reduce_program(op, d, (3, 5, 4), (0, 2)), x)
        want = [wrap(fn(int(v) for v in x[:, k, :].reshape(-1)), d) for k in range(5)]
        assert [int(v) for v in got] == want, op


def test_u64_extremes_and_nan_propagating_float_extremes():
    x = np.array([[1 << 63, 5, (1 << 64) - 1], [3, (1 << 63) - 1, 1 << 63]], np.uint64)
    assert run_both(reduce_program("max", "u64", (2, 3), (1,)), x)[0].tolist() == [
        (1 << 64) - 1, 1 << 63]
    assert run_both(reduce_program("min", "u64", (2, 3), (1,)), x)[0].tolist() == [5, 3]
    f = np.array([[1.0, math.nan, 2.0], [3.0, 4.0, 5.0]], np.float32)
    top, = run_both(reduce_program("max", "f32", (2, 3), (1,)), f)
    assert math.isnan(top[0]) and top[1] == 5.0


# -------------------------------------------------------------- half dtypes

def test_half_sums_and_scans_accumulate_in_f32():
    # 4096 ones: an f16 accumulator stops at 2048 (2048 + 1 rounds back to 2048)
    x = np.ones(4096, np.float16)
    assert run_both(reduce_program("sum", "f16", (4096,), (0,)), x)[0] == 4096
    y = ir.Var("x", T("f16", 4096))
    blk = Blk()
    scan = entry([y], blk.done(blk.p("cumsum", y, ty=T("f16", 4096), axis=0)))
    assert run_both(scan, x)[0][-1] == 4096


def test_bf16_arithmetic_runs_in_f32_and_rounds_once():
    # no bf16 Add or ReduceSum kernel: both run in f32 and round to bf16 once. Summed in
    # bf16, 512 + 2 would round back to 512 (bf16 steps by 4 there) and the total stay 512.
    x = ir.Var("x", T("f32", 3))
    blk = Blk()
    h = blk.p("cast", x, ty=T("bf16", 3))
    twice = blk.p("add", h, h, ty=T("bf16", 3))
    total = blk.p("reduce_sum", twice, ty=T("bf16"), axes=(0,))
    out = blk.p("cast", total, ty=T("f32"))
    got, = run_both(entry([x], blk.done(out)), np.array([256.0, 1.0, 1.0], np.float32))
    assert got == 516.0


def test_integer_einsums_are_exact():
    a, b = ir.Var("a", T("i64", 2, 2)), ir.Var("b", T("i64", 2, 2))
    blk = Blk()
    mm = blk.let(ir.Einsum("ij,jk->ik", (a, b), T("i64", 2, 2), "i64"))
    tr = blk.let(ir.Einsum("ii->", (a,), T("i64"), "i64"))
    x = np.array([[(1 << 62) + 3, 2], [5, -7]], np.int64)
    y = np.array([[4, 1 << 61], [(1 << 53) + 1, 3]], np.int64)
    got = run_both(entry([a, b], blk.done(blk.tup(mm, tr))), x, y)
    want = [[wrap(sum(int(x[i, j]) * int(y[j, k]) for j in range(2)), "i64") for k in range(2)]
            for i in range(2)]
    assert got[0].tolist() == want
    assert int(got[1]) == (1 << 62) + 3 - 7


# ------------------------------------------------------------- control flow

def test_a_scan_of_no_trips_is_an_empty_stack():
    x = ir.Var("x", T("f32", 3))
    h, i, h2 = ir.Var("h", T("f32", 3)), ir.Var("i", T("i64")), ir.Var("h2", T("f32", 3))
    body = ir.Block((ir.Bind(h2, ir.Prim("add", (h, x), T("f32", 3))),
                     ir.Bind(ir.Var("r", ir.TupleTy((T("f32", 3), T("f32", 3)))),
                             ir.MakeTuple((h2, h2), ir.TupleTy((T("f32", 3), T("f32", 3)))))),
                    ir.Var("r", ir.TupleTy((T("f32", 3), T("f32", 3)))))
    for hi, trips in ((2, 0), (5, 3)):
        blk = Blk()
        loop = blk.let(ir.Loop(i, 2, hi, (h,), (x,), body,
                               ir.TupleTy((T("f32", 3), T("f32", trips, 3))), yields=True))
        got = run_both(entry([x], blk.done(loop)), np.array([1, 2, 3], np.float32))
        assert got[1].shape == (trips, 3)
        assert got[0].tolist() == [(trips + 1) * v for v in (1, 2, 3)]


# ----------------------------------------------------------- the model

def test_model_layout_opset_names_and_doc_strings():
    x = ir.Var("user_tensor\n<evil>", T("f32", 2, 3))
    blk = Blk()
    y = blk.p("exp", x, ty=T("f32", 2, 3))
    model = emit_onnx(entry([x], blk.done(blk.tup(y, x))))
    assert OPSET == 21 and model.opset_import[0].version == OPSET
    assert model.ir_version == 10  # onnxruntime 1.20 and later
    graph = model.graph
    assert [i.name for i in graph.input] == ["in0"]
    assert "user_tensor" in graph.input[0].doc_string
    assert [o.name for o in graph.output] == ["result_0", "result_1"]
    for o in graph.output:
        t = o.type.tensor_type
        assert t.elem_type == onnx.TensorProto.FLOAT
        assert [d.dim_value for d in t.shape.dim] == [2, 3]
    names = {n for node in graph.node for n in [*node.input, *node.output, node.name]}
    names |= {i.name for i in graph.initializer}
    assert all(n.isascii() and n.replace("_", "").isalnum() for n in names if n), names


def test_work_dtypes_are_one_table():
    assert ops.work("Add", "bf16") == "f32" and ops.work("Add", "i8") == "i8"
    assert ops.work("Where", "bool") == "u8" and ops.work("CumSum", "u16") == "i32"
    assert ops.work("Transpose", "bf16") == "bf16"


# ---------------------------------------------------------------- the CLI

def test_cli_prints_the_model_text(capsys):
    assert cli_main(["onnx", "examples/relu.linnet"]) == 0
    out = capsys.readouterr().out
    assert "ir_version" in out and "float[5000] x" in out and "result = Identity" in out


def test_cli_writes_a_loadable_binary(tmp_path, capsys):
    path = tmp_path / "softmax.onnx"
    assert cli_main(["onnx", "examples/softmax.linnet", "--entry", "main", "-o",
                     str(path)]) == 0
    assert capsys.readouterr().out == ""
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    session = ort.InferenceSession(path.read_bytes(), providers=["CPUExecutionProvider"])
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape) / 7
    got, = session.run(None, {"x": x})
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(axis=-1, keepdims=True), rtol=1e-5, atol=1e-6)
