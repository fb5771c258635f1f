"""Comparing a kernel's outputs with its body's: per-dtype, per-numerics tolerances and
the verdicts `compare_kernel_and_body` (harness.py) and the tuner report.

Why apart from the harness: the harness draws programs, sizes and inputs and runs them;
this is only the arithmetic of "close enough", which the tuner uses without the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .inputs import TORCH_DTYPE_NAMES

__all__ = ["Tolerance", "tolerance_for", "OutputError", "Comparison", "compare_outputs"]

# ------------------------------------------------------------------------------------------
# Tolerances.

_BASE = {  # (rtol, atol) by dtype for `equivalent`
    "f64": (1e-10, 1e-10),
    "f32": (1e-5, 1e-5),
    "f16": (1e-2, 1e-2),
    "bf16": (2e-2, 2e-2),
}
_FAST = 1e-2  # `fast`: tile products may use TF32 (10-bit mantissa)


@dataclass(frozen=True)
class Tolerance:
    """`|kernel - body| <= atol * scale + rtol * |body|` elementwise, where `scale` is the
    largest magnitude in the body's output (1 when that is 0), so `atol` is relative to the
    output as a whole and means the same for outputs of any size. `exact`: bit-equal."""
    rtol: float
    atol: float
    exact: bool = False

    def __str__(self) -> str:
        return "exact" if self.exact else f"rtol {self.rtol:.1e}, atol {self.atol:.1e}"


def tolerance_for(dtype: str, numerics: str = "equivalent",
                  reduction_length: int = 1) -> Tolerance:
    """The tolerance for an output of `dtype` under `numerics`.

    Integers and bools must agree exactly. Floats: `f32` under `equivalent` 1e-5 relative
    and absolute, `fast` (TF32 tile products) 1e-2, `f16` 1e-2 and `bf16` 2e-2 whatever the
    numerics, `f64` 1e-10; each multiplied by `max(1, sqrt(n) / 4)` for reductions over `n`
    elements (summation order differs between a kernel and a body: tiles, trees, loops).
    """
    if dtype not in _BASE:
        return Tolerance(0.0, 0.0, exact=True)
    rtol, atol = _BASE[dtype]
    if numerics == "fast" and dtype in ("f32", "f64"):
        rtol, atol = max(rtol, _FAST), max(atol, _FAST)
    factor = max(1.0, math.sqrt(max(1, reduction_length)) / 4.0)
    return Tolerance(rtol * factor, atol * factor)


# ------------------------------------------------------------------------------------------
# Comparing.

@dataclass
class OutputError:
    """How far one kernel output (or one input's gradient) is from the body's."""
    name: str
    dtype: str
    shape: tuple[int, ...]
    max_abs: float
    max_rel: float
    ratio: float  # the worst |kernel - body| / allowed; <= 1 passes
    tolerance: Tolerance
    problem: str | None = None  # a mismatch of shape, or of NaN / infinity positions

    @property
    def ok(self) -> bool:
        return self.problem is None and self.ratio <= 1.0

    def __str__(self) -> str:
        if self.problem:
            return f"{self.name}: {self.problem}"
        return (f"{self.name}: max abs {self.max_abs:.2e}, max rel {self.max_rel:.2e} "
                f"({self.ratio:.2f} of {self.tolerance})")


@dataclass
class Comparison:
    """The result of `compare_kernel_and_body`."""
    label: str
    values: dict[str, Any]
    numerics: str
    device: str
    outputs: list[OutputError]
    grads: list[OutputError]
    kernel_chosen: bool  # the compiled module holds a Triton kernel
    kernel_ran: bool  # ... and it was launched (CUDA tensors, or the interpreter)
    runtime: str
    problem: str | None = None  # the kernel raised, or carried no gradient

    @property
    def ok(self) -> bool:
        return self.problem is None and all(e.ok for e in self.outputs + self.grads)

    @property
    def worst(self) -> OutputError | None:
        errors = [e for e in self.outputs if not e.ok] or self.outputs
        return max(errors, key=lambda e: (not e.ok, e.ratio), default=None)

    @property
    def worst_grad(self) -> OutputError | None:
        errors = [e for e in self.grads if not e.ok] or self.grads
        return max(errors, key=lambda e: (not e.ok, e.ratio), default=None)

    def failures(self) -> list[str]:
        found = [self.problem] if self.problem else []
        return found + [str(e) for e in self.outputs + self.grads if not e.ok]

    def __str__(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.values.items())
        verdict = "agree" if self.ok else "DISAGREE: " + "; ".join(self.failures())
        lines = [f"{self.label} at {shown} ({self.numerics}, {self.runtime}): {verdict}"]
        lines += [f"  forward  {e}" for e in self.outputs]
        lines += [f"  gradient {e}" for e in self.grads]
        return "\n".join(lines)


def compare_outputs(name: str, body, kernel, tolerance: Tolerance) -> OutputError:
    """Compare one kernel tensor against the body's (NaNs and infinities must coincide)."""
    import torch
    dtype = str(body.dtype).replace("torch.", "")
    lname = {v: k for k, v in TORCH_DTYPE_NAMES.items()}.get(dtype, dtype)
    shape = tuple(body.shape)
    if tuple(kernel.shape) != shape:
        return OutputError(name, lname, shape, math.inf, math.inf, math.inf, tolerance,
                           f"shape {list(kernel.shape)}, the body's {list(shape)}")
    if kernel.dtype != body.dtype:
        return OutputError(name, lname, shape, math.inf, math.inf, math.inf, tolerance,
                           f"dtype {kernel.dtype}, the body's {body.dtype}")
    if body.numel() == 0:
        return OutputError(name, lname, shape, 0.0, 0.0, 0.0, tolerance)
    if tolerance.exact or not body.dtype.is_floating_point:
        b, k = body.detach().cpu(), kernel.detach().cpu()
        if body.dtype == torch.bool:
            b, k = b.to(torch.int64), k.to(torch.int64)
        differ = b != k
        count = int(differ.sum())
        if b.dtype == torch.uint64:  # no subtraction on uint64 in torch: count only
            return OutputError(name, lname, shape, float(count > 0), float(count > 0),
                               math.inf if count else 0.0, tolerance,
                               f"{count} elements differ" if count else None)
        diff = (b.to(torch.float64) - k.to(torch.float64)).abs()
        worst = float(diff.max())
        return OutputError(name, lname, shape, worst, worst, math.inf if count else 0.0,
                           tolerance, f"{count} of {b.numel()} elements differ" if count else None)
    b = body.detach().to("cpu", torch.float64)
    k = kernel.detach().to("cpu", torch.float64)
    b_nan, k_nan = torch.isnan(b), torch.isnan(k)
    b_inf, k_inf = torch.isinf(b), torch.isinf(k)
    special = b_nan | k_nan | b_inf | k_inf
    agree_special = (b_nan & k_nan) | (b_inf & k_inf & (b == k))
    if bool((special & ~agree_special).any()):
        count = int((special & ~agree_special).sum())
        where = tuple(int(i) for i in (special & ~agree_special).nonzero()[0])
        return OutputError(name, lname, shape, math.inf, math.inf, math.inf, tolerance,
                           f"NaN or infinity at {count} position(s) that differ, first at "
                           f"{list(where)} (body {b[where].item()}, kernel {k[where].item()})")
    finite = ~special
    b, k = torch.where(finite, b, 0.0), torch.where(finite, k, 0.0)
    diff = (k - b).abs()
    scale = float(b.abs().max()) or 1.0
    allowed = tolerance.atol * scale + tolerance.rtol * b.abs()
    ratio = diff / allowed
    rel = diff / b.abs().clamp_min(1e-30)
    return OutputError(name, lname, shape, float(diff.max()), float(rel.max()),
                       float(ratio.max()), tolerance)


def result_names(spec: object, count: int) -> list[str]:
    """The outputs' names in a comparison: `result`, or `result 0`, `result 1`, ..."""
    if count == 1:
        return ["result"]
    return [f"result {k}" for k in range(count)]
