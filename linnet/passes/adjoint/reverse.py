"""Reverse mode over a block of tensor-core IR: the forward sweep, then the adjoint sweep.

`Reverse.differentiate(block, ct, adj)` emits the block's forward bindings (loops that
will be differentiated also store each trip's carried values, see `passes/adjoint/loops.py`),
seeds the block's result with the adjoint `ct`, and walks the bindings backwards, adding
each operand's adjoint contribution into `adj`. What is left in `adj` afterwards is the
adjoint of the block's free variables.

Only *active* values take adjoints: floating values that depend on a floating input of
the entry (the set `Reverse.active`, grown as bindings are emitted). An adjoint ("ct")
is an atom of its value's exact type, or, for a tuple value, a tuple of adjoints with
None where an item has none.

Control flow. An `If`'s adjoint is an `If` on the same condition whose branches
recompute their forward bindings (under fresh names) and differentiate them, returning
the adjoints of the free variables the branches read. Counted loops are in
`passes/adjoint/loops.py`. A `While` carrying an active floating value is rejected.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...diagnostics import NO_SPAN, CompileError, Diagnostic
from ...ir import tensor as ir
from . import loops
from .emit import Emitter, has_float, is_float
from .values import Adjoints, Ct, Path, is_empty, leaf_of, leaf_paths, leaf_type, with_leaf
from .rules import einsum_rule, prim_rule
from ..middle.inline_fns import rename
from ..traverse import bound_vars, expr_free_vars, free_vars


@dataclass
class Step:
    """One forward binding, with what its adjoint needs (a loop's stored trips)."""
    bind: ir.Bind
    stash: "loops.Stash | None" = None


# --------------------------------------------------------------- engine

class Reverse:
    """Differentiates blocks of one function into one `Emitter`.

    `grads` maps each op with a grad clause to the name of its grad Func in the program;
    `funcs` holds the program's functions (for the ops' parameter types).
    """

    def __init__(self, em: Emitter, active: set[ir.Var], funcs: dict[str, ir.Func],
                 grads: dict[str, str]) -> None:
        self.em = em
        self.active = active
        self.funcs = funcs
        self.grads = grads

    def differentiate(self, block: ir.Block, ct: Ct, adj: Adjoints) -> None:
        steps = self.forward(block)
        adj.add(block.result, ct)
        self.backward(steps, adj)

    def is_active(self, a: ir.Atom) -> bool:
        return isinstance(a, ir.Var) and a in self.active

    def touches(self, e: ir.Expr) -> bool:
        return any(v in self.active for v in expr_free_vars(e))

    def active_frees(self, *blocks: ir.Block) -> list[ir.Var]:
        """The active variables some block reads from outside it, by name."""
        frees = set().union(*(free_vars(b) for b in blocks))
        return sorted((v for v in frees if v in self.active), key=lambda v: v.name)

    def renamed(self, block: ir.Block, mapping: dict[ir.Var, ir.Atom] | None = None
                ) -> ir.Block:
        """A copy of block whose every bound variable has a fresh name (and whose free
        variables are replaced through `mapping`)."""
        mapping = dict(mapping or {})
        for v in bound_vars(block):
            mapping[v] = self.em.fresh(v.name, v.type)
        return rename(block, mapping)

    # ------------------------------------------------------- forward

    def forward(self, block: ir.Block) -> list[Step]:
        steps = []
        for bind in block.binds:
            active = has_float(bind.var.type) and self.touches(bind.expr)
            stash = None
            if isinstance(bind.expr, ir.Loop) and active:
                stash = loops.stash(self, bind)
            else:
                if isinstance(bind.expr, ir.While):
                    self.check_while(bind.expr)
                    active = False
                self.em.bind(bind)
            if active:
                self.active.add(bind.var)
            steps.append(Step(bind, stash))
        return steps

    def check_while(self, e: ir.While) -> None:
        """A while loop has no counted trips to reverse: it must not carry active floats
        (the front end reports this with its span; this guards hand-built IR)."""
        if loops.active_carried(self, e.carried, e.init, e.body):
            raise CompileError([Diagnostic(
                "E2129", "--grad: cannot differentiate a while loop carrying floating values "
                "that depend on a floating input", NO_SPAN)])

    # ------------------------------------------------------ backward

    def backward(self, steps: list[Step], adj: Adjoints) -> None:
        for step in reversed(steps):
            ct = adj.take(step.bind.var)
            if not is_empty(ct):
                self.backward_step(step, ct, adj)

    def backward_step(self, step: Step, ct: Ct, adj: Adjoints) -> None:
        e, y = step.bind.expr, step.bind.var
        if isinstance(e, (ir.Var, ir.Lit)):
            adj.add(e, ct)
        elif isinstance(e, ir.Prim):
            rule = prim_rule(e)
            if rule is not None:
                self.apply(rule(self.em, e, y, ct), e.args, adj)
        elif isinstance(e, ir.Einsum):
            self.apply(einsum_rule(self.em, e, y, ct), e.args, adj)
        elif isinstance(e, ir.MakeTuple):
            for a, c in zip(e.items, ct):
                adj.add(a, c)
        elif isinstance(e, ir.GetItem):
            adj.add(e.tup, tuple(ct if k == e.index else None
                                 for k in range(len(e.tup.type.items))))
        elif isinstance(e, ir.Call):
            self.call(e, y, ct, adj)
        elif isinstance(e, ir.If):
            self.if_(e, ct, adj)
        elif isinstance(e, ir.Loop):
            loops.reverse(self, step, ct, adj)
        elif not isinstance(e, ir.While):
            raise ValueError(f"differentiate: no adjoint for {type(e).__name__}")

    def apply(self, thunks, args: tuple[ir.Atom, ...], adj: Adjoints) -> None:
        """Run the rule's thunk of each active operand; sum broadcast axes back."""
        for a, thunk in zip(args, thunks):
            if thunk is not None and self.is_active(a):
                adj.add(a, self.em.sum_to(thunk(), a.type))

    def call(self, e: ir.Call, y: ir.Var, ct: ir.Atom, adj: Adjoints) -> None:
        """A call of an op with a grad clause: its adjoint is a call of the clause, which
        gives the gradient of each floating tensor parameter, in order."""
        if e.callee not in self.grads:
            raise ValueError(f"differentiate: call of {e.callee}, which was not inlined")
        op = self.funcs[e.callee]
        floats = [k for k, p in enumerate(op.params) if is_float(p.type) and p.type.rank]
        if not any(self.is_active(e.args[k]) for k in floats):
            return
        grad = self.funcs[self.grads[e.callee]]
        ty = grad.body.result.type
        seed = self.seed(y.type, ct)
        g = self.em.emit(ir.Call(grad.name, e.args + (y, seed), ty), "d_" + op.name)
        for j, k in enumerate(floats):
            item = g if len(floats) == 1 and not isinstance(ty, ir.TupleTy) else \
                self.em.emit(ir.GetItem(g, j, ty.items[j]), "d_arg")
            adj.add(e.args[k], item)

    def seed(self, ty: ir.Ty, ct: Ct) -> ir.Atom:
        """The adjoint handed to a grad clause as one value: for a tuple result, a tuple
        with zeros where an item has none (the clause takes `dy` of the result's type)."""
        if not isinstance(ct, tuple):
            return ct
        items = tuple(self.em.zeros(t) if c is None else c for t, c in zip(ty.items, ct))
        return self.em.emit(ir.MakeTuple(items, ty), "d_result")

    def if_(self, e: ir.If, ct: Ct, adj: Adjoints) -> None:
        frees = self.active_frees(e.then, e.orelse)
        leaves = [(v, p) for v in frees for p in leaf_paths(v.type)]
        if not leaves:
            return
        branches = [self.branch(b, ct, leaves) for b in (e.then, e.orelse)]
        ty = ir.TupleTy(tuple(leaf_type(v.type, p) for v, p in leaves))
        out = self.em.emit(ir.If(e.cond, branches[0], branches[1], ty), "d_if")
        for k, (v, p) in enumerate(leaves):
            item = self.em.emit(ir.GetItem(out, k, ty.items[k]), "d_" + v.name)
            adj.add(v, with_leaf(v.type, p, item))

    def branch(self, block: ir.Block, ct: Ct, leaves: list[tuple[ir.Var, Path]]) -> ir.Block:
        """One branch of an If's adjoint: the branch recomputed and differentiated,
        returning the adjoint of each free floating value it reads (zero if none)."""
        self.em.open()
        sub = Adjoints(self.em, self.active)
        self.differentiate(self.renamed(block), ct, sub)
        items = tuple(leaf_of(sub.get(v), p) or self.em.zeros(leaf_type(v.type, p))
                      for v, p in leaves)
        ty = ir.TupleTy(tuple(a.type for a in items))
        return self.em.close(self.em.emit(ir.MakeTuple(items, ty), "d_branch"))
