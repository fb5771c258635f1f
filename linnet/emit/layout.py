"""What every printer shares about a program's layout, whatever it prints to: comments that
carry user text safely, and how a loop body's result unpacks into carried values.

These sit apart from any one printer so that printing ONNX, StableHLO or JAX does not import
the PyTorch printer.
"""

from __future__ import annotations

from ..ir import tensor as ir


def comment(text: object) -> str:
    """Text safe inside a `#` comment: printable ASCII; anything else escaped (`\\n`, `\\xe9`)."""
    return "".join(c if " " <= c <= "~" else ascii(c)[1:-1] for c in str(text))


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
