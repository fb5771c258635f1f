"""elaborate: checked surface programs -> tensor IR.

Two kinds of tests. The corpus tests elaborate every entry of `examples/` and
`tests/spec/valid/` (generic entries with small bindings that satisfy their
`where` clauses) and check the result's structure: the entry's result type is
the instance's concrete result type, every binding's type is its expression's,
names are unique, calls match their callees, index notation is well scoped.
The golden tests pin the translation of small programs construct by construct.
(No evaluator yet: these check structure and types, not values.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linnet.check.instance import analyze_program, binding_from_values
from linnet.check.types import TensorT, TupleT
from linnet.check.value_types import as_tuples, leaves
from linnet.ir import tensor as ir
from linnet.ir.walk import all_binds, expr_atoms, expr_blocks
from linnet.ir.printer import print_func, print_program
from linnet.passes.front.elaborate import elaborate
from linnet.passes.front.vocabulary import ElaborationError
from linnet.syntax.program import load_program
from linnet.syntax import tree as t

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "examples").glob("*.linnet")) + sorted(
    (ROOT / "tests" / "spec" / "valid").glob("*.linnet"))

# Small values for the generic entries of the corpus, satisfying their `where` clauses.
BINDINGS: dict[tuple[str, str], dict] = {
    ("matmul", "matmul_any"): {"dims": {"M": 5, "N": 6, "K": 7}},
    ("matmul", "matmul_bf16_any"): {"dims": {"M": 5, "N": 6, "K": 7}},
    ("matmul", "matmul_tf32_any"): {"dims": {"M": 5, "N": 6, "K": 7}},
    ("matmul", "matmul_bt_any"): {"dims": {"M": 5, "N": 6, "K": 7}},
    ("attention", "attention_any"): {"dims": {"B": 2, "H": 3, "L": 4, "S": 5, "D": 6}},
    ("attention", "attention_bf16_any"): {"dims": {"B": 2, "H": 3, "L": 4, "S": 5, "D": 6}},
    ("attention", "attention_causal_any"): {"dims": {"B": 2, "H": 3, "L": 4, "D": 6}},
    ("attention", "attention_causal_bf16_any"): {"dims": {"B": 2, "H": 3, "L": 4, "D": 6}},
    ("softmax", "softmax_any"): {"dims": {"R": 3, "C": 5}},
    ("layer_norm", "layer_norm_any"): {"dims": {"R": 3, "C": 5}},
    ("layer_norm", "layer_norm_bf16_any"): {"dims": {"R": 3, "C": 768}},
    ("mlp", "predict"): {"dims": {"N": 4, "I": 2, "H": 8, "O": 3}},
    ("mlp", "loss"): {"dims": {"N": 4, "I": 2, "H": 8, "O": 3}},
    ("52_entries", "generic"): {"dims": {"N": 4}},
    ("52_entries", "both"): {"dims": {"R": 2, "C": 3}},
    ("61_kernel_dtype_generic", "any_dtype"): {"dims": {"N": 8}, "dtypes": {"T": "bf16"}},
    ("76_index_notation_positions", "positions"): {"dims": {"R": 3, "C": 5}},
    ("110_next_pow2", "tiles"): {"dims": {"R": 3, "C": 5}},
    ("178_strided_ellipsis", "even_axis"): {"dims": {"D": 6}},
    ("181_gathers", "lookup"): {"dims": {"B": 2, "S": 3, "V": 5, "H": 4}},
    ("181_gathers", "pick"): {"dims": {"N": 3, "R": 4, "C": 5}},
    ("181_gathers", "weighted"): {"dims": {"K": 4, "V": 6}},
    ("181_gathers", "packed"): {"dims": {"B": 2, "S": 3, "V": 5, "H": 4}},
    ("181_gathers", "embedding_loss"): {"dims": {"B": 3, "V": 5, "H": 4}},
    ("181_gathers", "embed_rows_of"): {"dims": {"N": 3, "V": 5}},
}


# ------------------------------------------------------------------ helpers


def analysis_of(path: str | Path | None = None, text: str | None = None):
    analysis = analyze_program(load_program(str(path or "test.linnet"), text))
    assert analysis.diagnostics == []
    return analysis


def entries(analysis) -> list[t.Function]:
    return [i for i in analysis.program.root_module.items
            if isinstance(i, t.Function) and i.kind == "entry"]


def binding_for(entry: t.Function, values: dict):
    return binding_from_values(entry, values.get("dims", {}), values.get("dtypes", {}),
                               values.get("packs", {}))


def elab(text: str, entry: str = "main", **values) -> ir.Program:
    analysis = analysis_of(text=text)
    item = analysis.root.globals.items[entry]
    program = elaborate(analysis, item, binding_for(item, values))
    check_structure(program)
    return program


def body_text(program: ir.Program, name: str | None = None) -> str:
    return print_func(program.func(name or program.entry))


def ir_type(ty) -> ir.Ty:
    """A concrete checker type as an IR type (a struct is the tuple of its fields)."""
    ty = as_tuples(ty)
    if isinstance(ty, TupleT):
        return ir.TupleTy(tuple(ir_type(x) for x in ty.items))
    assert isinstance(ty, TensorT)
    return ir.TType(tuple(d.as_int() for d in ty.dims), ty.dtype)


def exprs(program: ir.Program, kind: type) -> list:
    found = []
    for f in program.funcs:
        for g in (f, f.grad) if f.grad else (f,):
            found += [b.expr for b in all_binds(g.body) if isinstance(b.expr, kind)]
    return found


# ------------------------------------------------------- structural checks


def check_structure(program: ir.Program) -> None:
    """What every elaborated program must satisfy (a compact verifier)."""
    names = [f.name for f in program.funcs]
    assert len(set(names)) == len(names)
    assert program.entry in names
    funcs = {f.name: f for f in program.funcs}
    for f in program.funcs:
        assert re.fullmatch(r"[A-Za-z0-9_]+", f.name), f.name
        assert f.kind in ("entry", "op", "fn")
        _check_func(f, funcs)
        if f.grad is not None:
            assert f.kind == "op" and f.grad.kind == "grad"
            assert f.grad.params[:len(f.params)] == f.params
            _check_func(f.grad, funcs)


def _check_func(f: ir.Func, funcs: dict[str, ir.Func]) -> None:
    seen = {p.name for p in f.params}
    assert len(seen) == len(f.params)
    _check_block(f.body, {p.name: p for p in f.params}, seen, funcs)


def _check_block(block: ir.Block, scope: dict, seen: set, funcs: dict) -> None:
    scope = dict(scope)
    for b in block.binds:
        _check_expr(b.expr, scope, seen, funcs)
        assert b.var.type == b.expr.type, (b.var, b.expr)
        assert b.var.name not in seen, f"{b.var.name} bound twice"
        seen.add(b.var.name)
        scope[b.var.name] = b.var
    _check_atom(block.result, scope)


def _check_atom(a: ir.Atom, scope: dict) -> None:
    if isinstance(a, ir.Var):
        assert scope.get(a.name) == a, f"{a.name} used out of scope or with another type"
    else:
        assert isinstance(a, ir.Lit) and a.type.shape == ()


def _check_expr(e: ir.Expr, scope: dict, seen: set, funcs: dict) -> None:
    for a in expr_atoms(e):
        _check_atom(a, scope)
    if isinstance(e, ir.Call):
        callee = funcs[e.callee]
        assert tuple(a.type for a in e.args) == tuple(p.type for p in callee.params)
        assert e.type == callee.body.result.type
    if isinstance(e, ir.Prim):
        arity, attrs = ir.PRIMS[e.op]
        assert arity is None or arity == len(e.args), e
        assert {k for k, _ in e.attrs} <= set(attrs), e
    if isinstance(e, ir.GetItem):
        assert e.type == e.tup.type.items[e.index]
    if isinstance(e, ir.Comprehension):
        assert tuple(k for _, k in e.outputs) == e.type.shape
        assert _ix_check(e.body, dict(e.outputs), scope) == e.type.dtype
    if isinstance(e, ir.If):
        assert e.cond.type == ir.TType((), "bool")
    inner = dict(scope)
    if isinstance(e, (ir.Loop, ir.While)):
        assert len(e.carried) == len(e.init)
        assert tuple(v.type for v in e.carried) == tuple(a.type for a in e.init)
        for v in e.carried:
            assert v.name not in seen
            seen.add(v.name)
            inner[v.name] = v
    if isinstance(e, ir.Loop):
        assert e.index.type == ir.TType((), "i64") and e.index.name not in seen
        seen.add(e.index.name)
        inner[e.index.name] = e.index
        step = tuple(v.type for v in e.carried)
        stacked = e.type.items[len(e.carried):]
        assert e.type.items[:len(e.carried)] == step
        assert len(stacked) == e.yields  # one stack per yielded value
        body_items = e.body.result.type.items
        assert body_items[:len(step)] == step
        for stack, row in zip(stacked, body_items[len(step):]):
            assert stack == ir.TType((e.hi - e.lo,) + row.shape, row.dtype)
    if isinstance(e, ir.While):
        assert e.cond.result.type == ir.TType((), "bool")
        assert e.body.result.type == e.type
    for block in expr_blocks(e):
        _check_block(block, inner, seen, funcs)
    if isinstance(e, ir.If):
        assert e.then.result.type == e.orelse.result.type == e.type


def _ix_check(e: ir.IxExpr, extents: dict[str, int], scope: dict) -> str:
    """Index expressions: accesses name bound indices with matching extents; dtypes."""
    if isinstance(e, ir.IxAccess):
        _check_atom(e.tensor, scope)
        assert len(e.indices) == e.tensor.type.rank
        for name, extent in zip(e.indices, e.tensor.type.shape):
            assert extents[name] == extent, (name, extent)
        assert e.dtype == e.tensor.type.dtype
    elif isinstance(e, ir.IxScalar):
        _check_atom(e.value, scope)
        assert e.value.type.shape == () and e.dtype == e.value.type.dtype
    elif isinstance(e, ir.IxPrim):
        for a in e.args:
            _ix_check(a, extents, scope)
    elif isinstance(e, ir.IxGather):
        _check_atom(e.tensor, scope)
        assert len(e.positions) == e.tensor.type.rank
        for position, extent in zip(e.positions, e.tensor.type.shape):
            if isinstance(position, str):
                assert extents[position] == extent, (position, extent)
            else:
                _ix_check(position, extents, scope)
        assert e.dtype == e.tensor.type.dtype
    else:
        inner = dict(extents)
        for name, extent in e.axes:
            assert name not in extents, f"index {name} rebound"
            inner[name] = extent
        assert _ix_check(e.body, inner, scope) == e.dtype
    return e.dtype


# ------------------------------------------------------------------ corpus


def _corpus_cases():
    for path in CORPUS:
        analysis = analysis_of(path)
        for entry in entries(analysis):
            values = BINDINGS.get((path.stem, entry.name))
            if values is None and not entry.generics:
                values = {}
            yield path, analysis, entry, values


def test_corpus_has_entries_and_bindings_cover_80_percent() -> None:
    cases = list(_corpus_cases())
    bound = [c for c in cases if c[3] is not None]
    assert len(cases) >= 70
    assert len(bound) / len(cases) >= 0.8


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_entry_elaborates_with_its_concrete_result_type(path: Path) -> None:
    analysis = analysis_of(path)
    found = entries(analysis)
    if path.parent.name == "valid" and not found:
        pytest.skip("no entry")
    for entry in found:
        values = BINDINGS.get((path.stem, entry.name), {} if not entry.generics else None)
        assert values is not None, f"no binding for generic entry {entry.name}"
        binding = binding_for(entry, values)
        program = elaborate(analysis, entry, binding)
        check_structure(program)
        instance = analysis.instantiate(entry, binding)
        main = program.func(program.entry)
        assert main.kind == "entry"
        assert main.body.result.type == ir_type(instance.signature.result)
        assert tuple(p.type for p in main.params) == tuple(  # a struct input: its fields
            ir_type(leaf) for ty in instance.signature.params for leaf in leaves(ty))


def test_every_corpus_entry_elaborates() -> None:
    done = total = 0
    for path, analysis, entry, values in _corpus_cases():
        total += 1
        if values is not None:
            elaborate(analysis, entry, binding_for(entry, values))
            done += 1
    assert done == total  # every entry of the corpus, generic ones included


# ------------------------------------------------------------------ golden

SOFTMAX = """module m
op softmax<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    let top[r] = max[c] x[r, c]
    let e[r, c] = exp(x[r, c] - top[r])
    let total[r] = sum[c] e[r, c]
    let y[r, c] = e[r, c] / total[r]
    return y
}
entry main(x: Tensor[8, 40; f32]) -> Tensor[8, 40; f32] {
    return softmax(x)
}
"""


def test_softmax_op_is_four_comprehensions() -> None:
    program = elab(SOFTMAX)
    op = program.func("softmax__R8_C40")
    assert (op.kind, op.source) == ("op", "op softmax<R=8, C=40>")
    comps = [b for b in op.body.binds if isinstance(b.expr, ir.Comprehension)]
    assert [(b.var.name, b.expr.outputs) for b in comps] == [
        ("top", (("r", 8),)), ("e", (("r", 8), ("c", 40))),
        ("total", (("r", 8),)), ("y", (("r", 8), ("c", 40)))]
    text = print_func(op)
    assert "top: f32[8] = for [r:8] max<f32>[c:40] x[r, c]" in text
    assert "e: f32[8, 40] = for [r:8, c:40] exp(sub(x[r, c], top[r]))" in text
    assert "total: f32[8] = for [r:8] sum<f32>[c:40] e[r, c]" in text
    assert "y: f32[8, 40] = for [r:8, c:40] div(e[r, c], total[r])" in text
    assert op.body.result.name == "y"
    main = program.func("main")
    assert main.body.binds[0].expr == ir.Call("softmax__R8_C40", main.params,
                                               ir.TType((8, 40), "f32"))


def test_literal_takes_the_dtype_of_the_operand_it_meets() -> None:
    program = elab("""module m
entry main(x: f32, h: Tensor[3; bf16], i: i32) -> (f32, Tensor[3; bf16], i32, i64, f64) {
    let d = 42
    let f = 0.5
    return (x * 2, h + 1.5, i - 3, d, f)
}
""")
    text = body_text(program)
    assert "mul(x, 2:f32)" in text
    assert "add(h, 1.5:bf16)" in text
    assert "sub(i, 3:i32)" in text
    assert "f: f64[] = 0.5:f64" in text  # a float `let` is an f64 scalar
    result = program.func("main").body.binds[-1].expr
    assert isinstance(result, ir.MakeTuple)
    assert result.items[3] == ir.Lit(42, ir.TType((), "i64"))  # `let d = 42` stays compile-time


def test_compile_time_integers_fold_exactly() -> None:
    program = elab("""module m
const TILE = 4
entry main<N: Dim>(x: Tensor[N; f32]) -> (i32, i64, Tensor[N; f32]) {
    let k: i32 = (N + TILE - 1) / TILE * TILE - 7 / 2 + min(N, 3)
    let n = -7 % 3
    return (k, n, x * cast<f32>(N))
}
""", dims={"N": 10})
    text = body_text(program)
    assert "k: i32[] = 12:i32" in text  # (10 + 3) / 4 * 4 - 3 + 3, truncating
    assert "-1:i64" in text            # -7 % 3 truncates toward zero
    assert "cast(10:i64)" in text


def test_for_with_a_var_is_a_loop_carrying_exactly_that_var() -> None:
    program = elab("""module m
entry main(x: Tensor[4; f32], xs: Tensor[6, 4; f32]) -> Tensor[4; f32] {
    var acc = x
    var unused = x
    for t in 0..6 {
        let row = xs[t]
        acc = acc + row * unused
    }
    return acc
}
""")
    (loop,) = exprs(program, ir.Loop)
    assert (loop.lo, loop.hi, loop.yields) == (0, 6, False)
    assert [v.name for v in loop.carried] == ["acc_1"]
    assert [a.name for a in loop.init] == ["acc"]
    assert loop.index == ir.Var("t", ir.TType((), "i64"))
    assert loop.type == ir.TupleTy((ir.TType((4,), "f32"),))
    dyn = loop.body.binds[0].expr
    assert (dyn.op, dyn.args) == ("dyn_index", (ir.Var("xs", ir.TType((6, 4), "f32")),
                                                loop.index))
    main = program.func("main")
    after = main.body.binds[-1]
    assert after.expr == ir.GetItem(main.body.binds[-2].var, 0, ir.TType((4,), "f32"))
    assert main.body.result == after.var


def test_scan_is_a_loop_with_yields_and_carries() -> None:
    program = elab("""module m
entry main(xs: Tensor[5, 3; f32]) -> (Tensor[5, 3; f32], Tensor[3; f32]) {
    var running = fill<f32>([3], 1.0)
    let ys = for t in 2..7 {
        running = running * xs[t - 2, 0:3]
        yield running
    }
    return (ys, running)
}
""")
    (scan,) = exprs(program, ir.Loop)
    assert scan.yields and (scan.lo, scan.hi) == (2, 7)
    assert [v.name for v in scan.carried] == ["running_1"]
    assert scan.type == ir.TupleTy((ir.TType((3,), "f32"), ir.TType((5, 3), "f32")))
    text = body_text(program)
    assert "ys: f32[5, 3] = scan.1" in text
    assert "running_3: f32[3] = scan.0" in text


def test_while_carries_its_vars_and_has_a_cond_block() -> None:
    program = elab("""module m
entry main(limit: f32) -> (f32, i64) {
    var total: f32 = 1.0
    var steps = 0
    while total < limit && steps < 10 {
        total = total * 2.0
        steps = steps + 1
    }
    return (total, steps)
}
""")
    (loop,) = exprs(program, ir.While)
    assert [v.name for v in loop.carried] == ["total_1", "steps_1"]
    assert loop.cond.result.type == ir.TType((), "bool")
    cond = print_func(ir.Func("c", "fn", (), loop.cond))
    assert "lt(total_1, limit)" in cond and "lt(steps_1, 10:i64)" in cond


def test_static_for_unrolls_with_literal_counters() -> None:
    program = elab("""module m
entry main(x: Tensor[3, 4; f32]) -> f32 {
    var t: f32 = 0.0
    static for i in 0..3 {
        t = t + x[i, i + 1]
    }
    return t
}
""")
    assert exprs(program, ir.Loop) == []
    items = [b.expr.attr("items") for b in program.func("main").body.binds
             if isinstance(b.expr, ir.Prim) and b.expr.op == "index"]
    assert items == [(("at", 0), ("at", 1)), (("at", 1), ("at", 2)), (("at", 2), ("at", 3))]


def test_a_static_for_with_no_trips_compiles_and_leaves_the_carried_value() -> None:
    """At N = 0 the counter's facts `0 <= s < 0` contradict: the body, never unrolled, must
    not be checked under them (it reported `x[s]` as a negative index)."""
    import torch
    from linnet.pipeline import compile_source
    from linnet.torch.runtime import import_generated
    text = """module m
entry main<N: Dim>(x: Tensor[N, 3; f32]) -> Tensor[3; f32] {
    var acc = fill<f32>([3], 1.0)
    static for s in 0..N {
        acc = acc + x[s]
    }
    return acc
}
"""
    for n in (0, 2):
        compiled = compile_source(text, entry="main", bind={"N": n})
        (y,) = import_generated(compiled.text, f"static_for_{n}").main(torch.ones(n, 3))
        assert y.tolist() == [1.0 + n] * 3


def test_if_becomes_an_ir_if_and_a_constant_condition_picks_a_branch() -> None:
    program = elab("""module m
fn pick<N: Dim>(flag: bool, x: Tensor[N; f32]) -> Tensor[N; f32] {
    let y = if flag { x * 2.0 } else { x }
    let z = if N > 2 { y } else { -y }
    return z
}
entry main(flag: bool, x: Tensor[4; f32]) -> Tensor[4; f32] {
    return pick(flag, x)
}
""")
    (branch,) = exprs(program, ir.If)
    assert branch.cond.name == "flag"
    assert branch.type == ir.TType((4,), "f32")
    assert "neg" not in body_text(program, "pick__N4")  # N > 2: the else branch is gone


def test_assignments_in_if_branches_flow_out() -> None:
    program = elab("""module m
entry main(flag: bool, x: f32) -> (f32, i64) {
    var acc = x
    let k = if flag {
        acc = acc + 1.0
        2
    } else {
        3
    }
    return (acc, k)
}
""")
    (branch,) = exprs(program, ir.If)
    assert branch.type == ir.TupleTy((ir.TType((), "i64"), ir.TType((), "f32")))
    assert branch.orelse.result.type == branch.type
    assert "acc_2: f32[] = if.1" in body_text(program)


def test_literal_if_used_as_another_dtype_is_cast() -> None:
    program = elab("""module m
entry main(flag: bool, k: i32) -> i32 {
    let c = if flag { 2 } else { 3 }
    return k + c
}
""")
    text = body_text(program)
    assert "c: i64[] = if flag" in text
    assert "cast(c)" in text and "add(k, cast)" in text


def test_tuples_destructure_into_get_items() -> None:
    program = elab("""module m
fn two(x: f32) -> (f32, f32) {
    return (x, x * 2.0)
}
entry main(x: f32) -> f32 {
    let (a, b) = two(x)
    return a + b
}
""")
    main = program.func("main")
    call, a, b = (bind.expr for bind in main.body.binds[:3])
    assert isinstance(call, ir.Call) and call.callee == "two"
    assert (a.index, b.index) == (0, 1) and a.tup == b.tup == main.body.binds[0].var
    assert program.func("two").kind == "fn"


def test_indexing_static_and_dynamic() -> None:
    program = elab("""module m
entry main(x: Tensor[4, 6; f32], k: i32) -> (Tensor[2, 3; f32], Tensor[4; f32], f32) {
    let s = x[0:4:2, 1:6:2]
    let c = x[0:4, k]
    return (s, c, x[3, 5])
}
""")
    text = body_text(program)
    assert "s: f32[2, 3] = index(x) {items=(('slice', 0, 4, 2), ('slice', 1, 6, 2))}" in text
    assert "permute(x) {perm=(1, 0)}" in text       # the runtime axis moves to the front
    assert "cast(k)" in text                        # runtime positions are i64
    assert "dyn_index(permute, cast)" in text
    assert "index(x) {items=(('at', 3), ('at', 5))}" in text


def test_packs_expand_to_one_index_per_axis() -> None:
    program = elab("""module m
fn linear<*S: Shape, I: Dim, O: Dim>(x: Tensor[*S, I; f32], w: Tensor[O, I; f32]) -> Tensor[*S, O; f32] {
    let y[*s, o] = sum[i] x[*s, i] * w[o, i]
    return y
}
entry main(x: Tensor[2, 3, 4; f32], w: Tensor[5, 4; f32]) -> Tensor[2, 3, 5; f32] {
    return linear(x, w)
}
""")
    (comp,) = exprs(program, ir.Comprehension)
    assert comp.outputs == (("s.0", 2), ("s.1", 3), ("o", 5))
    assert comp.body.axes == (("i", 4),)
    assert comp.body.body.args[0].indices == ("s.0", "s.1", "i")
    assert program.func("linear__S2x3_I4_O5").source == "fn linear<S=[2, 3], I=4, O=5>"


def test_diagonal_and_scalar_reduction_outside_notation() -> None:
    program = elab("""module m
entry main(x: Tensor[4, 4; f32], s: f32) -> (Tensor[4; f32], f32) {
    let d[i] = x[i, i] * s
    return (d, sum[i] x[i, i])
}
""")
    d, trace = exprs(program, ir.Comprehension)
    assert d.body.args[0].indices == ("i", "i")
    assert d.body.args[1] == ir.IxScalar(ir.Var("s", ir.TType((), "f32")), "f32")
    assert trace.outputs == () and trace.type == ir.TType((), "f32")
    assert trace.body == ir.IxReduce("sum", (("i", 4),), ir.IxAccess(
        ir.Var("x", ir.TType((4, 4), "f32")), ("i", "i"), "f32"), "f32")


def test_index_free_parts_of_notation_are_computed_outside() -> None:
    program = elab("""module m
fn softplus(v: f32) -> f32 {
    let e = exp(v)
    return log(1.0 + e)
}
entry main(x: Tensor[2, 3; f32], y: Tensor[5; f32], k: i32) -> Tensor[2, 3; f32] {
    let z[r, c] = softplus(x[r, c]) * cast<f32>(k) + max[q] y[q]
    return z
}
""")
    text = body_text(program)
    assert "cast: f32[] = cast(k)" in text
    assert "max: f32[] = for [] max<f32>[q:5] y[q]" in text
    assert ("z: f32[2, 3] = for [r:2, c:3] add(mul(log(add(1.0:f32, exp(x[r, c]))), cast), "
            "max)") in text
    assert "softplus" not in print_program(program)  # expanded in place, not called


def test_op_with_kernel_grad_and_memoized_instances() -> None:
    program = elab("""module m
pub kernel relu_blocks<N: Dim, T: Float, B: Dim>(x: Tensor[N; T]) -> y: Tensor[N; T] grid((N + B - 1) / B)
where B >= 1 {
    let offs = program_id(0) * B + iota<i32>(B)
    let mask = offs < N
    store(y[offs], max(load(x[offs], mask), 0.0), mask)
}
pub op relu<N: Dim, T: Float>(x: Tensor[N; T]) -> Tensor[N; T] kernel relu_blocks<N, T, 2 * N> {
    return max(x, 0.0)
} grad(y, dy) {
    return select(y > 0.0, dy, 0.0)
}
entry main(a: Tensor[8; f32], b: Tensor[8; f32], c: Tensor[3; bf16]) -> (Tensor[8; f32], Tensor[8; f32], Tensor[3; bf16]) {
    return (relu(a), relu(b), relu(c))
}
""")
    assert [f.name for f in program.funcs] == ["main", "relu__N8_Tf32", "relu__N3_Tbf16"]
    op = program.func("relu__N8_Tf32")
    assert op.kernel == ir.KernelChoice("relu_blocks", (("N", 8), ("T", "f32"), ("B", 16)))
    grad = op.grad
    assert (grad.name, grad.kind) == ("relu__N8_Tf32__grad", "grad")
    assert [p.name for p in grad.params] == ["x", "y", "dy"]
    assert grad.body.result.type == ir.TType((8,), "f32")
    assert "select(gt, dy, 0.0:f32)" in print_func(grad)
    assert "max(x, 0.0:bf16)" in print_func(program.func("relu__N3_Tbf16"))


def test_entry_defaults_and_deterministic_output() -> None:
    text = """module m
entry main<N: Dim, T: Float = f64>(x: Tensor[N; T]) -> Tensor[N; T] {
    return x * 3.0
}
"""
    first, second = elab(text, dims={"N": 2}), elab(text, dims={"N": 2})
    assert print_program(first) == print_program(second)
    assert first.entry == "main__N2_Tf64"
    assert "mul(x, 3.0:f64)" in body_text(first)


def test_prelude_calls_become_prims() -> None:
    program = elab("""module m
entry main(x: Tensor[2, 3; f32], i: Tensor[4; i32]) -> (Tensor[3, 2; f32], Tensor[2, 6; f32], Tensor[6; i64], Tensor[2, 3; f32], Tensor[4; i32], Tensor[3, 2; f32]) {
    let p = permute(x, [1, 0])
    let c = concat(x, x, axis = -1)
    let r = iota(6)
    let s = cumsum(x, axis = -1)
    let h = shr(i, 1)
    let f = fill<f32>([3, 2], 2)
    return (p, c, r, s, h, f)
}
""")
    text = body_text(program)
    assert "p: f32[3, 2] = permute(x) {perm=(1, 0)}" in text
    assert "c: f32[2, 6] = concat(x, x) {axis=1}" in text
    assert "r: i64[6] = iota()" in text
    assert "s: f32[2, 3] = cumsum(x) {axis=1}" in text
    assert "h: i32[4] = shr(i, 1:i32)" in text
    assert "f: f32[3, 2] = fill(2:f32)" in text


def test_an_op_called_on_elements_is_reported() -> None:
    text = """module m
op twice(v: f32) -> f32 {
    return v * 2.0
}
entry main(x: Tensor[3; f32]) -> Tensor[3; f32] {
    let y[i] = twice(x[i])
    return y
}
"""
    analysis = analysis_of(text=text)
    entry = analysis.root.globals.items["main"]
    with pytest.raises(ElaborationError) as err:
        elaborate(analysis, entry, binding_for(entry, {}))
    assert err.value.code == "E2190" and "index notation" in err.value.message


def test_tuple_of_names_destructures_after_evaluating_every_item() -> None:
    program = elab("""module m
entry main(x: f32, y: f32) -> (f32, f32) {
    let a = x
    let b = y
    let (a, b) = (b, a)
    return (a, b)
}
""")
    main = program.func("main")
    f32 = ir.TType((), "f32")
    assert [(b.var.name, b.expr) for b in main.body.binds[:4]] == [
        ("a", ir.Var("x", f32)), ("b", ir.Var("y", f32)),
        ("a_1", ir.Var("b", f32)), ("b_1", ir.Var("a", f32))]  # (y, x): swapped


def test_a_static_for_too_long_to_unroll_is_a_diagnostic_not_a_hang():
    """`static for i in 0..9223372036854775807` (a mutant of the corpus) unrolled for ever."""
    import pytest
    from linnet.diagnostics import CompileError
    from linnet.pipeline import compile_source
    text = ("module m\n\nentry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n    var acc = x\n"
            "    static for i in 0..9223372036854775807 {\n        acc = acc + 1.0\n    }\n"
            "    return acc\n}\n")
    with pytest.raises(CompileError) as err:
        compile_source(text, entry="main", target="torch")
    (d,) = err.value.diagnostics
    assert d.code == "E2190" and "9223372036854775807 iterations" in d.message
