"""The elaborator: the work list of instances and the body translator, shared by the
`elaborate` pass (`elaborate.py`) and kernel elaboration (`elaborate_kernel.py`).

`Elaborator` requests each instance (an item at a concrete binding) once, translates it
once, in order, and records what the pass hands on besides the Funcs: the entry's user
names and each op instance's kernel binding (`Elaborator.kernels`; `elaborate` makes the
`KernelLibrary` of them). `BodyTranslator` translates one instance's statements and
expressions; it is assembled from one mixin per concern, as the checker's `BodyChecker`
is (`statements.py`, `expressions.py`, `index_notation.py`, `folding.py`, `structs.py`),
and keeps the concrete types of nodes and the two methods that build a translator of
their own (a `fn` expanded on elements, a module `const` folded), so no mixin needs the
class it is part of. Kernel elaboration subclasses both.
"""

from __future__ import annotations

from typing import Callable

from ...check.dim_normal_form import Dim
from ...check.instance import Analysis, Instance
from ...check.signatures import Binding
from ...check.types import LitT, PackDim, TensorT, TupleT, Val
from ...check.value_types import OptionalT
from ...diagnostics import NO_SPAN
from ...ir import tensor as ir
from ...ir.program_state import ProgramState
from ...syntax import tree as t
from .builder import Builder, Env
from .call_rewrites import CallRewrite, Marks, determined_by_result, matching, value_ids
from .entry_interface import Interface, result_labels
from .expressions import Expressions
from .folding import Folding
from .instances import (BoundKernel, FuncKey, InstanceKey, binding_key, concrete_int,
                        func_name, grad_instance, home_module, instance_source, kernel_choice,
                        module_path, with_defaults)
from .index_notation import IndexNotation, Notation
from .statements import Statements
from .structs import Values
from .vocabulary import Const, ElaborationError, default_dtype, tensor_dtype, value_dtype
from .surface_walks import Memo


class Elaborator:
    """The work list of instances: each requested once, translated once, in order.

    `body_class` translates each instance's body (kernel elaboration uses one that
    also checks tile sizes, for the fns a kernel calls). `rewrites` are the call rewrites
    to apply (`call_rewrites.py`; none: every call stays as written), `kernel_applies`
    says where the new op's kernel would run (elaborate.py gives it: the kernel checks
    build on this module).
    """

    def __init__(self, analysis: Analysis, rewrites: tuple[CallRewrite, ...] = (),
                 kernel_applies: Callable[[t.Op, Binding], bool] | None = None) -> None:
        self.analysis = analysis
        self.rewrites = rewrites
        # does an op's kernel `where` hold at a binding? (a rewrite fires only where it does)
        self.kernel_applies = kernel_applies or (lambda op, binding: False)
        self.values = value_ids(rewrites)
        self.modules: dict[int, str] = {}  # id(item) -> its module's dotted path
        self.names: dict[FuncKey, str] = {}
        self.taken: set[str] = set()  # the names given (kept, not rebuilt per name)
        self.items: dict[FuncKey, tuple[object, Binding]] = {}
        self.instances: dict[InstanceKey, Instance] = {}
        self.queue: list[FuncKey] = []
        self.kernels: dict[str, BoundKernel] = {}  # op Func name -> its kernel binding
        self.body_class = BodyTranslator
        self.interface: Interface | None = None  # the entry's user names, once translated

    def program(self, entry: t.Function, binding: Binding,
                checked: Instance | None = None) -> ir.Program:
        binding = with_defaults(self.analysis, entry, binding)
        if checked is not None and checked.item is entry and checked.binding is binding \
                and not checked.diagnostics:
            self.instances[InstanceKey.of(entry, binding)] = checked
        entry_name = self.request(entry, binding)
        funcs, done = [], 0
        while done < len(self.queue):
            funcs.append(self.translate(self.queue[done]))
            done += 1
        return ir.Program(tuple(funcs), entry_name,
                          ProgramState(interface=self.interface))


    def request(self, item, binding: Binding, presence: tuple = (), known: tuple = ()) -> str:
        """The Func name of an instance, queueing it the first time it is asked for.
        `presence` says which optional parameters a call passes as `some` or `none` (each
        pattern is an instance of its own, so the choice is made at compile time); `known`,
        which parameters hold the value of a value op of a call rewrite (so do they)."""
        key = FuncKey(InstanceKey.of(item, binding), presence, known)
        if key not in self.names:
            self.names[key] = self._unique(func_name(item, key.instance.generics))
            self.items[key] = (item, binding)
            self.queue.append(key)
        return self.names[key]

    def module_of(self, item) -> str:
        """The dotted path of the module that declares item (memoized)."""
        if id(item) not in self.modules:
            self.modules[id(item)] = module_path(self.analysis, item)
        return self.modules[id(item)]

    def value_identity(self, item) -> str | None:
        """`std.nn.attention::causal_mask` for an op whose calls are marked (the value op
        of a rewrite, taking no parameters, its value fixed by its type); else None."""
        if not (self.values and isinstance(item, t.Op) and determined_by_result(item)):
            return None
        identity = f"{self.module_of(item)}::{item.name}"
        return identity if identity in self.values else None

    def rewrite_for(self, item, known: dict) -> tuple[CallRewrite, t.Op] | None:
        """The rewrite that applies to a call of item with these marked arguments, and the
        op to call instead; None when none does."""
        if not known or not isinstance(item, t.Op):
            return None
        module = self.module_of(item)
        rewrite = matching(self.rewrites, module, item.name, known)
        if rewrite is None:
            return None
        target = self.module_op(module, rewrite.to)
        return None if target is None else (rewrite, target)

    def module_op(self, module: str, name: str) -> t.Op | None:
        """The op `name` of the module `module` (dotted), if there is one."""
        return next((i for m in self.analysis.program.modules.values()
                     if ".".join(m.path) == module for i in m.items
                     if isinstance(i, t.Op) and i.name == name), None)

    def _unique(self, name: str) -> str:
        """name, or name_1, name_2, ...: the first not given yet, which it now is."""
        base, n = name, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def instance(self, item, binding: Binding) -> Instance:
        """The checked instance (memoized); its diagnostics, if any, abandon elaboration."""
        key = InstanceKey.of(item, binding)
        if key not in self.instances:
            inst = self.analysis.instantiate(item, binding, home_module(self.analysis, item))
            if inst.diagnostics:
                first = inst.diagnostics[0]
                raise ElaborationError(first.message, first.span, first.code, inst.diagnostics)
            self.instances[key] = inst
        return self.instances[key]

    def translate(self, key: FuncKey) -> ir.Func:
        item, binding = self.items[key]
        inst = self.instance(item, binding)
        kind = "op" if isinstance(item, t.Op) else item.kind
        body = self.body_class(self, inst, Builder())
        body.presence = dict(key.presence)
        body.known = dict(key.known)
        params, block = body.function(item.params, item.body, inst.signature.result)
        if key == self.queue[0]:  # the entry: its user names
            self.interface = Interface(tuple(body.input_names),
                                       tuple(result_labels(inst.signature.result)))
        kernel = None
        if kind == "op" and item.kernel is not None and _all_present(item, inst, body.presence):
            kernel, bound = kernel_choice(self.analysis, item, binding)
            self.kernels[self.names[key]] = bound
        grad = self.grad(item, binding, self.names[key], body.presence, body.known) \
            if kind == "op" and item.grad else None
        source = instance_source(kind, item, key.instance.generics) + body.marks_label()
        return ir.Func(self.names[key], kind, params, block, source, kernel, grad)

    def grad(self, op: t.Op, binding: Binding, name: str, presence: dict,
             known: dict) -> ir.Func:
        """The op's `grad(y, dy)` clause as a Func of kind "grad": params, then y, dy; for
        the op's instance's choice of optional parameters (`presence`) and marked
        parameters (`known`), as the op's."""
        inst, expected = grad_instance(self.analysis, op, binding)
        body = BodyTranslator(self, inst, Builder())
        body.presence = presence
        body.known = known
        result = inst.signature.result
        extra = ((op.grad.result, result), (op.grad.seed, result))
        params, block = body.function(op.params, op.grad.body, expected, extra)
        block = body.no_gradient_for_optionals(op.params, params, block)
        source = instance_source("op", op, binding_key(op, binding))
        return ir.Func(f"{name}__grad", "grad", params, block, f"grad of {source}")


# ===================================================================== bodies


def _all_present(op: t.Op, inst: Instance, presence: dict) -> bool:
    """May this instance of an op run its kernel? A kernel takes no optionals, only what
    they hold: it runs where every optional parameter is known present; an instance where
    one is absent, or known only at run time, runs the op's body (docs/models.md)."""
    return all(presence.get(p.name) is True for p, ty in zip(op.params, inst.signature.params)
               if isinstance(ty, OptionalT))


class BodyTranslator(Marks, Values, Statements, Expressions, IndexNotation, Folding):
    """Translates one instance's statements and expressions into the current block.

    The mixins translate; this class holds the state they share and the concrete
    types of nodes, and the methods that make another `BodyTranslator`.
    """

    def __init__(self, elab: Elaborator, inst: Instance, builder: Builder) -> None:
        self.elab = elab
        self.inst = inst
        self.b = builder
        self.env = Env()
        self.globals = home_module(elab.analysis, inst.item).globals
        self.ix: dict[str, str] | None = None  # index variables in scope -> IR base names
        self.nt: Notation | None = None
        self.dep: dict[int, bool] = {}  # `depends` per node, valid while the scope stays
        self.assigned: Memo = {}  # `assigned_outer` per nested block of this body
        self.known: dict[str, str] = {}  # marked parameters (call_rewrites.Marks)
        self.marked: dict[str, str] = {}  # variables holding a value op's value
        self.rewrites_fired: list[CallRewrite] = []

    # ------------------------------------------------------------- types

    def val(self, node) -> Val:
        """The checker's recorded value of a node in this instance (concrete types)."""
        v = self.inst.types.get(id(node))
        if v is None:
            raise RuntimeError(f"internal: no type recorded for {type(node).__name__} at "
                               f"{getattr(node, 'span', NO_SPAN)}")
        return v

    def dim(self, d) -> int:
        """A dimension's value: in an instance, every dimension is a number."""
        if isinstance(d, PackDim):
            raise ElaborationError(f"unbound shape pack `*{d.name}`")
        return concrete_int(d)

    def ir_type(self, ty, want: str | None = None) -> ir.Ty:
        """The concrete IR type of a checker type; a literal takes `want` or its default."""
        if isinstance(ty, TensorT):
            return ir.TType(tuple(self.dim(d) for d in ty.dims), ty.dtype)
        if isinstance(ty, TupleT):
            return ir.TupleTy(tuple(self.ir_type(x) for x in ty.items))
        if isinstance(ty, LitT):
            return ir.TType((), want or default_dtype(ty))
        return self.value_ir_type(ty, want)  # structs, enums, optionals

    def type_of(self, node, want: str | None = None) -> ir.Ty:
        return self.ir_type(self.val(node).type, want)

    def dtype_of(self, node, want: str | None = None) -> str:
        ty = self.type_of(node, want)
        if not isinstance(ty, ir.TType):
            raise ElaborationError("a tensor was expected here", node.span)
        return ty.dtype

    def concrete(self, b: Binding) -> Binding:
        """A call's binding with every dimension a number."""
        return Binding({k: Dim.const(self.dim(d)) for k, d in b.dims.items()}, dict(b.dtypes),
                       {k: tuple(Dim.const(self.dim(d)) for d in v) for k, v in b.packs.items()})

    # ------------------------------------------- with a body translator of their own

    def ix_fn_call(self, e: t.Call, item) -> ir.IxExpr:
        """A `fn` applied to elements, expanded in place: its parameters bound to the
        argument index expressions, its `let`s and `return` translated on elements."""
        if not (isinstance(item, t.Function) and item.kind == "fn"):
            raise ElaborationError(f"not implemented yet: calling `{e.callee}` inside index "
                                   "notation (only `fn`s expand there)", e.span)
        binding = self.concrete(self.inst.call_bindings[id(e)])
        callee = self.elab.instance(item, binding)
        params = callee.signature.params
        args = [self.ixe(a.value, tensor_dtype(p)) for a, p in zip(e.args, params)]
        inner = BodyTranslator(self.elab, callee, self.b)
        inner.ix, inner.nt = {}, self.nt
        for p, a in zip(item.params, args):
            inner.env.define(p.name, a.value if isinstance(a, ir.IxScalar) else a)
        for s in item.body:
            if isinstance(s, t.Return):
                return inner.ixe(s.value, value_dtype(Val(callee.signature.result))
                                 if isinstance(callee.signature.result, TensorT) else None)
            inner.ix_stmts((s,))
        raise ElaborationError("function body without a final `return`", item.span)

    def fold_Name(self, e: t.Name):
        """Compile-time locals, Dim generics and module `const`s (in their own module)."""
        local = self.env.lookup(e.id)
        if local is not None:
            return local.value if isinstance(local, Const) else None
        if e.id in self.inst.binding.dims:
            return self.dim(self.inst.binding.dims[e.id])
        item = self.globals.items.get(e.id)
        if isinstance(item, t.Const):
            return _ConstFolder(self.elab, item).fold(item.value)
        return None


class _ConstFolder(BodyTranslator):
    """Folds a module-level `const`'s value, with the names of the module declaring it."""

    def __init__(self, elab: Elaborator, const: t.Const) -> None:
        self.elab = elab
        self.env = Env()
        self.globals = home_module(elab.analysis, const).globals
        self.inst = Instance(const, Binding(), None, {}, {})
        self.assigned: Memo = {}
