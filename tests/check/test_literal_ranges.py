"""A literal is checked against the dtype it takes wherever it stands (E2105).

A literal chosen at run time, by an `if` between literal branches or by `select`, may be
each of its branch values, so each one must fit the dtype that the choice takes, exactly as
a literal written alone must. A literal that takes its default dtype (`var n = 9...`, a
tuple item, an element of index notation) must fit `i64` or `f64`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import linnet.torch as lt
from linnet.check.frontend import check_program


def _check(tmp_path: Path, body: str, params: str = "v: f32, c: bool, x: Tensor[2; i8]",
           result: str = "f32") -> list[tuple[str, str]]:
    path = tmp_path / "prog.linnet"
    path.write_text(f"module m\n\nentry main({params}) -> {result} {{\n{body}\n    return v\n}}\n")
    return [(d.code, d.message) for d in check_program(str(path)).diagnostics]


OUT_OF_RANGE = [
    ("let c: i8 = if v > 1.0 { 300 } else { 0 }", "literal 300 out of range for i8"),
    ("let c: i8 = if v > 1.0 { 0 } else { -129 }", "literal -129 out of range for i8"),
    ("let h: f16 = if v > 1.0 { 100000.0 } else { 0.0 }",
     "literal 100000.0 out of range for f16"),
    ("let c: i8 = if c { 1 } else if v > 0.0 { 2 } else { 200 }",
     "literal 200 out of range for i8"),
    ("let c: i8 = -(if c { 1 } else { 200 })", "literal -200 out of range for i8"),
    ("let c: i8 = (if c { 1 } else { 100 }) * 2", "literal 200 out of range for i8"),
    ("let c: i8 = abs(if c { 1 } else { -200 })", "literal 200 out of range for i8"),
    ("let c: u8 = select(c, 1, 300)", "literal 300 out of range for u8"),
    ("let c: u8 = min(if c { 1 } else { 300 }, 400)", "literal 300 out of range for u8"),
    ("let y = x + if c { 1 } else { 200 }", "literal 200 out of range for i8"),
    ("let y = if c { x } else { fill<i8>([2], 0) }\n    let z = if c { y } else { 300 }",
     "literal 300 out of range for i8"),
    ("var n = 9223372036854775808", "literal 9223372036854775808 out of range for i64"),
    ("let t = (9223372036854775808, 1)", "literal 9223372036854775808 out of range for i64"),
    ("let s = for i in 0..2 { yield 9223372036854775808 }",
     "literal 9223372036854775808 out of range for i64"),
    ("let y[i] = x[i] < 0 && 9223372036854775808 > 0", None),
]


@pytest.mark.parametrize("body, message", OUT_OF_RANGE, ids=[b for b, _ in OUT_OF_RANGE])
def test_each_value_a_literal_may_take_is_checked(tmp_path, body, message):
    found = _check(tmp_path, "    " + body)
    if message is None:  # a comparison of literals is a bool: no dtype taken, no range
        assert found == []
    else:
        assert found == [("E2105", message)]


def test_a_literal_branch_beside_a_typed_one_is_reported_at_the_branch(tmp_path):
    path = tmp_path / "prog.linnet"
    path.write_text("module m\n\nentry main(c: bool, x: i8) -> i8 {\n"
                    "    let y = if c { x } else { 300 }\n    return y\n}\n")
    [d] = check_program(str(path)).diagnostics
    assert d.code == "E2105" and path.read_text()[d.span.start:d.span.end] == "300"


IN_RANGE = [
    "let c: i8 = if v > 1.0 { 127 } else { -128 }",
    "let h: f16 = if v > 1.0 { 65504.0 } else { -65504.0 }",
    "let c: u8 = select(c, 0, 255)",
    "let c: i8 = (if c { 1 } else { 100 }) + 27",
    "var n = 9223372036854775807",
]


@pytest.mark.parametrize("body", IN_RANGE)
def test_literals_in_range_check(tmp_path, body):
    assert _check(tmp_path, "    " + body) == []


PROGRAM = """module branch_literals

entry main(v: f32, c: bool) -> (i8, f16, u8) {
    let a: i8 = if v > 1.0 { 127 } else { -128 }
    let h: f16 = if v > 1.0 { 65504.0 } else { 0.5 }
    let u: u8 = select(c, 248, 0) + if c { 7 } else { 5 }
    return (a, h, u)
}
"""


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
@pytest.mark.parametrize("v, c, want", [(2.0, True, (127, 65504.0, 255)),
                                        (0.0, False, (-128, 0.5, 5))])
def test_branch_literals_in_range_run(tmp_path, compile, v, c, want):
    path = tmp_path / "prog.linnet"
    path.write_text(PROGRAM)
    a, h, u = lt.load_function(str(path), "main", compile=compile)(
        torch.tensor(v), torch.tensor(c))
    assert (a.dtype, h.dtype, u.dtype) == (torch.int8, torch.float16, torch.uint8)
    assert (a.item(), h.item(), u.item()) == want
