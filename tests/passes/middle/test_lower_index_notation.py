"""lower-index-notation on hand-built IR: structure of the result, and its values.

Each program is evaluated three ways and compared: the comprehension itself by
a direct (grid-materializing) reference evaluator, the lowered program by a
small NumPy evaluator of the tensor-core prims, and a plain NumPy formula.
Both evaluators live here, for tests only; the real interpreter is elsewhere.
"""

from __future__ import annotations

from string import ascii_letters
from typing import Callable

import numpy as np
import pytest

from linnet.ir import tensor as ir
from linnet.ir.printer import print_program
from linnet.ir.verify import verify
from linnet.passes.middle.lower_index_notation import lower_index_notation

# ------------------------------------------------------------- IR building

NP = {"bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
      "f16": np.float16, "f32": np.float32, "f64": np.float64}


def T(*shape: int, dtype: str = "f32") -> ir.TType:
    return ir.TType(tuple(shape), dtype)


def V(name: str, *shape: int, dtype: str = "f32") -> ir.Var:
    return ir.Var(name, T(*shape, dtype=dtype))


def lit(value, dtype: str = "f32") -> ir.Lit:
    return ir.Lit(value, T(dtype=dtype))


def at(x: ir.Atom, *indices: str) -> ir.IxAccess:
    return ir.IxAccess(x, indices, x.type.dtype)


def sc(x: ir.Atom) -> ir.IxScalar:
    return ir.IxScalar(x, x.type.dtype)


def ix(op: str, *args: ir.IxExpr, dtype: str | None = None) -> ir.IxPrim:
    if dtype is None:
        dtype = "bool" if op in ("eq", "ne", "lt", "le", "gt", "ge") else args[-1].dtype
    return ir.IxPrim(op, args, dtype)


def red(op: str, axes: dict[str, int], body: ir.IxExpr) -> ir.IxReduce:
    return ir.IxReduce(op, tuple(axes.items()), body, body.dtype)


def comp(outputs: dict[str, int], body: ir.IxExpr) -> ir.Comprehension:
    return ir.Comprehension(tuple(outputs.items()), body, T(*outputs.values(), dtype=body.dtype))


class Body:
    """Collects bindings: `b.let("y", expr)` binds and returns the Var."""

    def __init__(self) -> None:
        self.binds: list[ir.Bind] = []

    def let(self, name: str, e: ir.Expr) -> ir.Var:
        v = ir.Var(name, e.type)
        self.binds.append(ir.Bind(v, e))
        return v

    def block(self, result: ir.Atom) -> ir.Block:
        return ir.Block(tuple(self.binds), result)


def program(params: tuple[ir.Var, ...], body: Body, result: ir.Atom,
            extra: tuple[ir.Func, ...] = ()) -> ir.Program:
    main = ir.Func("main", "entry", params, body.block(result))
    return ir.Program((main,) + extra, "main")


# ------------------------------------------------------------- evaluators


def run(p: ir.Program, *inputs) -> object:
    """Evaluate the entry of p on NumPy inputs."""
    f = p.func(p.entry)
    return run_func(p, f, [np.asarray(x) for x in inputs])


def run_func(p: ir.Program, f: ir.Func, args: list) -> object:
    return run_block(p, f.body, {v.name: a for v, a in zip(f.params, args)})


def run_block(p: ir.Program, b: ir.Block, env: dict) -> object:
    env = dict(env)
    for bind in b.binds:
        env[bind.var.name] = run_expr(p, bind.expr, env)
    return value(b.result, env)


def value(a: ir.Atom, env: dict) -> object:
    if isinstance(a, ir.Lit):
        return np.asarray(a.value, dtype=NP[a.type.dtype])
    return env[a.name]


def run_expr(p: ir.Program, e: ir.Expr, env: dict) -> object:
    if isinstance(e, (ir.Var, ir.Lit)):
        return value(e, env)
    if isinstance(e, ir.Prim):
        args = [value(a, env) for a in e.args]
        out = PRIM_EVAL[e.op](args, e)
        return np.asarray(out).astype(NP[e.type.dtype], copy=False)
    if isinstance(e, ir.Einsum):
        args = [value(a, env) for a in e.args]
        return np.asarray(np.einsum(e.spec, *args)).astype(NP[e.type.dtype])
    if isinstance(e, ir.Call):
        return run_func(p, p.func(e.callee), [value(a, env) for a in e.args])
    if isinstance(e, ir.MakeTuple):
        return tuple(value(a, env) for a in e.items)
    if isinstance(e, ir.GetItem):
        return value(e.tup, env)[e.index]
    if isinstance(e, ir.If):
        return run_block(p, e.then if value(e.cond, env) else e.orelse, env)
    if isinstance(e, ir.Loop):
        return run_loop(p, e, env)
    if isinstance(e, ir.While):
        return run_while(p, e, env)
    if isinstance(e, ir.Comprehension):
        return run_comprehension(e, env)
    raise NotImplementedError(type(e).__name__)


def run_loop(p: ir.Program, e: ir.Loop, env: dict) -> tuple:
    state = [value(a, env) for a in e.init]
    for i in range(e.lo, e.hi):
        inner = {**env, e.index.name: np.int64(i), **{v.name: s for v, s in zip(e.carried, state)}}
        out = run_block(p, e.body, inner)
        state = list(out) if isinstance(out, tuple) else [out]
    return tuple(state)


def run_while(p: ir.Program, e: ir.While, env: dict) -> tuple:
    state = [value(a, env) for a in e.init]
    while True:
        inner = {**env, **{v.name: s for v, s in zip(e.carried, state)}}
        if not run_block(p, e.cond, inner):
            return tuple(state)
        out = run_block(p, e.body, inner)
        state = list(out) if isinstance(out, tuple) else [out]


def _diagonal(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    letters = list(ascii_letters[:x.ndim])
    for a in axes[1:]:
        letters[a] = letters[axes[0]]
    rest = [c for k, c in enumerate(letters) if k not in axes]
    return np.einsum("".join(letters) + "->" + "".join(rest) + letters[axes[0]], x)


_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
           "any": np.any, "all": np.all}
_ELEMENTWISE: dict[str, Callable] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "min": np.minimum, "max": np.maximum, "and": np.logical_and, "or": np.logical_or,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "neg": np.negative, "not": np.logical_not,
    "abs": np.abs, "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh,
    "sin": np.sin, "cos": np.cos, "rsqrt": lambda x: 1 / np.sqrt(x), "select": np.where,
}
PRIM_EVAL: dict[str, Callable] = {
    **{op: (lambda f: lambda a, e: f(*a))(f) for op, f in _ELEMENTWISE.items()},
    "cast": lambda a, e: a[0].astype(NP[e.type.dtype]),
    "broadcast_to": lambda a, e: np.broadcast_to(a[0], e.type.shape),
    "reshape": lambda a, e: a[0].reshape(e.type.shape),
    "permute": lambda a, e: np.transpose(a[0], e.attr("perm")),
    "diagonal": lambda a, e: _diagonal(a[0], e.attr("axes")),
    "fill": lambda a, e: np.full(e.type.shape, a[0]),
    "iota": lambda a, e: np.arange(e.type.shape[0]),
    "cumsum": lambda a, e: np.cumsum(a[0], axis=e.attr("axis")),
    "concat": lambda a, e: np.concatenate(a, axis=e.attr("axis")),
    **{f"reduce_{op}": (lambda f: lambda a, e: f(a[0], axis=e.attr("axes")))(f)
       for op, f in _REDUCE.items()},
}


def run_comprehension(e: ir.Comprehension, env: dict) -> np.ndarray:
    """The comprehension's meaning, directly: every index a grid axis, nothing clever."""
    labels = tuple(n for n, _ in e.outputs)
    out = run_ix(e.body, labels, env)
    return np.broadcast_to(out, e.type.shape).astype(NP[e.type.dtype])


def run_ix(e: ir.IxExpr, labels: tuple[str, ...], env: dict) -> np.ndarray:
    """e over a grid with one axis per label (size 1 where e does not depend on it);
    a reduction appends its axes, and an access reads the innermost axis of a name."""
    rank = len(labels)
    if isinstance(e, ir.IxAccess):
        x = value(e.tensor, env)
        if not e.indices:
            return np.reshape(x, (1,) * rank)
        grids = []
        for name, extent in zip(e.indices, x.shape):
            shape = [1] * rank
            shape[rank - 1 - labels[::-1].index(name)] = extent
            grids.append(np.arange(extent).reshape(shape))
        return x[tuple(grids)]
    if isinstance(e, ir.IxScalar):
        return np.reshape(value(e.value, env), (1,) * rank)
    if isinstance(e, ir.IxPrim):
        args = [run_ix(a, labels, env) for a in e.args]
        return np.asarray(PRIM_EVAL[e.op](args, e) if e.op != "cast"
                          else args[0]).astype(NP[e.dtype])
    names = tuple(n for n, _ in e.axes)
    body = run_ix(e.body, labels + names, env)
    full = body.shape[:rank] + tuple(k for _, k in e.axes)
    body = np.broadcast_to(body, np.broadcast_shapes(body.shape, (1,) * rank + full[rank:]))
    reduced = _REDUCE[e.op](body.astype(NP[e.dtype]), axis=tuple(range(rank, rank + len(names))))
    return np.asarray(reduced).astype(NP[e.dtype])


# ------------------------------------------------------------------ checks


def lowered(p: ir.Program) -> ir.Program:
    """Lower p, checking the languages before and after."""
    assert verify(p, "tensor") == [], print_program(p)
    out = lower_index_notation(p)
    assert verify(out, "tensor-core") == [], print_program(out)
    return out


def all_exprs(p: ir.Program) -> list[ir.Expr]:
    found: list[ir.Expr] = []

    def walk(b: ir.Block) -> None:
        for bind in b.binds:
            found.append(bind.expr)
            for inner in (getattr(bind.expr, k, None) for k in ("then", "orelse", "body", "cond")):
                if isinstance(inner, ir.Block):
                    walk(inner)

    for f in p.funcs:
        while f is not None:
            walk(f.body)
            f = f.grad
    return found


def prims(p: ir.Program, op: str | None = None) -> list[ir.Prim]:
    return [e for e in all_exprs(p) if isinstance(e, ir.Prim) and op in (None, e.op)]


def einsums(p: ir.Program) -> list[ir.Einsum]:
    return [e for e in all_exprs(p) if isinstance(e, ir.Einsum)]


def max_size(p: ir.Program) -> int:
    """The most elements any bound tensor has."""
    return max((int(np.prod(e.type.shape)) for e in all_exprs(p)
                if isinstance(e.type, ir.TType)), default=0)


def check_values(p: ir.Program, low: ir.Program, want: np.ndarray, *inputs,
                 rtol: float = 1e-5) -> None:
    direct, got = run(p, *inputs), run(low, *inputs)
    np.testing.assert_allclose(direct, want, rtol=rtol, atol=1e-6)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-6)
    assert got.shape == want.shape and got.dtype == want.dtype


RNG = np.random.default_rng(0)


def rand(*shape: int, dtype=np.float32) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


# -------------------------------------------------------------------- tests

M, K, N = 4, 5, 3


def matmul_program(scale: ir.IxExpr | None = None, order: str = "ab") -> ir.Program:
    a, b = V("a", M, K), V("b", K, N)
    factors = [at(a, "m", "k"), at(b, "k", "n")]
    if order == "ba":
        factors.reverse()
    prod = ix("mul", *factors)
    if scale is not None:
        prod = ix("mul", scale, prod)
    body = Body()
    c = body.let("c", comp({"m": M, "n": N}, red("sum", {"k": K}, prod)))
    return program((a, b), body, c)


def test_matmul_is_one_einsum() -> None:
    p = matmul_program()
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["mk,kn->mn"]
    assert einsums(low)[0].acc == "f32"
    assert prims(low) == []
    assert low.funcs[0].body.binds[-1].var.name == "c"  # the einsum keeps the binding's name
    a, b = rand(M, K), rand(K, N)
    check_values(p, low, a @ b, a, b)


def test_matmul_operand_order_does_not_matter() -> None:
    low = lowered(matmul_program(order="ba"))
    assert [e.spec for e in einsums(low)] == ["kn,mk->mn"]
    assert max_size(low) < M * K * N


def test_scalar_factor_multiplies_after_the_einsum() -> None:
    p = matmul_program(scale=sc(lit(2.0)))
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["mk,kn->mn"]
    (scale,) = prims(low)
    assert scale.op == "mul" and scale.args[1] == lit(2.0) and scale.type == T(M, N)
    assert max_size(low) == M * N
    a, b = rand(M, K), rand(K, N)
    check_values(p, low, 2.0 * (a @ b), a, b)


def test_scalar_variable_factor_deep_in_the_product() -> None:
    a, b, alpha = V("a", M, K), V("b", K, N), V("alpha")
    prod = ix("mul", at(a, "m", "k"), ix("mul", sc(alpha), at(b, "k", "n")))
    body = Body()
    c = body.let("c", comp({"m": M, "n": N}, red("sum", {"k": K}, prod)))
    p = program((a, b, alpha), body, c)
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["mk,kn->mn"]
    x, y = rand(M, K), rand(K, N)
    check_values(p, low, np.float32(-1.5) * (x @ y), x, y, np.float32(-1.5))


def test_pack_style_contraction() -> None:
    x, w = V("x", 2, 3, K), V("w", N, K)
    body = Body()
    prod = ix("mul", at(x, "s0", "s1", "i"), at(w, "o", "i"))
    y = body.let("y", comp({"s0": 2, "s1": 3, "o": N}, red("sum", {"i": K}, prod)))
    p = program((x, w), body, y)
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["abi,oi->abo"]
    assert prims(low) == []
    xs, ws = rand(2, 3, K), rand(N, K)
    check_values(p, low, np.einsum("abi,oi->abo", xs, ws), xs, ws)


def test_three_factor_contraction_keeps_every_factor() -> None:
    a, b, s = V("a", M, K), V("b", K, N), V("s", M)
    prod = ix("mul", ix("mul", at(s, "m"), at(a, "m", "k")), at(b, "k", "n"))
    body = Body()
    c = body.let("c", comp({"m": M, "n": N}, red("sum", {"k": K}, prod)))
    p = program((a, b, s), body, c)
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["m,mk,kn->mn"]
    xa, xb, xs = rand(M, K), rand(K, N), rand(M)
    check_values(p, low, xs[:, None] * (xa @ xb), xa, xb, xs)


def test_transpose_is_one_permute() -> None:
    x = V("x", M, N)
    body = Body()
    t = body.let("t", comp({"j": N, "i": M}, at(x, "i", "j")))
    p = program((x,), body, t)
    low = lowered(p)
    (perm,) = low.funcs[0].body.binds
    assert perm.var.name == "t" and perm.expr.op == "permute"
    assert perm.expr.attr("perm") == (1, 0)
    xs = rand(M, N)
    check_values(p, low, xs.T, xs)


def test_plain_copy_binds_the_atom() -> None:
    x = V("x", M, N)
    body = Body()
    t = body.let("t", comp({"j": N, "i": M}, at(x, "i", "j")))
    y = body.let("y", comp({"j": N, "i": M}, at(t, "j", "i")))
    low = lowered(program((x,), body, y))
    assert [b.var for b in low.funcs[0].body.binds] == [t, y]
    assert low.funcs[0].body.binds[1] == ir.Bind(y, t)


def test_diagonal() -> None:
    x = V("x", N, N)
    body = Body()
    d = body.let("d", comp({"i": N}, at(x, "i", "i")))
    p = program((x,), body, d)
    low = lowered(p)
    (diag,) = prims(low)
    assert diag.op == "diagonal" and diag.attr("axes") == (0, 1)
    xs = rand(N, N)
    check_values(p, low, np.diagonal(xs), xs)


def test_diagonal_of_three_axes_then_transposed() -> None:
    x = V("x", N, M, N)
    body = Body()
    d = body.let("d", comp({"i": N, "j": M}, ix("exp", at(x, "i", "j", "i"))))
    p = program((x,), body, d)
    low = lowered(p)
    assert [q.op for q in prims(low)] == ["diagonal", "exp", "permute"]
    xs = rand(N, M, N)
    check_values(p, low, np.exp(np.einsum("iji->ij", xs)), xs)


def test_trace_uses_diagonal_then_reduces() -> None:
    x = V("x", N, N)
    body = Body()
    t = body.let("t", comp({}, red("sum", {"i": N}, at(x, "i", "i"))))
    p = program((x,), body, t)
    low = lowered(p)
    assert [q.op for q in prims(low)] == ["diagonal", "reduce_sum"]
    xs = rand(N, N)
    check_values(p, low, np.float32(np.trace(xs)), xs)


def softmax_program(r: int, c: int) -> ir.Program:
    x = V("x", r, c)
    body = Body()
    top = body.let("top", comp({"r": r}, red("max", {"c": c}, at(x, "r", "c"))))
    e = body.let("e", comp({"r": r, "c": c},
                           ix("exp", ix("sub", at(x, "r", "c"), at(top, "r")))))
    total = body.let("total", comp({"r": r}, red("sum", {"c": c}, at(e, "r", "c"))))
    y = body.let("y", comp({"r": r, "c": c}, ix("div", at(e, "r", "c"), at(total, "r"))))
    return program((x,), body, y)


def test_softmax() -> None:
    p = softmax_program(6, 7)
    low = lowered(p)
    ops = [q.op for q in prims(low)]
    assert ops == ["reduce_max", "reshape", "sub", "exp", "reduce_sum", "reshape", "div"]
    assert prims(low, "reduce_max")[0].attr("axes") == (1,)
    assert prims(low, "reshape")[0].type == T(6, 1)
    xs = rand(6, 7)
    ex = np.exp(xs - xs.max(axis=1, keepdims=True))
    check_values(p, low, ex / ex.sum(axis=1, keepdims=True), xs)


def test_any_reduces_bools() -> None:
    x = V("x", M, N)
    body = Body()
    has = body.let("has", comp({"r": M}, red("any", {"c": N}, ix("gt", at(x, "r", "c"),
                                                                    sc(lit(0.5))))))
    p = program((x,), body, has)
    low = lowered(p)
    assert [q.op for q in prims(low)] == ["gt", "reduce_any"]
    assert prims(low, "reduce_any")[0].type == T(M, dtype="bool")
    xs = rand(M, N)
    xs[1] = -1.0
    check_values(p, low, (xs > 0.5).any(axis=1), xs)


def test_nested_reduction_max_of_matmul() -> None:
    a, b = V("a", M, K), V("b", K, N)
    inner = red("sum", {"k": K}, ix("mul", at(a, "m", "k"), at(b, "k", "n")))
    body = Body()
    y = body.let("y", comp({"m": M}, red("max", {"n": N}, inner)))
    p = program((a, b), body, y)
    low = lowered(p)
    assert [e.spec for e in einsums(low)] == ["mk,kn->mn"]
    (mx,) = prims(low)
    assert mx.op == "reduce_max" and mx.attr("axes") == (1,)
    xa, xb = rand(M, K), rand(K, N)
    check_values(p, low, (xa @ xb).max(axis=1), xa, xb)


def test_reused_and_shadowed_reduction_names() -> None:
    a, b = V("a", M, 3), V("b", M, 5)
    sibling = ix("add", red("sum", {"k": 3}, at(a, "m", "k")),
                 red("sum", {"k": 5}, at(b, "m", "k")))
    shadow = red("sum", {"k": 3}, ix("add", at(a, "m", "k"), red("sum", {"k": 5}, at(b, "m", "k"))))
    body = Body()
    y1 = body.let("y1", comp({"m": M}, sibling))
    y2 = body.let("y2", comp({"m": M}, shadow))
    y = body.let("y", ir.MakeTuple((y1, y2), ir.TupleTy((y1.type, y2.type))))
    p = program((a, b), body, y)
    low = lowered(p)
    xa, xb = rand(M, 3), rand(M, 5)
    want1 = xa.sum(1) + xb.sum(1)
    want2 = xa.sum(1) + 3 * xb.sum(1)
    for got in (run(p, xa, xb), run(low, xa, xb)):
        np.testing.assert_allclose(got[0], want1, rtol=1e-5)
        np.testing.assert_allclose(got[1], want2, rtol=1e-5)


def test_elementwise_alignment_and_broadcast_of_missing_output() -> None:
    x, y = V("x", M), V("y", N)
    body = Body()
    z = body.let("z", comp({"i": N, "j": M}, ix("sub", at(x, "j"), at(y, "i"))))
    w = body.let("w", comp({"i": M, "j": N}, ix("neg", at(x, "i"))))
    out = body.let("out", ir.MakeTuple((z, w), ir.TupleTy((z.type, w.type))))
    p = program((x, y), body, out)
    low = lowered(p)
    assert prims(low, "broadcast_to")[0].type == T(M, N)
    xs, ys = rand(M), rand(N)
    got_p, got_low = run(p, xs, ys), run(low, xs, ys)
    for got in (got_p, got_low):
        np.testing.assert_allclose(got[0], xs[None, :] - ys[:, None], rtol=1e-6)
        np.testing.assert_allclose(got[1], np.broadcast_to(-xs[:, None], (M, N)), rtol=1e-6)


def test_reduced_index_the_body_ignores_still_counts() -> None:
    x = V("x", M)
    body = Body()
    y = body.let("y", comp({"i": M}, red("sum", {"j": 4}, at(x, "i"))))
    p = program((x,), body, y)
    low = lowered(p)
    xs = rand(M)
    check_values(p, low, 4 * xs, xs)


def test_integer_contraction_accumulates_in_its_dtype() -> None:
    a, b = V("a", M, K, dtype="i32"), V("b", K, N, dtype="i32")
    body = Body()
    prod = ix("mul", at(a, "m", "k"), at(b, "k", "n"))
    c = body.let("c", comp({"m": M, "n": N}, red("sum", {"k": K}, prod)))
    p = program((a, b), body, c)
    low = lowered(p)
    (e,) = einsums(low)
    assert e.acc == "i32" and e.type == T(M, N, dtype="i32")
    xa = RNG.integers(-9, 9, (M, K)).astype(np.int32)
    xb = RNG.integers(-9, 9, (K, N)).astype(np.int32)
    check_values(p, low, xa @ xb, xa, xb)


def test_everything_else_is_copied_and_nested_blocks_lowered() -> None:
    x, flag = V("x", M, N), V("flag", dtype="bool")
    inner = Body()
    t = inner.let("t", comp({"j": N, "i": M}, at(x, "i", "j")))
    other = Body()
    u = other.let("u", comp({"j": N, "i": M}, ix("neg", at(x, "i", "j"))))
    body = Body()
    keep = body.let("keep", ir.Prim("exp", (x,), x.type))
    r = body.let("r", ir.If(flag, inner.block(t), other.block(u), T(N, M)))
    grad_x = V("gx", M, N)
    gbody = Body()
    g = gbody.let("g", comp({"i": M, "j": N}, ix("mul", at(grad_x, "i", "j"), sc(lit(3.0)))))
    helper = ir.Func("helper", "op", (grad_x,), gbody.block(g),
                     grad=ir.Func("helper_grad", "grad", (grad_x,), gbody.block(g)))
    p = program((x, flag), body, r, extra=(helper,))
    low = lowered(p)
    assert low.funcs[0].body.binds[0] is p.funcs[0].body.binds[0]  # untouched, shared
    assert not any(isinstance(e, ir.Comprehension) for e in all_exprs(low))
    assert "for [" not in print_program(low)
    xs = rand(M, N)
    check_values(p, low, xs.T, xs, np.bool_(True))
    check_values(p, low, -xs.T, xs, np.bool_(False))


def test_bigger_random_shapes_agree() -> None:
    for seed in range(3):
        rng = np.random.default_rng(seed)
        m, k, n = (int(v) for v in rng.integers(1, 7, 3))
        p = _matmul(m, k, n)
        low = lowered(p)
        xa, xb = rand(m, k), rand(k, n)
        check_values(p, low, xa @ xb, xa, xb, rtol=1e-4)


def _matmul(m: int, k: int, n: int) -> ir.Program:
    a, b = V("a", m, k), V("b", k, n)
    body = Body()
    c = body.let("c", comp({"m": m, "n": n},
                           red("sum", {"k": k}, ix("mul", at(a, "m", "k"), at(b, "k", "n")))))
    return program((a, b), body, c)


def test_unbound_index_is_an_error() -> None:
    x = V("x", M, N)
    body = Body()
    y = body.let("y", comp({"i": M}, at(x, "i", "j")))
    with pytest.raises(ValueError, match="neither an output nor reduced"):
        lower_index_notation(program((x,), body, y))
