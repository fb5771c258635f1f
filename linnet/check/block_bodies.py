"""The bodies of a block's functions: members as names, member calls, state assignment.

`BlockBodyChecker` is the body checker with the block's members in scope: params and
buffers as immutable names, states as the one kind of member a body may assign (same
type: E2109; any other member: E2108), subs only as the base of a member call or of a
member read (`cache.keys`: a sub's param, buffer or state, which only the sub's own
functions assign), sub arrays only as what `static for layer in layers` unrolls over. A
member call checks against the child function's signature with the child's generics
replaced by the sub's arguments, so shapes flow from parent to child as they do through
a generic call."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .block_info import BlockInfo
from .body import BodyChecker
from .dims import Facts
from .pack_products import size_symbols
from .scope import Frame, Globals, Local
from .signatures import Binding, Signature, substitute
from .types import ERR, Val, materialize
from .value_types import OptionalT
from .values import both_optional_arms


@dataclass(frozen=True)
class SubRef:
    """A sub, or one element of a sub array, as a body sees it."""
    name: str
    block: BlockInfo | None  # None after an error reported at the sub
    binding: Binding | None
    array: bool
    optional: bool


def header_checker(info: BlockInfo, fn_generics: tuple[t.Generic, ...], globals_: Globals,
                   bag: DiagnosticBag, signatures: dict[str, Signature],
                   with_where: bool = True) -> "BlockBodyChecker":
    """A checker in the block's frame: its generics (and a function's), its `where`."""
    generics = {**info.generics, **{g.name: g for g in fn_generics}}
    if with_where:
        facts = info.facts(fn_generics)
    else:
        facts = Facts(size_symbols(generics.values()))
    return BlockBodyChecker(Frame(globals_, generics, facts), bag, signatures, info)


def check_block_bodies(info: BlockInfo, globals_: Globals, bag: DiagnosticBag,
                       signatures: dict[str, Signature], infer) -> dict[str, list]:
    """Check each function of the block; returns the calls each makes, by `Block.fn`. A
    function without `-> T` returns what its body returns, inferred where it is called
    before its own turn (as a module-level `fn`'s)."""
    calls: dict[str, list] = {}
    infer_fn = _block_inference(globals_, signatures, infer)
    for fn in info.fns.values():
        for g in fn.generics:
            if g.name in info.generics:
                bag.error("E1205", f"generic `{g.name}` of `{fn.name}` hides the block's",
                          g.span, "declared twice",
                          help="a block's functions see its generics; choose another name")
        for p in fn.params:
            if p.name in info.tensors or p.name in info.subs:
                bag.error("E1205", f"parameter `{p.name}` of `{fn.name}` has the name of a "
                          f"member of `{info.name}`", p.span, "declared twice",
                          help="a block's functions see its members by name; choose another "
                               "name")
        checker = _checked_fn(info, fn, globals_, bag, signatures, infer, infer_fn)
        sig = info.sigs[fn.name]
        if sig.result is None and checker.returned is not None \
                and not checker.returned.is_error:
            sig.result = materialize(checker.returned)
        calls[f"{info.name}.{fn.name}"] = checker.calls
    return calls


def _checked_fn(info: BlockInfo, fn: t.Function, globals_: Globals, bag: DiagnosticBag,
                signatures: dict[str, Signature], infer, infer_fn) -> "BlockBodyChecker":
    """One function of the block checked: its checker, holding its calls and what it
    returns."""
    sig = info.sigs[fn.name]
    checker = header_checker(info, fn.generics, globals_, bag, signatures)
    checker.infer_result, checker.infer_block = infer, infer_fn
    checker.frame.facts = checker.frame.facts.assume_all((l, op, r) for l, op, r, _ in sig.where)
    checker.bind_members()
    for p, ty in zip(fn.params, sig.params):
        checker.frame.bind(p.name, Val(ty) if ty is not None else ERR, span=p.span)
    checker.expected_result = sig.result
    checker.stmts(fn.body)
    if not fn.body or not isinstance(fn.body[-1], t.Return):
        checker.error("E2120", f"`{fn.name}` does not end with `return`", fn.span,
                      "no final return", help="end the body with `return value`")
    return checker


def _block_inference(globals_: Globals, signatures: dict[str, Signature], infer):
    """`infer_fn(info, name)`: the result of a block's function without `-> T`, from its
    body checked into a scratch bag (its own turn reports its mistakes)."""
    busy: set[tuple[int, str]] = set()

    def infer_fn(info: BlockInfo, name: str) -> None:
        sig, fn = info.sigs.get(name), info.fns.get(name)
        key = (id(info), name)
        if sig is None or sig.result is not None or fn.result is not None or key in busy:
            return
        busy.add(key)
        try:
            checker = _checked_fn(info, fn, globals_, DiagnosticBag(), signatures, infer,
                                  infer_fn)
        finally:
            busy.discard(key)
        if checker.returned is not None and not checker.returned.is_error:
            sig.result = materialize(checker.returned)

    return infer_fn


class BlockBodyChecker(BodyChecker):
    """The body checker, inside a block."""

    def __init__(self, frame: Frame, bag: DiagnosticBag, signatures: dict[str, Signature],
                 info: BlockInfo) -> None:
        super().__init__(frame, bag, signatures)
        self.info = info
        self.infer_block = None  # infers a block function's missing `-> T` (on a call)
        self.members: dict[str, Local] = {}
        self.subrefs: dict[str, SubRef] = {
            name: SubRef(name, s.block, s.binding, s.count is not None, s.optional)
            for name, s in info.subs.items()}

    def bind_members(self) -> None:
        """Params and buffers as names, states as assignable names; an optional param or
        buffer is a value of type `T?` (present or not, the checkpoint decides)."""
        for name, m in self.info.tensors.items():
            if m.type is None:
                continue
            ty = OptionalT(m.type) if m.optional else m.type
            self.frame.bind(name, Val(ty), mutable=m.kind == "state" and not m.optional)
            self.members[name] = self.frame.lookup(name)

    def declare(self, s, names: tuple[str, ...]) -> None:
        """A local may not take a sub's name: a member call or a `match` on the name would
        mean the local to the reader and the sub to the flattening."""
        super().declare(s, names)
        spans = getattr(s, "name_spans", ()) or (s.span,) * len(names)
        for name, span in zip(names, spans):
            if name in self.subrefs:
                self.error("E1205", f"`{name}` is the name of a sub here", span,
                           "declared twice", help="choose another name")

    def _member(self, name: str) -> bool:
        """Does the name still mean the block's member (no local hides it)?"""
        local = self.frame.lookup(name)
        return local is not None and local is self.members.get(name)

    # ------------------------------------------------------------------ names

    def expr_Name(self, e: t.Name) -> Val:
        if (self.ix is None or e.id not in self.ix) and self.frame.lookup(e.id) is None:
            ref = self.subrefs.get(e.id)
            if ref is not None:
                what = "an array of blocks" if ref.array else "a block"
                how = (f"unroll it: `static for layer in {e.id} {{ ... }}`" if ref.array
                       else f"call one of its functions: `{e.id}.forward(...)`")
                return self.error("E2101", f"sub `{e.id}` is {what}, not a value", e.span,
                                  "a sub", help=how)
            if e.id in self.info.fns:
                return self.error("E2101", f"`{e.id}` is a function, not a value", e.span,
                                  "a function", help=f"call it: `{e.id}(...)`")
        return super().expr_Name(e)

    def expr_Field(self, e: t.Field) -> Val:
        """`cache.keys`: a sub's param, buffer or state, read (never assigned: E2108) as
        the child's own functions see it, its type in the parent's terms."""
        base = e.base
        ref = self.subrefs.get(base.id) if isinstance(base, t.Name) \
            and self.frame.lookup(base.id) is None else None
        if ref is None:
            return super().expr_Field(e)
        if ref.array or ref.optional:
            how = (f"unroll it: `static for layer in {ref.name} {{ ... layer.{e.name} ... }}`"
                   if ref.array else f"read it with `match`: `match {ref.name} {{ some(h) "
                   f"=> h.{e.name}  none => ... }}`")
            return self.error("E2101", f"sub `{ref.name}` is "
                              f"{'an array of blocks' if ref.array else 'optional'}",
                              base.span, "no members to read here", help=how)
        child = ref.block
        if child is None or ref.binding is None:
            return ERR
        member = child.tensors.get(e.name)
        if member is None:
            return self._not_a_member(e, child)
        if member.type is None:
            return ERR
        ty = substitute(member.type, ref.binding)
        return Val(OptionalT(ty) if member.optional else ty)

    def _not_a_member(self, e: t.Field, child: BlockInfo) -> Val:
        if e.name in child.fns:
            return self.error("E2101", f"`{child.name}.{e.name}` is a function, not a value",
                              e.span, "a function", help=f"call it: `{e.base.id}.{e.name}(...)`")
        tensors = ", ".join(child.tensors) or "none"
        return self.error("E1201", f"block `{child.name}` has no param, buffer or state "
                          f"`{e.name}`", e.span, "no such member",
                          help=f"its params, buffers and states: {tensors}")

    def stmt_Assign(self, s: t.Assign) -> None:
        if self._member(s.name) and not self.frame.lookup(s.name).mutable:
            kind = self.info.tensors[s.name].kind
            self.bound_value(s.value)
            self.error("E2108", f"`{s.name}` is a {kind}, not a state", s.span,
                       "cannot assign",
                       help=f"a {kind} comes from the checkpoint; only a `state` member "
                            "(or a `var`) is assigned")
            return
        if self.frame.lookup(s.name) is None and (s.name in self.subrefs
                                                  or s.name in self.info.tensors):
            self.bound_value(s.value)
            self.error("E2108", f"`{s.name}` cannot be assigned", s.span, "cannot assign",
                       help="only a `state` member (or a `var`) is assigned")
            return
        super().stmt_Assign(s)

    # ------------------------------------------------------------------ calls

    def call(self, e: t.Call) -> Val:
        """A bare call of one of the block's own functions."""
        if e.callee not in self.info.fns or self.frame.lookup(e.callee) is not None:
            return super().call(e)
        if self.ix is not None:
            return _in_notation(self, e.callee, e.span)
        self.calls.append((f"{self.info.name}.{e.callee}", e.callee_span))
        if self.infer_block is not None:
            self.infer_block(self.info, e.callee)
        sig = self.info.sigs.get(e.callee)
        if sig is None or sig.result is None:
            return ERR
        return self.user_call(e, sig)

    def expr_MemberCall(self, e: t.MemberCall) -> Val:
        ref = self._callee_sub(e)
        if ref is None:
            return ERR
        if self.ix is not None:
            return _in_notation(self, f"{ref.name}.{e.name}", e.span)
        child = ref.block
        fn = child.fns.get(e.name)
        if fn is None:
            return self.error("E1201", f"block `{child.name}` has no function `{e.name}`",
                              e.span, "no such function",
                              help=_functions_help(child))
        if not fn.public or fn.kind != "fn":
            what = "an entry, run by backends" if fn.kind == "entry" else "not `pub`"
            return self.error("E2106", f"`{child.name}.{e.name}` is {what}", e.span,
                              "not callable here",
                              help="a parent calls the `pub fn` members of its subs")
        self.calls.append((f"{child.name}.{e.name}", e.span))
        if self.infer_block is not None:
            self.infer_block(child, e.name)
        sig = child.sigs.get(e.name)
        if sig is None or sig.result is None or ref.binding is None:
            return ERR
        clash = _generic_clash(sig, ref.binding)
        if clash:
            return self.error("E2190", f"not implemented yet: `{child.name}.{e.name}`'s "
                              f"generic `{clash}` named like a symbol of the sub's arguments",
                              e.span, help=f"rename the generic `{clash}` of `{e.name}`")
        call = t.Call(f"{e.base.id}.{e.name}", e.generics, e.args, span=e.span,
                      callee_span=e.span)
        return self.user_call(call, _seen_from_parent(sig, ref.binding))

    def _callee_sub(self, e: t.MemberCall) -> SubRef | None:
        """The sub a member call goes to (E2101 for anything else; calling an optional sub is
        E2190 in this version)."""
        base = e.base
        ref = self.subrefs.get(base.id) if isinstance(base, t.Name) \
            and self.frame.lookup(base.id) is None else None
        if ref is None and isinstance(base, t.Index) and isinstance(base.base, t.Name) \
                and base.base.id in self.subrefs and self.frame.lookup(base.base.id) is None:
            self.error("E2101", f"sub array `{base.base.id}` indexed", base.span,
                       "not indexed", help=f"unroll it: `static for layer in {base.base.id} "
                       f"{{ layer.{e.name}(...) }}`")
            return None
        if ref is None:
            super().expr_MemberCall(e)  # `x.mean(1)`: no methods on values
            return None
        if ref.array:
            self.error("E2101", f"sub `{ref.name}` is an array of blocks", base.span,
                       "an array", help=f"unroll it: `static for layer in {ref.name} {{ "
                       f"layer.{e.name}(...) }}`")
            return None
        if ref.optional:
            self.error("E2101", f"sub `{ref.name}` is optional: it may be absent", base.span,
                       "optional", help=f"read it with `match`: `match {ref.name} {{ some(h) "
                       f"=> h.{e.name}(...)  none => ... }}`")
            return None
        return ref if ref.block is not None else None

    # ------------------------------------------------------------------ match

    def expr_Match(self, e: t.Match) -> Val:
        """`match head { some(h) => h.forward(x)  none => x }` on an optional sub: `h`
        names the sub in its arm; which arm runs is the checkpoint's choice, made when the
        tree is elaborated."""
        s = e.scrutinee
        ref = self.subrefs.get(s.id) if isinstance(s, t.Name) \
            and self.frame.lookup(s.id) is None else None
        if ref is None:
            return super().expr_Match(e)
        if not ref.optional:
            what = "an array of blocks" if ref.array else "a block, always present"
            return self.error("E2101", f"`match` takes an enum or an optional; sub "
                              f"`{ref.name}` is {what}", s.span, "not optional",
                              help="only a sub declared `Block<...>? = none` is matched")
        if not optional_sub_arms(self, e, ref):
            return ERR
        values = [self._sub_arm(arm, ref) for arm in e.arms]
        if any(v.is_error for v in values):
            return ERR
        return self.join_arms(values, e)

    def _sub_arm(self, arm: t.Arm, ref: SubRef) -> Val:
        if not isinstance(arm.pattern, t.SomePat):
            return self.expr(arm.value)
        name = arm.pattern.names[0]
        saved = dict(self.subrefs)
        self.subrefs[name] = replace(ref, name=name, optional=False)
        try:
            return self.expr(arm.value)
        finally:
            self.subrefs = saved

    # ------------------------------------------------------------- static for

    def stmt_ForEach(self, s: t.ForEach) -> None:
        """`static for layer in layers { }`: the body once, `layer` one element."""
        self.declare(s, (s.var,))
        it = s.iterable
        ref = self.subrefs.get(it.id) if isinstance(it, t.Name) \
            and self.frame.lookup(it.id) is None else None
        if ref is None or not ref.array:
            self.error("E2121", "`static for x in e` runs over a sub array", it.span,
                       "not a sub array", help="unroll a range with `static for i in a..b`, "
                       "or a sub array declared `sub layers: [Block<...>; N]`")
            return
        saved = dict(self.subrefs)
        self.subrefs[s.var] = replace(ref, name=s.var, array=False)
        self.frame.push()
        self.frame.loop_depth += 1
        try:
            self.stmts(s.body)
        finally:
            self.frame.loop_depth -= 1
            self.frame.pop()
            self.subrefs = saved


def optional_sub_arms(checker: BlockBodyChecker, e: t.Match, ref: SubRef) -> bool:
    """The arms of a `match` on an optional sub: `some(h)` (one name, which no local or
    member takes) and `none`, once each (E2101; one missing: E2118)."""
    kinds: set[type] = set()
    for arm in e.arms:
        pat = arm.pattern
        if isinstance(pat, t.VariantPat) or (isinstance(pat, t.SomePat) and pat.tuple_):
            checker.error("E2101", f"this pattern does not match the optional sub "
                          f"`{ref.name}`", pat.span, help="write `some(h) => ...` and "
                          "`none => ...`")
            return False
        if type(pat) in kinds:
            checker.error("E2101", "this arm repeats an earlier pattern", pat.span,
                          "unreachable arm")
            return False
        if isinstance(pat, t.SomePat):
            name = pat.names[0]
            if checker.frame.lookup(name) is not None or name in checker.subrefs \
                    or name in checker.info.fns:
                checker.error("E1205", f"`{name}` is already a name here", pat.span,
                              "declared twice", help="name the sub another way: "
                              "`some(h) => ...`")
                return False
        kinds.add(type(pat))
    return both_optional_arms(checker, e, kinds, "h")


def _in_notation(checker: BlockBodyChecker, callee: str, span) -> Val:
    """A block's function runs once per call, with its states: not on elements."""
    return checker.error("E2190", f"not implemented yet: calling `{callee}` inside index "
                         "notation", span, "inside index notation",
                         help="call it before, with `let`, and index its result")


def _seen_from_parent(sig: Signature, b: Binding) -> Signature:
    """A child function's signature with the child's generics replaced by the sub's
    arguments: what remains generic is the function's own generics."""
    sizes = b.sizes()
    where = [(l.substitute(sizes), op, r.substitute(sizes), c) for l, op, r, c in sig.where]
    return Signature(sig.item, sig.generics, [substitute(p, b) for p in sig.params],
                     substitute(sig.result, b), where)


def _generic_clash(sig: Signature, b: Binding) -> str | None:
    """A function generic named like a symbol the sub's arguments bring in."""
    symbols = {s for d in b.dims.values() for s in d.symbols()} | set(b.dtypes.values())
    return next((g.name for g in sig.generics if g.name in symbols), None)


def _functions_help(child: BlockInfo) -> str:
    public = [name for name, f in child.fns.items() if f.public and f.kind == "fn"]
    return f"its `pub fn`s: {', '.join(public)}" if public else "it has no `pub fn`"
