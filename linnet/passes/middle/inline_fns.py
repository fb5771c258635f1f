"""inline-fns: tensor-kernels -> tensor-inlined, with no `fn` left.

A `fn` is a pure helper that the language promises to inline (docs/language.md, "Items"),
so every `Call` of a Func of kind "fn" is replaced by the callee's body: its
parameters read the call's arguments, every variable it binds gets a fresh
name in the caller (names stay unique within a function), and the variable
holding the call's result is bound by the callee's own last step. Callees are
inlined into first (fns cannot recurse: the checker forbids it), then the fn
Funcs are dropped. Ops stay functions: they are what kernels replace.
"""

from __future__ import annotations

import dataclasses
from dataclasses import replace

from ...ir import tensor as ir
from ..traverse import Rewriter, expr_binders


def inline_fns(program: ir.Program) -> ir.Program:
    """Every call of a fn replaced by its body; the fns themselves dropped."""
    fns = {f.name: f for f in program.funcs if f.kind == "fn"}
    if not fns:
        return program
    results: dict[str, Result] = {}
    funcs = tuple(Inliner(fns, results).func(f) for f in program.funcs if f.kind != "fn")
    return replace(program, funcs=funcs)


Result = tuple[str, object]
"""What a fn's body, its own fn calls inlined, returns: ("var", v) for the variable of its
raw body whose (inlined) top-level binding yields the result; ("param", k) for its k-th
parameter; ("atom", literal) for a literal."""


class Inliner(Rewriter):
    """Rewrites one function's calls of fns: each call is replaced by the callee's body,
    the callee's own fn calls spliced in where they stand, all named in this function.

    Splicing the raw bodies costs the size of what is produced. (Inlining each fn's callees
    into it first, then copying the result into each caller, cost the sum of the sizes of
    every fn so inlined: for a chain of n fns, each calling the one before, n * n / 2.)
    Names are given in the order that scheme gave them, so the output is the same: in this
    function's name supply, one fresh name per variable, in the order the fully inlined
    callee binds them, each from the hint its variable has in the callee."""

    def __init__(self, fns: dict[str, ir.Func], results: dict[str, Result] | None = None
                 ) -> None:
        super().__init__()
        self.fns = fns
        self.results = results if results is not None else {}

    def call(self, e: ir.Call, bind: ir.Bind) -> ir.Expr | None:
        if e.callee not in self.fns:
            return super().call(e, bind)
        splice = _Splice(self, self.fns[e.callee], self.atoms(e.args), bind.var, None)
        result = splice.run(self._out)
        if result != bind.var:
            self.replace_uses(bind.var, result)
        return None

    def result_of(self, f: ir.Func) -> Result:
        """What f returns once its fn calls are inlined (remembered per fn)."""
        if f.name not in self.results:
            self.results[f.name] = self._resolve(f, f.body.result)
        return self.results[f.name]

    def _resolve(self, f: ir.Func, a: ir.Atom) -> Result:
        """What atom a of f's top level reads once f's fn calls are inlined: a call's
        variable whose callee returns a parameter or a literal reads that argument."""
        while True:
            if not isinstance(a, ir.Var):
                return ("atom", a)
            if a in f.params:
                return ("param", f.params.index(a))
            bind = next(b for b in f.body.binds if b.var == a)
            e = bind.expr
            if not (isinstance(e, ir.Call) and e.callee in self.fns):
                return ("var", a)
            kind, value = self.result_of(self.fns[e.callee])
            if kind == "var":
                return ("var", a)  # the callee's result binding binds a
            if kind == "atom":
                return ("atom", value)
            a = e.args[value]  # type: ignore[index]


class _Splice(Rewriter):
    """One call's callee, renamed into the inliner's function and emitted into the block
    it is building. `result_var` (the caller's variable, at the outermost call) names the
    callee's result binding; `hint` (the caller's variable, for a call nested in a callee)
    is the name the result's fresh name is drawn from."""

    def __init__(self, inliner: Inliner, f: ir.Func, args: tuple[ir.Atom, ...],
                 result_var: ir.Var | None, hint: ir.Var | None) -> None:
        super().__init__()
        self.inliner, self.f = inliner, f
        self.names = inliner.names
        self.subst = dict(zip(f.params, args))
        kind, value = inliner.result_of(f)
        self.result = value if kind == "var" else None
        self.result_var, self.hint = result_var, hint

    def run(self, out: list[ir.Bind]) -> ir.Atom:
        """Emit the callee's body into out (the block being built); return its result."""
        self._out = out
        for bind in self.f.body.binds:
            self.bind(bind)
        return self.atom(self.f.body.result)

    def bind(self, bind: ir.Bind) -> None:
        e = bind.expr
        if isinstance(e, ir.Call) and e.callee in self.inliner.fns:
            mine = bind.var == self.result
            hint = (self.hint or bind.var) if mine else bind.var
            inner = _Splice(self.inliner, self.inliner.fns[e.callee], self.atoms(e.args),
                            self.result_var if mine else None, hint)
            self.subst[bind.var] = inner.run(self._out)
            return
        self.subst[bind.var] = self._name(bind.var)
        for v in expr_binders(e):
            self.subst[v] = ir.Var(self.names.fresh(v.name), v.type)
        new = self.expr(e, bind)
        self.emit(ir.Bind(self.subst[bind.var], new))  # type: ignore[arg-type]

    def _name(self, v: ir.Var) -> ir.Var:
        """v's variable in the inliner's function: a fresh name, from its own hint or (for
        the binding that yields the result) the caller's; the caller's own variable where
        the caller gave one."""
        if v != self.result:
            return ir.Var(self.names.fresh(v.name), v.type)
        hint = self.hint or v
        name = self.names.fresh(hint.name)
        return self.result_var if self.result_var is not None else ir.Var(name, hint.type)

    def loop(self, e: ir.Loop, bind: ir.Bind) -> ir.Expr | None:
        new = super().loop(e, bind)
        return replace(new, index=self.atom(e.index),  # type: ignore[arg-type]
                       carried=tuple(self.atom(c) for c in e.carried))

    def while_(self, e: ir.While, bind: ir.Bind) -> ir.Expr | None:
        new = super().while_(e, bind)
        return replace(new, carried=tuple(self.atom(c) for c in e.carried))  # type: ignore[arg-type]


def rename(node, mapping: dict[ir.Var, ir.Atom]):
    """node with every variable, bound or used, replaced through mapping.

    One structural traversal covers binders (`Bind.var`, loop indices and carried
    values) and uses alike, in blocks and index expressions; types and literals hold
    no variables and are kept as they are.
    """
    if isinstance(node, ir.Var):
        return mapping.get(node, node)
    if isinstance(node, tuple):
        return tuple(rename(x, mapping) for x in node)
    if not dataclasses.is_dataclass(node) or isinstance(node, (ir.TType, ir.TupleTy, ir.Lit)):
        return node
    changes = {f.name: rename(getattr(node, f.name), mapping)
               for f in dataclasses.fields(node)}
    return replace(node, **changes)
