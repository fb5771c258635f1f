"""One mistake, one diagnostic: repeats of a mistake at one place and errors that only
follow from an earlier one are not reported.

- A free index (E3101) or an index used as a value (E3104) is reported at its first use in
  an index-notation statement; another statement reports its own.
- An undeclared name, function or type (E1201) is reported at its first use in a body.
- An item declared again (E1204) is checked against its own signature, not the first's.
- An op whose result type is wrong gets no second complaint from its `grad` clause.
- The diagnostic bag keeps the same error at the same place once.
"""

from __future__ import annotations

from pathlib import Path

from linnet.diagnostics import DiagnosticBag, Span
from linnet.check.frontend import check_program


def _found(tmp_path: Path, text: str) -> list[tuple[str, int, str]]:
    """(code, line, spanned text) of each diagnostic."""
    path = tmp_path / "prog.linnet"
    path.write_text(text)
    result = check_program(str(path))
    source = result.sources[str(path)]
    return [(d.code, source.position(d.span.start)[0], text[d.span.start:d.span.end])
            for d in result.diagnostics]


def _entry(*lines: str) -> str:
    body = "".join(f"    {line}\n" for line in lines)
    return ("module m\n\nentry main(v: Tensor[4; f32], w: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            + body + "    return v\n}\n")


def test_a_free_index_used_twice_is_one_e3101(tmp_path):
    assert _found(tmp_path, _entry("let y[i] = v[i] * v[j] + v[j]")) == [("E3101", 4, "j")]


def test_a_free_index_inside_a_reduction_is_one_e3101(tmp_path):
    text = _entry("let y[i] = v[i] * sum[k] w[k] * w[m] + w[m]")
    assert _found(tmp_path, text) == [("E3101", 4, "m")]


def test_each_statement_reports_its_own_free_index(tmp_path):
    text = _entry("let y[i] = v[j] + w[j]", "let z[i] = v[j] * w[j]", "let s = sum[k] v[j]")
    assert _found(tmp_path, text) == [("E3101", 4, "j"), ("E3101", 5, "j"), ("E3101", 6, "j")]


def test_an_index_used_as_a_value_twice_is_one_e3104(tmp_path):
    assert _found(tmp_path, _entry("let y[i] = v[i] * i + i")) == [("E3104", 4, "i")]


def test_a_value_used_as_an_index_twice_is_one_e3104(tmp_path):
    text = _entry("let n = cast<i32>(v[0])", "let y[i] = v[n] + w[n] + v[i]")
    assert _found(tmp_path, text) == [("E3104", 5, "n")]


def test_an_undeclared_name_is_reported_at_its_first_use_in_a_body(tmp_path):
    text = _entry("let a = q + q", "let b = a * q", "let c[i] = q[i] + v[i]")
    assert _found(tmp_path, text) == [("E1201", 4, "q")]


def test_each_body_reports_its_own_undeclared_name(tmp_path):
    text = ("module m\n\nfn f(v: f32) -> f32 {\n    return v + q\n}\n\n"
            "fn g(v: f32) -> f32 {\n    return q * q\n}\n")
    assert _found(tmp_path, text) == [("E1201", 4, "q"), ("E1201", 8, "q")]


def test_an_undeclared_function_and_type_are_reported_once(tmp_path):
    text = ("module m\n\nfn f(x: Tensor[4; Bogus], y: Tensor[4; Bogus]) -> f32 {\n"
            "    return nope(1.0) + nope(2.0)\n}\n")
    assert _found(tmp_path, text) == [("E1201", 3, "Bogus"), ("E1201", 4, "nope")]


def test_an_item_declared_again_is_checked_against_its_own_signature(tmp_path):
    text = ("module m\n\nfn f(x: f32) -> f32 {\n    return x * 2.0\n}\n\n"
            "fn f(x: i32, y: i32) -> i32 {\n    return x + y\n}\n")
    assert [code for code, _, _ in _found(tmp_path, text)] == ["E1204"]


def test_an_item_declared_again_still_reports_its_own_mistakes(tmp_path):
    text = ("module m\n\nfn f(x: f32) -> f32 {\n    return x * 2.0\n}\n\n"
            "fn f(x: i32) -> i32 {\n    return x * 2.0\n}\n")
    assert [(code, line) for code, line, _ in _found(tmp_path, text)] == [
        ("E1204", 7), ("E2103", 8)]


def test_a_grad_clause_of_an_op_with_a_broken_result_adds_nothing(tmp_path):
    text = ("module m\n\npub op h(x: Tensor[4; f32]) -> Tensor[4; Bogus] {\n    return x\n"
            "} grad(y, dy) {\n    return dy\n}\n")
    assert _found(tmp_path, text) == [("E1201", 3, "Bogus")]


def test_the_bag_keeps_one_copy_of_an_error_at_one_place():
    bag = DiagnosticBag()
    span = Span("t.linnet", 3, 5)
    bag.error("E2103", "mixed dtypes", span)
    bag.error("E2103", "mixed dtypes", span)
    bag.error("E2103", "mixed dtypes", Span("t.linnet", 7, 9))
    bag.error("E2104", "mixed dtypes", span)
    assert [(d.code, d.span.start) for d in bag.sorted()] == [
        ("E2103", 3), ("E2104", 3), ("E2103", 7)]
