"""egraph-tiles: tensor-core -> tensor-core, kernel masks proved by the rule sets.

For each kernel Func, ONE e-graph holds the kernel body's integer index computations
and boolean masks, translated into the term language of `linnet/rules/terms.py`:

* integer (i32/i64) literals are constants; `add`, `sub`, `mul` are terms; `reshape`,
  `broadcast_to` and `fill` keep their operand's term (a term describes one element);
  integer casts are `narrow(x)`;
* symbols with known ranges: `iota` of length n is 0..n-1, `program_id(a)` is
  0..grid[a]-1, a loop index is lo..hi-1; anything else (a loaded value, a scalar
  parameter, a carried variable) is an opaque symbol without bounds;
* `lt`, `gt`, `le`, `ge` of integer terms and `and`, `or`, `not` of booleans are masks.

The rule sets of `linnet.rules.RULE_SETS` run under a back-off scheduler with an
iteration cap. Then the IR is rewritten: a comparison or mask binding proved true or
false becomes a literal (`fill` of it for a tile), `x && m` with `m` proved true (or
`x || m` with `m` proved false) becomes `x` (broadcast to the result's shape), and a
`load`, `store` or atomic whose mask is proved true loses its mask (a load its `other`
too). Unused bindings are dropped with `dce`. What fired (rules with match counts,
e-graph size, iterations, the decided masks and the normal forms of the offsets)
goes into `program.meta` under "egraph_report".
"""

from __future__ import annotations

from dataclasses import replace

from ..ir import tensor as ir
from . import egraph_run
from .dce import dce
from .traverse import Rewriter, expr_blocks

if egraph_run.available():
    from egglog import get_callable_args, get_callable_fn, get_literal_value

    from ..rules.terms import FALSE, TRUE, Ix, Mask, both, either, lt, narrow, negate

INTS = ("i32", "i64")
MEMORY = ("load", "store", "atomic_add", "atomic_max", "atomic_min")
STAGE = "egraph-tiles"


def egraph_tiles(program: ir.Program, options=None) -> ir.Program:
    """Prove kernel masks with the rule sets; drop those always true."""
    if not egraph_run.available():  # pragma: no cover
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
    tr = _Translate(f)
    tr.block(f.body)
    with egraph_run.egraph(sets) as (eg, schedule):
        eg.register(*tr.roots())
        rounds, matches = egraph_run.saturate(eg, schedule)
        decided: dict[ir.Var, bool] = {}
        for var, term in tr.masks.items():  # a proved mask's cheapest form is its constant
            best = eg.extract(term)
            if get_callable_fn(best) == Mask.const:
                decided[var] = bool(get_literal_value(get_callable_args(best)[0]))
        offsets = {v: eg.extract(tr.ints[v]) for v in tr.offsets if v in tr.ints}
        report = _report(f, eg, rounds, egraph_run.fired(matches, sets), decided, offsets)
    return _Rewrite(decided).func(f), report


def _show(term) -> str:
    """An extracted term, compactly: `pid0 * 64 + iota64`."""
    fn, args = get_callable_fn(term), get_callable_args(term)
    infix = {Ix.__add__: "+", Ix.__sub__: "-", Ix.__mul__: "*"}
    if fn in (Ix, Ix.sym, Ix.ranged, Mask.sym, Mask.const):
        return str(get_literal_value(args[0])).removeprefix("v:")
    for op, sign in infix.items():
        if fn == op:
            right = _show(args[1])
            if get_callable_fn(args[1]) in (Ix.__add__, Ix.__sub__):
                right = f"({right})"
            return f"{_show(args[0])} {sign} {right}"
    name = {narrow: "cast"}.get(fn, str(fn))
    return f"{name}(" + ", ".join(_show(a) for a in args) + ")"


def _report(f, eg, rounds, fired: list[str], decided, offsets) -> str:
    sizes = {str(fn): n for fn, n in eg.all_function_sizes()}
    nodes = sum(n for k, n in sizes.items() if k not in ("lo", "hi"))
    lines = [f"// {STAGE} {f.name}: {nodes} e-nodes, "
             f"{sizes.get('lo', 0)}/{sizes.get('hi', 0)} lower/upper bounds, "
             f"{rounds} changing iterations (cap {egraph_run.ITERATION_CAP})"]  # no timings
    lines += fired
    for var, value in decided.items():
        lines.append(f"//   proved {var.name} always {'true' if value else 'false'}")
    for var, term in offsets.items():
        lines.append(f"//   offsets {var.name} = {_show(term)}")
    return "\n".join(lines)


# ------------------------------------------------------------ translation

class _Translate:
    """IR bindings of a kernel body -> terms, with the bounds of their symbols."""

    def __init__(self, f: ir.Func) -> None:
        self.grid = f.launch.grid if f.launch is not None else ()
        self.ints: dict[ir.Var, Ix] = {}
        self.masks: dict[ir.Var, Mask] = {}   # mask-valued bindings worth deciding
        self.bools: dict[ir.Var, Mask] = {}   # every boolean binding's term
        self.symbols: dict[tuple, Ix] = {}
        self.offsets: list[ir.Var] = []

    def roots(self):
        yield from self.masks.values()
        for v in self.offsets:
            if v in self.ints:
                yield self.ints[v]

    def block(self, b: ir.Block) -> None:
        for bind in b.binds:
            self.bind(bind.var, bind.expr)

    def symbol(self, name: str, low: int | None = None, high: int | None = None) -> Ix:
        """A symbol: `iota{n}` and `pid{a}`, or `v:NAME` for a variable (so no IR name can
        collide with the others); ranged when its bounds are known. Made once per name."""
        key = (name, low, high)
        if key not in self.symbols:
            known = low is not None and high is not None and low <= high
            self.symbols[key] = Ix.ranged(name, low, high) if known else Ix.sym(name)
        return self.symbols[key]

    def int_of(self, a: ir.Atom) -> Ix | None:
        if isinstance(a, ir.Lit):
            if a.type.dtype in INTS and not isinstance(a.value, bool):
                return Ix(int(a.value))
            return None
        return self.ints.get(a)

    def bool_of(self, a: ir.Atom) -> Mask | None:
        if isinstance(a, ir.Lit):
            return TRUE if a.value is True else FALSE if a.value is False else None
        return self.bools.get(a)

    def bind(self, var: ir.Var, e: ir.Expr) -> None:
        if isinstance(e, ir.Loop):
            self.symbol_for(e.index, e.lo, e.hi - 1)
        for b in expr_blocks(e):
            self.block(b)
        if not isinstance(var.type, ir.TType):
            return
        dtype = var.type.dtype
        if dtype in INTS:
            term = self.int_expr(e) if isinstance(e, (ir.Prim, ir.Var, ir.Lit)) else None
            self.ints[var] = term if term is not None else self.symbol(f"v:{var.name}")
        elif dtype == "bool":
            term = self.bool_expr(e) if isinstance(e, (ir.Prim, ir.Var, ir.Lit)) else None
            if term is None:
                self.bools[var] = Mask.sym(f"v:{var.name}")
            else:
                self.bools[var] = term
                if isinstance(e, ir.Prim):
                    self.masks[var] = term
        if isinstance(e, ir.Prim) and e.op in MEMORY and isinstance(e.args[1], ir.Var):
            self.offsets.append(e.args[1])

    def symbol_for(self, var: ir.Var, low: int, high: int) -> None:
        if isinstance(var.type, ir.TType) and var.type.dtype in INTS:
            self.ints[var] = self.symbol(f"v:{var.name}", low, high)

    def int_expr(self, e: ir.Expr) -> Ix | None:
        if not isinstance(e, ir.Prim):
            return self.int_of(e)
        args = [self.int_of(a) for a in e.args]
        if e.op == "iota":
            n = e.type.shape[0]
            return self.symbol(f"iota{n}", 0, n - 1)
        if e.op == "program_id":
            axis = int(e.attr("axis"))
            if axis < len(self.grid):
                return self.symbol(f"pid{axis}", 0, self.grid[axis] - 1)
            return None
        if None in args:
            return None
        if e.op == "add":
            return args[0] + args[1]
        if e.op == "sub":
            return args[0] - args[1]
        if e.op == "mul":
            return args[0] * args[1]
        if e.op in ("reshape", "broadcast_to", "fill"):
            return args[0]
        if e.op == "cast":
            return narrow(args[0])
        return None

    def bool_expr(self, e: ir.Expr) -> Mask | None:
        if not isinstance(e, ir.Prim):
            return self.bool_of(e)
        if e.op in ("lt", "gt", "le", "ge"):
            x, y = (self.int_of(a) for a in e.args)
            if x is None or y is None:
                return None
            return {"lt": lambda: lt(x, y), "gt": lambda: lt(y, x),
                    "le": lambda: negate(lt(y, x)), "ge": lambda: negate(lt(x, y))}[e.op]()
        args = [self.bool_of(a) for a in e.args]
        if None in args or not args:
            return None
        if e.op == "and":
            return both(args[0], args[1])
        if e.op == "or":
            return either(args[0], args[1])
        if e.op == "not":
            return negate(args[0])
        if e.op in ("reshape", "broadcast_to", "fill"):
            return args[0]
        return None


# --------------------------------------------------------------- rewriting

class _Rewrite(Rewriter):
    """Decided masks become literals; memory prims drop masks proved true."""

    def __init__(self, decided: dict[ir.Var, bool]) -> None:
        super().__init__()
        self.decided = decided

    def prim(self, e: ir.Prim, bind: ir.Bind) -> ir.Expr | None:
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
