"""The float math functions: `exp log sqrt rsqrt sin cos tanh erf`, one row each.

Each is a prelude function of one float operand (family "math": floats only, the result
of the operand's type), computed by the oracle in f64 and rounded once to the dtype, and
in kernels on f32 for f16/bf16 operands. A row gives the derivative as the vector-Jacobian
product `dy * f'(x)`, written with the emitter of `linnet.passes.adjoint.emit` (`em`),
reading the operand `e.args[0]` or the result `y`, whichever is cheaper.

To add a function, add a row here (docs/prims.md walks through `erf`).
"""

from __future__ import annotations

import math

import numpy as np

from .definition import Generated, Op, PrimDef, Text, Via
from .folds import FOLDS


def _exp(em, e, y, dy):
    return (lambda: em.mul(dy, y),)


def _log(em, e, y, dy):
    return (lambda: em.div(dy, e.args[0]),)


def _sqrt(em, e, y, dy):
    return (lambda: em.div(em.mul(dy, em.literal(0.5, y.type.dtype)), y),)


def _rsqrt(em, e, y, dy):
    """d x^(-1/2) = -x^(-3/2) / 2 = -y^3 / 2."""
    return (lambda: em.mul(em.mul(dy, em.literal(-0.5, y.type.dtype)),
                           em.mul(y, em.mul(y, y))),)


def _sin(em, e, y, dy):
    return (lambda: em.mul(dy, em.prim("cos", e.args, e.args[0].type)),)


def _cos(em, e, y, dy):
    return (lambda: em.neg(em.mul(dy, em.prim("sin", e.args, e.args[0].type))),)


def _tanh(em, e, y, dy):
    one = em.literal(1.0, y.type.dtype)
    return (lambda: em.mul(dy, em.elementwise("sub", one, em.mul(y, y))),)


def _erf(em, e, y, dy):
    """d erf(x) = 2 / sqrt(pi) * exp(-x^2)."""
    (x,) = e.args
    scale = em.literal(2 / math.sqrt(math.pi), x.type.dtype)
    return (lambda: em.mul(em.mul(dy, scale),
                           em.prim("exp", (em.neg(em.mul(x, x)),), x.type)),)


#: `math.erf` over an array of floats (NumPy has no erf of its own).
_erf_f64 = np.vectorize(math.erf, otypes=[np.float64])


def _rsqrt_f64(x: np.ndarray) -> np.ndarray:
    return 1.0 / np.sqrt(x)


def math_row(name: str, numpy, derivative, *, generated: Generated | None = None, torch=None,
             jax=None, onnx=None, stablehlo=None, triton=None) -> PrimDef:
    """A float function of one operand; each target's form defaults to the function of
    the same name (`torch.exp`, `jnp.exp`, `tl.exp`)."""
    return PrimDef(name, 1, "math", numpy=numpy, derivative=derivative, in_f32=True,
                   prelude=name, fold=FOLDS.get(name), generated=generated,
                   torch=torch or Text(f"torch.{name}({{0}})"),
                   jax=jax or Text(f"jnp.{name}({{0}})"),
                   onnx=onnx or Op(name.capitalize()),
                   stablehlo=stablehlo or Op(f"stablehlo.{name}"),
                   triton=triton or Text(f"tl.{name}({{0}})"))


def _rsqrt_bound(x: float) -> float:
    return 1 / math.sqrt(x)


ROWS = (
    math_row("exp", np.exp, _exp, stablehlo=Op("stablehlo.exponential"),
             generated=Generated(within=(-30.0, 3.0), bound=math.exp)),
    math_row("log", np.log, _log, generated=Generated("positive", bound=math.log)),
    math_row("sqrt", np.sqrt, _sqrt, triton=Via("sqrt"),
             generated=Generated("nonnegative", bound=math.sqrt)),
    math_row("rsqrt", _rsqrt_f64, _rsqrt, jax=Via("rsqrt"), onnx=Via("rsqrt"),
             triton=Via("rsqrt"),
             generated=Generated("positive", bound=_rsqrt_bound, decreasing=True)),
    math_row("sin", np.sin, _sin, stablehlo=Op("stablehlo.sine"), generated=Generated()),
    math_row("cos", np.cos, _cos, stablehlo=Op("stablehlo.cosine"), generated=Generated()),
    math_row("tanh", np.tanh, _tanh, triton=Text("_lt_tanh({0})"),
             generated=Generated(bound=math.tanh)),
    # onnxruntime has no f64 Erf: an f64 erf is computed in f32 there (docs/language.md);
    # so the fuzzer does not generate it (its f64 cases would differ past f64 tolerances).
    # Triton's `tl.erf` (the default form) is exported by triton.language 3.6 and 3.9 alike.
    math_row("erf", _erf_f64, _erf, jax=Text("lax.erf({0})"),
             onnx=Op("Erf", work=(("f64", "f32"),)), stablehlo=Op("chlo.erf")),
)
