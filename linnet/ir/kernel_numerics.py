"""What a kernel computes under each `--numerics` mode: the one policy both kernel printers
follow.

Two printers write kernels: the Triton printer (`linnet.emit.triton`, `triton_ops`) and the
Pallas printer (`linnet.emit.pallas`, over `jax_ops`). Each spells the policy in its own
language; neither decides it. The modes (`linnet.ir.numerics.MODES`; docs/kernels.md,
"Launching kernels"):

- `exact`: no kernel runs; every op runs its body, the op's definition (`runs_kernels`).
- `equivalent`: kernels run and compute what the body computes up to the rounding of a
  different order of operations: f32 division and square root correctly rounded, f32 tile
  products at full f32 precision.
- `fast`: kernels may use the device's approximate f32 division and square root, and TF32
  tile products (a 10-bit mantissa for the operands, f32 accumulation).

The rules below are the same for every numerics where they do not name one. A printed
kernel under `exact` (the printers still print it) follows `equivalent`.

Known gap: Pallas has no spelling of a correctly rounded f32 division. Its Triton lowering
turns `/` into `arith.divf`, which Triton compiles to the approximate `div.full.f32` on
NVIDIA GPUs, so a Pallas kernel's f32 division is within 2 ulp under every numerics, where
`rounded` asks for the correctly rounded quotient. (Its `sqrt` is libdevice's `sqrtf`.)
"""

from __future__ import annotations

from .numerics import MODES, check_numerics as _check, runs_kernels
from .prim_types import FLOATS
from ..prims import PRIMS

__all__ = ["MODES", "runs_kernels", "computes_in_f32", "accumulates_in", "work_dtype",
           "rounded", "precise_rsqrt", "tile_product_precision", "full_f32_products",
           "reduced_precision_contractions"]

HALF = ("f16", "bf16")

#: Elementwise primitives a half-precision kernel computes in f32 and rounds back once.
IN_F32 = ("div", "mod") + tuple(name for name, row in PRIMS.items() if row.in_f32)
#: Primitives whose result `rounded` may ask to be correctly rounded.
ROUNDABLE = ("div", "sqrt")
#: Reductions and scans that accumulate: in f32 for half dtypes.
ACCUMULATING = ("reduce_sum", "reduce_prod", "cumsum", "dot")


def computes_in_f32(op: str, dtype: str) -> bool:
    """Is the elementwise `op` on `dtype` computed on f32 operands and rounded back once?

    For f16/bf16 division, remainder, square roots and the transcendental functions, under
    every numerics. Why: torch and XLA compute them so (the bodies do), Pallas's Triton
    lowering has no half division, and Triton has most math in f32 only. f32 carries more
    than twice the bits of either half type plus two, so the f32 result of one operation
    rounded once is the correctly rounded half result: nothing is lost by the detour.

    Not for `add`, `sub`, `mul`, `neg`, comparisons and min/max: the device computes these in
    the half dtype correctly rounded (on chips without bf16 arithmetic the compiler
    widens to f32 and rounds once itself, the same value), so the printers write them as
    they are."""
    return dtype in HALF and op in IN_F32


def accumulates_in(op: str, dtype: str) -> str:
    """The dtype the sums of a `reduce_sum`, `reduce_prod`, `cumsum` or `dot` of `dtype`
    values accumulate in: f32 for the half types, rounded once at the end (as the PyTorch
    backends and XLA do; a half accumulator loses a bit per doubling of the length),
    otherwise the dtype itself."""
    return "f32" if dtype in HALF and op in ACCUMULATING else dtype


def work_dtype(op: str, dtype: str) -> str:
    """The dtype the elementwise `op` on `dtype` is computed in (`computes_in_f32`)."""
    return "f32" if computes_in_f32(op, dtype) else dtype


def rounded(op: str, dtype: str, numerics: str) -> bool:
    """Must the float `op` (`div` or `sqrt`) give the correctly rounded result in its work
    dtype (`work_dtype`)?

    Under `exact` and `equivalent`, yes: the body's division and square root (torch's,
    XLA's) are IEEE, and a kernel that is to compute the same values must be too; an
    approximate f32 reciprocal is off by up to 2 ulp, which a later subtraction can
    magnify past any tolerance. Under `fast`, no: the device's approximate forms are several
    times cheaper. Not for integers, nor for other primitives (see `precise_rsqrt`)."""
    _check(numerics)
    return op in ROUNDABLE and dtype in FLOATS and numerics != "fast"


def precise_rsqrt(dtype: str, numerics: str) -> bool:
    """Must `rsqrt` be correctly rounded (a rounded square root, then a rounded division)?

    No, under every numerics: kernels use the device's `rsqrt` (CUDA's `rsqrtf`, within
    2 ulp). It is what `torch.rsqrt` and XLA compute on a GPU, so the kernel matches the op
    body run there, at a fraction of the cost of an IEEE square root and division (a row's
    statistics are per-thread scalar work in every program)."""
    _check(numerics)
    return False


def tile_product_precision(operand_dtype: str, numerics: str) -> str:
    """The `precision` attribute of a kernel's tile product (`dot`) of `operand_dtype` tiles:

    - `"ieee"` for f32 tiles under `exact` and `equivalent`: products at full f32 precision,
      as the body's contraction (`torch.matmul` with TF32 off, XLA's `HIGHEST`) computes.
    - `"tf32"` for f32 tiles under `fast`: the operands rounded to TF32 (10 mantissa bits)
      on the tensor cores, accumulated in f32 — about 8 times the throughput, with a
      relative error near 1e-3 per product.
    - `""` for half tiles: their products are exact in the f32 accumulator, so there is no
      choice to make."""
    _check(numerics)
    if operand_dtype != "f32":
        return ""
    return "tf32" if numerics == "fast" else "ieee"


def full_f32_products(operand_dtype: str, precision: str) -> bool:
    """Does a tile product of `operand_dtype` tiles with this `precision` attribute multiply
    at full f32 precision? For f32 tiles unless the attribute is `"tf32"`; half tiles are
    multiplied as they are (exactly, in the f32 accumulator), with no precision to ask for."""
    return operand_dtype == "f32" and precision != "tf32"


def reduced_precision_contractions(numerics: str) -> bool:
    """May the contractions of op bodies (einsums, `dot`) use the device's reduced
    precision (TF32 for f32 operands)? Only under `fast`, as for tile products
    (`tile_product_precision`)."""
    _check(numerics)
    return numerics == "fast"
