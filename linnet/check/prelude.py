"""The prelude's signatures: `cast`, math, `select`, shapes, `iota`, `fill`, `cumsum`,
`next_pow2`, `prod`.

Each builtin is one small method. Arguments are checked by position; only
`concat` and `cumsum` take the named argument `axis`.
"""

from __future__ import annotations

from .. import prims
from ..errors import closest
from ..syntax import tree as t
from ..syntax.habits import function_habit
from .dim_normal_form import Dim
from .types import (DTypeT, ERR, LitT, ShapeT, TensorT, Val, choice_of, compile_time_int, is_scalar,
                    joint_literal, known_zero, scalar)
from .unify import Problem, broadcast, element_count, shapes_equal, literal_fits

MATH = set(prims.MATH)  # the float functions of one float operand (`builtin_math`)
ARITY = {"cast": 1, "abs": 1, "min": 2, "max": 2, "select": 3, "shl": 2, "shr": 2,
         "reshape": 2, "broadcast_to": 2, "permute": 2, "iota": 1, "fill": 2, "cumsum": 1,
         "program_id": 1, "next_pow2": 1, **{m: 1 for m in MATH}}
NAMED = {"concat": {"axis"}, "cumsum": {"axis"}}


class PreludeChecker:
    def builtin(self, e: t.Call) -> Val:
        name = e.callee
        if name in ("load", "program_id"):
            return self.kernel_builtin(e)  # type: ignore[attr-defined]
        if name == "prod" and self._of_a_shape(e):
            return self.builtin_prod(e)
        if name not in ARITY and name != "concat":
            names = [a.value.id for a in e.args if isinstance(a.value, t.Name)]
            habit = function_habit(name, *names[:2])
            message, help_ = habit or (f"undeclared function `{name}`", self._near_function(name))
            return self.error("E1201", message, e.callee_span, "not found", help=help_,
                              once=(name,))
        if not self._arity_ok(e):
            return ERR
        method = getattr(self, "builtin_" + ("math" if name in MATH else name))
        return method(e)

    def _near_function(self, name: str) -> str:
        """Help for an undeclared function: the prelude function or item it is a slip
        for (`tahn`: `tanh`), else how to declare one."""
        items = self.frame.globals.items  # type: ignore[attr-defined]
        callable_ = {n for n, i in items.items() if isinstance(i, (t.Function, t.Op))}
        near = closest(name, set(ARITY) | {"concat"} | callable_)
        if near is not None:
            return f"did you mean `{near}`?"
        return "declare it with `fn`, or check the spelling"

    def _arity_ok(self, e: t.Call) -> bool:
        named = [a for a in e.args if a.name is not None]
        for a in named:
            if a.name not in NAMED.get(e.callee, set()):
                self.error("E2102", f"`{e.callee}` has no argument named `{a.name}`", a.span)
                return False
        if e.callee == "cumsum" and not named:
            self.error("E2102", "`cumsum` needs `axis`", e.span, "no axis given",
                       help="write `cumsum(x, axis = 0)`")
            return False
        positional = len(e.args) - len(named)
        want = ARITY.get(e.callee)
        if want is None:
            ok = positional >= 1
        else:
            ok = positional == want
        if not ok:
            self.error("E2102", f"`{e.callee}` takes {want if want else 'one or more'} "
                       f"argument{'s' if want != 1 else ''}, found {positional}", e.span)
        return ok

    def _no_generics(self, e: t.Call) -> bool:
        if e.generics:
            self.error("E2111", f"`{e.callee}` takes no generic arguments", e.span)
            return False
        return True

    def _written_dtype(self, e: t.Call, required: bool) -> str | None | bool:
        """The dtype in `f<T>(...)`: a dtype, None if absent, False after an error."""
        if not e.generics:
            if required:
                self.error("E2110", f"`{e.callee}` needs its dtype written", e.span,
                           help=f"write `{e.callee}<f32>(...)`")
                return False
            return None
        if len(e.generics) != 1:
            self.error("E2111", f"`{e.callee}` takes one dtype", e.span)
            return False
        v = self.expr(e.generics[0])
        if not isinstance(v.type, DTypeT):
            if not v.is_error:
                self.error("E2111", f"`{e.callee}<...>` takes a dtype, found {v.type}",
                           e.generics[0].span)
            return False
        return v.type.dtype

    def _tensor_arg(self, a: t.Arg) -> Val:
        v = self.expr(a.value)
        if not v.is_error and not isinstance(v.type, (TensorT, LitT)):
            return self.error("E2101", f"expected a tensor, found {v.type}", a.value.span)
        return v

    # ------------------------------------------------------- elementwise
    def builtin_cast(self, e: t.Call) -> Val:
        dtype = self._written_dtype(e, required=True)
        x = self._tensor_arg(e.args[0])
        if dtype is False or x.is_error:
            return ERR
        dims = x.type.dims if isinstance(x.type, TensorT) else ()
        return Val(TensorT(dims, dtype), zero=known_zero(x))

    def builtin_math(self, e: t.Call) -> Val:
        if not self._no_generics(e):
            return ERR
        x = self._tensor_arg(e.args[0])
        if x.is_error:
            return ERR
        if isinstance(x.type, LitT):
            if x.type.kind == "float":
                return Val(LitT("float"))
            return self.error("E2112", f"`{e.callee}` needs a float, found an integer literal",
                              e.args[0].span, help="write a float literal such as `2.0`")
        if not self.is_float(x.type.dtype):
            return self.error("E2112", f"`{e.callee}` needs a float dtype, found "
                              f"{x.type.dtype}", e.args[0].span, f"this is {x.type}",
                              help=f"cast first: `{e.callee}(cast<f32>(x))`")
        return Val(x.type)

    def builtin_abs(self, e: t.Call) -> Val:
        x = self._tensor_arg(e.args[0])
        if x.is_error:
            return x
        if isinstance(x.type, LitT):
            return _absolute(x)
        if not self.is_numeric(x.type.dtype):
            return self.error("E2112", f"`abs` needs a numeric dtype, found {x.type.dtype}",
                              e.args[0].span)
        return Val(x.type)

    def builtin_min(self, e: t.Call) -> Val:
        return self._min_max(e, Dim.minimum)

    def builtin_max(self, e: t.Call) -> Val:
        return self._min_max(e, Dim.maximum)

    def _min_max(self, e: t.Call, fold) -> Val:
        a, b = (self._tensor_arg(x) for x in e.args)
        if a.is_error or b.is_error:
            return ERR
        if isinstance(a.type, LitT) and isinstance(b.type, LitT):
            const = fold(a.const, b.const) if a.const is not None and b.const is not None \
                else None
            kind = joint_literal(a.type, b.type)
            if const is not None and kind.kind == "int":
                return Val(kind, const)
            return choice_of(kind, a, b)  # one of the two, whichever is smaller (larger)
        joined = self.join(a, b, e)
        if joined is None:
            return ERR
        dims, dtype = joined
        if not self.is_numeric(dtype):
            return self.error("E2104", f"`{e.callee}` needs numbers, found {dtype}", e.span)
        return Val(TensorT(dims, dtype))

    def builtin_next_pow2(self, e: t.Call) -> Val:
        """`next_pow2(d)`: the smallest power of two `>= d` (1 for `d <= 1`), a compile-time
        integer like `d` itself, so it goes wherever a dimension does (a tile size, a kernel
        binding, a type). Its argument must be a compile-time integer (E2123)."""
        if not self._no_generics(e):
            return ERR
        n = self.expect_const_int(e.args[0].value, "the argument of `next_pow2`")
        if n is None:
            return ERR
        return self.in_i64(Val(LitT("int"), Dim.next_pow2(n)), e, "`next_pow2`")

    def _of_a_shape(self, e: t.Call) -> bool:
        """Is `prod(...)` the product of a pack's sizes, its one argument a generic (`prod(S)`;
        one of another kind is E2101 there), or any name but a local's in a kernel (E2127
        there)? Anything else, `prod(x)` of a tensor say, is the reduction written as a
        Python function (E1201 with its help, as before)."""
        if len(e.args) != 1 or e.args[0].name is not None:
            return False
        arg = e.args[0].value
        if not isinstance(arg, t.Name) or self.frame.lookup(arg.id) is not None:
            return False
        return arg.id in self.frame.generics or self.frame.kernel is not None

    def builtin_prod(self, e: t.Call) -> Val:
        """`prod(S)`: the product of the sizes of a shape pack `S`, a compile-time integer
        that goes wherever a dimension does, so that `reshape(x, [prod(S), H])` flattens a
        `Tensor[*S, H; T]` into rows (check/pack_products.py). In an instance, where `S`
        is bound, it is a number. A kernel has no shape packs, so it has no pack products
        either (E2127)."""
        if not self._no_generics(e):
            return ERR
        arg = e.args[0].value
        if self.frame.kernel is not None:
            return self.error("E2127", "a kernel has no shape packs, so no `prod` of one",
                              e.span, "in a kernel",
                              help="flatten in the op, `reshape(x, [prod(S), H])`, and bind "
                                   "the kernel to an op over the rows")
        kind = self.frame.generics[arg.id].kind
        if kind != "Shape":
            return self.error("E2101", f"`prod` takes a shape pack; `{arg.id}` is a {kind}",
                              arg.span, f"a {kind}",
                              help="write `prod(S)` for a `*S: Shape` generic")
        shape = self.expr(arg)
        if shape.is_error or not isinstance(shape.type, ShapeT):
            return ERR
        return self.in_i64(Val(LitT("int"), element_count(shape.type.dims)), e, "`prod`")

    def builtin_select(self, e: t.Call) -> Val:
        c, a, b = (self._tensor_arg(x) for x in e.args)
        if c.is_error or a.is_error or b.is_error:
            return ERR
        if not isinstance(c.type, TensorT) or c.type.dtype != "bool":
            return self.error("E2101", f"`select` needs a bool condition, found {c.type}",
                              e.args[0].value.span, f"this is {c.type}")
        condition = e.args[0].value
        picked = (a if condition.value else b) if isinstance(condition, t.BoolLit) else None
        if isinstance(a.type, LitT) and isinstance(b.type, LitT) and c.type.rank == 0:
            if picked is not None:
                return Val(joint_literal(a.type, b.type), picked.const, picked.fconst,
                           picked.alternatives)
            return choice_of(joint_literal(a.type, b.type), a, b)  # as `if c {a} else {b}`
        joined = self.join(a, b, e)
        if joined is None:
            return ERR
        dims = broadcast(c.type.dims, joined[0], self.frame.facts)
        if isinstance(dims, Problem):
            return self.problem(dims, e.span)
        zero = known_zero(picked) if picked is not None else known_zero(a) and known_zero(b)
        return Val(TensorT(dims, joined[1]), zero=zero)

    def builtin_shl(self, e: t.Call) -> Val:
        return self._shift(e)

    def builtin_shr(self, e: t.Call) -> Val:
        return self._shift(e)

    def _shift(self, e: t.Call) -> Val:
        x, n = (self._tensor_arg(a) for a in e.args)
        if x.is_error or n.is_error:
            return ERR
        for v, a in ((x, e.args[0]), (n, e.args[1])):
            if isinstance(v.type, TensorT) and not self.is_integer(v.type.dtype):
                return self.error("E2104", f"`{e.callee}` shifts integers, found "
                                  f"{v.type.dtype}", a.value.span)
            if isinstance(v.type, LitT) and v.type.kind != "int":
                return self.error("E2104", f"`{e.callee}` shifts integers, found a "
                                  f"{v.type}", a.value.span)
        if isinstance(x.type, LitT) and isinstance(n.type, LitT):
            return Val(LitT("int"))  # its dtype comes from context, as a literal's does
        joined = self.join(x, n, e)
        return ERR if joined is None else Val(TensorT(*joined))

    # ------------------------------------------------------------- shapes
    def _shape_arg(self, a: t.Arg) -> ShapeT | None:
        v = self.expr(a.value)
        if v.is_error:
            return None
        if isinstance(v.type, ShapeT):
            return v.type
        self.error("E2101", f"expected a shape such as `[A, B]`, found {v.type}", a.value.span)
        return None

    def builtin_reshape(self, e: t.Call) -> Val:
        x, shape = self._tensor_arg(e.args[0]), self._shape_arg(e.args[1])
        if x.is_error or shape is None or not isinstance(x.type, TensorT):
            return ERR
        before, after = element_count(x.type.dims), element_count(shape.dims)
        same = (before is not None and after is not None
                and self.frame.facts.prove(before, "==", after)) or x.type.dims == shape.dims
        if not same:
            return self.error("E2203", f"cannot prove that reshaping {x.type} to {shape} keeps "
                              "the element count", e.span,
                              help="the products of the dimensions must be provably equal")
        return Val(TensorT(shape.dims, x.type.dtype))

    def builtin_broadcast_to(self, e: t.Call) -> Val:
        x, shape = self._tensor_arg(e.args[0]), self._shape_arg(e.args[1])
        if x.is_error or shape is None:
            return ERR
        x = self.settled(x, e.args[0].value.span)
        if x.is_error:
            return ERR
        dims, dtype = x.type.dims, x.type.dtype
        out = broadcast(dims, shape.dims, self.frame.facts)
        if isinstance(out, Problem) or len(dims) > len(shape.dims) \
                or not shapes_equal(out, shape.dims, self.frame.facts):
            return self.error("E2207", f"cannot broadcast {x.type} to {shape}", e.span,
                              help="each dimension must equal the target's or be 1")
        return Val(TensorT(shape.dims, dtype))

    def builtin_permute(self, e: t.Call) -> Val:
        x = self._tensor_arg(e.args[0])
        if x.is_error or not isinstance(x.type, TensorT):
            return ERR
        perm = self._int_list(e.args[1])
        if perm is None or sorted(perm) != list(range(x.type.rank)) or x.type.has_pack:
            return self.error("E2210", f"not a permutation of the {x.type.rank} axes of "
                              f"{x.type}", e.args[1].value.span,
                              help=f"list each axis 0..{x.type.rank - 1} once")
        return Val(TensorT(tuple(x.type.dims[k] for k in perm), x.type.dtype))

    def _int_list(self, a: t.Arg) -> list[int] | None:
        if not isinstance(a.value, t.ListExpr):
            return None
        out = []
        for item in a.value.items:
            v = self.expr(item)
            k = v.const.as_int() if v.const is not None else None
            if k is None:
                return None
            out.append(k)
        return out

    def builtin_concat(self, e: t.Call) -> Val:
        parts = [self._tensor_arg(a) for a in e.args if a.name is None]
        if any(p.is_error for p in parts):
            return ERR
        if not all(isinstance(p.type, TensorT) and p.type.rank > 0 for p in parts):
            return self.error("E2101", "`concat` joins tensors of rank 1 or more", e.span)
        first = parts[0].type
        axis = self._axis(e, first.rank)
        if axis is None:
            return ERR
        total = first.dims[axis]
        for p, a in zip(parts[1:], [a for a in e.args if a.name is None][1:]):
            if p.type.dtype != first.dtype:
                return self.error("E2103", f"`concat` of {first.dtype} and {p.type.dtype}",
                                  a.value.span, help="cast explicitly")
            others_same = p.type.rank == first.rank and all(
                k == axis or shapes_equal((x,), (y,), self.frame.facts)
                for k, (x, y) in enumerate(zip(first.dims, p.type.dims)))
            if not others_same:
                return self.error("E2202", f"`concat` of {first} and {p.type}: shapes differ "
                                  "off the joined axis", a.value.span)
            total = total + p.type.dims[axis]
        dims = first.dims[:axis] + (total,) + first.dims[axis + 1:]
        return Val(TensorT(dims, first.dtype))

    def _axis(self, e: t.Call, rank: int) -> int | None:
        named = next((a for a in e.args if a.name == "axis"), None)
        if named is None:
            return 0
        v = self.expr(named.value)
        k = v.const.as_int() if compile_time_int(v) is not None else None
        if k is None or not -rank <= k < rank:
            self.error("E2210", f"axis must be a literal in {-rank}..{rank - 1}",
                       named.value.span, "invalid axis")
            return None
        return k % rank

    def builtin_iota(self, e: t.Call) -> Val:
        dtype = self._written_dtype(e, required=False)
        if dtype is False:
            return ERR
        dtype = dtype or "i64"
        if not self.is_numeric(dtype):
            return self.error("E2112", f"`iota` makes numbers, not {dtype}", e.span)
        n = self.expect_const_int(e.args[0].value, "the length of `iota`")
        if n is None:
            return ERR
        return Val(TensorT((n,), dtype))

    def builtin_fill(self, e: t.Call) -> Val:
        dtype = self._written_dtype(e, required=False)
        shape, value = self._shape_arg(e.args[0]), self._tensor_arg(e.args[1])
        if dtype is False or shape is None or value.is_error:
            return ERR
        if isinstance(value.type, TensorT) and value.type.rank != 0:
            return self.error("E2101", f"`fill` takes a scalar value, found {value.type}",
                              e.args[1].value.span)
        if dtype is None:
            if isinstance(value.type, LitT):
                return self.error("E2110", "`fill` needs its dtype written", e.span,
                                  help="write `fill<f32>([A, B], 0.0)`")
            dtype = value.type.dtype
        if isinstance(value.type, LitT):
            p = literal_fits(value, dtype, self.frame.dtype_kind(dtype))
            if p:
                return self.problem(p, e.args[1].value.span)
        elif value.type.dtype != dtype:
            return self.error("E2103", f"`fill<{dtype}>` of a {value.type.dtype} value",
                              e.args[1].value.span, help="cast the value")
        return Val(TensorT(shape.dims, dtype), zero=known_zero(value))

    def builtin_cumsum(self, e: t.Call) -> Val:
        x = self._tensor_arg(e.args[0])
        if x.is_error or not isinstance(x.type, TensorT) or x.type.rank == 0:
            return ERR if x.is_error else self.error(
                "E2101", "`cumsum` needs a tensor of rank 1 or more", e.args[0].value.span)
        if not self.is_numeric(x.type.dtype):
            return self.error("E2112", f"`cumsum` needs numbers, found {x.type.dtype}",
                              e.args[0].value.span)
        axis = self._axis(e, x.type.rank)
        return ERR if axis is None else Val(x.type)


def _absolute(v: Val) -> Val:
    """`abs` of a literal, and of each value it may take."""
    value = v.const.as_int() if v.const is not None else None
    return Val(v.type, None if value is None else Dim.const(abs(value)),
               abs(v.fconst) if v.fconst is not None else None,
               tuple(_absolute(x) for x in v.alternatives))


__all__ = ["PreludeChecker", "is_scalar", "scalar"]
