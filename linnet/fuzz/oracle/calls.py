"""Calls of `fn`s and `op`s, and the machine that runs instances.

An op's value is its body (docs/language.md, "Items"); its kernel and `grad` clause are not
read. Each callee is the checker's instance of it at the call's generic binding, made once
per binding. Inside index notation a call takes scalars, but the oracle's scalars there are
arrays over the index space: the callee runs once over the arrays (its arithmetic
broadcasts), or, where it needs one scalar (an `if` condition, a loop, a runtime index,
index notation of its own), once per element.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ...check.instance import Analysis
from ...check.signatures import Binding
from ...check.types import TensorT, materialize
from ...syntax import tree as t
from .block_tree import instantiate_block_fn
from .dtypes import Lit, Precision
from .errors import OracleError
from .exprs import ExprEval, NeedScalar
from .notation import NotationEval
from .prelude import PreludeEval
from .stmts import StmtEval
from .values import ValueEval


class Body(ValueEval, ExprEval, NotationEval, PreludeEval, StmtEval):
    """One instance's body being evaluated."""

    def user_call(self, e: t.Call):
        item = self.globals.items[e.callee]
        binding = self.inst.call_bindings.get(id(e))
        if binding is None:
            raise OracleError(f"no generic binding recorded for the call of `{e.callee}`")
        callee = self.machine.instance(item, binding)
        args = self.call_args(item.params, e.args)
        args = [self.conform(a, p) for a, p in zip(args, callee.signature.params)]
        if self.ix is None and not self.elementwise:
            return self.machine.run(callee, args)
        try:
            return self.machine.run(callee, args, elementwise=True)
        except NeedScalar:
            if self.elementwise and self.ix is None:
                raise
            return self._per_element(callee, args)

    def _per_element(self, callee, args: list):
        """The callee once per element of its broadcast (scalar) arguments."""
        arrays = [np.asarray(a) if not isinstance(a, Lit) else a for a in args]
        shape = np.broadcast_shapes(*(a.shape for a in arrays if not isinstance(a, Lit)))
        wide = [a if isinstance(a, Lit) else np.broadcast_to(a, shape) for a in arrays]
        result = callee.signature.result
        if not isinstance(result, TensorT) or result.rank != 0:
            raise OracleError(f"`{callee.item.name}` called in index notation returns "
                              f"{result}, not a scalar")
        out = np.empty(shape, dtype=self.prec.np(result.dtype))
        for pos in np.ndindex(*shape):
            one = [a if isinstance(a, Lit) else np.asarray(a[pos]) for a in wide]
            out[pos] = self.machine.run(callee, one)
        return out


class Machine:
    """The evaluation of one program: its analysis, the precision, the instances made."""

    def __init__(self, analysis: Analysis, prec: Precision) -> None:
        self.analysis = analysis
        self.prec = prec
        self._instances: dict = getattr(analysis, "_oracle_instances", None) or {}
        analysis._oracle_instances = self._instances  # type: ignore[attr-defined]

    def instance(self, item, binding):
        key = (id(item), _binding_key(binding))
        found = self._instances.get(key)
        if found is None:
            found = self.analysis.instantiate(item, binding)
            if found.diagnostics:
                d = found.diagnostics[0]
                raise OracleError(f"`{item.name}` at this binding: {d.code} {d.message}")
            found = with_result(found)
            self._instances[key] = found
        return found

    def block_instance(self, node, fn, own):
        """A block function of the instance `node` at its own generics' values `own`."""
        binding = Binding({**node.binding.dims, **own.dims}, {**node.binding.dtypes,
                                                              **own.dtypes})
        key = (id(fn), id(node.info), _binding_key(binding))
        found = self._instances.get(key)
        if found is None:
            found = instantiate_block_fn(node.info, node.module, fn, binding)
            if found.diagnostics:
                d = found.diagnostics[0]
                raise OracleError(f"`{fn.name}` at this binding: {d.code} {d.message}")
            found = with_result(found)
            self._instances[key] = found
        return found

    def run(self, inst, args: list, elementwise: bool = False):
        body = Body(self, inst, elementwise)
        for p, ty, value in zip(inst.item.params, inst.signature.params, args):
            body.bind(p.name, body.conform(value, ty))
        return body.conform(body.run_body(inst.item.body), inst.signature.result)


def with_result(inst):
    """The instance with its result type: a `fn` or `entry` (of a module or of a block)
    without `-> T` returns the type its final `return` has in this instance, as the
    checker infers it (linnet/check/checker.py, block_bodies.py)."""
    sig = inst.signature
    if sig.result is not None or isinstance(inst.item, t.Kernel):
        return inst
    last = inst.item.body[-1] if inst.item.body else None
    value = inst.types.get(id(last.value)) if isinstance(last, t.Return) else None
    if value is None or value.is_error:
        raise OracleError(f"`{inst.item.name}` returns no type the checker knows")
    return replace(inst, signature=replace(sig, result=materialize(value)))


def _binding_key(b) -> tuple:
    return (tuple(sorted((k, str(v)) for k, v in b.dims.items())),
            tuple(sorted(b.dtypes.items())),
            tuple(sorted((k, tuple(map(str, v))) for k, v in b.packs.items())))
