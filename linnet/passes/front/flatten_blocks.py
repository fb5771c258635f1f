"""Elaborating a block entry: the root block's instance tree flattened into plain items.

Blocks are a compile-time structure. Once the root block's generics have values, every
instance is known (`block_instances.py`), and a block entry becomes an ordinary module
whose entry the rest of the pipeline compiles like any other, for every target:

* each function of each instance reached from the entry becomes a module-level `fn`,
  its block generics replaced by the instance's values, taking its own parameters and
  then every present param, buffer and state of the instance's tree, in manifest order
  (a sub's members named by their relative path, `mlp__up`); the elements of a sub
  array that flatten alike share it (`layers__forward`, `block_sharing.py`), each call
  passing its element's members (`up = layers__0__up`);
* a state is a `var` of the function (declared from its input, `calls__in`), and every
  function of an instance whose tree holds states returns `(result, next states...)`;
  a member call (`layer.forward(x)`) or a call of a sibling function is hoisted before
  its statement as `let (r, s...) = f(...)` followed by the state assignments, inside
  the branch or loop body that holds it, or to the front of the `match` arm that holds
  it (the arm's value becomes a `Block`, as an `if` branch is);
* `static for layer in layers` is unrolled, `layer` naming each element in turn;
* a sub's member read in the parent (`cache.keys`) is the name the parent's function
  holds it by: a state's `var` (up to date after every member call), else its input;
* the entry takes its own inputs, then every parameter, and returns its results, then
  the next value of each state that it (or anything it calls) assigns.

The flattened module is checked again as a whole (a mistake there is one the block
checker could not see before the values were known), and `Bound.parameters` carries the
manifest to the compiled program.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cache

from ...check.types import TupleT
from ...diagnostics import CompileError, Diagnostic, NO_SPAN
from ...syntax import tree as t
from .block_instances import Inst, MemberAt, input_name, mangle, members
from .block_sharing import instance_classes, shared_path

_Key = tuple[tuple[str, ...], int, str]
"""A generated function's key: the instance's path without array positions, the number
of the instances that flatten alike (`block_sharing.py`), the member function's name."""


def flatten(modules: dict[tuple, t.Module], root: Inst, entry: t.Function,
            links: dict[tuple, tuple] | None = None
            ) -> tuple[dict[tuple, t.Module], tuple[str, ...]]:
    """The program's modules (the root first) with their blocks replaced by the flattened
    functions of `entry` of the root instance; and the paths of the states the entry
    returns. Each function goes to the module that declares its block, so that the names
    its body uses mean what they meant there (`pub`, where another module calls it).
    `links` maps each `use` path to the module it loaded (Program.links): a `use` that
    lists names (`::{Leaf}`) lists the functions made in that module too."""
    flat = _Flattener(modules, root)
    new_entry = flat.entry(entry)
    root_key = next(iter(modules))
    out = {}
    for key, module in modules.items():
        plain = [i for i in module.items if not isinstance(i, t.BlockDef)
                 and not (key == root_key and isinstance(i, t.Function) and i.kind == "entry")]
        if key == root_key and entry.name in {i.name for i in plain}:
            raise CompileError([Diagnostic(
                "E1204", f"the block entry `{entry.name}` has the name of an item of the "
                "module", entry.span, "taken", help="rename the entry or the item")])
        made = [dataclasses.replace(f, public=key != root_key)
                for f, home in flat.done.values() if home == key]
        items = tuple(plain) + tuple(made) + ((new_entry,) if key == root_key else ())
        out[key] = dataclasses.replace(module, items=items)
    return _relisted(modules, out, links or {}), flat.assigned_paths


def _relisted(before: dict[tuple, t.Module], after: dict[tuple, t.Module],
              links: dict[tuple, tuple]) -> dict[tuple, t.Module]:
    """The flattened modules with each `use` that lists names (`::{Leaf}`) listing what
    the module it loads offers now: its blocks are gone, and the functions made from
    them, which flattened callers call by their made names, are there instead."""
    out = {}
    for key, module in after.items():
        uses = []
        for use in module.uses:
            loaded = links.get(use.path, use.path)
            if use.names is not None and loaded in after:
                old = {i.name for i in before[loaded].items}
                new = {i.name for i in after[loaded].items if i.public}
                use = _listing(use, new, new - old)
            uses.append(use)
        out[key] = dataclasses.replace(module, uses=tuple(uses))
    return out


def _listing(use: t.Use, kept_names: set[str], made_names: set[str]) -> t.Use:
    """The use's listed names that are still offered, then the names flattening made."""
    kept = [(n, s) for n, s in zip(use.names, use.name_spans) if n in kept_names]
    made = sorted(made_names)
    return dataclasses.replace(use, names=tuple(n for n, _ in kept) + tuple(made),
                               name_spans=tuple(s for _, s in kept) + (use.span,) * len(made))


@dataclass
class _Fn:
    """One generated function: the first instance that asked for it and its member
    function, and what it assigns. Instances that flatten alike share it
    (`block_sharing.py`), so paths here are relative to the instance."""
    inst: Inst
    fn: t.Function
    name: str
    states: set[tuple[str, ...]] = field(default_factory=set)  # own, relative paths
    callees: list[tuple[tuple[str, ...], _Key]] = field(default_factory=list)  # (rel, key)


class _Flattener:
    def __init__(self, modules: dict[tuple, t.Module], root: Inst) -> None:
        self.root = root
        self.taken = {i.name for m in modules.values() for i in m.items}
        self.home = {id(i): key for key, m in modules.items() for i in m.items
                     if isinstance(i, t.BlockDef)}
        self.classes = instance_classes(root)
        self.names: dict[_Key, _Fn] = {}
        self.queue: list[_Fn] = []
        self.done: dict[str, tuple[t.Function, tuple]] = {}  # name -> (fn, its module)
        self.assigned_paths: tuple[str, ...] = ()
        self.trees: dict[int, list[MemberAt]] = {}

    def tree(self, inst: Inst) -> list[MemberAt]:
        """`members(inst)` (paths relative to inst), walked once per kind of instance that
        flattens alike: each call of an element's function passes its members."""
        kind = self.classes[id(inst)]
        if kind not in self.trees:
            self.trees[kind] = members(inst)
        return self.trees[kind]

    # ----------------------------------------------------------------- the work list

    def key(self, inst: Inst, name: str) -> _Key:
        """What a generated function is known by: instances at the same place of their
        sub arrays that flatten alike share one function."""
        return shared_path(inst.path), self.classes[id(inst)], name

    def request(self, inst: Inst, name: str) -> str:
        key = self.key(inst, name)
        if key not in self.names:
            base = (mangle(key[0]) or inst.info.name) + "__" + name
            fresh, n = base, 0
            while fresh in self.taken:
                n += 1
                fresh = f"{base}_{n}"
            self.taken.add(fresh)
            self.names[key] = _Fn(inst, inst.info.fns[name], fresh)
            self.queue.append(self.names[key])
        return self.names[key].name

    def entry(self, entry: t.Function) -> t.Function:
        """The flattened entry (every function it reaches is generated on the way)."""
        top = _Fn(self.root, entry, entry.name)
        body = _Rewriter(self, top).function_body()
        while self.queue:
            job = self.queue.pop(0)
            self.done[job.name] = (self.function(job), self.home[id(job.inst.info.item)])
        assigned = self.assigned(top)
        states = [m for m in self.tree(self.root) if m.kind == "state" and m.present
                  and m.rel in assigned]
        self.assigned_paths = tuple(".".join(m.rel) for m in states)
        body = _returning(body, _arity(entry, self.root), [mangle(m.rel) for m in states])
        result = entry.result
        if states and result is not None:
            own = result.items if isinstance(result, t.TupleType) else (result,)
            result = t.TupleType(tuple(_subst(x, self.root) for x in own)
                                 + tuple(_type(m) for m in states), span=result.span)
        else:
            result = _subst(result, self.root)
        return self._header(top, result, body)

    def function(self, job: _Fn) -> t.Function:
        body = _Rewriter(self, job).function_body()
        states = [m for m in self.tree(job.inst) if m.kind == "state" and m.present]
        result = _subst(job.fn.result, job.inst)  # None: inferred, states and all
        if states:
            names = [t.Name(mangle(m.rel)) for m in states]
            body = tuple(t.Return(t.TupleExpr((s.value, *names)), span=s.span)
                         if isinstance(s, t.Return) else s for s in body)
            result = t.TupleType((result, *[_type(m) for m in states])) \
                if result is not None else None
        return dataclasses.replace(self._header(job, result, body), kind="fn", public=False)

    def _header(self, job: _Fn, result: t.TypeExpr, body: tuple) -> t.Function:
        fn, inst = job.fn, job.inst
        own = [dataclasses.replace(p, type=_subst(p.type, inst)) for p in fn.params]
        extra = [t.Param(input_name(m), _type(m)) for m in self.tree(inst) if m.present]
        return dataclasses.replace(
            fn, name=job.name, generics=_subst(fn.generics, inst), params=tuple(own + extra),
            result=result, where=_subst(fn.where, inst), body=body)

    def assigned(self, top: _Fn) -> set[tuple[str, ...]]:
        """The paths (relative to the top function's instance) of the states the function
        or its callees assign: a shared callee's, under each instance that calls it."""
        seen: set[tuple[tuple[str, ...], int]] = set()
        out: set[tuple[str, ...]] = set()
        todo: list[tuple[tuple[str, ...], _Fn]] = [((), top)]
        while todo:
            at, job = todo.pop()
            if (at, id(job)) in seen:
                continue
            seen.add((at, id(job)))
            out |= {at + s for s in job.states}
            todo += [(at + rel, self.names[key]) for rel, key in job.callees]
        return out


class _Rewriter:
    """One function's body, flattened: member and sibling calls hoisted, `static for`
    over sub arrays unrolled, block generics replaced by values."""

    def __init__(self, flat: _Flattener, job: _Fn) -> None:
        self.flat, self.job, self.inst = flat, job, job.inst
        self.subs: dict[str, object] = dict(job.inst.children)
        self.fresh = 0

    def function_body(self) -> tuple:
        inst = self.inst
        own = self.flat.tree(inst)
        states = [m for m in own if m.kind == "state" and m.present]
        head = [t.VarDecl(mangle(m.rel), None, t.Name(input_name(m))) for m in states]
        head += [_optional_member(m) for m in own if len(m.rel) == 1 and m.info.optional]
        return tuple(head) + self.stmts(_subst(self.job.fn.body, inst))

    # ---------------------------------------------------------------- statements

    def stmts(self, body: tuple) -> tuple:
        out: list = []
        for s in body:
            out += self.stmt(s)
        return tuple(out)

    def stmt(self, s) -> list:
        if isinstance(s, t.ForEach):
            return self.unroll(s)
        if isinstance(s, t.Assign):
            self._note_assign(s.name)
        pre: list = []
        if isinstance(s, (t.For, t.While)):
            changes = {"body": self.stmts(s.body)}
            if isinstance(s, t.For):
                changes.update(lo=self.expr(s.lo, pre), hi=self.expr(s.hi, pre))
            else:
                changes["cond"] = self.expr(s.cond, pre)
                if pre:
                    raise _unsupported("a member call in a `while` condition", s.cond.span)
            return pre + [dataclasses.replace(s, **changes)]
        return pre + [_map(s, lambda e: self.expr(e, pre))]

    def _note_assign(self, name: str) -> None:
        m = self.inst.info.tensors.get(name)
        if m is not None and m.kind == "state":
            self.job.states.add((name,))

    def unroll(self, s: t.ForEach) -> list:
        elements = self.subs.get(s.iterable.id)
        saved = dict(self.subs)
        out: list = []
        try:
            for element in elements:  # type: ignore[union-attr]
                self.subs[s.var] = element
                out += self.stmts(s.body)
        finally:
            self.subs = saved
        return out

    # --------------------------------------------------------------- expressions

    def expr(self, e, pre: list):
        if isinstance(e, t.MemberCall):
            child = self.subs[e.base.id]
            args = tuple(_map(a, lambda x: self.expr(x, pre)) for a in e.args)
            return self.call(child, e.name, e.generics, args, e.span, pre)
        if isinstance(e, t.Call) and e.callee in self.inst.info.fns:
            args = tuple(_map(a, lambda x: self.expr(x, pre)) for a in e.args)
            return self.call(self.inst, e.callee, e.generics, args, e.span, pre)
        if isinstance(e, t.Field) and isinstance(e.base, t.Name) \
                and isinstance(self.subs.get(e.base.id), Inst):
            return self.sub_member(self.subs[e.base.id], e, pre)
        if isinstance(e, t.If):
            return dataclasses.replace(e, cond=self.expr(e.cond, pre), then=self.branch(e.then),
                                       orelse=self.branch(e.orelse))
        if isinstance(e, t.ForExpr):
            return dataclasses.replace(e, lo=self.expr(e.lo, pre), hi=self.expr(e.hi, pre),
                                       body=self.stmts(e.body))
        if isinstance(e, t.Match):
            chosen = self.optional_sub(e)
            if chosen is not None:
                saved = dict(self.subs)
                try:
                    return self.expr(self.choose(e, chosen), pre)
                finally:
                    self.subs = saved
            return dataclasses.replace(e, scrutinee=self.expr(e.scrutinee, pre),
                                       arms=tuple(self.arm(a) for a in e.arms))
        return _map(e, lambda x: self.expr(x, pre))

    def sub_member(self, child: Inst, e: t.Field, pre: list):
        """`cache.keys`: the sub's member as this function holds it (a state its `var`,
        which a member call that assigns it updates; anything else its input); an
        optional one is a `let` of `some` of it or `none` before the statement (the checker
        saw that no local takes a sub's name)."""
        rel = child.path[len(self.inst.path):] + (e.name,)
        m = next(m for m in members(child, rel[:-1]) if m.rel == rel)
        if not m.info.optional:
            return t.Name(_held_as(m), span=e.span)
        self.fresh += 1
        name = f"__m{self.fresh}"
        pre.append(dataclasses.replace(_optional_member(m), name=name))
        return t.Name(name, span=e.span)

    def optional_sub(self, e: t.Match) -> Inst | None:
        """The instance of the optional sub a `match` reads (`match head { ... }`), if it
        does (the checker saw to it that no local takes a sub's name)."""
        s = e.scrutinee
        sub = self.inst.info.subs.get(s.id) if isinstance(s, t.Name) else None
        child = self.subs.get(s.id) if sub is not None and sub.optional else None
        return child if isinstance(child, Inst) else None

    def choose(self, e: t.Match, child: Inst):
        """The arm the sub's presence in this instance chooses, exactly as a constant
        scrutinee chooses one: in the `some(h)` arm, `h` names the sub."""
        arm = next(a for a in e.arms
                   if isinstance(a.pattern, t.SomePat if child.present else t.NonePat))
        if isinstance(arm.pattern, t.SomePat):
            self.subs[arm.pattern.names[0]] = child
        return arm.value

    def arm(self, a: t.Arm) -> t.Arm:
        """An arm that the values' elaboration chooses (at run time, or at compile time
        from a constant or an optional param's presence): a call that carries states,
        hoisted out of its value, stays in the arm, whose value becomes the block
        `{ let (r, s) = f(...)  state = s  r }`, so that it runs, and its states change,
        only when the arm is taken; an arm chosen at compile time is then straight-line
        code, with no branch at all."""
        pre: list = []
        value = self.expr(a.value, pre)
        if pre:
            value = t.Block(tuple(pre), value, span=a.value.span)
        return dataclasses.replace(a, value=value)

    def branch(self, b: t.Block) -> t.Block:
        pre: list = []
        stmts = self.stmts(b.stmts)
        value = self.expr(b.value, pre)
        return dataclasses.replace(b, stmts=stmts + tuple(pre), value=value)

    def call(self, target: Inst, name: str, generics, args: tuple, span, pre: list):
        """A call of `name` of the instance `target` (this one, or one of its subs):
        the flattened function with the target tree's members as extra arguments; with
        states, hoisted before the statement."""
        callee = self.flat.request(target, name)
        rel = target.path[len(self.inst.path):]
        self.job.callees.append((rel, self.flat.key(target, name)))
        tree = [m for m in self.flat.tree(target) if m.present]
        # by name: the call may have named arguments of its own, and positional ones may
        # not follow them
        extra = tuple(t.Arg(t.Name(_held_as(m, rel)), input_name(m)) for m in tree)
        call = t.Call(callee, generics, args + extra, span=span, callee_span=span)
        states = [m for m in tree if m.kind == "state"]
        if not states:
            return call
        self.fresh += 1
        r = f"__r{self.fresh}"
        temps = [f"__s{self.fresh}_{k}" for k in range(len(states))]
        pre.append(t.LetTuple((r, *temps), call, span=span))
        pre += [t.Assign(mangle(rel + m.rel), t.Name(s), span=span)
                for m, s in zip(states, temps)]
        return t.Name(r, span=span)


def _optional_member(m: MemberAt) -> t.Let:
    """An optional member as the function's optional value: `some` of its input when the
    checkpoint holds it, else `none`; the values' elaboration then chooses each `match`
    on it, and each callee taking it, at compile time."""
    value = t.Some(t.Name(input_name(m))) if m.present else t.NoneLit()
    return t.Let(mangle(m.rel), t.OptionalType(_type(m)), value)


def _held_as(m: MemberAt, rel: tuple[str, ...] = ()) -> str:
    """The name the calling function holds the member m by (m's path relative to the
    instance at `rel` from the caller): a state its `var`, anything else the input it
    took."""
    return mangle(rel + m.rel) if m.kind == "state" else input_name(m, rel)


def _arity(entry: t.Function, root: Inst) -> int | None:
    """How many items the entry's tuple result has (None: not a tuple), written or, for
    an entry without `-> T`, inferred by the checker."""
    if entry.result is not None:
        return len(entry.result.items) if isinstance(entry.result, t.TupleType) else None
    sig = root.info.sigs.get(entry.name)
    result = sig.result if sig is not None else None
    return len(result.items) if isinstance(result, TupleT) else None


def _returning(body: tuple, arity: int | None, states: list[str]) -> tuple:
    """The entry's body, each of its `return`s also giving the next states (a tuple
    result of `arity` items spread before them)."""
    if not states:
        return body
    out: list = []
    for s in body:
        if not isinstance(s, t.Return):
            out.append(s)
            continue
        values = [s.value]
        if arity is not None:
            names = tuple(f"__e{len(out)}_{k}" for k in range(arity))
            out.append(t.LetTuple(names, s.value, span=s.span))
            values = [t.Name(n) for n in names]
        out.append(t.Return(t.TupleExpr((*values, *[t.Name(n) for n in states])),
                            span=s.span))
    return tuple(out)


def _type(m: MemberAt) -> t.TypeExpr:
    """A member's concrete type, written."""
    if not m.shape:
        return t.TypeName(m.dtype)
    return t.TensorType(tuple(t.IntLit(d) for d in m.shape), t.TypeName(m.dtype))


def _unsupported(what: str, span) -> CompileError:
    return CompileError([Diagnostic("E2190", f"not implemented yet: {what}", span or NO_SPAN,
                                    "not supported")])


# ------------------------------------------------------------------ tree mapping

def _is_node(x) -> bool:
    return _is_node_class(type(x))


@cache
def _is_node_class(cls: type) -> bool:
    """Is cls a syntax tree node class? Once per class: `_map` asks of every field of
    every node of a flattened body."""
    return dataclasses.is_dataclass(cls) and cls.__module__ == t.__name__


def _map(node, f):
    """The node with f applied to each child node (in tuples too), rebuilt if changed."""
    if isinstance(node, tuple):
        return tuple(f(x) if _is_node(x) else x for x in node)
    changes = {}
    for name in _field_names(type(node)):
        value = getattr(node, name)
        if _is_node(value):
            new = f(value)
        elif isinstance(value, tuple) and any(_is_node(x) for x in value):
            new = tuple(f(x) if _is_node(x) else x for x in value)
        else:
            continue
        if new is not value:
            changes[name] = new
    return dataclasses.replace(node, **changes) if changes else node


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    """A node class's field names, once per class (`fields()` per node was a tenth of the
    flattening of a long sub array)."""
    return tuple(f.name for f in dataclasses.fields(cls))


def _subst(node, inst: Inst):
    """The node with the block's generics replaced by the instance's values."""
    if node is None:
        return None
    dims, dtypes = inst.dims, inst.dtypes

    def go(x):
        if isinstance(x, t.Name) and x.id in dims:
            return t.IntLit(dims[x.id], span=x.span)
        if isinstance(x, t.Name) and x.id in dtypes:
            return t.Name(dtypes[x.id], span=x.span)
        if isinstance(x, t.TypeName) and x.name in dtypes:
            return t.TypeName(dtypes[x.name], span=x.span)
        return _map(x, go)

    return _map(node, go) if isinstance(node, tuple) else go(node)

