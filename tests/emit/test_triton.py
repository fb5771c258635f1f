"""The Triton printer (`linnet/emit/triton.py`) on hand-built kernel IR.

Kernel Funcs are built here by hand, as kernel elaboration makes them (`linnet/ir/tensor.py`:
params, outputs, a Launch; explicit i32 offsets; effects bound to bool variables; the body
returns `true`), each bound by an op whose body is the reference. The generated module runs
its kernels in Triton's interpreter on CPU tensors (`TRITON_INTERPRET=1`, set below before
anything imports Triton), and its results are compared with torch references and with the
op bodies run by the PyTorch interpreter.

`LINNET_TEST_DEVICE=cuda` runs the same tests on CUDA tensors with compiled kernels instead
(the GPU check); the interpreter is then left off.
"""

from __future__ import annotations

import ast
import io
import itertools
import math
import os
import re
import subprocess
import sys
import textwrap
import tokenize

DEVICE = os.environ.get("LINNET_TEST_DEVICE", "cpu")
# Triton reads TRITON_INTERPRET when a kernel is decorated, i.e. when a generated module is
# imported; it must be set before Triton is first imported, in case a version reads it then.
_PRELOADED = "triton" in sys.modules and os.environ.get("TRITON_INTERPRET") != "1"
_SAVED = os.environ.get("TRITON_INTERPRET")
if DEVICE == "cpu" and not _PRELOADED:
    os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402

triton = pytest.importorskip("triton")

# Leave the rest of the session's environment as it was; each test here sets it again.
if _SAVED is None:
    os.environ.pop("TRITON_INTERPRET", None)
else:
    os.environ["TRITON_INTERPRET"] = _SAVED

pytestmark = pytest.mark.skipif(
    DEVICE == "cpu" and _PRELOADED,
    reason="Triton was imported in this process before TRITON_INTERPRET=1 was set, so its "
           "kernels would not run in the interpreter; run this test module on its own")

from linnet.emit import emit_torch as print_module  # noqa: E402
from linnet.emit import triton_ops  # noqa: E402
from linnet.ir import tensor as ir  # noqa: E402
import irbuild  # noqa: E402
from irbuild import L, T  # noqa: E402
from linnet.passes.egraph.egraph_products import egraph_products  # noqa: E402
from linnet.passes.kernels.lower_kernel_einsums import lower_kernel_einsums  # noqa: E402
from linnet.passes.manager import Options  # noqa: E402
from linnet.torch.interpreter import run  # noqa: E402
from linnet.torch.runtime import import_generated  # noqa: E402

INTERPRETED = DEVICE == "cpu"


@pytest.fixture(autouse=True)
def _interpret(monkeypatch, tmp_path_factory):
    if INTERPRETED:
        monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


# ====================================================================== IR builders

_names = itertools.count()
TRUE = ir.Lit(True, ir.TType((), "bool"))


def V(name: str, ty: ir.Ty) -> ir.Var:
    return ir.Var(name, ty)


class Blk(irbuild.Blk):
    """The shared block builder, with tile helpers for kernels."""

    # tile helpers
    def iota(self, n: int, start: ir.Atom | None = None) -> ir.Var:
        """start + iota(n), i32."""
        r = self.p("iota", ty=T("i32", n))
        return r if start is None else self.p("add", start, r, ty=T("i32", n))

    def col(self, x: ir.Var) -> ir.Var:
        """[n] -> [n, 1]."""
        return self.p("reshape", x, ty=T(x.type.dtype, x.type.shape[0], 1))


def program(op_params, op_body: ir.Block, kernel: ir.Func | None, grad: ir.Func | None = None,
            name: str = "op") -> ir.Program:
    """entry main(params) = op(params); the op names the kernel when there is one."""
    choice = ir.KernelChoice("k", (), kernel.name) if kernel is not None else None
    op = ir.Func(name, "op", tuple(op_params), op_body, source=f"{name}<test>",
                 kernel=choice, grad=grad)
    ins = tuple(V(f"in{k}", p.type) for k, p in enumerate(op_params))
    r = V("r", op_body.result.type)
    main = ir.Func("main", "entry", ins, ir.Block((ir.Bind(r, ir.Call(op.name, ins, r.type)),), r))
    funcs = ((kernel,) if kernel is not None else ()) + (op, main)
    return ir.Program(funcs, "main")


def kernel_func(name, params, outputs, body: ir.Block, grid, inits, warps=None, stages=None):
    return ir.Func(name, "kernel", tuple(params), body, source=f"{name}<test>",
                   outputs=tuple(outputs), launch=ir.Launch(tuple(grid), warps, stages,
                                                            tuple(inits)))


# ------------------------------------------------------------------ softmax

def softmax(R: int = 64, C: int = 40, B: int = 64, dtype: str = "f32", **kw) -> ir.Program:
    """Row softmax: one row per program, a tile of B >= C columns, masked."""
    x, y = V("x", T(dtype, R, C)), V("y", T(dtype, R, C))
    k = Blk()
    row = k.p("program_id", ty=T("i32"), axis=0)
    cols = k.iota(B)
    mask = k.p("lt", cols, L(C, "i32"), ty=T("bool", B))
    base = k.p("mul", row, L(C, "i32"), ty=T("i32"))
    offs = k.p("add", base, cols, ty=T("i32", B))
    v = k.p("load", x, offs, mask, L(-1e30, dtype), ty=T(dtype, B))
    top = k.p("reduce_max", v, ty=T(dtype), axes=(0,))
    e = k.p("exp", k.p("sub", v, top, ty=T(dtype, B)), ty=T(dtype, B))
    total = k.p("reduce_sum", e, ty=T(dtype), axes=(0,))
    k.eff("store", y, offs, k.p("div", e, total, ty=T(dtype, B)), mask)
    kern = kernel_func("row_softmax", [x], [y], k.done(TRUE), (R,), ("empty",), warps=4)
    xb = V("xb", T(dtype, R, C))
    b = Blk()
    top = b.p("reduce_max", xb, ty=T(dtype, R), axes=(1,))
    d = b.p("sub", xb, b.p("reshape", top, ty=T(dtype, R, 1)), ty=T(dtype, R, C))
    e = b.p("exp", d, ty=T(dtype, R, C))
    s = b.p("reduce_sum", e, ty=T(dtype, R), axes=(1,))
    out = b.p("div", e, b.p("reshape", s, ty=T(dtype, R, 1)), ty=T(dtype, R, C))
    return program([xb], b.done(out), kern, **kw)


# ------------------------------------------------------------------ matmul

def matmul(M: int = 40, N: int = 24, K: int = 72, BM: int = 32, BN: int = 32, BK: int = 16,
           swapped: bool = False, dtype: str = "f32", **kw) -> ir.Program:
    """C = A @ B with a K loop, masks on every side, and a tile product per step.

    `swapped` writes the product as `einsum("kj,ik->ij", b, a)` (both operands transposed).
    The tile product is an einsum: `dotted(...)` runs the egraph-products pass on it."""
    a, bm, c = V("a", T(dtype, M, K)), V("b", T(dtype, K, N)), V("c", T("f32", M, N))
    k = Blk()
    pm = k.p("mul", k.p("program_id", ty=T("i32"), axis=0), L(BM, "i32"), ty=T("i32"))
    pn = k.p("mul", k.p("program_id", ty=T("i32"), axis=1), L(BN, "i32"), ty=T("i32"))
    rows, cols = k.iota(BM, pm), k.iota(BN, pn)
    rmask = k.col(k.p("lt", rows, L(M, "i32"), ty=T("bool", BM)))
    cmask = k.p("lt", cols, L(N, "i32"), ty=T("bool", BN))
    acc0 = k.p("fill", L(0.0, "f32"), ty=T("f32", BM, BN))
    # the loop body
    idx, acc = V("kk", T("i64")), V("acc", T("f32", BM, BN))
    lb = Blk()
    ks = lb.iota(BK, lb.p("mul", lb.p("cast", idx, ty=T("i32")), L(BK, "i32"), ty=T("i32")))
    kmask = lb.p("lt", ks, L(K, "i32"), ty=T("bool", BK))
    a_offs = lb.p("add", lb.p("mul", lb.col(rows), L(K, "i32"), ty=T("i32", BM, 1)), ks,
                  ty=T("i32", BM, BK))
    a_mask = lb.p("and", rmask, kmask, ty=T("bool", BM, BK))
    at = lb.p("load", a, a_offs, a_mask, ty=T(dtype, BM, BK))
    b_offs = lb.p("add", lb.p("mul", lb.col(ks), L(N, "i32"), ty=T("i32", BK, 1)), cols,
                  ty=T("i32", BK, BN))
    b_mask = lb.p("and", lb.col(kmask), cmask, ty=T("bool", BK, BN))
    bt = lb.p("load", bm, b_offs, b_mask, ty=T(dtype, BK, BN))
    if swapped:
        prod = lb.let(ir.Einsum("kj,ik->ij", (bt, at), T("f32", BM, BN), "f32"))
    else:
        prod = lb.let(ir.Einsum("ik,kj->ij", (at, bt), T("f32", BM, BN), "f32"))
    nxt = lb.p("add", acc, prod, ty=T("f32", BM, BN))
    steps = -(-K // BK)
    loop = k.let(ir.Loop(idx, 0, steps, (acc,), (acc0,), lb.done(nxt),
                         ir.TupleTy((T("f32", BM, BN),))))
    total = k.let(ir.GetItem(loop, 0, T("f32", BM, BN)))
    c_offs = k.p("add", k.p("mul", k.col(rows), L(N, "i32"), ty=T("i32", BM, 1)), cols,
                 ty=T("i32", BM, BN))
    k.eff("store", c, c_offs, total, k.p("and", rmask, cmask, ty=T("bool", BM, BN)))
    grid = (-(-M // BM), -(-N // BN))
    kern = kernel_func("matmul", [a, bm], [c], k.done(TRUE), grid, ("empty",), warps=4,
                       stages=2)
    xa, xb = V("xa", T(dtype, M, K)), V("xb", T(dtype, K, N))
    b = Blk()
    out = b.let(ir.Einsum("mk,kn->mn", (xa, xb), T("f32", M, N), "f32"))
    return program([xa, xb], b.done(out), kern, **kw)


# ---------------------------------------------------------- column statistics

def column_stats(R: int = 50, C: int = 24, BR: int = 16, BC: int = 32, **kw) -> ir.Program:
    """Column sums by `atomic_add` and column maxima by `atomic_max` over row blocks."""
    x = V("x", T("f32", R, C))
    s, m = V("s", T("f32", C)), V("m", T("f32", C))
    k = Blk()
    rows = k.iota(BR, k.p("mul", k.p("program_id", ty=T("i32"), axis=0), L(BR, "i32"),
                          ty=T("i32")))
    cols = k.iota(BC)
    cmask = k.p("lt", cols, L(C, "i32"), ty=T("bool", BC))
    mask = k.p("and", k.col(k.p("lt", rows, L(R, "i32"), ty=T("bool", BR))), cmask,
               ty=T("bool", BR, BC))
    offs = k.p("add", k.p("mul", k.col(rows), L(C, "i32"), ty=T("i32", BR, 1)), cols,
               ty=T("i32", BR, BC))
    v = k.p("load", x, offs, mask, ty=T("f32", BR, BC))
    low = k.p("select", mask, v, L(float("-inf"), "f32"), ty=T("f32", BR, BC))
    k.eff("atomic_add", s, cols, k.p("reduce_sum", v, ty=T("f32", BC), axes=(0,)), cmask)
    k.eff("atomic_max", m, cols, k.p("reduce_max", low, ty=T("f32", BC), axes=(0,)), cmask)
    kern = kernel_func("column_stats", [x], [s, m], k.done(TRUE), (-(-R // BR),),
                       ("zero", "lowest"))
    xb = V("xb", T("f32", R, C))
    b = Blk()
    tot = b.p("reduce_sum", xb, ty=T("f32", C), axes=(0,))
    top = b.p("reduce_max", xb, ty=T("f32", C), axes=(0,))
    tup = b.let(ir.MakeTuple((tot, top), ir.TupleTy((T("f32", C), T("f32", C)))))
    return program([xb], b.done(tup), kern, **kw)


# ------------------------------------------------------ row scans and products

def _row_kernel(name, R, C, B, other, make, out_ty, scalar_out: bool, dtype="f32"):
    x = V("x", T(dtype, R, C))
    y = V("y", out_ty)
    k = Blk()
    row = k.p("program_id", ty=T("i32"), axis=0)
    cols = k.iota(B)
    mask = k.p("lt", cols, L(C, "i32"), ty=T("bool", B))
    offs = k.p("add", k.p("mul", row, L(C, "i32"), ty=T("i32")), cols, ty=T("i32", B))
    v = k.p("load", x, offs, mask, L(other, dtype), ty=T(dtype, B))
    r = make(k, v)
    if scalar_out:
        k.eff("store", y, row, r)
    else:
        k.eff("store", y, offs, r, mask)
    return kernel_func(name, [x], [y], k.done(TRUE), (R,), ("empty",))


def row_scan(R: int = 8, C: int = 20, B: int = 32, **kw) -> ir.Program:
    kern = _row_kernel("row_scan", R, C, B, 0.0,
                       lambda k, v: k.p("cumsum", v, ty=T("f32", B), axis=0),
                       T("f32", R, C), False)
    xb = V("xb", T("f32", R, C))
    b = Blk()
    return program([xb], b.done(b.p("cumsum", xb, ty=T("f32", R, C), axis=1)), kern, **kw)


def row_product(R: int = 8, C: int = 20, B: int = 32, **kw) -> ir.Program:
    kern = _row_kernel("row_product", R, C, B, 1.0,
                       lambda k, v: k.p("reduce_prod", v, ty=T("f32"), axes=(0,)),
                       T("f32", R), True)
    xb = V("xb", T("f32", R, C))
    b = Blk()
    return program([xb], b.done(b.p("reduce_prod", xb, ty=T("f32", R), axes=(1,))), kern, **kw)


# ------------------------------------------------------------ integer division

def int_divmod(N: int = 64, dtype: str = "i32", **kw) -> ir.Program:
    """q = a / b and r = a % b, truncating, on integer tiles."""
    a, bv = V("a", T(dtype, N)), V("b", T(dtype, N))
    q, r = V("q", T(dtype, N)), V("r", T(dtype, N))
    k = Blk()
    offs = k.iota(N)
    x = k.p("load", a, offs, ty=T(dtype, N))
    y = k.p("load", bv, offs, ty=T(dtype, N))
    k.eff("store", q, offs, k.p("div", x, y, ty=T(dtype, N)))
    k.eff("store", r, offs, k.p("mod", x, y, ty=T(dtype, N)))
    kern = kernel_func("divmod", [a, bv], [q, r], k.done(TRUE), (1,), ("empty", "empty"))
    xa, xb = V("xa", T(dtype, N)), V("xb", T(dtype, N))
    b = Blk()
    tup = b.let(ir.MakeTuple((b.p("div", xa, xb, ty=T(dtype, N)),
                              b.p("mod", xa, xb, ty=T(dtype, N))),
                             ir.TupleTy((T(dtype, N), T(dtype, N)))))
    return program([xa, xb], b.done(tup), kern, **kw)


# -------------------------------------------------------------------- bf16

def half_kernel(R: int = 16, C: int = 24, B: int = 32, dtype: str = "bf16", **kw) -> ir.Program:
    """y = exp(x) * s + x / rowsum(x*x), in a half dtype, with a scalar parameter s."""
    x, sv, y = V("x", T(dtype, R, C)), V("s", T(dtype)), V("y", T(dtype, R, C))
    k = Blk()
    row = k.p("program_id", ty=T("i32"), axis=0)
    cols = k.iota(B)
    mask = k.p("lt", cols, L(C, "i32"), ty=T("bool", B))
    offs = k.p("add", k.p("mul", row, L(C, "i32"), ty=T("i32")), cols, ty=T("i32", B))
    v = k.p("load", x, offs, mask, ty=T(dtype, B))
    tile = T(dtype, B)
    ss = k.p("reduce_sum", k.p("mul", v, v, ty=tile), ty=T(dtype), axes=(0,))
    out = k.p("add", k.p("mul", k.p("exp", v, ty=tile), sv, ty=tile),
              k.p("div", v, ss, ty=tile), ty=tile)
    k.eff("store", y, offs, out, mask)
    kern = kernel_func("half", [x, sv], [y], k.done(TRUE), (R,), ("empty",))
    xb, sb = V("xb", T(dtype, R, C)), V("sb", T(dtype))
    b = Blk()
    full = T(dtype, R, C)
    ss = b.p("reduce_sum", b.p("mul", xb, xb, ty=full), ty=T(dtype, R), axes=(1,))
    out = b.p("add", b.p("mul", b.p("exp", xb, ty=full), sb, ty=full),
              b.p("div", xb, b.p("reshape", ss, ty=T(dtype, R, 1)), ty=full), ty=full)
    return program([xb, sb], b.done(out), kern, **kw)


# ------------------------------------------------------ a kernel unlike its body

def scaled(N: int = 20, B: int = 32, kernel_factor: float = 2.0, body_factor: float = 3.0,
           grad: bool = False, **kw) -> ir.Program:
    """y = x * factor: the kernel and the body use different factors, so a test can tell
    which one ran; with `grad`, a grad clause returning 3 * dy (not the true derivative)."""
    x, y = V("x", T("f32", N)), V("y", T("f32", N))
    k = Blk()
    offs = k.iota(B)
    mask = k.p("lt", offs, L(N, "i32"), ty=T("bool", B))
    v = k.p("load", x, offs, mask, ty=T("f32", B))
    k.eff("store", y, offs, k.p("mul", v, L(kernel_factor, "f32"), ty=T("f32", B)), mask)
    kern = kernel_func("scaled", [x], [y], k.done(TRUE), (1,), ("empty",))
    xb = V("xb", T("f32", N))
    b = Blk()
    out = b.p("mul", xb, L(body_factor, "f32"), ty=T("f32", N))
    g = None
    if grad:
        gx, gy, gdy = V("gx", T("f32", N)), V("gy", T("f32", N)), V("gdy", T("f32", N))
        gb = Blk()
        g = ir.Func("op__grad", "grad", (gx, gy, gdy),
                    gb.done(gb.p("mul", gdy, L(3.0, "f32"), ty=T("f32", N))), "grad of op")
    return program([xb], b.done(out), kern, grad=g, **kw)


# ------------------------------------------------ whole tensors as single tiles

def offsets(k: Blk, shape: tuple[int, ...]) -> ir.Atom:
    """The i32 offsets of every element of a contiguous tensor of `shape`, as one tile."""
    if not shape:
        return L(0, "i32")
    total = None
    for axis, n in enumerate(shape):
        later = len(shape) - axis - 1
        idx = k.iota(n)
        if later:
            idx = k.p("reshape", idx, ty=T("i32", n, *(1,) * later))
        stride = math.prod(shape[axis + 1:])
        if stride != 1:
            idx = k.p("mul", idx, L(stride, "i32"), ty=idx.type)
        if total is not None:
            idx = k.p("add", total, idx, ty=T("i32", *shape[:axis + 1], *(1,) * later))
        total = idx
    return total


def whole(f, ins: list[ir.TType], out: ir.Ty, **kw) -> ir.Program:
    """An op computing `f(block, *inputs)` both as its body and as a one-program kernel that
    loads each (power-of-two shaped) input as one tile; rank-0 inputs are scalar parameters.
    A tuple-typed result is written to one output per item."""
    params = [V(f"x{n}", t) for n, t in enumerate(ins)]
    outs = list(out.items) if isinstance(out, ir.TupleTy) else [out]
    results = [V(f"y{n}", t) for n, t in enumerate(outs)]
    k = Blk()
    tiles = [k.p("load", p, offsets(k, p.type.shape), ty=p.type) if p.type.shape else p
             for p in params]
    value = f(k, *tiles)
    values = [k.let(ir.GetItem(value, n, t)) for n, t in enumerate(outs)] \
        if isinstance(out, ir.TupleTy) else [value]
    for r, v in zip(results, values):
        k.eff("store", r, offsets(k, r.type.shape), v)
    kern = kernel_func("whole", params, results, k.done(TRUE), (1,), ("empty",) * len(outs))
    bparams = [V(f"b{n}", t) for n, t in enumerate(ins)]
    b = Blk()
    return program(bparams, b.done(f(b, *bparams)), kern, **kw)


# ------------------------------------------------------ loops with run-time bounds

def triangle(R: int = 12, upper: bool = True) -> ir.Program:
    """Program r sums row r one element per trip, over columns 0..r (`upper`: the loop's
    upper bound is the program id) or r..R (its lower bound is): bounds read at run time."""
    x, y = V("x", T("f32", R, R)), V("y", T("f32", R))
    k = Blk()
    row = k.p("program_id", ty=T("i32"), axis=0)
    bound = k.p("cast", row, ty=T("i64"))
    base = k.p("mul", row, L(R, "i32"), ty=T("i32"))
    idx, acc = V("c", T("i64")), V("acc", T("f32"))
    lb = Blk()
    off = lb.p("add", base, lb.p("cast", idx, ty=T("i32")), ty=T("i32"))
    nxt = lb.p("add", acc, lb.p("load", x, off, ty=T("f32")), ty=T("f32"))
    lo, hi = (0, bound) if upper else (bound, R)
    loop = k.let(ir.Loop(idx, lo, hi, (acc,), (L(0.0, "f32"),), lb.done(nxt),
                         ir.TupleTy((T("f32"),))))
    k.eff("store", y, row, k.let(ir.GetItem(loop, 0, T("f32"))))
    kern = kernel_func("triangle", [x], [y], k.done(TRUE), (R,), ("empty",))
    xb = V("xb", T("f32", R, R))
    b = Blk()
    rows = b.p("reshape", b.p("iota", ty=T("i32", R)), ty=T("i32", R, 1))
    cols = b.p("iota", ty=T("i32", R))
    inside = b.p("lt" if upper else "ge", cols, rows, ty=T("bool", R, R))
    kept = b.p("select", inside, xb, L(0.0, "f32"), ty=T("f32", R, R))
    return program([xb], b.done(b.p("reduce_sum", kept, ty=T("f32", R), axes=(1,))), kern)


# ========================================================================== running

TORCH = {"bool": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
         "i64": torch.int64, "u8": torch.uint8, "u16": torch.uint16, "u32": torch.uint32,
         "u64": torch.uint64, "f16": torch.float16, "bf16": torch.bfloat16,
         "f32": torch.float32, "f64": torch.float64}


def emit_torch(prog: ir.Program, options=None) -> str:
    """The printer, after the pass that must run before it (kernels hold no einsum)."""
    return print_module(lower_kernel_einsums(prog), options)


def generate(prog: ir.Program, name: str = "kernels", options=None):
    """The generated text and the module imported from it."""
    text = emit_torch(prog, options)
    return text, import_generated(text, name)


def on(*xs):
    return [x.to(DEVICE) for x in xs]


def kernel_ran(module) -> bool:
    """Whether this module launches kernels here (Triton there; the interpreter or CUDA)."""
    return module._LT_TRITON and (module._LT_INTERPRET or DEVICE == "cuda")


def close(got: torch.Tensor, want: torch.Tensor, rtol=1e-5, atol=1e-5) -> None:
    got, want = got.cpu(), want.cpu()
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.is_floating_point:
        torch.testing.assert_close(got.float(), want.float(), rtol=rtol, atol=atol,
                                   equal_nan=True)
    else:
        assert torch.equal(got, want), (got, want)


def versus_body(prog: ir.Program, inputs, rtol=1e-5, atol=1e-6):
    """Run the module (kernels) and the PyTorch interpreter (bodies); they must agree."""
    text, module = generate(prog)
    assert kernel_ran(module)
    inputs = on(*inputs)
    got = module.main(*inputs)
    want = run(prog, *[x.cpu() for x in inputs])
    for g, w in zip(got, want):
        close(g, w, rtol, atol)
    return text, got


# ========================================================================= the tests

def test_row_softmax_with_masks():
    text, module = generate(softmax())
    assert "@triton.jit" in text and "tl.load(p0 + " in text and "mask=" in text
    assert "other=" in text and "num_warps=4" in text and "num_stages" not in text
    x = torch.randn(64, 40) * 4
    (y,) = module.main(*on(x))
    assert kernel_ran(module)
    close(y, torch.softmax(x, dim=1), rtol=1e-5, atol=1e-6)


def dotted(prog: ir.Program, numerics: str | None = None) -> ir.Program:
    """The program after egraph-products (under the default numerics unless given)."""
    return egraph_products(prog, Options(numerics=numerics) if numerics else None)


@pytest.mark.parametrize("swapped", [False, True])
def test_tiled_matmul_with_a_k_loop_masks_and_dot(swapped):
    text, module = generate(dotted(matmul(swapped=swapped)))
    assert text.count("tl.dot(") == 1 and 'input_precision="ieee"' in text
    assert "for i" in text and "in range(0, 5):" in text
    assert "num_warps=4, num_stages=2" in text
    assert "tl.trans(" not in text  # swapped operands are swapped back, not transposed
    a, b = torch.randn(40, 72), torch.randn(72, 24)
    (c,) = module.main(*on(a, b))
    close(c, a.double().matmul(b.double()).float(), rtol=1e-5, atol=1e-4)


def test_bf16_tile_products_are_bf16_dots_with_f32_accumulation():
    text, module = generate(dotted(matmul(dtype="bf16")), "bf16_dot")
    assert text.count("tl.dot(") == 1 and "input_precision" not in text
    a, b = torch.randn(40, 72).bfloat16(), torch.randn(72, 24).bfloat16()
    (c,) = module.main(*on(a, b))
    assert c.dtype == torch.float32
    close(c, a.double().matmul(b.double()).float(), rtol=1e-5, atol=1e-4)


def test_tile_products_without_the_pass_are_broadcast_sums():
    text, module = generate(matmul(), "undotted")
    assert "tl.dot" not in text and "tl.sum(" in text
    a, b = torch.randn(40, 72), torch.randn(72, 24)
    (c,) = module.main(*on(a, b))
    close(c, a.double().matmul(b.double()).float(), rtol=1e-5, atol=1e-4)


def test_fast_numerics_allow_tf32_products():
    text = emit_torch(dotted(matmul(), "fast"), Options(numerics="fast"))
    assert 'input_precision="tf32"' in text and "ieee" not in text
    assert 'input_precision="ieee"' in emit_torch(dotted(matmul()))


def test_small_tile_products_are_broadcast_sums():
    """Sides under 16 are no tl.dot: a broadcast product and tl.sum, still exact."""
    f = lambda b, x, y: b.let(ir.Einsum("ik,kj->ij", (x, y), T("f32", 8, 4), "f32"))  # noqa
    text, _ = versus_body(whole(f, [T("f32", 8, 16), T("f32", 16, 4)], T("f32", 8, 4)),
                          [torch.randn(8, 16), torch.randn(16, 4)], atol=1e-5)
    assert "tl.dot" not in text and "tl.sum(" in text


def test_column_sums_and_maxima_with_atomics():
    text, module = generate(column_stats())
    assert "tl.atomic_add(o0 + " in text and "tl.atomic_max(o1 + " in text
    assert "torch.full((24,), 0, dtype=torch.float32, device=a0.device)" in text
    assert 'torch.full((24,), float("-inf"), dtype=torch.float32, device=a0.device)' in text
    x = torch.randn(50, 24)
    s, m = module.main(*on(x))
    close(s, x.sum(0), rtol=1e-5, atol=1e-5)
    close(m, x.amax(0))


def test_row_scan_with_cumsum():
    text, module = generate(row_scan())
    assert "tl.cumsum(" in text
    x = torch.randn(8, 20)
    (y,) = module.main(*on(x))
    close(y, x.cumsum(1), rtol=1e-5, atol=1e-5)


def test_row_product_with_reduce_prod():
    text, module = generate(row_product())
    assert "tl.reduce(" in text and "def _lt_mul(a, b):" in text
    x = torch.rand(8, 20) + 0.5
    (p,) = module.main(*on(x))
    close(p, x.double().prod(1).float(), rtol=1e-5, atol=0)


@pytest.mark.parametrize("dtype", ["i32", "i8", "u8"])
def test_integer_division_and_modulo_truncate(dtype):
    """... and `x / 0`, `x % 0` are 0 (docs/language.md), not LLVM's undefined value."""
    bits = {"i32": 32, "i8": 8, "u8": 8}[dtype]
    low = -(1 << (bits - 1)) if dtype != "u8" else 255
    a = [7, -7, 7, -7, 0, 13, -13, low, low, low, 1 - low - 2, 5] * 5 + [3, -3, 100, -100]
    b = [2, 2, -2, -2, 5, -4, 4, -1, 1, 3, -7, 0] * 5 + [7, 0, -9, 0]
    if dtype == "u8":
        a, b = [x % 256 for x in a], [y % 256 for y in b]
    text, module = generate(int_divmod(dtype=dtype))
    kind = "u" if dtype == "u8" else "s"
    assert f"_lt_{kind}div(" in text and f"_lt_{kind}mod(" in text
    q, r = module.main(*on(torch.tensor(a, dtype=TORCH[dtype]),
                           torch.tensor(b, dtype=TORCH[dtype])))

    def trunc(x, y):
        if y == 0:
            return 0, 0
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        w = (q + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))  # MIN / -1 wraps
        return (w % 256 if kind == "u" else w), x - q * y
    assert q.cpu().tolist() == [trunc(x, y)[0] for x, y in zip(a, b)]
    assert r.cpu().tolist() == [trunc(x, y)[1] for x, y in zip(a, b)]


@pytest.mark.parametrize("dtype", ["bf16", "f16"])
def test_half_kernels_compute_in_f32_under_the_interpreter(dtype):
    text, module = generate(half_kernel(dtype=dtype))
    assert f"_lt_{dtype}" in text  # a GPU's half dtype, or f32 under the interpreter
    x = (torch.randn(16, 24) * 2).to(TORCH[dtype])
    s = torch.tensor(1.5, dtype=TORCH[dtype])
    (y,) = module.main(*on(x, s))
    assert y.dtype == TORCH[dtype]
    xf = x.double()
    ref = torch.exp(xf) * 1.5 + xf / (xf * xf).sum(1, keepdim=True)
    if INTERPRETED:
        # all in f32, rounded once at the end: within one unit in the last place
        assert module._LT_INTERPRET and module._LT_BF16 == torch.float32
        ulp = {"bf16": 2 ** -7, "f16": 2 ** -10}[dtype]
        err = (y.cpu().double() - ref).abs() / ref.abs().clamp(min=2 ** -6)
        assert err.max().item() <= ulp, err.max().item()
    close(y, run(half_kernel(dtype=dtype), x, s)[0], rtol=2e-2, atol=2e-2)


def test_kernel_results_come_from_the_kernel_not_the_body():
    """`scaled` multiplies by 2 in its kernel and by 3 in its body."""
    _, module = generate(scaled())
    x = torch.arange(20, dtype=torch.float32)
    (y,) = module.main(*on(x))
    close(y, x * 2)


# ---------------------------------------------------------------- every primitive

def _bin(op, dtype, out=None):
    def f(b, x, y):
        return b.p(op, x, y, ty=T(out or dtype, *x.type.shape))
    return f


def _un(op, dtype, out=None):
    def f(b, x):
        return b.p(op, x, ty=T(out or dtype, *x.type.shape))
    return f


def _ints(dtype, shape, low, high, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high, shape, generator=g, dtype=torch.int64).to(TORCH[dtype])


def _floats(shape, seed=0, scale=3.0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g) * scale


def _with_specials(x):
    x = x.clone().reshape(-1)
    x[:4] = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0])
    return x.reshape(4, 8)


S = (4, 8)
CASES = {
    # arithmetic wraps; shifts with counts past the width
    "i8_add_wraps": (_bin("add", "i8"), ["i8", "i8"], "i8",
                     lambda: [_ints("i8", S, -128, 128), _ints("i8", S, -128, 128, 1)]),
    "i8_mul_wraps": (_bin("mul", "i8"), ["i8", "i8"], "i8",
                     lambda: [_ints("i8", S, -128, 128), _ints("i8", S, -128, 128, 1)]),
    "i8_shl": (_bin("shl", "i8"), ["i8", "i8"], "i8",
               lambda: [_ints("i8", S, -128, 128), _ints("i8", S, 0, 12, 1)]),
    "i8_shr_arithmetic": (_bin("shr", "i8"), ["i8", "i8"], "i8",
                          lambda: [_ints("i8", S, -128, 128), _ints("i8", S, 0, 12, 1)]),
    "u8_shr_logical": (_bin("shr", "u8"), ["u8", "u8"], "u8",
                       lambda: [_ints("u8", S, 0, 256), _ints("u8", S, 0, 12, 1)]),
    "u16_sub_wraps": (_bin("sub", "u16"), ["u16", "u16"], "u16",
                      lambda: [_ints("u16", S, 0, 65536), _ints("u16", S, 0, 65536, 1)]),
    "u32_div": (_bin("div", "u32"), ["u32", "u32"], "u32",
                lambda: [_ints("u32", S, 0, 2**32), _ints("u32", S, 1, 2**32, 1)]),
    "u64_mod": (_bin("mod", "u64"), ["u64", "u64"], "u64",
                lambda: [_ints("i64", S, -2**63, 2**63 - 1).view(torch.uint64),
                         _ints("i64", S, 1, 2**40, 1).view(torch.uint64)]),
    "u64_lt": (_bin("lt", "u64", "bool"), ["u64", "u64"], "bool",
               lambda: [_ints("i64", S, -2**63, 2**63 - 1).view(torch.uint64),
                        _ints("i64", S, -2**63, 2**63 - 1, 1).view(torch.uint64)]),
    "i32_neg_abs": (lambda b, x: b.p("abs", b.p("neg", x, ty=x.type), ty=x.type), ["i32"], "i32",
                    lambda: [torch.tensor([-2**31, 2**31 - 1, -5, 0] * 8, dtype=torch.int32)
                             .reshape(S)]),
    "f32_mod_is_fmod": (_bin("mod", "f32"), ["f32", "f32"], "f32",
                        lambda: [_floats(S), _floats(S, 1) + 0.5]),
    "f32_max_nan": (_bin("max", "f32"), ["f32", "f32"], "f32",
                    lambda: [_with_specials(_floats(S)), _floats(S, 1)]),
    "f32_min_nan": (_bin("min", "f32"), ["f32", "f32"], "f32",
                    lambda: [_floats(S, 1), _with_specials(_floats(S))]),
    "bool_logic": (lambda b, x, y: b.p("xor", b.p("or", x, b.p("not", y, ty=y.type), ty=x.type),
                                       b.p("and", x, y, ty=x.type), ty=x.type),
                   ["bool", "bool"], "bool",
                   lambda: [_ints("i8", S, 0, 2) != 0, _ints("i8", S, 0, 2, 1) != 0]),
    # math
    **{f"f32_{op}": (_un(op, "f32"), ["f32"], "f32",
                     lambda: [_floats(S).abs() + 0.01]) for op in
       ("exp", "log", "sqrt", "rsqrt", "sin", "cos")},
    "f32_tanh": (_un("tanh", "f32"), ["f32"], "f32",
                 lambda: [torch.cat([_floats((16,), scale=4.0),
                                     torch.tensor([1e-4, -1e-3, 0.1, -0.12, 0.13, 20.0, -30.0,
                                                   0.0, 1e-30, -0.5, 0.124, 0.126, 3.0, -3.0,
                                                   0.01, 7.0])]).reshape(S)]),
    "f64_tanh_sqrt": (lambda b, x: b.p("tanh", b.p("sqrt", x, ty=x.type), ty=x.type), ["f64"],
                      "f64", lambda: [_floats(S).abs().double()]),
    # casts
    "f32_to_i32_truncates": (_un("cast", "f32", "i32"), ["f32"], "i32",
                             lambda: [_floats(S) * 10]),
    "i32_to_bool": (_un("cast", "i32", "bool"), ["i32"], "bool",
                    lambda: [_ints("i32", S, -2, 3)]),
    "bool_to_f32": (_un("cast", "bool", "f32"), ["bool"], "f32",
                    lambda: [_ints("i8", S, 0, 2) != 0]),
    "f32_to_bf16": (_un("cast", "f32", "bf16"), ["f32"], "bf16", lambda: [_floats(S)]),
    # shapes and construction
    "select_scalar_branch": (lambda b, c, x: b.p("select", c, x, L(-1.5, "f32"), ty=x.type),
                             ["bool", "f32"], "f32",
                             lambda: [_floats(S, 2) > 0, _floats(S)]),
    "iota_i64_fill": (lambda b, x: b.p("add", b.p("iota", ty=T("i64", 8)),
                                       b.p("fill", x, ty=T("i64", 4, 8)), ty=T("i64", 4, 8)),
                      ["i64"], T("i64", 4, 8), lambda: [torch.tensor(5, dtype=torch.int64)]),
    "broadcast_row": (lambda b, x: b.p("broadcast_to", x, ty=T("f32", 4, 8)), ["f32"],
                      T("f32", 4, 8), None),
    "permute": (lambda b, x: b.p("permute", x, ty=T("f32", 8, 4), perm=(1, 0)),
                ["f32"], T("f32", 8, 4), lambda: [_floats(S)]),
    "permute3": (lambda b, x: b.p("permute", b.p("reshape", x, ty=T("f32", 2, 2, 8)),
                                  ty=T("f32", 8, 2, 2), perm=(2, 0, 1)),
                 ["f32"], T("f32", 8, 2, 2), lambda: [_floats(S)]),
    "reshape_split": (lambda b, x: b.p("reshape", x, ty=T("f32", 2, 16)), ["f32"],
                      T("f32", 2, 16), lambda: [_floats(S)]),
    "reshape_to_scalar": (lambda b, x: b.p("add",
                                           b.p("reshape", b.p("reduce_sum", x, ty=T("f32", 1, 1),
                                                              axes=()), ty=T("f32")),
                                           L(1.0, "f32"), ty=T("f32")),
                          ["f32"], T("f32"), None),
    # reductions
    "sum_both_axes_i8_wraps": (lambda b, x: b.p("reduce_sum", x, ty=T("i8"), axes=(0, 1)),
                               ["i8"], T("i8"), lambda: [_ints("i8", S, -128, 128)]),
    "prod_axis0_i32": (lambda b, x: b.p("reduce_prod", x, ty=T("i32", 8), axes=(0,)),
                       ["i32"], T("i32", 8), lambda: [_ints("i32", S, -9, 9)]),
    "max_nan_axis1": (lambda b, x: b.p("reduce_max", x, ty=T("f32", 4), axes=(1,)),
                      ["f32"], T("f32", 4), lambda: [_with_specials(_floats(S))]),
    "min_i16_axis0": (lambda b, x: b.p("reduce_min", x, ty=T("i16", 8), axes=(0,)),
                      ["i16"], T("i16", 8), lambda: [_ints("i16", S, -30000, 30000)]),
    "any_all": (lambda b, x: b.let(ir.MakeTuple(
                    (b.p("reduce_any", x, ty=T("bool", 4), axes=(1,)),
                     b.p("reduce_all", x, ty=T("bool", 8), axes=(0,))),
                    ir.TupleTy((T("bool", 4), T("bool", 8))))),
                ["bool"], ir.TupleTy((T("bool", 4), T("bool", 8))),
                lambda: [torch.tensor([[1, 1, 1, 1, 1, 1, 1, 1], [0] * 8, [1, 0] * 4,
                                       [1] * 8]) != 0]),
    "cumsum_i8_axis1_wraps": (lambda b, x: b.p("cumsum", x, ty=x.type, axis=1), ["i8"], "i8",
                              lambda: [_ints("i8", S, -128, 128)]),
    "int_einsum": (lambda b, x, y: b.let(ir.Einsum("ij,j->i", (x, y), T("i32", 4), "i32")),
                   ["i32", "i32"], T("i32", 4), None),
}


def _case_inputs(name, ins):
    make = CASES[name][3]
    if make is not None:
        return make()
    shapes = {"broadcast_row": [(8,)], "reshape_to_scalar": [(1, 1)], "int_einsum": [S, (8,)]}
    return [(_ints("i32", s, -50, 50, n) if ins[n] == "i32" else _floats(s, n))
            for n, s in enumerate(shapes[name])]


def _ty(t, shape=S):
    return t if isinstance(t, (ir.TType, ir.TupleTy)) else T(t, *shape)


@pytest.mark.parametrize("name", sorted(CASES))
def test_primitives_match_the_body(name):
    f, ins, out, _ = CASES[name]
    inputs = _case_inputs(name, ins)
    types = [T(d, *x.shape) for d, x in zip(ins, inputs)]
    tol = 1e-6 if "tanh" not in name else 2e-6
    if "bf16" in name:
        tol = 1e-2
    versus_body(whole(f, types, _ty(out)), inputs, rtol=tol, atol=tol)


# ------------------------------------------------------------------ control flow

def _if(b, x):
    """if any(x > 0) { x * 2 } else { -x }"""
    c = b.p("reduce_any", b.p("gt", x, L(0.0, "f32"), ty=T("bool", *S)), ty=T("bool"), axes=(0, 1))
    t, e = Blk(), Blk()
    then = t.done(t.p("mul", x, L(2.0, "f32"), ty=x.type))
    other = e.done(e.p("neg", x, ty=x.type))
    return b.let(ir.If(c, then, other, x.type))


def _while(b, x):
    """n = 0; while n < 5 { x = x * 0.5 + 1; n = n + 1 }; x"""
    n, y = V(f"n{next(_names)}", T("i32")), V(f"y{next(_names)}", x.type)
    c = Blk()
    cond = c.done(c.p("lt", n, L(5, "i32"), ty=T("bool")))
    body = Blk()
    y2 = body.p("add", body.p("mul", y, L(0.5, "f32"), ty=x.type), L(1.0, "f32"), ty=x.type)
    n2 = body.p("add", n, L(1, "i32"), ty=T("i32"))
    tup = body.let(ir.MakeTuple((n2, y2), ir.TupleTy((T("i32"), x.type))))
    w = b.let(ir.While((n, y), (L(0, "i32"), x), cond, body.done(tup),
                       ir.TupleTy((T("i32"), x.type))))
    return b.let(ir.GetItem(w, 1, x.type))


def _swap_loop(b, x):
    """(p, q) = (x, -x); for i in 0..3 { (p, q) = (q + i, p) }; p - q"""
    i = V(f"i{next(_names)}", T("i64"))
    p, q = V(f"p{next(_names)}", x.type), V(f"q{next(_names)}", x.type)
    body = Blk()
    qi = body.p("add", q, body.p("cast", i, ty=T("f32")), ty=x.type)
    tup = body.let(ir.MakeTuple((qi, p), ir.TupleTy((x.type, x.type))))
    loop = b.let(ir.Loop(i, 0, 3, (p, q), (x, b.p("neg", x, ty=x.type)), body.done(tup),
                         ir.TupleTy((x.type, x.type))))
    p2 = b.let(ir.GetItem(loop, 0, x.type))
    q2 = b.let(ir.GetItem(loop, 1, x.type))
    return b.p("sub", p2, q2, ty=x.type)


@pytest.mark.parametrize("f, printed", [(_if, "    if v"), (_while, "    while w"),
                                         (_swap_loop, "    for i")], ids=["if", "while", "loop"])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_control_flow_matches_the_body(f, printed, sign):
    x = _floats(S).abs() * sign
    text, _ = versus_body(whole(f, [T("f32", *S)], T("f32", *S)), [x])
    assert printed in text


@pytest.mark.parametrize("upper", [True, False], ids=["upper", "lower"])
def test_loops_with_run_time_bounds_match_the_body(upper):
    """Row 0 of `upper` (0..0) and the last row of `lower` (R..R) run no trip."""
    text, _ = versus_body(triangle(upper=upper), [_floats((12, 12))])
    line = next(ln for ln in text.splitlines() if " in range(" in ln)
    assert re.search(r"in range\(0, v\d+\)" if upper else r"in range\(v\d+, 12\)", line), line


def test_scalar_parameters_are_read_through_pointers():
    """A rank-0 parameter is a value in the kernel: a pointer to a 0-d tensor, loaded once."""
    f = lambda b, x, s: b.p("mul", x, s, ty=x.type)  # noqa: E731
    text, _ = versus_body(whole(f, [T("f64", *S), T("f64")], T("f64", *S)),
                          [_floats(S).double(), torch.tensor(1.0 / 3.0, dtype=torch.float64)],
                          rtol=0, atol=0)
    assert "= tl.load(p1)" in text and "a scalar, by pointer" in text


def test_prims_a_kernel_cannot_have_are_refused():
    def f(b, x):
        return b.p("concat", x, x, ty=T("f32", 8, 8), axis=0)
    with pytest.raises(ValueError, match="not available in kernels"):
        emit_torch(whole(f, [T("f32", *S)], T("f32", 8, 8)))
    with pytest.raises(ValueError, match="unknown primitive"):
        triton_ops.prim_expr("launch", ["a"], [T("f32")], T("f32"))


# ------------------------------------------------------------- text and fallback

def test_exact_numerics_and_kernel_free_programs_have_no_triton():
    for text in (emit_torch(softmax(), Options(numerics="exact")),
                 emit_torch(program([V("b0", T("f32", 4))], Blk().done(V("b0", T("f32", 4))),
                                    None))):
        assert "triton" not in text.lower() and "_lt_" not in text
        assert "@" not in text
    # the same program under exact numerics runs its body (the kernel differs from it)
    module = import_generated(emit_torch(scaled(), Options(numerics="exact")), "exact")
    x = torch.arange(20, dtype=torch.float32)
    close(module.main(*on(x))[0], x * 3)


BLOCKER = textwrap.dedent('''
    import sys

    class _NoTriton:
        """A meta-path finder that refuses Triton, as if it were not installed."""
        def find_spec(self, name, path=None, target=None):
            if name == "triton" or name.startswith("triton."):
                raise ImportError("triton is blocked for this test")
            return None

    sys.meta_path.insert(0, _NoTriton())
''')


def _subprocess(script: str, path, env_extra: dict[str, str | None]) -> list[str]:
    env = dict(os.environ)
    for key, value in env_extra.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=path, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_module_imports_without_triton_and_runs_the_bodies(tmp_path):
    """With Triton blocked the module still imports (even with TRITON_INTERPRET=1) and every
    op runs its body: `scaled` gives x * 3, its body, not x * 2, its kernel."""
    (tmp_path / "gen.py").write_text(emit_torch(scaled(N=4)))
    script = BLOCKER + textwrap.dedent('''
        import torch, gen
        assert "triton" not in sys.modules and gen._LT_TRITON is False
        print(gen.main(torch.arange(4, dtype=torch.float32))[0].tolist())
    ''')
    assert _subprocess(script, tmp_path, {"TRITON_INTERPRET": "1"}) == ["[0.0, 3.0, 6.0, 9.0]"]


@pytest.mark.skipif(DEVICE != "cpu", reason="about CPU tensors")
def test_cpu_tensors_run_the_body_without_the_interpreter(tmp_path):
    (tmp_path / "gen.py").write_text(emit_torch(scaled(N=4)))
    script = textwrap.dedent('''
        import torch, gen
        assert gen._LT_TRITON and not gen._LT_INTERPRET
        print(gen.main(torch.arange(4, dtype=torch.float32))[0].tolist())
    ''')
    assert _subprocess(script, tmp_path, {"TRITON_INTERPRET": None}) == ["[0.0, 3.0, 6.0, 9.0]"]


def _code_tokens(source: str) -> str:
    return " ".join(t.string for t in tokenize.generate_tokens(io.StringIO(source).readline)
                    if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE))


def test_user_names_stay_in_comments():
    evil = "secret_zebra\n import os; os.system('pwned')\r\x00\u2028 \"\"\""
    prog = softmax()
    kern = prog.funcs[0]
    renamed = ir.Func("secret_kernel" + evil, "kernel", kern.params, kern.body,
                      source="secret_src" + evil, outputs=kern.outputs, launch=kern.launch)
    op = prog.funcs[1]
    op = ir.Func(op.name, op.kind, op.params, op.body, op.source,
                 ir.KernelChoice("secret_k" + evil, (), renamed.name))
    prog = ir.Program((renamed, op, prog.funcs[2]), "main", prog.state)
    source = emit_torch(prog)
    assert source.isascii() and "secret_kernel" in source
    code = _code_tokens(source)
    for word in ("secret", "pwned", "zebra"):
        assert word not in code
    ast.parse(source)


def test_generated_kernels_compile_for_a_gpu(tmp_path):
    """The compiled path, without a GPU: each kernel goes through Triton's compiler to a
    cubin for sm_90 (the interpreter accepts much that the compiler does not)."""
    pytest.importorskip("triton.backends.nvidia")
    progs = {"softmax": softmax(), "matmul": dotted(matmul(swapped=True)),
             "bf16_matmul": dotted(matmul(dtype="bf16")), "stats": column_stats(),
             "scan": row_scan(), "product": row_product(), "divmod": int_divmod(),
             "bf16": half_kernel(), "f16": half_kernel(dtype="f16"),
             **{name: whole(f, [T("f32", *S)], T("f32", *S))
                for name, f in (("if", _if), ("while", _while), ("loop", _swap_loop))},
             "run_time_upper": triangle(), "run_time_lower": triangle(upper=False),
             **{f"case_{n}": whole(CASES[n][0], [T(d, *x.shape) for d, x in
                                                  zip(CASES[n][1], _case_inputs(n, CASES[n][1]))],
                                    _ty(CASES[n][2]))
                for n in ("f32_tanh", "u64_mod", "any_all", "permute3", "reshape_to_scalar",
                          "max_nan_axis1", "i8_shl", "u8_shr_logical", "f32_rsqrt")}}
    sigs = {}
    for name, prog in progs.items():
        (tmp_path / f"gen_{name}.py").write_text(emit_torch(prog))
        kern = next(f for f in prog.funcs if f.kind == "kernel")
        ptr = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": "fp64", "bool": "i1"}
        sig = {f"p{k}": "*" + ptr.get(p.type.dtype, p.type.dtype)
               for k, p in enumerate(kern.params)}
        sig |= {f"o{k}": "*" + ptr.get(o.type.dtype, o.type.dtype)
                for k, o in enumerate(kern.outputs)}
        sigs[name] = (next(i for i, f in enumerate(prog.funcs) if f.kind == "kernel"), sig)
    script = textwrap.dedent(f'''
        import importlib, triton
        from triton.backends.compiler import GPUTarget
        from triton.compiler import ASTSource
        for name, (index, sig) in {sigs!r}.items():
            gen = importlib.import_module("gen_" + name)
            fn = getattr(gen, "f%d_kernel" % index)
            triton.compile(ASTSource(fn=fn, signature=sig, constexprs={{}}),
                           target=GPUTarget("cuda", 90, 32))
            print(name)
    ''')
    env = {"TRITON_INTERPRET": None, "TRITON_DEFAULT_FP_FUSION": "1",
           "TRITON_CACHE_DIR": str(tmp_path / "triton-cache")}
    assert _subprocess(script, tmp_path, env) == list(progs)
