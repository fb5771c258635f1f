"""The tensor IR verifier: does a program belong to an IR language?

`verify(program, language)` returns the problems found, as messages naming
the function and binding, and an empty list when the program is well formed
and uses only the forms its language allows (`linnet/ir/languages.py`: a
`Comprehension` is no form of tensor-core, a `dot` none before egraph-products;
the language "any", the default, allows every form). It checks scoping
(each variable defined once per function and before each use, uses
agreeing with the definition's type),
prims (known op, arity, attributes, result type for elementwise ops under
numpy broadcasting, reductions and shape ops), einsum specs, calls (the
callee exists, arity and argument types), tuples, and control flow.

Kernel Funcs (kind "kernel") too: their tensor parameters and `outputs` are
memory, read only as the first operand of `load` and written only as the
first operand of `store` and the atomics; offsets are integer tiles or
scalars, masks bool of the offsets' shape (or scalars), values and `other`
of the memory's dtype; `program_id` names a grid axis; the launch has a grid
of 1 to 3 sizes and one init per output; the body's result is `true`. Effects,
loads and program ids appear in kernels only, and an op's chosen kernel
(`KernelChoice.func`) is a kernel Func taking the op's parameters and writing
what it returns.

A failed check means a compiler bug, not a user error: passes run it under
`--verify-each`.
"""

from __future__ import annotations

from . import tensor as ir
from .languages import LANGUAGES as DECLARED, Form, form_of_expr, form_of_func, language_named, \
    why_not
from .prim_types import ELEMENTWISE, REDUCE_OPS, broadcast_shapes  # noqa: F401 (re-exported)
from .prim_types import einsum_type, prim_type as _prim_type
from .walk import expr_atoms

LANGUAGES = tuple(DECLARED)
DTYPES = ("bool", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
          "f16", "bf16", "f32", "f64")
KINDS = ("entry", "op", "fn", "grad", "kernel")
MEMORY_PRIMS = ir.EFFECTS | {"load"}
KERNEL_PRIMS = MEMORY_PRIMS | {"program_id"}
INITS = {"store": "empty", "atomic_add": "zero", "atomic_max": "lowest",
         "atomic_min": "highest"}
ATOMIC_DTYPES = {"atomic_add": ("f16", "f32", "i32", "u32", "i64", "u64"),
                 "atomic_max": ("f32", "i32", "u32", "i64", "u64"),
                 "atomic_min": ("f32", "i32", "u32", "i64", "u64")}


def verify(program: ir.Program, language: str = "any") -> list[str]:
    """Problems that keep `program` from belonging to `language` (empty when none)."""
    return _Verifier(program, language).run()


def verify_tensor(program: ir.Program) -> list[str]:
    return verify(program, "tensor")


def verify_tensor_core(program: ir.Program) -> list[str]:
    return verify(program, "tensor-core")


Scope = dict[str, ir.Var]


class _Verifier:
    def __init__(self, program: ir.Program, language: str) -> None:
        self.program = program
        self.language = language_named(language)
        self.funcs = {f.name: f for f in program.funcs}
        self.problems: list[str] = []
        self.defined: set[str] = set()
        self.where = ""
        self.kernel: ir.Func | None = None  # the kernel Func being checked
        self.inputs: set[str] = set()  # its memory: tensor parameters, then outputs
        self.outputs: set[str] = set()

    def run(self) -> list[str]:
        names = [f.name for f in self.program.funcs]
        for name in sorted({n for n in names if names.count(n) > 1}):
            self.problems.append(f"function {name} defined more than once")
        if self.program.entry not in self.funcs:
            self.problems.append(f"entry {self.program.entry} is not a function of the program")
        for f in self.program.funcs:
            self.func(f, f.name)
        return self.problems

    def problem(self, message: str) -> None:
        self.problems.append(f"{self.where}: {message}")

    def allowed(self, form: Form | None) -> None:
        """A form of the language, or a problem naming the pass that removes or makes it."""
        if form is not None and not self.language.allows(form):
            self.problem(f"{form} is not allowed in {self.language.name} "
                         f"({why_not(form, self.language)})")

    # ---------------------------------------------------------- scoping

    def func(self, f: ir.Func, name: str) -> None:
        self.defined, self.where = set(), name
        if f.kind not in KINDS:
            self.problem(f"unknown function kind {f.kind!r}")
        for form in form_of_func(f):
            self.allowed(form)
        self.kernel = f if f.kind == "kernel" else None
        self.inputs = {p.name for p in f.params if isinstance(p.type, ir.TType) and p.type.rank}
        self.outputs = {o.name for o in f.outputs}
        if self.kernel is None:
            self.inputs = set()
            self.not_a_kernel(f)
        else:
            self.kernel_header(f)
        scope: Scope = {}
        for p in f.params + f.outputs:
            self.define(p, scope)
        self.block(f.body, scope, name)
        if self.kernel is not None and f.body.result != ir.Lit(True, ir.TType((), "bool")):
            self.problem("a kernel's body returns true")
        if f.kernel is not None and f.kernel.func:
            self.chosen_kernel(f)
        if f.grad is not None:
            self.func(f.grad, f"{name}.grad")

    # ---------------------------------------------------------- kernels

    def not_a_kernel(self, f: ir.Func) -> None:
        if f.outputs or f.launch is not None:
            self.problem(f"a {f.kind} function has outputs or a launch")

    def kernel_header(self, f: ir.Func) -> None:
        """Outputs are tensors, the launch a grid of 1 to 3 sizes and an init per output."""
        launch = f.launch
        if launch is None:
            self.problem("a kernel without a launch")
            return
        if not 1 <= len(launch.grid) <= 3 or any(not isinstance(g, int) or g < 0
                                                 for g in launch.grid):
            self.problem(f"invalid grid {launch.grid}")
        for hint in (launch.warps, launch.stages):
            if hint is not None and (not isinstance(hint, int) or hint < 0):
                self.problem(f"invalid launch hint {hint!r}")
        if len(launch.inits) != len(f.outputs) or any(i not in INITS.values()
                                                      for i in launch.inits):
            self.problem(f"inits {launch.inits} for {len(f.outputs)} outputs")
        for o in f.outputs:
            if not isinstance(o.type, ir.TType) or not o.type.rank:
                self.problem(f"output {o.name} is not a tensor: {o.type}")
        if f.kernel is not None:
            self.problem("a kernel has a kernel choice")

    def chosen_kernel(self, f: ir.Func) -> None:
        """An op's kernel takes the op's parameters and writes what the op returns."""
        k = self.funcs.get(f.kernel.func)
        if k is None or k.kind != "kernel":
            self.problem(f"chosen kernel {f.kernel.func} is not a kernel Func")
            return
        if tuple(p.type for p in k.params) != tuple(p.type for p in f.params):
            self.problem(f"kernel {k.name} takes other parameters than the op")
        result = f.body.result.type
        results = result.items if isinstance(result, ir.TupleTy) else (result,)
        if tuple(o.type for o in k.outputs) != results:
            self.problem(f"kernel {k.name} writes {[str(o.type) for o in k.outputs]}, "
                         f"the op returns {result}")

    def memory_uses(self, e: ir.Expr) -> None:
        """Memory is only the first operand of a load, store or atomic."""
        memory = self.inputs | self.outputs
        if not memory:
            return
        first = isinstance(e, ir.Prim) and e.op in MEMORY_PRIMS
        for k, a in enumerate(_atoms(e)):
            if isinstance(a, ir.Var) and a.name in memory and not (first and k == 0):
                self.problem(f"memory {a.name} used as a value")

    def memory_prim(self, e: ir.Prim) -> ir.Ty | None:
        """load / store / atomics: memory, integer offsets, mask, value or other."""
        if self.kernel is None:
            self.problem(f"{e.op} outside a kernel")
            return e.type
        store = e.op in ir.EFFECTS
        if not (3 if store else 2) <= len(e.args) <= 4:
            self.problem(f"{e.op} with {len(e.args)} operands")
            return e.type
        mem, offsets = e.args[0], e.args[1]
        names = self.outputs if store else self.inputs
        if not isinstance(mem, ir.Var) or mem.name not in names:
            self.problem(f"{e.op} of {mem}, not a kernel {'output' if store else 'input'}")
            return e.type
        shape, dtype = offsets.type.shape, mem.type.dtype
        if offsets.type.dtype[0] not in "iu":
            self.problem(f"{e.op} offsets of dtype {offsets.type.dtype}")
        rest = list(e.args[2:])
        if store:
            self.operand(rest.pop(0), shape, dtype, f"{e.op} value")
            if e.op in ATOMIC_DTYPES and dtype not in ATOMIC_DTYPES[e.op]:
                self.problem(f"{e.op} of {dtype} memory")
        if rest:
            self.operand(rest.pop(0), shape, "bool", f"{e.op} mask")
        if rest:
            self.operand(rest.pop(0), (), dtype, "load other")
        want = ir.TType((), "bool") if store else ir.TType(shape, dtype)
        return self.expect(want, e.type, e.op)

    def operand(self, a: ir.Atom, shape: tuple[int, ...], dtype: str, what: str) -> None:
        """A scalar, or a tile of exactly `shape`, of `dtype`."""
        if a.type.dtype != dtype or a.type.shape not in ((), shape):
            self.problem(f"{what} is {a.type}, expected {dtype} of shape () or {shape}")

    def program_id(self, e: ir.Prim) -> ir.Ty:
        axis = e.attr("axis")
        grid = self.kernel.launch.grid if self.kernel and self.kernel.launch else ()
        if self.kernel is None:
            self.problem("program_id outside a kernel")
        elif not isinstance(axis, int) or not 0 <= axis < len(grid):
            self.problem(f"program_id axis {axis!r} for a grid of {len(grid)} axes")
        return self.expect(ir.TType((), "i32"), e.type, "program_id")

    def define(self, v: ir.Var, scope: Scope) -> None:
        if v.name in self.defined:
            self.problem(f"{v.name} defined more than once")
        self.defined.add(v.name)
        scope[v.name] = v
        self.check_type(v.type, v.name)

    def use(self, a: ir.Atom, scope: Scope) -> None:
        if isinstance(a, ir.Lit):
            self.literal(a)
        elif not isinstance(a, ir.Var):
            self.problem(f"operand {a!r} is not an atom")
        elif a.name not in scope:
            self.problem(f"{a.name} used before its definition (or outside its scope)")
        elif scope[a.name].type != a.type:
            self.problem(f"{a.name} used as {a.type}, defined as {scope[a.name].type}")

    def literal(self, a: ir.Lit) -> None:
        d, v = a.type.dtype, a.value
        ok = (isinstance(v, bool) if d == "bool" else
              isinstance(v, int) and not isinstance(v, bool) if d[0] in "iu" else
              isinstance(v, (int, float)) and not isinstance(v, bool))
        if a.type.shape != () or not ok:
            self.problem(f"literal {v!r} does not fit its type {a.type}")

    def check_type(self, t: ir.Ty, what: str) -> None:
        if isinstance(t, ir.TupleTy):
            for item in t.items:
                self.check_type(item, what)
        elif not isinstance(t, ir.TType) or t.dtype not in DTYPES \
                or any(not isinstance(d, int) or d < 0 for d in t.shape):
            self.problem(f"{what} has an invalid type {t}")

    def block(self, b: ir.Block, outer: Scope, where: str) -> ir.Ty:
        """Check a block in a copy of `outer`; its bindings are not visible after it."""
        scope = dict(outer)
        for bind in b.binds:
            self.where = f"{where}/{bind.var.name}"
            ty = self.expr(bind.expr, scope)
            if ty is not None and ty != bind.var.type:
                self.problem(f"bound as {bind.var.type} to a value of type {ty}")
            self.define(bind.var, scope)
        self.where = f"{where}/return"
        self.use(b.result, scope)
        self.memory_uses(b.result)
        self.where = where
        return b.result.type

    # ------------------------------------------------------- expressions

    def expr(self, e: ir.Expr, scope: Scope) -> ir.Ty | None:
        """Check e; return its type (None when a problem makes it unknown)."""
        for a in _atoms(e):
            self.use(a, scope)
        self.memory_uses(e)
        callee = self.funcs.get(e.callee) if isinstance(e, ir.Call) else None
        self.allowed(form_of_expr(e, self.kernel is not None, callee and callee.kind))
        if isinstance(e, (ir.Var, ir.Lit)):
            return e.type
        if isinstance(e, ir.Prim):
            return self.prim(e)
        if isinstance(e, ir.Einsum):
            return self.einsum(e)
        if isinstance(e, ir.Call):
            return self.call(e)
        if isinstance(e, ir.MakeTuple):
            return self.expect(ir.TupleTy(tuple(a.type for a in e.items)), e.type, "tuple")
        if isinstance(e, ir.GetItem):
            return self.get_item(e)
        if isinstance(e, ir.If):
            return self.if_(e, scope)
        if isinstance(e, ir.Loop):
            return self.loop(e, scope)
        if isinstance(e, ir.While):
            return self.while_(e, scope)
        if isinstance(e, ir.Comprehension):
            return self.comprehension(e)
        self.problem(f"not an expression: {type(e).__name__}")
        return None

    def expect(self, want: ir.Ty, got: ir.Ty, what: str) -> ir.Ty:
        if want != got:
            self.problem(f"{what} should have type {want}, has {got}")
        return got

    def call(self, e: ir.Call) -> ir.Ty:
        callee = self.funcs.get(e.callee)
        if callee is None:
            self.problem(f"call of unknown function {e.callee}")
            return e.type
        if callee.kind == "kernel":
            self.problem(f"call of kernel {e.callee}: kernels are launched, never called")
            return e.type
        if len(e.args) != len(callee.params):
            self.problem(f"call of {e.callee} with {len(e.args)} arguments, "
                         f"it takes {len(callee.params)}")
            return e.type
        for k, (a, p) in enumerate(zip(e.args, callee.params)):
            if a.type != p.type:
                self.problem(f"argument {k} of {e.callee} is {a.type}, parameter is {p.type}")
        return self.expect(callee.body.result.type, e.type, f"call of {e.callee}")

    def get_item(self, e: ir.GetItem) -> ir.Ty:
        t = e.tup.type
        if not isinstance(t, ir.TupleTy) or not 0 <= e.index < len(t.items):
            self.problem(f"item {e.index} of a value of type {t}")
            return e.type
        return self.expect(t.items[e.index], e.type, f"item {e.index}")

    def if_(self, e: ir.If, scope: Scope) -> ir.Ty:
        if e.cond.type != ir.TType((), "bool"):
            self.problem(f"if condition of type {e.cond.type}, not bool")
        where = self.where
        then = self.block(e.then, scope, f"{where}/then")
        orelse = self.block(e.orelse, scope, f"{where}/else")
        self.where = where
        self.expect(e.type, then, "then branch")
        self.expect(e.type, orelse, "else branch")
        return e.type

    def carried(self, carried: tuple[ir.Var, ...], init: tuple[ir.Atom, ...],
                scope: Scope) -> Scope:
        if len(carried) != len(init):
            self.problem(f"{len(carried)} carried values, {len(init)} initial values")
        for v, a in zip(carried, init):
            if v.type != a.type:
                self.problem(f"carried {v.name}: {v.type} starts as {a.type}")
        inner = dict(scope)
        for v in carried:
            self.define(v, inner)
        return inner

    def next_values(self, got: ir.Ty, want: tuple[ir.Ty, ...], what: str) -> None:
        """A body returns its next values as a tuple (one value may also come bare)."""
        if got != ir.TupleTy(want) and not (len(want) == 1 and got == want[0]):
            self.problem(f"{what} returns {got}, expected {ir.TupleTy(want)}")

    def loop(self, e: ir.Loop, scope: Scope) -> ir.Ty:
        where = self.where
        if e.index.type != ir.TType((), "i64"):
            self.problem(f"loop index {e.index.name} is {e.index.type}, not i64")
        self.bounds(e)
        inner = self.carried(e.carried, e.init, scope)
        self.define(e.index, inner)
        body = self.block(e.body, inner, f"{where}/body")
        self.where = where
        carried = tuple(v.type for v in e.carried)
        if not e.yields:
            self.next_values(body, carried, "loop body")
            return self.expect(ir.TupleTy(carried), e.type, "loop")
        if not e.static:
            return e.type  # reported by `bounds`
        count = len(carried) + e.yields
        if count == 1 and isinstance(body, ir.TType):
            body = ir.TupleTy((body,))  # one yield and nothing carried may come bare
        if e.yields < 0 or not isinstance(body, ir.TupleTy) or len(body.items) != count:
            self.problem(f"scan body returns {body}, expected the carried values and "
                         f"{e.yields} yield(s)")
            return e.type
        self.next_values(ir.TupleTy(body.items[:len(carried)]), carried, "scan body")
        stacks = []
        for y in body.items[len(carried):]:
            if not isinstance(y, ir.TType):
                self.problem(f"scan yields {y}, not a tensor")
                return e.type
            stacks.append(ir.TType((e.trips(),) + y.shape, y.dtype))
        return self.expect(ir.TupleTy(carried + tuple(stacks)), e.type, "scan")

    def bounds(self, e: ir.Loop) -> None:
        """Compile-time bounds run forwards; a run-time bound is an i64 scalar, in a kernel
        only, and never a scan's (scope is checked with the loop's other operands)."""
        for b in (e.lo, e.hi):
            if isinstance(b, ir.Lit) or not isinstance(b, (int, ir.Var)):
                self.problem(f"loop bound {b} is neither an integer nor a variable")
            elif isinstance(b, ir.Var) and b.type != ir.TType((), "i64"):
                self.problem(f"loop bound {b.name} is {b.type}, not an i64 scalar")
        if e.runtime_bounds and self.kernel is None:
            self.problem("a loop with run-time bounds outside a kernel")
        if e.runtime_bounds and e.yields:
            self.problem("a scan with run-time bounds (its stacks' length is not known)")
        if e.static and e.hi < e.lo:
            self.problem(f"loop range {e.lo}..{e.hi} runs backwards")

    def while_(self, e: ir.While, scope: Scope) -> ir.Ty:
        where = self.where
        inner = self.carried(e.carried, e.init, scope)
        cond = self.block(e.cond, inner, f"{where}/cond")
        if cond != ir.TType((), "bool"):
            self.problem(f"while condition of type {cond}, not bool")
        body = self.block(e.body, inner, f"{where}/body")
        self.where = where
        carried = tuple(v.type for v in e.carried)
        self.next_values(body, carried, "while body")
        return self.expect(ir.TupleTy(carried), e.type, "while")

    # ---------------------------------------------------------------- prims

    def prim(self, e: ir.Prim) -> ir.Ty | None:
        spec = ir.PRIMS.get(e.op)
        if spec is None:
            self.problem(f"unknown prim {e.op}")
            return None
        arity, attrs = spec
        if arity is not None and len(e.args) != arity:
            self.problem(f"{e.op} takes {arity} operands, has {len(e.args)}")
            return None
        given = dict(e.attrs)
        missing = [a for a in attrs if a not in given]
        if missing:
            self.problem(f"{e.op} lacks attribute {missing[0]}")
            return None
        if not isinstance(e.type, ir.TType) or any(not isinstance(a.type, ir.TType)
                                                   for a in e.args):
            self.problem(f"{e.op} on or to a tuple")
            return None
        if e.op in MEMORY_PRIMS:
            return self.memory_prim(e)
        if e.op == "program_id":
            return self.program_id(e)
        want = _prim_type(e, given)
        if isinstance(want, str):
            self.problem(f"{e.op}: {want}")
            return None
        if want is not None and want != e.type:
            self.problem(f"{e.op} of {', '.join(str(a.type) for a in e.args)} "
                         f"gives {want}, not {e.type}")
        return e.type

    def einsum(self, e: ir.Einsum) -> ir.Ty:
        want = einsum_type(e)
        if isinstance(want, str):
            self.problem(f"einsum[{e.spec}]: {want}")
        elif want != e.type.shape:
            self.problem(f"einsum[{e.spec}] gives shape {want}, not {e.type}")
        if len({a.type.dtype for a in e.args}) > 1:
            self.problem(f"einsum[{e.spec}] of mixed dtypes")
        return e.type

    # -------------------------------------------------------- index notation

    def comprehension(self, e: ir.Comprehension) -> ir.Ty:
        names = [n for n, _ in e.outputs]
        if len(set(names)) != len(names):
            self.problem(f"output indices listed twice: {names}")
        if tuple(k for _, k in e.outputs) != e.type.shape:
            self.problem(f"outputs {e.outputs} do not give the shape of {e.type}")
        dtype = self.ix(e.body, dict(e.outputs))
        if dtype is not None and dtype != e.type.dtype:
            self.problem(f"index expression of dtype {dtype} bound as {e.type}")
        return e.type

    def ix(self, e: ir.IxExpr, env: dict[str, int]) -> str | None:
        """Check an index expression (its atoms are checked by `expr`); return its dtype."""
        if isinstance(e, ir.IxAccess):
            t = e.tensor.type
            if len(e.indices) != t.rank:
                self.problem(f"{e.tensor} of rank {t.rank} accessed with {len(e.indices)} indices")
            for i, extent in zip(e.indices, t.shape):
                if i not in env:
                    self.problem(f"index {i} is neither an output nor reduced")
                elif env[i] != extent:
                    self.problem(f"index {i} of extent {env[i]} indexes an axis of {extent}")
            return self.same_dtype(e.dtype, t.dtype, f"access of {e.tensor}")
        if isinstance(e, ir.IxGather):
            return self.ix_gather(e, env)
        if isinstance(e, ir.IxScalar):
            if e.value.type.shape != ():
                self.problem(f"{e.value} used as a scalar has type {e.value.type}")
            return self.same_dtype(e.dtype, e.value.type.dtype, f"scalar {e.value}")
        if isinstance(e, ir.IxPrim):
            if e.op not in ELEMENTWISE or len(e.args) != ir.PRIMS[e.op][0]:
                self.problem(f"{e.op} with {len(e.args)} operands in index notation")
            for a in e.args:
                self.ix(a, env)
            return e.dtype
        if isinstance(e, ir.IxReduce):
            if e.op not in REDUCE_OPS:
                self.problem(f"unknown reduction {e.op}")
            body = self.ix(e.body, {**env, **dict(e.axes)})
            if body is not None and body != e.dtype:
                self.problem(f"{e.op}<{e.dtype}> over a body of dtype {body}")
            return e.dtype
        self.problem(f"not an index expression: {type(e).__name__}")
        return None

    def ix_gather(self, e: ir.IxGather, env: dict[str, int]) -> str | None:
        """A gather: one position per axis, each an index name of the axis's extent or an
        integer index expression (which may take any value)."""
        t = e.tensor.type
        if len(e.positions) != t.rank:
            self.problem(f"{e.tensor} of rank {t.rank} gathered with {len(e.positions)} "
                         "positions")
        for p, extent in zip(e.positions, t.shape):
            if not isinstance(p, str):
                dtype = self.ix(p, env)
                if dtype is not None and dtype[0] not in "iu":
                    self.problem(f"gather position of dtype {dtype} into {e.tensor}")
            elif p not in env:
                self.problem(f"index {p} is neither an output nor reduced")
            elif env[p] != extent:
                self.problem(f"index {p} of extent {env[p]} indexes an axis of {extent}")
        return self.same_dtype(e.dtype, t.dtype, f"gather from {e.tensor}")

    def same_dtype(self, said: str, actual: str, what: str) -> str:
        if said != actual:
            self.problem(f"{what} says dtype {said}, is {actual}")
        return actual


def _atoms(e: ir.Expr) -> tuple[ir.Atom, ...]:
    """The atoms an expression reads; nothing for an unknown node (reported elsewhere)."""
    try:
        return expr_atoms(e)
    except TypeError:
        return ()
