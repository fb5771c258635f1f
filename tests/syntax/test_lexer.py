"""The lexer: scanning (comments, numbers, bad characters) and the layout rules."""

from __future__ import annotations

import pytest

from linnet.diagnostics import SourceFile
from linnet.syntax.lexer import tokenize


def kinds(text: str) -> list[str]:
    lexed = tokenize(text, "t.linnet")
    assert not lexed.diagnostics, lexed.diagnostics
    return [tok.type for tok in lexed.tokens]


def values(text: str) -> list[tuple[str, str]]:
    return [(tok.type, tok.value) for tok in tokenize(text, "t.linnet").tokens]


def errors(text: str) -> list[tuple[str, int, int]]:
    """(code, line, column) of each diagnostic."""
    source = SourceFile.of("t.linnet", text)
    return [(d.code, *source.position(d.span.start))
            for d in tokenize(text, "t.linnet").diagnostics]


def body(*lines: str) -> str:
    """A function whose body is these lines (newlines matter only inside bodies)."""
    inner = "".join(f"    {line}\n" for line in lines)
    return f"module m\nfn f() {{\n{inner}}}\n"


def body_kinds(*lines: str) -> list[str]:
    """Token kinds between the body's braces."""
    ks = kinds(body(*lines))
    return ks[ks.index("LBRACE") + 1:-1]


# ------------------------------------------------------------------- comments

def test_line_and_block_comments_vanish():
    assert kinds("a // line comment\nb /* block */ c") == ["NAME", "NAME", "NAME"]


def test_block_comments_nest():
    assert values("x /* one /* two /* three */ two */ one */ y") == [("NAME", "x"), ("NAME", "y")]
    # a `*/` inside a nested comment does not end the outer one
    assert values("/* a /* b */ still comment */ z") == [("NAME", "z")]


def test_block_comment_keeps_line_numbers():
    tokens = tokenize("/* one\ntwo\nthree */ x", "t.linnet").tokens
    assert (tokens[-1].value, tokens[-1].line, tokens[-1].column) == ("x", 3, 10)


def test_unclosed_nested_comment_is_E1002_at_its_opening():
    text = "module m\n\n/* outer\n  /* inner */\nstill open\n"
    assert errors(text) == [("E1002", 3, 1)]


def test_unclosed_inner_comment_reports_the_outermost_opening():
    text = "module m\nfn f() {\n    let x = 1 /* a /* b */\n}\n"
    assert errors(text) == [("E1002", 3, 15)]


# ----------------------------------------------------------------- characters

@pytest.mark.parametrize("text, column", [("let $x = 1", 5), ("a @ b", 3), ("let größe = 1", 7)])
def test_invalid_characters_are_E1001(text, column):
    found = errors(text)
    assert found[0] == ("E1001", 1, column)
    assert {code for code, _, _ in found} == {"E1001"}


def test_non_ascii_letter_is_not_an_identifier():
    lexed = tokenize("é", "t.linnet")
    assert [d.code for d in lexed.diagnostics] == ["E1001"]
    assert lexed.tokens == []


# -------------------------------------------------------------------- numbers

@pytest.mark.parametrize("text", ["1__0", "0x", "007", "1_", "0b12", "1.5e", "1e5x", "0x_1"])
def test_malformed_numbers_are_E1005(text):
    assert errors(f"let x = {text}") == [("E1005", 1, 9)]


def test_valid_numbers():
    assert values("0 42 1_000 0xff 0b1010 0.5 1e-5 3.0e2 1E+3") == [
        ("INT", "0"), ("INT", "42"), ("INT", "1_000"), ("INT", "0xff"), ("INT", "0b1010"),
        ("FLOAT", "0.5"), ("FLOAT", "1e-5"), ("FLOAT", "3.0e2"), ("FLOAT", "1E+3")]


def test_range_is_not_a_float():
    assert values("0..n") == [("INT", "0"), ("RANGE", ".."), ("NAME", "n")]
    assert values("1..10") == [("INT", "1"), ("RANGE", ".."), ("INT", "10")]


def test_keywords_reserved_words_and_names():
    assert kinds("let var return while static yield") == [
        "LET", "VAR", "RETURN", "WHILE", "STATIC", "YIELD"]
    assert kinds("type struct match none some enum") == [
        "TYPE", "STRUCT", "MATCH", "NONE", "SOME", "ENUM"]
    assert kinds("block param buffer state sub") == ["BLOCK", "PARAM", "BUFFER", "STATE", "SUB"]
    assert kinds("extern crate self") == ["RESERVED"] * 3
    assert kinds("lets _x x1 Tensor") == ["NAME"] * 4


def test_value_punctuation():
    assert kinds("x[..., 0] T? a => b 0..n") == [
        "NAME", "LSQB", "ELLIPSIS", "COMMA", "INT", "RSQB", "NAME", "QMARK", "NAME", "FATARROW",
        "NAME", "INT", "RANGE", "NAME"]


def test_a_field_named_like_a_reduction_is_a_name():
    assert kinds("s.max[0]") == ["NAME", "DOT", "NAME", "LSQB", "INT", "RSQB"]


def test_generic_type_after_colon_arrow_and_alias():
    assert kinds("x: KV<f32>)") == ["NAME", "COLON", "NAME", "GLT", "NAME", "GGT", "RPAR"]
    assert kinds("-> KV<f32> {") == ["ARROW", "NAME", "GLT", "NAME", "GGT", "LBRACE"]
    assert kinds("type A = KV<f32>") == ["TYPE", "NAME", "ASSIGN", "NAME", "GLT", "NAME", "GGT"]
    assert kinds("let a = b < c") == ["LET", "NAME", "ASSIGN", "NAME", "LT", "NAME"]
    assert kinds("-> (KV<f32>, S<3>)")[2:5] == ["NAME", "GLT", "NAME"]
    assert kinds("f(a < b, c > d)") == ["NAME", "LPAR", "NAME", "LT", "NAME", "COMMA", "NAME",
                                         "GT", "NAME", "RPAR"]


def test_longest_punctuation_first():
    assert kinds("-> .. || && == != <= >= < > = ! - .") == [
        "ARROW", "RANGE", "OROR", "ANDAND", "EQ", "NE", "LE", "GE", "LT", "GT", "ASSIGN",
        "BANG", "MINUS", "DOT"]


# --------------------------------------------------------------------- layout

def test_newline_ends_a_statement_inside_a_body():
    assert body_kinds("let a = 1", "let b = 2") == [
        "LET", "NAME", "ASSIGN", "INT", "NL", "LET", "NAME", "ASSIGN", "INT"]


def test_newlines_at_item_level_are_dropped():
    assert "NL" not in kinds("module m\n\nconst a = 1\n\nconst b = 2\n")


@pytest.mark.parametrize("op", ["+", "*", "&&", "||", "==", "<", "|", "-", "/"])
def test_newline_after_an_operator_continues(op):
    assert "NL" not in body_kinds(f"let a = b {op}", "    c")


@pytest.mark.parametrize("op", ["+", "*", "&&", "||", "==", "|"])
def test_newline_before_a_binary_operator_continues(op):
    assert "NL" not in body_kinds("let a = b", f"    {op} c")


def test_newline_before_minus_ends_the_statement():
    assert body_kinds("let a = b", "-c").count("NL") == 1


def test_newlines_inside_brackets_are_dropped():
    lines = ("let a = f(", "    1,", "    2", ")", "let b = [", "    x", "]", "let c = x[", "0]")
    assert body_kinds(*lines).count("NL") == 2


def test_newlines_inside_a_block_inside_brackets_count():
    ks = body_kinds("let a = f(if c {", "    let t = 1", "    t", "} else {", "    2", "})")
    assert ks.count("NL") == 1  # between `let t = 1` and `t`


def test_newline_after_opening_and_before_closing_brace_dropped():
    ks = kinds("module m\nfn f() {\n\n    return 1\n\n}\n")
    assert "NL" not in ks


def test_else_and_where_may_start_a_line():
    ks = body_kinds("let a = if c { 1 }", "else { 2 }")
    assert "NL" not in ks and "ELSE" in ks
    header = kinds("module m\nfn f<N: Dim>(x: f32) -> f32\nwhere N > 0,\n    N < 8\n{\n"
                   "    return x\n}\n")
    assert "NL" not in header and "WHERE" in header


def test_a_declared_generic_list_may_span_lines():
    ks = kinds("module m\nfn f<\n    B: Dim,\n    T: Float = f32,\n>(\n    x: f32,\n) -> f32 {\n"
               "    return x\n}\n")
    assert ks[4:13] == ["GLT", "NAME", "COLON", "NAME", "COMMA", "NAME", "COLON", "NAME",
                        "ASSIGN"]
    assert "NL" not in ks[:ks.index("LBRACE")]


def test_a_generic_list_inside_a_block_drops_its_newlines():
    """A block's `{` keeps newlines between members; a member's `<` list is a list."""
    ks = kinds("module m\nblock B {\n    pub fn f<\n        N: Dim,\n    >(x: f32) -> f32"
               "\n    where\n        N > 0,\n    {\n        return x\n    }\n}\n")
    head = ks[ks.index("FN"):ks.index("LBRACE", ks.index("FN"))]
    assert "NL" not in head and head.count("GLT") == 1 and "WHERE" in head


def test_a_newline_after_a_reduction_head_continues():
    assert "NL" not in body_kinds("let s = sum[k]", "    x[k]")
    assert "NL" not in body_kinds("let s = max<f32>[i, j]", "    x[i, j]")
    assert body_kinds("let s = x[k]", "let t = y").count("NL") == 1  # not a reduction head


def test_a_use_list_may_span_lines():
    ks = kinds("module m\nuse a.b::{\n    x,\n    y\n    , z,\n}\nfn f() {\n}\n")
    assert ks[:14] == ["MODULE", "NAME", "USE", "NAME", "DOT", "NAME", "COLON", "COLON",
                       "LBRACE", "NAME", "COMMA", "NAME", "COMMA", "NAME"]
    assert "NL" not in ks


def test_crate_after_use_is_its_own_token():
    assert kinds("use crate.a")[:2] == ["USE", "CRATE"]
    assert kinds("let crate")[1] == "RESERVED"
    assert kinds("random rng") == ["NAME", "RESERVED"]


# ----------------------------------------------------------- contextual words

def test_reduction_words():
    assert kinds("sum[k] x")[0] == "REDUCE"
    assert kinds("sum<f32>[k] x")[:4] == ["REDUCE", "GLT", "NAME", "GGT"]
    assert kinds("sum(x)")[:2] == ["NAME", "LPAR"]
    assert kinds("sum < f32")[0] == "NAME"
    assert kinds("max[i] a[i]")[0] == "REDUCE"


def test_generic_call_rule():
    assert kinds("f<4, f32>(x)")[:6] == ["NAME", "GLT", "INT", "COMMA", "NAME", "GGT"]
    compare = kinds("a < b && c > (d)")
    assert "GLT" not in compare and compare.count("LT") == 1 and compare.count("GT") == 1
    assert "GLT" not in kinds("a < b > c")           # `>` not followed by `(`
    assert "GLT" not in kinds("x[i] < n > (m)")       # `<` not after a name
    assert kinds("a < b, c > (d)").count("GLT") == 1  # the rule as written: a generic call
    assert kinds("fn f<N: Dim, T: Float = f32>(x: T)").count("GLT") == 1
    assert kinds("kernel k<R, 1024> {").count("GLT") == 1


def test_effect_words_only_start_a_statement():
    assert body_kinds("store(y, x)")[0] == "EFFECT"
    assert body_kinds("atomic_add(y, x)")[0] == "EFFECT"
    assert "EFFECT" not in body_kinds("let a = store(y)")
    assert "EFFECT" not in body_kinds("let store = 1")


def test_header_words_only_in_their_places():
    kernel = kinds("module m\nkernel k(x: f32) -> y: f32 grid(4) warps(4) stages(2) {\n}\n"
                   "op o(x: f32) -> f32 {\n    return x\n}\ngrad(y, dy) {\n    return dy\n}\n")
    assert {"GRID", "WARPS", "STAGES", "GRAD"} <= set(kernel)
    names = kinds("module m\nfn grad(grid: f32, warps: f32) -> f32 {\n"
                  "    return grid(stages(1))\n}\nfn grid() {\n}\nkernel stages() {\n}\n")
    assert not {"GRID", "WARPS", "STAGES", "GRAD"} & set(names)


def test_token_positions():
    tokens = tokenize("module m\nfn f() {\n    let x = 10\n}\n", "t.linnet").tokens
    ten = next(tok for tok in tokens if tok.value == "10")
    assert (ten.line, ten.column, ten.start_pos, ten.end_pos) == (3, 13, 30, 32)
