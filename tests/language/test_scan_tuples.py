"""Scans that yield tuples (docs/language.md, "Statements and expressions"):
`let (a, b) = for ... { yield (x, y) }`.

The tensor IR's `Loop` stacks `yields` values, one stack each. These tests build such
scans by hand and run them through every printer and the interpreter (the corpus entries
`85_scan_tuples`, `86_scan_value_forms` and `87_kernel_scans` run them from source, and
`tests/grad/scans.linnet` differentiates them); they also check the checker's types and
diagnostics, the valued `for` of `var`, assignment and `return`, `drop-dead-carries`,
`differentiate`'s stash, and `lower-kernel-scans`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from irbuild import Blk, L, T  # noqa: E402
from linnet.diagnostics import CompileError  # noqa: E402
from linnet.emit.jax import emit_jax  # noqa: E402
from linnet.emit.onnx import emit_onnx  # noqa: E402
from linnet.emit.stablehlo import emit_stablehlo  # noqa: E402
from linnet.emit.torch import emit_torch  # noqa: E402
from linnet.check.frontend import check_program  # noqa: E402
from linnet.ir import tensor as ir  # noqa: E402
from linnet.ir.verify import verify  # noqa: E402
from linnet.ir.walk import all_binds  # noqa: E402
from linnet.passes.middle.drop_dead_carries import drop_dead_carries  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402
from linnet.fuzz.stablehlo_run import run_stablehlo  # noqa: E402
from linnet.torch.interpreter import run as interpret  # noqa: E402
from linnet.torch.runtime import import_generated  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


# ------------------------------------------------------------ a scan by hand

def three_stacks(trips: int) -> ir.Program:
    """`h = x; for i in 2..2+trips { h = h + x; yield (h, sum(h), cast<i32>(i)) }`, and
    the final h: a carried value and three stacks of three shapes and two dtypes."""
    x, h, i = ir.Var("x", T("f32", 3)), ir.Var("h", T("f32", 3)), ir.Var("i", T("i64"))
    body = Blk()
    h2 = body.p("add", h, x, ty=T("f32", 3))
    s = body.p("reduce_sum", h2, ty=T("f32"), axes=(0,))
    c = body.p("cast", i, ty=T("i32"))
    ty = ir.TupleTy((T("f32", 3), T("f32", trips, 3), T("f32", trips), T("i32", trips)))
    blk = Blk()
    scan = blk.let(ir.Loop(i, 2, 2 + trips, (h,), (x,), body.done(body.tup(h2, h2, s, c)),
                           ty, yields=3))
    items = [blk.let(ir.GetItem(scan, k, t)) for k, t in enumerate(ty.items)]
    return ir.Program((ir.Func("main", "entry", (x,), blk.done(blk.tup(*items))),), "main")


def expected(trips: int, x: np.ndarray) -> list[np.ndarray]:
    rows = np.stack([x * (k + 2) for k in range(trips)]) if trips else np.zeros((0, 3))
    return [x * (trips + 1), rows, rows.sum(axis=1), np.arange(2, 2 + trips)]


def _run_torch(program, x):
    return import_generated(emit_torch(program), "scan_tuples").main(torch.from_numpy(x))


def _run_jax(program, x):
    return import_generated(emit_jax(program), "scan_tuples", "jax").main(x)


def _run_onnx(program, x):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(emit_onnx(program).SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, {session.get_inputs()[0].name: x})


RUNNERS = {
    "interpreter": lambda program, x: interpret(program, torch.from_numpy(x)),
    "torch": _run_torch,
    "jax": _run_jax,
    "onnx": _run_onnx,
    "stablehlo": lambda program, x: run_stablehlo(emit_stablehlo(program), x),
}


@pytest.mark.parametrize("trips", [0, 1, 3])
@pytest.mark.parametrize("backend", sorted(RUNNERS))
def test_every_backend_stacks_each_yield(backend: str, trips: int) -> None:
    program = three_stacks(trips)
    assert verify(program, "tensor-core") == []
    x = np.array([1.0, -2.0, 0.5], np.float32)
    got = [np.asarray(g) for g in RUNNERS[backend](program, x)]
    want = expected(trips, x)
    assert len(got) == 4
    for g, w, dtype in zip(got, want, ("float32", "float32", "float32", "int32")):
        assert g.dtype == np.dtype(dtype) and g.shape == w.shape, (g.dtype, g.shape)
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_the_verifier_counts_the_yields() -> None:
    program = three_stacks(2)
    (scan,) = [b for b in all_binds(program.func("main").body) if isinstance(b.expr, ir.Loop)]
    wrong = ir.Loop(scan.expr.index, 2, 4, scan.expr.carried, scan.expr.init, scan.expr.body,
                    scan.expr.type, yields=2)
    body = program.func("main").body
    binds = tuple(ir.Bind(b.var, wrong) if b is scan else b for b in body.binds)
    broken = ir.Program((ir.Func("main", "entry", program.func("main").params,
                                 ir.Block(binds, body.result)),), "main")
    problems = verify(broken, "tensor-core")
    assert any("2 yield(s)" in p for p in problems), problems


def test_dead_carries_leave_and_every_yield_stays() -> None:
    """A carry nothing reads is dropped; the stacks after it are renumbered, all kept."""
    x, h, i = ir.Var("x", T("f32", 2)), ir.Var("h", T("f32", 2)), ir.Var("i", T("i64"))
    body = Blk()
    h2 = body.p("add", h, x, ty=T("f32", 2))
    y = body.p("mul", x, L(2.0, "f32"), ty=T("f32", 2))
    c = body.p("cast", i, ty=T("i32"))
    ty = ir.TupleTy((T("f32", 2), T("f32", 3, 2), T("i32", 3)))
    blk = Blk()
    scan = blk.let(ir.Loop(i, 0, 3, (h,), (x,), body.done(body.tup(h2, y, c)), ty, yields=2))
    ys = blk.let(ir.GetItem(scan, 1, ty.items[1]))
    cs = blk.let(ir.GetItem(scan, 2, ty.items[2]))
    program = ir.Program((ir.Func("main", "entry", (x,), blk.done(blk.tup(ys, cs))),), "main")
    lean = drop_dead_carries(program)
    assert verify(lean, "tensor-core") == []
    (loop,) = [b.expr for b in all_binds(lean.func("main").body) if isinstance(b.expr, ir.Loop)]
    assert loop.carried == () and loop.yields == 2
    got = interpret(lean, torch.tensor([1.0, 3.0]))
    assert got[0].tolist() == [[2.0, 6.0]] * 3 and got[1].tolist() == [0, 1, 2]


# ------------------------------------------------------------ from source

LOOP = """module stash

entry main(x: Tensor[3; f64], n: i64) -> f64 {
    var h = x
    var count = n
    var s: f64 = 0.0
    let (hs, ks) = for t in 0..4 {
        h = tanh(h * 0.5 + x)
        count = count + 1
        s = s + sum[i] h[i]
        yield (h * x, count)
    }
    return s + (sum[t, i] hs[t, i]) + cast<f64>(sum[j] ks[j])
}
"""


SOURCE = """module scan_sources

fn pair<N: Dim>(v: Tensor[N; f32]) -> (f32, Tensor[N; f32]) {
    return (sum[i] v[i], v * 2.0)
}

fn stacked<N: Dim>(x: Tensor[N; f32]) -> (Tensor[3; f32], Tensor[3, N; f32]) {
    return for k in 0..3 {
        yield pair(x * cast<f32>(k))
    }
}

entry main(x: Tensor[2; f32]) -> (Tensor[3; f32], Tensor[3, 2; f32], Tensor[2, 2; f32], Tensor[2; i64], Tensor[2; f32]) {
    let (s, v) = stacked(x)
    var p = for k in 0..2 {
        yield (x, k)
    }
    p = for k in 0..2 {
        let (rows, ks) = p
        yield (rows[k, 0:2:1] + 1.0, ks[k] * 3)
    }
    let (rows, ks) = p
    var q = (x, 1.5)
    q = (x * 2.0, 2.5)
    let (qx, qs) = q
    return (s, v, rows, ks, qx * cast<f32>(qs))
}
"""


def test_tuple_scans_from_source_with_every_valued_for_form() -> None:
    """`return for`, `var p = for`, `p = for` over a tuple var, and a tuple var assigned a
    tuple (which elaborate used to crash on, taking the dtype of a tuple)."""
    out = compile_source(SOURCE, target="torch", numerics="exact")
    main = import_generated(out.text, "scan_sources").main
    s, v, rows, ks, qx = main(torch.tensor([1.0, -2.0]))
    assert s.tolist() == [0.0, -1.0, -2.0] and v.tolist() == [[0, 0], [2, -4], [4, -8]]
    assert rows.tolist() == [[2.0, -1.0]] * 2 and ks.tolist() == [0, 3] and ks.dtype == torch.int64
    assert qx.tolist() == [5.0, -10.0]


def test_a_tuple_scan_is_one_loop_whose_stacks_take_the_names() -> None:
    """`let (hs, ks) = for`: one Loop with two yields after its three carried values;
    `hs` and `ks` are its items, with no tuple built in between."""
    program = compile_source(LOOP, target="torch", numerics="exact").stage("elaborate")
    main = program.func(program.entry)
    (loop,) = [b.expr for b in main.body.binds if isinstance(b.expr, ir.Loop)]
    assert loop.yields == 2 and len(loop.carried) == 3
    assert loop.stacked_types == (T("f64", 4, 3), T("i64", 4))
    named = {b.var.name: b.expr for b in main.body.binds}
    assert named["hs"] == ir.GetItem(named["hs"].tup, 3, T("f64", 4, 3))
    assert named["ks"] == ir.GetItem(named["hs"].tup, 4, T("i64", 4))
    assert not any(isinstance(b.expr, ir.MakeTuple) for b in main.body.binds)


def _check(tmp_path: Path, text: str) -> list[tuple[str, int]]:
    path = tmp_path / "t.linnet"
    path.write_text(text)
    result = check_program(str(path))
    return [(d.code, result.sources[d.span.file].position(d.span.start)[0])
            for d in result.diagnostics]


def test_a_scan_yields_a_flat_tuple_of_tensors(tmp_path: Path) -> None:
    nested = ("module t\n\nentry main(x: Tensor[2; f32]) -> Tensor[2; f32] {\n"
              "    let p = for k in 0..2 {\n        yield ((x, x), x)\n    }\n"
              "    return x\n}\n")
    assert _check(tmp_path, nested) == [("E2124", 5)]
    arity = ("module t\n\nentry main(x: Tensor[2; f32]) -> Tensor[2; f32] {\n"
             "    let (a, b, c) = for k in 0..2 {\n        yield (x, k)\n    }\n"
             "    return x\n}\n")
    assert _check(tmp_path, arity) == [("E2101", 4)]


# ------------------------------------------------------------ differentiate


def test_the_stash_is_one_scan_that_also_stacks_each_carried_value() -> None:
    """Reverse mode keeps each trip's carried values as more yields of the same scan (one
    stack per value, whatever its dtype), not as rows joined per dtype."""
    out = compile_source(LOOP, target="torch", numerics="exact", grad=True)
    program = out.stage("differentiate")
    loops = [b for f in program.funcs for b in all_binds(f.body) if isinstance(b.expr, ir.Loop)]
    stash = [b.expr for b in loops if b.var.name.startswith("stash")]
    assert len(stash) == 1
    assert stash[0].yields == 2 + len(stash[0].carried) == 5
    assert not any(isinstance(b.expr, ir.Prim) and b.expr.op == "concat"
                   for f in program.funcs for b in all_binds(f.body))
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
    loss, grad = import_generated(out.text, "stash_grad").main(x.detach(), torch.tensor(2))
    h, s, hs = x, 0.0, 0.0
    for _ in range(4):
        h = torch.tanh(h * 0.5 + x)
        s = s + h.sum()
        hs = hs + (h * x).sum()
    want = s + hs + (3 + 4 + 5 + 6)
    want.backward()
    assert torch.allclose(loss, want.detach()) and torch.allclose(grad, x.grad)


# ------------------------------------------------------------ kernels

KERNEL = """module kscan

kernel rows<B: Dim, R: Dim>(x: Tensor[R, B; f32]) -> (y: Tensor[R, B; f32], t: Tensor[R; i32]) grid(1) {
    let cols = iota<i32>(B)
    let (ys, ts) = for k in 0..R {
        let r = load(x[k, cols])
        yield (r * 2.0, cast<i32>(k))
    }
    let rws = iota<i32>(R)
    store(y[rws, cols], ys)
    store(t[rws], ts)
}

op double<B: Dim, R: Dim>(x: Tensor[R, B; f32]) -> (Tensor[R, B; f32], Tensor[R; i32]) kernel rows<B, R> {
    return (x * 2.0, iota<i32>(R))
}

entry main<R: Dim>(x: Tensor[R, 8; f32]) -> (Tensor[R, 8; f32], Tensor[R; i32]) {
    return double(x)
}
"""


def test_a_kernel_scan_of_a_trip_count_not_a_power_of_two_is_e2127() -> None:
    with pytest.raises(CompileError) as err:
        compile_source(KERNEL, target="torch", bind={"R": 3})
    (d,) = err.value.diagnostics
    assert d.code == "E2127" and "powers of two" in d.message
