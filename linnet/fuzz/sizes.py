"""Drawing sizes without hypothesis (for `linnet verify`), and shrinking a failing draw.

`draw_values` picks a value for every generic of a target from small sizes and the sizes
around each tile and bound of its `where` clauses, so that ragged edges are drawn often;
`shrink` makes a failing draw smaller while it still fails.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from ..check.dim_normal_form import Dim
from ..check.types import DTYPE_KINDS
from ..syntax import tree as t

if TYPE_CHECKING:
    from .spec import TargetSpec

__all__ = ["draw_values", "dtype_choices", "shrink"]

def draw_values(spec: TargetSpec, rng: random.Random, *, max_dim: int = 130,
                dtypes: Mapping[str, Sequence[str]] | None = None,
                ranges: Mapping[str, tuple[int, int]] | None = None,
                kernel: bool = True, tries: int = 2000,
                max_elements: int | None = None) -> dict[str, Any] | None:
    """Random generic values satisfying the `where` clauses (the kernel's too, when
    `kernel`), half of the dims picked among `spec.candidates`; None if none found. With
    `max_elements`, no input has more elements (four dims of 130 would be 286 million)."""
    ranges = ranges or {}
    check = spec.satisfies if kernel else spec.allows
    for _ in range(tries):
        values: dict[str, Any] = {}
        for g in spec.generics:
            if g.kind == "Dim":
                lo, hi = ranges.get(g.name, (1, max_dim))
                picks = [c for c in spec.candidates(g.name, hi) if c >= lo]
                values[g.name] = (rng.choice(picks) if picks and rng.random() < 0.5
                                  else rng.randint(lo, hi))
            elif g.kind in DTYPE_KINDS:
                values[g.name] = rng.choice(list(dtype_choices(g, dtypes)))
        if check(values) and (max_elements is None or _largest_input(spec, values)
                              <= max_elements):
            return values
    return None


def _largest_input(spec: TargetSpec, values: Mapping[str, Any]) -> int:
    return max((math.prod(shape) for shape, _ in spec.shapes(values)), default=0)


def dtype_choices(g: t.Generic, dtypes: Mapping[str, Sequence[str]] | None = None
                  ) -> Sequence[str]:
    """The dtypes to try for a dtype generic: `dtypes[name]`, or a few of its kind."""
    if dtypes and g.name in dtypes:
        return dtypes[g.name]
    return {"Float": ("f32", "f16", "bf16"), "Integer": ("i32", "i64"),
            "Numeric": ("f32", "i32"), "DType": ("f32", "i32", "bool")}[g.kind]


def shrink(spec: TargetSpec, values: Mapping[str, Any], fails: Callable[[dict], bool], *,
           budget: int = 60, kernel: bool = True) -> dict[str, Any]:
    """The smallest values found from `values` (which fail) that still fail.

    One dim at a time, keeping the others: try 1, then bisect between the largest size known
    to pass and the smallest known to fail, skipping sizes that break the `where` clauses
    (the kernel's too, when `kernel`); repeat over the dims until nothing shrinks. `fails`
    is called at most `budget` times.
    """
    check = spec.satisfies if kernel else spec.allows
    current = dict(values)
    calls = 0

    def still_fails(trial: dict[str, Any]) -> bool:
        nonlocal calls
        calls += 1
        return fails(trial)

    def allowed(name: str, lo: int, hi: int, mid: int) -> int | None:
        """A size in (lo, hi) satisfying the clauses, nearest to mid (below it first)."""
        for c in list(range(mid, lo, -1)) + list(range(mid + 1, hi)):
            if check({**current, name: c}):
                return c
        return None

    changed = True
    while changed and calls < budget:
        changed = False
        for name in spec.dim_generics:
            lo, hi = 0, current[name]  # sizes <= lo pass (as far as tried); hi fails
            while hi - lo > 1 and calls < budget:
                mid = allowed(name, lo, hi, 1 if lo == 0 else (lo + hi) // 2)
                if mid is None:
                    break
                if still_fails({**current, name: mid}):
                    hi = mid
                else:
                    lo = mid
            if hi < current[name]:
                current[name] = hi
                changed = True
    return current
