"""The primitive table (linnet/prims, docs/prims.md) is what every printer reads: each
`Via` names a function of its printer, each `Op` is a target that applies operators."""

from __future__ import annotations

import pytest

from linnet import prims
from linnet.emit import jax_ops, onnx_ops, stablehlo_ops, torch_ops, triton_ops
from linnet.ir import tensor as ir

FUNCTIONS = {"torch": set(torch_ops.FUNCTIONS),
             "jax": set(jax_ops.functions("exact", True, False)),
             "onnx": set(onnx_ops.FUNCTIONS), "stablehlo": set(stablehlo_ops.FUNCTIONS),
             "triton": set(triton_ops.functions("exact"))}


@pytest.mark.parametrize("target", prims.TARGETS)
def test_every_via_names_a_function_of_its_printer(target):
    named = {row.form(target).name for row in prims.PRIMS.values()
             if isinstance(row.form(target), prims.Via)}
    assert named - FUNCTIONS[target] == set()
    assert FUNCTIONS[target] - named == set()  # no function the table does not name


@pytest.mark.parametrize("target", ["torch", "jax", "triton"])
def test_operators_are_for_onnx_and_stablehlo_only(target):
    assert not [r.name for r in prims.PRIMS.values() if isinstance(r.form(target), prims.Op)]


def test_the_ir_signatures_and_effects_are_the_table_s():
    assert ir.PRIMS == prims.signatures()
    assert ir.EFFECTS == prims.EFFECTS
    assert prims.MATH == ("exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf")


def test_every_printer_writes_a_math_row_from_its_form():
    x = ir.TType((4,), "f32")
    assert torch_ops.prim_expr("tanh", ["a"], [x], x) == "torch.tanh(a)"
    assert jax_ops.prim_expr("erf", ["a"], [x], x) == "lax.erf(a)"
    assert triton_ops.prim_expr("erf", ["a"], [x], x) == "tl.erf(a)"
    half = ir.TType((4,), "f16")
    assert triton_ops.prim_expr("erf", ["a"], [half], half) == \
        "tl.erf(a.to(tl.float32)).to(_lt_f16)"
