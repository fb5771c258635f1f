"""inline-fns: every call of a fn replaced by its body, the fns dropped.

The corpus test inlines every elaborated entry of `examples/` and
`tests/spec/valid/` and checks that no fn (nor a call of one) is left, that
variable names stay unique per function, that every use is in scope with its
definition's type, and that the entry's type does not change. Golden tests pin
renaming, nesting, calls inside loops and branches, grads, and identity fns.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linnet.check.instance import analyze_program, binding_from_values
from linnet.ir import tensor as ir
from linnet.ir.walk import expr_atoms, expr_binders, expr_blocks
from linnet.ir.printer import print_func
from linnet.passes.front.elaborate import elaborate
from linnet.passes.middle.inline_fns import inline_fns
from linnet.syntax.program import load_program
from linnet.syntax import tree as t

ROOT = Path(__file__).resolve().parents[3]
CORPUS = sorted((ROOT / "examples").glob("*.linnet")) + sorted(
    (ROOT / "tests" / "spec" / "valid").glob("*.linnet"))
GENERIC = {"matmul_any": {"M": 5, "N": 6, "K": 7}, "matmul_bf16_any": {"M": 5, "N": 6, "K": 7},
           "softmax_any": {"R": 3, "C": 5}, "predict": {"N": 4, "I": 2, "H": 8, "O": 3},
           "loss": {"N": 4, "I": 2, "H": 8, "O": 3},
           "generic": {"N": 4}, "both": {"R": 2, "C": 3}, "any_dtype": {"N": 8},
           "positions": {"R": 3, "C": 5}, "tiles": {"R": 3, "C": 5},
           "layer_norm_any": {"R": 3, "C": 5}, "layer_norm_bf16_any": {"R": 3, "C": 768},
           "matmul_tf32_any": {"M": 5, "N": 6, "K": 7},
           "matmul_bt_any": {"M": 5, "N": 6, "K": 7},
           "attention_any": {"B": 2, "H": 3, "L": 4, "S": 5, "D": 16},
           "attention_bf16_any": {"B": 2, "H": 3, "L": 4, "S": 5, "D": 16},
           "attention_causal_any": {"B": 2, "H": 3, "L": 70, "D": 16},
           "attention_causal_bf16_any": {"B": 2, "H": 3, "L": 70, "D": 16},
           "lookup": {"B": 2, "S": 3, "V": 5, "H": 4}, "pick": {"N": 3, "R": 4, "C": 5},
           "weighted": {"K": 4, "V": 6}, "packed": {"B": 2, "S": 3, "V": 5, "H": 4},
           "embedding_loss": {"B": 3, "V": 5, "H": 4}, "embed_rows_of": {"N": 3, "V": 5}}


def elaborated(path: str | None = None, text: str | None = None, entry: str = "main",
               dims: dict | None = None) -> ir.Program:
    analysis = analyze_program(load_program(path or "test.linnet", text))
    assert analysis.diagnostics == []
    item = analysis.root.globals.items[entry]
    return elaborate(analysis, item, binding_from_values(item, dims or {}, {}, {}))


def check_scopes(f: ir.Func) -> None:
    """Each name bound once per function; each use in scope with the bound type; no fn call."""
    seen = {p.name for p in f.params}

    def block(b: ir.Block, scope: dict) -> None:
        scope = dict(scope)
        for bind in b.binds:
            for a in expr_atoms(bind.expr):
                assert not isinstance(a, ir.Var) or scope.get(a.name) == a, (f.name, a)
            assert bind.var.type == bind.expr.type
            inner = dict(scope)
            for v in expr_binders(bind.expr):
                assert v.name not in seen, (f.name, v.name)
                seen.add(v.name)
                inner[v.name] = v
            for nested in expr_blocks(bind.expr):
                block(nested, inner)
            assert bind.var.name not in seen, (f.name, bind.var.name)
            seen.add(bind.var.name)
            scope[bind.var.name] = bind.var
        assert not isinstance(b.result, ir.Var) or scope.get(b.result.name) == b.result

    block(f.body, {p.name: p for p in f.params})


def check_inlined(before: ir.Program, after: ir.Program) -> None:
    fns = {f.name for f in before.funcs if f.kind == "fn"}
    assert [f.name for f in after.funcs] == [f.name for f in before.funcs if f.kind != "fn"]
    assert after.entry == before.entry
    for f, g in zip(after.funcs, [f for f in before.funcs if f.kind != "fn"]):
        assert f.params == g.params and f.body.result.type == g.body.result.type
        assert f.kernel == g.kernel and f.kind == g.kind
        for h in (f, f.grad) if f.grad else (f,):
            check_scopes(h)
            text = print_func(h)
            assert not any(f"call {name}(" in text for name in fns)


# ------------------------------------------------------------------ corpus


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_inlines_every_fn(path: Path) -> None:
    analysis = analyze_program(load_program(str(path)))
    for item in analysis.program.root_module.items:
        if isinstance(item, t.Function) and item.kind == "entry":
            binding = binding_from_values(item, GENERIC.get(item.name, {}), {}, {})
            before = elaborate(analysis, item, binding)
            after = inline_fns(before)
            check_inlined(before, after)
            assert inline_fns(after) is after  # nothing left to do


# ------------------------------------------------------------------ golden


def test_nested_fns_inline_with_fresh_names() -> None:
    before = elaborated(str(ROOT / "tests/spec/valid/02_use_module.linnet"))
    after = inline_fns(before)
    check_inlined(before, after)
    binds = after.func("main").body.binds
    squares = [b for b in binds if isinstance(b.expr, ir.Prim) and b.expr.op == "mul"]
    assert len(squares) == 2  # fourth_power = square(square(x)), both inlined
    inner, outer = squares
    assert inner.expr.args == (ir.Var("x", ir.TType((4, 3), "f32")),) * 2
    assert outer.expr.args == (inner.var, inner.var)
    assert outer.var.name == "q"  # the caller's variable is bound by the callee's last step
    assert [b.var.name for b in binds if isinstance(b.expr, ir.Call)] == ["a"]  # an op stays


def test_fn_called_twice_in_a_loop_and_a_branch() -> None:
    before = elaborated(text="""module m
fn bump(v: Tensor[3; f32], s: f32) -> Tensor[3; f32] {
    let w = v * s
    return w + 1.0
}
entry main(x: Tensor[3; f32], flag: bool) -> Tensor[3; f32] {
    var acc = bump(x, 2.0)
    for t in 0..4 {
        acc = bump(acc, cast<f32>(t))
    }
    let y = if flag { bump(acc, 0.5) } else { acc }
    return y
}
""")
    after = inline_fns(before)
    check_inlined(before, after)
    text = print_func(after.func("main"))
    assert "mul(x, 2.0:f32)" in text
    assert "mul(acc_1, cast)" in text        # inside the loop body, on the carried value
    assert "mul(acc_3, 0.5:f32)" in text      # inside the branch, after the loop
    assert len(re.findall(r"\bw_\d+: ", text)) == 3  # one fresh `w` per call site
    assert "call" not in text


def test_identity_fn_replaces_uses_and_literal_results() -> None:
    before = elaborated(text="""module m
fn same(x: Tensor[2; f32]) -> Tensor[2; f32] {
    return x
}
fn one() -> f32 {
    return 1.0
}
entry main(x: Tensor[2; f32]) -> Tensor[2; f32] {
    let y = same(x)
    return y * one()
}
""")
    after = inline_fns(before)
    check_inlined(before, after)
    main = after.func("main")
    assert [b.expr for b in main.body.binds][-1] == ir.Prim(
        "mul", (ir.Var("x", ir.TType((2,), "f32")), ir.Lit(1.0, ir.TType((), "f32"))),
        ir.TType((2,), "f32"))


def test_fns_inline_into_ops_and_grads() -> None:
    before = elaborated(text="""module m
fn sq<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return x * x
}
op energy<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] {
    return sq(x) * 0.5
} grad(y, dy) {
    return dy * sq(x) / y
}
entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {
    return energy(x)
}
""")
    after = inline_fns(before)
    check_inlined(before, after)
    op = after.func("energy__N4")
    assert "mul(x, x)" in print_func(op) and "mul(x, x)" in print_func(op.grad)
    assert [f.kind for f in after.funcs] == ["entry", "op"]


def test_program_without_fns_is_returned_as_is() -> None:
    before = elaborated(str(ROOT / "examples/softmax.linnet"))
    assert inline_fns(before) is before
