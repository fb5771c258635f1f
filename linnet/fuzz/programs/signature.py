"""A helper's generics, mapped from its caller's dims and dtype, and the generator's state
while the helper's body is written.

Why a module of its own: `fn` and `op` helpers (`calls.py`), ops with `grad` clauses
(`grads.py`) and kernels (`kernels.py`, `kernel_loops.py`) all declare generics this way.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

from ...syntax import tree as t
from .scope import Gen
from .types import DType, Dim, Ty


class Signature:
    """The generics of a helper, mapped from the caller's dims and dtype."""

    def __init__(self, g: Gen) -> None:
        self.g = g
        self.dims: dict[str, Dim] = {}     # caller key -> helper dim
        self.back: dict[str, Dim] = {}     # helper key -> caller dim
        self.dtypes: dict[DType, DType] = {}  # caller dtype -> helper dtype
        self.dtype_back: dict[DType, DType] = {}
        self.generics: list[t.Generic] = []
        self.explicit: list[t.Expr] = []  # the caller's value of each generic, in order

    def dim(self, d: Dim) -> Dim:
        if d.literal:
            return d
        if d.key not in self.dims:
            name = self.g.fresh("D")
            self.dims[d.key] = Dim(name, d.value, t.Name(name))
            self.back[name] = d
            self.generics.append(t.Generic(name, "Dim"))
            self.explicit.append(d.node)
        return self.dims[d.key]

    def extra_dim(self, value: int, node: t.Expr) -> Dim:
        name = self.g.fresh("K")
        dim = Dim(name, value, t.Name(name))
        self.generics.append(t.Generic(name, "Dim"))
        self.explicit.append(node)
        return dim

    def dtype(self, d: DType) -> DType:
        return self.dtypes.get(d, d)

    def generic_dtype(self, d: DType, kind: str) -> None:
        name = self.g.fresh("T")
        self.dtypes[d] = DType(name, d.name, kind)
        self.dtype_back[self.dtypes[d]] = d
        self.generics.append(t.Generic(name, kind))
        self.explicit.append(t.Name(d.text))

    def ty(self, ty: Ty) -> Ty:
        return Ty(tuple(self.dim(d) for d in ty.dims), self.dtype(ty.dtype))

    def caller_ty(self, ty: Ty) -> Ty:
        dims = tuple(d if d.literal else self.back[d.key] for d in ty.dims)
        return Ty(dims, self.dtype_back.get(ty.dtype, ty.dtype))

    def expressible(self, ty: Ty) -> bool:
        return all(d.literal or d.key in self.back for d in ty.dims)


@contextlib.contextmanager
def inside(g: Gen, dims: list[Dim], float_generic: DType | None) -> Iterator[None]:
    """While a helper's body is written, only its own dims and dtypes exist."""
    saved = g.dims, g.positive, g.float_generic
    g.dims, g.positive, g.float_generic = dims, set(), float_generic
    try:
        yield
    finally:
        g.dims, g.positive, g.float_generic = saved
