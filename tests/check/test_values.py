"""The checker on the model layer's values: structs, enums, aliases, optionals, `match`,
parameter defaults, named arguments and `...` in indices (LANGUAGE-MODELS.md, "Values"
and "Calls"). Each mistake gets its code on its line; each accepted form really is."""

from __future__ import annotations

import pytest

from linnet.check.frontend import check_program

HEAD = """module m

struct KV<T: Float> { k: Tensor[2, 3; T]  v: Tensor[2, 3; T] }
enum Pooling { Mean, First }
fn lin(x: Tensor[3; f32], b: Tensor[3; f32]?, eps: f32 = 1e-5) -> Tensor[3; f32] {
    return match b { some(v) => x + v  none => x * eps }
}
"""
FIRST = HEAD.count("\n") + 1  # the line the case's text starts on


def found(body: str) -> list[tuple[str, int, str]]:
    result = check_program("m.linnet", HEAD + body + "\n")
    return [(d.code, result.sources[d.span.file].position(d.span.start)[0] - FIRST, d.message)
            for d in result.diagnostics]


def codes(body: str) -> list[tuple[str, int]]:
    return [(code, line) for code, line, _ in found(body)]


FN = "fn f(a: Tensor[2, 3; f32], x: Tensor[3; f32], p: Pooling) -> Tensor[3; f32] {{\n{}\n    return x\n}}"

MISTAKES = {
    "struct built positionally": ("    let s = KV(a, a)", "E2102", "built by name"),
    "struct field missing": ("    let s = KV(k = a)", "E2102", "missing field `v`"),
    "struct field unknown": ("    let s = KV(k = a, v = a, w = a)", "E2102", "no field `w`"),
    "struct field twice": ("    let s = KV(k = a, k = a)", "E2102", "`k` is given twice"),
    "struct field of the wrong type": ("    let s = KV(k = a, v = x)", "E2101",
                                       "field `v` of `KV` is Tensor[2, 3; f32]"),
    "field that does not exist": ("    let y = KV(k = a, v = a).w", "E2101",
                                  "`KV` has no field `w`"),
    "none without a type": ("    let n = none", "E2113", "`none` without an optional type"),
    "none for a tensor": ("    let y = lin(none, none)", "E2113", "`none` where Tensor[3; f32]"),
    "bare value for an optional": ("    let y = lin(x, x)", "E2101",
                                   "expected Tensor[3; f32]?, found Tensor[3; f32]"),
    "enum match not exhaustive": ("    let y = match p { Pooling.Mean => x }", "E2118",
                                  "missing Pooling.First"),
    "arm of another enum": ("    let y = match p { Pooling.Mean => x  Other.A => x }", "E2101",
                            "does not match a `Pooling`"),
    "arm twice": ("    let y = match p { Pooling.Mean => x  Pooling.Mean => x }", "E2101",
                  "matched twice"),
    "arms of two types": ("    let y = match p { Pooling.Mean => x  Pooling.First => a }",
                          "E2115", "`match` arms differ"),
    "unknown named argument": ("    let y = lin(x, none, epsilon = 1.0)", "E2102",
                               "`lin` has no parameter `epsilon`"),
    "argument given twice": ("    let y = lin(x, none, b = none)", "E2102",
                             "`b` is given twice"),
    "positional after named": ("    let y = lin(x, b = none, 1.0)", "E2102",
                               "a positional argument after a named one"),
    "missing argument": ("    let y = lin(x, eps = 1.0)", "E2102", "missing argument `b`"),
    "ellipsis twice": ("    let y = a[..., 0, ...]", "E2204", "`...` more than once"),
    "too many indices with ellipsis": ("    let y = a[0, 0, ..., 0]", "E2204", "rank 2"),
    "unknown variant": ("    let q = Pooling.Max", "E1201", "no variant `Max`"),
    "field of a tensor": ("    let y = x.T", "E1101", "has no methods or fields: `x.T`"),
}


@pytest.mark.parametrize("name", sorted(MISTAKES))
def test_each_mistake_has_its_code_on_its_line(name: str) -> None:
    line, code, message = MISTAKES[name]
    (first, at, text), *_ = found(FN.format(line))
    assert (first, at) == (code, 1) and message in text


def test_optional_match_without_an_arm_is_E2118() -> None:
    assert codes("fn f(a: Tensor[3; f32]?) -> f32 {\n    return match a { none => 1.0 }\n}") \
        == [("E2118", 1)]


def test_a_bare_tuple_arm_is_a_syntax_error() -> None:
    body = "fn f(a: (f32, f32)?) -> f32 {\n    return match a { (x, y) => x  none => 1.0 }\n}"
    assert codes(body) == [("E1101", 1)]


def test_a_struct_or_alias_holding_itself_is_E2101() -> None:
    assert codes("struct S { a: S }") == [("E2101", 0)]
    assert codes("type A = B\ntype B = A") == [("E2101", 0), ("E2101", 1)]
    assert codes("struct S1 { a: S2 }\nstruct S2 { b: (S1, f32) }") == [("E2101", 0),
                                                                       ("E2101", 1)]


def test_declarations_take_each_field_and_variant_once() -> None:
    assert codes("struct P { a: f32  a: f32 }") == [("E1205", 0)]
    assert codes("enum E { A, B, A }") == [("E1205", 0)]


def test_an_entry_takes_no_enum_or_optional_but_takes_a_struct() -> None:
    assert codes("entry e(p: Pooling, x: Tensor[3; f32]) -> Tensor[3; f32] {\n"
                 "    return x\n}") == [("E2101", 0)]
    assert codes("entry e(x: Tensor[3; f32]?) -> f32 {\n    return 1.0\n}") == [("E2101", 0)]
    assert codes("entry e(s: KV<f32>) -> KV<f32> {\n    return KV(k = s.v, v = s.k)\n}") == []


def test_a_kernel_takes_no_struct_enum_or_optional() -> None:
    kernel = ("kernel k(x: KV<f32>) -> y: Tensor[4; f32] grid(1) {\n"
              "    let i = iota<i64>(4)\n    store(y[i], load(x.k[0, i]))\n}")
    assert codes(kernel)[0] == ("E2127", 0)


def test_defaults_have_their_parameters_types_and_kernels_take_none() -> None:
    assert codes("fn g(a: f32, e: f32 = true) -> f32 {\n    return a\n}") == [("E2103", 0)]
    assert codes("const E = 1.0\nfn g(a: f32, e: f32 = E) -> f32 {\n    return a\n}") \
        == [("E2101", 1)]
    assert codes("fn g(a: f32, e: f32 = -1e-5, b: Tensor[2; f32]? = none) -> f32 {\n"
                 "    return a\n}") == []
    kernel = ("kernel k(x: Tensor[4; f32], n: i64 = 4) -> y: Tensor[4; f32] grid(1) {\n"
              "    let i = iota<i64>([4])\n    store(y[i], load(x[i]))\n}")
    assert [c for c, _ in codes(kernel)][:1] == ["E2127"]


ACCEPTED = {
    "generic struct inferred": "fn g<T: Float>(s: KV<T>) -> Tensor[2, 3; T] {\n"
                               "    return s.k + s.v\n}\n"
                               "fn f(a: Tensor[2, 3; bf16]) -> Tensor[2, 3; bf16] {\n"
                               "    return g(KV(k = a, v = a))\n}",
    "struct generics written": "fn f(a: Tensor[2, 3; f32]) -> KV<f32> {\n"
                               "    return KV<f32>(v = a, k = a * 2.0)\n}",
    "optional chosen at run time": "fn f(a: Tensor[3; f32], c: bool) -> Tensor[3; f32] {\n"
                                   "    let o = if c { some(a) } else { none }\n"
                                   "    return lin(a, o)\n}",
    "optional var": "fn f(a: Tensor[3; f32]) -> Tensor[3; f32] {\n"
                    "    var o: Tensor[3; f32]? = none\n    o = some(a)\n"
                    "    return lin(a, o)\n}",
    "tuple inside some": "fn f(a: (Tensor[3; f32], Tensor[3; f32])?) -> Tensor[3; f32] {\n"
                         "    return match a { some((x, y)) => x + y  "
                         "none => fill<f32>([3], 0.0) }\n}",
    "defaults and named arguments": "fn f(a: Tensor[3; f32]) -> Tensor[3; f32] {\n"
                                    "    return lin(a, some(a), eps = 0.5) + lin(b = none, "
                                    "x = a)\n}",
    "aliases": "type H<T: Float> = Tensor[3; T]\ntype H32 = H<f32>\n"
               "fn f(a: H32) -> H<f32> {\n    return a\n}",
    "unannotated integer const in a shape": "const P = 3\n"
                                            "fn f(a: Tensor[P; f32]) -> Tensor[3; f32] {\n"
                                            "    return a\n}",
    "enum const and a compile-time match in a shape":
        "const CHOSEN: Pooling = Pooling.First\n"
        "fn f(a: Tensor[3; f32]) -> Tensor[2; f32] {\n"
        "    let n = match CHOSEN { Pooling.Mean => 3  Pooling.First => 2 }\n"
        "    let z: Tensor[n; f32] = fill<f32>([n], 1.0)\n    return z\n}",
    "ellipsis": "fn f(a: Tensor[2, 3, 4; f32]) -> Tensor[2, 3; f32] {\n"
                "    let b: Tensor[3, 4; f32] = a[1, ...]\n    return a[..., 0]\n}",
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted(name: str) -> None:
    assert found(ACCEPTED[name]) == []


def test_a_match_on_a_runtime_enum_is_no_compile_time_integer() -> None:
    body = ("fn f(p: Pooling) -> f32 {\n"
            "    let n = match p { Pooling.Mean => 3  Pooling.First => 2 }\n"
            "    let z: Tensor[n; f32] = fill<f32>([n], 1.0)\n    return 1.0\n}")
    assert codes(body)[0] == ("E2123", 2)


def test_the_spec_corpus_has_an_invalid_program_for_each_code_of_values() -> None:
    import tomllib
    from pathlib import Path
    manifest = Path(__file__).resolve().parents[1] / "spec" / "invalid" / "manifest.toml"
    covered = {entry["code"] for entry in tomllib.loads(manifest.read_text()).values()}
    assert {"E2101", "E2102", "E2113", "E2115", "E2118", "E2204"} <= covered
