"""Instances for `elaborate`: checking them, naming them, and what they bind.

Each op and fn instance is an item with concrete generics. These helpers find
the checked module that declares an item, build a checker in instance mode
over it (for a binding's defaults, an op's `grad` clause and its kernel
binding), turn a binding into the key that memoizes an instance, and turn that
key into the instance's `Func` name (`softmax__R8_C40`) and dump label
(`op softmax<R=8, C=40>`). They read the checker only, never the IR built so
far, which is why they stand apart from the body translator.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...check.body import BodyChecker
from ...check.dim_normal_form import Dim
from ...check.dims import Facts
from ...check.instance import Analysis, Instance
from ...check.items import signature_of
from ...check.ranges import I64_MAX, I64_MIN
from ...check.scope import Frame
from ...check.signatures import Binding
from ...check.types import FLOAT, TensorT, TupleT, Val
from ...diagnostics import DiagnosticBag
from ...ir import tensor as ir
from ...syntax import tree as t
from .vocabulary import ElaborationError


def home_module(analysis: Analysis, item):
    """The checked module that declares item (imported pub items are seen from several)."""
    return analysis.home_of(item)


def instance_checker(analysis: Analysis, item, binding: Binding) -> tuple[BodyChecker, object]:
    """A checker in instance mode over item's generics, as `instantiate` builds one."""
    module = home_module(analysis, item)
    generics = {g.name: g for g in getattr(item, "generics", ())}
    frame = Frame(module.globals, generics, Facts(), binding=binding)
    checker = BodyChecker(frame, DiagnosticBag(), module.signatures)
    checker.types, checker.call_bindings = {}, {}
    return checker, module


def with_defaults(analysis: Analysis, item, binding: Binding) -> Binding:
    """The binding, plus each unbound generic's default (as `--bind` leaves them)."""
    missing = [g for g in item.generics if not binding.bound(g.name)]
    if not missing:
        return binding
    full = Binding(dict(binding.dims), dict(binding.dtypes), dict(binding.packs))
    checker, _ = instance_checker(analysis, item, full)
    for g in missing:
        if g.default is None or not checker.bind_generic_arg(g, g.default, full):
            raise ElaborationError(f"generic `{g.name}` of `{item.name}` has no value",
                                   g.span, "E2110")
    return full


def grad_instance(analysis: Analysis, op: t.Op, binding: Binding) -> tuple[Instance, object]:
    """The op's grad clause checked with concrete generics, as `check_grad` checks it.

    `Analysis.instantiate` covers bodies only, so this mirrors it for the clause: the
    op's parameters, then `y` and `dy` (the op's result type), in a scope of their own.
    """
    checker, _ = instance_checker(analysis, op, binding)
    sig = signature_of(op, checker)
    for p, ty in zip(op.params, sig.params):
        checker.frame.bind(p.name, Val(ty))
    checker.frame.push()
    checker.frame.bind(op.grad.result, Val(sig.result))
    checker.frame.bind(op.grad.seed, Val(sig.result))
    floats = [ty for ty in sig.params if isinstance(ty, TensorT) and ty.rank > 0
              and ty.dtype in FLOAT]
    expected = floats[0] if len(floats) == 1 else TupleT(tuple(floats))
    checker.expected_result = expected
    checker.stmts(op.grad.body)
    diagnostics = checker.bag.sorted()
    if diagnostics:
        raise ElaborationError(diagnostics[0].message, diagnostics[0].span,
                               diagnostics[0].code, diagnostics)
    inst = Instance(op, binding, sig, checker.types, checker.call_bindings)
    return inst, expected


@dataclass
class BoundKernel:
    """One op instance's kernel binding: the kernel item, the values of its generics, and the
    op instance that binds it (for tuning: which op, at which sizes, and which of the
    header's arguments are literals). `warps`/`stages` replace the kernel's launch hints
    when set (a tuned choice); None keeps the hints as written."""
    kernel: t.Kernel
    binding: Binding
    op: t.Op
    op_key: tuple
    warps: int | None = None
    stages: int | None = None

    @property
    def generics(self) -> tuple[tuple[str, object], ...]:
        """Each kernel generic's value, in declaration order (a `KernelChoice`'s)."""
        return tuple((g.name, self.binding.dims[g.name].as_int() if g.kind == "Dim"
                      else self.binding.dtypes[g.name]) for g in self.kernel.generics)


def kernel_choice(analysis: Analysis, op: t.Op, binding: Binding
                   ) -> tuple[ir.KernelChoice, BoundKernel]:
    """The op's kernel with each kernel generic evaluated for this instance's binding,
    and the kernel item with that binding (to translate it later)."""
    checker, module = instance_checker(analysis, op, binding)
    kernel = module.globals.items[op.kernel.name]
    values = Binding()
    for g, arg in zip(kernel.generics, op.kernel.args or ()):
        if not checker.bind_generic_arg(g, arg, values):
            raise ElaborationError(f"cannot evaluate the kernel generic `{g.name}`", arg.span)
    bound = BoundKernel(kernel, values, op, binding_key(op, binding))
    return ir.KernelChoice(kernel.name, bound.generics), bound


def module_path(analysis: Analysis, item) -> str:
    """The dotted path of the module that declares item (`examples.matmul`)."""
    for module in analysis.program.modules.values():
        if any(i is item for i in module.items):
            return ".".join(module.path)
    return ""


def binding_text(key: tuple) -> str:
    """`M=4096 N=4096 K=4096`: an instance's generics as a tuning file keys them."""
    return " ".join(f"{n}={_show(v)}" for n, v in key)


def binding_key(item, binding: Binding) -> tuple:
    """The concrete value of each generic, in declaration order: ints, dtypes, int tuples."""
    key = []
    for g in getattr(item, "generics", ()):
        if g.kind == "Dim":
            key.append((g.name, concrete_int(binding.dims[g.name])))
        elif g.kind == "Shape":
            key.append((g.name, tuple(concrete_int(d) for d in binding.packs[g.name])))
        else:
            key.append((g.name, binding.dtypes[g.name]))
    return tuple(key)


@dataclass(frozen=True, slots=True)
class InstanceKey:
    """Which checked instance: the item (by `id`) at the concrete values of its generics
    (`binding_key`). Two calls at equal keys share one checked `Instance`."""
    item: int
    generics: tuple

    @staticmethod
    def of(item, binding: Binding) -> "InstanceKey":
        return InstanceKey(id(item), binding_key(item, binding))


@dataclass(frozen=True, slots=True)
class FuncKey:
    """Which Func of an instance: besides the instance, the optional parameters a call
    passes as `some` or `none` (`presence`, pairs of name and bool) and the parameters
    that hold a value op's value (`known`, pairs of name and value id; call_rewrites.py).
    Each pattern is a Func of its own, since the choice is made at compile time."""
    instance: InstanceKey
    presence: tuple = ()
    known: tuple = ()


def concrete_int(d) -> int:
    value = d.as_int() if isinstance(d, Dim) else None
    if value is None:
        raise ElaborationError(f"dimension `{d}` is not a compile-time constant here")
    if not I64_MIN <= value <= I64_MAX:  # every backend holds dimensions in 64 bits
        raise ElaborationError(f"dimension {value} overflows i64", code="E2105")
    return value


def _show(value) -> str:
    return "[" + ", ".join(map(str, value)) + "]" if isinstance(value, tuple) else str(value)


def func_name(item, key: tuple) -> str:
    """`softmax__R8_C40`: the item's name and its generics, from [A-Za-z0-9_] only."""
    def part(name: str, value) -> str:
        if isinstance(value, tuple):
            return name + ("x".join(map(str, value)) if value else "none")
        return f"{name}{value}"
    parts = "_".join(part(n, v) for n, v in key)
    return f"{item.name}__{parts}" if parts else item.name


def instance_source(kind: str, item, key: tuple) -> str:
    """`op softmax<R=8, C=40>`, for dumps."""
    generics = ", ".join(f"{n}={_show(v)}" for n, v in key)
    return f"{kind} {item.name}" + (f"<{generics}>" if generics else "")
