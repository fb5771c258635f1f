"""The model layer in generated programs: structs, enums and `match`, optionals with
defaults and named arguments, and blocks (docs/models.md).

Why as rewrites of a finished entry: every rewrite is an identity on values (a result
passes through a struct field, a `match` arm, an optional's `some` arm; a parameter
becomes a block's param read by its bare name), so the facts the generator proved of
the program (intervals, exactness) still hold, and the inputs are drawn from the same
parameters. The rewrites draw from a random stream of their own, so a seed's base
program is the same with or without them.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

from ...syntax import tree as t
from .block_grads import loss_terms, with_terms
from .exprs import E
from .forms import explicit_none
from .scope import Gen, Param, Scope, Var
from .types import DType, Info, Ty, dt, lit_dim

__all__ = ["MODEL_FEATURES", "rewrite_results", "struct_params", "into_block", "Made"]

MODEL_FEATURES = ("struct", "enum", "optional", "block")
STATE_INFO = Info(-50, 50)


def _generic_names(tys: list[Ty]) -> set[str]:
    names: set[str] = set()
    for ty in tys:
        for d in ty.dims:
            names |= {n.id for n in _names(d.node)}
        if ty.dtype.text != ty.dtype.name:
            names.add(ty.dtype.text)
    return names


def _names(node):
    if isinstance(node, t.Name):
        yield node
    elif isinstance(node, t.Binary):
        yield from _names(node.left)
        yield from _names(node.right)


def _generics_for(entry_generics: list[t.Generic], tys: list[Ty]
                  ) -> tuple[tuple[t.Generic, ...], tuple[t.Expr, ...] | None]:
    """The entry's generics a helper over these types needs, and the call's explicit
    generic arguments (None when there are none)."""
    used = _generic_names(tys)
    gens = tuple(t.Generic(g.name, g.kind) for g in entry_generics if g.name in used)
    return gens, tuple(t.Name(g.name) for g in gens) or None


def _type_of(name: str, generics: tuple[t.Generic, ...]) -> t.TypeExpr:
    if not generics:
        return t.TypeName(name)
    return t.GenericType(name, tuple(t.Name(g.name) for g in generics))


# ------------------------------------------------------------------ values

def rewrite_results(g: Gen, rng: random.Random, generics: list[t.Generic], scope: Scope,
                    results: list[E]) -> tuple[list[t.Stmt], list[E]]:
    """Statements that pass some results through a struct, an enum's `match` or an
    optional, and the results to return instead (of the same values)."""
    kinds = [k for k in ("struct", "enum", "optional") if g.has(k)]
    if not kinds:
        return [], results
    stmts: list[t.Stmt] = []
    out = []
    for r in results:
        if rng.random() < 0.4:
            kind = rng.choice(kinds)
            maker = {"struct": _through_struct, "enum": _through_enum,
                     "optional": _through_optional}[kind]
            more, node = maker(g, rng, generics, scope, r)
            name = g.fresh("mv")
            stmts += more + [t.Let(name, None, node)]
            scope.add(Var(name, r.ty, r.info))
            r = E(t.Name(name), r.ty, r.info)
            g.count(kind)
        out.append(r)
    return stmts, out


def _other(rng: random.Random, scope: Scope, ty: Ty | None = None) -> Var | None:
    """A value in scope (of type ty, when given)."""
    cands = [v for v in scope.vars() if v.info.finite
             and (ty is None or (v.ty.keys() == ty.keys() and v.ty.dtype == ty.dtype))]
    return rng.choice(cands) if cands else None


def _bind(g: Gen, scope: Scope, r: E) -> tuple[list[t.Stmt], t.Expr]:
    """A result as a name (a `let` first when it is an expression)."""
    if isinstance(r.node, t.Name):
        return [], r.node
    name = g.fresh("mv")
    scope.add(Var(name, r.ty, r.info))
    return [t.Let(name, None, r.node)], t.Name(name)


def _through_struct(g, rng, generics, scope, r):
    """`let p = PairK(c = other, a = r)`, then `firstK(p)` (which returns `p.a`)."""
    pre, value = _bind(g, scope, r)
    other = _other(rng, scope) or Var(value.id, r.ty, r.info)
    gens, explicit = _generics_for(generics, [r.ty, other.ty])
    sname, fname, pname = g.fresh("Pair"), g.fresh("first"), g.fresh("mv")
    g.items.append(t.Struct(sname, gens, (t.Param("a", r.ty.node()),
                                          t.Param("c", other.ty.node()))))
    ptype = _type_of(sname, gens)
    g.items.append(t.Function("fn", fname, gens, (t.Param("p", ptype),), r.ty.node(), (),
                              (t.Return(t.Field(t.Name("p"), "a")),)))
    args = [t.Arg(value, "a"), t.Arg(t.Name(other.name), "c")]
    if rng.random() < 0.5:
        args.reverse()
    build = t.Call(sname, explicit if rng.random() < 0.5 else None, tuple(args))
    if explicit is not None and not _inferable(gens, [r.ty, other.ty]):
        build = t.Call(sname, explicit, tuple(args))
    return pre + [t.Let(pname, None, build)], t.Call(fname, explicit,
                                                     (t.Arg(t.Name(pname)),))


def _inferable(gens: tuple[t.Generic, ...], tys: list[Ty]) -> bool:
    """Can a struct's generics be inferred from fields of these types (each generic
    written as a plain dimension or dtype somewhere)?"""
    plain = {d.node.id for ty in tys for d in ty.dims if isinstance(d.node, t.Name)}
    plain |= {ty.dtype.text for ty in tys}
    return all(g.name in plain for g in gens)


def _through_enum(g, rng, generics, scope, r):
    """`chooseK(x, y, ModeK.B)` returning the arm's operand: r in the chosen place."""
    pre, value = _bind(g, scope, r)
    other = _other(rng, scope, r.ty)
    alt = t.Name(other.name) if other is not None else value
    ename = g.fresh("Mode")
    g.items.append(t.Enum(ename, ("A", "B", "C")))
    variant = rng.choice(("A", "B", "C"))
    if rng.random() < 0.3:  # a constant scrutinee: the arm is chosen at compile time
        arms = tuple(t.Arm(t.VariantPat(ename, v), value if v == variant else alt)
                     for v in ("A", "B", "C"))
        return pre, t.Match(t.Field(t.Name(ename), variant), arms)
    gens, explicit = _generics_for(generics, [r.ty])
    fname = g.fresh("choose")
    arms = (t.Arm(t.VariantPat(ename, "A"), t.Name("x")),
            t.Arm(t.VariantPat(ename, "B"), t.Name("y")),
            t.Arm(t.VariantPat(ename, "C"), t.Name("x")))
    params = (t.Param("x", r.ty.node()), t.Param("y", r.ty.node()),
              t.Param("how", t.TypeName(ename)))
    g.items.append(t.Function("fn", fname, gens, params, r.ty.node(), (),
                              (t.Return(t.Match(t.Name("how"), arms)),)))
    x, y = (alt, value) if variant == "B" else (value, alt)
    how: t.Expr = t.Field(t.Name(ename), variant)
    if rng.random() < 0.3:
        cname = g.fresh("CHOSEN")
        g.items.append(t.Const(cname, t.TypeName(ename), how))
        how = t.Name(cname)
    return pre, t.Call(fname, explicit, (t.Arg(x), t.Arg(y), t.Arg(how)))


def _through_optional(g, rng, generics, scope, r):
    """`orK(x, alt = some(r))`, `orK(r)` (the default `none`), or an optional whose
    presence a run-time bool decides, holding r either way."""
    pre, value = _bind(g, scope, r)
    other = _other(rng, scope, r.ty)
    gens, explicit = _generics_for(generics, [r.ty])
    fname = g.fresh("either")
    arms = (t.Arm(t.SomePat(("v",)), t.Name("v")), t.Arm(t.NonePat(), t.Name("x")))
    params = (t.Param("x", r.ty.node()),
              t.Param("alt", t.OptionalType(r.ty.node()), t.NoneLit()))
    g.items.append(t.Function("fn", fname, gens, params, r.ty.node(), (),
                              (t.Return(t.Match(t.Name("alt"), arms)),)))
    flags = [v for v in scope.vars() if v.ty.dtype.is_bool and not v.ty.dims]
    choice = rng.randrange(3)
    if choice == 0:  # `alt` left to its default, or given `none`
        return pre, t.Call(fname, explicit, (t.Arg(value),) + explicit_none(g, "alt"))
    if choice == 1 or not flags:
        x = t.Name(other.name) if other is not None else value
        arg = t.Arg(t.Some(value), "alt" if rng.random() < 0.5 else None)
        return pre, t.Call(fname, explicit, (t.Arg(x), arg))
    oname = g.fresh("mv")
    flag = t.Name(rng.choice(flags).name)
    maybe = t.If(flag, t.Block((), t.Some(value)), t.Block((), t.NoneLit()))
    g.count("optional:runtime")
    return pre + [t.Let(oname, t.OptionalType(r.ty.node()), maybe)], t.Call(
        fname, explicit, (t.Arg(value), t.Arg(t.Name(oname), "alt")))


# ------------------------------------------------------------------ struct parameters

def struct_params(g: Gen, rng: random.Random, fn: t.Function) -> t.Function:
    """Two neighbouring parameters become one struct parameter (its fields, in order, are
    the same inputs); the body reads them back by name."""
    if not g.has("struct") or len(fn.params) < 2 or rng.random() < 0.6:
        return fn
    k = rng.randrange(len(fn.params) - 1)
    a, b = fn.params[k], fn.params[k + 1]
    used = {n.id for p in (a, b) for n in _walk_names(p.type)}
    gens = tuple(t.Generic(gn.name, gn.kind) for gn in fn.generics if gn.name in used)
    sname, pname = g.fresh("In"), g.fresh("inp")
    g.items.append(t.Struct(sname, gens, (t.Param(a.name, a.type), t.Param(b.name, b.type))))
    param = t.Param(pname, _type_of(sname, gens))
    reads = tuple(t.Let(p.name, None, t.Field(t.Name(pname), p.name)) for p in (a, b))
    g.count("struct:param")
    return _replace(fn, params=fn.params[:k] + (param,) + fn.params[k + 2:],
                    body=reads + fn.body)


def _walk_names(node):
    if isinstance(node, (t.Name, t.TypeName)):
        yield t.Name(getattr(node, "id", None) or node.name)
    for f in getattr(node, "__dataclass_fields__", {}):
        if f == "span":
            continue
        v = getattr(node, f)
        for c in v if isinstance(v, tuple) else (v,):
            if hasattr(c, "__dataclass_fields__"):
                yield from _walk_names(c)


def _replace(fn: t.Function, **changes) -> t.Function:
    return dataclasses.replace(fn, **changes)


# ------------------------------------------------------------------ blocks

def into_block(g: Gen, rng: random.Random, fn: t.Function, params: list[Param],
               loss: DType | None = None) -> Made | None:
    """The entry as the entry of a root block: some parameters become the block's params
    and buffers, one is held by a sub `first` (and read through its `pub fn`), a sub array
    of the same block is called in a `static for`; each sub counts its reads in a state
    and the root its steps. The values are the same; the inputs are the entry's remaining
    parameters, then the block's in manifest order. With `loss` (the dtype of a `grad`
    entry's loss) the entry always becomes a block's, and each cell adds a term with an
    optional param to the loss (block_grads.py)."""
    if not g.has("block") or not params or (rng.random() < 0.5 and loss is None):
        return None
    by_name = {p.var.name: p for p in params}
    if any(p.name not in by_name for p in fn.params):  # a struct parameter: left alone
        return None
    held = rng.choice(params)
    moved = [p for p in params if p is not held and rng.random() < 0.5]
    own = [p for p in params if p is not held and p not in moved]
    count = rng.choice((0, 1, 2, 3))
    counter = _counter_dtype(g)
    cell = _cell(g, held, fn.generics, counter)
    cell_name, cell_gens = cell.name, tuple(t.Name(x.name) for x in cell.generics) or None
    members: list = [t.TensorMember(rng.choice(("param", "buffer")), p.var.name,
                                    p.var.ty.node()) for p in moved]
    members += [t.Sub("first", t.SubType(cell_name, cell_gens)),
                t.Sub("cells", t.SubType(cell_name, cell_gens, t.IntLit(count))),
                t.TensorMember("state", "steps", t.TensorType((t.IntLit(1),),
                                                              t.TypeName(counter)))]
    terms = loss_terms(g, rng, cell, loss, count) if loss is not None else None
    if terms is not None:
        cell = terms.cell
    name = held.var.name
    prefix = (
        t.Assign("steps", t.Binary("+", t.Name("steps"), t.IntLit(1))),
        t.VarDecl(name, None, t.MemberCall(t.Name("first"), "get", None, ())),
        t.ForEach("cell", t.Name("cells"), (t.Assign(name, t.MemberCall(
            t.Name("cell"), "get", None, (t.Arg(t.Some(t.Name(name)), "pick"),))),)),
    )
    body = prefix + (fn.body if terms is None else with_terms(fn.body, terms, loss))
    entry = t.Function("entry", fn.name, (), tuple(t.Param(p.var.name, p.var.ty.node())
                                                   for p in own),
                       fn.result, (), body, public=True)
    root = t.BlockDef(g.fresh("Root"), fn.generics, fn.where, tuple(members) + (entry,))
    g.items.insert(0, cell)
    info = STATE_INFO if counter.startswith("i") or counter.startswith("f") else Info(0, 50)
    state = Param(Var("reads", Ty((_one(),), dt(counter)), info), "ints")
    steps = Param(Var("steps", Ty((_one(),), dt(counter)), info), "ints")
    cells = [[held, state] for _ in range(1 + count)]
    present = None
    if terms is not None:
        for k, there in enumerate(terms.present):
            if there:
                cells[k].insert(1, terms.bias)
        paths = ["first"] + [f"cells.{k}" for k in range(count)]
        present = frozenset(f"{p}.bias" for p, there in zip(paths, terms.present) if there)
    order = own + moved + [p for c in cells for p in c] + [steps]
    g.count("block", "block:sub_array" if count else "block:empty_array")
    return Made(root, order, present or None)


@dataclass
class Made:
    """A root block made of an entry: the block, the inputs of its entry (its own, then the
    block's in manifest order), and the optional paths its case's checkpoint holds."""
    root: t.BlockDef
    params: list[Param]
    present: frozenset[str] | None = None


def _counter_dtype(g: Gen) -> str:
    """The dtype of the states that count calls: i64 when the config has it, else another
    of its integers (small counts fit), else one of its floats."""
    ints = [d.name for d in g.int_dtypes()]
    if "i64" in ints:
        return "i64"
    return ints[-1] if ints else g.float_dtypes()[0].name


def _one():
    return lit_dim(1)


def _cell(g: Gen, held: Param, generics: tuple[t.Generic, ...], counter: str
          ) -> t.BlockDef:
    """`block CellK<G> { param v: T  state reads: Tensor[1; i64]  pub fn get(pick: T? =
    none) -> T }`: `get` counts its calls and returns `pick`'s value, else `v`."""
    used = _generic_names([held.var.ty])
    gens = tuple(t.Generic(x.name, x.kind) for x in generics if x.name in used)
    ty = held.var.ty.node()
    arms = (t.Arm(t.SomePat(("w",)), t.Name("w")), t.Arm(t.NonePat(), t.Name("v")))
    get = t.Function("fn", "get", (), (t.Param("pick", t.OptionalType(ty), t.NoneLit()),),
                     ty, (), (t.Assign("reads", t.Binary("+", t.Name("reads"), t.IntLit(1))),
                              t.Return(t.Match(t.Name("pick"), arms))), public=True)
    return t.BlockDef(g.fresh("Cell"), gens, (), (
        t.TensorMember("param", "v", ty),
        t.TensorMember("state", "reads", t.TensorType((t.IntLit(1),), t.TypeName(counter))),
        get))
