"""Python, NumPy and PyTorch habits get a diagnostic that says what to write in Linnet.

The spec corpus (tests/spec/invalid/habit_*.linnet) pins each one's code and line; here
the message, the span and the help are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from linnet.check.frontend import check_program

INVALID = Path(__file__).resolve().parents[2] / "tests" / "spec" / "invalid"

CASES = {  # file: (code, the span's text, words of the message, words of the help)
    "habit_at_operator": ("E1001", "@", "no matrix-product operator",
                          "`let c[i, j] = sum[k] x[i, k] * w[k, j]`"),
    "habit_method_sum": ("E1101", ".sum", "no methods or fields: `x.sum`",
                         "`let rows[i] = sum[j] x[i, j]`"),
    "habit_method_mean": ("E1101", ".mean", "no methods or fields: `x.mean`",
                          "there is no `mean`: sum, then divide by the count"),
    "habit_field_transpose": ("E1101", ".T", "`x.T`",
                              "`let t[j, i] = x[i, j]`, or `permute(x, [1, 0])`"),
    "habit_numpy_module": ("E1101", ".exp", "`np.exp`: Linnet has no modules",
                           "`exp(...)` is in the prelude"),
    "habit_mean_reduction": ("E1101", "mean", "`mean` is not a reduction",
                             "`sum[c] ... / cast<f32>(N)`"),
    "habit_mean_call": ("E1201", "mean", "there is no `mean`", "`sum[j] x[i, j] / cast<f32>(N)`"),
    "habit_sum_call": ("E1201", "sum", "`sum` is a reduction, not a function",
                       "`let rows[i] = sum[j] x[i, j]`"),
    "habit_matmul_call": ("E1201", "matmul", "there is no `matmul`",
                          "`let c[i, j] = sum[k] x[i, k] * w[k, j]`"),
    "habit_power": ("E1101", "**", "no `**` operator", "`exp(y * log(x))`"),
    "habit_word_and": ("E1101", "and", "`and` is not an operator", "write `&&`"),
    "habit_python_true": ("E1201", "True", "undeclared name `True`", "write `true`"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_habit_says_what_to_write(name: str) -> None:
    code, spanned, message, help_ = CASES[name]
    result = check_program(str(INVALID / f"{name}.linnet"))
    first = result.diagnostics[0]
    text = result.sources[first.span.file].text
    assert (first.code, text[first.span.start:first.span.end]) == (code, spanned)
    assert message in first.message and help_ in first.help, (first.message, first.help)


def test_a_suggested_mean_checks() -> None:
    """What the help for `mean` says to write is valid Linnet."""
    from linnet.check.frontend import check_program as check
    text = ("module m\n\nentry main<C: Dim>(x: Tensor[4, C; f32]) -> Tensor[4; f32] {\n"
            "    let m[r] = sum[c] x[r, c] / cast<f32>(C)\n    return m\n}\n")
    assert check("<mean>.linnet", text).diagnostics == []


@pytest.mark.parametrize("source", [
    "let m[r] x[r]\n",              # a missing `=` after index notation's left side
    "let y = a.b\n",                # a plain name after a dot still gets the method help
])
def test_no_false_reduction_habit(source: str) -> None:
    text = ("module m\n\nentry main(x: Tensor[4; f32], a: f32) -> Tensor[4; f32] {\n    "
            + source + "    return x\n}\n")
    messages = [d.message for d in check_program("<t>.linnet", text).diagnostics]
    assert not any("is not a reduction" in m for m in messages)
