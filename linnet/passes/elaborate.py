"""elaborate: a bound entry -> the tensor IR (`linnet/ir/tensor.py`).

The checker already knows every type; rather than a second type system, this
pass runs it again in *instance mode* (`Analysis.instantiate`) for each item
with concrete generics and reads the recorded `Val` of every node. What is
left here is translation, one method per surface node kind:

* each instance (the entry, and every op and fn it reaches, memoized by item
  and concrete binding) becomes one `ir.Func`, named from `[A-Za-z0-9_]` only
  (`softmax__R8_C40`); an op's kernel binding becomes a `KernelChoice`, its
  `grad` clause a `Func` of kind "grad" (params: the op's, then `y`, `dy`);
* statements become A-normal-form `Bind`s; `let`, `var` and assignment are
  rebindings of the name (SSA: every `Var` has its own name, `acc`, `acc_1`);
* literals and compile-time integers become `Lit`s of the dtype their context
  gives them (the operand they meet, the annotation, the parameter; else
  i64 / f64); integer compile-time arithmetic is folded exactly, float literal
  arithmetic in f64 as the checker does, typed floats never;
* `for`/`while`/scans become `Loop`/`While` carrying exactly the outer `var`s
  their body assigns; `static for` is unrolled; `if` becomes `ir.If` (or just
  one branch when its condition is a compile-time constant);
* index notation becomes `Comprehension` nodes over `Ix*` expressions; inside
  them, any subexpression that reads no index variable is computed once
  outside and enters as an `IxScalar`, and a `fn` called on elements is
  expanded in place (an `op` cannot be).

Kernel bodies are not translated here: an op keeps its body as its definition.
Each op instance's kernel binding (the kernel item and its concrete generics) is
recorded in a `KernelLibrary` left in `program.meta` under "kernels";
`choose-kernels` translates the kernels it picks through it
(`elaborate_kernel.py`), since a kernel is only an error when it is chosen.
What cannot be translated raises `ElaborationError` (code E2190, with a span).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Iterator, Union

from ..check.body import BodyChecker
from ..check.dim_normal_form import Dim
from ..check.dims import Facts
from ..check.instance import Analysis, Instance
from ..check.items import signature_of
from ..check.ranges import I64_MAX, I64_MIN
from ..check.scope import Frame
from ..check.signatures import Binding
from ..check.types import FLOAT, INT_RANGES, INTEGER, LitT, PackDim, TensorT, TupleT, Val
from ..deepstack import call_with_deep_stack
from ..diagnostics import CompileError, Diagnostic, DiagnosticBag, NO_SPAN, Span
from ..ir import tensor as ir
from ..syntax import tree as t

BINARY = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "&": "and", "|": "or",
          "^": "xor", "&&": "and", "||": "or", "==": "eq", "!=": "ne", "<": "lt", "<=": "le",
          ">": "gt", ">=": "ge"}
COMPARE = {"==", "!=", "<", "<=", ">", ">="}
MATH = {"exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh"}
ELEMENTWISE = MATH | {"abs", "min", "max", "select", "shl", "shr", "cast"}
IX_NODES = (ir.IxAccess, ir.IxScalar, ir.IxPrim, ir.IxReduce)
I64 = ir.TType((), "i64")


class ElaborationError(CompileError):
    """A construct this pass cannot translate (E2190), or an instance that fails to check
    (its diagnostics): a user-facing error, rendered like the front end's."""

    def __init__(self, message: str, span: Span = NO_SPAN, code: str = "E2190",
                 diagnostics: list[Diagnostic] | None = None) -> None:
        super().__init__(diagnostics or [Diagnostic(code, message, span)])
        self.code, self.message, self.span = code, message, span

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


@dataclass(frozen=True)
class Const:
    """A compile-time number bound to a name (`let n = 4`, a `static for` counter)."""
    value: int | float


Value = Union[ir.Var, ir.Lit, Const, ir.IxAccess, ir.IxScalar, ir.IxPrim, ir.IxReduce]


# ===================================================================== program


def elaborate(analysis: Analysis, entry: t.Function, binding: Binding) -> ir.Program:
    """The entry instance and every op and fn instance it reaches, as one IR program.

    Runs on a deep stack, as the checker does: both recurse over expressions.
    """
    return call_with_deep_stack(lambda: _Elaborator(analysis).program(entry, binding))


class _Elaborator:
    """The work list of instances: each requested once, translated once, in order.

    `body_class` translates each instance's body (kernel elaboration uses one that
    also checks tile sizes, for the fns a kernel calls).
    """

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.names: dict[tuple, str] = {}
        self.items: dict[tuple, tuple[object, Binding]] = {}
        self.instances: dict[tuple, Instance] = {}
        self.queue: list[tuple] = []
        self.kernels: dict[str, tuple[t.Kernel, Binding]] = {}  # op Func name -> binding
        self.body_class = _Body

    def program(self, entry: t.Function, binding: Binding) -> ir.Program:
        binding = _with_defaults(self.analysis, entry, binding)
        entry_name = self.request(entry, binding)
        funcs, done = [], 0
        while done < len(self.queue):
            funcs.append(self.translate(self.queue[done]))
            done += 1
        return ir.Program(tuple(funcs), entry_name, self.meta())

    def meta(self) -> tuple:
        """("kernels", library) when some op binds a kernel, for `choose-kernels`."""
        if not self.kernels:
            return ()
        from .elaborate_kernel import KernelLibrary  # it builds on this module
        return (("kernels", KernelLibrary(self.analysis, dict(self.kernels))),)

    def request(self, item, binding: Binding) -> str:
        """The Func name of an instance, queueing it the first time it is asked for."""
        key = (id(item), _binding_key(item, binding))
        if key not in self.names:
            self.names[key] = self._unique(_func_name(item, key[1]))
            self.items[key] = (item, binding)
            self.queue.append(key)
        return self.names[key]

    def _unique(self, name: str) -> str:
        taken, base, n = set(self.names.values()), name, 0
        while name in taken:
            n += 1
            name = f"{base}_{n}"
        return name

    def instance(self, item, binding: Binding) -> Instance:
        """The checked instance (memoized); its diagnostics, if any, abandon elaboration."""
        key = (id(item), _binding_key(item, binding))
        if key not in self.instances:
            inst = self.analysis.instantiate(item, binding, _home(self.analysis, item))
            if inst.diagnostics:
                first = inst.diagnostics[0]
                raise ElaborationError(first.message, first.span, first.code, inst.diagnostics)
            self.instances[key] = inst
        return self.instances[key]

    def translate(self, key: tuple) -> ir.Func:
        item, binding = self.items[key]
        inst = self.instance(item, binding)
        kind = "op" if isinstance(item, t.Op) else item.kind
        body = self.body_class(self, inst, _Builder())
        params, block = body.function(item.params, item.body, inst.signature.result)
        kernel = None
        if kind == "op" and item.kernel is not None:
            kernel, item_and_binding = _kernel_choice(self.analysis, item, binding)
            self.kernels[self.names[key]] = item_and_binding
        grad = self.grad(item, binding, self.names[key]) if kind == "op" and item.grad else None
        return ir.Func(self.names[key], kind, params, block, _source(kind, item, key[1]),
                       kernel, grad)

    def grad(self, op: t.Op, binding: Binding, name: str) -> ir.Func:
        """The op's `grad(y, dy)` clause as a Func of kind "grad": params, then y, dy."""
        inst, expected = _grad_instance(self.analysis, op, binding)
        body = _Body(self, inst, _Builder())
        result = inst.signature.result
        extra = ((op.grad.result, result), (op.grad.seed, result))
        params, block = body.function(op.params, op.grad.body, expected, extra)
        source = _source("op", op, _binding_key(op, binding))
        return ir.Func(f"{name}__grad", "grad", params, block, f"grad of {source}")


# ------------------------------------------------------------ instance helpers


def _home(analysis: Analysis, item):
    """The checked module that declares item (imported pub items are seen from several)."""
    for path, module in analysis.program.modules.items():
        if any(i is item for i in module.items):
            return analysis.modules[path]
    return analysis.module_of(item)


def _checker(analysis: Analysis, item, binding: Binding) -> tuple[BodyChecker, object]:
    """A checker in instance mode over item's generics, as `instantiate` builds one."""
    module = _home(analysis, item)
    generics = {g.name: g for g in getattr(item, "generics", ())}
    frame = Frame(module.globals, generics, Facts(), binding=binding)
    checker = BodyChecker(frame, DiagnosticBag(), module.signatures)
    checker.types, checker.call_bindings = {}, {}
    return checker, module


def _with_defaults(analysis: Analysis, item, binding: Binding) -> Binding:
    """The binding, plus each unbound generic's default (as `--bind` leaves them)."""
    missing = [g for g in item.generics if not binding.bound(g.name)]
    if not missing:
        return binding
    full = Binding(dict(binding.dims), dict(binding.dtypes), dict(binding.packs))
    checker, _ = _checker(analysis, item, full)
    for g in missing:
        if g.default is None or not checker.bind_generic_arg(g, g.default, full):
            raise ElaborationError(f"generic `{g.name}` of `{item.name}` has no value",
                                   g.span, "E2110")
    return full


def _grad_instance(analysis: Analysis, op: t.Op, binding: Binding) -> tuple[Instance, object]:
    """The op's grad clause checked with concrete generics, as `check_grad` checks it.

    `Analysis.instantiate` covers bodies only, so this mirrors it for the clause: the
    op's parameters, then `y` and `dy` (the op's result type), in a scope of their own.
    """
    checker, _ = _checker(analysis, op, binding)
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


def _kernel_choice(analysis: Analysis, op: t.Op, binding: Binding
                   ) -> tuple[ir.KernelChoice, tuple[t.Kernel, Binding]]:
    """The op's kernel with each kernel generic evaluated for this instance's binding,
    and the kernel item with that binding (to translate it later)."""
    checker, module = _checker(analysis, op, binding)
    kernel = module.globals.items[op.kernel.name]
    values = Binding()
    for g, arg in zip(kernel.generics, op.kernel.args or ()):
        if not checker.bind_generic_arg(g, arg, values):
            raise ElaborationError(f"cannot evaluate the kernel generic `{g.name}`", arg.span)
    generics = tuple((g.name, values.dims[g.name].as_int() if g.kind == "Dim"
                      else values.dtypes[g.name]) for g in kernel.generics)
    return ir.KernelChoice(kernel.name, generics), (kernel, values)


def _binding_key(item, binding: Binding) -> tuple:
    """The concrete value of each generic, in declaration order: ints, dtypes, int tuples."""
    key = []
    for g in getattr(item, "generics", ()):
        if g.kind == "Dim":
            key.append((g.name, _int(binding.dims[g.name])))
        elif g.kind == "Shape":
            key.append((g.name, tuple(_int(d) for d in binding.packs[g.name])))
        else:
            key.append((g.name, binding.dtypes[g.name]))
    return tuple(key)


def _int(d) -> int:
    value = d.as_int() if isinstance(d, Dim) else None
    if value is None:
        raise ElaborationError(f"dimension `{d}` is not a compile-time constant here")
    if not I64_MIN <= value <= I64_MAX:  # every backend holds dimensions in 64 bits
        raise ElaborationError(f"dimension {value} overflows i64", code="E2105")
    return value


def _show(value) -> str:
    return "[" + ", ".join(map(str, value)) + "]" if isinstance(value, tuple) else str(value)


def _func_name(item, key: tuple) -> str:
    """`softmax__R8_C40`: the item's name and its generics, from [A-Za-z0-9_] only."""
    def part(name: str, value) -> str:
        if isinstance(value, tuple):
            return name + ("x".join(map(str, value)) if value else "none")
        return f"{name}{value}"
    parts = "_".join(part(n, v) for n, v in key)
    return f"{item.name}__{parts}" if parts else item.name


def _source(kind: str, item, key: tuple) -> str:
    """`op softmax<R=8, C=40>`, for dumps."""
    generics = ", ".join(f"{n}={_show(v)}" for n, v in key)
    return f"{kind} {item.name}" + (f"<{generics}>" if generics else "")


# ===================================================================== building


class _Builder:
    """The bindings being emitted (a stack of open blocks) and one function's names."""

    def __init__(self) -> None:
        self.blocks: list[list[ir.Bind]] = [[]]
        self.taken: set[str] = set()
        self.temps: set[str] = set()
        self.suffix: dict[str, int] = {}  # per hint, the last suffix handed out

    def fresh(self, hint: str, ty: ir.Ty) -> ir.Var:
        """A variable whose name no other variable of the function has (`acc`, `acc_1`).

        Each hint remembers its last suffix, so the ten-thousandth `a` of an unrolled
        `static for` costs one probe, not ten thousand: elaboration stays linear."""
        name, n = hint, self.suffix.get(hint, 0)
        if n:
            name = f"{hint}_{n}"
        while name in self.taken:
            n += 1
            name = f"{hint}_{n}"
        self.suffix[hint] = n
        self.taken.add(name)
        return ir.Var(name, ty)

    def emit(self, expr: ir.Expr, hint: str) -> ir.Var:
        """Bind expr to a fresh temporary in the current block."""
        var = self.fresh(hint, expr.type)
        self.temps.add(var.name)
        self.blocks[-1].append(ir.Bind(var, expr))
        return var

    def bind(self, expr: ir.Expr, name: str) -> ir.Var:
        """Bind expr to a variable named after `name` (a user name: never renamed later)."""
        var = self.fresh(name, expr.type)
        self.blocks[-1].append(ir.Bind(var, expr))
        return var

    def name(self, atom: ir.Atom, name: str) -> ir.Var:
        """A variable called after `name` holding atom: the temporary just emitted is
        renamed (no copy), anything else is copied into a new binding."""
        block = self.blocks[-1]
        if (isinstance(atom, ir.Var) and atom.name in self.temps and block
                and block[-1].var == atom):
            self.temps.discard(atom.name)
            if atom.name == name:
                return atom
            var = self.fresh(name, atom.type)
            block[-1] = ir.Bind(var, block[-1].expr)
            return var
        var = self.fresh(name, atom.type)
        block.append(ir.Bind(var, atom))
        return var

    def open(self) -> None:
        self.blocks.append([])

    def close(self, result: ir.Atom) -> ir.Block:
        return ir.Block(tuple(self.blocks.pop()), result)


class _Env:
    """Names in scope: nested scopes of runtime atoms, compile-time numbers, or index
    expressions (inside a fn expanded in index notation)."""

    def __init__(self) -> None:
        self.scopes: list[dict[str, Value]] = [{}]

    def lookup(self, name: str) -> Value | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def define(self, name: str, value: Value) -> None:
        self.scopes[-1][name] = value

    def assign(self, name: str, value: Value) -> None:
        """Rebind a `var` in the scope that declared it (SSA: a new Var each time)."""
        for scope in reversed(self.scopes):
            if name in scope:
                scope[name] = value
                return
        raise ElaborationError(f"assignment to undeclared `{name}`")

    def push(self) -> None:
        self.scopes.append({})

    def pop(self) -> None:
        self.scopes.pop()


@dataclass
class _Notation:
    """One comprehension being built: index extents (a tuple for a pack) and names taken."""
    extents: dict[str, object] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)


# ===================================================================== bodies


class _Body:
    """Translates one instance's statements and expressions into the current block."""

    def __init__(self, elab: _Elaborator, inst: Instance, builder: _Builder) -> None:
        self.elab = elab
        self.inst = inst
        self.b = builder
        self.env = _Env()
        self.globals = _home(elab.analysis, inst.item).globals
        self.static: dict[str, int] = {}  # static-for counters, for the checker's symbols
        self.ix: dict[str, str] | None = None  # index variables in scope -> IR base names
        self.nt: _Notation | None = None
        self.dep: dict[int, bool] = {}  # `depends` per node, valid while the scope stays

    # ------------------------------------------------------------- types

    def val(self, node) -> Val:
        """The checker's recorded value of a node in this instance (concrete types)."""
        v = self.inst.types.get(id(node))
        if v is None:
            raise RuntimeError(f"internal: no type recorded for {type(node).__name__} at "
                               f"{getattr(node, 'span', NO_SPAN)}")
        return v

    def dim(self, d) -> int:
        """A dimension's value; inside `static for` the checker left the counter symbolic."""
        if isinstance(d, PackDim):
            raise ElaborationError(f"unbound shape pack `*{d.name}`")
        if self.static and d.symbols():
            d = d.substitute(self.static)
        return _int(d)

    def ir_type(self, ty, want: str | None = None) -> ir.Ty:
        """The concrete IR type of a checker type; a literal takes `want` or its default."""
        if isinstance(ty, TensorT):
            return ir.TType(tuple(self.dim(d) for d in ty.dims), ty.dtype)
        if isinstance(ty, TupleT):
            return ir.TupleTy(tuple(self.ir_type(x) for x in ty.items))
        if isinstance(ty, LitT):
            return ir.TType((), want or _default(ty))
        raise RuntimeError(f"internal: no IR type for {ty}")

    def type_of(self, node, want: str | None = None) -> ir.Ty:
        return self.ir_type(self.val(node).type, want)

    def dtype_of(self, node, want: str | None = None) -> str:
        ty = self.type_of(node, want)
        if not isinstance(ty, ir.TType):
            raise ElaborationError("a tensor was expected here", node.span)
        return ty.dtype

    def concrete(self, b: Binding) -> Binding:
        """A call's binding with static-for counters replaced by their current values."""
        return Binding({k: Dim.const(self.dim(d)) for k, d in b.dims.items()}, dict(b.dtypes),
                       {k: tuple(Dim.const(self.dim(d)) for d in v) for k, v in b.packs.items()})

    # --------------------------------------------------------- functions

    def function(self, params: tuple[t.Param, ...], stmts: tuple[t.Stmt, ...], result,
                 extra: tuple = ()) -> tuple[tuple[ir.Var, ...], ir.Block]:
        """The parameters and the body block of a function (of a grad clause, with `extra`
        parameters after the declared ones)."""
        sig = self.inst.signature
        declared = [(p.name, ty) for p, ty in zip(params, sig.params)]
        ir_params = []
        for name, ty in declared + list(extra):
            var = self.b.fresh(name, self.ir_type(ty))
            self.env.define(name, var)
            ir_params.append(var)
        want = _param_dtype(result)
        for s in stmts:
            if isinstance(s, t.Return):
                value = self.expr(s.value, want)
                return tuple(ir_params), ir.Block(tuple(self.b.blocks[0]), value)
            self.stmt(s)
        raise ElaborationError("function body without a final `return`")

    # -------------------------------------------------------- statements

    def stmt(self, s: t.Stmt) -> None:
        getattr(self, "stmt_" + type(s).__name__)(s)

    def stmts(self, body: tuple[t.Stmt, ...]) -> None:
        for s in body:
            self.stmt(s)

    def stmt_Let(self, s: t.Let) -> None:
        bound = self.val(s)
        if isinstance(bound.type, LitT):
            value = self.fold(s.value)
            if isinstance(value, int) and not isinstance(value, bool):
                self.env.define(s.name, Const(value))  # a compile-time integer stays one
                return
        self.define(s.name, self.expr(s.value, _dtype(bound)))

    def define(self, name: str, atom: ir.Atom) -> None:
        """Bind a user name to a value, naming the variable after it (for readable dumps)."""
        self.env.define(name, self.b.name(atom, name))

    def stmt_LetTuple(self, s: t.LetTuple) -> None:
        if isinstance(s.value, t.ForExpr):  # a scan of a tuple: one stack per name
            for name, atom in zip(s.names, self.scan_stacks(s.value, s.names)):
                self.env.define(name, atom)
            return
        if isinstance(s.value, t.TupleExpr):  # no tuple needed: each item, then the names
            types = self.val(s.value).type.items
            atoms = [self.expr(e, _dtype(Val(ty))) for e, ty in zip(s.value.items, types)]
            for name, atom in zip(s.names, atoms):
                self.define(name, atom)
            return
        tup = self.expr(s.value)
        for k, (name, ty) in enumerate(zip(s.names, tup.type.items)):
            self.env.define(name, self.b.bind(ir.GetItem(tup, k, ty), name))

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        ty = self.type_of(s)
        with_notation = self.enter_notation()
        try:
            self.bind_ix(s.indices)
            body = self.ixe(s.value, ty.dtype)
            outputs = self.ix_axes(s.indices)
        finally:
            self.leave_notation(with_notation)
        self.define(s.name, self.b.emit(ir.Comprehension(outputs, body, ty), "comp"))

    def stmt_VarDecl(self, s: t.VarDecl) -> None:
        self.define(s.name, self.expr(s.value, _dtype(self.val(s))))

    def stmt_Assign(self, s: t.Assign) -> None:
        """SSA: the name now reads a new variable; a literal takes the var's dtype (a
        tuple var's items take theirs from the checker's types)."""
        current = self.env.lookup(s.name)
        want = current.type.dtype if isinstance(current, (ir.Var, ir.Lit)) \
            and isinstance(current.type, ir.TType) else None
        atom = self.expr(s.value, want)
        self.env.assign(s.name, self.b.name(atom, s.name))

    def stmt_Return(self, s: t.Return) -> None:
        raise ElaborationError("not implemented yet: `return` before the end of a function",
                               s.span)

    def stmt_Yield(self, s: t.Yield) -> None:
        raise ElaborationError("`yield` outside a scan", s.span, "E2124")

    def stmt_Effect(self, s: t.Effect) -> None:
        raise ElaborationError(f"`{s.kind}` outside a kernel", s.span, "E2127")

    # ------------------------------------------------------------- loops

    def carried(self, stmts: tuple[t.Stmt, ...]) -> list[str]:
        """The outer `var`s the statements assign: what a loop must carry."""
        return [n for n in assigned_outer(stmts)
                if isinstance(self.env.lookup(n), (ir.Var, ir.Lit))]

    def enter_loop(self, names: list[str]) -> tuple[tuple[ir.Atom, ...], tuple[ir.Var, ...]]:
        """The carried values before the loop, and the loop's own Vars standing for them."""
        init = tuple(self.env.lookup(n) for n in names)
        params = tuple(self.b.fresh(n, a.type) for n, a in zip(names, init))
        for n, p in zip(names, params):
            self.env.assign(n, p)
        return init, params

    def loop_block(self, names: list[str], stmts: tuple[t.Stmt, ...],
                   counter: tuple[str, ir.Var] | None = None,
                   scanned: tuple[t.Expr, tuple[ir.TType, ...]] | None = None) -> ir.Block:
        """A loop body: the statements, then a tuple of the carried values' next values
        (and, for a scan, the yielded value's items: `scanned` is the yielded expression
        and the types of its stacks)."""
        self.b.open()
        self.env.push()
        if counter is not None:
            self.env.define(*counter)
        self.stmts(stmts)
        items = [self.env.lookup(n) for n in names]
        if scanned is not None:
            items.extend(self.yielded(*scanned))
        self.env.pop()
        tup = ir.MakeTuple(tuple(items), ir.TupleTy(tuple(a.type for a in items)))
        return self.b.close(self.b.emit(tup, "next"))

    def leave_loop(self, names: list[str], loop: ir.Expr, hint: str) -> ir.Var:
        """Bind the loop; the carried names then read its results."""
        var = self.b.emit(loop, hint)
        for k, n in enumerate(names):
            self.env.assign(n, self.b.bind(ir.GetItem(var, k, loop.type.items[k]), n))
        return var

    def stmt_For(self, s: t.For) -> None:
        if s.static:
            self.static_for(s)
            return
        lo, hi = self.const_int(s.lo), self.const_int(s.hi)
        names = self.carried(s.body)
        if not names:
            return  # a loop that carries nothing computes nothing: its body is pure
        init, params = self.enter_loop(names)
        index = self.b.fresh(s.var, I64)
        body = self.loop_block(names, s.body, (s.var, index))
        ty = ir.TupleTy(tuple(p.type for p in params))
        self.leave_loop(names, ir.Loop(index, lo, hi, params, init, body, ty), "loop")

    def scan_stacks(self, e: t.ForExpr, names: tuple[str, ...] = ()) -> list[ir.Atom]:
        """`for i in a..b { ...; yield v }`: a Loop with one yield per stacked tensor (each
        item of a yielded tuple is stacked on its own); the stacks, in order, bound to
        variables called after `names` when given (the user's, in `let (a, b) = for`)."""
        lo, hi = self.const_int(e.lo), self.const_int(e.hi)
        scanned = self.type_of(e)
        stacks = scanned.items if isinstance(scanned, ir.TupleTy) else (scanned,)
        carried = self.carried(e.body[:-1])
        init, params = self.enter_loop(carried)
        index = self.b.fresh(e.var, I64)
        body = self.loop_block(carried, e.body[:-1], (e.var, index),
                               (e.body[-1].value, stacks))
        ty = ir.TupleTy(tuple(p.type for p in params) + stacks)
        loop = self.leave_loop(carried, ir.Loop(index, lo, hi, params, init, body, ty,
                                                len(stacks)), "scan")
        items = [ir.GetItem(loop, len(carried) + k, st) for k, st in enumerate(stacks)]
        if names:
            return [self.b.bind(item, name) for item, name in zip(items, names)]
        return [self.b.emit(item, "stack") for item in items]

    def yielded(self, e: t.Expr, stacks: tuple[ir.TType, ...]) -> list[ir.Atom]:
        """The values one trip of a scan yields: the items of a tuple (a literal one item by
        item, each in its stack's dtype), or the one value."""
        if isinstance(e, t.TupleExpr):
            return [self.expr(x, st.dtype) for x, st in zip(e.items, stacks)]
        value = self.expr(e, stacks[0].dtype if len(stacks) == 1 else None)
        if not isinstance(value.type, ir.TupleTy):
            return [value]
        return [self.b.emit(ir.GetItem(value, k, ty), "item")
                for k, ty in enumerate(value.type.items)]

    def stmt_While(self, s: t.While) -> None:
        names = self.carried(s.body)
        init, params = self.enter_loop(names)
        self.b.open()
        cond = self.b.close(self.expr(s.cond))
        body = self.loop_block(names, s.body)
        ty = ir.TupleTy(tuple(p.type for p in params))
        self.leave_loop(names, ir.While(params, init, cond, body, ty), "while")

    def static_for(self, s: t.For) -> None:
        """Unrolled: the body once per counter value, the counter a compile-time number."""
        lo, hi = self.const_int(s.lo), self.const_int(s.hi)
        saved = self.static.get(s.var)
        try:
            for k in range(lo, hi):
                self.static[s.var] = k
                self.env.push()
                self.env.define(s.var, Const(k))
                self.stmts(s.body)
                self.env.pop()
        finally:
            if saved is None:
                self.static.pop(s.var, None)
            else:
                self.static[s.var] = saved

    def const_int(self, e: t.Expr) -> int:
        """A loop bound, slice bound or axis: the checker proved it compile-time."""
        value = self.fold(e)
        if not isinstance(value, int) or isinstance(value, bool):
            raise ElaborationError("a compile-time integer is required here", e.span, "E2123")
        return value

    # ------------------------------------------------------- expressions

    def expr(self, e: t.Expr, want: str | None = None) -> ir.Atom:
        """e as an atom, its bindings emitted; `want` is the dtype a contextual literal
        takes here (None: its default, i64 or f64)."""
        lit = self.literal(e, want)
        if lit is not None:
            return lit
        return getattr(self, "expr_" + type(e).__name__)(e, want)

    def literal(self, e: t.Expr, want: str | None) -> ir.Lit | None:
        """A scalar known at compile time, as a literal of the dtype it has here."""
        v = self.val(e)
        leaf = isinstance(e, (t.IntLit, t.FloatLit, t.BoolLit, t.Name))
        scalar = isinstance(v.type, LitT) or (isinstance(v.type, TensorT) and not v.type.dims)
        if not scalar or not (leaf or isinstance(v.type, LitT) or v.type.dtype == "bool"):
            return None
        value = self.fold(e)
        if value is None:
            return None
        dtype = v.type.dtype if isinstance(v.type, TensorT) else (want or _default(v.type))
        return _lit(value, dtype)

    def expr_IntLit(self, e: t.IntLit, want: str | None) -> ir.Atom:
        return _lit(e.value, want or "i64")

    def expr_FloatLit(self, e: t.FloatLit, want: str | None) -> ir.Atom:
        return _lit(e.value, want or "f64")

    def expr_BoolLit(self, e: t.BoolLit, want: str | None) -> ir.Atom:
        return _lit(e.value, "bool")

    def expr_Name(self, e: t.Name, want: str | None) -> ir.Atom:
        """A variable; one the checker sees as a literal but that had to be computed (a
        `let` of an `if` between literals) is cast to the dtype its context wants."""
        value = self.env.lookup(e.id)
        if isinstance(value, (ir.Var, ir.Lit)):
            if want and isinstance(self.val(e).type, LitT) and value.type.dtype != want:
                return self.b.emit(ir.Prim("cast", (value,), ir.TType((), want)), "cast")
            return value
        raise ElaborationError(f"not implemented yet: `{e.id}` as a value here", e.span)

    def expr_Unary(self, e: t.Unary, want: str | None) -> ir.Atom:
        ty = self.type_of(e, want)
        x = self.expr(e.operand, ty.dtype if e.op != "!" else None)
        if e.op == "+":
            return x
        return self.b.emit(ir.Prim("neg" if e.op == "-" else "not", (x,), ty), "neg"
                           if e.op == "-" else "not")

    def expr_Binary(self, e: t.Binary, want: str | None) -> ir.Atom:
        """One prim; operands of different ranks broadcast right-aligned, as in numpy."""
        ty = self.type_of(e, want)
        side = self.operand_dtype(e, ty)
        left, right = self.expr(e.left, side), self.expr(e.right, side)
        op = BINARY[e.op]
        return self.b.emit(ir.Prim(op, (left, right), ty), op)

    def operand_dtype(self, e: t.Binary, result: ir.TType) -> str:
        """The dtype a literal operand takes: the other operand's, or the result's."""
        for side in (e.left, e.right):
            v = self.val(side)
            if isinstance(v.type, TensorT):
                return v.type.dtype
        if e.op in COMPARE:
            kinds = {self.val(e.left).type.kind, self.val(e.right).type.kind}
            return "f64" if "float" in kinds else "i64"
        return result.dtype

    def expr_If(self, e: t.If, want: str | None) -> ir.Atom:
        """`ir.If` whose branches also hand back the outer vars they assign (then read
        through GetItems); with a compile-time condition, just the branch taken."""
        known = self.fold(e.cond)
        if isinstance(known, bool):
            return self.inline_block(e.then if known else e.orelse, self._if_want(e, want))
        cond = self.expr(e.cond)
        ty = self.type_of(e, want)
        names = [n for n in assigned_outer((e.then, e.orelse))
                 if isinstance(self.env.lookup(n), (ir.Var, ir.Lit))]
        before = [self.env.lookup(n) for n in names]
        then = self.branch(e.then, self._if_want(e, want), names)
        for n, a in zip(names, before):
            self.env.assign(n, a)
        orelse = self.branch(e.orelse, self._if_want(e, want), names)
        if not names:
            return self.b.emit(ir.If(cond, then, orelse, ty), "if")
        tup_ty = ir.TupleTy((ty,) + tuple(a.type for a in before))
        var = self.b.emit(ir.If(cond, then, orelse, tup_ty), "if")
        for k, n in enumerate(names):
            self.env.assign(n, self.b.bind(ir.GetItem(var, k + 1, tup_ty.items[k + 1]), n))
        return self.b.emit(ir.GetItem(var, 0, ty), "if")

    def _if_want(self, e: t.If, want: str | None) -> str | None:
        ty = self.type_of(e, want)
        return ty.dtype if isinstance(ty, ir.TType) else None

    def branch(self, b: t.Block, want: str | None, names: list[str]) -> ir.Block:
        """One branch of an `if`: its value, then the values of the outer vars it assigns."""
        self.b.open()
        self.env.push()
        self.stmts(b.stmts)
        value = self.expr(b.value, want)
        if names:
            items = (value,) + tuple(self.env.lookup(n) for n in names)
            value = self.b.emit(ir.MakeTuple(items, ir.TupleTy(tuple(a.type for a in items))),
                                "branch")
        self.env.pop()
        return self.b.close(value)

    def inline_block(self, b: t.Block, want: str | None) -> ir.Atom:
        """The branch an `if` with a compile-time condition takes, in the current block."""
        self.env.push()
        self.stmts(b.stmts)
        value = self.expr(b.value, want)
        self.env.pop()
        return value

    def expr_TupleExpr(self, e: t.TupleExpr, want: str | None) -> ir.Atom:
        """A tuple; its literal items take their default dtypes, as the checker's do."""
        ty = self.type_of(e)
        items = tuple(self.expr(x, it.dtype if isinstance(it, ir.TType) else None)
                      for x, it in zip(e.items, ty.items))
        return self.b.emit(ir.MakeTuple(items, ty), "tuple")

    def expr_ListExpr(self, e: t.ListExpr, want: str | None) -> ir.Atom:
        raise ElaborationError("a shape literal is not a value", e.span)

    def expr_ForExpr(self, e: t.ForExpr, want: str | None) -> ir.Atom:
        """A scan as the value of `let`, `var`, an assignment or `return` (the checker
        allows it nowhere else): its stack, or the tuple of its stacks."""
        stacks = self.scan_stacks(e)
        if not isinstance(self.type_of(e), ir.TupleTy):
            return stacks[0]
        ty = ir.TupleTy(tuple(a.type for a in stacks))
        return self.b.emit(ir.MakeTuple(tuple(stacks), ty), "stacks")

    def expr_Reduce(self, e: t.Reduce, want: str | None) -> ir.Atom:
        """A reduction outside `let y[...] =`: a comprehension with no outputs."""
        saved = self.enter_notation()
        try:
            body = self.ix_Reduce(e, want)
        finally:
            self.leave_notation(saved)
        return self.b.emit(ir.Comprehension((), body, ir.TType((), body.dtype)), e.op)

    # ----------------------------------------------------------- indexing

    def expr_Index(self, e: t.Index, want: str | None) -> ir.Atom:
        """`x[...]` outside index notation: `index` for compile-time positions and slices,
        `dyn_index` (on axes moved to the front) for runtime scalar positions."""
        x = self.expr(e.base)
        shape = x.type.shape
        static, runtime = [], []
        for axis, item in enumerate(e.items):
            entry = self.index_item(item, shape[axis])
            (runtime if isinstance(entry, (ir.Var, ir.Lit)) else static).append((axis, entry))
        if runtime:
            x = self.dynamic_index(x, runtime)
            static = [(k, entry) for k, (_, entry) in enumerate(static)]
        items = tuple(entry for _, entry in static)
        if all(entry[0] == "slice" and entry[1:] == (0, x.type.shape[k], 1)
               for k, entry in static):
            return x
        return self.b.emit(ir.Prim("index", (x,), self.type_of(e), (("items", items),)),
                           "index")

    def index_item(self, item, extent: int):
        """("at", k), ("slice", lo, hi, step), or an i64 atom for a runtime position."""
        if isinstance(item, t.Slice):
            lo = self.const_int(item.lo) if item.lo is not None else 0
            hi = self.const_int(item.hi) if item.hi is not None else extent
            step = self.const_int(item.step) if item.step is not None else 1
            return ("slice", lo, hi, step)
        value = self.fold(item)
        if isinstance(value, int) and not isinstance(value, bool):
            return ("at", value)
        k = self.expr(item, "i64")
        if k.type.dtype != "i64":
            k = self.b.emit(ir.Prim("cast", (k,), I64), "cast")
        return k

    def dynamic_index(self, x: ir.Atom, runtime: list) -> ir.Atom:
        """x read at runtime positions: those axes permuted to the front, then dropped."""
        axes = [a for a, _ in runtime]
        rest = [a for a in range(x.type.rank) if a not in axes]
        perm = tuple(axes + rest)
        if perm != tuple(range(x.type.rank)):
            shape = tuple(x.type.shape[a] for a in perm)
            x = self.b.emit(ir.Prim("permute", (x,), ir.TType(shape, x.type.dtype),
                                    (("perm", perm),)), "permute")
        shape = x.type.shape[len(axes):]
        args = (x,) + tuple(k for _, k in runtime)
        return self.b.emit(ir.Prim("dyn_index", args, ir.TType(shape, x.type.dtype)), "row")

    # -------------------------------------------------------------- calls

    def expr_Call(self, e: t.Call, want: str | None) -> ir.Atom:
        """A prelude call is a prim; an op or fn call an `ir.Call` of its instance (queued
        for translation), literal arguments typed by the callee's parameters."""
        item = self.globals.items.get(e.callee)
        if item is None:
            method = getattr(self, "prelude_" + ("math" if e.callee in MATH else e.callee), None)
            if method is None:
                raise ElaborationError(f"`{e.callee}` is only available inside a kernel",
                                       e.span, "E2127")
            return method(e, self.type_of(e, want))
        if not isinstance(item, (t.Function, t.Op)):
            raise ElaborationError(f"`{e.callee}` cannot be called", e.span, "E2106")
        binding = self.concrete(self.inst.call_bindings[id(e)])
        callee = self.elab.instance(item, binding)
        args = tuple(self.expr(a.value, _param_dtype(p))
                     for a, p in zip(e.args, callee.signature.params))
        name = self.elab.request(item, binding)
        return self.b.emit(ir.Call(name, args, self.type_of(e)), e.callee)

    def prim(self, op: str, args: tuple, ty: ir.Ty, attrs: tuple = ()) -> ir.Var:
        return self.b.emit(ir.Prim(op, tuple(args), ty, attrs), op)

    def args(self, e: t.Call) -> list[t.Expr]:
        return [a.value for a in e.args if a.name is None]

    def axis(self, e: t.Call, rank: int) -> int:
        """The named `axis` argument, normalized to count from the front."""
        named = next((a.value for a in e.args if a.name == "axis"), None)
        return 0 if named is None else self.const_int(named) % rank

    def prelude_cast(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("cast", (self.expr(self.args(e)[0]),), ty)

    def prelude_math(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, (self.expr(self.args(e)[0], ty.dtype),), ty)

    def prelude_abs(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("abs", (self.expr(self.args(e)[0], ty.dtype),), ty)

    def prelude_min(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, tuple(self.expr(a, ty.dtype) for a in self.args(e)), ty)

    prelude_max = prelude_min
    prelude_shl = prelude_min
    prelude_shr = prelude_min

    def prelude_select(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        c, a, b = self.args(e)
        return self.prim("select", (self.expr(c), self.expr(a, ty.dtype),
                                    self.expr(b, ty.dtype)), ty)

    def prelude_reshape(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim(e.callee, (self.expr(self.args(e)[0]),), ty)

    prelude_broadcast_to = prelude_reshape

    def prelude_permute(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        x, perm = self.args(e)
        order = tuple(self.const_int(k) for k in perm.items)
        return self.prim("permute", (self.expr(x),), ty, (("perm", order),))

    def prelude_concat(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        parts = tuple(self.expr(a) for a in self.args(e))
        return self.prim("concat", parts, ty, (("axis", self.axis(e, ty.rank)),))

    def prelude_iota(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("iota", (), ty)

    def prelude_fill(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("fill", (self.expr(self.args(e)[1], ty.dtype),), ty)

    def prelude_cumsum(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        return self.prim("cumsum", (self.expr(self.args(e)[0]),), ty,
                         (("axis", self.axis(e, ty.rank)),))

    # ======================================================= index notation

    def enter_notation(self) -> tuple:
        """Start a comprehension: no index in scope yet, extents learned from accesses."""
        saved = (self.ix, self.nt)
        self.ix, self.nt = {}, _Notation()
        self.dep.clear()
        return saved

    def leave_notation(self, saved: tuple) -> None:
        self.ix, self.nt = saved
        self.dep.clear()

    def bind_ix(self, indices: tuple[t.IxVar, ...]) -> None:
        """Bring index variables into scope, each under a name unique in the comprehension."""
        for v in indices:
            name, n = v.name, 0
            while name in self.nt.taken:
                n += 1
                name = f"{v.name}_{n}"
            self.nt.taken.add(name)
            self.ix[v.name] = name
        self.dep.clear()

    def ix_axes(self, indices: tuple[t.IxVar, ...]) -> tuple[tuple[str, int], ...]:
        """The (name, extent) axes of index variables, a pack `*s` as `s.0`, `s.1`, ..."""
        axes = []
        for v in indices:
            base = self.ix[v.name]
            extent = self.nt.extents.get(base)
            if extent is None:
                raise ElaborationError(f"index `{v.name}` indexes nothing", v.span, "E3103")
            if v.pack:
                axes.extend((f"{base}.{k}", d) for k, d in enumerate(extent))
            else:
                axes.append((base, extent))
        return tuple(axes)

    def depends(self, e) -> bool:
        """Does e read an index variable in scope (or a value computed from one)?

        Memoized per node (cleared whenever the index scope changes), so a deep
        expression in index notation is walked once, not once per level.
        """
        found = self.dep.get(id(e))
        if found is None:
            if isinstance(e, t.Index) and any(_ix_name(i) in self.ix for i in e.items):
                found = True
            elif isinstance(e, t.Name):
                found = isinstance(self.env.lookup(e.id), IX_NODES)
            else:
                found = any(self.depends(c) for c in _children(e))
            self.dep[id(e)] = found
        return found

    def ixe(self, e: t.Expr, want: str | None = None) -> ir.IxExpr:
        """e as an index expression; what reads no index is computed once, outside."""
        if not self.depends(e):
            saved = self.ix, self.nt
            self.ix, self.nt = None, None
            try:
                atom = self.expr(e, want)
            finally:
                self.ix, self.nt = saved
            if atom.type.rank:
                raise ElaborationError("not implemented yet: a tensor operand inside index "
                                       "notation", e.span)
            return ir.IxScalar(atom, atom.type.dtype)
        method = getattr(self, "ix_" + type(e).__name__, None)
        if method is None:
            raise ElaborationError(f"not implemented yet: {type(e).__name__} in index "
                                   "notation", e.span)
        return method(e, want)

    def ix_Index(self, e: t.Index, want: str | None) -> ir.IxExpr:
        """`x[i, *s, k]`: an access naming one index per axis; it fixes their extents.

        The indexed tensor may be computed (`iota<i32>(N)[i]`): it is then computed once,
        before the comprehension. A compile-time position (`x[r, 0]`) picks its axis's
        element by indexing the tensor first, so the access names index variables only."""
        x, items = self.fix_positions(self.indexed(e.base), e.items)
        shape = x.type.shape
        packs = sum(isinstance(i, t.PackIx) for i in items)
        width = len(shape) - (len(items) - packs)
        names, axis = [], 0
        for item in items:
            base = self.ix[_ix_name(item)]
            if isinstance(item, t.PackIx):
                self.nt.extents.setdefault(base, tuple(shape[axis:axis + width]))
                names.extend(f"{base}.{k}" for k in range(width))
                axis += width
            else:
                self.nt.extents.setdefault(base, shape[axis])
                names.append(base)
                axis += 1
        return ir.IxAccess(x, tuple(names), x.type.dtype)

    def indexed(self, base: t.Expr) -> ir.Atom:
        """The tensor an access in index notation reads: a variable, or an expression
        (which reads no index variable) computed outside the comprehension."""
        if isinstance(base, t.Name):
            return self.env.lookup(base.id)
        saved = self.ix, self.nt
        self.ix, self.nt = None, None
        try:
            return self.expr(base)
        finally:
            self.ix, self.nt = saved

    def fix_positions(self, x: ir.Atom, items: tuple) -> tuple[ir.Atom, tuple]:
        """x with its axes at compile-time positions dropped (an `index` prim), and the
        items left: the index variables and packs."""
        if all(isinstance(i, t.PackIx) or _ix_name(i) in self.ix for i in items):
            return x, items
        width = x.type.rank - (len(items) - sum(isinstance(i, t.PackIx) for i in items))
        picks, kept, shape, axis = [], [], [], 0
        for item in items:
            span = width if isinstance(item, t.PackIx) else 1
            extents = x.type.shape[axis:axis + span]
            if isinstance(item, t.PackIx) or _ix_name(item) in self.ix:
                picks.extend(("slice", 0, n, 1) for n in extents)
                shape.extend(extents)
                kept.append(item)
            else:
                picks.append(("at", self.const_int(item)))
            axis += span
        ty = ir.TType(tuple(shape), x.type.dtype)
        picked = self.b.emit(ir.Prim("index", (x,), ty, (("items", tuple(picks)),)), "pick")
        return picked, tuple(kept)

    def ix_Name(self, e: t.Name, want: str | None) -> ir.IxExpr:
        return self.env.lookup(e.id)

    def ix_Unary(self, e: t.Unary, want: str | None) -> ir.IxExpr:
        x = self.ixe(e.operand, want)
        if e.op == "+":
            return x
        return ir.IxPrim("neg" if e.op == "-" else "not", (x,), self.dtype_of(e, want))

    def ix_Binary(self, e: t.Binary, want: str | None) -> ir.IxExpr:
        ty = self.type_of(e, want)
        side = self.operand_dtype(e, ty)
        return ir.IxPrim(BINARY[e.op], (self.ixe(e.left, side), self.ixe(e.right, side)),
                         ty.dtype)

    def ix_Reduce(self, e: t.Reduce, want: str | None) -> ir.IxReduce:
        """`op[k, ...] body`, accumulated in the reduction's dtype; its indices are in
        scope for the body only."""
        saved = dict(self.ix)
        self.bind_ix(e.indices)
        try:
            body = self.ixe(e.body)
            axes = self.ix_axes(e.indices)
        finally:
            self.ix = saved
            self.dep.clear()
        return ir.IxReduce(e.op, axes, body, self.dtype_of(e))

    def ix_If(self, e: t.If, want: str | None) -> ir.IxExpr:
        """An `if` on elements is a `select` (both branches are pure)."""
        dtype = self.dtype_of(e, want)
        cond = self.ixe(e.cond)
        then, orelse = self.ix_block(e.then, dtype), self.ix_block(e.orelse, dtype)
        return ir.IxPrim("select", (cond, then, orelse), dtype)

    def ix_block(self, b: t.Block, want: str | None) -> ir.IxExpr:
        self.env.push()
        try:
            self.ix_stmts(b.stmts)
            return self.ixe(b.value, want)
        finally:
            self.env.pop()
            self.dep.clear()

    def ix_stmts(self, stmts: tuple[t.Stmt, ...]) -> None:
        """Statements on elements: only `let`s, bound to index expressions when they
        read an index."""
        for s in stmts:
            if isinstance(s, t.Let) and not isinstance(s.value, t.ForExpr) \
                    and self.depends(s.value):
                self.env.define(s.name, self.ixe(s.value, _dtype(self.val(s))))
                self.dep.clear()
            elif isinstance(s, (t.Let, t.VarDecl)) and not self.depends(s.value):
                self.stmt(s)
            else:
                raise ElaborationError("not implemented yet: this statement in a function "
                                       "applied inside index notation", s.span)

    def ix_Call(self, e: t.Call, want: str | None) -> ir.IxExpr:
        """Elementwise prelude calls become IxPrims (same op names); a fn expands."""
        item = self.globals.items.get(e.callee)
        if item is not None:
            return self.ix_fn_call(e, item)
        if e.callee not in ELEMENTWISE:
            raise ElaborationError(f"not implemented yet: `{e.callee}` inside index notation",
                                   e.span)
        dtype = self.dtype_of(e, want)
        args = self.args(e)
        if e.callee == "cast":
            return ir.IxPrim("cast", (self.ixe(args[0]),), dtype)
        if e.callee == "select":
            return ir.IxPrim("select", (self.ixe(args[0]), self.ixe(args[1], dtype),
                                        self.ixe(args[2], dtype)), dtype)
        return ir.IxPrim(e.callee, tuple(self.ixe(a, dtype) for a in args), dtype)

    def ix_fn_call(self, e: t.Call, item) -> ir.IxExpr:
        """A `fn` applied to elements, expanded in place: its parameters bound to the
        argument index expressions, its `let`s and `return` translated on elements."""
        if not (isinstance(item, t.Function) and item.kind == "fn"):
            raise ElaborationError(f"not implemented yet: calling `{e.callee}` inside index "
                                   "notation (only `fn`s expand there)", e.span)
        binding = self.concrete(self.inst.call_bindings[id(e)])
        callee = self.elab.instance(item, binding)
        params = callee.signature.params
        args = [self.ixe(a.value, _param_dtype(p)) for a, p in zip(e.args, params)]
        inner = _Body(self.elab, callee, self.b)
        inner.ix, inner.nt = {}, self.nt
        for p, a in zip(item.params, args):
            inner.env.define(p.name, a.value if isinstance(a, ir.IxScalar) else a)
        for s in item.body:
            if isinstance(s, t.Return):
                return inner.ixe(s.value, _dtype(Val(callee.signature.result))
                                 if isinstance(callee.signature.result, TensorT) else None)
            inner.ix_stmts((s,))
        raise ElaborationError("function body without a final `return`", item.span)

    # ====================================================== compile time

    def fold(self, e: t.Expr):
        """The value of e when it is known at compile time (int, float or bool), else None.

        Integers fold exactly (division truncates, as the language defines it); float
        literal arithmetic folds in f64, as the checker folds it; arithmetic on typed
        floats never folds (rounding belongs to the dtype, at run time).
        """
        method = getattr(self, "fold_" + type(e).__name__, None)
        return method(e) if method is not None else None

    def fold_IntLit(self, e: t.IntLit):
        return e.value

    def fold_FloatLit(self, e: t.FloatLit):
        return e.value

    def fold_BoolLit(self, e: t.BoolLit):
        return e.value

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

    def typed_float(self, e: t.Expr) -> bool:
        """Is e a float of a definite dtype? Such arithmetic is left to run time."""
        v = self.inst.types.get(id(e))
        return v is not None and isinstance(v.type, TensorT) and v.type.dtype in FLOAT

    def fold_Unary(self, e: t.Unary):
        x = self.fold(e.operand)
        if x is None or (e.op != "-" and self.typed_float(e.operand)):
            return None
        if e.op == "!":
            return (not x) if isinstance(x, bool) else None
        return -x if e.op == "-" and not isinstance(x, bool) else x

    def fold_Binary(self, e: t.Binary):
        if self.typed_float(e.left) or self.typed_float(e.right):
            return None
        a = self.fold(e.left)
        b = self.fold(e.right) if a is not None else None
        return None if b is None else _fold_binary(e.op, a, b)

    def fold_Call(self, e: t.Call):
        if e.callee not in ("min", "max", "abs") or e.callee in self.globals.items:
            return None
        args = self.args(e)
        if any(self.typed_float(a) for a in args):
            return None
        values = [self.fold(a) for a in args]
        if any(v is None or isinstance(v, bool) for v in values):
            return None
        return {"min": min, "max": max, "abs": abs}[e.callee](*values)

    def fold_If(self, e: t.If):
        cond = self.fold(e.cond)
        if not isinstance(cond, bool):
            return None
        branch = e.then if cond else e.orelse
        return None if branch.stmts else self.fold(branch.value)


class _ConstFolder(_Body):
    """Folds a module-level `const`'s value, with the names of the module declaring it."""

    def __init__(self, elab: _Elaborator, const: t.Const) -> None:
        self.elab = elab
        self.env = _Env()
        self.static = {}
        self.globals = _home(elab.analysis, const).globals
        self.inst = Instance(const, Binding(), None, {}, {})


# ===================================================================== helpers


def _default(lit: LitT) -> str:
    return "i64" if lit.kind == "int" else "f64"


def _dtype(v: Val) -> str | None:
    """The dtype a value has, or None for a literal whose dtype is still open."""
    return v.type.dtype if isinstance(v.type, TensorT) else None


def _param_dtype(ty) -> str | None:
    return ty.dtype if isinstance(ty, TensorT) else None


def _lit(value, dtype: str) -> ir.Lit:
    """A literal of dtype; typed integers wrap (two's complement), as arithmetic does."""
    if dtype in INTEGER and isinstance(value, int) and not isinstance(value, bool):
        lo, hi = INT_RANGES[dtype]
        value = (value - lo) % (hi - lo + 1) + lo
    if dtype == "bool":
        value = bool(value)
    return ir.Lit(value, ir.TType((), dtype))


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def _fold_binary(op: str, a, b):
    """One operator on compile-time values, or None when it does not fold."""
    if op in ("&&", "||"):
        if isinstance(a, bool) and isinstance(b, bool):
            return (a and b) if op == "&&" else (a or b)
        return None
    if op in COMPARE:
        return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b,
                ">=": a >= b}[op]
    ints = all(isinstance(x, int) for x in (a, b))
    if op in ("&", "|", "^"):
        return {"&": a & b, "|": a | b, "^": a ^ b}[op] if ints else None
    if isinstance(a, bool) or isinstance(b, bool):
        return None
    if op in ("/", "%") and b == 0:
        return None
    if op == "/":
        return _trunc_div(a, b) if ints else a / b
    if op == "%":
        return a - b * _trunc_div(a, b) if ints else None
    return {"+": a + b, "-": a - b, "*": a * b}[op]


def _ix_name(item) -> str | None:
    if isinstance(item, t.PackIx):
        return item.name
    return item.id if isinstance(item, t.Name) else None


def _children(node) -> Iterator:
    """The tree nodes directly inside node (tuples flattened)."""
    for f in dataclasses.fields(node):
        if f.name in ("span", "callee_span", "name_spans"):
            continue
        value = getattr(node, f.name)
        for x in value if isinstance(value, tuple) else (value,):
            if dataclasses.is_dataclass(x):
                yield x


def assigned_outer(body) -> list[str]:
    """The names a body assigns that it did not declare itself, in order of first
    assignment: the `var`s a loop or a branch must hand back."""
    out: list[str] = []
    _assigned(body, set(), out)
    return list(dict.fromkeys(out))


def _assigned(node, declared: set[str], out: list[str]) -> None:
    if isinstance(node, tuple):  # a statement sequence: a scope of its own
        inner = set(declared)
        for s in node:
            _assigned(s, inner, out)
        return
    if isinstance(node, t.Assign):
        _assigned(node.value, declared, out)
        if node.name not in declared:
            out.append(node.name)
    elif isinstance(node, (t.Let, t.VarDecl, t.LetIndex, t.LetTuple)):
        _assigned(node.value, declared, out)
        declared.update(getattr(node, "names", None) or (node.name,))
    elif isinstance(node, (t.For, t.ForExpr)):
        _assigned(node.lo, declared, out)
        _assigned(node.hi, declared, out)
        _assigned(node.body, declared | {node.var}, out)
    elif isinstance(node, t.While):
        _assigned(node.cond, declared, out)
        _assigned(node.body, declared, out)
    elif isinstance(node, t.Block):
        inner = set(declared)
        _assigned(node.stmts, inner, out)
        _assigned(node.value, inner, out)
    elif dataclasses.is_dataclass(node):
        for child in _children(node):
            _assigned(child, declared, out)
