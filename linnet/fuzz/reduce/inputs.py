"""Edits of sizes and values: lower generic bindings (or the sizes an entry's signature
writes), simpler dtypes, plainer input values.

Inputs of new shapes are cut from the old ones (`x[:2, :3]`) where every axis shrinks, so
the values that made the case fail stay where they were; otherwise (an axis that grows, as
`C - R` does when `R` shrinks) the old values are repeated to the new size.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

import numpy as np

from ...syntax import tree as t
from ...syntax.edit import nodes, replace, transform
from ..case import Case
from .program import entry_of
from .report import input_names
from .search import DTYPES, Candidate, Current, entry_spec

SIMPLER_DTYPE = {"Float": {"f16": "f32", "bf16": "f32", "f64": "f32"},
                 "Integer": {"i8": "i32", "i16": "i32", "i64": "i32", "u8": "i32",
                             "u16": "i32", "u32": "i32", "u64": "i32"}}
"""For a dtype generic of each kind: the dtype to try in place of another."""
SIMPLER_DTYPE["Numeric"] = {**SIMPLER_DTYPE["Float"], **SIMPLER_DTYPE["Integer"]}
SIMPLER_DTYPE["DType"] = SIMPLER_DTYPE["Numeric"]


def resized(x: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """x cut to `shape` where no axis grows; else its values repeated (zeros if none)."""
    x = np.asarray(x)
    if x.ndim == len(shape) and all(n <= m for n, m in zip(shape, x.shape)):
        return x[tuple(slice(0, n) for n in shape)].copy()
    if x.size == 0:
        return np.zeros(shape, dtype=x.dtype)
    return np.resize(x.reshape(-1), shape).astype(x.dtype)


def _refit(case: Case, spec) -> Case | None:
    """case with its inputs resized to what `spec` expects at its bindings."""
    if spec is None:
        return None
    try:
        if not spec.allows(case.generics):
            return None
        shapes = spec.shapes(case.generics)
    except Exception:  # noqa: BLE001 - an unbound generic, a pack: not this edit's case
        return None
    if len(shapes) != len(case.inputs):
        return None
    return case.with_inputs(tuple(resized(x, shape) for x, (shape, _) in
                                  zip(case.inputs, shapes)))


def smaller_sizes(v: int) -> list[int]:
    """0, 1, half and one less than v, those below it, in that order."""
    out: list[int] = []
    for c in (0, 1, v // 2, v - 1):
        if 0 <= c < v and c not in out:
            out.append(c)
    return out


def dims(cur: Current) -> Iterator[Candidate]:
    """Lower each `Dim` binding of the entry: 0, 1, half, one less."""
    if cur.spec is None:
        return
    for name in cur.spec.dim_generics:
        v = cur.case.generics.get(name)
        for c in smaller_sizes(v) if isinstance(v, int) else ():
            yield Candidate("dims", f"{name} = {c} (was {v})", lambda name=name, c=c: _refit(
                dataclasses.replace(cur.case, generics={**cur.case.generics, name: c}),
                cur.spec))


def signature_sizes(cur: Current) -> Iterator[Candidate]:
    """Lower a size the entry's signature writes as a literal (`Tensor[64, 768; f32]`): in
    the signature alone, then everywhere in the entry (where the body repeats it)."""
    entry = entry_of(cur)
    if cur.spec is None or entry is None:
        return
    sizes: set[int] = set()
    for ty in [p.type for p in entry.params] + [entry.result]:
        for n in nodes(ty):
            if isinstance(n, t.TensorType):
                sizes |= {d.value for d in n.dims if isinstance(d, t.IntLit)}
    for v in sorted(sizes, reverse=True):
        for c in smaller_sizes(v):
            for where, whole in (("the signature", False), ("the entry", True)):
                yield Candidate("dims", f"size {v} -> {c} in {where} of `{entry.name}`",
                                lambda v=v, c=c, whole=whole: _resize_literal(
                                    cur, entry, v, c, whole))


def _resize_literal(cur: Current, entry: t.Function, v: int, c: int, whole: bool
                    ) -> Case | None:
    def swap(n: object) -> object:
        return t.IntLit(c, str(c)) if isinstance(n, t.IntLit) and n.value == v else n

    if whole:
        new_entry = transform(entry, swap)
    else:
        new_entry = dataclasses.replace(
            entry, params=tuple(transform(p, swap) for p in entry.params),
            result=transform(entry.result, swap))
    case = cur.with_module(replace(cur.module, entry, new_entry))
    return _refit(case, entry_spec(case))


def dtypes(cur: Current) -> Iterator[Candidate]:
    """Bind each dtype generic to f32 or i32 instead, the inputs converted."""
    if cur.spec is None:
        return
    for g in cur.spec.dtype_generics:
        old = cur.case.generics.get(g.name)
        new = SIMPLER_DTYPE.get(g.kind, {}).get(old)
        if new is not None:
            yield Candidate("dims", f"{g.name} = {new} (was {old})",
                            lambda g=g, new=new: _rebound_dtype(cur, g.name, new))


def _rebound_dtype(cur: Current, name: str, dtype: str) -> Case | None:
    case = dataclasses.replace(cur.case, generics={**cur.case.generics, name: dtype})
    try:
        shapes = cur.spec.shapes(case.generics)
    except Exception:  # noqa: BLE001
        return None
    numpy = {v: k for k, v in DTYPES.items()}
    return case.with_inputs(tuple(
        np.asarray(x).astype(numpy[d]) if DTYPES.get(np.asarray(x).dtype.name) != d else x
        for x, (_, d) in zip(case.inputs, shapes)))


# ---------------------------------------------------------------- values

def _floats(x: np.ndarray) -> bool:
    return x.dtype.kind == "f" or x.dtype.name == "bfloat16"


PLAINER: tuple[tuple[str, Callable[[np.ndarray], np.ndarray]], ...] = (
    ("zeros", lambda x: np.zeros_like(x)),
    ("ones", lambda x: np.ones_like(x)),
    ("signs (-1, 0, 1)", lambda x: np.sign(np.nan_to_num(x.astype(np.float64))).astype(
        x.dtype) if x.dtype != np.bool_ else x),
    ("integers in [-8, 8]", lambda x: np.clip(np.round(x.astype(np.float64)), -8, 8
                                              ).astype(x.dtype) if x.dtype != np.bool_ else x),
    ("rounded to integers", lambda x: np.round(x.astype(np.float64)).astype(x.dtype)
     if _floats(x) else x),
    ("rounded to one decimal", lambda x: np.round(x.astype(np.float64), 1).astype(x.dtype)
     if _floats(x) else x),
)
"""Plainer values for an input, plainest first; each keeps the dtype and shape."""


def values(cur: Current) -> Iterator[Candidate]:
    """Replace each input by zeros, ones, signs, small integers, rounded values."""
    names = input_names(cur.case)
    for k, x in enumerate(cur.case.inputs):
        label = f"`{names[k]}`" if k < len(names) else f"input {k}"
        for what, plainer in PLAINER:
            yield Candidate("values", f"{label}: {what}",
                            lambda k=k, x=x, plainer=plainer: _with_input(cur.case, k, x,
                                                                          plainer))


def plainness(x: np.ndarray) -> int:
    """How plain x's values are: 0 all zeros, 1 all ones, 2 signs, 3 integers in [-8, 8],
    4 integers, 5 one decimal, 6 anything else. An edit of values must lower it, so that
    no two undo each other."""
    x = np.asarray(x)
    if x.dtype == np.bool_:
        return 0 if not x.any() else 1 if x.all() else 6
    v = x.astype(np.float64)
    finite = bool(np.isfinite(v).all())
    for level, test in enumerate((lambda: (v == 0).all(), lambda: (v == 1).all(),
                                  lambda: np.isin(v, (-1.0, 0.0, 1.0)).all(),
                                  lambda: finite and (v == np.round(v)).all()
                                  and (np.abs(v) <= 8).all(),
                                  lambda: finite and (v == np.round(v)).all(),
                                  lambda: finite and (np.abs(v - np.round(v, 1)) <= 1e-6 * (
                                      1 + np.abs(v))).all())):
        if test():
            return level
    return 6


def _with_input(case: Case, k: int, x: np.ndarray, plainer) -> Case | None:
    x = np.asarray(x)
    new = np.asarray(plainer(x))
    if new.dtype != x.dtype or new.shape != x.shape or plainness(new) >= plainness(x):
        return None
    return case.with_inputs(case.inputs[:k] + (new,) + case.inputs[k + 1:])
