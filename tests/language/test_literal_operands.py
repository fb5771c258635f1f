"""Operations whose operands are all untyped literals: `shl(1, 4)`, `select(c, 1.0, 2.0)`.

Every place that meets two operands' dtypes (binary operators, `min`, `max`, `select`,
`shl`, `shr`) must accept two literals: the result stays a literal whose dtype comes from
context where it is a scalar, and takes the literal default (`i64`, `f64`) where it must
be a tensor. Each program is checked, then run through the PyTorch interpreter and the
generated module, in an entry and in a kernel.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import linnet.torch as lt
from linnet.check.frontend import check_program
from linnet.fuzz import compare_kernel_and_body
from programs import write_program

BINARY = ["+", "-", "*", "/", "%", "|", "^", "&", "==", "!=", "<", "<=", ">", ">="]
CALLS = ["min(7, 2)", "max(7, 2.5)", "shl(7, 2)", "shr(7, 1)", "select(c, 7, 2)",
         "select(c, 7.0, 2)"]



def _codes(tmp_path: Path, text: str) -> list[str]:
    return [d.code for d in check_program(write_program(tmp_path, text)).diagnostics]


@pytest.mark.parametrize("op", BINARY)
def test_binary_operator_on_two_literals_checks(tmp_path, op):
    text = f"module m\n\nentry main(c: bool) -> bool {{\n    let v = 7 {op} 2\n    return c\n}}\n"
    assert _codes(tmp_path, text) == []


@pytest.mark.parametrize("call", CALLS)
def test_prelude_call_on_two_literals_checks(tmp_path, call):
    text = f"module m\n\nentry main(c: bool) -> bool {{\n    let v = {call}\n    return c\n}}\n"
    assert _codes(tmp_path, text) == []


def test_shift_of_a_float_literal_is_an_operator_error(tmp_path):
    text = "module m\n\nentry main(c: bool) -> bool {\n    let v = shl(1, 2.0)\n    return c\n}\n"
    assert _codes(tmp_path, text) == ["E2104"]


ENTRY = """module literal_operands

entry main(x: i32, c: bool, cs: Tensor[3; bool]) -> (i32, i32, f32, Tensor[3; f64], i64, u8) {
    let a: i32 = shl(1, 4)
    let b = shl(5, 3) ^ x
    let s: f32 = select(c, 1.0, 2.0)
    let t = select(cs, 1.0, 2)
    let u = shr(256, 2) + 1
    let w: u8 = select(c, 200, 3) + shl(1, 2)
    return (a, b, s, t, u, w)
}
"""


@pytest.mark.parametrize("compile", [False, True], ids=["interpreter", "generated"])
def test_literal_operands_in_an_entry_run(tmp_path, compile):
    f = lt.load_function(write_program(tmp_path, ENTRY), "main", compile=compile)
    a, b, s, t, u, w = f(torch.tensor(3, dtype=torch.int32), torch.tensor(True),
                         torch.tensor([True, False, True]))
    assert (a.dtype, a.item()) == (torch.int32, 16)
    assert (b.dtype, b.item()) == (torch.int32, 40 ^ 3)
    assert (s.dtype, s.item()) == (torch.float32, 1.0)
    assert t.dtype == torch.float64 and t.tolist() == [1.0, 2.0, 1.0]
    assert (u.dtype, u.item()) == (torch.int64, 65)
    assert (w.dtype, w.item()) == (torch.uint8, 204)


KERNEL = """module literal_kernel

pub kernel lit_tile(x: Tensor[16; f32], flag: bool) -> y: Tensor[16; f32] grid(1) {
    let offs = iota<i32>(16)
    let k = shl(1, 2)
    let v = load(x[offs]) * cast<f32>(k) + select(flag, 1.0, 2.0) + cast<f32>(shr(64, 3) ^ 1)
    store(y[offs], v + cast<f32>(min(3, 5) * max(2, 1)))
}

pub op lit(x: Tensor[16; f32], flag: bool) -> Tensor[16; f32] kernel lit_tile {
    let k = shl(1, 2)
    return x * cast<f32>(k) + select(flag, 1.0, 2.0) + cast<f32>(shr(64, 3) ^ 1)
        + cast<f32>(min(3, 5) * max(2, 1))
}

entry main(x: Tensor[16; f32], flag: bool) -> Tensor[16; f32] {
    return lit(x, flag)
}
"""


def test_literal_operands_in_a_kernel_agree_with_the_body(tmp_path):
    path = write_program(tmp_path, KERNEL)
    x = torch.arange(16, dtype=torch.float32)
    result = compare_kernel_and_body(path, "lit", [x, torch.tensor(False)], grad=False)
    assert result.ok and result.kernel_ran, str(result)
    y = lt.load_function(path, "main", compile=False)(x, torch.tensor(False))
    assert y.tolist() == (4 * x + 2 + 9 + 6).tolist()
