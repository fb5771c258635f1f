"""Values for `elaborate`: structs, enums and optionals disappear into the tensor IR.

The mixin `Values` of the body translator (`elaborator.BodyTranslator`), first among its bases
so that it can take over the expressions of these types and hand the rest on:

* a struct is a tuple of its fields in declaration order (`MakeTuple`, read with
  `GetItem`); an entry's struct parameter arrives as its fields, one input each, and
  its struct result leaves as the tuple of them;
* an enum value is an `i64` scalar, its variant's position; a `match` on a variant
  known at compile time is just the arm it chooses, else a chain of `If`s;
* an optional is an `Opt` while a body is translated: a presence flag (a `bool`
  literal when it is known, a variable otherwise) and the value when there is one.
  A call passes each optional argument whose presence is known as that knowledge: the
  callee is instantiated for it (`linear(x, w, none)` has no bias parameter at all).
  Where presence is only known at run time, an optional crosses as `(flag, value)`,
  the value zeros when absent, and `match` becomes an `If` on the flag;
* a `var` holding a struct, a tuple or an optional is carried by a loop as its leaves
  (`Split`), one tensor each, which is what the reverse mode differentiates.

Calls read their arguments through `order_args` (named arguments, defaults), and an
index with `...` is translated as the index it stands for.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...check.types import FLOAT, LitT, TensorT
from ...check.value_calls import expand_ellipsis, filled, order_args
from ...check.value_types import EnumT, NoneT, OptionalT, StructT, leaves
from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import Const, ElaborationError, I64, tensor_dtype, typed_literal
from .surface_walks import assigned_outer

BOOL = ir.TType((), "bool")
HandBack = tuple[tuple[str, ...], tuple[ir.Atom, ...]]
"""The outer vars a set of branches assigns, and their values before the branches."""


@dataclass(frozen=True)
class Opt:
    """An optional while a body is translated: its flag, and its value (None: absent)."""
    flag: ir.Atom
    value: ir.Atom | None

    @property
    def known(self) -> bool | None:
        return self.flag.value if isinstance(self.flag, ir.Lit) else None


@dataclass(frozen=True)
class Split:
    """A struct, tuple or optional `var` a loop carries as its leaves: the names (in the
    scope that declares the var) that hold them, and the type to rebuild from them."""
    names: tuple[str, ...]
    type: ir.Ty
    optional: bool


class Values:
    """Translates structs, enums and optionals into tuples, scalars and presence flags."""

    presence: dict = {}  # per optional parameter of this instance: True, False or None
    opt_target = None  # the optional type a `none` takes while an `if` or `match` is joined

    # ------------------------------------------------------------- types
    def value_ir_type(self, ty, want: str | None = None) -> ir.Ty:
        if isinstance(ty, StructT):
            return ir.TupleTy(tuple(self.ir_type(x) for _, x in ty.fields))
        if isinstance(ty, EnumT):
            return I64
        if isinstance(ty, OptionalT):
            return ir.TupleTy((BOOL, self.ir_type(ty.inner, want)))
        raise RuntimeError(f"internal: no IR type for {ty}")

    def made(self) -> dict[str, tuple]:
        """The items of the tuples this body built, by variable: read back without GetItem."""
        return self.__dict__.setdefault("_made", {})

    def make_tuple(self, items: tuple, hint: str) -> ir.Atom:
        ty = ir.TupleTy(tuple(a.type for a in items))
        var = self.b.emit(ir.MakeTuple(tuple(items), ty), hint)
        self.made()[var.name] = tuple(items)
        return var

    def item(self, tup: ir.Atom, k: int, hint: str) -> ir.Atom:
        known = self.made().get(getattr(tup, "name", None))
        if known is not None:
            return known[k]
        return self.b.emit(ir.GetItem(tup, k, tup.type.items[k]), hint)

    def zeros(self, ty: ir.Ty) -> ir.Atom:
        """The value an absent optional carries where presence is decided at run time."""
        if isinstance(ty, ir.TupleTy):
            return self.make_tuple(tuple(self.zeros(x) for x in ty.items), "zeros")
        return self.b.emit(ir.Prim("fill", (typed_literal(0, ty.dtype),), ty), "zeros")

    # --------------------------------------------------------- parameters
    def param_vars(self, name: str, ty) -> list[ir.Var]:
        if isinstance(ty, OptionalT):
            return self.optional_param(name, ty)
        if isinstance(ty, StructT) and getattr(self.inst.item, "kind", "") == "entry":
            parts = [self.b.fresh(f"{name}_{k}", self.ir_type(leaf))
                     for k, leaf in enumerate(leaves(ty))]
            self.env.define(name, self.rebuild(ty, iter(parts)))
            return parts
        return super().param_vars(name, ty)

    def optional_param(self, name: str, ty: OptionalT) -> list[ir.Var]:
        present = self.presence.get(name)
        if present is False:
            self.env.define(name, Opt(typed_literal(False, "bool"), None))
            return []
        value = self.b.fresh(name, self.ir_type(ty.inner))
        if present:
            self.env.define(name, Opt(typed_literal(True, "bool"), value))
            return [value]
        flag = self.b.fresh(f"{name}_present", BOOL)
        self.env.define(name, Opt(flag, value))
        return [flag, value]

    def no_gradient_for_optionals(self, params: tuple, ir_params: tuple,
                                  block: ir.Block) -> ir.Block:
        """A grad clause's result, with a zero gradient for the value of each optional
        parameter: every backend gives each floating tensor input of an op a slot in the
        clause's result (`emit.layout.grad_slots`), but the clause gives one for floating
        tensor parameters alone, and an optional is none (its gradient stops, as a
        scalar's does)."""
        optional: list[bool] = []
        for p, ty in zip(params, self.inst.signature.params):
            if isinstance(ty, OptionalT):  # no input, the value, or the flag and the value
                optional += [True] * {False: 0, True: 1, None: 2}[self.presence.get(p.name)]
            else:
                optional.append(False)
        floats = [(v, opt) for v, opt in zip(ir_params, optional) if _float_tensor(v.type)]
        if not any(opt for _, opt in floats):
            return block
        result = block.result
        if [opt for _, opt in floats].count(False) == 1:
            given = iter([result])
        else:
            given = iter([self.b.emit(ir.GetItem(result, j, x), "d")
                          for j, x in enumerate(result.type.items)])
        items = tuple(self.zeros(v.type) if opt else next(given) for v, opt in floats)
        value = items[0] if len(items) == 1 else self.b.emit(
            ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))), "grads")
        return ir.Block(tuple(self.b.blocks[0]), value)

    def rebuild(self, ty, parts) -> ir.Atom:
        """A struct from an entry's flattened inputs, in field order."""
        if not isinstance(ty, StructT):
            return next(parts)
        return self.make_tuple(tuple(self.rebuild(x, parts) for _, x in ty.fields), "struct")

    def flatten(self, atom: ir.Atom, ty) -> list[ir.Atom]:
        if not isinstance(ty, StructT):
            return [atom]
        return [leaf for k, (name, x) in enumerate(ty.fields)
                for leaf in self.flatten(self.item(atom, k, name), x)]

    # ------------------------------------------------------------- values
    def value_atom(self, e: t.Expr, ty) -> ir.Atom:
        if isinstance(ty, OptionalT):
            return self.opt_atom(self.optional(e, ty), ty)
        return self.expr(e, tensor_dtype(ty))

    def expr(self, e: t.Expr, want: str | None = None) -> ir.Atom:
        ty = self.val(e).type
        if isinstance(ty, (OptionalT, NoneT)):
            # `none`, or `some(1.0)`, takes its type from what is being joined
            settled = isinstance(ty, OptionalT) and not isinstance(ty.inner, LitT)
            target = ty if settled else (self.opt_target or ty)
            if isinstance(target, NoneT):
                raise ElaborationError("`none` without an optional type", e.span, "E2113")
            return self.opt_atom(self.optional(e, target), target)
        return super().expr(e, want)

    def literal(self, e: t.Expr, want: str | None):
        if isinstance(self.val(e).type, EnumT):
            value = self.fold(e)
            return typed_literal(value, "i64") if isinstance(value, int) else None
        return super().literal(e, want)

    def optional(self, e: t.Expr, ty: OptionalT) -> Opt:
        """An optional expression as an `Opt`: presence known wherever it can be."""
        if isinstance(e, t.NoneLit):
            return Opt(typed_literal(False, "bool"), None)
        if isinstance(e, t.Some):
            return Opt(typed_literal(True, "bool"), self.value_atom(e.value, ty.inner))
        if isinstance(e, t.Name) and isinstance(self.env.lookup(e.id), (Opt, Split)):
            return self.whole(e.id)
        if isinstance(e, (t.If, t.Match)) and self.static_choice(e) is not None:
            return self.optional(self.static_choice(e), ty)
        saved, self.opt_target = self.opt_target, ty
        try:  # a literal inside (`if c { some(2.0) } else { none }`) takes ty's dtype
            tup = super().expr(e, tensor_dtype(ty.inner))
        finally:
            self.opt_target = saved
        return Opt(self.item(tup, 0, "present"), self.item(tup, 1, "value"))

    def opt_atom(self, opt: Opt, ty: OptionalT) -> ir.Atom:
        """An optional as one value, `(flag, value)`: where it must cross as one."""
        value = opt.value if opt.value is not None else self.zeros(self.ir_type(ty.inner))
        return self.make_tuple((opt.flag, value), "optional")

    # ------------------------------------------------------ fields, structs
    def expr_Field(self, e: t.Field, want: str | None) -> ir.Atom:
        base = self.val(e.base).type
        if not isinstance(base, StructT):
            raise ElaborationError(f"`.{e.name}` of {base}", e.span)
        k = [name for name, _ in base.fields].index(e.name)
        return self.item(self.expr(e.base), k, e.name)

    def fold_Field(self, e: t.Field):
        """A variant's position (read from the declaration: a `const`'s value is folded
        without recorded types)."""
        if not isinstance(e.base, t.Name) or self.env.lookup(e.base.id) is not None:
            return None
        enum = self.globals.items.get(e.base.id)
        if isinstance(enum, t.Enum) and e.name in enum.variants:
            return enum.variants.index(e.name)
        return None

    def expr_Call(self, e: t.Call, want: str | None) -> ir.Atom:
        item = self.globals.items.get(e.callee)
        if isinstance(item, t.Struct) and self.env.lookup(e.callee) is None:
            ty = self.val(e).type
            slots, _ = order_args(item.fields, e.args, e.callee)
            atoms = tuple(self.value_atom(x, fty) for x, (_, fty) in zip(slots, ty.fields))
            return self.make_tuple(atoms, e.callee.lower())
        if not isinstance(item, (t.Function, t.Op)):
            return super().expr_Call(e, want)
        binding = self.concrete(self.inst.call_bindings[id(e)])
        callee = self.elab.instance(item, binding)
        slots, _ = order_args(item.params, e.args, e.callee)
        parts: list[tuple[str, tuple[ir.Atom, ...]]] = []  # each parameter's atoms
        presence, known = [], []
        entry = item.kind == "entry" if isinstance(item, t.Function) else False
        for p, x, ty in zip(item.params, filled(item.params, slots), callee.signature.params):
            value = None
            if isinstance(ty, OptionalT):
                opt = self.optional(x, ty)
                presence.append((p.name, opt.known))
                value = opt.value
                atoms = ((opt.flag,) if opt.known is None else ()) \
                    + ((opt.value,) if opt.known is not False else ())
            elif entry and isinstance(ty, StructT):
                atoms = tuple(self.flatten(self.value_atom(x, ty), ty))
            else:
                value = self.value_atom(x, ty)
                atoms = (value,)
            parts.append((p.name, atoms))
            if self.mark_of(value) is not None:  # the value of a value op: call_rewrites.py
                known.append((p.name, self.mark_of(value)))
        rewritten = self.rewritten_call(e, item, binding, callee, parts, tuple(presence),
                                        tuple(known))
        if rewritten is None:
            name = self.elab.request(item, binding, tuple(presence), tuple(known))
            args = [a for _, atoms in parts for a in atoms]
        else:
            name, args = rewritten
        var = self.b.emit(ir.Call(name, tuple(args), self.type_of(e)), e.callee)
        if not args:
            self.mark_call(item, var)
        return var

    # -------------------------------------------------------------- match
    def static_choice(self, e: t.If | t.Match) -> t.Expr | None:
        """The branch or arm a compile-time condition or scrutinee chooses, if any, when it
        is a value alone (no statements before it)."""
        if isinstance(e, t.If):
            known = self.fold(e.cond)
            if isinstance(known, bool) and not e.then.stmts and not e.orelse.stmts:
                return e.then.value if known else e.orelse.value
            return None
        arm = self.static_arm(e)
        return None if arm is None or isinstance(arm.value, t.Block) else arm.value

    def static_arm(self, e: t.Match) -> t.Arm | None:
        """The arm a compile-time variant chooses, if the scrutinee is one."""
        first = e.arms[0].pattern  # read from the declarations: a `const`'s value is folded
        enum = self.globals.items.get(first.enum) if isinstance(first, t.VariantPat) else None
        k = self.fold(e.scrutinee) if isinstance(enum, t.Enum) else None
        if isinstance(k, int):
            return next(a for a in e.arms if a.pattern.variant == enum.variants[k])
        return None

    def fold_Match(self, e: t.Match):
        chosen = self.static_choice(e)
        return self.fold(chosen) if chosen is not None else None

    def expr_Match(self, e: t.Match, want: str | None) -> ir.Atom:
        """The arm a known scrutinee chooses, in place; else an `If` chain whose arms also
        hand back the outer vars they assign, as `if` branches do."""
        ty = self.type_of(e, want)
        arm_want = ty.dtype if isinstance(ty, ir.TType) else None
        scrutinee = self.val(e.scrutinee).type
        if isinstance(scrutinee, EnumT):
            chosen = self.static_arm(e)
            if chosen is not None:
                return self.arm(chosen, None, arm_want)
            by_variant = {a.pattern.variant: a for a in e.arms}
            arms = [by_variant[v] for v in scrutinee.variants]
            if len(arms) == 1:
                return self.arm(arms[0], None, arm_want)
            s = self.expr(e.scrutinee)
            back = self.hand_back(tuple(a.value for a in arms))
            chain = self.enum_chain(s, arms, scrutinee, _joined(ty, back), arm_want, back)
            return self.unpack(chain, ty, back)
        opt = self.optional(e.scrutinee, scrutinee)
        some = next(a for a in e.arms if isinstance(a.pattern, t.SomePat))
        none = next(a for a in e.arms if isinstance(a.pattern, t.NonePat))
        if opt.known is not None:
            return self.arm(some if opt.known else none, opt, arm_want)
        back = self.hand_back((some.value, none.value))
        then = self.arm_block(some, opt, arm_want, back)
        orelse = self.arm_block(none, opt, arm_want, back)
        return self.unpack(self.b.emit(ir.If(opt.flag, then, orelse, _joined(ty, back)),
                                       "match"), ty, back)

    def enum_chain(self, s: ir.Atom, arms: list, enum: EnumT, ty: ir.Ty, want,
                   back: "HandBack") -> ir.Atom:
        """`if s == 0 { arm 0 } else if s == 1 { ... } else { last arm }` (two arms or more;
        `ty` holds the handed-back vars after the value, if any)."""
        k = enum.variants.index(arms[0].pattern.variant)
        is_k = ir.Prim("eq", (s, typed_literal(k, "i64")), BOOL)
        cond = self.b.emit(is_k, "is_" + enum.variants[k])
        then = self.arm_block(arms[0], None, want, back)
        if len(arms) == 2:
            rest = self.arm_block(arms[1], None, want, back)
        else:
            self.b.open()
            rest = self.b.close(self.enum_chain(s, arms[1:], enum, ty, want, back))
        return self.b.emit(ir.If(cond, then, rest, ty), "match")

    def arm_block(self, arm: t.Arm, opt: Opt | None, want,
                  back: "HandBack" = ((), ())) -> ir.Block:
        """An arm as a block: its value, then the vars it hands back (each arm starts from
        their values before the `match`)."""
        names, before = back
        for n, a in zip(names, before):
            self.env.assign(n, a)
        self.b.open()
        value = self.arm(arm, opt, want)
        if names:
            items = (value,) + tuple(self.env.lookup(n) for n in names)
            value = self.b.emit(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))),
                                "arm")
        return self.b.close(value)

    def hand_back(self, bodies: tuple) -> "HandBack":
        """The outer vars the branches assign (an optional or split one made one value
        first, as a branch hands it back), and their values before."""
        names = assigned_outer(bodies, self.assigned)
        for name in names:
            value = self.env.lookup(name)
            if isinstance(value, (Opt, Split)):
                atom = self.whole(name)
                self.env.assign(name, self.b.name(self.opt_atom(atom, self.opt_vars()[name])
                                                  if isinstance(atom, Opt) else atom, name))
        names = [n for n in names if isinstance(self.env.lookup(n), (ir.Var, ir.Lit))]
        return tuple(names), tuple(self.env.lookup(n) for n in names)

    def unpack(self, joined: ir.Atom, ty: ir.Ty, back: "HandBack") -> ir.Atom:
        """The branches' value; the handed-back vars read their new values."""
        names, _ = back
        if not names:
            return joined
        for k, n in enumerate(names):
            self.env.assign(n, self.b.bind(ir.GetItem(joined, k + 1,
                                                      joined.type.items[k + 1]), n))
        return self.b.emit(ir.GetItem(joined, 0, ty), "match")

    def arm(self, arm: t.Arm, opt: Opt | None, want) -> ir.Atom:
        """An arm's value in the current block, its pattern's names bound; the statements
        of an arm that has some (a flattened block entry's) run first, straight-line."""
        self.env.push()
        try:
            if isinstance(arm.pattern, t.SomePat):
                if not arm.pattern.tuple_:
                    self.env.define(arm.pattern.names[0], opt.value)
                for k, name in enumerate(arm.pattern.names if arm.pattern.tuple_ else ()):
                    self.env.define(name, self.b.bind(ir.GetItem(
                        opt.value, k, opt.value.type.items[k]), name))
            value = arm.value
            if isinstance(value, t.Block):
                self.stmts(value.stmts)
                value = value.value
            return self.expr(value, want)
        finally:
            self.env.pop()

    # ------------------------------------------------- `if` on optionals, `...`
    def expr_If(self, e: t.If, want: str | None) -> ir.Atom:
        """A branch hands back the vars it assigns as values: an optional `var` as its
        `(flag, value)`, one a loop split into leaves as its tuple again. A compile-time
        condition has no branches, only the one taken, in place: its vars stay as they
        are (an optional keeps its known presence, so that a `match` on it is still
        chosen now, not made an `If` on a flag that is a constant)."""
        if not isinstance(self.fold(e.cond), bool):
            self.hand_back((e.then, e.orelse))
        return super().expr_If(e, want)

    def carried(self, stmts: tuple) -> list[str]:
        """A loop carries a struct, tuple or optional `var` as its leaves, one tensor each
        (what the reverse mode differentiates): the var reads them as one value again."""
        assigned = assigned_outer(stmts, self.assigned)
        for name in assigned:
            self.split(name)
        names = super().carried(stmts)
        for name in assigned:
            value = self.env.lookup(name)
            names.extend(value.names if isinstance(value, Split) else ())
        return names

    def split(self, name: str) -> None:
        value = self.env.lookup(name)
        if isinstance(value, Opt):
            value = self.opt_atom(value, self.opt_vars()[name])
        elif not (isinstance(value, ir.Var) and isinstance(value.type, ir.TupleTy)):
            return
        names = []
        for k, leaf in enumerate(self.leaf_atoms(value)):
            key = f"{name}__{k}"
            while self.env.lookup(key) is not None:
                key += "_"
            self.env.scopes.define_beside(name, key, self.b.name(leaf, key))
            names.append(key)
        self.env.assign(name, Split(tuple(names), value.type, name in self.opt_vars()))

    def leaf_atoms(self, atom: ir.Atom) -> list[ir.Atom]:
        if not isinstance(atom.type, ir.TupleTy):
            return [atom]
        return [leaf for k in range(len(atom.type.items))
                for leaf in self.leaf_atoms(self.item(atom, k, "item"))]

    def whole(self, name: str):
        """A var's value as one: an `Opt`, or an atom (a split var's tuple rebuilt)."""
        value = self.env.lookup(name)
        if not isinstance(value, Split):
            return value
        leaves = iter(self.env.lookup(key) for key in value.names)
        atom = self.rebuild_leaves(value.type, leaves)
        return Opt(self.item(atom, 0, "present"), self.item(atom, 1, "value")) \
            if value.optional else atom

    def rebuild_leaves(self, ty: ir.Ty, leaves) -> ir.Atom:
        if not isinstance(ty, ir.TupleTy):
            return next(leaves)
        return self.make_tuple(tuple(self.rebuild_leaves(x, leaves) for x in ty.items), "var")

    def opt_vars(self) -> dict:
        """The type of each optional `var` declared in this body, by name."""
        return self.__dict__.setdefault("_opt_vars", {})

    def expr_Name(self, e: t.Name, want: str | None) -> ir.Atom:
        if isinstance(self.env.lookup(e.id), Split):
            return self.whole(e.id)
        return super().expr_Name(e, want)

    def expr_Index(self, e: t.Index, want: str | None) -> ir.Atom:
        if not any(isinstance(i, t.EllipsisIx) for i in e.items):
            return super().expr_Index(e, want)
        base = self.val(e.base).type
        rank = base.rank if isinstance(base, TensorT) else 0
        expanded = expand_ellipsis(e, rank)
        self.inst.types[id(expanded)] = self.val(e)
        return super().expr_Index(expanded, want)

    # ------------------------------------------------------------ bindings
    def define(self, name: str, atom: ir.Atom) -> None:
        """A tuple built here keeps its known items under the user's name."""
        known = self.made().get(getattr(atom, "name", None))
        super().define(name, atom)
        if known is not None:
            self.made()[self.env.lookup(name).name] = known

    def stmt_Let(self, s: t.Let) -> None:
        ty = self.val(s).type
        if isinstance(ty, OptionalT):
            self.env.define(s.name, self.optional(s.value, ty))
            return
        if isinstance(ty, EnumT) and isinstance(self.fold(s.value), int):
            self.env.define(s.name, Const(self.fold(s.value)))  # a variant stays known
            return
        super().stmt_Let(s)

    def stmt_VarDecl(self, s: t.VarDecl) -> None:
        ty = self.val(s).type
        if isinstance(ty, OptionalT):
            self.opt_vars()[s.name] = ty
            self.env.define(s.name, self.optional(s.value, ty))
            return
        super().stmt_VarDecl(s)

    def stmt_Assign(self, s: t.Assign) -> None:
        """An optional `var` takes the new `Opt`; once carried by a loop or a branch, the
        new `(flag, value)`."""
        current, ty = self.env.lookup(s.name), self.opt_vars().get(s.name)
        if isinstance(current, Opt):
            self.env.assign(s.name, self.optional(s.value, ty))
            return
        if ty is not None:  # carried as `(flag, value)`, or as its leaves
            atom = self.opt_atom(self.optional(s.value, ty), ty)
        elif isinstance(current, Split):
            atom = self.expr(s.value)
        else:
            super().stmt_Assign(s)
            return
        if isinstance(current, Split):
            for key, leaf in zip(current.names, self.leaf_atoms(atom)):
                self.env.assign(key, self.b.name(leaf, key))
        else:
            self.env.assign(s.name, self.b.name(atom, s.name))


def _float_tensor(ty: ir.Ty) -> bool:
    return isinstance(ty, ir.TType) and bool(ty.rank) and ty.dtype in FLOAT


def _joined(ty: ir.Ty, back: HandBack) -> ir.Ty:
    """The type of branches that hand vars back: the value, then each var."""
    names, before = back
    return ir.TupleTy((ty,) + tuple(a.type for a in before)) if names else ty
