"""Time and size limits of the front end: linear in blank lines and statements, and
literals too large for any dtype are E2105, never a crash or a hang."""

from __future__ import annotations

import time

import pytest

from linnet.frontend import check_program
from linnet.passes.elaborate_builder import _Builder
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.lexer import LARGEST_LITERAL, _scan, tokenize

F32 = None  # the type of a fresh variable does not matter to naming


def _body(lines: str) -> str:
    return f"module m\nfn f(x: f32) -> f32 {{\n    let y = x\n{lines}    return y\n{lines}}}\n"


# ------------------------------------------------------------------ the lexer

@pytest.mark.parametrize("run", ["\n", "    // a comment\n", "  /* block */  \n", "\t\n"])
def test_a_run_of_blank_or_comment_lines_is_one_newline(run):
    raw, _ = _scan(_body(run * 50), "m.linnet")
    kinds = [t.type for t in raw]
    assert "NL NL" not in " ".join(kinds)
    assert kinds.count("NL") == 5  # module, `{`, `let` and its run, `return` and its run, `}`
    laid_out = [t.type for t in tokenize(_body(run * 50), "m.linnet").tokens]
    assert laid_out.count("NL") == 1  # ends `let y = x`; the others continue or close


def test_line_numbers_survive_collapsed_runs():
    text = _body("\n" * 7)
    ret = next(t for t in tokenize(text, "m.linnet").tokens if t.type == "RETURN")
    assert ret.line == 4 + 7


def test_a_hundred_thousand_blank_lines_before_a_brace_are_fast():
    text = _body("    // note\n\n" * 50_000)
    start = time.perf_counter()
    result = check_program("m.linnet", text)
    assert time.perf_counter() - start < 5.0  # was quadratic: over a minute
    assert result.ok


# ----------------------------------------------------------------- literals

def _literal(lit: str) -> str:
    return f"module m\nentry main(x: f64) -> f64 {{\n    return x + {lit}\n}}\n"


@pytest.mark.parametrize("lit", ["1" + "0" * 5000, "9" * 4301, "0x" + "f" * 300,
                                 "0x" + "f" * 1_000_000, "0b" + "1" * 1025, "1_000" * 200,
                                 str(LARGEST_LITERAL + 1)])
def test_literals_beyond_every_dtype_are_e2105(lit):
    start = time.perf_counter()
    result = check_program("m.linnet", _literal(lit))
    assert time.perf_counter() - start < 5.0
    (d,) = result.diagnostics
    assert d.code == "E2105" and "every dtype" in d.message
    assert len(d.message) < 120  # the literal is shortened, not printed whole
    assert (d.span.start, d.span.end) == (result.sources["m.linnet"].text.index(lit[:8]),
                                           result.sources["m.linnet"].text.index(lit[:8])
                                           + len(lit))


@pytest.mark.parametrize("lit", [str(LARGEST_LITERAL), str(2**64 - 1), "0x" + "f" * 16,
                                 "1" + "0" * 30])
def test_literals_some_dtype_holds_pass_the_lexer(lit):
    assert tokenize(_literal(lit), "m.linnet").diagnostics == []


def test_the_largest_literal_is_f64s_largest_value():
    assert float(LARGEST_LITERAL) == 1.7976931348623157e308
    assert len(str(LARGEST_LITERAL)) == 309


# ------------------------------------------------------------------ elaborate

class _CountingSet(set):
    probes = 0

    def __contains__(self, item) -> bool:
        _CountingSet.probes += 1
        return super().__contains__(item)


def test_fresh_names_cost_one_probe_each():
    builder = _Builder()
    builder.taken = _CountingSet({"a_5"})  # a user's own name in the way
    _CountingSet.probes = 0
    names = [builder.fresh("a", F32).name for _ in range(3000)]
    assert names[:7] == ["a", "a_1", "a_2", "a_3", "a_4", "a_6", "a_7"]
    assert len(set(names)) == 3000 and "a_5" not in names
    assert _CountingSet.probes < 2 * 3000 + 10  # was about 3000 * 3000 / 2


def test_a_static_for_of_ten_thousand_trips_elaborates_quickly():
    text = ("module m\nentry main(x: f32) -> f32 {\n    var a = x\n"
            "    static for i in 0..10000 {\n        a = a + 1.0\n    }\n    return a\n}\n")
    start = time.perf_counter()
    result = compile_source(text, path="m.linnet", passes=passes_for("torch")[:4])
    assert time.perf_counter() - start < 10.0  # was about 30 s
    main = result.text.func("main")
    assert len(main.body.binds) >= 10000
