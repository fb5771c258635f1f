"""One run of one entry: the unit the fuzzer generates, runs, compares and reduces.

Why a type of its own: the generator (`linnet.fuzz.programs`), the NumPy oracle
(`linnet.fuzz.oracle`), the backends and the reducer (`linnet.fuzz.reduce`) all pass
the same thing around: a program's text, the entry to call, the values its generics are
bound to, and the inputs. Inputs are NumPy arrays in the parameter's dtype (bf16 as
`ml_dtypes.bfloat16`; a scalar parameter is a 0-d array), so no runtime is imported to hold
a case.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np

__all__ = ["Case"]


@dataclass(frozen=True)
class Case:
    """A program, an entry of it, its generic bindings and its inputs.

    `generics` maps each generic of the entry to its value: an `int` for a `Dim`, a dtype
    name (`"f32"`, `"i8"`, ...) for a dtype generic; the same values `--bind` takes.
    `inputs` holds one array per parameter, in order (a block entry's: its own, then one
    per present parameter of its root block). `present` holds the parameter paths the
    checkpoint of a block entry holds, which decide its optional members (None: none).
    """

    text: str
    entry: str
    generics: Mapping[str, int | str] = field(default_factory=dict)
    inputs: tuple[np.ndarray, ...] = ()
    present: frozenset[str] | None = None

    def with_text(self, text: str) -> "Case":
        return replace(self, text=text)

    def with_inputs(self, inputs: tuple[np.ndarray, ...]) -> "Case":
        return replace(self, inputs=tuple(inputs))
