"""The tensor IR: one monomorphic program in A-normal form.

Every shape is a tuple of concrete integers (generics are bound before this
IR exists) and every operand is an `Atom`: a variable or a scalar literal.
A function body is a `Block` of `Bind`s and a result; control flow nests
blocks. Nodes are frozen dataclasses, so passes build new programs.

The primitive operations (`Prim.op`) and their attributes are defined in `linnet.prims`
(`PRIMS` below is their signatures); `docs/ir.md` describes their semantics (integer arithmetic
wraps, integer `/` and `%` truncate toward zero, float-to-int casts truncate).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, fields, replace
from operator import attrgetter
from typing import Callable, TypeVar, Union

from ..prims import EFFECTS, signatures  # noqa: F401 (EFFECTS re-exported)
from .printer import print_program
from .program_state import EMPTY as EMPTY_STATE, ProgramState, state_from_meta

T = TypeVar("T", bound=type)


def node(cls: T | None = None, *, weakref_slot: bool = False) -> T | Callable[[T], T]:
    """A frozen, slotted dataclass whose pickled state is read by one C call per object
    (the dataclass default calls `fields()` per object, per pickle: most of what keying the
    e-graph cache costs on a long program; see passes/egraph/cache.py)."""
    def make(cls: T) -> T:
        cls = dataclass(frozen=True, slots=True, weakref_slot=weakref_slot)(cls)
        names = tuple(f.name for f in fields(cls))
        read = attrgetter(*names) if len(names) > 1 else (
            lambda self: tuple(getattr(self, n) for n in names))

        def get_state(self: object) -> tuple:
            return read(self)

        def set_state(self: object, state: tuple) -> None:
            for name, value in zip(names, state):
                object.__setattr__(self, name, value)
        cls.__getstate__, cls.__setstate__ = get_state, set_state
        return cls
    return make if cls is None else make(cls)


# ---------------------------------------------------------------------- types

@node
class TType:
    """A tensor type with a concrete shape; a scalar has shape ()."""
    shape: tuple[int, ...]
    dtype: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        dims = ", ".join(map(str, self.shape))
        return f"{self.dtype}[{dims}]"


@node
class TupleTy:
    items: tuple["Ty", ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.items)) + ")"


Ty = Union[TType, TupleTy]


# -------------------------------------------------------------------- atoms

@node
class Var:
    name: str
    type: Ty

    def __str__(self) -> str:
        return self.name


@node
class Lit:
    """A scalar literal of a definite dtype (bool, int or float value)."""
    value: bool | int | float
    type: TType

    def __str__(self) -> str:
        return f"{self.value!r}:{self.type.dtype}"


Atom = Union[Var, Lit]


# -------------------------------------------------------------- expressions

@node
class Prim:
    """A primitive tensor operation; see PRIMS for the ops and their attributes."""
    op: str
    args: tuple[Atom, ...]
    type: Ty
    attrs: tuple[tuple[str, object], ...] = ()

    def attr(self, name: str, default: object = None) -> object:
        return dict(self.attrs).get(name, default)


@node
class Einsum:
    """A contraction, `spec` in numpy einsum notation, accumulated in `acc` dtype."""
    spec: str
    args: tuple[Atom, ...]
    type: TType
    acc: str = ""


@node
class Call:
    """A call of another function of the program (an op, or a fn not yet inlined)."""
    callee: str
    args: tuple[Atom, ...]
    type: Ty


@node
class MakeTuple:
    items: tuple[Atom, ...]
    type: TupleTy


@node
class GetItem:
    tup: Atom
    index: int
    type: Ty


@node
class If:
    cond: Atom
    then: "Block"
    orelse: "Block"
    type: Ty


Bound = Union[int, Var]  # a loop bound: compile-time, or (in a kernel) a run-time i64 scalar


def loop_bound(a: "int | Atom") -> Bound:
    """A loop bound in its canonical form: a literal is its integer, a Var stays."""
    return int(a.value) if isinstance(a, Lit) else a


@node
class Loop:
    """A counted loop `for index in lo..hi`, carrying values from one trip to the next.

    The body block sees `index` (an i64 scalar) and the carried variables and returns
    their next values; a scan (`yields` > 0) returns `yields` more tensors, each stacked
    across trips into a new leading axis of `hi - lo`. The Loop's value is a tuple: the
    carried values after the last trip, then the stacks in the order yielded. A scan
    of a tuple (`yield (a, b)`) is one Loop with several yields, so that every printer
    and pass handles N stacks rather than tuples of stacks.

    Bounds are compile-time integers, except in a kernel Func, where either may be an
    i64 scalar Var computed before the loop (from `program_id`, say): the bounds are
    read once, before the first trip, and the loop runs no trip when hi <= lo. A scan's
    bounds are always integers (its stacks' length is part of its type).
    """
    index: Var
    lo: Bound
    hi: Bound
    carried: tuple[Var, ...]
    init: tuple[Atom, ...]
    body: "Block"
    type: TupleTy
    yields: int = 0  # the number of stacked values (0: a plain loop)

    @property
    def static(self) -> bool:
        """Are both bounds compile-time integers?"""
        return isinstance(self.lo, int) and isinstance(self.hi, int)

    @property
    def runtime_bounds(self) -> tuple[Var, ...]:
        """The run-time bounds, in order (lo before hi): the Vars the loop reads besides
        its initial values."""
        return tuple(b for b in (self.lo, self.hi) if isinstance(b, Var))

    def trips(self) -> int:
        """The number of trips of a loop with compile-time bounds."""
        if not self.static:
            raise ValueError("the trip count of a loop with run-time bounds is not known")
        return max(0, self.hi - self.lo)

    @property
    def stacked_types(self) -> tuple[Ty, ...]:
        """The types of the stacked yields: the last `yields` items of the Loop's type."""
        return self.type.items[len(self.type.items) - self.yields:] if self.yields else ()

    @property
    def yield_types(self) -> tuple[TType, ...]:
        """The type of each value one trip yields (a stack without its leading axis)."""
        return tuple(TType(t.shape[1:], t.dtype) for t in self.stacked_types)


@node
class While:
    """`while cond { body }` over carried variables; its value is their final tuple."""
    carried: tuple[Var, ...]
    init: tuple[Atom, ...]
    cond: "Block"
    body: "Block"
    type: TupleTy


# ---------------------------------------------- index notation, before lowering

@node
class IxAccess:
    """`x[i, k]` inside index notation; `indices` name one iteration axis per axis of x."""
    tensor: Atom
    indices: tuple[str, ...]
    dtype: str


@node
class IxScalar:
    """A rank-0 value used inside index notation."""
    value: Atom
    dtype: str


@node
class IxPrim:
    """An elementwise primitive over index expressions."""
    op: str
    args: tuple["IxExpr", ...]
    dtype: str
    attrs: tuple[tuple[str, object], ...] = ()


@node
class IxReduce:
    """`sum[k] body` and friends; `axes` are the reduced index names with their extents."""
    op: str
    axes: tuple[tuple[str, int], ...]
    body: "IxExpr"
    dtype: str


@node
class IxGather:
    """`table[ids[b, s], h]` inside index notation: an access where some positions are
    integer index expressions (a gather) and the others index names. A gathered axis takes
    no extent from the access; a position outside its axis reads zero."""
    tensor: Atom
    positions: tuple[Union[str, "IxExpr"], ...]  # one per axis of `tensor`
    dtype: str


IxExpr = Union[IxAccess, IxScalar, IxPrim, IxReduce, IxGather]


@node
class Comprehension:
    """`let y[i, j] = body`: `outputs` are the result's index names with their extents."""
    outputs: tuple[tuple[str, int], ...]
    body: IxExpr
    type: TType


Expr = Union[Atom, Prim, Einsum, Call, MakeTuple, GetItem, If, Loop, While, Comprehension]


# ---------------------------------------------------------- blocks, programs

@node
class Bind:
    var: Var
    expr: Expr


@node(weakref_slot=True)
class Block:
    """Bindings in order, then the atom the block yields. (Weakly referable: walks that
    remember an answer per block, such as its free variables, forget it with the block.)"""
    binds: tuple[Bind, ...]
    result: Atom


@node
class KernelChoice:
    """An op's kernel binding: the kernel's name and its generics' values for this instance.

    `elaborate` records the binding on every op instance that has one; `choose-kernels`
    keeps it (setting `func` to the name of the kernel's `Func` in the program) where the
    kernel applies, and removes it where the op's body must run instead.
    """
    kernel: str
    generics: tuple[tuple[str, object], ...] = ()
    func: str = ""


@node
class Launch:
    """How a kernel Func is launched: its grid, hints, and how each result starts.

    `inits` has one entry per result: "empty" (written by `store`), "zero" (`atomic_add`),
    "lowest" (`atomic_max`) or "highest" (`atomic_min`).
    """
    grid: tuple[int, ...]
    warps: int | None = None
    stages: int | None = None
    inits: tuple[str, ...] = ()


@node
class Func:
    """A monomorphic function: the entry, an op or fn instance, a grad clause, or a kernel.

    A kernel Func (kind "kernel") runs once per program of its grid: its `params` are the
    kernel's parameters (tensors in memory, as Vars of their full type, and scalars), its
    `outputs` the results it writes (Vars of their full type), its body a block of tile
    computations and effects (`store`, atomics) whose result is `Lit(True)`.
    """
    name: str
    kind: str  # "entry", "op", "fn", "grad" or "kernel"
    params: tuple[Var, ...]
    body: Block
    source: str = ""  # the Linnet name and binding it was instantiated from, for dumps
    kernel: KernelChoice | None = None
    grad: "Func | None" = None
    outputs: tuple[Var, ...] = ()
    launch: Launch | None = None


@node
class Program:
    """The functions, the entry's name, and the typed records passes leave for later ones
    (`state`: `linnet/ir/program_state.py` says who writes and who reads each)."""
    funcs: tuple[Func, ...]
    entry: str
    state: ProgramState = EMPTY_STATE

    def __init__(self, funcs: tuple[Func, ...], entry: str, state: ProgramState = EMPTY_STATE,
                 meta: tuple[tuple[str, object], ...] | None = None) -> None:
        """`meta=` (the old untyped pairs) still builds a state, with a DeprecationWarning."""
        if meta is not None:
            state = state_from_meta(meta)
        object.__setattr__(self, "funcs", funcs)
        object.__setattr__(self, "entry", entry)
        object.__setattr__(self, "state", state)

    @property
    def meta(self) -> tuple[tuple[str, object], ...]:
        """Deprecated: the state's records as the old (key, value) pairs; read `state`."""
        warnings.warn("Program.meta is deprecated: read Program.state "
                      "(linnet.ir.program_state)", DeprecationWarning, stacklevel=2)
        return self.state.legacy_items()

    def with_state(self, **records: object) -> "Program":
        """This program with some state records replaced (`with_state(tuning=report)`)."""
        return replace(self, state=self.state.set(**records))

    def func(self, name: str) -> Func:
        return next(f for f in self.funcs if f.name == name)

    def __str__(self) -> str:
        """The program in the IR's text form (`--dump-after`)."""
        return print_program(self)


# The primitives: op name -> (arity or None for variadic, attribute names), read from
# their definitions (linnet.prims, where each primitive is described).
PRIMS: dict[str, tuple[int | None, tuple[str, ...]]] = signatures()


def check_prim_operands(op: str, args: tuple | list, arg_types, result, kind: str = "tensors"
                        ) -> None:
    """A printer's precondition: a known primitive, its arity, tensor operands and result."""
    if op not in PRIMS:
        raise ValueError(f"unknown primitive {op!r}")
    arity, _ = PRIMS[op]
    if arity is not None and len(args) != arity:
        raise ValueError(f"{op} takes {arity} operands, got {len(args)}")
    if not isinstance(result, TType) or any(not isinstance(t, TType) for t in arg_types):
        raise ValueError(f"{op}: operands and result must be {kind}")
