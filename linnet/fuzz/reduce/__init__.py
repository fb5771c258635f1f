"""The reducer: shrink a failing case to a small one that fails the same way.

`reduce(case, still_fails)` edits the case's program (on the surface tree, printed back to
text), its generic bindings and its inputs, keeping each edit after which the program still
checks, the inputs still fit the entry, and `still_fails` (the caller's "fails the same
way") still holds; it stops at a fixed point (no edit is kept any more) or when the budget
(`max_tries` calls of the predicate, `time_limit` seconds) is spent. The order of edits is
fixed, so a reduction repeats exactly when the budget is not what stops it.
`write_report(reduction, outputs, out_dir)` writes the result where a person can read and
rerun it. docs/fuzz.md, "The reducer", describes the edits.
"""

from __future__ import annotations

from typing import Callable

from ..case import Case
from . import inputs, program, restructure
from .report import write_report
from .search import Pass, Reduction, Search, Step

__all__ = ["PASSES", "Reduction", "Step", "reduce", "write_report"]

PASSES: tuple[Pass, ...] = (
    program.items, program.kernels, program.returns, program.dead_code, program.copies,
    program.statements,
    restructure.control, restructure.inline, program.expressions, program.params,
    inputs.dims, inputs.signature_sizes, inputs.dtypes, inputs.values,
)
"""The passes in the order they run each round: the biggest cuts first."""


def reduce(case: Case, still_fails: Callable[[Case], bool], *, max_tries: int = 2000,
           time_limit: float = 600.0) -> Reduction:
    """The smallest case found from `case` (which fails) that still fails.

    `still_fails` is called only on candidates that check and fit their inputs, at most
    `max_tries` times; the search stops after about `time_limit` seconds (the candidate
    being tried then finishes). Raises `ValueError` if the case's program does not parse."""
    return Search(case, still_fails, max_tries, time_limit).run(PASSES)
