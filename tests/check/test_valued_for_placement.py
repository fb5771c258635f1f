"""A valued `for` (a scan) used as an operand is E2124, with a message saying where it may
stand, never a bare syntax error (E1101).

A scan may only be the whole value of a `let`, `var`, assignment or `return`. Inside
parentheses, as an argument, beside an operator, indexed, or as the value of an `if`
branch it is reported as E2124, spanning the whole `for ... { ... }`.
"""

from __future__ import annotations

import pytest

from linnet.check.frontend import check_program
from linnet.syntax.parser import VALUED_FOR

SCAN = "for k in 0..3 { yield v }"

MISUSES = [
    f"let s = ({SCAN})",
    f"let s = v + {SCAN}",
    f"let s = -{SCAN}",
    f"let s = sqrt({SCAN})",
    f"let s = (v, {SCAN})",
    f"let s = [{SCAN}]",
    f"let s = {SCAN} + v",
    f"let s = {SCAN}[0]",
    f"let (a, b) = ({SCAN}, v)",
    f"let s = if c {{ {SCAN} }} else {{ v }}",
    f"let s = if c {{ v }} else {{ {SCAN} }}",
    f"let s = v == {SCAN}",
]


def _diagnostics(statement: str) -> list[tuple[str, str, str]]:
    text = f"module m\n\nfn f(v: f32, c: bool) -> f32 {{\n    {statement}\n    return v\n}}\n"
    diagnostics = check_program("t.linnet", text).diagnostics
    return [(d.code, d.message, text[d.span.start:d.span.end]) for d in diagnostics[:1]]


@pytest.mark.parametrize("statement", MISUSES)
def test_a_valued_for_as_an_operand_is_e2124(statement):
    """The first diagnostic (a misplaced scan may cause others: `f` is undeclared)."""
    assert _diagnostics(statement) == [("E2124", VALUED_FOR, SCAN)]


def test_the_message_says_where_a_valued_for_may_stand():
    assert VALUED_FOR == ("a valued `for` may only be the whole value of a `let`, `var`, "
                          "assignment or `return`")


@pytest.mark.parametrize("statement", [
    f"let s = {SCAN}",
    "for k in 0..3 {\n    }",
    "let s = if c { v } else { v }",
])
def test_a_whole_value_and_a_for_statement_parse(statement):
    assert _diagnostics(statement) == []


@pytest.mark.parametrize("statement, code", [
    ("let s = if c { v } else { for k in 0..3 { let q = v } }", "E2124"),  # no yield
    ("for k in 0..3 { yield v } + 1", "E1101"),
])
def test_other_mistakes_near_a_for_keep_their_codes(statement, code):
    assert [d[0] for d in _diagnostics(statement)] == [code]
