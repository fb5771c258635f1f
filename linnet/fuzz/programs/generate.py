"""`generate(seed, config)`: one random program, its cases, and the constructs it used.

Why the checker runs here: programs are well typed by construction, so a diagnostic is a
bug of the generator (or of the checker); `generate` raises `GeneratorError` with the text
rather than hand out a program that does not check.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from ...check.frontend import check_program
from ...syntax import tree as t
from ...syntax.printer import print_module
from ..case import Case
from .body import Body
from .config import GeneratorConfig
from .exprs import E, Exprs
from .forms import untyped
from .index import IndexNotation, reduce_info
from .inputs import draw_all
from .kernels import Kernels
from .models import into_block, rewrite_results, struct_params
from .scope import Gen, Param, Scope, Var
from .types import DType, Dim, Info, Ty, dt, fits, lit_dim, name_dim, settle

__all__ = ["Program", "GeneratorError", "generate"]


@dataclass
class Program:
    """A generated program: its text, one case per entry, and what it is made of."""
    text: str
    cases: list[Case]
    constructs: Counter = field(default_factory=Counter)
    module: t.Module | None = None


class GeneratorError(AssertionError):
    """The generator wrote a program the checker rejects (its text and the diagnostics)."""


@dataclass
class _Entry:
    name: str
    params: list[Param]
    bindings: dict[str, int | str]
    loss: DType | None = None  # a `grad` entry's loss dtype
    present: frozenset[str] | None = None  # a block entry's optional paths held


def generate(seed: int, config: GeneratorConfig = GeneratorConfig(), *,
             check: bool = True) -> Program:
    g = Gen(random.Random(seed), config)
    g.model_rng = random.Random(seed ^ 0x40DE1)  # the model layer's own stream (models.py)
    g.form_rng = random.Random(seed ^ 0xF0235)  # untyped results and `...` (forms.py)
    entries = [_entry(g, "main")]
    if g.has("second_entry") and g.chance(0.25):
        entries.append(_entry(g, g.fresh("other")))
    if not config.grad or config.block_grad:  # a block entry returns its states too
        _into_block(g, entries[0])
    module = t.Module(("fuzz",), (), tuple(g.items))
    text = print_module(module)
    if check:
        _check(text)
    rng = random.Random(seed ^ 0x5EED)
    cases = [Case(text, e.name, dict(e.bindings), draw_all(e.params, rng.randrange(1 << 30)),
                  e.present) for e in entries]
    return Program(text, cases, g.counts, module)


def _check(text: str) -> None:
    result = check_program("fuzz.linnet", text)
    if result.diagnostics:
        lines = [f"{d.code} {d.message} at {text[d.span.start:d.span.end]!r}"
                 for d in result.diagnostics[:5]]
        raise GeneratorError("generated program does not check:\n" + "\n".join(lines)
                             + "\n" + text)


def _dims(g: Gen) -> tuple[list[t.Generic], dict[str, int | str], list[t.Expr]]:
    """The entry's dimension generics (0, 1 and ragged sizes), a few literal extents, and
    `where N >= 1` for some non-empty ones (which makes `x[0]`, `1:N` slices provable)."""
    picks = [0, 1, 3, min(17, g.config.max_dim), g.rng.randint(1, g.config.max_dim)]
    generics, bindings, where = [], {}, []
    g.dims, g.positive = [], set()
    for _ in range(g.rng.randint(1, 3)):
        name = g.fresh("N")
        value = min(g.pick(picks), g.config.max_dim)
        generics.append(t.Generic(name, "Dim"))
        bindings[name] = value
        g.dims.append(name_dim(name, value))
        if value >= 1 and g.has("where") and g.chance(0.4):
            where.append(t.Binary(">=", t.Name(name), t.IntLit(1)))
            g.positive.add(name)
            g.count("where")
    for _ in range(g.rng.randint(0, 2)):
        g.dims.append(lit_dim(g.pick([1, 2, 3, 4, 5])))
    g.float_generic = None
    floats = [d for d in ("f16", "bf16", "f32", "f64") if d in g.config.dtypes]
    if g.has("dtype_generic") and g.chance(0.3):
        name = g.fresh("F")
        value = g.pick(floats)
        generics.append(t.Generic(name, "Float"))
        bindings[name] = value
        g.float_generic = DType(name, value)
        g.count("dtype_generic")
    return generics, bindings, where


def _entry(g: Gen, name: str) -> _Entry:
    generics, bindings, where = _dims(g)
    params: list[Param] = []
    scope = Scope(params=params)
    body = Body(g, scope)
    count = g.rng.randint(2, max(2, g.config.max_statements))
    stmts = body.statements(count)
    if g.config.kernels and not _kernel_results(g, scope):  # at least one kernel that runs
        stmts += Kernels(g, scope).call()
    if not scope.own or not params:
        stmts += body.let()  # something to return, read from at least one input
    if not params:
        Exprs(g, scope).new_param(g.pick(g.float_dtypes()), ())
    result = _loss(g, scope) if g.config.grad else _outputs(g, scope)
    more, result = rewrite_results(g, g.model_rng, generics, scope, result)
    stmts += more
    stmts.append(t.Return(result[0].node if len(result) == 1 else
                          t.TupleExpr(tuple(r.node for r in result))))
    rtys = [r.ty for r in result]
    rty = rtys[0].node() if len(rtys) == 1 else t.TupleType(tuple(r.node() for r in rtys))
    tparams = tuple(t.Param(p.var.name, p.var.ty.node()) for p in params)
    fn = t.Function("entry", name, tuple(generics), tparams, rty, tuple(where), tuple(stmts))
    if not (g.config.block_grad and name == "main"):  # (struct parameters stay out of blocks)
        fn = struct_params(g, g.model_rng, fn)
    g.items.append(untyped(g, fn))
    for p in params:
        g.count(f"dtype:{p.var.ty.dtype.name}")
    return _Entry(name, params, bindings, rtys[0].dtype if g.config.grad else None)


def _into_block(g: Gen, entry: _Entry) -> None:
    """Perhaps make the entry a root block's (models.py): its inputs change order."""
    k, fn = next((k, i) for k, i in enumerate(g.items)
                 if isinstance(i, t.Function) and i.kind == "entry" and i.name == entry.name)
    loss = entry.loss if g.config.block_grad else None
    made = into_block(g, g.model_rng, fn, entry.params, loss)
    if made is None:
        return
    g.items[g.items.index(fn)] = made.root
    entry.params, entry.present = made.params, made.present


def _kernel_results(g: Gen, scope: Scope) -> list[Var]:
    """The entry's values that are results of ops with kernels: returned (or summed into the
    loss), so the kernels are not dead code that compiling removes."""
    return [v for v in scope.own if v.name in g.kernel_results]


def _outputs(g: Gen, scope: Scope) -> list[E]:
    """The last value written, a few others, and every kernel op's result (a tuple when
    several)."""
    own = scope.own
    picks = [own[-1]] + [g.pick(own) for _ in range(g.rng.randrange(0, 3))]
    picks += _kernel_results(g, scope)
    seen, out = set(), []
    for v in picks:
        if v.name not in seen:
            seen.add(v.name)
            out.append(E(t.Name(v.name), v.ty, v.info))
    if len(out) > 1:
        g.count("tuple_result")
    return out


def _loss(g: Gen, scope: Scope) -> list[E]:
    """One floating scalar (`--grad` differentiates it): the sums of some float values,
    cast to one dtype, added."""
    floats = [v for v in scope.own if v.ty.dtype.is_float and v.info.finite]
    if not floats:
        Exprs(g, scope).new_param(g.pick(g.float_dtypes()), tuple(g.dims[:1]))
        floats = [scope.root().own[-1]]
    grads = [v for v in floats if v.name.startswith("r")]
    kernels = [v for v in _kernel_results(g, scope) if v in floats]
    chosen = (grads[-2:] if grads else []) + [g.pick(floats)] + kernels[-2:]
    loss_dtype = g.pick([d for d in g.float_dtypes() if d.name in ("f32", "f64")] or
                        g.float_dtypes())
    total: E | None = None
    ex = Exprs(g, scope)
    for v in {c.name: c for c in chosen}.values():
        term = _sum_all(g, v)
        if term.ty.dtype != loss_dtype:
            term = ex.cast(term, loss_dtype) or term
        if term.ty.dtype != loss_dtype:
            continue
        total = term if total is None else (ex.arith("+", total, term) or total)
    if total is None:
        total = ex.expr(loss_dtype, (), 2)
    g.count("loss")
    return [total]


def _sum_all(g: Gen, v: Var) -> E:
    if not v.ty.dims:
        return E(t.Name(v.name), v.ty, v.info)
    ixs = [g.fresh("i") for _ in v.ty.dims]
    n = 1
    for d in v.ty.dims:
        n *= d.value
    info = reduce_info("sum", v.info, n, v.ty.dtype)
    node = t.Reduce("sum", None, tuple(t.IxVar(i) for i in ixs),
                    t.Index(t.Name(v.name), tuple(t.Name(i) for i in ixs)))
    return E(node, Ty((), v.ty.dtype), info)
