"""Messages for the mistakes a newcomer makes first: each says what to write instead.

Checker-level: each program is checked from text, and the first diagnostic's code, the
text its span covers, and words of its message and help are compared."""

from __future__ import annotations

from linnet.check.frontend import check_program


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


def test_a_rank_mismatch_in_broadcasting_suggests_index_notation() -> None:
    text = ("module m\n\nfn f<R: Dim, C: Dim>(x: Tensor[R, C; f32], s: Tensor[R; f32])"
            " -> Tensor[R, C; f32] {\n    return x / s\n}\n")
    code, spanned, _, help_ = _first(text)
    assert (code, spanned) == ("E2207", "x / s")
    assert "against the wrong axes of `x`" in help_
    assert help_.endswith("`let y[r, c] = x[r, c] / s[r]`"), help_


def test_a_same_rank_broadcast_keeps_the_where_advice() -> None:
    text = ("module m\n\nfn f<N: Dim, M: Dim>(a: Tensor[N; f32], b: Tensor[M; f32])"
            " -> Tensor[N; f32] {\n    return a + b\n}\n")
    assert "`where` clause" in _first(text)[3]


def test_an_index_over_the_wrong_extent_names_the_declared_shape() -> None:
    text = ("module m\n\nfn f<R: Dim, C: Dim>(x: Tensor[R, C; f32],\n"
            "    w: Tensor[R; f32]) -> Tensor[R, C; f32] {\n"
            "    let y[r, c] = x[r, c] * w[c]\n    return y\n}\n")
    code, spanned, message, help_ = _first(text)
    assert (code, spanned) == ("E2201", "c")
    assert message == "index `c` ranges over R here but C elsewhere"
    assert help_ == ("`w` is declared `Tensor[R; f32]` at line 4, so its axis 0 has R "
                     "elements; index it with `r`, which runs over R")


def test_a_mistake_is_not_followed_by_errors_that_only_follow_from_it() -> None:
    """`a` and `y` have no type after their first mistakes: indexing them in index notation
    used to add E2104 "cannot index" for each use."""
    text = ("module m\n\nfn f<R: Dim>(x: Tensor[R; f32], y: Tensor[R; f23]) -> Tensor[R; f32] {\n"
            "    let a = tahn(x)\n    let b[r] = a[r] * 2.0\n    let c[r] = y[r] + x[r]\n"
            "    let d = sum[k] a[k] * y[k]\n    return b + c + d\n}\n")
    found = [(d.code, text[d.span.start:d.span.end]) for d in _diagnostics(text)]
    assert found == [("E1201", "f23"), ("E1201", "tahn")]


def test_a_misspelled_name_or_dtype_gets_did_you_mean() -> None:
    text = ("module m\n\nfn f<R: Dim>(xs: Tensor[R; f23], bias: f32) -> Tensor[R; f32] {\n"
            "    let total = sum[r] xs[r]\n    let y[r] = xs[r] + totl + baos[r]\n"
            "    return y * bias + zebra\n}\n")
    found = [(text[d.span.start:d.span.end], d.help) for d in _diagnostics(text)]
    assert found == [("f23", "did you mean `f32`?"), ("totl", "did you mean `total`?"),
                     ("baos", "did you mean `bias`?"),
                     ("zebra", "declare it with `let`, or as a parameter or generic")]
