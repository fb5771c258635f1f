"""What every printer shares about a program's layout, whatever it prints to: comments that
carry user text safely, and how a loop body's result unpacks into carried values.

These sit apart from any one printer so that printing ONNX, StableHLO or JAX does not import
the PyTorch printer.
"""

from __future__ import annotations

from ..ir import tensor as ir


def comment(text: object) -> str:
    """Text safe inside a `#` comment: printable ASCII; anything else escaped (`\\n`, `\\xe9`).
    (Most text is printable ASCII already: it is then returned as it is, not rebuilt
    character by character, as a generated line's comments are, twice a line.)"""
    text = str(text)
    if text.isascii() and text.isprintable():  # ASCII printable: exactly " " to "~"
        return text
    return "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in text)


def unpack_count(result_type: ir.Ty, expected: list[ir.Ty]) -> bool:
    """Whether a loop body's result is a tuple of the `expected` values (else the one value)."""
    if len(expected) == 1 and result_type == expected[0]:
        return False
    if isinstance(result_type, ir.TupleTy) and len(result_type.items) == len(expected):
        return True
    raise ValueError(f"a loop body returns {result_type}, expected "
                     f"{len(expected)} value(s): {', '.join(map(str, expected))}")


def loop_expected(e: ir.Loop | ir.While) -> list[ir.Ty]:
    """The types a Loop/While body returns: the carried values, then a scan's yields."""
    expected = [v.type for v in e.carried]
    if isinstance(e, ir.Loop):
        expected.extend(e.yield_types)
    return expected


_FLOATS = ("f16", "bf16", "f32", "f64")


def has_own_autograd(f: ir.Func) -> bool:
    """Whether an op is differentiated through its own autograd Function (generated PyTorch,
    the PyTorch interpreter) or `custom_vjp` (generated JAX): when every parameter is a
    tensor (scalars included, as rank-0 tensors), so that each can be saved and given a
    gradient."""
    return all(isinstance(p.type, ir.TType) for p in f.params)


def grad_slots(f: ir.Func) -> list[int | None]:
    """For each parameter of an op with a `grad` clause, the position of its gradient in
    the clause's result (a tuple when several, else position 0), or None for a parameter
    that takes none (docs/language.md, "Gradients": only floating tensor parameters take one).

    Every backend that runs a clause under autograd maps its result to parameters by this
    one function, so they cannot disagree about which gradient belongs to which input."""
    if f.grad is None:
        raise ValueError(f"op {f.name} has no grad clause")
    floats = [k for k, p in enumerate(f.params)
              if isinstance(p.type, ir.TType) and p.type.rank and p.type.dtype in _FLOATS]
    ty = f.grad.body.result.type
    count = len(ty.items) if isinstance(ty, ir.TupleTy) else 1
    if count != len(floats):
        raise ValueError(f"the grad clause of op {f.name} returns {ty} for "
                         f"{len(floats)} floating tensor parameter(s)")
    slot = {k: j for j, k in enumerate(floats)}
    return [slot.get(k) for k in range(len(f.params))]

