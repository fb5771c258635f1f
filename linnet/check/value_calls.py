"""Calls with named arguments and defaults, struct construction, and `...` in indices.

A mixin of `BodyChecker` (before `CallChecker` and `NotationChecker`, whose methods
it widens). `order_args` is shared with `elaborate`: both read a call's arguments
in the callee's parameter order the same way.
"""

from __future__ import annotations

from ..diagnostics import Span
from ..syntax import tree as t
from .calls import signature_help
from .signatures import Binding, Signature, substitute
from .types import ERR, PackDim, TensorT, Val, count

Slots = list  # per parameter: the expression given for it, or None


def order_args(params: tuple[t.Param, ...], args: tuple[t.Arg, ...], callee: str
               ) -> tuple[Slots | None, tuple[str, Span, str] | None]:
    """The arguments in parameter order: positional first, then named. On a mistake,
    (None, (message, span, help)) for E2102; the span is None for a mistake of the whole
    call (too many arguments)."""
    slots: Slots = [None] * len(params)
    names = [p.name for p in params]
    named = False
    for k, arg in enumerate(args):
        if arg.name is None:
            if named:
                return None, ("a positional argument after a named one", arg.span,
                              "write positional arguments first")
            if k >= len(params):  # reported at the whole call, with the signature
                return None, (f"`{callee}` takes {count(len(params), 'argument')}, found "
                              f"{len(args)}", None, "")
            slots[k] = arg.value
            continue
        named = True
        if arg.name not in names:
            return None, (f"`{callee}` has no parameter `{arg.name}`", arg.span,
                          f"its parameters: {', '.join(names) or 'none'}")
        if slots[names.index(arg.name)] is not None:
            return None, (f"`{arg.name}` is given twice", arg.span, "give each argument once")
        slots[names.index(arg.name)] = arg.value
    return slots, None


def filled(params: tuple[t.Param, ...], slots: Slots) -> list[t.Expr | None]:
    """Each parameter's expression: the argument given, else its default (None: missing)."""
    return [given if given is not None else p.default for p, given in zip(params, slots)]


class ValueCallChecker:
    def call(self, e: t.Call) -> Val:
        item = self.frame.globals.items.get(e.callee)
        if self.frame.lookup(e.callee) is None and e.callee not in self.frame.generics:
            if isinstance(item, t.Struct):
                return self.struct_call(e, item)
            if isinstance(item, (t.TypeAlias, t.Enum)):
                return self.error("E2106", f"`{e.callee}` is a type, not a function",
                                  e.callee_span, "a type")
        return super().call(e)

    def user_call(self, e: t.Call, sig: Signature) -> Val:
        params = sig.item.params
        slots, mistake = order_args(params, e.args, sig.name)
        if mistake is not None:
            return self.error("E2102", mistake[0], mistake[1] or e.span,
                              help=mistake[2] or signature_help(sig))
        exprs = filled(params, slots)
        missing = [p.name for p, x in zip(params, exprs) if x is None]
        if missing:
            positional = all(a.name is None for a in e.args)
            message = (f"`{sig.name}` takes {count(len(params), 'argument')}, found "
                       f"{len(e.args)}" if positional else
                       f"missing argument `{missing[0]}` of `{sig.name}`")
            return self.error("E2102", message, e.span, help=signature_help(sig))
        args = [self.expr(x) for x in exprs]
        if any(v.is_error for v in args) or any(p is None for p in sig.params):
            return ERR
        binding = self.bind_generics(e, sig, args)
        if binding is None:
            return ERR
        for x, param, val in zip(exprs, sig.params, args):
            if not self.accepts(substitute(param, binding), val, x):
                return ERR
        if not self.callee_where_holds(e, sig, binding):
            return ERR
        if self.call_bindings is not None:
            self.call_bindings[id(e)] = binding
        return Val(substitute(sig.result, binding))

    def struct_call(self, e: t.Call, item: t.Struct) -> Val:
        """`S(k = a, v = b)`: every field once, by name; generics written or inferred."""
        positional = next((a for a in e.args if a.name is None), None)
        if positional is not None:
            return self.error("E2102", f"struct `{item.name}` is built by name", positional.span,
                              "a positional argument",
                              help=f"name each field: `{item.name}({item.fields[0].name} = ...)`"
                              if item.fields else f"`{item.name}()`")
        slots, mistake = order_args(item.fields, e.args, item.name)
        if mistake is not None:
            return self.error("E2102", mistake[0].replace("parameter", "field"),
                              mistake[1] or e.span,
                              help=mistake[2].replace("parameters", "fields"))
        missing = [f.name for f, x in zip(item.fields, slots) if x is None]
        if missing:
            return self.error("E2102", f"missing field `{missing[0]}` of `{item.name}`", e.span,
                              help="a struct is built with every field, each once")
        declared = self.declared_type(item)
        args = [self.expr(x) for x in slots]
        if declared is None or any(v.is_error for v in args):
            return ERR
        binding = self.struct_generics(e, item, declared, args)
        if binding is None:
            return ERR
        for x, (name, ty), val in zip(slots, declared.fields, args):
            want = substitute(ty, binding)
            if not self.accepts_quietly(want, val):
                got = val.type
                return self.error("E2101", f"field `{name}` of `{item.name}` is {want}, found "
                                  f"{got}", x.span, f"this is {got}")
        return Val(substitute(declared, binding))

    def struct_generics(self, e: t.Call, item: t.Struct, declared, args: list[Val]
                        ) -> Binding | None:
        b = self.written_generics(item, e.generics or (), e)
        if b is None:
            return None
        names = {g.name for g in item.generics}
        for (_, ty), val in zip(declared.fields, args):
            self._infer_from(ty, val.type, names, b)
        for g in item.generics:
            if not b.bound(g.name) and not self._use_default(g, b):
                self.error("E2110", f"cannot infer the generic `{g.name}` of `{item.name}`",
                           e.span, "write it", help=f"write it: `{item.name}<...>(...)`")
                return None
        return b if self.generic_kinds_hold(item, b, e) else None

    # ------------------------------------------------------------------- `...`
    def index(self, e: t.Index) -> Val:
        dots = [i for i in e.items if isinstance(i, t.EllipsisIx)]
        if not dots:
            return super().index(e)
        if len(dots) > 1:
            return self.error("E2204", "`...` more than once in one index", dots[1].span,
                              help="`...` stands for all the axes not written, once")
        if self.ix is not None:  # each access of index notation names every axis
            return self.error("E3104", "`...` in index notation", dots[0].span,
                              "not allowed in index notation",
                              help="name every axis, with a shape pack index (`x[*s, j]`) "
                              "for a run of them; or index outside index notation")
        base = self.expr(e.base)
        if base.is_error:
            return ERR
        if not isinstance(base.type, TensorT):
            return self.error("E2104", f"cannot index {base.type} with `...`", e.base.span)
        if base.type.has_pack:
            return self.index_around_pack(e, base.type)
        expanded = expand_ellipsis(e, base.type.rank)
        if expanded is None:
            return self.error("E2204", f"{count(len(e.items) - 1, 'index', 'indices')} and "
                              f"`...` for a tensor of rank {base.type.rank}", e.span)
        return super().index(expanded)

    def index_around_pack(self, e: t.Index, tensor: TensorT) -> Val:
        """`x[..., 0::2]` of a `Tensor[*S, D; T]`: `...` stands for the pack (and any axis
        not written beside it); the items before it index the axes before the pack, those
        after it the axes after. An item that would fall inside the pack is E2204: the
        pack's length is not known here."""
        k = next(i for i, x in enumerate(e.items) if isinstance(x, t.EllipsisIx))
        before, after = e.items[:k], e.items[k + 1:]
        at = next(i for i, d in enumerate(tensor.dims) if isinstance(d, PackDim))
        if len(before) > at or len(after) > len(tensor.dims) - at - 1:
            return self.error("E2204", f"indices reach into the shape pack of {tensor}",
                              e.span, "inside the pack",
                              help="index only the axes written beside the pack; `...` "
                                   "stands for the pack")
        tail = len(tensor.dims) - len(after)
        lead = self._kept_axes(before, tensor.dims[:len(before)])
        trail = self._kept_axes(after, tensor.dims[tail:])
        if lead is None or trail is None:
            return ERR
        return Val(TensorT(lead + tensor.dims[len(before):tail] + trail, tensor.dtype))

    def _kept_axes(self, items: tuple, dims: tuple) -> tuple | None:
        """The axes that items (an integer or a slice each) leave of dims; None after an
        error."""
        out = []
        for item, dim in zip(items, dims):
            kept = self._index_item(item, dim)
            if kept is False:
                return None
            if kept is not None:
                out.append(kept)
        return tuple(out)


def expand_ellipsis(e: t.Index, rank: int) -> t.Index | None:
    """`x[..., 0]` as `x[:, :, 0]` for a tensor of this rank (None: too many indices)."""
    written = len(e.items) - 1
    if written > rank:
        return None
    k = next(i for i, x in enumerate(e.items) if isinstance(x, t.EllipsisIx))
    fill = tuple(t.Slice(None, None, None, span=e.items[k].span) for _ in range(rank - written))
    return t.Index(e.base, e.items[:k] + fill + e.items[k + 1:], span=e.span)

