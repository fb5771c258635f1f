"""The syntax of the model layer's values: what each form parses to, and that the printer
writes it back so that it parses to the same tree."""

from __future__ import annotations

import pytest

from linnet.syntax import tree as t
from linnet.syntax.parser import parse
from linnet.syntax.printer import print_module


def module(text: str) -> t.Module:
    tree, diagnostics = parse("module m\n\n" + text + "\n", "m.linnet")
    assert diagnostics == [], diagnostics
    again, more = parse(print_module(tree), "m.linnet")
    assert more == [] and again == tree
    return tree


def test_struct_fields_apart_by_newlines_spaces_or_commas() -> None:
    a, b, c = module("struct A { x: f32  y: f32 }\nstruct B { x: f32, y: f32, }\n"
                     "struct C {\n    x: f32\n    y: Tensor[2; f32]?\n}").items
    assert [f.name for f in a.fields] == [f.name for f in b.fields] == ["x", "y"]
    assert c.fields[1].type == t.OptionalType(t.TensorType((t.IntLit(2),), t.TypeName("f32")))


def test_enum_variants_apart_by_commas_or_newlines() -> None:
    (e, f) = module("enum E { A, B }\nenum F {\n    A\n    B\n}").items
    assert e.variants == f.variants == ("A", "B")


def test_generic_types_after_colon_arrow_and_in_an_alias() -> None:
    (s, alias, fn) = module("struct KV<T: Float> { k: Tensor[2; T]  v: Tensor[2; T] }\n"
                            "type K32 = KV<f32>\n"
                            "fn f(a: KV<f32>, b: KV<bf16>?) -> KV<f32> {\n    return a\n}").items
    assert alias.type == t.GenericType("KV", (t.Name("f32"),))
    assert fn.params[1].type == t.OptionalType(t.GenericType("KV", (t.Name("bf16"),)))
    assert fn.result == t.GenericType("KV", (t.Name("f32"),))


def test_match_arms_patterns_and_values() -> None:
    (fn,) = module("fn f(o: (f32, f32)?, e: E) -> f32 {\n"
                   "    let a = match o { some((x, y)) => x + y  none => 0.0 }\n"
                   "    let b = match o {\n        some(p) => 1.0\n        none => 2.0\n    }\n"
                   "    return match e { E.A => a  E.B => b }\n}").items
    first = fn.body[0].value
    assert [type(arm.pattern) for arm in first.arms] == [t.SomePat, t.NonePat]
    assert first.arms[0].pattern == t.SomePat(("x", "y"), True)
    assert fn.body[2].value.arms[1].pattern == t.VariantPat("E", "B")


def test_defaults_named_arguments_some_none_fields_and_ellipsis() -> None:
    (fn,) = module("fn f(x: Tensor[2, 3; f32], eps: f32 = 1e-5, b: f32? = none) -> f32 {\n"
                   "    let y = g(x, eps = 1e-6, b = some(kv.k[..., 0]))\n    return y\n}").items
    assert fn.params[1].default == t.FloatLit(1e-5) and fn.params[2].default == t.NoneLit()
    call = fn.body[0].value
    assert [a.name for a in call.args] == [None, "eps", "b"]
    index = call.args[2].value.value
    assert index.base == t.Field(t.Name("kv"), "k")
    assert index.items == (t.EllipsisIx(), t.IntLit(0))


@pytest.mark.parametrize("text", [
    "fn f(o: f32?) -> f32 {\n    return match o { (a, b) => a  none => 0.0 }\n}",
    "fn f(o: f32?) -> f32 {\n    return match o { some(a) => a, none => 0.0 }\n}",
])
def test_a_bare_tuple_arm_or_a_comma_between_arms_is_E1101(text: str) -> None:
    tree, diagnostics = parse("module m\n\n" + text + "\n", "m.linnet")
    assert tree is None and [d.code for d in diagnostics] == ["E1101"]
