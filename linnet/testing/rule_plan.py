"""A rule taken apart for checking by itself: what its premises define, bound and test, and
what its actions claim (`rule_soundness.py` samples and evaluates it).

A rewrite `lhs -> rhs if conds` is read as the rule `root == lhs, conds => union(root, rhs)`
(a bi-rewrite the same: equality has no direction). Premises become:

- definitions `v == term` (a pattern: `v` is the term's value);
- bounds `lo(t) == v` / `hi(t) == v` (a fact: `v` bounds every value of `t`);
- tests: egglog primitives that must hold (`a > 0`), relations (`nonnegative(x)`), and
  equalities between already known values;
- terms that must exist (a bare pattern), read as definitions of a fresh name.

Anything else (a `delete`, a `panic`, a custom merge) cannot be interpreted.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterator

from egglog.declarations import (BiRewriteDecl, CallDecl, EqDecl, ExprActionDecl, ExprFactDecl,
                                 LetDecl, LitDecl, RewriteDecl, RuleDecl, SetDecl,
                                 TypedExprDecl, UnboundVarDecl, UnionDecl)

from .rule_semantics import Semantics, Uninterpretable

ROOT = "(lhs)"  # the value of a rewrite's left side (not a name a rule can use)


@dataclass
class Plan:
    """One rule, ready to sample. `sorts`: each variable's sort name; `defs`: (variable,
    term); `bounds`: ("lower" | "upper", term, variable); `tests`: ("holds", expr) |
    ("relation", ref, expr) | ("equal", left, right); `occurrences`: how often each
    variable of a per-occurrence sort appears in the patterns."""

    sorts: dict[str, str] = field(default_factory=dict)
    defs: list[tuple[str, Any]] = field(default_factory=list)
    bounds: list[tuple[str, Any, str]] = field(default_factory=list)
    tests: list[tuple] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    occurrences: Counter = field(default_factory=Counter)
    lets: set[str] = field(default_factory=set)

    @property
    def defined(self) -> set[str]:
        return {v for v, _ in self.defs}

    @property
    def leaves(self) -> list[str]:
        """Variables no premise defines: they are sampled."""
        return [v for v in self.sorts if v not in self.defined and v not in self.lets]


def variables(expr: Any) -> Iterator[str]:
    """The names of the variables in an expression, one per occurrence."""
    if isinstance(expr, TypedExprDecl):
        yield from variables(expr.expr)
    elif isinstance(expr, UnboundVarDecl):
        yield expr.name
    elif isinstance(expr, CallDecl):
        for a in expr.args:
            yield from variables(a)


def plan_of(decl: Any, semantics: Semantics) -> Plan:
    """The plan of a rule declaration; `Uninterpretable` if some part has no reading."""
    plan = Plan()
    if isinstance(decl, (RewriteDecl, BiRewriteDecl)):
        _sort(plan, ROOT, decl.tp)
        plan.defs.append((ROOT, decl.lhs))
        facts, actions = decl.conditions, (UnionDecl(decl.tp, UnboundVarDecl(ROOT), decl.rhs),)
        _collect_sorts(plan, decl.lhs, decl.tp)
        _collect_sorts(plan, decl.rhs, decl.tp)
    elif isinstance(decl, RuleDecl):
        facts, actions = decl.body, decl.head
    else:
        raise Uninterpretable(f"a {type(decl).__name__} is not a rewrite or a rule")
    for fact in facts:
        _premise(plan, fact, semantics)
    for action in actions:
        _action(plan, action)
    for _, term in plan.defs:
        for name in variables(term):
            if plan.sorts.get(name) in semantics.per_occurrence:
                plan.occurrences[name] += 1
    for name, sort in plan.sorts.items():
        if sort not in semantics.sorts:
            raise Uninterpretable(f"variable {name} of sort {sort} has no meaning")
    return plan


def _sort(plan: Plan, name: str, tp: Any) -> None:
    plan.sorts.setdefault(name, tp.ident.name)


def _collect_sorts(plan: Plan, expr: Any, tp: Any = None) -> None:
    if isinstance(expr, TypedExprDecl):
        _collect_sorts(plan, expr.expr, expr.tp)
    elif isinstance(expr, UnboundVarDecl):
        if tp is None:  # pragma: no cover - every variable egglog builds is typed
            raise Uninterpretable(f"variable {expr.name} without a sort")
        _sort(plan, expr.name, tp)
    elif isinstance(expr, CallDecl):
        for a in expr.args:
            _collect_sorts(plan, a)
    elif not isinstance(expr, LitDecl):
        raise Uninterpretable(f"cannot read {type(expr).__name__}")


def _premise(plan: Plan, fact: Any, semantics: Semantics) -> None:
    if isinstance(fact, EqDecl):
        _collect_sorts(plan, fact.left, fact.tp)
        _collect_sorts(plan, fact.right, fact.tp)
        _equation(plan, fact, semantics)
    elif isinstance(fact, ExprFactDecl):
        expr = fact.typed_expr
        _collect_sorts(plan, expr)
        call = expr.expr
        if isinstance(call, CallDecl) and call.callable in semantics.relations:
            plan.tests.append(("relation", call.callable, call.args[0].expr))
        elif expr.tp.ident.name == "Unit":
            plan.tests.append(("holds", call))
        else:  # a term that must exist
            plan.defs.append((f"_exists{len(plan.defs)}", call))
    else:
        raise Uninterpretable(f"cannot read the premise {type(fact).__name__}")


def _equation(plan: Plan, fact: EqDecl, semantics: Semantics) -> None:
    """`v == term`, `lo(t) == v` or a test, in either orientation."""
    for var, other in ((fact.left, fact.right), (fact.right, fact.left)):
        if not isinstance(var, UnboundVarDecl):
            continue
        if isinstance(other, CallDecl) and (other.callable in semantics.lower
                                            or other.callable in semantics.upper):
            kind = "lower" if other.callable in semantics.lower else "upper"
            plan.bounds.append((kind, other.args[0].expr, var.name))
            return
        if var.name not in plan.defined and not isinstance(other, LitDecl):
            plan.defs.append((var.name, other))
            return
    plan.tests.append(("equal", fact.left, fact.right))


def _action(plan: Plan, action: Any) -> None:
    if isinstance(action, UnionDecl):
        _collect_sorts(plan, action.lhs, action.tp)
        _collect_sorts(plan, action.rhs, action.tp)
    elif isinstance(action, SetDecl):
        _collect_sorts(plan, action.call, action.tp)
        _collect_sorts(plan, action.rhs, action.tp)
    elif isinstance(action, ExprActionDecl):
        _collect_sorts(plan, action.typed_expr)
    elif isinstance(action, LetDecl):
        _collect_sorts(plan, action.typed_expr)
        plan.lets.add(action.name)
    else:
        raise Uninterpretable(f"cannot read the action {type(action).__name__}")
    plan.actions.append(action)
