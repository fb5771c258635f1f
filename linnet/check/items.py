"""Item-level checks: declarations, signatures, `where` clauses and kernel headers."""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .body import BodyChecker
from .dim_normal_form import Dim
from .item_scope import check_local_name, generics_frame
from .scope import Frame, Globals
from .signatures import Signature
from .types import ERR, compile_time_int, DTYPE_KINDS, DTYPES, KINDS, DTypeT, LitT, MemT, TensorT, Val, scalar

COMPARE = {"==", "!=", "<", "<=", ">", ">="}


def item_frame(item, globals_: Globals, bag: DiagnosticBag,
               signatures: dict[str, Signature]) -> tuple[Frame, BodyChecker]:
    """A frame with the item's generics (and, once its signature exists, its `where`
    facts), and a checker over it."""
    frame = generics_frame(item, globals_, signatures)
    return frame, BodyChecker(frame, bag, signatures)


def check_generics(item, checker: BodyChecker) -> list[t.Generic]:
    """Kinds exist, packs are Shapes, no duplicates (E1205); returns the generics whose
    defaults are still to be checked (after the `where` facts, which they may need)."""
    seen: set[str] = set()
    defaults = []
    for g in getattr(item, "generics", ()):
        if g.name in seen:
            checker.error("E1205", f"duplicate generic `{g.name}`", g.span, "declared twice")
        seen.add(g.name)
        check_local_name(g.name, g.span, checker.bag, "a generic")
        if g.name in DTYPES:
            checker.error("E1207", f"`{g.name}` is a dtype and cannot name a generic", g.span,
                          "redeclared", help="in a type it would still mean the dtype; "
                                             "choose another name, such as `T`")
        if g.kind not in KINDS:
            checker.error("E1201", f"unknown generic kind `{g.kind}`", g.span,
                          help="kinds are Dim, Shape, DType, Numeric, Integer and Float")
        elif g.pack != (g.kind == "Shape"):
            checker.error("E3106", f"`{'*' if g.pack else ''}{g.name}: {g.kind}`: a pack is "
                          "written `*S: Shape`", g.span)
        elif g.default is not None:
            defaults.append(g)
    return defaults


def check_default(g: t.Generic, checker: BodyChecker) -> None:
    v = checker.expr(g.default)
    if v.is_error:
        return
    if g.kind == "Dim" and compile_time_int(v) is None:
        checker.error("E2101", f"default of `{g.name}` must be a dimension", g.default.span)
    elif g.kind in DTYPE_KINDS and not (isinstance(v.type, DTypeT)
                                        and v.type.dtype in DTYPE_KINDS[g.kind]):
        checker.error("E2112", f"default `{v.type}` is not a {g.kind}", g.default.span,
                      help=f"pick one of {', '.join(DTYPE_KINDS[g.kind])}")


def where_facts(clauses: tuple[t.Expr, ...], checker: BodyChecker
                ) -> list[tuple[Dim, str, Dim, t.Expr]]:
    """Each `where` clause as a comparison of dimensions, assumed from now on.

    The clauses are a set, not a sequence: one may need another to be well formed, as in
    `where A % G == 0, G > 0`, where the divisor's positivity comes second. So every
    clause is first read silently and assumed; then each is checked again, reporting its
    diagnostics, under all the others but not itself.

    A `/` or `%` in a clause is part of a stated fact, not a divisor to prove positive
    (no E2205): the clause holds only where its divisors are positive, so each divisor
    the other clauses do not make positive becomes a clause of its own, `G > 0`, just
    before it (written as it: a failure names the clause). Every call and instantiation
    proves it first (E2206), and the body may divide by it.
    """
    comparisons = [c for c in clauses if _is_comparison(c, checker)]
    base = checker.frame.facts
    silent = [_read_silently(clause, checker) for clause in comparisons]
    every = base.assume_all(c for c in silent if c is not None)
    position = len(base.assumptions)  # where clause k sits in every's assumptions
    out: list[tuple[Dim, str, Dim, t.Expr]] = []
    positive: set[Dim] = set()  # the divisors stated positive so far
    for clause, read in zip(comparisons, silent):
        checker.frame.facts = every.omitting(position) if read is not None else every
        position += read is not None
        (left, right), divisors = _read_stated(clause, checker)
        if left is not None and right is not None:
            out += _positive_divisors(divisors, clause, positive)
            out.append((left, clause.op, right, clause))
            if clause.op == ">" and right == Dim.const(0):
                positive.add(left)
    checker.frame.facts = base.assume_all((l, op, r) for l, op, r, _ in out)
    return out


def _read_stated(clause: t.Binary, checker: BodyChecker
                 ) -> tuple[tuple[Dim | None, Dim | None], list[Dim]]:
    """Both sides of a clause, and the divisors in them not provably positive."""
    saved, checker.stated_divisors = checker.stated_divisors, []
    try:
        sides = checker.dim_expr(clause.left), checker.dim_expr(clause.right)
        return sides, checker.stated_divisors
    finally:
        checker.stated_divisors = saved


def _positive_divisors(divisors: list[Dim], clause: t.Expr, positive: set[Dim]
                       ) -> list[tuple[Dim, str, Dim, t.Expr]]:
    """`d > 0` for each divisor of a clause not already stated positive (added to
    `positive`), written as the clause (what a failure at a call names)."""
    out: list[tuple[Dim, str, Dim, t.Expr]] = []
    for d in divisors:
        if d not in positive:
            positive.add(d)
            out.append((d, ">", Dim.const(0), clause))
    return out


def _is_comparison(clause: t.Expr, checker: BodyChecker) -> bool:
    if isinstance(clause, t.Binary) and clause.op in COMPARE:
        return True
    checker.error("E2101", "a `where` clause compares dimensions", clause.span,
                  help="write comparisons such as `where B >= C, N % 16 == 0`")
    return False


def _read_silently(clause: t.Binary, checker: BodyChecker) -> tuple[Dim, str, Dim] | None:
    """The clause as a comparison, its diagnostics dropped (they are reported later)."""
    saved, checker.bag = checker.bag, DiagnosticBag()
    try:
        (left, right), _ = _read_stated(clause, checker)
    finally:
        checker.bag = saved
    return None if left is None or right is None else (left, clause.op, right)


def check_params(params: tuple[t.Param, ...], checker: BodyChecker) -> list:
    seen: set[str] = set()
    types = []
    for p in params:
        if p.name in seen:
            checker.error("E1205", f"duplicate parameter `{p.name}`", p.span, "declared twice")
        seen.add(p.name)
        check_local_name(p.name, p.span, checker.bag, "a parameter")
        types.append(checker.resolve_type(p.type))
    return types


def signature_of(item, checker: BodyChecker) -> Signature:
    """The item's signature. Its `where` clauses come first, whatever their place in the
    text: parameter and result types may divide by what they make positive."""
    defaults = check_generics(item, checker)
    where = where_facts(item.where, checker)
    for g in defaults:
        check_default(g, checker)
    params = check_params(item.params, checker)
    if isinstance(item, t.Kernel):
        for r in item.results:
            check_local_name(r.name, r.span, checker.bag, "a kernel result")
        results = [checker.resolve_type(r.type) for r in item.results]
        return Signature(item, item.generics, params, None, where, results)
    result = checker.resolve_type(item.result) if item.result is not None else None
    return Signature(item, item.generics, params, result, where)


def bind_params(item, sig: Signature, checker: BodyChecker) -> None:
    for p, ty in zip(item.params, sig.params):
        checker.frame.bind(p.name, Val(ty) if ty is not None else ERR, span=p.span)


def check_kernel_header(k: t.Kernel, sig: Signature, checker: BodyChecker) -> None:
    """Grid sizes, launch hints, memory parameters and results (E2127, E2123)."""
    for g in k.generics:
        if g.pack:
            checker.error("E2127", "kernels take no shape packs", g.span,
                          help="give each dimension its own `Dim` generic")
    for p, ty in zip(k.params + k.results, sig.params + sig.results):
        role = "param" if p in k.params else "result"
        _bind_memory(p, ty, role, checker)
    if not 1 <= len(k.grid) <= 3:
        checker.error("E2127", f"a grid has 1 to 3 sizes, found {len(k.grid)}", k.span)
    for g in k.grid:
        checker.expect_const_int(g, "a grid size")
    _check_hint(k.warps, "warps", checker, power_of_two=True)
    _check_hint(k.stages, "stages", checker, power_of_two=False)


def _bind_memory(p: t.Param, ty, role: str, checker: BodyChecker) -> None:
    if isinstance(ty, TensorT) and ty.has_pack:
        checker.error("E2127", "kernels take no shape packs", p.span)
        return
    if isinstance(ty, TensorT) and (ty.rank > 0 or role == "result"):
        checker.frame.bind(p.name, Val(MemT(ty, role)))
    elif ty is not None:
        checker.frame.bind(p.name, Val(ty))


def _check_hint(e: t.Expr | None, name: str, checker: BodyChecker, power_of_two: bool) -> None:
    if e is None:
        return
    value = e.value if isinstance(e, t.IntLit) else None
    bad = value is None or value < (1 if power_of_two else 0) or (
        power_of_two and value & (value - 1))
    if bad:
        what = "a power of two" if power_of_two else "a non-negative integer literal"
        checker.error("E2127", f"`{name}(...)` takes {what}", e.span, "bad launch hint")


__all__ = ["Dim", "item_frame", "signature_of"]
