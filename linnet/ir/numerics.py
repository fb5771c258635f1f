"""The `--numerics` modes: the one list every reader takes them from.

A compilation's numerics (`Options.numerics`) say how far a kernel may stray from its op's
body: `exact` runs no kernel at all, `equivalent` (the default) runs kernels that compute
what the body computes up to the rounding of another order of operations, `fast` lets
kernels use the device's approximate division and square root and TF32 tile products.
What each mode means for a printed kernel is `linnet.ir.kernel_numerics`; the command
line's choices, `linnet.pipeline.NUMERICS` and that policy all read `MODES` here.
"""

from __future__ import annotations

__all__ = ["MODES", "DEFAULT", "KERNEL_MODES", "check_numerics", "numerics_of",
           "runs_kernels"]

MODES: tuple[str, ...] = ("exact", "equivalent", "fast")
DEFAULT = "equivalent"


def check_numerics(numerics: str) -> None:
    """A ValueError unless numerics is one of `MODES`."""
    if numerics not in MODES:
        raise ValueError(f"numerics is one of {', '.join(MODES)}, not {numerics!r}")


def numerics_of(options: object | None) -> str:
    """The numerics of a compilation's `Options`, the one channel passes and printers read
    them from; `DEFAULT` for a printer or pass called without options."""
    return DEFAULT if options is None else options.numerics


def runs_kernels(numerics: str) -> bool:
    """Do ops with a kernel run it? Not under `exact`: there every op runs its body, the
    definition the kernels are checked against (`linnet verify`)."""
    check_numerics(numerics)
    return numerics != "exact"


#: The targets whose generated code launches kernels (Triton, Pallas); the others run bodies.
KERNEL_TARGETS: tuple[str, ...] = ("torch", "jax")


def kernels_may_run(options) -> bool:
    """May ops of this compilation run their kernels? Under numerics other than `exact`,
    without `--grad` (gradients come from bodies and grad clauses), for a target that
    launches kernels. `choose-kernels` keeps kernels, and `elaborate` applies call
    rewrites (passes/front/call_rewrites.py), only then."""
    return runs_kernels(options.numerics) and not options.grad \
        and options.target in KERNEL_TARGETS


#: The modes under which kernels run: those a tuning file records choices for.
KERNEL_MODES: tuple[str, ...] = tuple(m for m in MODES if runs_kernels(m))
