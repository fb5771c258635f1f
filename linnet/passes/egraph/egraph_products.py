"""egraph-products: tensor-core -> tensor-dots, tile products chosen by the rule sets.

For each function, ONE e-graph holds its floating values as `Tile` terms
(`linnet/rules/terms.py`):

* a 2-D contraction `einsum` that the matrix units can take is `product(a, b)`, with
  `trans` around an operand or the result where its axes are in another order: in a
  kernel, two f16/bf16/f32 operands of one dtype with every side >= 16 and an f32 result;
  in an op body or entry, two float operands of the result's dtype, any sizes;
* in a kernel, `cast` of a half tile to f32 is `widen(x, dtype)`; `permute` of a 2-D
  value is `trans`; `add` of two values of one type is `plus`; `exp`, `log`, `sqrt`
  are themselves; anything else is a symbol, and so is a variable read more than once
  (a rewrite never computes a value twice), except a widened half tile.

The rule sets run (`egraph_run.saturate`) and each translated binding becomes its
cheapest equivalent (costs in `terms.py`): so `dot(a, b)`, printed as `tl.dot` in
kernels (`input_precision` as `linnet.ir.kernel_numerics.tile_product_precision` says:
"ieee" for f32 unless `--numerics fast`, then "tf32") and
as a matrix product in bodies, `dot_acc` as a dot into an accumulator, and a product
nothing turned into a dot stays an einsum (in a kernel, a broadcast product and a sum).
A function with no product and no nested math is skipped. What fired goes into the
e-graph report.
"""

from __future__ import annotations

from dataclasses import replace

from ...ir import kernel_numerics as kn
from ...ir import tensor as ir
from ...ir.numerics import numerics_of
from . import run as egraph_run
from ..middle.dce import dce
from ..traverse import Rewriter, all_binds, expr_blocks, uses

if egraph_run.available():
    from egglog import get_callable_args, get_callable_fn, get_literal_value

    from ...rules.terms import Tile, dot, dot_acc, exp, log, plus, product, sqrt, trans, widen

STAGE = "egraph-products"
HALF = ("f16", "bf16")
FLOATS = ("f16", "bf16", "f32", "f64")
MATH = ("exp", "log", "sqrt")


def egraph_products(program: ir.Program, options=None) -> ir.Program:
    """Turn tile products into dots, and apply the other tile rules, per function."""
    if not egraph_run.available():  # pragma: no cover
        egraph_run.warn_unavailable(program)
        return program
    numerics = numerics_of(options)
    pass_ = _Products(egraph_run.rule_sets(options, STAGE), numerics)
    program = pass_.program(program)
    return dce(egraph_run.with_report(program, STAGE, pass_.reports))


class _Products(Rewriter):
    """Per function: translate, saturate, extract; then rewrite the bindings that changed."""

    def __init__(self, sets: tuple, numerics: str) -> None:
        super().__init__()
        self.sets, self.numerics = sets, numerics
        self.reports: list[str] = []
        self.chosen: dict[ir.Var, object] = {}
        self.symbols: dict[str, ir.Atom] = {}
        self.kernel = False

    def func(self, f: ir.Func) -> ir.Func:
        saved = (self.chosen, self.symbols, self.kernel)
        self.kernel = f.kind == "kernel"
        self.chosen, self.symbols = {}, {}
        if _may_rewrite(f.body):
            tr = _Translate(self.kernel, uses(f.body))
            tr.block(f.body)
            self.symbols = tr.symbols
            if tr.worth_running():
                self.chosen = self.saturate(f, tr)
        try:
            return super().func(f) if self.chosen else \
                replace(f, grad=self.func(f.grad) if f.grad is not None else None)
        finally:
            self.chosen, self.symbols, self.kernel = saved

    def saturate(self, f: ir.Func, tr: "_Translate") -> dict[ir.Var, object]:
        with egraph_run.egraph(self.sets) as (eg, schedule):
            eg.register(*tr.roots.values())
            rounds, matches = egraph_run.saturate(eg, schedule)
            chosen = {}
            for var, term in tr.roots.items():
                best = eg.extract(term)
                if not _same(best, term):
                    chosen[var] = best
            nodes = sum(n for _, n in eg.all_function_sizes())
        lines = [f"// {STAGE} {f.name}: {nodes} e-nodes, {rounds} changing iterations "
                 f"(cap {egraph_run.ITERATION_CAP})", *egraph_run.fired(matches, self.sets)]
        lines += [f"//   {v.name} = {_show(t)}" for v, t in chosen.items()]
        self.reports.append("\n".join(lines))
        return chosen

    def bind(self, bind: ir.Bind) -> None:
        term = self.chosen.get(bind.var)
        if term is None:
            return super().bind(bind)
        value = self.build(term)
        if value.type != bind.var.type:
            value = self.emit_expr(ir.Prim("cast", (value,), bind.var.type), bind.var.name)
        self.replace_uses(bind.var, value)

    # ------------------------------------------------------------- write-back

    def build(self, term) -> ir.Atom:
        """Bindings computing an extracted term; the atom holding its value."""
        fn, args = get_callable_fn(term), get_callable_args(term)
        if fn == Tile.sym:
            return self.atom(self.symbols[get_literal_value(args[0])])
        if fn == widen:
            x = self.build(args[0])
            return self.emit_expr(ir.Prim("cast", (x,), ir.TType(x.type.shape, "f32")), "wide")
        xs = [self.build(a) for a in args]
        if fn == trans:
            (x,) = xs
            ty = ir.TType(x.type.shape[::-1], x.type.dtype)
            return self.emit_expr(ir.Prim("permute", (x,), ty, (("perm", (1, 0)),)), "t")
        if fn in (dot, dot_acc, product):
            return self.emit_expr(self.contraction(fn, xs), "dot")
        if fn == plus:
            return self.emit_expr(ir.Prim("add", tuple(xs), xs[0].type), "sum")
        for op, f in zip(MATH, (exp, log, sqrt)):
            if fn == f:
                return self.emit_expr(ir.Prim(op, tuple(xs), xs[0].type), op)
        raise ValueError(f"{STAGE}: no IR for the term {term}")

    def contraction(self, fn, xs: list[ir.Atom]) -> ir.Expr:
        a, b = xs[0], xs[1]
        dtype = "f32" if self.kernel else a.type.dtype
        ty = ir.TType((a.type.shape[0], b.type.shape[1]), dtype)
        if fn == product:
            return ir.Einsum("ik,kj->ij", (a, b), ty, dtype)
        precision = (kn.tile_product_precision(a.type.dtype, self.numerics) if self.kernel
                     else "")
        return ir.Prim("dot", tuple(xs), ty, (("precision", precision),))


def _may_rewrite(body: ir.Block) -> bool:
    """Could translating body find something worth running the rules for? Only an einsum
    (a product) or a permute or `exp`/`log`/`sqrt` (math nested in math) can count: a
    body of other bindings, such as a long unrolled loop of adds, is not translated at all
    (an egglog call or two per binding, for nothing)."""
    return any(isinstance(b.expr, ir.Einsum)
               or (isinstance(b.expr, ir.Prim) and (b.expr.op == "permute" or b.expr.op in MATH))
               for b in all_binds(body))


def _same(a, b) -> bool:
    """Are two terms the same tree? (Cheaper than comparing their printed forms.)"""
    fa, fb = get_callable_fn(a), get_callable_fn(b)
    if fa is None or fb is None:
        return fa is fb and get_literal_value(a) == get_literal_value(b)
    xs, ys = get_callable_args(a), get_callable_args(b)
    return fa == fb and len(xs) == len(ys) and all(_same(x, y) for x, y in zip(xs, ys))


def _show(term) -> str:
    """An extracted term, compactly: `dot(v:a_tile, trans(v:b_tile))`."""
    fn, args = get_callable_fn(term), get_callable_args(term)
    if fn == Tile.sym:
        return str(get_literal_value(args[0])).removeprefix("v:")
    if fn == widen:
        return f"widen({_show(args[0])}, {get_literal_value(args[1])})"
    name = getattr(fn, "__name__", str(fn))
    return f"{name}(" + ", ".join(_show(a) for a in args) + ")"


# ------------------------------------------------------------ translation

class _Translate:
    """A function's floating bindings -> Tile terms; `roots` are those worth rewriting."""

    def __init__(self, kernel: bool, counts: dict[str, int]) -> None:
        self.kernel, self.counts = kernel, counts
        self.terms: dict[ir.Var, object] = {}
        self.roots: dict[ir.Var, object] = {}
        self.symbols: dict[str, ir.Atom] = {}
        self.products = 0
        self.nested = 0

    def worth_running(self) -> bool:
        """A product to choose for, or math nested in math that a rule might simplify."""
        return bool(self.products or self.nested)

    def block(self, b: ir.Block) -> None:
        for bind in b.binds:
            for inner in expr_blocks(bind.expr):
                self.block(inner)
            term = self.translate(bind.expr) if isinstance(bind.var.type, ir.TType) else None
            if term is not None:
                self.terms[bind.var] = self.roots[bind.var] = term

    def operand(self, a: ir.Atom):
        """The term of an operand: its translation, or a symbol standing for the value.

        A value read more than once is a symbol (a rewrite never computes it twice), except
        a half tile widened to f32: `hoist-loop-invariants` moves the widening of a tile
        loaded once (a query tile) out of the loops that read it, and a dot must still see
        through it to the half tile (the cast is dropped then, never computed again)."""
        term = self.terms.get(a) if isinstance(a, ir.Var) else None
        if term is not None and (self.counts.get(a.name, 0) <= 1
                                 or get_callable_fn(term) == widen):
            return term
        name = f"v:{a.name}" if isinstance(a, ir.Var) else f"lit:{a.value}:{a.type.dtype}"
        self.symbols[name] = a
        return Tile.sym(name)

    def translate(self, e: ir.Expr):
        if isinstance(e, ir.Einsum):
            return self.einsum(e)
        if not isinstance(e, ir.Prim) or e.type.dtype not in FLOATS:
            return None
        if e.op == "permute" and len(e.type.shape) == 2 and tuple(e.attr("perm")) == (1, 0):
            return self.math(trans(self.operand(e.args[0])), e.args)
        if e.op == "cast" and self.kernel and e.args[0].type.dtype in HALF \
                and e.type.dtype == "f32":
            return widen(self.operand(e.args[0]), e.args[0].type.dtype)
        if e.op == "add" and all(a.type == e.type for a in e.args):
            return plus(self.operand(e.args[0]), self.operand(e.args[1]))
        if e.op in MATH:
            fn = dict(zip(MATH, (exp, log, sqrt)))[e.op]
            return self.math(fn(self.operand(e.args[0])), e.args)
        return None

    def math(self, term, args: tuple[ir.Atom, ...]):
        if any(isinstance(a, ir.Var) and a in self.terms and
               get_callable_fn(self.terms[a]) in (trans, exp, log, sqrt) for a in args):
            self.nested += 1
        return term

    def einsum(self, e: ir.Einsum):
        plan = _matrix_product(e.spec)
        if plan is None or len(e.args) != 2 or not self.fits(e):
            return None
        a_first, b_first, out_first = plan
        x, y = self.operand(e.args[0]), self.operand(e.args[1])
        x = x if a_first else trans(x)
        y = y if b_first else trans(y)
        self.products += 1
        return product(x, y) if out_first else trans(product(x, y))

    def fits(self, e: ir.Einsum) -> bool:
        """Can the matrix units take this contraction (see the module docstring)?"""
        ta, tb = (a.type for a in e.args)
        if ta.dtype != tb.dtype or len(ta.shape) != 2 or len(tb.shape) != 2:
            return False
        if not self.kernel:
            return ta.dtype in FLOATS and ta.dtype == e.type.dtype == (e.acc or e.type.dtype)
        return (ta.dtype in ("f16", "bf16", "f32") and e.type.dtype == "f32"
                and (e.acc or "f32") == "f32" and min(ta.shape + tb.shape) >= 16)


def _matrix_product(spec: str) -> tuple[bool, bool, bool] | None:
    """For `ik,kj->ij` in any axis order: whether a is [i, k], b is [k, j] and the
    result [i, j] (i the free axis of a, j of b); None for any other contraction."""
    ins, out = spec.split("->")
    subs = ins.split(",")
    if len(subs) != 2 or len(out) != 2 or any(len(s) != 2 or len(set(s)) != 2 for s in subs):
        return None
    a, b = subs
    shared = set(a) & set(b)
    if len(shared) != 1:
        return None
    (k,) = shared
    i, j = a.replace(k, ""), b.replace(k, "")
    if set(out) != {i, j}:
        return None
    return a == i + k, b == k + j, out == i + j
