"""Kernel bodies: `program_id`, `load`, `store` and the atomics (E2127, E2101).

A memory index takes one integer scalar or integer tile per axis, and each
tile adds its axes in order: `x[rows, cols]` with `rows: [BM]`, `cols: [BN]`
reads a `[BM, BN]` tile. A mask is a bool scalar or a bool tile of exactly
the accessed shape.
"""

from __future__ import annotations

from ..syntax import tree as t
from .types import count, compile_time_int, ERR, LitT, MemT, TensorT, Val, is_scalar, scalar
from .unify import literal_fits, shape_text, shapes_equal

ATOMIC_DTYPES = {"f32", "i32", "u32", "i64", "u64"}


class KernelRules:
    def kernel_builtin(self, e: t.Call) -> Val:
        if self.frame.kernel is None:
            return self.error("E2127", f"`{e.callee}` is only available inside a kernel",
                              e.callee_span, "outside a kernel")
        if e.callee == "program_id":
            return self._program_id(e)
        return self._load(e)

    def _program_id(self, e: t.Call) -> Val:
        if len(e.args) != 1 or e.args[0].name is not None:
            return self.error("E2102", "`program_id` takes one axis", e.span)
        v = self.expr(e.args[0].value)
        axis = v.const.as_int() if compile_time_int(v) is not None else None
        if axis not in (0, 1, 2):
            return self.error("E2127", "`program_id` takes a literal axis 0, 1 or 2",
                              e.args[0].span, "invalid axis")
        grid = len(self.frame.kernel.grid)
        if axis >= grid:
            return self.error("E2127", f"`program_id({axis})` in a kernel whose grid has "
                              f"{count(grid, 'axis', 'axes')}", e.args[0].span, "no such axis",
                              help=f"the grid's axes are 0 to {grid - 1}")
        return Val(scalar("i32"))

    def _load(self, e: t.Call) -> Val:
        if not 1 <= len(e.args) <= 3 or any(a.name for a in e.args):
            return self.error("E2102", "`load` takes a memory access, then an optional mask "
                              "and value", e.span, help="write `load(x[i, j], mask, other)`")
        access = self.memory_access(e.args[0].value, "param")
        if access is None:
            return ERR
        mem, shape = access
        if len(e.args) > 1 and not self.check_mask(e.args[1].value, shape):
            return ERR
        if len(e.args) > 2 and not self._other_fits(e.args[2].value, mem):
            return ERR
        return Val(TensorT(shape, mem.dtype))

    def _literal_fits(self, v: Val, dtype: str, e: t.Expr) -> bool:
        p = literal_fits(v, dtype, self.frame.dtype_kind(dtype))
        return not (p and self.problem(p, e.span))

    def _other_fits(self, e: t.Expr, mem: TensorT) -> bool:
        v = self.expr(e)
        if v.is_error or isinstance(v.type, LitT):
            return not v.is_error and self._literal_fits(v, mem.dtype, e)
        if not is_scalar(v.type, mem.dtype):
            self.error("E2101", f"`other` must be a {mem.dtype} scalar, found {v.type}", e.span)
            return False
        return True

    def memory_access(self, e: t.Expr, role: str) -> tuple[TensorT, tuple] | None:
        """The tensor in memory and the accessed tile shape of `x[i, j]`."""
        if not isinstance(e, t.Index) or not isinstance(e.base, t.Name):
            self.error("E2127", "expected a memory access such as `x[row, cols]`", e.span)
            return None
        local = self.frame.lookup(e.base.id)
        if local is None or not isinstance(local.val.type, MemT):
            self.error("E2127" if local is not None else "E1201",
                       f"`{e.base.id}` is not a {'tensor parameter' if role == 'param' else 'kernel result'}",
                       e.base.span, help="`load` reads parameters; `store` and the atomics "
                                         "write results")
            return None
        mem = local.val.type
        if mem.role != role:
            self.error("E2127", f"`{e.base.id}` is a kernel {mem.role}; "
                       f"{'`load` reads parameters' if role == 'param' else 'only results are written'}",
                       e.base.span)
            return None
        return self._tile_shape(e, mem.tensor)

    def _tile_shape(self, e: t.Index, mem: TensorT) -> tuple[TensorT, tuple] | None:
        dots = [i for i in e.items if isinstance(i, t.EllipsisIx)]
        if dots:  # `...` would stand for whole axes, which a memory index cannot take
            self.error("E2127", "`...` in a memory index", dots[0].span, "not allowed here",
                       help="a memory index names every axis with positions: build them "
                            "with `iota` and offsets")
            return None
        if len(e.items) != mem.rank:
            self.error("E2204", f"{count(len(e.items), 'index', 'indices')} for a tensor of rank {mem.rank}",
                       e.span, f"this is {mem}")
            return None
        shape: list = []
        for item in e.items:
            if isinstance(item, (t.Slice, t.PackIx)):
                self.error("E2127", "slices and packs are not allowed in a memory index",
                           item.span, help="build positions with `iota` and offsets")
                return None
            v = self.expr(item)
            if v.is_error:
                return None
            if isinstance(v.type, LitT) and v.type.kind == "int":
                continue
            if not isinstance(v.type, TensorT) or not self.is_integer(v.type.dtype):
                self.error("E2101", f"a memory index must be an integer scalar or tile, found "
                           f"{v.type}", item.span, f"this is {v.type}")
                return None
            shape.extend(v.type.dims)
        return mem, tuple(shape)

    def check_mask(self, e: t.Expr, shape: tuple) -> bool:
        v = self.expr(e)
        if v.is_error:
            return False
        if is_scalar(v.type, "bool"):
            return True
        if isinstance(v.type, TensorT) and v.type.dtype == "bool" \
                and shapes_equal(v.type.dims, shape, self.frame.facts):
            return True
        self.error("E2101", f"a mask must be a bool scalar or a bool tile of shape "
                   f"{shape_text(shape)}, found {v.type}", e.span, f"this is {v.type}")
        return False

    # ------------------------------------------------------------ effects
    def effect(self, s: t.Effect) -> None:
        target = s.args[0].value if s.args else None
        if isinstance(target, t.Index) and isinstance(target.base, t.Name):
            self.frame.targets.add(target.base.id)
        if self.frame.kernel is None:
            self.error("E2127", f"`{s.kind}` is only allowed inside a kernel", s.span,
                       "outside a kernel", help="an op or fn returns its result instead")
            return
        if not 2 <= len(s.args) <= 3 or any(a.name for a in s.args):
            self.error("E2102", f"`{s.kind}` takes a result access, a value and an optional "
                       "mask", s.span)
            return
        access = self.memory_access(s.args[0].value, "result")
        if access is None:
            return
        mem, shape = access
        if self._value_fits(s.args[1].value, mem, shape) and len(s.args) == 3:
            self.check_mask(s.args[2].value, shape)
        self._one_kind_of_write(s, mem)

    def _value_fits(self, e: t.Expr, mem: TensorT, shape: tuple) -> bool:
        v = self.expr(e)
        if v.is_error or isinstance(v.type, LitT):
            return not v.is_error and self._literal_fits(v, mem.dtype, e)
        if not isinstance(v.type, TensorT):
            self.error("E2101", f"cannot store {v.type}", e.span)
            return False
        if v.type.dtype != mem.dtype:
            self.error("E2103", f"storing {v.type.dtype} into {mem.dtype} memory", e.span,
                       f"this is {v.type}", help=f"cast it: `cast<{mem.dtype}>(...)`")
            return False
        if v.type.rank and not shapes_equal(v.type.dims, shape, self.frame.facts):
            self.error("E2202", f"storing {v.type} into a {shape_text(shape)} access", e.span,
                       f"this is {v.type}", help="the value must be a scalar or a tile of "
                                                 "the accessed shape")
            return False
        return True

    def _one_kind_of_write(self, s: t.Effect, mem: TensorT) -> None:
        name = s.args[0].value.base.id  # type: ignore[union-attr]
        if s.kind != "store":
            allowed = ATOMIC_DTYPES | ({"f16"} if s.kind == "atomic_add" else set())
            if mem.dtype not in allowed:
                self.error("E2127", f"`{s.kind}` does not support {mem.dtype}", s.span,
                           help=f"supported: {', '.join(sorted(allowed))}")
        previous = self.frame.writes.setdefault(name, s.kind)
        if previous != s.kind:
            self.error("E2127", f"result `{name}` is written with both `{previous}` and "
                       f"`{s.kind}`", s.span, help="a result takes one kind of write")
