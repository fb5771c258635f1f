"""The prelude (docs/language.md, "The prelude"): casts, math, `select`, shifts, shapes, `iota`,
`fill`, `cumsum`, `next_pow2`, `prod`. Each builtin is one small method; dtypes come from the
checker's type of the call (`cast<T>`, `iota<T>`, `fill<T>`) or of its operands."""

from __future__ import annotations

import numpy as np

from ...check.types import LitT
from ...syntax import tree as t
from .arith import MATH, absolute, fold_math, fold_shift, math_fn, minmax, shift
from .dtypes import FLOAT, Lit, cast, int_range, lit_array, to_dtype
from .errors import OracleError, OracleUndefined
from .reductions import cumsum


class PreludeEval:
    def builtin(self, e: t.Call):
        name = e.callee
        method = getattr(self, "builtin_" + ("math" if name in MATH else name), None)
        if method is None:
            raise OracleError(f"the builtin `{name}`" + (" (kernels are not evaluated)"
                                                         if name in ("load", "program_id")
                                                         else ""))
        return method(e)

    def _args(self, e: t.Call) -> list:
        return [self.expr(a.value) for a in e.args if a.name is None]

    def _named(self, e: t.Call, name: str):
        arg = next((a for a in e.args if a.name == name), None)
        return None if arg is None else self.expr(arg.value)

    # ------------------------------------------------------- elementwise
    def builtin_cast(self, e: t.Call):
        dst = self.dtype_of(e)
        (x,) = self._args(e)
        if isinstance(x, Lit):
            src = "i64" if x.kind == "int" else "f64"
            return cast(lit_array(x, src, self.prec), src, dst, self.prec)
        return cast(np.asarray(x), self.dtype_of(e.args[0].value), dst, self.prec)

    def builtin_math(self, e: t.Call):
        (x,) = self._args(e)
        if isinstance(x, Lit):
            return fold_math(e.callee, x)
        return math_fn(e.callee, x, self.dtype_of(e), self.prec)

    def builtin_abs(self, e: t.Call):
        (x,) = self._args(e)
        if isinstance(x, Lit):
            return Lit(abs(x.value), x.kind)
        return absolute(x, self.dtype_of(e), self.prec)

    def builtin_min(self, e: t.Call):
        return self._min_max(e)

    def builtin_max(self, e: t.Call):
        return self._min_max(e)

    def _min_max(self, e: t.Call):
        a, b = self._args(e)
        if isinstance(a, Lit) and isinstance(b, Lit):
            pick = min if e.callee == "min" else max
            return Lit.of(pick(a.value, b.value)) if a.kind == b.kind else Lit(
                float(pick(a.value, b.value)), "float")
        dtype = self.operand_dtype(e.args[0].value, e.args[1].value)
        return minmax(e.callee, to_dtype(a, dtype, self.prec), to_dtype(b, dtype, self.prec))

    def builtin_select(self, e: t.Call):
        c, a, b = self._args(e)
        if isinstance(self.ty(e), LitT):  # two literals on a scalar condition: a literal
            return a if bool(np.asarray(c).item()) else b
        dtype = self.dtype_of(e)
        return np.asarray(np.where(c, to_dtype(a, dtype, self.prec),
                                   to_dtype(b, dtype, self.prec)))

    def builtin_shl(self, e: t.Call):
        return self._shift(e)

    def builtin_shr(self, e: t.Call):
        return self._shift(e)

    def _shift(self, e: t.Call):
        x, n = self._args(e)
        if isinstance(x, Lit) and isinstance(n, Lit):
            return fold_shift(e.callee, x, n)
        dtype = self.operand_dtype(e.args[0].value, e.args[1].value)
        return shift(e.callee, to_dtype(x, dtype, self.prec), to_dtype(n, dtype, self.prec),
                     dtype)

    # ------------------------------------------------------------- shapes
    def builtin_reshape(self, e: t.Call):
        x, shape = self._args(e)
        return np.reshape(self._typed(x, e), tuple(shape))

    def builtin_broadcast_to(self, e: t.Call):
        x, shape = self._args(e)
        return np.broadcast_to(self._typed(x, e), tuple(shape)).copy()

    def builtin_permute(self, e: t.Call):
        x, perm = self._args(e)
        return np.transpose(np.asarray(x), tuple(perm))

    def builtin_concat(self, e: t.Call):
        parts = [np.asarray(p) for p in self._args(e)]
        axis = self._axis(e, parts[0].ndim)
        return np.concatenate(parts, axis=axis)

    def _axis(self, e: t.Call, rank: int) -> int:
        k = self._named(e, "axis")
        k = 0 if k is None else int(k.value if isinstance(k, Lit) else np.asarray(k).item())
        return k % rank

    def builtin_iota(self, e: t.Call):
        (n,) = self._args(e)
        n = int(n.value if isinstance(n, Lit) else np.asarray(n).item())
        dtype = self.dtype_of(e)
        if dtype not in FLOAT and n > 0 and n - 1 > int_range(dtype)[1]:
            raise OracleUndefined(f"iota<{dtype}>({n}) past the dtype's largest value")
        return np.arange(n, dtype=np.int64).astype(self.prec.np(dtype))

    def builtin_fill(self, e: t.Call):
        shape, value = self._args(e)
        dtype = self.dtype_of(e)
        return np.full(tuple(shape), to_dtype(value, dtype, self.prec),
                       dtype=self.prec.np(dtype))

    def builtin_cumsum(self, e: t.Call):
        (x,) = self._args(e)
        x = np.asarray(x)
        return cumsum(x, self._axis(e, x.ndim), self.dtype_of(e), self.prec)

    def builtin_next_pow2(self, e: t.Call):
        (d,) = self._args(e)
        n = int(d.value if isinstance(d, Lit) else np.asarray(d).item())
        p = 1
        while p < n:
            p *= 2
        return Lit(p, "int")

    def builtin_prod(self, e: t.Call):
        """`prod(S)`: the product of a shape's sizes (1 for an empty pack)."""
        (shape,) = self._args(e)
        return Lit(int(np.prod(shape, dtype=np.int64)), "int")

    def _typed(self, x, e: t.Call) -> np.ndarray:
        return to_dtype(x, self.dtype_of(e), self.prec) if isinstance(x, Lit) else np.asarray(x)


__all__ = ["PreludeEval"]
