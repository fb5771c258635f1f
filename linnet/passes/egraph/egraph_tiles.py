"""egraph-tiles: tensor-core -> tensor-core, kernel masks and offsets by the rule sets.

For each kernel Func, ONE e-graph holds the kernel body's integer index computations and
boolean masks (translated by `passes/egraph/translate.py`), and the rule sets of its stage run
under a back-off scheduler with an iteration cap. Then the IR is rewritten:

* a comparison or mask binding proved true or false becomes a literal (`fill` of it for
  a tile), `x && m` with `m` proved true (or `x || m` with `m` proved false) becomes `x`,
  and a `load`, `store` or atomic whose mask is proved true loses it (a load its `other`
  too); `fold-proved-masks` follows through on the rest;
* an access's offsets with the same normal form and type as an earlier access's, whose
  definition is in scope, are replaced by those (`(r + 1) * C` and `r * C + C` are one).

Unused bindings are dropped with `dce`. What fired (rules with match counts, e-graph size,
iterations, the decided masks and the normal forms of the offsets) goes into the
program's state (`state.egraph_report`).
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import tensor as ir
from . import run as egraph_run
from ..middle.dce import dce
from .translate import MEMORY, Translate
from ..traverse import Rewriter

if egraph_run.available():
    from egglog import get_callable_args, get_callable_fn, get_literal_value

    from ...rules.terms import Ix, Mask, larger, narrow, quot, rem, smaller

STAGE = "egraph-tiles"


def egraph_tiles(program: ir.Program, options=None) -> ir.Program:
    """Prove kernel masks with the rule sets; drop those always true."""
    if not egraph_run.available():  # pragma: no cover
        egraph_run.warn_unavailable(program)
        return egraph_run.with_report(program, STAGE, [
            f"// {STAGE}: egglog is not installed (pip install linnet[rules]); masks kept"])
    sets = egraph_run.rule_sets(options, STAGE)
    funcs, reports = [], []
    for f in program.funcs:
        if f.kind == "kernel":
            f, report = _kernel(f, sets)
            reports.append(report)
        funcs.append(f)
    program = replace(program, funcs=tuple(funcs))
    return dce(egraph_run.with_report(program, STAGE, reports))


# ----------------------------------------------------------------- one kernel

def _kernel(f: ir.Func, sets: tuple) -> tuple[ir.Func, str]:
    tr = Translate(f)
    tr.block(f.body)
    roots = list(tr.roots())
    if not roots:  # nothing to decide: literal offsets, no masks
        return f, f"// {STAGE} {f.name}: no masks or offsets to decide"
    with egraph_run.egraph(sets) as (eg, schedule):
        eg.register(*roots)
        rounds, matches = egraph_run.saturate(eg, schedule)
        decided: dict[ir.Var, bool] = {}
        for var, term in tr.masks.items():  # a proved mask's cheapest form is its constant
            best = eg.extract(term)
            if get_callable_fn(best) == Mask.const:
                decided[var] = bool(get_literal_value(get_callable_args(best)[0]))
        offsets = {v: eg.extract(tr.ints[v]) for v in tr.offsets if v in tr.ints}
        same = _equal_offsets(tr, {v: _show(t) for v, t in offsets.items()})
        report = _report(f, eg, rounds, egraph_run.fired(matches, sets), decided, offsets, same)
    return _Rewrite(decided, same).func(f), report


def _equal_offsets(tr: Translate, forms: dict[ir.Var, str]) -> dict[ir.Var, ir.Var]:
    """Offsets equal to an earlier access's offsets (same normal form and type, the
    earlier one in scope): each mapped to the first such."""
    first: dict[tuple, list[ir.Var]] = {}
    same: dict[ir.Var, ir.Var] = {}
    for v in dict.fromkeys(tr.offsets):
        if v not in forms:
            continue
        earlier = first.setdefault((forms[v], v.type), [])
        match = next((u for u in earlier if u != v and tr.dominates(u, v)), None)
        if match is not None:
            same[v] = match
        else:
            earlier.append(v)
    return same


def _show(term) -> str:
    """An extracted term, compactly: `pid0 * 64 + iota64`."""
    fn, args = get_callable_fn(term), get_callable_args(term)
    infix = {Ix.__add__: "+", Ix.__sub__: "-", Ix.__mul__: "*"}
    if fn in (Ix, Ix.sym, Ix.ranged, Ix.counter, Mask.sym, Mask.const):
        return str(get_literal_value(args[0])).removeprefix("v:")
    for op, sign in infix.items():
        if fn == op:  # a sum under `*`, and a sum right of `-` or `+`, keep their parentheses
            sums = (Ix.__add__, Ix.__sub__)
            left, right = _show(args[0]), _show(args[1])
            if sign == "*" and get_callable_fn(args[0]) in sums:
                left = f"({left})"
            if get_callable_fn(args[1]) in sums:
                right = f"({right})"
            return f"{left} {sign} {right}"
    name = {narrow: "cast", quot: "div", rem: "mod", smaller: "min", larger: "max"}.get(fn, str(fn))
    return f"{name}(" + ", ".join(_show(a) for a in args) + ")"


def _report(f, eg, rounds, fired: list[str], decided, offsets, same) -> str:
    sizes = {str(fn): n for fn, n in eg.all_function_sizes()}
    nodes = sum(n for k, n in sizes.items() if k not in ("lo", "hi"))
    lines = [f"// {STAGE} {f.name}: {nodes} e-nodes, "
             f"{sizes.get('lo', 0)}/{sizes.get('hi', 0)} lower/upper bounds, "
             f"{rounds} changing iterations (cap {egraph_run.ITERATION_CAP})"]  # no timings
    lines += fired
    for var, value in decided.items():
        lines.append(f"//   proved {var.name} always {'true' if value else 'false'}")
    for var, term in offsets.items():
        also = f" (the same as {same[var].name})" if var in same else ""
        lines.append(f"//   offsets {var.name} = {_show(term)}{also}")
    return "\n".join(lines)


# --------------------------------------------------------------- rewriting

class _Rewrite(Rewriter):
    """Decided masks become literals; memory prims drop masks proved true; equal offsets
    are read from their first definition."""

    def __init__(self, decided: dict[ir.Var, bool], same: dict[ir.Var, ir.Var]) -> None:
        super().__init__()
        self.decided = decided
        self.same = same

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        if bind.var in self.same:
            self.replace_uses(bind.var, self.atom(self.same[bind.var]))
            return None
        if bind.var in self.decided:
            lit = ir.Lit(self.decided[bind.var], ir.TType((), "bool"))
            if not bind.var.type.shape:
                self.replace_uses(bind.var, lit)
                return None
            return ir.Prim("fill", (lit,), bind.var.type)
        if e.op in ("and", "or") and len(e.args) == 2:
            kept = self._identity_operand(e)
            if kept is not None:
                kept = self.atom(kept)
                if kept.type == bind.var.type:
                    self.replace_uses(bind.var, kept)
                    return None
                return ir.Prim("broadcast_to", (kept,), bind.var.type)
        if e.op in MEMORY:
            where = 2 if e.op == "load" else 3
            if len(e.args) > where and self._always(e.args[where]):
                e = replace(e, args=e.args[:where])
        return super().prim(e, bind)

    def _identity_operand(self, e: ir.Prim) -> ir.Atom | None:
        """`x` of `x && true` or `x || false` (either order) where the literal side was
        proved, for boolean operands; None otherwise."""
        unit = e.op == "and"
        for here, other in ((0, 1), (1, 0)):
            a = e.args[here]
            known = a.value if isinstance(a, ir.Lit) else self.decided.get(a)
            if known is unit and e.args[other].type.dtype == "bool":
                return e.args[other]
        return None

    def _always(self, mask: ir.Atom) -> bool:
        if isinstance(mask, ir.Lit):
            return mask.value is True
        return self.decided.get(mask) is True
