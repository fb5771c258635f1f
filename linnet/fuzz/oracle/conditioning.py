"""Which outputs of a case are too ill-conditioned to compare.

Why: a tolerance bounds the rounding error of a well-conditioned result. Where rounding
decides the result (a variance computed as a sum of centred values that cancel to noise,
`(a + b) - a` with `b` below `a`'s last bit), any two summation orders disagree, and a
disagreement between a backend and the oracle says nothing. Computing the case again with
every float in f64 shows it: an output whose native value differs from its f64 value beyond
the comparison's tolerance is unstable.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..case import Case
from .compare import TOLERANCE, compare
from .dtypes import dtype_name
from .evaluate import DEFAULT_PATH, evaluate


def unstable_outputs(case: Case, reduction_length: int = 1, path: str = DEFAULT_PATH
                     ) -> list[int]:
    """The positions of the floating outputs whose native value is not within tolerance of
    the same computation in f64."""
    return unstable_positions(evaluate(case, path=path),
                              evaluate(case, precision="f64", path=path), reduction_length)


def unstable_positions(native: Sequence, wide: Sequence, reduction_length: int = 1
                       ) -> list[int]:
    """`unstable_outputs` from the two evaluations, for a caller that has them already (the
    fuzzer's runner evaluates each case natively and in f64 once, and uses both twice)."""
    found = []
    for k, (n, w) in enumerate(zip(native, wide)):
        dtype = dtype_name(n)
        if dtype in TOLERANCE and compare(w, np.asarray(n).astype(np.float64), dtype,
                                          reduction_length) is not None:
            found.append(k)
    return found
