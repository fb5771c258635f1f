"""An op's kernel binding: `op f<R, C>(...) -> T kernel k<R, C, 1024>`.

Every kernel generic is given in terms of the op's; after substitution the
kernel must take the op's parameters (same count and types; an optional one as the
type it holds, the kernel running only where it is present) and write what the op
returns: one result, or a tuple of them (E2126, E2111).
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .body import BodyChecker
from .dims import Facts
from .items import check_kernel_header, item_frame, signature_of
from .kernel_tiles import report_bound_tiles, where_provably_fails
from .scope import Frame, Globals
from .signatures import Binding, Signature, substitute
from .types import count, TensorT, TupleT, Type, Val
from .unify import shapes_equal
from .value_types import OptionalT


def check_binding(op: t.Op, globals_: Globals, bag: DiagnosticBag,
                  signatures: dict[str, Signature]) -> None:
    if op.kernel is None:
        return
    frame, checker = item_frame(op, globals_, bag, signatures)
    op_sig = signatures[op.name]
    b = op.kernel
    kernel = globals_.items.get(b.name)
    if kernel is None:
        checker.error("E1201", f"undeclared kernel `{b.name}`", b.span, "not found")
        return
    if not isinstance(kernel, t.Kernel):
        checker.error("E2126", f"`{b.name}` is not a kernel", b.span,
                      help="bind a `kernel` item declared at module level")
        return
    sig = signatures.get(b.name)
    args = b.args or ()
    if sig is None:
        return
    if len(args) != len(kernel.generics):
        checker.error("E2111", f"kernel `{b.name}` has {count(len(kernel.generics), 'generic')}, "
                      f"{len(args)} given", b.span, help="give every kernel generic in terms "
                                                         "of the op's")
        return
    binding = Binding()
    if not all(checker.bind_generic_arg(g, a, binding) for g, a in zip(kernel.generics, args)):
        return
    before = len(bag.items)
    _check_params(op, op_sig, sig, binding, checker)
    _check_results(op, op_sig, sig, binding, checker)
    if len(bag.items) == before:
        _check_tiles(op, kernel, binding, frame.facts, globals_, signatures, bag)


def _check_tiles(op: t.Op, kernel: t.Kernel, binding: Binding, facts: Facts,
                 globals_: Globals, signatures: dict[str, Signature],
                 bag: DiagnosticBag) -> None:
    """The tile sizes that the binding's literals decide (E2127, `kernel_tiles.py`)."""
    own = _kernel_types(kernel, globals_, signatures)
    bound = _kernel_types(kernel, globals_, signatures, binding, facts)
    if own is not None and bound is not None:
        report_bound_tiles(op, kernel, own, bound, bag)


def _kernel_types(kernel: t.Kernel, globals_: Globals, signatures: dict[str, Signature],
                  binding: Binding | None = None, facts: Facts | None = None
                  ) -> dict[int, Val] | None:
    """Each node's type in the kernel, checked again into a scratch bag: symbolically, or
    with its generics bound to the op's dims (under the op's facts). None when the bound
    kernel's `where` provably fails: it never runs."""
    scratch = DiagnosticBag()
    if binding is None:
        frame, checker = item_frame(kernel, globals_, scratch, signatures)
        sig = signatures.get(kernel.name)
        if sig is None:
            return None
    else:
        generics = {g.name: g for g in kernel.generics}
        frame = Frame(globals_, generics, facts, binding=binding)
        checker = BodyChecker(frame, scratch, signatures)
        sig = signature_of(kernel, checker)
        if where_provably_fails(sig.where, facts):
            return None
    frame.kernel = kernel
    checker.types = {}
    check_kernel_header(kernel, sig, checker)
    checker.stmts(kernel.body)
    return checker.types


def _check_params(op: t.Op, op_sig: Signature, sig: Signature, binding: Binding,
                  checker) -> None:
    kernel = sig.item
    if len(kernel.params) != len(op.params):
        checker.error("E2126", f"kernel `{kernel.name}` takes {count(len(kernel.params), 'parameter')}, "
                      f"the op {len(op.params)}", op.kernel.span)
        return
    for p, want, have in zip(op.params, op_sig.params, sig.params):
        got = substitute(have, binding)
        if isinstance(want, OptionalT):  # the kernel runs where it is present (docs/models.md)
            want = want.inner
        if want is not None and got is not None and not _same(want, got, checker):
            checker.error("E2126", f"kernel parameter is {got}, but the op's `{p.name}` is "
                          f"{want}", op.kernel.span, "mismatched binding",
                          help="the kernel must take the op's parameters, in order")
            return


def _check_results(op: t.Op, op_sig: Signature, sig: Signature, binding: Binding,
                   checker) -> None:
    results = [substitute(r, binding) for r in sig.results]
    want = op_sig.result
    if want is None or any(r is None for r in results):
        return
    wanted = list(want.items) if isinstance(want, TupleT) else [want]
    same = len(wanted) == len(results) and (isinstance(want, TupleT) == sig.item.tuple_results
                                            or len(results) == 1 and not isinstance(want, TupleT))
    if not same or not all(_same(w, r, checker) for w, r in zip(wanted, results)):
        shown = ", ".join(map(str, results))
        checker.error("E2126", f"kernel `{sig.name}` writes ({shown}), but the op returns {want}",
                      op.kernel.span, "mismatched results",
                      help="the kernel must write exactly what the op returns")


def _same(a: Type, b: Type, checker) -> bool:
    if isinstance(a, TensorT) and isinstance(b, TensorT):
        return a.dtype == b.dtype and shapes_equal(a.dims, b.dims, checker.frame.facts)
    return a == b
