"""Instances: an item checked again with its generics bound to concrete values.

The middle end needs the type of every expression of a body with concrete
shapes and dtypes. Rather than a second type system, the checker itself is
run in *instance mode*: its frame carries a `Binding`, generics read as their
values, so every type it computes is concrete; it records the type of each
expression node and the binding of each call it checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic, DiagnosticBag
from .analysis_memo import remembered
from ..syntax.program import Program
from ..syntax import tree as t
from .body import BodyChecker
from .checker import Checked, analyze
from .dim_normal_form import Dim
from .dims import Facts
from .items import check_kernel_header, signature_of
from .types import materialize
from .scope import Frame
from .signatures import Binding, Signature, where_note
from .types import Val


@dataclass
class Instance:
    """One item with one binding: its concrete signature and every node's type."""
    item: t.Function | t.Op | t.Kernel
    binding: Binding
    signature: Signature
    types: dict[int, Val]
    call_bindings: dict[int, Binding]
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def type_of(self, node: object) -> Val:
        return self.types[id(node)]


@dataclass
class Analysis:
    """A checked program, ready to instantiate its items."""
    program: Program
    diagnostics: list[Diagnostic]
    modules: dict[tuple[str, ...], Checked]
    # home_of's index: the module items it was built from, and item id -> (item, module)
    _homes: tuple[tuple, dict[int, tuple[object, Checked]]] | None = field(
        default=None, init=False, repr=False, compare=False)

    @property
    def root(self) -> Checked:
        return self.modules[next(iter(self.program.modules))]

    def __str__(self) -> str:
        """The checked program, printed as its source (`--dump-after=check`)."""
        return str(self.program) if self.program.root_module is not None else ""

    def instantiate(self, item, binding: Binding, module: Checked | None = None) -> Instance:
        return instantiate(item, binding, module or self.module_of(item))

    def home_of(self, item) -> Checked:
        """The checked module that declares item (an imported pub item is seen from several
        modules; the first to list it is its home), else `module_of(item)`. From an index
        of every module's items, built again only when those change: an item per sub of a
        `[Leaf; 65536]` array would make a scan per lookup quadratic."""
        lists = tuple(module.items for module in self.program.modules.values())
        if self._homes is None or len(lists) != len(self._homes[0]) \
                or any(a is not b for a, b in zip(lists, self._homes[0])):
            index: dict[int, tuple[object, Checked]] = {}
            for path, module in reversed(self.program.modules.items()):
                for i in module.items:
                    index[id(i)] = (i, self.modules[path])
            self._homes = (lists, index)
        hit = self._homes[1].get(id(item))
        return hit[1] if hit is not None and hit[0] is item else self.module_of(item)

    def module_of(self, item) -> Checked:
        for checked in self.modules.values():
            if checked.globals.items.get(item.name) is item:
                return checked
        raise KeyError(item.name)


def analyze_program(program: Program) -> Analysis:
    """The program checked; a program of the same parsed trees as one checked before gets
    that analysis (`analysis_memo`): a program compiled for many bindings is checked once."""
    return remembered(program, _analyze, lambda a: not a.diagnostics)


def _analyze(program: Program) -> Analysis:
    diagnostics, modules = analyze(program)
    return Analysis(program, diagnostics, modules)


def instantiate(item, binding: Binding, module: Checked) -> Instance:
    """Check item again with its generics bound; its `where` clauses must hold. A
    monomorphic item's instance is what its check found (`Checked.bodies`)."""
    checked = module.bodies.get(id(item))
    if checked is not None and checked.item is item and not _binds_anything(binding):
        return Instance(item, binding, checked.signature, checked.types,
                        checked.call_bindings)
    bag = DiagnosticBag()
    generics = {g.name: g for g in getattr(item, "generics", ())}
    frame = Frame(module.globals, generics, Facts(), binding=binding)
    checker = BodyChecker(frame, bag, module.signatures)
    checker.types, checker.call_bindings = {}, {}
    sig = signature_of(item, checker)
    failed = next(((l, op, r, c) for l, op, r, c in sig.where if not Facts().prove(l, op, r)),
                  None)
    if failed is not None:
        # the first clause the values fail, alone: under a false clause (a divisor's
        # `0 > 0`) every other fact is provable, and the types say nothing useful
        left, op, right, clause = failed
        failure = DiagnosticBag()
        failure.error("E2206", f"the bound values fail `where {left} {op} {right}`",
                      clause.span, "not satisfied", notes=(where_note(item.name, clause),),
                      help="choose values that satisfy every `where` clause")
        return Instance(item, binding, sig, checker.types, checker.call_bindings,
                        failure.sorted())
    if isinstance(item, t.Kernel):
        frame.kernel = item
        check_kernel_header(item, sig, checker)
    else:
        for p, ty in zip(item.params, sig.params):
            frame.bind(p.name, Val(ty), span=p.span)
        checker.expected_result = sig.result
    checker.stmts(item.body)
    if sig.result is None and checker.returned is not None and not checker.returned.is_error:
        sig.result = materialize(checker.returned)  # without `-> T`: what the body returns
    return Instance(item, binding, sig, checker.types, checker.call_bindings, bag.sorted())


def _binds_anything(binding: Binding) -> bool:
    return bool(binding.dims or binding.dtypes or binding.packs)


def binding_from_values(item, dims: dict[str, int], dtypes: dict[str, str],
                        packs: dict[str, tuple[int, ...]]) -> Binding:
    """A Binding of concrete values (as `--bind` gives them)."""
    b = Binding()
    b.dims.update({k: Dim.const(v) for k, v in dims.items()})
    b.dtypes.update(dtypes)
    b.packs.update({k: tuple(Dim.const(d) for d in v) for k, v in packs.items()})
    return b
