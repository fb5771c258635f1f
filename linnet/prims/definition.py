"""What one primitive is: the record every part of the compiler reads about it.

A `PrimDef` says how many operands a primitive takes and which attributes, to which
family of type rules it belongs, what it means to the NumPy oracle, its derivative, how
`fold-constants` evaluates it on literals (`Fold`), how the fuzzer generates it
(`Generated`), and how each target writes it. Each
target's entry is one of three forms:

- `Text`: a template of the target's code over the operands `{0}`, `{1}`, ...
  (`torch.exp({0})`), which the printer formats;
- `Op`: the target's elementwise operator of that name (`Exp` in ONNX,
  `stablehlo.exponential`), which the printer applies to the operands as it applies
  every such operator (work dtypes, broadcasting);
- `Via`: the name of a small function of the printer, for a primitive whose printing is
  a genuinely special case (a reduction's identity, a slice's bounds).

None means the target has no printing for the primitive (a kernel-only primitive in the
PyTorch table, a slice in a Triton kernel). The module imports nothing of the compiler:
every layer above it (the IR, the checker, the passes, the printers, the oracle) reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Union


@dataclass(frozen=True, slots=True)
class Text:
    """A code template over the operands `{0}`, `{1}`, ..."""
    template: str

    def format(self, *operands: str) -> str:
        return self.template.format(*operands)


@dataclass(frozen=True, slots=True)
class Op:
    """The target's elementwise operator `name`; `work` maps a dtype the target's runtime
    cannot compute the operator in to the dtype it is computed in instead."""
    name: str
    work: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class Via:
    """A function of the printer's own, named `name` (a special case)."""
    name: str


Form = Union[Text, Op, Via, None]


@dataclass(frozen=True, slots=True)
class Fold:
    """How `fold-constants` simplifies the primitive (`linnet.passes.middle.fold_constants`).

    Evaluated on rank-0 literals by one exact function per kind of operand dtype (None: not
    folded for that kind): `ints` takes Python ints, unbounded, and the operands' width in
    bits last (the folder wraps the result at the width); `floats` takes f64 values (the
    folder rounds the result once to the dtype); `bools` takes bools. A function returns
    None where the language leaves the result open, or where backends may differ (a zero
    divisor, a shift of the width or more). `via` names a function of the folder instead,
    for a primitive whose result depends on both dtypes (`cast`).

    Identities, which hold for any operand: `right` and `left` name the folder's test of a
    literal `u` for which `x op u` (`u op x`) is `x`; `unchanged` names the folder's rule
    for a primitive that may return its operand as it is (a reshape to its own type)."""
    ints: Callable[..., Any] | None = None
    floats: Callable[..., Any] | None = None
    bools: Callable[..., Any] | None = None
    via: str = ""
    right: str = ""
    left: str = ""
    unchanged: str = ""

@dataclass(frozen=True, slots=True)
class Generated:
    """How the fuzzer's program generator (`linnet.fuzz.programs.exprs`) writes a call of
    a float function whose result it bounds from its operand's bounds.

    `domain` is what the operand is made first: "any" (as it is), "positive" (at least 1:
    `abs(x) + 1` where it may be below), "nonnegative" (`abs(x)`; positive under `grad`,
    since the slope at 0 may be infinite). An operand that may leave `within` is made
    `-abs(x)`. The result's bounds are `bound` (a monotone function of a Python float,
    decreasing if `decreasing`) at the operand's, or `values` when `bound` is None."""
    domain: str = "any"
    within: tuple[float, float] | None = None
    bound: Callable[[float], float] | None = None
    decreasing: bool = False
    values: tuple[float, float] = (-1, 1)


#: The targets a primitive is printed for; a `PrimDef` has one field per target.
TARGETS = ("torch", "jax", "onnx", "stablehlo", "triton")

#: A derivative: (emitter, the prim, its result, the result's adjoint) -> one thunk (or
#: None) per operand; see `linnet.passes.adjoint.rules`.
Derivative = Callable[[Any, Any, Any, Any], tuple]


@dataclass(frozen=True, slots=True)
class PrimDef:
    """One primitive of the tensor IR.

    `arity` is None for a variadic primitive. `family` names the type rule
    (`linnet.ir.prim_types`) and the checker's rule for the prelude function of the same
    name, if any: "math" is a float function of one float operand (`exp`, `tanh`, ...).
    `numpy` is the oracle's meaning of a "math" primitive: a function of float64 arrays,
    whose result the oracle rounds once to the dtype. `derivative` is the reverse-mode
    rule (None: the primitive takes no gradient, or the adjoint pass has its own rule).
    `in_f32`: kernels compute f16/bf16 operands in f32 and round the result once
    (`linnet.ir.kernel_numerics`). `prelude` names the prelude function that becomes
    this primitive ("" for none). `fold` says how `fold-constants` evaluates and
    simplifies it (None: never; kernel memory and `program_id` are not functions of
    their operands alone). `generated` says how the fuzzer writes it (None: the program
    generator does not, or writes it by a construct of its own: operators, shapes)."""
    name: str
    arity: int | None
    family: str
    attrs: tuple[str, ...] = ()
    numpy: Callable[..., Any] | None = None
    derivative: Derivative | None = None
    in_f32: bool = False
    prelude: str = ""
    fold: Fold | None = None
    generated: Generated | None = None
    torch: Form = None
    jax: Form = None
    onnx: Form = None
    stablehlo: Form = None
    triton: Form = None
    doc: str = field(default="", compare=False)

    def form(self, target: str) -> Form:
        """How `target` writes this primitive."""
        if target not in TARGETS:
            raise ValueError(f"unknown target {target!r}")
        return getattr(self, target)
