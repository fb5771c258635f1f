"""The one generic traversal of the tensor IR, shared by every IR-to-IR pass.

Nanopass style: `Rewriter` walks a Program, its Funcs (and each `Func.grad`),
Blocks, Binds and the nested blocks of If/Loop/While, and rebuilds only what
changed. A pass subclasses it and overrides the few methods for the node kinds
it rewrites; everything else is copied (shared, since nodes are immutable).

The contract of the per-expression methods (`prim`, `einsum`, `call`, ...):
each is called with the expression and the `Bind` that holds it, and returns
the expression to bind to that Bind's variable, or None to drop the binding.
Before returning, a method may `emit` extra bindings (they land in the
current block, before the rewritten one), and may map a variable to another
atom with `replace_uses`: every later use, in any nested block too, reads the
new atom. Variable names are unique within a function (the verifier checks
it), so one substitution map per function is enough.

Also here: free variables, names bound in a function, fresh names, and
substitution of atoms; the read-only walkers (the atoms and blocks an
expression reads) live in `linnet/ir/walk.py` and are re-exported.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterable, Iterator

from ..ir import tensor as ir
from ..ir.walk import (all_binds, expr_atoms, expr_binders, expr_blocks, ix_atoms,  # noqa: F401
                       walk_binds)
from .block_memo import BlockMemo

# ------------------------------------------------------------ what nodes read


def map_blocks(e: ir.Expr, fn: Callable[[ir.Block], ir.Block]) -> ir.Expr:
    """`e` with each nested block replaced by `fn(block)`."""
    if isinstance(e, ir.If):
        return _same_or(e, then=fn(e.then), orelse=fn(e.orelse))
    if isinstance(e, ir.Loop):
        return _same_or(e, body=fn(e.body))
    if isinstance(e, ir.While):
        return _same_or(e, cond=fn(e.cond), body=fn(e.body))
    return e


def expr_free_vars(e: ir.Expr) -> set[ir.Var]:
    """Variables an expression reads, including those its nested blocks read from outside."""
    return set(_expr_free(e))


def free_vars(block: ir.Block) -> set[ir.Var]:
    """Variables a block reads that it does not define itself."""
    return set(_block_free(block))


_FREE: BlockMemo[frozenset[ir.Var]] = BlockMemo()
"""Each block's free variables, while it lives. A pass asks at every level of n nested
blocks (`dce` sweeping an `else if` chain, the PyTorch printer freeing each block's dead
values, `outline-deep-blocks`): remembered, each block is walked once, not once per
enclosing level."""


def _expr_free(e: ir.Expr) -> frozenset[ir.Var]:
    free = {a for a in expr_atoms(e) if isinstance(a, ir.Var)}
    blocks = expr_blocks(e)
    if not blocks:
        return frozenset(free)
    inner: set[ir.Var] = set()
    for b in blocks:
        inner |= _block_free(b)
    return frozenset(free | (inner - set(expr_binders(e))))


def _block_free(block: ir.Block) -> frozenset[ir.Var]:
    hit = _FREE.get(block)
    if hit is not None:
        return hit
    free: set[ir.Var] = set()
    defined: set[ir.Var] = set()
    for bind in block.binds:
        free |= _expr_free(bind.expr) - defined
        defined.add(bind.var)
    if isinstance(block.result, ir.Var) and block.result not in defined:
        free.add(block.result)
    answer = frozenset(free)
    _FREE.put(block, answer)
    return answer


def uses(block: ir.Block) -> dict[str, int]:
    """How many times each variable name is read in a block and its nested blocks."""
    counts: dict[str, int] = {}
    for a in _all_atoms(block):
        if isinstance(a, ir.Var):
            counts[a.name] = counts.get(a.name, 0) + 1
    return counts


def _all_atoms(block: ir.Block) -> Iterator[ir.Atom]:
    for x in walk_binds(block):
        if isinstance(x, ir.Bind):
            yield from expr_atoms(x.expr)
        else:
            yield x.result


def bound_vars(block: ir.Block) -> Iterator[ir.Var]:
    """Every variable a block binds, in nested blocks too (loop indices, carried values)."""
    for x in walk_binds(block):
        if isinstance(x, ir.Bind):
            yield x.var
            yield from expr_binders(x.expr)


def func_names(f: ir.Func) -> set[str]:
    """The names a function binds (parameters included), so fresh names avoid them."""
    return {p.name for p in f.params} | {v.name for v in bound_vars(f.body)}


# ------------------------------------------------------------------- names


class NameSupply:
    """Fresh variable names that clash with no name in `taken` nor with each other.

    `taken` may be a function that lists them, called on the first `fresh`: most passes
    rewrite most functions without naming anything, and listing a function's names walks
    all of it (an unrolled loop of 100,000 trips, once per pass)."""

    def __init__(self, taken: Iterable[str] | Callable[[], Iterable[str]] = ()) -> None:
        self._list_taken = taken if callable(taken) else None
        self._taken = None if callable(taken) else set(taken)
        self.counters: dict[str, int] = {}

    @property
    def taken(self) -> set[str]:
        if self._taken is None:
            self._taken = set(self._list_taken())
        return self._taken

    def fresh(self, hint: str = "t") -> str:
        """`hint_1`, `hint_2`, ... (a numbered hint is numbered afresh: `x_1` gives `x_2`)."""
        base = hint.rstrip("0123456789").rstrip("_") or "t"
        taken = self.taken
        while True:
            n = self.counters[base] = self.counters.get(base, 0) + 1
            name = f"{base}_{n}"
            if name not in taken:
                taken.add(name)
                return name


# --------------------------------------------------------------- rewriting


class Rewriter:
    """Copy a program, calling one overridable method per expression kind.

    Subclasses override `prim`, `einsum`, `call`, `make_tuple`, `get_item`,
    `if_`, `loop`, `while_`, `comprehension` or `atom_expr` (a Var or Lit
    bound to a variable), or the structural `program`/`func`/`block`/`bind`.
    While a function is being rewritten, `self.names` hands out fresh names
    and `self.func_now` is the function (before rewriting).
    """

    def __init__(self) -> None:
        self.subst: dict[ir.Var, ir.Atom] = {}
        self.names = NameSupply()
        self.func_now: ir.Func | None = None
        self._out: list[ir.Bind] = []

    # structure ----------------------------------------------------------

    def program(self, p: ir.Program) -> ir.Program:
        funcs = tuple(self.func(f) for f in p.funcs)
        return p if funcs == p.funcs else replace(p, funcs=funcs)

    def func(self, f: ir.Func) -> ir.Func:
        """Rewrite one function (its grad separately, with its own names and map)."""
        saved = (self.subst, self.names, self.func_now)
        self.subst, self.names, self.func_now = {}, NameSupply(lambda: func_names(f)), f
        try:
            body = self.block(f.body)
        finally:
            self.subst, self.names, self.func_now = saved
        grad = self.func(f.grad) if f.grad is not None else None
        return replace(f, body=body, grad=grad)

    def block(self, b: ir.Block) -> ir.Block:
        saved, self._out = self._out, []
        try:
            for bind in b.binds:
                self.bind(bind)
            result = self.atom(b.result)
            binds = tuple(self._out)
        finally:
            self._out = saved
        if binds == b.binds and result == b.result:
            return b
        return ir.Block(binds, result)

    def bind(self, bind: ir.Bind) -> None:
        new = self.expr(bind.expr, bind)
        if new is not None:
            self.emit(bind if new is bind.expr else ir.Bind(bind.var, new))

    # helpers for subclasses ----------------------------------------------

    def emit(self, bind: ir.Bind) -> None:
        """Add a binding to the block being built, before the current one."""
        self._out.append(bind)

    def emit_expr(self, e: ir.Expr, hint: str = "t") -> ir.Var:
        """Bind `e` to a fresh variable in the current block and return the variable."""
        v = ir.Var(self.names.fresh(hint), e.type)
        self.emit(ir.Bind(v, e))
        return v

    def mark(self) -> int:
        """A position in the current block, for `pop_emitted`."""
        return len(self._out)

    def pop_emitted(self, var: ir.Atom, since: int) -> ir.Expr | None:
        """If the last binding emitted after `mark()` gave `since` binds `var`, take it
        back and return its expression (to bind it to the current Bind's own variable)."""
        if len(self._out) > since and self._out[-1].var == var:
            return self._out.pop().expr
        return None

    def replace_uses(self, var: ir.Var, by: ir.Atom) -> None:
        """From now on, every use of `var` reads `by`."""
        self.subst[var] = by

    def atom(self, a: ir.Atom) -> ir.Atom:
        return self.subst.get(a, a) if isinstance(a, ir.Var) else a

    def atoms(self, items: tuple[ir.Atom, ...]) -> tuple[ir.Atom, ...]:
        new = tuple(self.atom(a) for a in items)
        return items if new == items else new

    # expressions ---------------------------------------------------------

    def expr(self, e: ir.Expr, bind: ir.Bind) -> ir.Expr | None:
        method = _DISPATCH.get(type(e))
        if method is None:
            raise TypeError(f"not a tensor IR expression: {type(e).__name__}")
        return getattr(self, method)(e, bind)

    def atom_expr(self, e: ir.Atom, bind: ir.Bind) -> ir.Expr | None:
        return self.atom(e)

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, args=self.atoms(e.args))

    def einsum(self, e: ir.Einsum, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, args=self.atoms(e.args))

    def call(self, e: ir.Call, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, args=self.atoms(e.args))

    def make_tuple(self, e: ir.MakeTuple, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, items=self.atoms(e.items))

    def get_item(self, e: ir.GetItem, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, tup=self.atom(e.tup))

    def if_(self, e: ir.If, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, cond=self.atom(e.cond), then=self.block(e.then),
                        orelse=self.block(e.orelse))

    def loop(self, e: ir.Loop, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, lo=self.bound(e.lo), hi=self.bound(e.hi), init=self.atoms(e.init),
                        body=self.block(e.body))

    def bound(self, b: ir.Bound) -> ir.Bound:
        """A loop bound through the substitution (a run-time bound that became a literal is
        its integer)."""
        return b if isinstance(b, int) else ir.loop_bound(self.atom(b))

    def while_(self, e: ir.While, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, init=self.atoms(e.init), cond=self.block(e.cond),
                        body=self.block(e.body))

    def comprehension(self, e: ir.Comprehension, bind: ir.Bind) -> ir.Expr | None:
        return _same_or(e, body=map_ix_atoms(e.body, self.atom))


_DISPATCH: dict[type, str] = {
    ir.Var: "atom_expr", ir.Lit: "atom_expr", ir.Prim: "prim", ir.Einsum: "einsum",
    ir.Call: "call", ir.MakeTuple: "make_tuple", ir.GetItem: "get_item", ir.If: "if_",
    ir.Loop: "loop", ir.While: "while_", ir.Comprehension: "comprehension",
}


def _same_or(node, **fields):
    """`node` itself when no field changed (so unchanged trees stay shared), else a copy."""
    if all(getattr(node, k) is v or getattr(node, k) == v for k, v in fields.items()):
        return node
    return replace(node, **fields)


def map_ix_atoms(e: ir.IxExpr, fn: Callable[[ir.Atom], ir.Atom]) -> ir.IxExpr:
    """An index expression with every atom it reads replaced by `fn(atom)`."""
    if isinstance(e, ir.IxAccess):
        return _same_or(e, tensor=fn(e.tensor))
    if isinstance(e, ir.IxScalar):
        return _same_or(e, value=fn(e.value))
    if isinstance(e, ir.IxPrim):
        return _same_or(e, args=tuple(map_ix_atoms(a, fn) for a in e.args))
    if isinstance(e, ir.IxReduce):
        return _same_or(e, body=map_ix_atoms(e.body, fn))
    if isinstance(e, ir.IxGather):
        return _same_or(e, tensor=fn(e.tensor), positions=tuple(
            p if isinstance(p, str) else map_ix_atoms(p, fn) for p in e.positions))
    raise TypeError(f"not an index expression: {type(e).__name__}")


# ------------------------------------------------------------ substitution


class _Substitute(Rewriter):
    def __init__(self, mapping: dict[ir.Var, ir.Atom]) -> None:
        super().__init__()
        self.mapping = mapping

    def block(self, b: ir.Block) -> ir.Block:
        self.subst.update(self.mapping)
        return super().block(b)


def substitute(block: ir.Block, mapping: dict[ir.Var, ir.Atom]) -> ir.Block:
    """`block` with every use of a variable in `mapping` replaced by its atom."""
    return _Substitute(mapping).block(block)
