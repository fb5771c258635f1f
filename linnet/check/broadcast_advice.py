"""Advice for E2207 when the operands of an elementwise operator differ in rank.

Broadcasting lines shapes up from the right: `x / s` with `x: [R, C]` and `s: [R]` puts
`s` against the columns. A `where` clause cannot help there (R is not C); what the user
meant is an axis other than the last, which index notation says: `let y[r, c] = x[r, c] /
s[r]`. This module writes that statement from the two shapes.
"""

from __future__ import annotations

from dataclasses import replace

from ..syntax import tree as t
from .types import PackDim
from .unify import Problem

LETTERS = "ijklmnpq"


def rank_advice(problem: Problem, e: t.Binary, a: tuple, b: tuple) -> Problem:
    """The E2207 `problem` of `e` (operands of shapes a and b), its help rewritten when the
    ranks differ and the smaller shape's dims all appear in the larger one."""
    if problem.code != "E2207" or not a or not b or len(a) == len(b) \
            or any(isinstance(d, PackDim) for d in a + b):
        return problem
    left, right = _text(e.left, "a"), _text(e.right, "b")
    wide, narrow = (a, b) if len(a) > len(b) else (b, a)
    axes = _matching_axes(wide, narrow)
    if axes is None:
        return problem
    names = _index_names(wide)
    full = f"[{', '.join(names)}]"
    part = f"[{', '.join(names[k] for k in axes)}]"
    left_ix, right_ix = (full, part) if len(a) > len(b) else (part, full)
    short, long_ = (right, left) if len(a) > len(b) else (left, right)
    statement = f"let y{full} = {left}{left_ix} {e.op} {right}{right_ix}"
    help_ = (f"broadcasting lines shapes up from their last axes, which sets `{short}` "
             f"against the wrong axes of `{long_}`; to match the axes its dims name, write "
             f"index notation: `{statement}`")
    return replace(problem, help=help_)


def _matching_axes(wide: tuple, narrow: tuple) -> list[int] | None:
    """For each dim of narrow, in order, the first later axis of wide with the same dim."""
    axes, start = [], 0
    for d in narrow:
        k = next((k for k in range(start, len(wide)) if wide[k] == d), None)
        if k is None:
            return None
        axes.append(k)
        start = k + 1
    return axes


def _index_names(dims: tuple) -> list[str]:
    """An index per axis: the dim's name in lower case where that is one unused letter
    word (`R` gives `r`), else i, j, k, ..."""
    names: list[str] = []
    spare = iter(n for n in LETTERS)
    for d in dims:
        word = str(d).lower()
        if word.isidentifier() and word not in names and len(word) <= 3:
            names.append(word)
        else:
            names.append(next(n for n in spare if n not in names))
    return names


def _text(e: t.Expr, default: str) -> str:
    return e.id if isinstance(e, t.Name) else default
