"""Forms of the model layer that the rest of the generator writes only one way: `fn`s and
entries without `-> T` (tuple results included), and `...` in an index.

Why apart: each is a rewrite of something already built that keeps its value (an inferred
result is the written one; `...` stands for the full slices it replaces), so the facts the
generator proved still hold. The choices draw from a random stream of their own
(`Gen.form_rng`), so a seed's program is otherwise the one it was without them: leaving the
features `untyped` and `ellipsis` out gives it back exactly. An entry without `-> T` that
returns a tuple is where a runtime once shaped the result from the written type and
returned only the first item: the fuzzer's interpreter run goes through the runtime's
callable (fuzz/runtime_forward.py) so that such a class is a finding.
"""

from __future__ import annotations

import dataclasses
import random

from ...syntax import tree as t
from .scope import Gen

__all__ = ["FORM_FEATURES", "form_rng", "untyped", "with_ellipsis", "explicit_none"]

FORM_FEATURES = ("untyped", "ellipsis")  # (`none` given rides on `optional`)
UNTYPED_SHARE = 0.4
ELLIPSIS_SHARE = 0.7


def form_rng(g: Gen) -> random.Random:
    """The stream these forms draw from (a fixed one where `generate` set none)."""
    if g.form_rng is None:
        g.form_rng = random.Random(0)
    return g.form_rng


def untyped(g: Gen, fn: t.Function) -> t.Function:
    """The `fn` or `entry` without its `-> T` (a share of them): the checker infers the
    result from the final `return`, a tuple as a tuple."""
    if fn.result is None or fn.kind not in ("fn", "entry") or not g.has("untyped") \
            or form_rng(g).random() >= UNTYPED_SHARE:
        return fn
    g.count("untyped", f"untyped:{fn.kind}")
    if isinstance(fn.result, t.TupleType):
        g.count("untyped:tuple")
    return dataclasses.replace(fn, result=None)


def with_ellipsis(g: Gen, items: list, full: list[bool]) -> tuple | None:
    """The index's items with `...` for the run of full-extent slices (`0:N` of an axis of
    N) that begins or ends it, possibly empty (a share of indices), else None:
    `x[0:N, 1:M:2]` is `x[..., 1:M:2]`, `x[k, 0:M]` (or `x[k]`) is `x[k, ...]`, `y[k]` is
    `y[..., k]` when no axis follows, and `x[0:N]` is `x[...]`."""
    if not g.has("ellipsis") or form_rng(g).random() >= ELLIPSIS_SHARE:
        return None
    lead = next((k for k, f in enumerate(full) if not f), len(full))
    trail = next((k for k, f in enumerate(reversed(full)) if not f), len(full))
    at_end = form_rng(g).random() < 0.5
    run = trail if at_end else lead
    g.count("ellipsis", "ellipsis:end" if at_end else "ellipsis:start")
    if run == 0:
        g.count("ellipsis:empty")
    if at_end:
        return tuple(items[:len(items) - run]) + (t.EllipsisIx(),)
    return (t.EllipsisIx(),) + tuple(items[run:])


def explicit_none(g: Gen, name: str) -> tuple[t.Arg, ...]:
    """`none` given for the optional parameter `name` whose default it is (by name or by
    position, a share of calls), else nothing: the same value either way."""
    if form_rng(g).random() >= 0.5:
        return ()
    g.count("optional:none")
    return (t.Arg(t.NoneLit(), name if form_rng(g).random() < 0.5 else None),)
