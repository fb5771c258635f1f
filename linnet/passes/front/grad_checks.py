"""The front end's checks for `--grad`, where the source spans are (`bind-generics`).

- E2128: the entry must return one floating scalar, the loss.
- E2129: a `while` loop has no trip count to reverse, so it must not carry a floating
  `var` that depends on a floating input of the entry. The dependence is followed
  through the statements of the entry and of every `fn` and op without a `grad` clause
  it calls (an op with a clause is differentiated by its clause, never looked into). It
  is a name-level over-approximation: a floating value depends on an input when its
  expression reads a name that does, or calls something with such an argument; integer
  and bool values end the dependence (they carry no gradient).
"""

from __future__ import annotations

import dataclasses

from ...check.instance import Analysis, Instance
from ...check.types import LitT, TensorT, TupleT, materialize
from ...diagnostics import Diagnostic, Span
from ...syntax import tree as t
from .surface_walks import assigned_outer

FLOATS = ("f16", "bf16", "f32", "f64")


def grad_diagnostics(analysis: Analysis, entry: t.Function, inst: Instance,
                     states: int = 0) -> list[Diagnostic]:
    """What keeps the bound entry from being differentiated (empty when nothing). A block
    entry returns its `states` next states after the loss (linnet/parameters.py)."""
    problems = []
    result = inst.signature.result or _returned(entry, inst)
    if states and isinstance(result, TupleT) and len(result.items) == 1 + states:
        result = result.items[0]
    if not (isinstance(result, TensorT) and result.rank == 0 and result.dtype in FLOATS):
        span = entry.result.span if entry.result is not None else entry.span
        problems.append(Diagnostic(
            "E2128", f"--grad: the entry `{entry.name}` returns {result or 'nothing'}, "
            "not one floating scalar", span, "the loss must be a floating scalar",
            help="return the scalar loss to differentiate, such as `sum[i] y[i] * y[i]`"))
    floats = {p.name for p, ty in zip(entry.params, inst.signature.params)
              if isinstance(ty, TensorT) and ty.dtype in FLOATS}
    flow = _Flow(analysis, inst, floats, set(), problems)
    flow.stmts(entry.body)
    return problems


def _returned(entry: t.Function, inst: Instance):
    """The type an entry without `-> T` returns: its final `return`'s, in the instance."""
    last = entry.body[-1] if entry.body else None
    value = inst.types.get(id(last.value)) if isinstance(last, t.Return) else None
    return materialize(value) if value is not None and not value.is_error else None


class _Flow:
    """The names of one function instance that depend on a floating input, statement by
    statement; reports each `while` that carries such a floating name."""

    def __init__(self, analysis: Analysis, inst: Instance, tainted: set[str],
                 seen: set, problems: list[Diagnostic]) -> None:
        self.analysis = analysis
        self.inst = inst
        self.tainted = set(tainted)
        self.seen = seen  # (callee, tainted parameters) already followed
        self.problems = problems

    def stmts(self, stmts) -> None:
        for s in stmts:
            self.stmt(s)

    def stmt(self, s) -> None:
        if isinstance(s, (t.Let, t.VarDecl, t.LetIndex, t.Assign)):
            if self.depends(s.value) and self.floating(s.value):
                self.tainted.add(s.name)
        elif isinstance(s, t.LetTuple):
            if self.depends(s.value):
                self.tainted.update(s.names)
        elif isinstance(s, t.For):
            self.depends(s.lo), self.depends(s.hi)
            self.loop(s.body)
        elif isinstance(s, t.While):
            self.depends(s.cond)
            self.loop(s.body)
            self.check_while(s)
        elif isinstance(s, (t.Return, t.Yield)):
            self.depends(s.value)

    def loop(self, body) -> None:
        """A loop body until no more names depend on inputs (carried values feed back)."""
        while True:
            before = set(self.tainted)
            self.stmts(body)
            if self.tainted == before:
                return

    def check_while(self, s: t.While) -> None:
        carried = [n for n in assigned_outer(s.body) if n in self.tainted and self.is_float(n, s)]
        if carried:
            names = ", ".join(f"`{n}`" for n in carried)
            keyword = Span(s.span.file, s.span.start, s.span.start + len("while"))
            self.problems.append(Diagnostic(
                "E2129", f"--grad: cannot differentiate a while loop that carries {names}, "
                "floating and depending on a floating input", keyword,
                "a while loop has no trip count to reverse",
                help="write a counted `for` loop (its trips are reversed), or compute the "
                     "carried value without the inputs"))

    def floating(self, e) -> bool:
        """Might e be floating? (An integer or bool value carries no gradient: a cast to
        one ends the dependence, as in reverse mode.)"""
        ty = getattr(self.inst.types.get(id(e)), "type", None)
        if isinstance(ty, TensorT):
            return ty.dtype in FLOATS
        if isinstance(ty, LitT):
            return ty.kind == "float"
        return True  # a tuple, or unknown: assume so

    def is_float(self, name: str, s: t.While) -> bool:
        """Is some value assigned to `name` in the loop floating?"""
        for node in _walk(s.body):
            if isinstance(node, t.Assign) and node.name == name:
                val = self.inst.types.get(id(node.value))
                ty = getattr(val, "type", None)
                if (isinstance(ty, TensorT) and ty.dtype in FLOATS) or \
                        (isinstance(ty, LitT) and ty.kind == "float"):
                    return True
        return False

    # ---------------------------------------------------------- expressions

    def depends(self, e) -> bool:
        """Does e read a name that depends on an input? (Statements inside `if` blocks
        and scans are followed on the way, and the functions e calls.)"""
        if isinstance(e, t.Name):
            return e.id in self.tainted
        if isinstance(e, t.ForExpr):
            self.depends(e.lo), self.depends(e.hi)
            self.loop(e.body[:-1])
            return self.depends(e.body[-1].value)
        if isinstance(e, t.Block):
            self.stmts(e.stmts)
            return self.depends(e.value)
        found = any([self.depends(c) for c in _children(e)])  # every child is visited
        if isinstance(e, t.Call):
            self.follow(e)
        return found

    def follow(self, call: t.Call) -> None:
        """Look into a called fn or op without a grad clause, with its parameters that
        receive dependent arguments marked."""
        module = self.analysis.module_of(self.inst.item)
        item = module.globals.items.get(call.callee)
        binding = self.inst.call_bindings.get(id(call))
        if not isinstance(item, (t.Function, t.Op)) or item.grad is not None or binding is None:
            return
        args = [a.value for a in call.args if a.name is None]
        tainted = {p.name for p, a in zip(item.params, args)
                   if self.depends(a) and self.floating(a)}
        key = (id(item), str(binding), frozenset(tainted))
        if not tainted or key in self.seen:
            return
        self.seen.add(key)
        inst = self.analysis.instantiate(item, binding)
        if not inst.diagnostics:
            _Flow(self.analysis, inst, tainted, self.seen, self.problems).stmts(item.body)


def _children(node) -> list:
    """The sub-nodes of a surface node (expressions, arguments, blocks)."""
    if isinstance(node, tuple):
        return [c for x in node for c in ([x] if dataclasses.is_dataclass(x) else _children(x))]
    if not dataclasses.is_dataclass(node):
        return []
    out = []
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        if isinstance(value, tuple):
            out.extend(_children(value))
        elif dataclasses.is_dataclass(value):
            out.append(value)
    return out


def _walk(node):
    """Every surface node under node (statements and expressions)."""
    for child in _children(node):
        yield child
        yield from _walk(child)
