"""The grammar: what trees the parser builds, and the syntax errors it reports."""

from __future__ import annotations

import pytest

from linnet.diagnostics import SourceFile
from linnet.syntax import tree as t
from linnet.syntax.parser import parse

PATH = "t.linnet"


def module_of(src: str) -> t.Module:
    module, diagnostics = parse(src, PATH)
    assert module is not None, [(d.code, d.message) for d in diagnostics]
    assert diagnostics == []
    return module


def stmts_of(*lines: str) -> tuple[t.Stmt, ...]:
    inner = "".join(f"    {line}\n" for line in lines)
    return module_of(f"module m\nfn f() {{\n{inner}}}\n").items[0].body


def expr(src: str) -> t.Expr:
    return stmts_of(f"let v = {src}")[0].value


def errors(src: str) -> list[tuple[str, int, int]]:
    """(code, line, column) of each diagnostic; the module must fail to parse."""
    module, diagnostics = parse(src, PATH)
    assert module is None
    source = SourceFile.of(PATH, src)
    return [(d.code, *source.position(d.span.start)) for d in diagnostics]


def n(name: str) -> t.Name:
    return t.Name(name)


def b(op: str, left: t.Expr, right: t.Expr) -> t.Binary:
    return t.Binary(op, left, right)


def i(value: int) -> t.IntLit:
    return t.IntLit(value)


# ----------------------------------------------------------------- precedence

def test_precedence_ladder():
    """`a | b ^ c & d + e * f`: each operator binds tighter than the one before."""
    assert expr("a | b ^ c & d + e * f") == \
        b("|", n("a"), b("^", n("b"), b("&", n("c"), b("+", n("d"), b("*", n("e"), n("f"))))))


def test_logical_and_comparison_levels():
    assert expr("a || b && c == d < e") == \
        b("||", n("a"), b("&&", n("b"), b("==", n("c"), b("<", n("d"), n("e")))))
    assert expr("a < b == c > d") == b("==", b("<", n("a"), n("b")), b(">", n("c"), n("d")))
    assert expr("a < b | c") == b("<", n("a"), b("|", n("b"), n("c")))


@pytest.mark.parametrize("op", ["||", "&&", "==", "!=", "<", "<=", ">", ">=", "|", "^", "&",
                                "+", "-", "*", "/", "%"])
def test_every_binary_operator_is_left_associative(op):
    assert expr(f"a {op} b {op} c") == b(op, b(op, n("a"), n("b")), n("c"))


def test_unary_binds_tighter_than_binary_and_looser_than_postfix():
    assert expr("-a * b") == b("*", t.Unary("-", n("a")), n("b"))
    assert expr("!a && b") == b("&&", t.Unary("!", n("a")), n("b"))
    assert expr("-x[0]") == t.Unary("-", t.Index(n("x"), (i(0),)))
    assert expr("- -+a") == t.Unary("-", t.Unary("-", t.Unary("+", n("a"))))
    assert expr("-f(x)") == t.Unary("-", t.Call("f", None, (t.Arg(n("x")),)))


def test_parentheses_only_group():
    assert expr("(a + b) * c") == b("*", b("+", n("a"), n("b")), n("c"))
    assert expr("((a))") == n("a")


# ----------------------------------------------------------------- reductions

def test_reductions_and_calls():
    assert expr("sum[k] x[k]") == t.Reduce("sum", None, (t.IxVar("k"),), t.Index(n("x"), (n("k"),)))
    assert expr("sum<f32>[k, *s] x") == \
        t.Reduce("sum", t.TypeName("f32"), (t.IxVar("k"), t.IxVar("s", True)), n("x"))
    assert expr("sum(x)") == t.Call("sum", None, (t.Arg(n("x")),))
    assert expr("max(a, b)") == t.Call("max", None, (t.Arg(n("a")), t.Arg(n("b"))))
    for op in ("prod", "max", "min", "any", "all"):
        assert isinstance(expr(f"{op}[i] a[i]"), t.Reduce)


def test_reduction_extends_as_far_right_as_it_can():
    product = b("*", t.Index(n("a"), (n("i"),)), t.Index(n("b"), (n("i"),)))
    assert expr("x + sum[i] a[i] * b[i]") == \
        b("+", n("x"), t.Reduce("sum", None, (t.IxVar("i"),), product))
    assert expr("sum[i] a[i] || c") == \
        t.Reduce("sum", None, (t.IxVar("i"),), b("||", t.Index(n("a"), (n("i"),)), n("c")))
    assert expr("(sum[i] a[i]) + c") == \
        b("+", t.Reduce("sum", None, (t.IxVar("i"),), t.Index(n("a"), (n("i"),))), n("c"))
    call = expr("f(sum[i] a[i], c)")  # a comma ends it
    assert isinstance(call.args[0].value, t.Reduce) and call.args[1].value == n("c")


# ------------------------------------------------------------- generic calls

def test_comparison_versus_generic_call():
    assert expr("a < b && c > (d)") == b("&&", b("<", n("a"), n("b")), b(">", n("c"), n("d")))
    assert expr("f<4, f32>(x)") == t.Call("f", (i(4), n("f32")), (t.Arg(n("x")),))
    assert expr("iota<i32>(B)") == t.Call("iota", (n("i32"),), (t.Arg(n("B")),))
    assert expr("a < b > c") == b(">", b("<", n("a"), n("b")), n("c"))


def test_named_arguments_slices_packs_tuples_and_shapes():
    assert expr("concat(a, b, axis = -1)") == t.Call("concat", None, (
        t.Arg(n("a")), t.Arg(n("b")), t.Arg(t.Unary("-", i(1)), "axis")))
    assert expr("x[1:4, :, ::2, a:b:c, *s, 0]") == t.Index(n("x"), (
        t.Slice(i(1), i(4), None), t.Slice(None, None, None), t.Slice(None, None, i(2)),
        t.Slice(n("a"), n("b"), n("c")), t.PackIx("s"), i(0)))
    assert expr("(a, b,)") == t.TupleExpr((n("a"), n("b")))
    assert expr("reshape(x, [A, B * 2])").args[1].value == \
        t.ListExpr((n("A"), b("*", n("B"), i(2))))
    assert expr("[]") == t.ListExpr(())


def test_literals():
    assert expr("0xff") == i(255) and expr("0xff").text == "0xff"
    assert expr("1_000") == i(1000)
    assert expr("0b1010") == i(10)
    assert expr("3.0e2") == t.FloatLit(300.0)
    assert expr("true") == t.BoolLit(True) and expr("false") == t.BoolLit(False)
    assert expr("-1") == t.Unary("-", i(1))


# ----------------------------------------------------------------------- if

def test_if_expressions_and_else_if():
    assert expr("if c { 1 } else { 2 }") == t.If(n("c"), t.Block((), i(1)), t.Block((), i(2)))
    chain = expr("if a { 1 } else if b { 2 } else { 3 }")
    inner = t.If(n("b"), t.Block((), i(2)), t.Block((), i(3)))
    assert chain == t.If(n("a"), t.Block((), i(1)), t.Block((), inner))
    (let,) = stmts_of("let v = if c {", "    let d = 1", "    d", "} else {", "    2", "}")
    assert let.value.then == t.Block((t.Let("d", None, i(1)),), n("d"))


# --------------------------------------------------------------- statements

def test_every_statement_kind():
    body = stmts_of(
        "let a: f32 = 1.0", "let (p, q) = g(x)", "let y[i, *s] = x[i, *s]", "var v = 0",
        "v = v + 1", "for i in 0..N {", "    v = v + i", "}", "static for j in 0..4 {", "}",
        "while v > 0 {", "    v = v - 1", "}", "let ys = for k in 1..N {", "    yield x[k]", "}",
        "store(y[i], v, m)", "atomic_add(y[i], v)", "return v")
    assert [type(s) for s in body] == [t.Let, t.LetTuple, t.LetIndex, t.VarDecl, t.Assign, t.For,
                                       t.For, t.While, t.Let, t.Effect, t.Effect, t.Return]
    assert body[0].annotation == t.TypeName("f32")
    assert body[1].names == ("p", "q")
    assert body[2].indices == (t.IxVar("i"), t.IxVar("s", True))
    assert (body[5].static, body[6].static) == (False, True)
    assert body[5].lo == i(0) and body[5].hi == n("N")
    assert body[8].value == t.ForExpr("k", i(1), n("N"), (t.Yield(t.Index(n("x"), (n("k"),))),))
    assert body[9] == t.Effect("store", (t.Arg(t.Index(n("y"), (n("i"),))), t.Arg(n("v")),
                                         t.Arg(n("m"))))
    assert body[10].kind == "atomic_add"


def test_store_is_only_a_statement():
    assert stmts_of("let y = store(x)")[0].value == t.Call("store", None, (t.Arg(n("x")),))
    src = "module m\nfn f() {\n    let y = if c { store(x) } else { 1 }\n}\n"
    assert [(code, line) for code, line, _ in errors(src)] == [("E1101", 3)]


def test_expression_statements_are_errors():
    assert errors("module m\nfn f() {\n    1 + 2\n}\n") == [("E1101", 3, 5)]


# -------------------------------------------------------------------- items

def test_where_on_its_own_line():
    src = "module m\nfn f<N: Dim>(x: f32) -> f32\nwhere N > 0, N <= 8,\n{\n    return x\n}\n"
    fn = module_of(src).items[0]
    assert fn.where == (b(">", n("N"), i(0)), b("<=", n("N"), i(8)))


def test_kernel_header():
    src = ("module m\nkernel k<M: Dim, B: Dim = 64>(x: Tensor[M; f32]) -> (y: Tensor[M; f32], "
           "z: f32) grid(M / B, 2) warps(4) stages(3)\nwhere B <= 128 {\n"
           "    store(y[program_id(0)], 1.0)\n}\n")
    kernel = module_of(src).items[0]
    assert isinstance(kernel, t.Kernel)
    assert kernel.generics == (t.Generic("M", "Dim"), t.Generic("B", "Dim", False, i(64)))
    assert [r.name for r in kernel.results] == ["y", "z"] and kernel.tuple_results
    assert kernel.grid == (b("/", n("M"), n("B")), i(2))
    assert (kernel.warps, kernel.stages) == (i(4), i(3))
    single = module_of("module m\nkernel k(x: f32) -> y: f32 grid(1) {\n}\n").items[0]
    assert not single.tuple_results and single.warps is None and single.stages is None


def test_op_with_kernel_binding_and_grad():
    src = ("module m\npub op o<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] kernel k<N, 4> {\n"
           "    return x\n} grad(y, dy) {\n    return dy\n}\n")
    op = module_of(src).items[0]
    assert op.public and op.kernel == t.KernelBinding("k", (n("N"), i(4)))
    assert op.grad == t.GradClause("y", "dy", (t.Return(n("dy")),))
    bare = module_of("module m\nop o(x: f32) -> f32 kernel k {\n    return x\n}\n").items[0]
    assert bare.kernel == t.KernelBinding("k", None) and bare.grad is None


def test_generics_packs_and_defaults():
    fn = module_of("module m\nfn f<*S: Shape, T: Float = f32>(x: Tensor[*S, 2; T]) {\n}\n").items[0]
    assert fn.generics == (t.Generic("S", "Shape", True), t.Generic("T", "Float", False, n("f32")))
    assert fn.params[0].type == t.TensorType((t.PackIx("S"), i(2)), t.TypeName("T"))


def test_module_uses_consts_and_entries():
    m = module_of("module a.b\nuse c.d\nuse e\nconst K: i64 = 4\npub entry main() -> i64 {\n"
                  "    return K\n}\n")
    assert m.path == ("a", "b") and [u.path for u in m.uses] == [("c", "d"), ("e",)]
    assert m.items[0] == t.Const("K", t.TypeName("i64"), i(4))
    assert m.items[1].kind == "entry" and m.items[1].public


def test_use_lines_with_lists_and_roots():
    m = module_of("module m\nuse crate.a.b::{x, y,}\nuse std.nn.norm::{\n    rms_norm,\n}\n"
                  "use random\n")
    assert m.uses == (t.Use(("crate", "a", "b"), ("x", "y")),
                      t.Use(("std", "nn", "norm"), ("rms_norm",)), t.Use(("random",)))
    source = SourceFile.of(PATH, "module m\nuse crate.a.b::{x, y,}\n")
    spans = module_of(source.text).uses[0].name_spans
    assert [source.text[s.start:s.end] for s in spans] == ["x", "y"]


@pytest.mark.parametrize("src, where", [
    ("module m\nuse a::{}\n", ("E1101", 2, 9)),      # a list names at least one item
    ("module m\nuse a.crate\n", ("E1004", 2, 7)),    # `crate` only first
    ("module m\nuse a::{x.y}\n", ("E1101", 2, 10)),  # names, not paths
])
def test_malformed_use_lines(src, where):
    assert errors(src) == [where]


def test_lists_over_lines_and_a_reduction_head_alone():
    m = module_of("module m\nop f<\n    R: Dim,\n    C: Dim,\n>(\n    x: Tensor[R, C; f32],\n)"
                  " -> Tensor[R; f32]\nwhere\n    R > 0,\n    C > 0,\n{\n"
                  "    let y[r] = sum[c]\n        x[r, c]\n    return y\n}\n")
    op = m.items[0]
    assert [g.name for g in op.generics] == ["R", "C"] and len(op.where) == 2
    assert op.body[0].value == t.Reduce("sum", None, (t.IxVar("c"),),
                                        t.Index(n("x"), (n("r"), n("c"))))


def test_contextual_words_are_names_elsewhere():
    m = module_of("module m\nfn grad(grid: f32, warps: f32) -> f32 {\n    let sum = grid\n"
                  "    let store = sum * warps\n    return grad(store, sum)\n}\n")
    assert m.items[0].name == "grad"
    assert m.items[0].body[1].value == b("*", n("sum"), n("warps"))


# ------------------------------------------------------------------- errors

def test_unexpected_token_reports_its_line():
    src = "module m\nfn f() {\n    let y = 1\n    let z = * 2\n}\n"
    assert errors(src) == [("E1101", 4, 13)]
    assert errors("module m\nfn f() {\n    let y = 1 let z = 2\n}\n") == [("E1101", 3, 15)]
    assert errors("module m\nfn f() {\n    y = 1;\n}\n") == [("E1101", 3, 10)]


def test_unexpected_end_of_file():
    module, diagnostics = parse("module m\nfn f() {\n    let y = (1\n", PATH)
    assert module is None and [d.code for d in diagnostics] == ["E1101"]
    assert "end of file" in diagnostics[0].message


def test_reserved_word_as_a_name_is_E1004():
    assert errors("module m\nfn f() {\n    let type = 1\n}\n") == [("E1004", 3, 9)]
    assert errors("module m\nfn f(self: f32) {\n}\n") == [("E1004", 2, 6)]


@pytest.mark.parametrize("src", ["module m\nextern crate s\n",
                                 "module m\npub extern crate s\n",
                                 "module m\nfn f() {\n}\n\nextern crate s\n"])
def test_extern_item_is_E2190(src):
    (found,) = errors(src)
    assert found[0] == "E2190"
    assert found[1] == src[:src.index("extern")].count("\n") + 1


def test_keyword_of_the_model_layer_as_a_name_is_E1004():
    assert errors("module m\nfn f() {\n    let some = 1\n}\n") == [("E1004", 3, 9)]


def test_missing_module_line_is_E1102():
    assert errors("fn f() {\n}\n") == [("E1102", 1, 1)]
    assert [c for c, _, _ in errors("// only a comment\n")] == ["E1102"]


def test_lexer_errors_stop_the_parse():
    assert [c for c, _, _ in errors("module m\nconst a = 007\n")] == ["E1005"]


# -------------------------------------------------------------------- spans

def test_spans_locate_nodes():
    src = "module m\n\nfn f(x: f32) -> f32 {\n    let y = x + 2.0\n    return y\n}\n"
    source = SourceFile.of(PATH, src)
    fn = module_of(src).items[0]
    let, ret = fn.body
    assert source.position(fn.span.start) == (3, 1)
    # (an item's span covers its header; bodies carry no span of their own)
    assert source.position(let.span.start) == (4, 5)
    assert source.position(let.value.span.start) == (4, 13)
    assert src[let.value.span.start:let.value.span.end] == "x + 2.0"
    assert source.position(let.value.right.span.start) == (4, 17)
    assert source.position(ret.value.span.start) == (5, 12)
    assert src[fn.params[0].span.start:fn.params[0].span.end] == "x: f32"


def test_call_span_and_callee_span():
    src = "module m\nfn f() {\n    let y = exp(a)\n}\n"
    call = module_of(src).items[0].body[0].value
    assert src[call.span.start:call.span.end] == "exp(a)"
    assert src[call.callee_span.start:call.callee_span.end] == "exp"


def test_pub_item_span_starts_at_pub():
    src = "module m\npub const K = 1\n"
    const = module_of(src).items[0]
    assert src[const.span.start:const.span.end] == "pub const K = 1"
