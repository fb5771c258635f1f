"""`next_pow2(d)` in dimension expressions: its atom in the normal form, what the prover
knows about it, and its value once generics are bound (`Dim.next_pow2`, the checker's
prelude call, and the folding that `elaborate` does).

The random trees of `test_dims.py` include it too, so the normal form's evaluation and the
prover's soundness are checked on random expressions that mix it with the other atoms.
"""

from __future__ import annotations

import pytest

from linnet.check.dims import Dim, Facts
from linnet.pipeline import compile_source

from programs import diagnostics_of, write_program

C, M, R = (Dim.sym(name) for name in "CMR")


def np2(d: Dim | int) -> Dim:
    return Dim.next_pow2(d)


# --------------------------------------------------------------------------------------
# Normal form


@pytest.mark.parametrize(("n", "power"), [(-5, 1), (0, 1), (1, 1), (2, 2), (3, 4), (100, 128),
                                          (768, 1024), (1024, 1024), (1025, 2048),
                                          (2**40 + 1, 2**41)])
def test_constants_fold(n: int, power: int) -> None:
    assert np2(n).as_int() == power


def test_an_atom_prints_as_a_call() -> None:
    assert str(np2(C)) == "next_pow2(C)"
    assert str(np2(C + 1)) == "next_pow2(C + 1)"
    assert str(2 * np2(C)) == "2*next_pow2(C)"
    assert str(Dim.const(4096).floordiv(np2(C))) == "4096 / next_pow2(C)"
    assert str(Dim.maximum(1, Dim.const(4096).floordiv(np2(C)))) == \
        "max(4096 / next_pow2(C), 1)"  # operands in canonical order


def test_equal_operands_give_equal_atoms() -> None:
    assert np2(C + 1) == np2(1 + C)
    assert hash(np2(C * M)) == hash(np2(M * C))
    assert np2(C) != np2(C + 1) and np2(C) != C
    assert np2(C) - np2(C) == Dim.const(0)


def test_idempotent() -> None:
    assert np2(np2(C)) == np2(C)
    assert np2(np2(C + 3)) == np2(C + 3)


def test_evaluates_substitutes_and_lists_its_symbols() -> None:
    assert np2(C).evaluate({"C": 768}) == 1024
    assert np2(C - M).evaluate({"C": 3, "M": 5}) == 1
    assert (R * np2(C)).evaluate({"R": 3, "C": 5}) == 24
    assert np2(C).substitute({"C": 1000}).as_int() == 1024
    assert np2(C).substitute({"C": 2 * M}) == np2(2 * M)
    assert np2(C).symbols() == frozenset({"C"})
    assert (np2(C * 3) - 2).coefficients() == (1, -2, 3)


# --------------------------------------------------------------------------------------
# What the prover knows


NAMES = Facts("CMR")


def test_at_least_its_operand_and_at_least_one() -> None:
    assert NAMES.prove(np2(C), ">=", C)
    assert NAMES.prove(np2(C), ">=", 1)
    assert NAMES.prove_positive(np2(C))
    assert NAMES.prove_positive(np2(C - M))  # 1 for a negative operand
    assert NAMES.prove(np2(C + 1), ">", C)


def test_it_may_divide() -> None:
    rows_per_program = Dim.maximum(1, Dim.const(4096).floordiv(np2(C)))
    assert NAMES.prove(rows_per_program, ">=", 1)
    assert NAMES.prove_positive((R + np2(C) - 1).floordiv(np2(C)) + 1)


def test_a_where_clause_bound_to_it_is_provable() -> None:
    """`kernel k<R, C, next_pow2(C)>` for a kernel `where B >= C`."""
    bound = Facts("CRB").assume(Dim.sym("B"), "==", np2(C))
    assert bound.prove(Dim.sym("B"), ">=", C)
    assert bound.prove_positive(Dim.sym("B"))


def test_below_twice_its_operand_once_that_is_positive() -> None:
    assert not NAMES.prove(np2(C), "<", 2 * C)  # false at C = 0, where it is 1
    assert NAMES.assume(C, ">=", 1).prove(np2(C), "<", 2 * C)
    assert NAMES.assume(C, ">=", 1).prove(np2(C), "<=", 2 * C - 1)


def test_what_does_not_follow() -> None:
    assert not NAMES.prove(np2(C), ">", C)  # equal at powers of two
    assert not NAMES.prove(np2(C), "==", C)
    assert not NAMES.prove(np2(C), "<=", C)
    assert not NAMES.prove(np2(C), ">=", 2)
    assert NAMES.counterexample(np2(C), ">", C) is not None


# --------------------------------------------------------------------------------------
# In programs: evaluated at binding


PROGRAM = """\
module np2_binding

pub kernel double_rows<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    store(y[row, cols], load(x[row, cols], mask, 0.0) * 2.0, mask)
}

pub op double<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel double_rows<R, C, next_pow2(C)> {
    return x * 2.0
}

entry main<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> (Tensor[R, C; f32], Tensor[next_pow2(C); i64], i64) {
    let n = next_pow2(C + 1)
    return (double(x), iota(next_pow2(C)), n)
}
"""


@pytest.mark.parametrize(("c", "tile"), [(1, 1), (5, 8), (8, 8), (768, 1024), (1000, 1024)])
def test_the_kernel_binding_evaluates_to_a_power_of_two(c: int, tile: int) -> None:
    text = compile_source(PROGRAM, path="np2_binding.linnet", entry="main",
                          bind={"R": 3, "C": c}).text
    assert f"kernel double_rows<R=3, C={c}, B={tile}>" in text
    assert f"tl.arange(0, {tile})" in text
    assert f"torch.arange({tile}," in text


def test_a_value_folds_at_binding(tmp_path) -> None:
    import torch

    from linnet.torch import load_function
    main = load_function(write_program(tmp_path, PROGRAM), "main", compile=False)
    y, ramp, n = main(torch.ones(2, 5))
    assert torch.equal(y, torch.full((2, 5), 2.0))
    assert ramp.tolist() == list(range(8))
    assert int(n) == 8


@pytest.mark.parametrize(("call", "code"), [
    ("next_pow2(C, 2)", "E2102"), ("next_pow2()", "E2102"), ("next_pow2(1.5)", "E2123"),
    ("next_pow2(x)", "E2123"), ("next_pow2<i64>(C)", "E2111")])
def test_the_checker_reports_wrong_arguments(tmp_path, call: str, code: str) -> None:
    text = ("module m\n\nentry main<C: Dim>(x: Tensor[C; f32]) -> i64 {\n"
            f"    return {call}\n}}\n")
    assert [c for c, _ in diagnostics_of(tmp_path, text)] == [code]


def test_the_checker_accepts_a_dim_argument(tmp_path) -> None:
    text = ("module m\n\nentry main<C: Dim>(x: Tensor[C; f32]) -> i64 {\n"
            "    return next_pow2(C) + next_pow2(3)\n}\n")
    assert diagnostics_of(tmp_path, text) == []
