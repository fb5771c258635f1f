"""emit-triton: kernel Funcs as `@triton.jit` functions and their launchers, in generated PyTorch.

`emit_torch` calls this module for the programs that launch kernels. It prints:

- `PRELUDE`: Triton imported if it can be (a module without Triton still imports and runs the
  op bodies), and two flags read once, at import: whether Triton is there, and whether
  Triton's interpreter is on (`TRITON_INTERPRET=1`; `@triton.jit` decides at decoration
  time, which is this module's import, whether it compiles or interprets).
- one `@triton.jit` function per kernel Func (`KernelEmitter`), all inside `if _LT_TRITON:`.
  Memory parameters and results are pointers; scalar parameters are pointers too, to a 0-d
  tensor read once with `tl.load` (exact dtypes for every scalar, where Triton would type a
  Python number itself, and no host synchronisation to get the number). Shapes are
  concrete, so every size is a literal; what each primitive prints as is
  `linnet.emit.triton_ops`.
- one launcher per op whose kernel runs (`launcher`): contiguous inputs in the dtypes the
  kernel's pointers have, outputs allocated as the kernel's `Launch.inits` say, the launch
  with the kernel's hints, and the outputs back in the torch bodies' storage dtypes.

Half precision under the interpreter: Triton's interpreter computes bf16 wrongly, so there
f16 and bf16 tiles are computed in f32. Kernels spell the half dtypes `_lt_f16`/`_lt_bf16`,
constexpr globals that are `tl.float32` under the interpreter and the half dtypes on a GPU,
and launchers hand kernels f32 copies of half tensors (`_LT_F16`/`_LT_BF16`) and round
results back to the half dtype with torch (round to nearest even).
"""

from __future__ import annotations

import inspect
import math
import re

from ..ir import tensor as ir
from ..ir.printer import print_expr
from ..passes.traverse import expr_blocks
from . import torch_ops as tops
from . import triton_ops as tt
from .writer import CodeWriter

BOOL = ir.TType((), "bool")
TRUE = ir.Lit(True, BOOL)
MEMORY = frozenset({"load"}) | ir.EFFECTS

IMPORTS = "import contextlib\nimport os"

PRELUDE = '''
# Kernels run through Triton when it can be imported: on CUDA tensors, or on any tensors under
# Triton's interpreter (TRITON_INTERPRET=1); elsewhere every op runs its body. Both facts are
# read once, here, at import, because @triton.jit below decides then whether it compiles or
# interprets.
# Under the interpreter f16 and bf16 tiles are computed in f32 (the interpreter computes bf16
# wrongly): kernels spell those dtypes _lt_f16/_lt_bf16, which are then tl.float32, and the
# launchers hand kernels f32 copies of half tensors (_LT_F16/_LT_BF16) and round the results
# back with torch. On a GPU all of these are the half dtypes themselves.
_LT_INTERPRET = os.environ.get("TRITON_INTERPRET") == "1"
try:
    import triton
    import triton.language as tl
except Exception:  # no Triton (or a broken one): every op runs its body
    triton = None
_LT_TRITON = triton is not None
_LT_F16 = torch.float32 if _LT_INTERPRET else torch.float16
_LT_BF16 = torch.float32 if _LT_INTERPRET else torch.bfloat16
_LT_HERE = contextlib.nullcontext()  # a launch on the current device enters nothing
_LT_FUNCTORCH = getattr(torch._C, "_are_functorch_transforms_active", lambda: False)
_LT_COMPILING = getattr(torch.compiler, "is_compiling", lambda: False)
'''.strip("\n")

CONSTEXPRS = '''
    _lt_interp = tl.constexpr(_LT_INTERPRET)
    _lt_f16 = tl.constexpr(tl.float32 if _LT_INTERPRET else tl.float16)
    _lt_bf16 = tl.constexpr(tl.float32 if _LT_INTERPRET else tl.bfloat16)
    _lt_inf = tl.constexpr(float("inf"))
    _lt_nan = tl.constexpr(float("nan"))
'''.strip("\n")

#: `@triton.jit` helpers that kernels call, by name; a module holds the ones it uses.
JIT_HELPERS = {
    "_lt_sdiv": '''
@triton.jit
def _lt_sdiv(a, b):
    """Signed division truncating toward zero; MIN / -1 wraps to MIN and x / 0 is 0 (LLVM
    leaves both undefined)."""
    m = b == -1
    z = b == 0
    q = tl.where(m, -a, a // tl.where(m | z, 1, b))
    return tl.where(z, 0, q)''',
    "_lt_smod": '''
@triton.jit
def _lt_smod(a, b):
    """Signed remainder with the dividend's sign; MIN % -1 and x % 0 are 0, as x % 1."""
    return a % tl.where((b == -1) | (b == 0), 1, b)''',
    "_lt_udiv": '''
@triton.jit
def _lt_udiv(a, b):
    """Unsigned division truncating; x / 0 is 0 (LLVM leaves it undefined)."""
    z = b == 0
    return tl.where(z, 0, a // tl.where(z, 1, b))''',
    "_lt_umod": '''
@triton.jit
def _lt_umod(a, b):
    """Unsigned remainder; x % 0 is 0, as x % 1."""
    return a % tl.where(b == 0, 1, b)''',
    "_lt_mul": '''
@triton.jit
def _lt_mul(a, b):
    """The combine of products (tl.reduce)."""
    return a * b''',
    "_lt_fmax": '''
@triton.jit
def _lt_fmax(a, b):
    """The combine of float maxima: NaN propagates (tl.max would drop it)."""
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)''',
    "_lt_fmin": '''
@triton.jit
def _lt_fmin(a, b):
    """The combine of float minima: NaN propagates (tl.min would drop it)."""
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)''',
    "_lt_first": '''
@triton.jit
def _lt_first(a, b):
    """Reduces a one-element tile to its scalar (never actually combines)."""
    return a''',
    "_lt_tanh": '''
@triton.jit
def _lt_tanh(x):
    """tanh of f32/f64: libdevice on a GPU; the interpreter has no libdevice, so a formula
    (an odd series near 0, where (1 - e) / (1 + e) would cancel)."""
    if _lt_interp:
        ax = tl.abs(x)
        e = tl.exp(-2.0 * ax)
        x2 = x * x
        small = ax * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
        t = tl.where(ax < 0.125, small, (1.0 - e) / (1.0 + e))
        return tl.where(x < 0, -t, t)
    else:
        return libdevice.tanh(x)''',
}
_JIT_NAME = re.compile(r"\b_lt_[a-z0-9_]+")


# ------------------------------------------------------------- signatures

def memory_names(block: ir.Block) -> set[str]:
    """Variables a block (nested blocks included) reads or writes as memory."""
    names: set[str] = set()
    for bind in block.binds:
        e = bind.expr
        if isinstance(e, ir.Prim) and e.op in MEMORY and e.args \
                and isinstance(e.args[0], ir.Var):
            names.add(e.args[0].name)
        for inner in expr_blocks(e):
            names |= memory_names(inner)
    return names


def is_memory(p: ir.Var, used: set[str]) -> bool:
    """A tensor parameter is memory; a rank-0 one is a scalar value unless it is loaded."""
    return not isinstance(p.type, ir.TType) or p.type.rank > 0 or p.name in used


def kernel_dtype(dtype: str) -> str:
    """The torch dtype of a kernel's pointer for a Linnet dtype, as code."""
    if dtype == "f16":
        return "_LT_F16"
    if dtype == "bf16":
        return "_LT_BF16"
    if dtype in ("u16", "u32", "u64"):
        return "torch." + tops.PUBLIC[dtype]
    return tops.torch_dtype(dtype)


def initial_fill(init: str, dtype: str) -> str:
    """The first contents of a result, for `torch.full` (None: `torch.empty`)."""
    if init == "empty":
        return "None"
    if init == "zero":
        return "False" if dtype == "bool" else "0"
    if init not in ("lowest", "highest"):
        raise ValueError(f"unknown result init {init!r}")
    low = init == "lowest"
    if tops.is_float(dtype):
        return 'float("-inf")' if low else 'float("inf")'
    bits = tops.BITS[dtype]
    if dtype in tops.UNSIGNED:
        return "0" if low else str((1 << bits) - 1)
    return str(-(1 << (bits - 1))) if low else str((1 << (bits - 1)) - 1)


# ----------------------------------------------------------------- kernels

class KernelEmitter(CodeWriter):
    """Prints one kernel Func as a `@triton.jit` function: pointers, then the body's lines."""

    def __init__(self, func: ir.Func, name: str, numerics: str, comment) -> None:
        if func.kind != "kernel":
            raise ValueError(f"{func.name} is not a kernel Func")
        super().__init__()
        self.func, self.jit_name, self.numerics, self.comment = func, name, numerics, comment
        self.consts: dict[str, str] = {}

    def emit(self) -> str:
        f, note = self.func, self.comment
        used = memory_names(f.body)
        env: dict[str, object] = {}
        args, head = [], []
        for k, p in enumerate(f.params):
            args.append(f"p{k}")
            if is_memory(p, used):
                env[p.name] = f"p{k}"
                head.append(f"# p{k} = {note(p.name)}: {note(p.type)} (memory)")
            else:  # a scalar, passed as a pointer to a 0-d tensor
                env[p.name] = self.fresh()
                self.line(1, f"{env[p.name]} = tl.load(p{k})  # {note(p.name)}: {note(p.type)}")
        inits = f.launch.inits if f.launch else ()
        for k, o in enumerate(f.outputs):
            args.append(f"o{k}")
            env[o.name] = f"o{k}"
            start = inits[k] if k < len(inits) else "empty"
            head.append(f"# o{k} = {note(o.name)}: {note(o.type)} (result, starts {start})")
        for bind in f.body.binds:  # the body's result (true) is not read
            self.bind(bind, env, 1)
        source = f" from {note(f.source)}" if f.source else ""
        text = ["@triton.jit", f"def {self.jit_name}({', '.join(args)}):",
                f"    # kernel {note(f.name)}{source}"]
        text += ["    " + h for h in head]
        text += [f"    {c} = {code}" for code, c in self.consts.items()]
        if not self.lines and not self.consts:
            self.lines.append("    pass")
        return "\n".join(text + self.lines)

    # ---------------------------------------------------------- values

    def atom(self, a: ir.Atom, env: dict) -> object:
        """A name (or a list of names for a tuple value); literals are hoisted constants."""
        if isinstance(a, ir.Var):
            if a.name not in env:
                raise ValueError(f"{self.func.name}: {a.name!r} used before it is bound")
            return env[a.name] if env[a.name] is not None else self.atom(TRUE, env)
        code = tt.literal_expr(a.value, a.type.dtype)
        if code not in self.consts:
            self.consts[code] = f"c{len(self.consts)}"
        return self.consts[code]

    def name(self, a: ir.Atom, env: dict) -> str:
        v = self.atom(a, env)
        if not isinstance(v, str):
            raise ValueError(f"{self.func.name}: a tuple used as a tile")
        return v

    # ---------------------------------------------------------- blocks

    def block(self, b: ir.Block, env: dict, depth: int) -> object:
        env = dict(env)
        for bind in b.binds:
            self.bind(bind, env, depth)
        return self.atom(b.result, env)

    def bind(self, bind: ir.Bind, env: dict, depth: int) -> None:
        e, var = bind.expr, bind.var
        note = self.comment(f"{var.name}: {var.type}")
        if isinstance(e, (ir.Var, ir.Lit)):
            env[var.name] = self.atom(e, env)
        elif isinstance(e, ir.MakeTuple):
            env[var.name] = [self.atom(x, env) for x in e.items]
        elif isinstance(e, ir.GetItem):
            env[var.name] = self.atom(e.tup, env)[e.index]
        elif isinstance(e, ir.Prim) and e.op in ir.EFFECTS:
            self.line(depth, self.memory(e, env) + f"  # {note} = {self.comment(print_expr(e))}")
            env[var.name] = None  # an effect's value: true, should anything read it
        elif isinstance(e, (ir.Prim, ir.Einsum)):
            target = self.fresh()
            self.line(depth, f"{target} = {self.expr(e, env)}  # {note} = "
                             f"{self.comment(print_expr(e))}")
            env[var.name] = target
        elif isinstance(e, ir.If):
            self.if_(e, var, env, depth)
        elif isinstance(e, ir.Loop):
            self.loop(e, var, env, depth)
        elif isinstance(e, ir.While):
            self.while_(e, var, env, depth)
        else:
            raise ValueError(f"{type(e).__name__} is not available in a kernel "
                             "(calls are inlined and index notation lowered before printing)")

    def expr(self, e: ir.Prim | ir.Einsum, env: dict) -> str:
        args = [self.name(a, env) for a in e.args]
        types = [a.type for a in e.args]
        if isinstance(e, ir.Einsum):
            raise ValueError("an einsum in a kernel: the pass lower-kernel-einsums runs first")
        if e.op == "load":
            return self.memory(e, env)
        return tt.prim_expr(e.op, args, types, e.type, e.attrs, self.numerics)

    def memory(self, e: ir.Prim, env: dict) -> str:
        mem = e.args[0]
        if not isinstance(mem, ir.Var) or not isinstance(mem.type, ir.TType):
            raise ValueError(f"{e.op}: the first operand must be a memory tensor")
        args = [self.name(a, env) for a in e.args[1:]]
        return tt.memory_stmt(e.op, self.name(mem, env), args, mem.type,
                              [a.type for a in e.args[1:]])

    # ---------------------------------------------------- control flow

    def targets(self, ty: ir.Ty) -> object:
        """Fresh names shaped like a value of type ty (a list for a tuple)."""
        if isinstance(ty, ir.TupleTy):
            return [self.targets(t) for t in ty.items]
        return self.fresh()

    def assign(self, depth: int, targets: object, values: object) -> None:
        """`a, b = x, y` for the leaves of matching structures (all read before any write)."""
        ts, vs = _leaves(targets), _leaves(values)
        if len(ts) != len(vs):
            raise ValueError(f"{self.func.name}: a block's value does not match its type")
        if ts:
            self.line(depth, f"{', '.join(ts)} = {', '.join(vs)}")

    def if_(self, e: ir.If, var: ir.Var, env: dict, depth: int) -> None:
        targets = self.targets(e.type)
        self.line(depth, f"if {self.name(e.cond, env)}:  # {self.comment(var.name)}")
        self.assign(depth + 1, targets, self.block(e.then, env, depth + 1))
        self.line(depth, "else:")
        self.assign(depth + 1, targets, self.block(e.orelse, env, depth + 1))
        env[var.name] = targets

    def carry(self, e: ir.Loop | ir.While, env: dict, depth: int) -> tuple[list, dict]:
        """Names for the carried values, set before the loop; the env of its blocks."""
        if len(e.init) != len(e.carried):
            raise ValueError("a loop's carried variables and initial values differ in number")
        carried = [self.targets(v.type) for v in e.carried]
        self.assign(depth, carried, [self.atom(a, env) for a in e.init])
        inner = dict(env)
        inner.update({v.name: n for v, n in zip(e.carried, carried)})
        return carried, inner

    def next_values(self, e: ir.Loop | ir.While, res: object) -> list:
        """The body's result as the list of next carried values."""
        if len(e.carried) == 1 and not isinstance(e.body.result.type, ir.TupleTy):
            return [res]
        if not isinstance(res, list) or len(res) != len(e.carried):
            raise ValueError(f"{self.func.name}: a loop body returns the wrong values")
        return res

    def loop(self, e: ir.Loop, var: ir.Var, env: dict, depth: int) -> None:
        """`for i in range(lo, hi)`; Triton carries the names reassigned in the body."""
        if e.yields:
            raise ValueError("a scan in a kernel: the pass lower-kernel-scans runs first")
        carried, inner = self.carry(e, env, depth)
        i, index = self.fresh("i"), self.fresh()
        self.line(depth, f"for {i} in range({self.bounds(e, env)}):"
                         f"  # {self.comment(e.index.name)}")
        self.line(depth + 1, f"{index} = tl.cast({i}, tl.int64)")
        inner[e.index.name] = index
        self.assign(depth + 1, carried, self.next_values(e, self.block(e.body, inner, depth + 1)))
        env[var.name] = carried

    def bounds(self, e: ir.Loop, env: dict) -> str:
        """`lo, hi` of `range`: compile-time bounds as numbers (hi at least lo, so no trip
        when hi <= lo), a run-time bound as its i64 scalar (Triton's loop runs no trip
        when hi <= lo by itself)."""
        if e.static:
            return f"{e.lo}, {max(e.lo, e.hi)}"
        return ", ".join(str(b) if isinstance(b, int) else self.name(b, env)
                         for b in (e.lo, e.hi))

    def while_(self, e: ir.While, var: ir.Var, env: dict, depth: int) -> None:
        """The condition block runs before the loop and again at the end of each trip."""
        carried, inner = self.carry(e, env, depth)
        go = self.fresh("w")
        self.line(depth, f"{go} = {self.block(e.cond, inner, depth)}")
        self.line(depth, f"while {go}:")
        self.assign(depth + 1, carried, self.next_values(e, self.block(e.body, inner, depth + 1)))
        self.line(depth + 1, f"{go} = {self.block(e.cond, inner, depth + 1)}")
        env[var.name] = carried


def _leaves(x: object) -> list[str]:
    if isinstance(x, list):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]


def kernel_source(func: ir.Func, name: str, numerics: str, comment) -> str:
    """The `@triton.jit` function of a kernel Func."""
    return KernelEmitter(func, name, numerics, comment).emit()


def jit_helpers(code: str) -> list[str]:
    """The sources of the `@triton.jit` helpers `code` calls (in table order)."""
    used = set(_JIT_NAME.findall(code))
    return [JIT_HELPERS[n].strip("\n") for n in JIT_HELPERS if n in used]


def triton_section(kernels: list[str]) -> str:
    """Everything Triton defines, guarded so that a module without Triton still imports."""
    code = "\n".join(kernels)
    parts = [CONSTEXPRS] + jit_helpers(code) + kernels
    if "_lt_tanh" in code:
        parts.insert(0, "    from triton.language.extra import libdevice")
    body = "\n\n".join(_indent(p) if not p.startswith("    ") else p for p in parts)
    return "if _LT_TRITON:\n" + body


def _indent(text: str) -> str:
    return "\n".join(("    " + line) if line else line for line in text.split("\n"))


# --------------------------------------------------------------- launchers

def unwritten_outputs(kernel: ir.Func, launch: ir.Launch) -> list[str]:
    """The outputs a launch would return unwritten: with no programs along some grid axis,
    those that start uninitialized (written by `store`) and have elements."""
    if all(int(g) > 0 for g in launch.grid):
        return []
    inits = list(launch.inits) + ["empty"] * (len(kernel.outputs) - len(launch.inits))
    return [o.name for o, init in zip(kernel.outputs, inits)
            if init == "empty" and math.prod(o.type.shape) > 0]


def require_written(kernel: ir.Func, launch: ir.Launch) -> None:
    """A launcher never returns memory nobody wrote; `choose-kernels` keeps such kernels
    out (E2206), so meeting one here is a compiler bug."""
    unwritten = unwritten_outputs(kernel, launch)
    if unwritten:
        raise ValueError(f"kernel {kernel.name}: grid {launch.grid} launches no program, but "
                         f"{', '.join(unwritten)} would be returned unwritten")


def launcher_source(op: ir.Func, kernel: ir.Func, name: str, kernel_name: str, comment) -> str:
    """The launcher of an op's kernel: `name(_d, *params)` returns what the op returns.

    It runs on every call of the op, so it does only what each call needs, with everything
    that depends on the binding printed as constants (shapes, grid, dtypes, launch hints):
    an input is made contiguous (`.contiguous()` returns the tensor itself when it already
    is), and converted only where its storage dtype is not the kernel's (`_lt_arg`: half
    dtypes under the interpreter, u16/u32/u64); results are allocated like an input of
    their shape and dtype (`torch.empty_like`) where there is one, else with `torch.empty`
    (or `torch.full` at the atomics' identity), and converted back only where their dtypes
    differ (`_lt_result`); the launch enters a CUDA device only when the tensors are not on
    the current one (`_lt_on`)."""
    if len(op.params) != len(kernel.params):
        raise ValueError(f"op {op.name} and kernel {kernel.name} take different parameters")
    launch = kernel.launch or ir.Launch((1,))
    require_written(kernel, launch)
    used = memory_names(kernel.body)
    params = [f"v{k}" for k in range(len(op.params))]
    lines = [f"def {name}({', '.join(['_d'] + params)}):",
             f"    # launches {kernel_name} (kernel {comment(kernel.name)}) for op "
             f"{comment(op.name)}: grid {launch.grid}"]
    args = []
    for k, (v, p) in enumerate(zip(params, kernel.params)):
        if not isinstance(p.type, ir.TType):
            raise ValueError(f"kernel {kernel.name}: parameter {p.name} is not a tensor")
        lines.append(f"    a{k} = {_kernel_arg(v, p.type.dtype)}"
                     f"  # {'memory' if is_memory(p, used) else 'a scalar, by pointer'}")
        args.append(f"a{k}")
    outs = []
    inputs = [(a, p.type) for a, p in zip(args, kernel.params)]
    for k, o in enumerate(kernel.outputs):
        init = launch.inits[k] if k < len(launch.inits) else "empty"
        lines.append(f"    o{k} = {_new_output(o.type, initial_fill(init, o.type.dtype), inputs)}")
        outs.append(_kernel_result(f"o{k}", o.type.dtype))
    hints = "".join(f", {key}={int(val)}" for key, val in
                    (("num_warps", launch.warps), ("num_stages", launch.stages)) if val is not None)
    if all(int(g) > 0 for g in launch.grid):
        first = (args + [f"o{k}" for k in range(len(outs))] or ["torch.empty(0, device=_d)"])[0]
        lines.append(f"    with _lt_on({first}):")
        lines.append(f"        {kernel_name}[{tuple(int(g) for g in launch.grid)!r}]"
                     f"({', '.join(args + [f'o{k}' for k in range(len(outs))])}{hints})")
    result = op.body.result.type
    if isinstance(result, ir.TupleTy):
        lines.append(f"    return ({', '.join(outs)}{',' if len(outs) == 1 else ''})")
    elif len(outs) == 1:
        lines.append(f"    return {outs[0]}")
    else:
        raise ValueError(f"kernel {kernel.name} writes {len(outs)} results, op {op.name} "
                         "returns one")
    return "\n".join(lines)


def _same_dtype(dtype: str) -> bool:
    """Whether a kernel's pointer has the storage dtype of the torch bodies (no conversion)."""
    return kernel_dtype(dtype) == tops.torch_dtype(dtype)


def _kernel_arg(v: str, dtype: str) -> str:
    """An op's tensor as the kernel reads it: contiguous, in the pointer's dtype."""
    if _same_dtype(dtype):
        return f"{v}.contiguous()"
    return f"_lt_arg({v}, {kernel_dtype(dtype)})"


def _new_output(ty: ir.TType, fill: str, inputs: list[tuple[str, ir.TType]]) -> str:
    """A result's memory on the inputs' device: uninitialized for stores, else the atomics'
    start. Made like an input of its shape and dtype where there is one (`torch.empty_like`
    of a contiguous tensor, half the cost of `torch.empty` given a dtype and a device)."""
    dtype, shape = kernel_dtype(ty.dtype), tops.shape_code(ty.shape)
    if fill == "None":
        for a, t in inputs:
            if t.shape == ty.shape and kernel_dtype(t.dtype) == dtype:
                return f"torch.empty_like({a})"
    device = inputs[0][0] + ".device" if inputs else "_d"
    if fill == "None":
        return f"torch.empty({shape}, dtype={dtype}, device={device})"
    return f"torch.full({shape}, {fill}, dtype={dtype}, device={device})"


def _kernel_result(o: str, dtype: str) -> str:
    """A kernel's result in the storage dtype the torch bodies use."""
    if _same_dtype(dtype):
        return o
    return f"_lt_result({o}, {tops.torch_dtype(dtype)})"


# ---------------------------------------------------- runtime helpers (torch)

def _lt_kernel_ok(d, *xs):
    """Run the kernel? Triton is there and either interprets, or every tensor (the op's
    tensors; the device d when it has none) is on CUDA; and neither a `torch.func` transform
    (grad, vmap: a kernel cannot read their wrapped tensors) nor `torch.compile` (which traces
    the body, and Inductor makes its kernels) is at work."""
    if not _LT_TRITON:  # noqa: F821 - a global of the generated module
        return False
    if not _LT_INTERPRET:  # noqa: F821
        for x in xs:
            if not x.is_cuda:
                return False
        if not xs and d.type != "cuda":
            return False
    return not (_LT_FUNCTORCH() or _LT_COMPILING())  # noqa: F821


def _lt_arg(x, dtype):
    """A tensor as a kernel reads it: contiguous, in its pointer's dtype (u64 bits by a view)."""
    if x.dtype != dtype:
        x = x.view(dtype) if dtype == torch.uint64 else x.to(dtype)  # noqa: F821
    return x.contiguous()


def _lt_result(x, dtype):
    """A kernel's result in the storage dtype the torch bodies use (u64 bits by a view)."""
    if x.dtype != dtype:
        x = x.view(dtype) if x.dtype == torch.uint64 else x.to(dtype)  # noqa: F821
    return x


def _lt_on(x):
    """Where to launch for tensors on x's device: Triton launches on the current CUDA device,
    so a launch for another GPU enters that one; on the current one (or off CUDA) nothing."""
    if not x.is_cuda or x.get_device() == torch.cuda.current_device():  # noqa: F821
        return _LT_HERE  # noqa: F821
    return torch.cuda.device(x.device)  # noqa: F821


RUNTIME = (_lt_kernel_ok, _lt_arg, _lt_result, _lt_on)
_RUNTIME_NAME = re.compile(r"\b_lt_[a-z_]+(?=\()")


def runtime_source(code: str) -> str:
    """The torch-side helpers of launchers and choosers that `code` calls (plain functions,
    copied verbatim)."""
    used = set(_RUNTIME_NAME.findall(code))
    return "\n\n\n".join(inspect.getsource(f).rstrip()
                         .replace("  # noqa: F821 - a global of the generated module", "")
                         .replace("  # noqa: F821", "") for f in RUNTIME if f.__name__ in used)
