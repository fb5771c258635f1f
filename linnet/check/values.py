"""Checking the model layer's values: written struct, enum, alias and optional types,
field reads, enum variants, `none`, `some(v)`, struct construction and `match`.

A mixin of `BodyChecker`, placed first so that it can widen what the general parts
accept (`accepts`, `settled`, `if_join`, generic inference) to these types and hand
everything else on to them. Calls with named arguments and defaults live in
`value_calls.py`; declarations of structs, enums and aliases in `value_items.py`.
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag, Span
from ..syntax import tree as t
from ..syntax.habits import attribute_help
from .dim_normal_form import Dim
from .item_scope import check_local_name, generics_frame
from .signatures import Binding, substitute
from .types import (DTYPES, ERR, LitT, TupleT, Val, choice_of, count, joint_literal,
                    materialize)
from .unify import dtype_in_kind
from .value_types import EnumT, NoneT, OptionalT, StructT

TYPE_ITEMS = (t.TypeAlias, t.Struct, t.Enum)
NONE_HELP = ("give `none` a type: `let x: Tensor[4; f32]? = none`, or pass it to an optional "
             "parameter")

_RESOLVING: set[int] = set()  # declarations being resolved: a struct or alias may not hold itself
HELD_ITSELF: set[int] = set()  # the declarations found to hold themselves (value_items reports)
_HOMES: dict[int, tuple[object, object]] = {}  # a struct or alias -> (it, its module's Globals)


def register_home(item, globals_) -> None:
    """Remember the names a struct's or alias's declaration is read with: its own module's,
    also where another module that `use`s it names it."""
    _HOMES[id(item)] = (item, globals_)


def _home_globals(item, fallback):
    home = _HOMES.get(id(item))
    return home[1] if home is not None and home[0] is item else fallback


class ValueChecker:
    # ------------------------------------------------------------ written types
    def resolve_type(self, te: t.TypeExpr):
        if isinstance(te, t.OptionalType):
            inner = self.resolve_type(te.inner)
            if isinstance(inner, OptionalT):
                return self.error("E2101", f"an optional of an optional, `{inner}?`", te.span,
                                  help="one `?` is enough: `none` or `some(v)`") and None
            return None if inner is None else OptionalT(inner)
        if isinstance(te, t.GenericType):
            return self.named_type(te.name, te.args, te)
        if isinstance(te, t.TypeName) and self.type_item(te.name) is not None:
            return self.named_type(te.name, (), te)
        return super().resolve_type(te)

    def type_item(self, name: str):
        """The struct, enum or alias a name declares here, unless a generic or dtype hides it."""
        if name in DTYPES or name in self.frame.generics:
            return None
        item = self.frame.globals.items.get(name)
        return item if isinstance(item, TYPE_ITEMS) else None

    def named_type(self, name: str, args: tuple, te):
        item = self.type_item(name)
        if item is None:
            return self.error("E1201", f"undeclared type `{name}`", te.span, "not a type",
                              once=(name,)) and None
        if isinstance(item, t.Enum):
            if args:
                return self.error("E2111", f"the enum `{name}` takes no generics",
                                  te.span) and None
            return EnumT(item.name, item.variants)
        binding = self.type_binding(item, args, te)
        declared = self.declared_type(item) if binding is not None else None
        return None if declared is None else substitute(declared, binding)

    def written_generics(self, item, args: tuple, where) -> Binding | None:
        """A struct's or alias's generics as written (`KV<f32>`), each of its kind."""
        b = Binding()
        if len(args) > len(item.generics):
            self.error("E2111", f"`{item.name}` has {count(len(item.generics), 'generic')}, "
                       f"{len(args)} given", where.span)
            return None
        for g, arg in zip(item.generics, args):
            if not self.bind_generic_arg(g, arg, b):
                return None
        return b

    def type_binding(self, item, args: tuple, te) -> Binding | None:
        """The generics of one use of a struct or alias: written, else their defaults."""
        b = self.written_generics(item, args, te)
        if b is None:
            return None
        for g in item.generics[len(args):]:
            if not (g.default is not None and self.bind_generic_arg(g, g.default, b)):
                self.error("E2110", f"write the generics of `{item.name}`", te.span,
                           help=f"`{item.name}<...>`: types do not infer their generics")
                return None
        return b if self.generic_kinds_hold(item, b, te) else None

    def generic_kinds_hold(self, item, b: Binding, where) -> bool:
        for g in item.generics:
            dtype = b.dtypes.get(g.name)
            if dtype is not None and g.kind in ("Numeric", "Integer", "Float") \
                    and not dtype_in_kind(dtype, g.kind, self.frame.dtype_kind(dtype)):
                self.error("E2112", f"`{item.name}` needs {g.name}: {g.kind}, found {dtype}",
                           where.span, f"{dtype} is not {g.kind}")
                return False
        return True

    def declared_type(self, item):
        """A struct's or alias's type with its own generics as symbols; None when its
        declaration is wrong (reported there) or holds itself."""
        if id(item) in _RESOLVING:
            HELD_ITSELF.add(id(item))
            return None
        _RESOLVING.add(id(item))
        try:
            globals_ = _home_globals(item, self.frame.globals)
            checker = self.body_checker(generics_frame(item, globals_, self.signatures),
                                        DiagnosticBag())
            if isinstance(item, t.TypeAlias):
                return checker.resolve_type(item.type)
            fields = [(f.name, checker.resolve_type(f.type)) for f in item.fields]
        finally:
            _RESOLVING.discard(id(item))
        if any(ty is None for _, ty in fields):
            return None
        return StructT(item.name, tuple(fields))

    # -------------------------------------------------------------- expressions
    def expr_Name(self, e: t.Name) -> Val:
        if self.frame.lookup(e.id) is None and e.id not in self.frame.globals.consts \
                and self.type_item(e.id) is not None:
            return self.error("E2101", f"`{e.id}` is a type, not a value", e.span, "a type")
        return super().expr_Name(e)

    def expr_Field(self, e: t.Field) -> Val:
        variant = self.variant(e)
        if variant is not None:
            return variant
        base = self.expr(e.base)
        if base.is_error:
            return ERR
        if isinstance(base.type, StructT):
            ty = base.type.field(e.name)
            if ty is None:
                fields = ", ".join(f for f, _ in base.type.fields)
                return self.error("E2101", f"`{base.type.name}` has no field `{e.name}`",
                                  e.span, "no such field", help=f"its fields: {fields}")
            return Val(ty)
        x = e.base.id if isinstance(e.base, t.Name) else "x"
        shown = f"{x}.{e.name}" if isinstance(e.base, t.Name) else f".{e.name}"
        return self.error("E1101", f"{base.type} has no methods or fields: `{shown}`",
                          Span(e.span.file, e.base.span.end, e.span.end),
                          "no methods or fields", help=attribute_help(e.name, x))

    def variant(self, e: t.Field) -> Val | None:
        """`E.A`: an enum's variant, a compile-time value (its position)."""
        if not isinstance(e.base, t.Name) or self.frame.lookup(e.base.id) is not None:
            return None
        item = self.type_item(e.base.id)
        if not isinstance(item, t.Enum):
            return None
        if e.name not in item.variants:
            return self.error("E1201", f"`{item.name}` has no variant `{e.name}`", e.span,
                              "no such variant", help=f"its variants: {', '.join(item.variants)}")
        return Val(EnumT(item.name, item.variants), Dim.const(item.variants.index(e.name)))

    def expr_NoneLit(self, e: t.NoneLit) -> Val:
        return Val(NoneT())

    def expr_Some(self, e: t.Some) -> Val:
        v = self.expr(e.value)
        if v.is_error:
            return ERR
        if isinstance(v.type, NoneT):
            return self.error("E2113", "`some(none)`: `none` has no type here", e.value.span,
                              help=NONE_HELP)
        return Val(OptionalT(v.type))

    # ------------------------------------------------------------------- match
    def expr_Match(self, e: t.Match) -> Val:
        scrutinee = self.expr(e.scrutinee)
        if scrutinee.is_error:
            return ERR
        ty = scrutinee.type
        if isinstance(ty, EnumT):
            chosen = self.enum_arms(e, ty, scrutinee)
        elif isinstance(ty, OptionalT):
            chosen = self.optional_arms(e, ty)
        else:
            what = "`none` without a type" if isinstance(ty, NoneT) else str(ty)
            return self.error("E2113" if isinstance(ty, NoneT) else "E2101",
                              f"`match` takes an enum or an optional, found {what}",
                              e.scrutinee.span, f"this is {what}")
        if chosen is False:
            return ERR
        values = [self.arm_value(arm, ty) for arm in e.arms]
        if any(v.is_error for v in values):
            return ERR
        joined = self.join_arms(values, e)
        if chosen is not None and not joined.is_error:
            picked = values[chosen]  # a constant scrutinee: the arm is chosen now
            return picked if picked.type == joined.type else joined
        return joined

    def enum_arms(self, e: t.Match, ty: EnumT, scrutinee: Val) -> int | None | bool:
        """Check the arms' patterns; the arm a constant scrutinee chooses, None when it is
        chosen at run time, False after an error."""
        seen: dict[str, int] = {}
        for k, arm in enumerate(e.arms):
            pat = arm.pattern
            if not isinstance(pat, t.VariantPat) or pat.enum != ty.name \
                    or pat.variant not in ty.variants:
                self.error("E2101", f"this pattern does not match a `{ty.name}`", pat.span,
                           help=f"write `{ty.name}.{ty.variants[0]} => ...`")
                return False
            if pat.variant in seen:
                self.error("E2101", f"`{ty.name}.{pat.variant}` is matched twice", pat.span,
                           "unreachable arm")
                return False
            seen[pat.variant] = k
        missing = [v for v in ty.variants if v not in seen]
        if missing:
            shown = ", ".join(f"{ty.name}.{v}" for v in missing)
            self.error("E2118", f"`match` is not exhaustive: missing {shown}", e.span,
                       "not every variant has an arm", help=f"add an arm for {shown}")
            return False
        known = scrutinee.const.as_int() if scrutinee.const is not None else None
        return seen[ty.variants[known]] if known is not None else None

    def optional_arms(self, e: t.Match, ty: OptionalT) -> None | bool:
        kinds: set[type] = set()
        for arm in e.arms:
            pat = arm.pattern
            if isinstance(pat, t.VariantPat):
                self.error("E2101", f"a variant pattern on an optional ({ty})", pat.span,
                           help="match an optional with `some(x) => ...` and `none => ...`")
                return False
            if type(pat) in kinds:
                self.error("E2101", "this arm repeats an earlier pattern", pat.span,
                           "unreachable arm")
                return False
            if isinstance(pat, t.SomePat) and pat.tuple_ and not (
                    isinstance(ty.inner, TupleT) and len(ty.inner.items) == len(pat.names)):
                self.error("E2101", f"cannot destructure {ty.inner} into "
                           f"{len(pat.names)} names", pat.span)
                return False
            kinds.add(type(pat))
        return None if both_optional_arms(self, e, kinds, "x") else False

    def arm_value(self, arm: t.Arm, ty) -> Val:
        """An arm's value, with the names its pattern binds in scope (an arm that the
        flattening of a block entry gave statements is checked as an `if` branch)."""
        self.frame.push()
        try:
            pat = arm.pattern
            if isinstance(pat, t.SomePat):
                items = ty.inner.items if pat.tuple_ else (ty.inner,)
                for name, item in zip(pat.names, items):
                    check_local_name(name, pat.span, self.bag)
                    self.frame.bind(name, Val(materialize(Val(item))))
            if isinstance(arm.value, t.Block):
                return self.block(arm.value)
            return self.expr(arm.value)
        finally:
            self.frame.pop()

    def join_arms(self, values: list[Val], e: t.Match) -> Val:
        """The one type the arms give: literals take a typed arm's dtype; `none` arms take
        an optional arm's type."""
        typed = next((v for v in values if not isinstance(v.type, (LitT, NoneT))), None)
        if typed is None:
            if all(isinstance(v.type, NoneT) for v in values):
                return Val(NoneT())
            if all(isinstance(v.type, LitT) for v in values):
                kind = values[0].type
                for v in values[1:]:
                    kind = joint_literal(kind, v.type)
                if all(v.const == values[0].const and v.fconst == values[0].fconst
                       and not v.alternatives for v in values):
                    return Val(kind, values[0].const, values[0].fconst)
                return choice_of(kind, *values)
            typed = values[0]
        for v, arm in zip(values, e.arms):
            if v is not typed and not self.accepts_quietly(typed.type, v):
                return self.error("E2115", f"`match` arms differ: {typed.type} and {v.type}",
                                  arm.value.span, f"this is {v.type}",
                                  help="every arm must give a value of one type")
        return Val(typed.type)

    def accepts_quietly(self, want, got: Val) -> bool:
        saved, self.bag = self.bag, DiagnosticBag()
        try:
            return self.accepts(want, got, t.NoneLit())
        finally:
            self.bag = saved

    # ---------------------------------------- the general parts, widened to values
    def accepts(self, want, got: Val, where: t.Expr) -> bool:
        if got.is_error:
            return True
        if isinstance(want, OptionalT):
            if isinstance(got.type, NoneT):
                return True
            if isinstance(got.type, OptionalT):
                return self.accepts(want.inner, Val(got.type.inner), where)
            self.error("E2101", f"expected {want}, found {got.type}", where.span,
                       f"this is {got.type}", help="an optional takes `some(value)` or `none`")
            return False
        if isinstance(got.type, NoneT):
            self.error("E2113", f"`none` where {want} is expected", where.span, "no optional here",
                       help=NONE_HELP)
            return False
        if isinstance(want, StructT) and isinstance(got.type, StructT) \
                and want.name == got.type.name:
            return all(self.accepts(w, Val(g), where)
                       for (_, w), (_, g) in zip(want.fields, got.type.fields))
        if isinstance(want, EnumT) and isinstance(got.type, EnumT) and want.name == got.type.name:
            return True
        if isinstance(want, (StructT, EnumT)) or isinstance(got.type, (StructT, EnumT, OptionalT)):
            self.error("E2101", f"expected {want}, found {got.type}", where.span,
                       f"this is {got.type}")
            return False
        return super().accepts(want, got, where)

    def _infer_from(self, param, got, names: set[str], b: Binding) -> None:
        if isinstance(param, OptionalT) and isinstance(got, OptionalT):
            self._infer_from(param.inner, got.inner, names, b)
        elif isinstance(param, StructT) and isinstance(got, StructT) and param.name == got.name:
            for (_, p), (_, g) in zip(param.fields, got.fields):
                self._infer_from(p, g, names, b)
        else:
            super()._infer_from(param, got, names, b)

    def settled(self, v: Val, span) -> Val:
        if isinstance(v.type, NoneT):
            return self.error("E2113", "`none` without an optional type", span,
                              "which optional?", help=NONE_HELP)
        if isinstance(v.type, OptionalT) and isinstance(v.type.inner, LitT):
            return Val(OptionalT(materialize(Val(v.type.inner))))
        return super().settled(v, span)

    def _bound(self, v: Val, value: t.Expr) -> Val:
        if isinstance(v.type, (NoneT, OptionalT)):
            return self.settled(v, value.span)
        return super()._bound(v, value)

    def if_join(self, a: Val, b: Val, e: t.If) -> Val:
        kinds = (type(a.type), type(b.type))
        if NoneT in kinds and OptionalT in kinds:
            return a if isinstance(a.type, OptionalT) else b
        if kinds == (NoneT, NoneT):
            return a
        return super().if_join(a, b, e)

    def _same_type(self, have, v: Val) -> bool:
        if isinstance(have, OptionalT) and isinstance(v.type, (NoneT, OptionalT)):
            return self.accepts_quietly(have, v)
        return super()._same_type(have, v)


def both_optional_arms(checker, e: t.Match, kinds: set[type], name: str) -> bool:
    """Whether a `match` on an optional has a `some(...)` and a `none` arm (E2118 for the one
    missing, its pattern written with `name`): for optional values and optional subs."""
    if len(kinds) >= 2:
        return True
    missing = "none" if t.SomePat in kinds else f"some({name})"
    checker.error("E2118", f"`match` is not exhaustive: missing `{missing}`", e.span,
                  help=f"add an arm `{missing} => ...`")
    return False
