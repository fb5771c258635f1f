"""An op's `grad(y, dy) { ... }` clause (E2125, E2101).

The op must return one floating tensor or scalar, or a tuple of them; the
clause sees the op's parameters, `y` (the result) and `dy` (the gradient
arriving at it, a tuple of the same types for a tuple result: an item the
caller does not use arrives as zeros), and returns the gradient of each
floating tensor parameter, in order: one value, or a tuple when there are
several. A tuple result lets a kernel hand its backward what its forward
pass computed besides the result (attention's row log-sum-exp).
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .item_scope import check_local_name
from .items import bind_params, item_frame
from .scope import Globals
from .signatures import Signature
from .types import FLOAT, TensorT, TupleT, Val


def check_grad(op: t.Op, globals_: Globals, bag: DiagnosticBag,
               signatures: dict[str, Signature]) -> None:
    if op.grad is None:
        return
    frame, checker = item_frame(op, globals_, bag, signatures)
    sig = signatures[op.name]
    if sig.result is None:
        return  # the result type is wrong, and reported where it is written
    if not _floating_result(sig.result, checker):
        checker.error("E2125", f"a `grad` clause needs an op returning float tensors or "
                      f"scalars (one, or a tuple of them); `{op.name}` returns {sig.result}",
                      op.grad.span, help="differentiate floating results only")
        return
    if not _plain_params(op, sig, checker):
        return
    floats = [ty for ty in sig.params if isinstance(ty, TensorT) and ty.rank > 0
              and _floating(ty, checker)]
    if not floats:
        checker.error("E2125", f"`{op.name}` has no floating tensor parameter to differentiate",
                      op.grad.span, help="gradients are taken for float tensor parameters")
        return
    bind_params(op, sig, checker)
    spans = op.grad.name_spans or (op.grad.span, op.grad.span)
    for name, span in zip((op.grad.result, op.grad.seed), spans):
        check_local_name(name, span, bag)
    frame.push()
    frame.bind(op.grad.result, Val(sig.result))
    frame.bind(op.grad.seed, Val(sig.result))
    checker.expected_result = floats[0] if len(floats) == 1 else TupleT(tuple(floats))
    checker.stmts(op.grad.body)
    if not op.grad.body or not isinstance(op.grad.body[-1], t.Return):
        checker.error("E2120", "the `grad` clause does not end with `return`", op.grad.span,
                      help="return the gradient of each float tensor parameter")


def _plain_params(op: t.Op, sig: Signature, checker) -> bool:
    """Every parameter a tensor or scalar (E2125 at the first other one): the clause
    returns one gradient per floating tensor parameter, and autograd and `jax.grad` pass
    an op's arguments as arrays, which an optional, a tuple, a struct or an enum is not."""
    for p, ty in zip(op.params, sig.params):
        if ty is not None and not isinstance(ty, TensorT):
            checker.error("E2125", f"an op with a `grad` clause takes tensors and scalars; "
                          f"parameter `{p.name}` of `{op.name}` is {ty}", p.span,
                          "not a tensor or scalar",
                          help="pass the tensors themselves (an optional: one op for each "
                               "case, each called from a `match`); or leave out the "
                               "`grad` clause, and the body is differentiated")
            return False
    return True


def _floating_result(ty, checker) -> bool:
    """One floating tensor or scalar, or a flat tuple of them."""
    items = ty.items if isinstance(ty, TupleT) else (ty,)
    return all(isinstance(item, TensorT) and _floating(item, checker) for item in items)


def _floating(ty: TensorT, checker) -> bool:
    return ty.dtype in FLOAT or checker.is_float(ty.dtype)
