"""The semantic checker over a whole program, as a sequence of small steps.

    declare     the items each module sees (E1204, E1207)
    constants   `const` values, in order
    signatures  generics, parameter and result types, `where` facts
    bodies      every fn, op, entry and kernel body (types, shapes, index notation)
    bindings    each op's kernel binding (E2126, E2111)
    grads       each op's `grad` clause (E2125)
    recursion   the call graph has no cycle (E2119)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, DiagnosticBag
from ..syntax.program import Program
from ..syntax import tree as t
from .grads import check_grad
from .bindings import check_binding
from .blocks import check_blocks
from .kernel_bounds import check_kernel_memory
from .kernel_cover import check_coverage
from .kernel_grids import check_grid
from .kernel_tiles import report_own_tiles
from .imports import import_used
from .item_scope import check_name_is_free
from .items import bind_params, check_kernel_header, item_frame, signature_of
from .scope import Globals
from .signatures import Binding, Signature
from .types import ERR, Val, materialize
from .value_items import check_value_items

CALLABLE = (t.Function, t.Op, t.Kernel)  # the items with signatures and bodies


@dataclass
class Checked:
    """What one checked module offers the modules that use it."""
    globals: Globals
    signatures: dict[str, Signature]
    own: frozenset[str] = frozenset()  # the names it declares itself (what `use` exports)
    # the bodies checked once and for all, by item id (see `CheckedBody`)
    bodies: dict[int, "CheckedBody"] = field(default_factory=dict)


@dataclass(frozen=True)
class CheckedBody:
    """The type of every node of a monomorphic item's body (a `fn`, `entry` or `op` with
    no generics and no `where`), and the binding of every call it makes, as its check
    found them. Instantiating such an item (check/instance.py) binds nothing, so it would
    compute exactly these again: a flattened block entry of 65,536 calls, checked twice."""
    item: t.Function | t.Op
    signature: Signature
    types: dict[int, Val]
    call_bindings: dict[int, Binding]


def check_modules(program: Program) -> list[Diagnostic]:
    """Check every module, each after the modules it uses."""
    return analyze(program)[0]


def analyze(program: Program) -> tuple[list[Diagnostic], dict[tuple[str, ...], Checked]]:
    """The diagnostics, and what each module declares (for instantiating items later)."""
    bag = DiagnosticBag(program.sources)
    done: dict[tuple[str, ...], Checked] = {}
    for path in program.dependency_order():
        done[path] = check_module(program.modules[path], done, bag, program.links)
    return bag.sorted(), done


def check_module(module: t.Module, done: dict, bag: DiagnosticBag,
                 links: dict[tuple[str, ...], tuple[str, ...]] | None = None) -> Checked:
    globals_, signatures = declare(module, done, bag, links)
    constants(module, globals_, bag, signatures)
    own: dict[int, Signature] = {}  # each item's own signature, duplicates (E1204) included
    for item in module.items:
        if isinstance(item, CALLABLE):
            _, checker = item_frame(item, globals_, bag, _seen_by(item, signatures, own))
            own[id(item)] = signature_of(item, checker)
            if globals_.items.get(item.name) is item:
                signatures[item.name] = own[id(item)]
    infer = _result_inference(globals_, signatures)
    calls: dict[str, list] = {}
    bodies: dict[int, CheckedBody] = {}
    check_value_items(module, globals_, bag, signatures)
    calls.update(check_blocks(module, globals_, bag, signatures, infer))
    for item in module.items:
        if isinstance(item, CALLABLE):
            seen = _seen_by(item, signatures, own)
            calls[item.name] = check_body(item, globals_, bag, seen, infer, bodies) \
                + calls.get(item.name, [])
    for item in module.items:
        if isinstance(item, t.Function) and item.grad is not None:
            bag.error("E2125", f"a `grad` clause on the {item.kind} `{item.name}`",
                      item.grad.span, "only ops take a grad clause",
                      help="declare it as an `op` to give it a gradient")
        if isinstance(item, t.Op):
            seen = _seen_by(item, signatures, own)
            check_binding(item, globals_, bag, seen)
            check_grad(item, globals_, bag, seen)
    recursion(calls, bag)
    return Checked(globals_, signatures, frozenset(i.name for i in module.items), bodies)


def _seen_by(item, signatures: dict[str, Signature], own: dict[int, Signature]
             ) -> dict[str, Signature]:
    """The signatures an item is checked with: the module's, except that an item declared
    again under a taken name (E1204) sees its own signature under that name, so its body
    is checked against what it declares rather than against the first item's."""
    mine = own.get(id(item))
    if mine is None or signatures.get(item.name) is mine:
        return signatures
    return {**signatures, item.name: mine}


def declare(module: t.Module, done: dict, bag: DiagnosticBag,
            links: dict[tuple[str, ...], tuple[str, ...]] | None = None
            ) -> tuple[Globals, dict[str, Signature]]:
    """Own items first, then the `pub` items (with signatures) that its `use` lines bring
    in (imports.py); `links` maps each `use` path to the module it loaded."""
    globals_, signatures = Globals(), {}
    for item in module.items:
        check_name_is_free(item.name, item.span, bag)
        if item.name in globals_.items:
            bag.error("E1204", f"duplicate item `{item.name}`", item.span, "declared again",
                      help="each item of a module needs its own name")
            continue
        globals_.items[item.name] = item
    import_used(module, done, links or {}, globals_, signatures, bag)
    return globals_, signatures


def constants(module: t.Module, globals_: Globals, bag: DiagnosticBag,
              signatures: dict[str, Signature]) -> None:
    """Each own `const`, in order: later constants may use earlier ones."""
    for const in module.items:
        if not isinstance(const, t.Const) or globals_.items.get(const.name) is not const:
            continue
        _, checker = item_frame(const, globals_, bag, signatures)
        value = checker.expr(const.value)
        if const.annotation is not None and not value.is_error:
            value = checker.annotate(const.annotation, value, const.value)
        globals_.consts[const.name] = value if not value.is_error else ERR


def _result_inference(globals_: Globals, signatures: dict[str, Signature]):
    """For a `fn` or `entry` without `-> T`: its result is the type it returns."""
    busy: set[str] = set()

    def infer(sig: Signature) -> None:
        if sig.result is not None or sig.name in busy or sig.item.result is not None:
            return
        busy.add(sig.name)
        try:
            _, returned = _run_body(sig.item, globals_, DiagnosticBag(), signatures, infer)
        finally:
            busy.discard(sig.name)
        if returned is not None and not returned.is_error:
            sig.result = materialize(returned)

    return infer


def check_body(item, globals_: Globals, bag: DiagnosticBag,
               signatures: dict[str, Signature], infer=None,
               bodies: dict[int, CheckedBody] | None = None) -> list:
    """Check one item's body in a fresh frame; returns the calls it makes. A `fn` or
    `entry` without `-> T` that no call inferred yet gets its result here, from what its
    body returns: every later reader of the signature (loaders, printers, exports) sees
    the result the body gives, not the absence of a written one. A monomorphic item whose
    body checks without error leaves its `CheckedBody` in `bodies`."""
    sig = signatures[item.name]
    found = CheckedBody(item, sig, {}, {}) \
        if bodies is not None and _monomorphic(item, sig) else None
    errors = len(bag.items)
    calls, returned = _run_body(item, globals_, bag, signatures, infer, found)
    if sig.result is None and getattr(item, "result", None) is None \
            and returned is not None and not returned.is_error:
        sig.result = materialize(returned)
    if found is not None and bodies is not None and len(bag.items) == errors:
        bodies[id(item)] = found
    return calls


def _monomorphic(item, sig: Signature) -> bool:
    """Does instantiating the item bind nothing (no generics, no `where`), so that its
    instance is its check? Kernels are instantiated by rules of their own."""
    return isinstance(item, (t.Function, t.Op)) and sig.item is item \
        and not item.generics and not sig.where


def _run_body(item, globals_: Globals, bag: DiagnosticBag,
              signatures: dict[str, Signature], infer, found: CheckedBody | None = None
              ) -> tuple[list, object]:
    """Check the body (recording each node's type and each call's binding into `found`,
    when given); returns the calls it makes and the value it returns."""
    frame, checker = item_frame(item, globals_, bag, signatures)
    checker.infer_result = infer
    if found is not None:
        checker.types, checker.call_bindings = found.types, found.call_bindings
    sig = signatures[item.name]
    if isinstance(item, t.Kernel):
        frame.kernel = item
        checker.types = {}  # each node's tile, for the tile sizes literals decide
        errors = len(bag.items)
        check_kernel_header(item, sig, checker)
        checker.stmts(item.body)
        report_own_tiles(item, checker.types, bag)
        check_grid(item, sig.results, frame.writes, checker.types, frame.facts, bag)
        if len(bag.items) == errors:  # memory safety is proved of a well-typed kernel
            accesses, grid = check_kernel_memory(item, sig.params, sig.results, checker.types,
                                                 frame.facts, bag)
            check_coverage(item, accesses, frame.writes, frame.facts, grid, bag)
        for result in item.results:
            if result.name not in frame.targets:
                checker.error("E2127", f"kernel result `{result.name}` is never written",
                              result.span, "never written",
                              help=f"write it with `store({result.name}[...], value, mask)` "
                                   "or an atomic")
        return checker.calls, None
    bind_params(item, sig, checker)
    checker.expected_result = sig.result
    checker.stmts(item.body)
    if not item.body or not isinstance(item.body[-1], t.Return):
        checker.error("E2120", f"`{item.name}` does not end with `return`", item.span,
                      "no final return", help="end the body with `return value`")
    return checker.calls, checker.returned


def recursion(calls: dict[str, list], bag: DiagnosticBag) -> None:
    """Report each call that closes a cycle in the call graph (E2119)."""
    state: dict[str, int] = {}

    def visit(name: str) -> None:
        state[name] = 1
        for callee, span in calls.get(name, []):
            if state.get(callee) == 1:
                bag.error("E2119", f"recursive call of `{callee}`", span, "recursion",
                          help="functions are inlined, so they cannot call themselves, "
                               "directly or not; use a loop")
            elif callee not in state:
                visit(callee)
        state[name] = 2

    for name in calls:
        if name not in state:
            visit(name)
