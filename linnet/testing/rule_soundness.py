"""Every rule checked by itself: its two sides (or the fact it derives) on sampled values.

`check_rules(rules)` takes rule sets (egglog `ruleset`s, single rules, modules with a
`RULE_SET`, or lists of these), enumerates every rule, and for each draws values for its
variables (edge integers at 32 and 64 bits, booleans, tiles with inf and NaN: see
`rule_samples.py`), keeps the draws where its premises hold, and checks what it claims:

- a rewrite's two sides evaluate to the same value (`rule_semantics.py` says what each term
  means: 32/64-bit wrapping integers, truncating division, float64 tiles);
- a fact rule's fact holds: `lo(e)` set to `b` means every value of `e` is >= `b`, a relation
  holds of the value, a union's two sides are equal;
- no action makes egglog fail (an i64 overflow or a zero divisor in an action stops the
  e-graph with a panic), and no rule builds an integer constant that does not fit;
- a rule that decides a term (a union with a term without variables, like `lt proved true`)
  never fires where no value satisfies its premises (an empty interval): such a rule could
  prove one mask both true and false (terms.py).

The result is a list of `Unsound`, each with the rule, the reason and a counterexample; a
rule the semantics cannot read is one too (pass `excused={rule text: reason}` to accept
it), and so is a rule whose premises no draw satisfied. From the shell:

    python -m linnet.testing.rule_soundness [--rules MODULE[:NAME]] [--samples N] [--seed S]

checks `linnet.rules` (or the rule sets named) and exits 1 on a finding. docs/fuzz.md has
the details.
"""

from __future__ import annotations

import argparse
import importlib
import random
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

import numpy as np
from egglog.declarations import (CallDecl, CombinedRulesetDecl, ExprActionDecl, LetDecl,
                                 LitDecl, RuleDecl, SetDecl, TypedExprDecl, UnboundVarDecl,
                                 UnionDecl)
from egglog.pretty import pretty_decl

from .rule_plan import Plan, plan_of, variables
from .rule_samples import Sampler
from .rule_semantics import (LIBRARY, Context, NoMatch, NoValue, OutOfRange, PrimitiveFailed, Semantics,
                             Uninterpretable, bounds, equal_values)

SAMPLES = 300        # satisfied draws per rule
ATTEMPTS = 40        # draws tried per satisfied draw wanted, at most
MIN_HITS = 20        # fewer satisfied draws than this: the rule counts as untested
NO_VALUE = object()  # a variable whose range is empty (its code never runs)


@dataclass(frozen=True)
class Rule:
    """A rule to check: its rule set's name, egglog declaration and printed form."""

    rule_set: str
    decl: Any
    text: str


@dataclass(frozen=True)
class Unsound:
    """A rule that is wrong (or could not be checked), why, and the values that show it."""

    rule_set: str
    rule: str
    reason: str
    counterexample: dict[str, Any] | None = None

    def __str__(self) -> str:
        shown = "" if self.counterexample is None else "\n    with " + ", ".join(
            f"{k} = {v}" for k, v in self.counterexample.items())
        return f"[{self.rule_set}] {self.rule}\n    {self.reason}{shown}"


@dataclass
class Report:
    """What a check did: the rules checked, the findings, the rules excused (with why)."""

    checked: list[Rule] = field(default_factory=list)
    unsound: list[Unsound] = field(default_factory=list)
    excused: list[tuple[Rule, str]] = field(default_factory=list)


# ------------------------------------------------------------------ enumeration

def rules_of(rules: Any) -> list[Rule]:
    """Every rule in rule sets, rules, modules with `RULE_SET`, or iterables of these."""
    if hasattr(rules, "RULE_SET"):
        return rules_of(rules.RULE_SET)
    if hasattr(rules, "__egg_ruleset__"):
        return _ruleset_rules(rules.__egg_decls__, rules.__egg_ruleset__, _name(rules.ident))
    if hasattr(rules, "decl") and hasattr(rules, "ruleset"):
        owner = getattr(rules.ruleset, "ident", None)
        return [Rule(_name(owner) if owner else "", rules.decl, _text(rules.decl, rules))]
    if isinstance(rules, Iterable):
        return [r for item in rules for r in rules_of(item)]
    raise TypeError(f"not a rule set or a rule: {rules!r}")


def _ruleset_rules(decls: Any, decl: Any, name: str) -> list[Rule]:
    if isinstance(decl, CombinedRulesetDecl):
        return [r for ident in decl.rulesets
                for r in _ruleset_rules(decls, decls._rulesets[ident], _name(ident))]
    return [Rule(name, d, _text(d, decls=decls)) for d in decl.rules]


def _name(ident: Any) -> str:
    return str(getattr(ident, "name", ident))


def _text(decl: Any, rule: Any = None, decls: Any = None) -> str:
    if isinstance(decl, RuleDecl) and decl.name:
        return decl.name
    text = str(rule) if rule is not None else pretty_decl(decls, decl)
    return " ".join(text.split())


# --------------------------------------------------------------------- checking

def check(rules: Any, *, semantics: Semantics = LIBRARY, samples: int = SAMPLES, seed: int = 0,
          excused: Mapping[str, str] = {}) -> Report:
    """Check every rule in `rules`; see the module docstring."""
    report = Report()
    for rule in rules_of(rules):
        finding = check_rule(rule, semantics=semantics, samples=samples, seed=seed)
        if finding is not None and finding.counterexample is None and rule.text in excused:
            report.excused.append((rule, excused[rule.text]))
            continue
        report.checked.append(rule)
        if finding is not None:
            report.unsound.append(finding)
    return report


def check_rules(rules: Any, **options: Any) -> list[Unsound]:
    """The findings of `check(rules, **options)`: empty when every rule holds."""
    return check(rules, **options).unsound


def check_rule(rule: Rule, *, semantics: Semantics = LIBRARY, samples: int = SAMPLES,
               seed: int = 0) -> Unsound | None:
    """The first finding on one rule, or None."""
    try:
        plan = plan_of(rule.decl, semantics)
    except Uninterpretable as e:
        return Unsound(rule.rule_set, rule.text, f"cannot be interpreted: {e}")
    rng = random.Random(zlib.crc32(f"{seed}:{rule.rule_set}:{rule.text}".encode()))
    hits = 0
    for _ in range(samples * ATTEMPTS):
        try:
            outcome = _Draw(plan, semantics, rng).run()
        except Uninterpretable as e:
            return Unsound(rule.rule_set, rule.text, f"cannot be interpreted: {e}")
        if outcome is None:
            continue
        status, finding = outcome
        if finding is not None:
            reason, example = finding
            return Unsound(rule.rule_set, rule.text, reason, example)
        hits += status == "hit"
        if hits >= samples:
            return None
    if hits < min(MIN_HITS, samples):
        return Unsound(rule.rule_set, rule.text,
                       f"untested: its premises held on {hits} of {samples * ATTEMPTS} draws")
    return None


class _Draw:
    """One draw of a rule's variables: sample, test the premises, check the actions.

    `run()` is None when a premise fails, else ("hit" | "vacuous", finding or None);
    "vacuous" when some value the premises speak of does not exist (an empty range)."""

    def __init__(self, plan: Plan, semantics: Semantics, rng: random.Random) -> None:
        self.plan, self.semantics, self.rng = plan, semantics, rng
        width = rng.choice((32, 64))
        self.sampler = Sampler(rng, width, rng.choice((1, 2, 3)))
        self.ctx = Context(width, rng, self.sampler, cast_keeps=rng.random() < 0.5)
        self.values: dict[str, Any] = {}
        self.cursor: dict[str, int] = {}
        self._sides: tuple | None = None

    # ----------------------------------------------------------------- premises

    def run(self) -> tuple[str, tuple[str, dict] | None] | None:
        domains = self._bounded_leaves()
        self._sample_leaves(domains)
        if not self._define():
            return None
        for test in self.plan.tests:
            try:
                if not self._test(test):
                    return None
            except NoValue:
                continue
            except (PrimitiveFailed, NoMatch):
                return None
        vacuous = any(v is NO_VALUE for v in self.values.values())
        for action in self.plan.actions:
            reason = self._check_action(action, vacuous)
            if reason is not None:
                return "vacuous" if vacuous else "hit", (reason, self._example())
        return ("vacuous" if vacuous else "hit"), None

    def _leaf_int(self, term: Any) -> str | None:
        if isinstance(term, UnboundVarDecl) and term.name in self.plan.leaves and \
                self.semantics.sorts[self.plan.sorts[term.name]] == "int":
            return term.name
        return None

    def _bounded_leaves(self) -> dict[str, list[int]]:
        """Bounds of sampled integer variables are drawn first (lower ones first, an upper
        one near its lower one), and their variables' values then drawn inside them."""
        domains: dict[str, list[int]] = {}
        for kind in ("lower", "upper"):
            for k, term, var in self.plan.bounds:
                leaf = self._leaf_int(term)
                if k != kind or leaf is None:
                    continue
                dom = domains.setdefault(leaf, list(bounds(64)))
                if var not in self.values:
                    value = self.sampler.upper_after(dom[0]) if kind == "upper" and \
                        dom[0] != bounds(64)[0] else self.sampler.value()
                    self.values[var] = [value]
                bound = self.values[var][0]
                dom[0 if kind == "lower" else 1] = max(dom[0], bound) if kind == "lower" \
                    else min(dom[1], bound)
        return domains

    def _sample_leaves(self, domains: dict[str, list[int]]) -> None:
        for name in self.plan.leaves:
            if name in self.values:
                continue
            kind = self.semantics.sorts[self.plan.sorts[name]]
            count = max(1, self.plan.occurrences.get(name, 0))
            if kind == "i64":
                self.values[name] = [self.sampler.bound()]
            elif kind == "int":
                wmin, wmax = bounds(self.ctx.width)
                low, high = domains.get(name, (wmin, wmax))
                low, high = max(low, wmin), min(high, wmax)
                self.values[name] = NO_VALUE if low > high else [
                    self.sampler.int_in(low, high) for _ in range(count)]
            elif kind == "bool":
                self.values[name] = [self.sampler.boolean() for _ in range(count)]
            elif kind == "tile":
                self.values[name] = [self.sampler.tile()]
            elif kind == "string":
                self.values[name] = [self.sampler.string()]
            else:
                raise Uninterpretable(f"no sampler for sort kind {kind}")

    def _define(self) -> bool:
        """Definitions and derived bounds, each once its variables are known; False when a
        pattern cannot match (an egglog primitive fails, a bound does not hold)."""
        defs = list(self.plan.defs)
        derived = [b for b in self.plan.bounds if self._leaf_int(b[1]) is None]
        while defs or derived:
            progress = False
            for name, term in list(defs):
                if self._known(term):
                    defs.remove((name, term))
                    progress = True
                    try:
                        self.values[name] = [self.eval(term, pattern=True)]
                    except NoValue:
                        self.values[name] = NO_VALUE
                    except (PrimitiveFailed, NoMatch):
                        return False
            for bound in list(derived):
                if self._known(bound[1]):
                    derived.remove(bound)
                    progress = True
                    if not self._derive(*bound):
                        return False
            if not progress:
                raise Uninterpretable("its premises cannot be put in an order")
        return True

    def _known(self, expr: Any) -> bool:
        return all(v in self.values for v in variables(expr))

    def _derive(self, kind: str, term: Any, var: str) -> bool:
        """`lo(term) == var`: a bound just below the term's values (or equal) when `var` is
        new, else a test that it bounds them."""
        try:
            values = self.values_of(term, pattern=True)
        except NoValue:
            values = None
        except (PrimitiveFailed, NoMatch):
            return False
        if var not in self.values:
            if values is None:
                self.values[var] = [self.sampler.bound()]
                return True
            slack = self.rng.choice((0, 0, 0, 1, 2, 1000))
            value = min(values) - slack if kind == "lower" else max(values) + slack
            self.values[var] = [self.sampler.keep(value)]
            return True
        if values is None:
            return True
        bound = self.values[var][0]
        return all(v >= bound for v in values) if kind == "lower" else all(
            v <= bound for v in values)

    def _test(self, test: tuple) -> bool:
        if test[0] == "holds":
            return bool(self.eval(test[1], pattern=True))
        if test[0] == "relation":
            holds = self.semantics.relations[test[1]]
            return all(holds(v) for v in self.values_of(test[2], pattern=True))
        left = self.values_of(test[1], pattern=True)
        right = self.values_of(test[2], pattern=True)
        return all(equal_values(a, b) for a in left for b in right)

    # ------------------------------------------------------------------ actions

    def _check_action(self, action: Any, vacuous: bool) -> str | None:
        try:
            if isinstance(action, UnionDecl):
                return self._check_union(action, vacuous)
            if isinstance(action, SetDecl):
                return self._check_set(action)
            if isinstance(action, ExprActionDecl):
                return self._check_expr(action.typed_expr.expr)
            if isinstance(action, LetDecl):
                self.values[action.name] = [self.eval(action.typed_expr, pattern=False)]
                return None
        except NoValue:
            return None
        except PrimitiveFailed as e:
            return f"egglog fails in the action ({e}): the e-graph stops with a panic"
        except OutOfRange as e:
            return f"it builds a constant that does not fit: {e}"
        raise Uninterpretable(f"cannot check the action {type(action).__name__}")

    def _check_union(self, action: UnionDecl, vacuous: bool) -> str | None:
        if vacuous and not (list(variables(action.lhs)) and list(variables(action.rhs))):
            return ("it decides a term where no value satisfies its premises (an empty "
                    "range): it could prove one mask both true and false")
        right = self.eval(action.rhs, pattern=False)
        left = self.values_of(action.lhs, pattern=False)
        for value in left:
            if not equal_values(value, right):
                self._sides = (value, right)
                return "its two sides differ"
        return None

    def _check_set(self, action: SetDecl) -> str | None:
        ref = action.call.callable
        if ref not in self.semantics.lower and ref not in self.semantics.upper:
            raise Uninterpretable(f"no fact meaning for setting {_ref_name(ref)}")
        bound = self.eval(action.rhs, pattern=False)
        lower = ref in self.semantics.lower
        for value in self.values_of(action.call.args[0], pattern=False):
            if (value < bound) if lower else (value > bound):
                return (f"the derived {'lower' if lower else 'upper'} bound {bound} does not "
                        f"hold: a value is {value}")
        return None

    def _check_expr(self, expr: Any) -> str | None:
        if isinstance(expr, CallDecl) and expr.callable in self.semantics.relations:
            holds = self.semantics.relations[expr.callable]
            for value in self.values_of(expr.args[0].expr, pattern=False):
                if not holds(value):
                    return f"the derived fact {_ref_name(expr.callable)} does not hold"
            return None
        self.eval(expr, pattern=False)  # a term the rule adds: its constants must fit
        return None

    # ---------------------------------------------------------------- evaluation

    def values_of(self, expr: Any, pattern: bool) -> list:
        """A variable's values (every occurrence), or an expression's value."""
        if isinstance(expr, TypedExprDecl):
            expr = expr.expr
        if isinstance(expr, UnboundVarDecl):
            values = self.values[expr.name]
            if values is NO_VALUE:
                raise NoValue(expr.name)
            return values
        return [self.eval(expr, pattern)]

    def eval(self, expr: Any, pattern: bool) -> Any:
        self.ctx.pattern = pattern
        return self._eval(expr, pattern)

    def _eval(self, expr: Any, pattern: bool) -> Any:
        if isinstance(expr, TypedExprDecl):
            return self._eval(expr.expr, pattern)
        if isinstance(expr, UnboundVarDecl):
            values = self.values_of(expr, pattern)
            if not pattern:
                return self.rng.choice(values)
            i = self.cursor.get(expr.name, 0)
            self.cursor[expr.name] = i + 1
            return values[i % len(values)]
        if isinstance(expr, LitDecl):
            return expr.value
        if isinstance(expr, CallDecl):
            op = self.semantics.ops.get(expr.callable)
            if op is None:
                raise Uninterpretable(f"no meaning for {_ref_name(expr.callable)}")
            args = [self._eval(a, pattern) for a in expr.args]
            self.ctx.pattern = pattern
            return op(self.ctx, *args)
        raise Uninterpretable(f"cannot evaluate {type(expr).__name__}")

    def _example(self) -> dict[str, Any]:
        example: dict[str, Any] = {"width": self.ctx.width}
        for name, values in self.values.items():
            if values is NO_VALUE:
                example[name] = "no value (empty range)"
            else:
                shown = [_show(v) for v in values]
                example[name] = shown[0] if len(shown) == 1 else shown
        if self._sides is not None:
            example["left side"], example["right side"] = (_show(v) for v in self._sides)
        return example


def _show(value: Any) -> Any:
    return value.tolist() if isinstance(value, np.ndarray) else value


def _ref_name(ref: Any) -> str:
    ident = getattr(ref, "ident", None)
    name = getattr(ident, "name", str(ref))
    method = getattr(ref, "method_name", None)
    return f"{name}.{method}" if method else name


# ------------------------------------------------------------------------ command

def main(argv: list[str] | None = None) -> int:
    """Check rule sets (the library's by default); print each finding; 1 if there is one."""
    parser = argparse.ArgumentParser(prog="python -m linnet.testing.rule_soundness",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=SAMPLES, help="satisfied draws per rule")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rules", default="linnet.rules:RULE_SETS",
                        help="MODULE[:NAME]: the rule sets to check (a module with RULE_SET, "
                             "or an attribute of it)")
    args = parser.parse_args(argv)
    module, _, name = args.rules.partition(":")
    rules = importlib.import_module(module)
    report = check(getattr(rules, name) if name else rules, samples=args.samples,
                   seed=args.seed)
    for finding in report.unsound:
        print(finding)
    print(f"{len(report.checked)} rules checked, {len(report.unsound)} unsound")
    return 1 if report.unsound else 0


if __name__ == "__main__":
    sys.exit(main())
