"""Calls of `fn`s and `op`s: generics inferred or written, arguments, callee `where`.

A callee's `where` clauses, with its generics replaced by the call's values,
must be provable from the caller's own facts (E2206).
"""

from __future__ import annotations

from ..syntax import tree as t
from .scope import CALLABLE_BUILTINS
from .signatures import Binding, Signature, match_dims, substitute, where_help, where_note
from .types import count, compile_time_int, ERR, DTYPES, DTypeT, LitT, ShapeT, TensorT, TupleT, Type, Val
from .unify import Problem, dtype_in_kind, literal_fits, same_type_problem


class CallChecker:
    def call(self, e: t.Call) -> Val:
        # A local or generic named like a builtin was reported where it was declared (E1207);
        # a call of that name still means the builtin, so the mistake is reported once.
        hidden = e.callee in CALLABLE_BUILTINS and e.callee not in self.frame.globals.items
        if not hidden and (self.frame.lookup(e.callee) is not None
                           or e.callee in self.frame.globals.consts
                           or e.callee in self.frame.generics):
            return self.error("E2106", f"`{e.callee}` is not a function", e.callee_span,
                              "a value, not a function")
        item = self.frame.globals.items.get(e.callee)
        if item is None:
            return self.builtin(e)  # type: ignore[attr-defined]
        if isinstance(item, t.Kernel):
            return self.error("E2126", f"`{e.callee}` is a kernel and cannot be called",
                              e.callee_span, "a kernel",
                              help="bind it to an op (`op f(...) -> T kernel k<...>`) and "
                                   "call the op")
        if isinstance(item, t.Const):
            return self.error("E2106", f"`{e.callee}` is a constant, not a function",
                              e.callee_span)
        if isinstance(item, t.BlockDef):
            return self.error("E2106", f"`{e.callee}` is a block, not a function",
                              e.callee_span, "a block",
                              help="a block is instantiated as a `sub` of another block")
        if self.frame.kernel is not None and isinstance(item, t.Op):
            return self.error("E2127", "a kernel cannot call an op", e.callee_span,
                              help="kernels may call `fn`s, which are inlined")
        self.calls.append((e.callee, e.callee_span))  # for the recursion check
        sig = self.signatures.get(e.callee)
        if sig is not None and sig.result is None and self.infer_result is not None:
            self.infer_result(sig)
        if sig is None or sig.result is None:
            return ERR
        return self.user_call(e, sig)

    def user_call(self, e: t.Call, sig: Signature) -> Val:
        if any(a.name is not None for a in e.args):
            bad = next(a for a in e.args if a.name is not None)
            return self.error("E2102", f"unknown named argument `{bad.name}`", bad.span,
                              help=f"`{sig.name}` takes its arguments by position")
        if len(e.args) != len(sig.params):
            return self.error("E2102", f"`{sig.name}` takes {len(sig.params)} argument"
                              f"{'s' if len(sig.params) != 1 else ''}, found {len(e.args)}",
                              e.span, help=signature_help(sig))
        args = [self.expr(a.value) for a in e.args]
        if any(v.is_error for v in args) or any(p is None for p in sig.params):
            return ERR
        binding = self.bind_generics(e, sig, args)
        if binding is None:
            return ERR
        for arg, param, val in zip(e.args, sig.params, args):
            if not self.accepts(substitute(param, binding), val, arg.value):
                return ERR
        if not self.callee_where_holds(e, sig, binding):
            return ERR
        if self.call_bindings is not None:
            self.call_bindings[id(e)] = binding
        return Val(substitute(sig.result, binding))  # type: ignore[arg-type]

    def bind_generics(self, e: t.Call, sig: Signature, args: list[Val]) -> Binding | None:
        binding = Binding()
        if not self._explicit_generics(e, sig, binding):
            return None
        names = {g.name for g in sig.generics}
        for param, val in zip(sig.params, args):
            self._infer_from(param, val.type, names, binding)
        for g in sig.generics:
            if not binding.bound(g.name) and not self._use_default(g, binding):
                return self.error("E2110", f"cannot infer the generic `{g.name}` of "
                                  f"`{sig.name}`", e.span, "write it",
                                  help=f"write it: `{sig.name}<...>(...)`") and None
        return binding if self._kinds_hold(e, sig, binding) else None

    def _explicit_generics(self, e: t.Call, sig: Signature, b: Binding) -> bool:
        given = e.generics or ()
        if len(given) > len(sig.generics):
            self.error("E2111", f"`{sig.name}` has {count(len(sig.generics), 'generic')}, "
                       f"{len(given)} given", e.span, help=signature_help(sig))
            return False
        for g, arg in zip(sig.generics, given):
            if not self.bind_generic_arg(g, arg, b):
                return False
        return True

    def bind_generic_arg(self, g: t.Generic, arg: t.Expr, b: Binding) -> bool:
        """Bind one written generic argument, checking it has the generic's kind."""
        v = self.expr(arg)
        if v.is_error:
            return False
        if g.kind == "Dim" and compile_time_int(v) is not None:
            b.dims[g.name] = compile_time_int(v)
            return True
        if g.kind == "Shape" and isinstance(v.type, ShapeT):
            b.packs[g.name] = v.type.dims
            return True
        if g.kind not in ("Dim", "Shape") and isinstance(v.type, DTypeT):
            b.dtypes[g.name] = v.type.dtype
            return True
        self.error("E2111", f"generic `{g.name}` is a {g.kind}, found {v.type}", arg.span,
                   f"this is {v.type}")
        return False

    def _infer_from(self, param: Type | None, got: Type, names: set[str], b: Binding) -> None:
        if isinstance(param, TensorT) and isinstance(got, TensorT):
            if param.dtype in names and param.dtype not in b.dtypes:
                b.dtypes[param.dtype] = got.dtype
            match_dims(param.dims, got.dims, names, b)
        elif isinstance(param, TupleT) and isinstance(got, TupleT):
            for p, g in zip(param.items, got.items):
                self._infer_from(p, g, names, b)

    def _use_default(self, g: t.Generic, b: Binding) -> bool:
        if g.default is None:
            return False
        return self.bind_generic_arg(g, g.default, b)

    def _kinds_hold(self, e: t.Call, sig: Signature, b: Binding) -> bool:
        for g in sig.generics:
            dtype = b.dtypes.get(g.name)
            if dtype is not None and g.kind in ("Numeric", "Integer", "Float"):
                if not dtype_in_kind(dtype, g.kind, self.frame.dtype_kind(dtype)):
                    self.error("E2112", f"`{sig.name}` needs {g.name}: {g.kind}, found {dtype}",
                               e.span, f"{dtype} is not {g.kind}")
                    return False
        return True

    def accepts(self, want: Type | None, got: Val, where: t.Expr) -> bool:
        """Can a value of got's type be passed where want is required?"""
        if isinstance(got.type, LitT) and isinstance(want, TensorT) and want.rank == 0:
            p = literal_fits(got, want.dtype, self.frame.dtype_kind(want.dtype))
            return not (p and self.problem(p, where.span))
        if isinstance(want, TensorT) and isinstance(got.type, TensorT):
            p = same_type_problem(want, got.type, self.frame.facts)
            return not (p and self.problem(p, where.span))
        if isinstance(want, TupleT) and isinstance(got.type, TupleT) \
                and len(want.items) == len(got.type.items):
            return all(self.accepts(w, Val(g), where) for w, g in zip(want.items, got.type.items))
        self.error("E2101", f"expected {want}, found {got.type}", where.span,
                   f"this is {got.type}")
        return False

    def callee_where_holds(self, e: t.Call, sig: Signature, b: Binding) -> bool:
        sizes = b.sizes()
        for left, op, right, written in sig.where:
            l, r = left.substitute(sizes), right.substitute(sizes)
            if not self.frame.facts.prove(l, op, r):
                self.error("E2206", f"cannot prove `{l} {op} {r}`, required by `{sig.name}`",
                           e.span, "at this call",
                           help=where_help(l, op, r, "the caller's"),
                           notes=(where_note(sig.name, written),))
                return False
        return True


def signature_help(sig: Signature) -> str:
    """The callee's name, generics and typed parameters, in backticks: the help of every
    error about a call's arguments."""
    params = ", ".join(f"{p.name}: {ty}" for p, ty in zip(sig.item.params, sig.params))
    generics = ", ".join(("*" if g.pack else "") + f"{g.name}: {g.kind}" for g in sig.generics)
    return f"`{sig.name}{'<' + generics + '>' if generics else ''}({params})`"


__all__ = ["CallChecker", "DTYPES", "Problem", "signature_help"]
