"""The kernel numerics policy (`linnet.ir.kernel_numerics`) and the two kernel printers
that follow it: the Triton printer (`triton_ops`) and the Pallas printer (`jax_ops` with
`kernel=True`, `pallas.KernelFunc.dot`)."""

from __future__ import annotations

import pytest

from linnet.emit import jax_ops, pallas, triton_ops
from linnet.ir import kernel_numerics as kn
from linnet.ir import tensor as ir

MODES = ("exact", "equivalent", "fast")
UNARY_FLOAT = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh")
BINARY_FLOAT = ("add", "sub", "mul", "div", "mod", "min", "max")


def _texts(op: str, dtype: str, numerics: str) -> tuple[str, str, str]:
    """(Triton kernel, Pallas kernel, JAX body) text of `op` on two (or one) operands."""
    arity = 2 if op in BINARY_FLOAT else 1
    t = ir.TType((4,), dtype)
    args, tys = ["a", "b"][:arity], [t] * arity
    return (triton_ops.prim_expr(op, args, tys, t, (), numerics),
            jax_ops.prim_expr(op, args, tys, t, (), numerics, False, kernel=True),
            jax_ops.prim_expr(op, args, tys, t, (), numerics))


def test_the_policy_table() -> None:
    assert kn.computes_in_f32("div", "bf16") and kn.computes_in_f32("tanh", "f16")
    assert not kn.computes_in_f32("add", "bf16") and not kn.computes_in_f32("div", "f32")
    assert kn.work_dtype("sqrt", "bf16") == "f32" and kn.work_dtype("mul", "bf16") == "bf16"
    assert [kn.rounded("div", "f32", m) for m in MODES] == [True, True, False]
    assert [kn.rounded("sqrt", "bf16", m) for m in MODES] == [True, True, False]
    assert not kn.rounded("add", "f32", "equivalent") and not kn.rounded("div", "i32", "exact")
    assert not any(kn.precise_rsqrt(d, m) for d in kn.FLOATS for m in MODES)
    assert [kn.tile_product_precision("f32", m) for m in MODES] == ["ieee", "ieee", "tf32"]
    assert kn.tile_product_precision("bf16", "fast") == ""
    assert kn.full_f32_products("f32", "ieee") and not kn.full_f32_products("f32", "tf32")
    assert not kn.full_f32_products("bf16", "")
    assert [kn.runs_kernels(m) for m in MODES] == [False, True, True]
    assert [kn.reduced_precision_contractions(m) for m in MODES] == [False, False, True]
    assert kn.accumulates_in("reduce_sum", "bf16") == "f32"
    assert kn.accumulates_in("reduce_max", "bf16") == "bf16"


def test_an_unknown_numerics_is_refused() -> None:
    with pytest.raises(ValueError, match="numerics is one of"):
        kn.rounded("div", "f32", "approximate")


def test_bf16_division_under_equivalent_is_computed_in_f32_by_both_kernel_printers() -> None:
    tt, pl, body = _texts("div", "bf16", "equivalent")
    assert tt == "tl.div_rn(a.to(tl.float32), b.to(tl.float32)).to(_lt_bf16)"
    assert pl == ("lax.convert_element_type((lax.convert_element_type(a, jnp.float32) / "
                  "lax.convert_element_type(b, jnp.float32)), jnp.bfloat16)")
    assert body == "(a / b)"  # an op body: XLA's choice


def test_bf16_addition_under_equivalent_stays_bf16_in_both_kernel_printers() -> None:
    assert _texts("add", "bf16", "equivalent") == ("(a + b)", "(a + b)", "(a + b)")


@pytest.mark.parametrize("numerics", MODES)
@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "f64"])
@pytest.mark.parametrize("op", UNARY_FLOAT + BINARY_FLOAT)
def test_both_printers_widen_exactly_where_the_policy_says(op: str, dtype: str,
                                                           numerics: str) -> None:
    tt, pl, _ = _texts(op, dtype, numerics)
    widened = kn.computes_in_f32(op, dtype)
    assert ("a.to(tl.float32)" in tt) == widened, tt
    assert ("lax.convert_element_type(a, jnp.float32)" in pl) == widened, pl


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32"])
def test_triton_division_and_sqrt_are_rounded_where_the_policy_says(dtype: str) -> None:
    for numerics in MODES:
        div, _, _ = _texts("div", dtype, numerics)
        sqrt, _, _ = _texts("sqrt", dtype, numerics)
        rounded = numerics != "fast"
        assert ("tl.div_rn(" in div, "tl.sqrt_rn(" in sqrt) == (rounded, rounded)


def test_f64_division_is_triton_s_own_ieee_division_under_every_numerics() -> None:
    assert {_texts("div", "f64", m)[0] for m in MODES} == {"(a / b)"}


def test_rsqrt_is_the_device_s_and_a_precise_policy_reaches_both_printers(monkeypatch) -> None:
    assert _texts("rsqrt", "f32", "equivalent")[:2] == ("tl.rsqrt(a)", "lax.rsqrt(a)")
    monkeypatch.setattr(kn, "precise_rsqrt", lambda dtype, numerics: True)
    tt, pl, body = _texts("rsqrt", "f32", "equivalent")
    assert (tt, pl, body) == ("tl.div_rn(1.0, tl.sqrt_rn(a))", "(1 / jnp.sqrt(a))",
                              "lax.rsqrt(a)")


def test_the_triton_printer_takes_rounding_from_the_policy(monkeypatch) -> None:
    monkeypatch.setattr(kn, "rounded", lambda op, dtype, numerics: False)
    assert _texts("div", "f32", "equivalent")[0] == "(a / b)"
    assert _texts("sqrt", "bf16", "exact")[0] == "tl.sqrt(a.to(tl.float32)).to(_lt_bf16)"


@pytest.mark.parametrize("dtype,precision,triton,highest", [
    ("f32", "ieee", ', input_precision="ieee"', True),
    ("f32", "tf32", ', input_precision="tf32"', False),
    ("bf16", "", "", False),
])
def test_tile_products_at_the_policy_s_precision(dtype: str, precision: str, triton: str,
                                                 highest: bool) -> None:
    a, b = ir.Var("a", ir.TType((16, 16), dtype)), ir.Var("b", ir.TType((16, 16), dtype))
    e = ir.Prim("dot", (a, b), ir.TType((16, 16), "f32"), (("precision", precision),))
    tt = triton_ops.dot_expr(["a", "b"], [a.type, b.type], e.type, precision)
    assert tt == f"tl.dot(a, b{triton}, out_dtype=tl.float32)"
    pl = pallas.KernelFunc.dot(None, e, ["a", "b"])  # type: ignore[arg-type]
    want = "HIGHEST" if highest else "DEFAULT"
    assert pl == ("jnp.dot(a, b, preferred_element_type=jnp.float32, "
                  f"precision=lax.Precision.{want})")


def test_body_contractions_are_reduced_only_under_fast() -> None:
    assert [jax_ops.precision(m) for m in MODES] == [
        "lax.Precision.HIGHEST", "lax.Precision.HIGHEST", "lax.Precision.DEFAULT"]
