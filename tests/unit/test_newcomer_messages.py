"""Messages for the mistakes a newcomer makes first: each says what to write instead.

Checker-level: each program is checked from text, and the first diagnostic's code, the
text its span covers, and words of its message and help are compared."""

from __future__ import annotations

from linnet.frontend import check_program


def _diagnostics(text: str) -> list:
    return check_program("prog.linnet", text).diagnostics


def _first(text: str) -> tuple[str, str, str, str]:
    """(code, spanned text, message, help) of the first diagnostic."""
    found = _diagnostics(text)
    assert found, "expected a diagnostic"
    d = found[0]
    return d.code, text[d.span.start:d.span.end], d.message, d.help


def test_a_misspelled_statement_keyword_gets_did_you_mean() -> None:
    text = "module m\n\nfn f(x: f32) -> f32 {\n    retrun x\n}\n"
    assert _first(text) == ("E1101", "retrun", "unexpected `retrun`", "did you mean `return`?")


def test_a_misspelled_item_keyword_gets_did_you_mean() -> None:
    text = "module m\n\nentyr f(x: f32) -> f32 {\n    return x\n}\n"
    assert _first(text) == ("E1101", "entyr", "unexpected `entyr`", "did you mean `entry`?")


def test_a_name_far_from_every_keyword_keeps_the_expected_tokens() -> None:
    text = "module m\n\nfn f(x: f32) -> f32 {\n    zebra x\n}\n"
    code, spanned, _, help_ = _first(text)
    assert (code, spanned, help_) == ("E1101", "x", "expected `=`")


def test_a_misspelled_prelude_function_gets_did_you_mean() -> None:
    text = "module m\n\nfn f(x: f32) -> f32 {\n    return tahn(x)\n}\n"
    assert _first(text) == ("E1201", "tahn", "undeclared function `tahn`",
                            "did you mean `tanh`?")


def test_a_misspelled_function_of_the_module_gets_did_you_mean() -> None:
    text = ("module m\n\nfn scale(x: f32) -> f32 {\n    return x * 2.0\n}\n\n"
            "fn f(x: f32) -> f32 {\n    return scael(x)\n}\n")
    assert _first(text)[3] == "did you mean `scale`?"
