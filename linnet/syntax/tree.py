"""The surface tree: what the parser builds, exactly as the user wrote it.

Every node is a frozen dataclass with a keyword-only `span`, excluded from
equality so that a tree printed and parsed again compares equal to the
original. Later stages never mutate a tree; they build new ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..diagnostics import NO_SPAN, Span


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


def _name_spans() -> tuple[Span, ...]:
    """Where each name a statement declares is written (for diagnostics about the name)."""
    return field(default=(), compare=False, repr=False, kw_only=True)


node = dataclass(frozen=True, slots=True)


# ---------------------------------------------------------------- expressions

@node
class Name:
    id: str
    span: Span = _span()


@node
class IntLit:
    value: int
    text: str = field(default="", compare=False)
    span: Span = _span()


@node
class FloatLit:
    value: float
    text: str = field(default="", compare=False)
    span: Span = _span()


@node
class BoolLit:
    value: bool
    span: Span = _span()


@node
class Unary:
    op: str  # "-", "+", "!"
    operand: "Expr"
    span: Span = _span()


@node
class Binary:
    op: str
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@node
class Arg:
    """A call argument; `name` is set for `axis = 1`."""
    value: "Expr"
    name: str | None = None
    span: Span = _span()


@node
class Call:
    callee: str
    generics: tuple["Expr", ...] | None
    args: tuple[Arg, ...]
    callee_span: Span = field(default=NO_SPAN, compare=False, repr=False)
    span: Span = _span()


@node
class Slice:
    lo: "Expr | None"
    hi: "Expr | None"
    step: "Expr | None"
    span: Span = _span()


@node
class PackIx:
    """`*s` inside an index list or a tensor type's dimensions."""
    name: str
    span: Span = _span()


IndexItem = Union["Expr", Slice, PackIx, "EllipsisIx"]


@node
class Index:
    base: "Expr"
    items: tuple[IndexItem, ...]
    span: Span = _span()


@node
class IxVar:
    """An index variable bound by a reduction or on the left of `let y[i] =`."""
    name: str
    pack: bool = False
    span: Span = _span()


@node
class Reduce:
    op: str  # sum prod max min any all
    acc: "TypeExpr | None"
    indices: tuple[IxVar, ...]
    body: "Expr"
    span: Span = _span()


@node
class Block:
    """A branch of `if` (or a flattened `match` arm, see `Arm`): statements, then the
    value."""
    stmts: tuple["Stmt", ...]
    value: "Expr"
    span: Span = _span()


@node
class If:
    cond: "Expr"
    then: Block
    orelse: Block
    span: Span = _span()


@node
class TupleExpr:
    items: tuple["Expr", ...]
    span: Span = _span()


@node
class ListExpr:
    """A shape literal such as `[A, B]`."""
    items: tuple["Expr", ...]
    span: Span = _span()


@node
class ForExpr:
    """A scan, `for i in a..b { ...; yield v }`: only the whole value of `let`, `var`, an
    assignment or `return`."""
    var: str
    lo: "Expr"
    hi: "Expr"
    body: tuple["Stmt", ...]
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class Field:
    """`s.k`: a struct's field, or `E.A`: an enum's variant (the checker tells which)."""
    base: "Expr"
    name: str
    span: Span = _span()


@node
class NoneLit:
    """`none`: an absent optional (its type comes from context)."""
    span: Span = _span()


@node
class Some:
    """`some(v)`: a present optional."""
    value: "Expr"
    span: Span = _span()


@node
class VariantPat:
    """The pattern `E.A` of a `match` arm."""
    enum: str
    variant: str
    span: Span = _span()


@node
class NonePat:
    span: Span = _span()


@node
class SomePat:
    """`some(x)`, or `some((a, b))` for an optional tuple (`tuple_` says which)."""
    names: tuple[str, ...]
    tuple_: bool = False
    span: Span = _span()


Pattern = Union[VariantPat, NonePat, SomePat]


@node
class Arm:
    """`pattern => value`. The parser makes the value an expression; the flattening of a
    block entry makes it a `Block` (statements, then the value) where a call that carries
    states, hoisted out of the value, must run only when this arm is taken."""
    pattern: Pattern
    value: Union["Expr", Block]
    span: Span = _span()


@node
class Match:
    scrutinee: "Expr"
    arms: tuple[Arm, ...]
    span: Span = _span()


@node
class EllipsisIx:
    """`...` in an index: the axes not written."""
    span: Span = _span()


@node
class MemberCall:
    """`layer.forward(x)`: a `pub fn` of a block's sub (blocks are not values, so the base
    is a sub or the element of a `static for` over a sub array)."""
    base: "Expr"
    name: str
    generics: tuple["Expr", ...] | None
    args: tuple[Arg, ...]
    span: Span = _span()
    name_span: Span = _span()  # `.forward`


Expr = Union[Name, IntLit, FloatLit, BoolLit, Unary, Binary, Call, Index, Reduce,
             If, TupleExpr, ListExpr, ForExpr, Field, NoneLit, Some, Match, MemberCall]


# ---------------------------------------------------------------------- types

@node
class TypeName:
    """A scalar dtype (`f32`) or a dtype generic (`T`)."""
    name: str
    span: Span = _span()


@node
class TensorType:
    dims: tuple["Expr | PackIx", ...]
    dtype: "TypeExpr"
    span: Span = _span()


@node
class TupleType:
    items: tuple["TypeExpr", ...]
    span: Span = _span()


@node
class GenericType:
    """A struct or alias with generic arguments: `KV<f32>`, `Hidden<T>`."""
    name: str
    args: tuple["Expr", ...]
    span: Span = _span()


@node
class OptionalType:
    """`T?`: `none` or `some(v)`."""
    inner: "TypeExpr"
    span: Span = _span()


TypeExpr = Union[TypeName, TensorType, TupleType, GenericType, OptionalType]


# ----------------------------------------------------------------- statements

@node
class Let:
    name: str
    annotation: TypeExpr | None
    value: Expr
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class LetTuple:
    names: tuple[str, ...]
    value: Expr
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class LetIndex:
    """Index notation: `let y[r, c] = ...`."""
    name: str
    indices: tuple[IxVar, ...]
    value: Expr
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class VarDecl:
    name: str
    annotation: TypeExpr | None
    value: Expr
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class Assign:
    name: str
    value: Expr
    span: Span = _span()


@node
class Return:
    value: Expr
    span: Span = _span()


@node
class For:
    var: str
    lo: Expr
    hi: Expr
    body: tuple["Stmt", ...]
    static: bool = False
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class While:
    cond: Expr
    body: tuple["Stmt", ...]
    span: Span = _span()


@node
class Yield:
    value: Expr
    span: Span = _span()


@node
class Effect:
    """A kernel's memory write: `store`, `atomic_add`, `atomic_max`, `atomic_min`."""
    kind: str
    args: tuple[Arg, ...]
    span: Span = _span()


@node
class ForEach:
    """`static for layer in layers { }`: unrolled over the elements of a sub array."""
    var: str
    iterable: Expr
    body: tuple["Stmt", ...]
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


Stmt = Union[Let, LetTuple, LetIndex, VarDecl, Assign, Return, For, While, Yield, Effect,
             ForEach]


# ---------------------------------------------------------------------- items

@node
class Generic:
    name: str
    kind: str  # Dim Shape DType Numeric Integer Float
    pack: bool = False
    default: Expr | None = None
    span: Span = _span()


@node
class Param:
    name: str
    type: TypeExpr
    default: Expr | None = None  # `eps: f32 = 1e-5`
    span: Span = _span()


@node
class Const:
    name: str
    annotation: TypeExpr | None
    value: Expr
    public: bool = False
    span: Span = _span()


@node
class Function:
    """A `fn` or an `entry` (kind says which)."""
    kind: str
    name: str
    generics: tuple[Generic, ...]
    params: tuple[Param, ...]
    result: TypeExpr | None
    where: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    public: bool = False
    grad: "GradClause | None" = None  # only ops may have one (E2125); kept to report it
    span: Span = _span()


@node
class KernelBinding:
    name: str
    args: tuple[Expr, ...] | None
    span: Span = _span()


@node
class GradClause:
    result: str
    seed: str
    body: tuple[Stmt, ...]
    name_spans: tuple[Span, ...] = _name_spans()
    span: Span = _span()


@node
class Op:
    name: str
    generics: tuple[Generic, ...]
    params: tuple[Param, ...]
    result: TypeExpr
    kernel: KernelBinding | None
    where: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    grad: GradClause | None = None
    public: bool = False
    span: Span = _span()


@node
class Kernel:
    name: str
    generics: tuple[Generic, ...]
    params: tuple[Param, ...]
    results: tuple[Param, ...]
    tuple_results: bool
    grid: tuple[Expr, ...]
    warps: Expr | None
    stages: Expr | None
    where: tuple[Expr, ...]
    body: tuple[Stmt, ...]
    public: bool = False
    span: Span = _span()


@node
class TypeAlias:
    """`type Name<G> = T`: transparent."""
    name: str
    generics: tuple[Generic, ...]
    type: TypeExpr
    public: bool = False
    span: Span = _span()


@node
class Struct:
    name: str
    generics: tuple[Generic, ...]
    fields: tuple[Param, ...]
    public: bool = False
    span: Span = _span()


@node
class Enum:
    name: str
    variants: tuple[str, ...]
    public: bool = False
    span: Span = _span()


@node
class TensorMember:
    """A block's `param`, `buffer` or `state` (kind says which). `init` is what follows
    `=`: only `none` is allowed, on an optional param (E4101, E4102)."""
    kind: str
    name: str
    type: TypeExpr
    init: Expr | None = None
    span: Span = _span()


@node
class SubType:
    """The block a `sub` instantiates: `Mlp<H, 4 * H>`, or `[Mlp<H>; L]` when `count` is
    set (an array of L children)."""
    block: str
    generics: tuple[Expr, ...] | None
    count: Expr | None = None
    span: Span = _span()


@node
class Sub:
    """`sub name: Block<..>`, `sub name: [Block<..>; N]` or `sub name: Block<..>? = none`."""
    name: str
    type: SubType
    optional: bool = False
    init: Expr | None = None
    span: Span = _span()


Member = Union[TensorMember, Sub, Function]


@node
class BlockDef:
    """`block Name<G> where ... { members }`: params, buffers, states, subs and functions
    (`pub fn` callable by the parent, `pub entry` run by backends)."""
    name: str
    generics: tuple[Generic, ...]
    where: tuple[Expr, ...]
    members: tuple[Member, ...]
    public: bool = False
    span: Span = _span()


Item = Union[Const, Function, Op, Kernel, TypeAlias, Struct, Enum, BlockDef]


@node
class Use:
    """`use a.b` brings in every public item of module `a.b`; `use a.b::{x, y}` only those
    (`names`, None without a list). The path is as written: `crate` or `std` first where
    the module is found from the package's source root or the standard library."""
    path: tuple[str, ...]
    names: tuple[str, ...] | None = None
    span: Span = _span()
    name_spans: tuple[Span, ...] = _name_spans()


@node
class Module:
    path: tuple[str, ...]
    uses: tuple[Use, ...]
    items: tuple[Item, ...]
    span: Span = _span()
