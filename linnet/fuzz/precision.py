"""The precision an output carries: the coarsest float its program computes with.

Why: a result's dtype says how it is stored, not how exactly it was computed. An f64
result made from f32 values (`cast<f64>(sum[i] x[i])` over an f32 `x`) carries f32
rounding: two backends that sum in different orders differ at f32's last bit, and
holding them to f64's tolerance reports a disagreement that is only rounding. Every
comparison of floats (the fuzzer's against the oracle, `verify`'s kernel against its
body, the cross-check's backends against the interpreter) takes its tolerance from the
dtype this module gives, not from the output's own.

The floats a program computes with are read from what is at hand: the dtype names in its
text, the dtypes bound to its generics and those of its inputs. That is conservative: an
f64 output of a program that also computes in f32 elsewhere gets f32's tolerance.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

__all__ = ["COARSEST_FIRST", "carried_dtype", "program_floats"]

COARSEST_FIRST = ("bf16", "f16", "f32", "f64")
"""Float dtypes from the widest tolerance to the narrowest."""

_FLOAT_WORD = re.compile(r"\b(bf16|f16|f32|f64)\b")


def program_floats(text: str = "", generics: Mapping[str, object] | None = None,
                   dtypes: Iterable[str] = ()) -> frozenset[str]:
    """The float dtypes a program may compute with: named in `text`, bound to a generic,
    or the dtype of an input (Linnet names: "f32", "bf16", ...)."""
    found = set(_FLOAT_WORD.findall(text))
    found.update(v for v in (generics or {}).values() if isinstance(v, str))
    found.update(dtypes)
    return frozenset(d for d in found if d in COARSEST_FIRST)


def carried_dtype(dtype: str, floats: Iterable[str]) -> str:
    """The dtype whose tolerance an output of `dtype` is held to: the coarsest of `dtype`
    and `floats` for a float output; `dtype` itself otherwise (integers stay exact)."""
    if dtype not in COARSEST_FIRST:
        return dtype
    return min({dtype, *floats} & set(COARSEST_FIRST), key=COARSEST_FIRST.index)
