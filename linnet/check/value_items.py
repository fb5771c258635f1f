"""Declarations of the model layer's values, and what crosses an entry's boundary.

    structs and aliases   generics, field types (E1205 for a field declared twice), a
                          declaration that holds itself (E2101)
    enums                 each variant once (E1205)
    defaults              a literal (a number, a bool, `none`) of the parameter's type
                          (E2101); kernels take none (E2127)
    entries               parameters and results are tensors, tuples and structs of them:
                          an enum or an optional has no value a backend could pass (E2101)
    kernels               parameters and results are memory: no struct, enum or optional
                          (E2127)
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .items import check_generics, item_frame
from .signatures import Signature
from .types import TupleT
from .values import HELD_ITSELF, register_home
from .value_types import EnumT, NoneT, OptionalT, StructT, parts


def check_value_items(module: t.Module, globals_, bag: DiagnosticBag,
                      signatures: dict[str, Signature]) -> None:
    for item in module.items:
        if globals_.items.get(item.name) is not item:
            continue
        if isinstance(item, (t.Struct, t.TypeAlias)):
            register_home(item, globals_)
            _declaration(item, globals_, bag, signatures)
        elif isinstance(item, t.Enum):
            _once(item.variants, "variant", item.span, bag)
        elif isinstance(item, (t.Function, t.Op, t.Kernel)):
            sig = signatures.get(item.name)
            sig = sig if sig is not None and sig.item is item else None
            if any(p.default is not None for p in item.params):
                _, checker = item_frame(item, globals_, bag, signatures)
                _defaults(item, sig, checker, bag)
            if getattr(item, "kind", "") == "entry" and item.name in signatures:
                _entry_boundary(item, signatures[item.name], bag)
            if isinstance(item, t.Kernel) and item.name in signatures:
                _kernel_memory(item, signatures[item.name], bag)


def check_member_values(fn: t.Function, sig: Signature | None, checker,
                        bag: DiagnosticBag) -> None:
    """A block's function, as a module's: literal defaults of the right type; an entry
    takes and returns only what crosses to a backend. `checker` sees the block's names."""
    _defaults(fn, sig, checker, bag)
    if fn.kind == "entry" and sig is not None:
        _entry_boundary(fn, sig, bag)


def _once(names, what: str, span, bag: DiagnosticBag) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            bag.error("E1205", f"duplicate {what} `{name}`", span, "declared twice")
        seen.add(name)


def _declaration(item, globals_, bag: DiagnosticBag, signatures) -> None:
    _, checker = item_frame(item, globals_, bag, signatures)
    check_generics(item, checker)
    if isinstance(item, t.Struct):
        _once([f.name for f in item.fields], "field", item.span, bag)
        for f in item.fields:
            checker.resolve_type(f.type)
    else:
        checker.resolve_type(item.type)
    HELD_ITSELF.discard(id(item))
    checker.declared_type(item)  # resolving it again from itself finds a cycle through it
    if id(item) in HELD_ITSELF:
        what = "struct" if isinstance(item, t.Struct) else "type alias"
        bag.error("E2101", f"the {what} `{item.name}` holds itself", item.span,
                  "a value of it would have no end",
                  help="a struct's fields and an alias's type may not name it, directly or not")


def _defaults(item, sig: Signature | None, checker, bag: DiagnosticBag) -> None:
    """Each default a literal of its parameter's type (`sig`: the item's own signature)."""
    with_default = [p for p in item.params if p.default is not None]
    if not with_default:
        return
    if isinstance(item, t.Kernel):
        bag.error("E2127", "a kernel's parameters take no defaults", with_default[0].span,
                  help="give the default to the op that binds the kernel")
        return
    for p in with_default:
        if not _literal(p.default):
            bag.error("E2101", f"the default of `{p.name}` is not a literal", p.default.span,
                      "not a literal", help="a default is a number, `true`, `false` or `none` "
                      "(it is read where the function is called)")
            continue
        want = sig.params[item.params.index(p)] if sig is not None \
            else checker.resolve_type(p.type)
        value = checker.expr(p.default)
        if want is not None and not value.is_error:
            checker.accepts(want, value, p.default)


def _literal(e: t.Expr) -> bool:
    """Is e a literal a default may be: a number (negated or not), a bool, `none`?"""
    if isinstance(e, t.Unary) and e.op == "-":
        return _literal(e.operand)
    return isinstance(e, (t.IntLit, t.FloatLit, t.BoolLit, t.NoneLit))


def _entry_boundary(item: t.Function, sig: Signature, bag: DiagnosticBag) -> None:
    """An entry's values cross to a backend as tensors: structs become their fields."""
    typed = [(p.span, ty) for p, ty in zip(item.params, sig.params)]
    if sig.result is not None:
        typed.append(((item.result or item).span, sig.result))
    for span, ty in typed:
        bad = _not_crossing(ty)
        if bad is not None:
            bag.error("E2101", f"an entry cannot take or return {bad}", span,
                      "no backend value", help="pass tensors (or structs and tuples of them); "
                      "choose an enum or an optional inside, or in a `fn` the entry calls")
            return


def _kernel_memory(item: t.Kernel, sig: Signature, bag: DiagnosticBag) -> None:
    """A kernel reads and writes memory: tensors and scalars, never a struct, enum or
    optional (the op that binds it may take those)."""
    for p, ty in zip(item.params + item.results, sig.params + sig.results):
        if isinstance(ty, (StructT, EnumT, OptionalT)):
            bag.error("E2127", f"a kernel cannot take {ty}", p.span, "not memory",
                      help="pass the tensors it holds, one parameter each")


def _not_crossing(ty) -> object | None:
    if isinstance(ty, (EnumT, OptionalT, NoneT)):
        return ty
    inner = list(parts(ty)) + (list(ty.items) if isinstance(ty, TupleT) else [])
    return next((bad for x in inner if (bad := _not_crossing(x)) is not None), None)



