"""emit-torch: print a tensor-outlined program as one plain PyTorch module.

The module needs only torch. It defines one function per `Func` (`f0_entry`, `f1_op`,
...), each taking the device `_d` on which it makes new tensors and then its parameters,
and `main(*inputs)`, which checks and converts the inputs (Python numbers and arrays become
tensors of the parameter dtypes), calls the entry and returns a tuple of its results (a
tuple-valued entry gives several outputs) in exactly the dtypes and shapes of the IR.

Kernels and gradients (`_ModuleEmitter.func`): an op whose kernel was chosen gets its
kernel printed as a `@triton.jit` function and a launcher (`linnet.emit.triton`), and its
function becomes a chooser: the kernel when Triton is importable and the tensors are on
CUDA (or Triton's interpreter is on), else the body. An op with a kernel or a `grad` clause
goes through its own `torch.autograd.Function` when an input requires grad; under
torch.compile and torch.export an op with a kernel is called as its `torch.library` custom
op (`linnet.emit.torch_library`, docs/scale.md). Triton is
imported only when the module has kernels; under `--numerics exact` it has none, and the
text says nothing of Triton.

What each primitive means is not decided here: `torch_ops.prim_expr` and `einsum_expr` give
the expression for it, the same text the interpreter runs. This printer only lays out
bindings, calls, tuples and control flow: `If` is a Python `if` on `bool(cond)`, a counted
`Loop` a `for` over a Python `range(lo, hi)` (the index, where the body reads it, an i64 0-d
tensor made each trip: `torch.arange` would hold every index at once), a scan appends
each trip's yield to a list and stacks it with `torch.stack`, and `While` is a
`while True` loop that breaks when its condition block gives false.

Names are mangled from a fixed alphabet (`v12` values, `c3` literals, `f2_op` functions);
no text of the user's program reaches the code except in comments, which are sanitized to
printable ASCII so that none can end early.
"""

from __future__ import annotations

from ..ir import tensor as ir
from ..ir.numerics import numerics_of
from ..ir.program_state import ProgramState
from ..passes.traverse import expr_free_vars, free_vars
from ..ir.printer import print_expr
from ..ir import kernel_numerics as kn
from . import torch_ops as ops
from . import torch_library as lib
from . import triton as tri
from .layout import comment, grad_slots, has_own_autograd, loop_expected, unpack_count
from .writer import CodeWriter

_KINDS = ("entry", "op", "fn")



def emit_torch(program: ir.Program, options=None) -> str:
    """The generated PyTorch module for `program`, as source text.

    The numerics are the compilation's (`options.numerics`; "equivalent" without options).
    Under "exact" no kernel is printed: the text holds no Triton at all.
    """
    return _ModuleEmitter(program, numerics_of(options)).emit()


def header_records(state: ProgramState, numerics: str) -> list[tuple[str, object]]:
    """The records the module's header lists, a line each: the program's state (as the
    old `meta` pairs), with the numerics after the records `elaborate` wrote."""
    early = ("interface", "source", "module", "parameters", "shard")
    pairs = state.legacy_items()
    return ([p for p in pairs if p[0] in early] + [("numerics", numerics)]
            + [p for p in pairs if p[0] not in early])


def function_names(program: ir.Program) -> dict[str, str]:
    """The module's name of each function of the program (`f0_entry`, `f2_op`, ...)."""
    names: dict[str, str] = {}
    for i, f in enumerate(program.funcs):
        if f.name in names:
            raise ValueError(f"two functions named {f.name!r}")
        kind = f.kind if f.kind in _KINDS + ("kernel",) else "fn"
        names[f.name] = f"f{i}_{kind}"
    return names


class _ModuleEmitter:
    """The module: functions, kernels with their launchers, autograd wrappers, and `main`.

    An op whose kernel runs (`KernelChoice.func` names a kernel Func of the program) or that
    has a `grad` clause is printed as several functions around its body: `fN_op` chooses
    (autograd wrapper, kernel launcher or body), `fN_op_body` is the body, `fN_op_launch`
    launches the kernel, `fN_op_autograd` is the `torch.autograd.Function`, `fN_op_grad` the
    grad clause. Kernel Funcs are never printed as torch functions.
    """

    def __init__(self, program: ir.Program, numerics: str = "equivalent") -> None:
        self.program = program
        self.numerics = numerics
        self.names = function_names(program)
        if program.entry not in self.names:
            raise ValueError(f"no entry function {program.entry!r}")
        kernels = {f.name: f for f in program.funcs if f.kind == "kernel"}
        # under exact numerics no kernel runs, whatever the program says
        self.launched: dict[str, ir.Func] = {} if not kn.runs_kernels(numerics) else {
            f.name: kernels[f.kernel.func] for f in program.funcs
            if f.kind == "op" and f.kernel is not None and f.kernel.func in kernels}
        self.kernels = [kernels[k] for k in dict.fromkeys(k.name for k in self.launched.values())]
        self.funcs = [f for f in program.funcs if f.kind != "kernel"]
        self.library = lib.op_names([f for f in self.funcs if f.name in self.launched
                                     and lib.library_ok(f)])

    def emit(self) -> str:
        funcs = [text for f in self.funcs for text in self.func(f)]
        if self.launched:
            funcs.insert(0, ran_counters([self.names[op] for op in self.launched]))
        main = self.main()
        code = "\n\n\n".join(funcs + [main])
        helpers = ops.helper_source(ops.helpers_used(code))
        head = "\n".join(self.header()) + "\n"
        if not self.kernels:
            return head + "import torch\n\n\n" + helpers + "\n\n" + code + "\n"
        kernels = [tri.kernel_source(k, self.names[k.name], self.numerics, comment)
                   for k in self.kernels]
        text = (head + tri.IMPORTS + "\n\nimport torch\n\n" + tri.PRELUDE + "\n\n"
                + tri.triton_section(kernels) + "\n\n\n" + tri.runtime_source(code) + "\n\n\n"
                + helpers + "\n\n" + code + "\n")
        return text.replace(lib.NAMESPACE_TOKEN, lib.namespace(self.program.state.module, text))

    def func(self, f: ir.Func) -> list[str]:
        """The texts of one function: itself, or the op's chooser and what it chooses from."""
        name = self.names[f.name]
        kernel = self.launched.get(f.name)
        if f.kind != "op" or (kernel is None and f.grad is None):
            return [_FuncEmitter(self, f).emit()]
        library = f.name in self.library
        texts = [dispatcher(f, name, kernel is not None, autograd_ok(f), library),
                 _FuncEmitter(self, f).emit(f"{name}_body")]
        if kernel is not None:
            texts.append(chooser(f, name))
            texts.append(tri.launcher_source(f, kernel, f"{name}_launch", self.names[kernel.name],
                                             comment))
        if autograd_ok(f):
            texts.append(autograd_class(f, name))
        if f.grad is not None:
            texts.append(_FuncEmitter(self, f.grad).emit(f"{name}_grad"))
        if library:
            texts.append(lib.library_source(f, name, self.library[f.name]))
        return texts

    def header(self) -> list[str]:
        origin = self.program.state.source
        entry = comment(self.program.entry)
        lines = [f"# Generated by Linnet: a PyTorch module for the entry {entry}.",
                 (f"# Compiled from {comment(origin)}, through the tensor IR of the entry with "
                  "its generics bound." if origin else
                  "# Compiled from the tensor IR of a Linnet entry with its generics bound."),
                 "# It needs only torch: main(*inputs) returns a tuple of the entry's results."]
        if self.kernels:
            lines.append("# Kernels run through Triton when it can be imported (see below).")
        for key, value in header_records(self.program.state, self.numerics):
            first, *rest = str(value).splitlines() or [""]
            lines.append(f"# {comment(key)}: {comment(first)}")
            lines += [f"#   {comment(line)}" for line in rest]
        lines.append("# Functions:")
        for f in self.funcs + self.kernels:
            src = f" ({comment(f.source)})" if f.source else ""
            lines.append(f"#   {self.names[f.name]}: {comment(f.kind)} {comment(f.name)}{src}")
        lines.append("# Do not edit: regenerate it from the source instead.")
        return lines

    def main(self) -> str:
        entry = self.program.func(self.program.entry)
        n = len(entry.params)
        lines = ["def main(*inputs):",
                 f"    # the entry {comment(entry.name)}: {n} input(s), "
                 f"{comment(', '.join(str(p.type) for p in entry.params))}",
                 f"    if len(inputs) != {n}:",
                 f'        raise TypeError(f"main() takes {n} inputs, got {{len(inputs)}}")',
                 "    _d = _ln_device(inputs)"]
        args = []
        for i, p in enumerate(entry.params):
            lines.append(f"    a{i} = {_input(f'inputs[{i}]', p.type)}")
            args.append(f"a{i}")
        lines.append(f"    r = {self.names[entry.name]}({', '.join(['_d'] + args)})")
        ty = entry.body.result.type
        if isinstance(ty, ir.TupleTy):
            outs = [_output(f"r[{i}]", t) for i, t in enumerate(ty.items)]
        else:
            outs = [_output("r", ty)]
        lines.append(f"    return {_tuple(outs)}")
        return "\n".join(lines)


def ran_counters(names: list[str]) -> str:
    """The module's record of what ran: per op with a kernel (by its function's name), how
    many calls ran the kernel and how many the body; `_ln_ran` maps the names to them."""
    lines = ["# Calls of each op with a kernel that ran the kernel, and that ran the body:",
             "# _ln_ran maps the name of each op's function here to [kernel, body]."]
    lines += [f"_ln_ran_{n} = [0, 0]" for n in names]
    lines.append("_ln_ran = {" + ", ".join(f'"{n}": _ln_ran_{n}' for n in names) + "}")
    return "\n".join(lines)


def autograd_ok(f: ir.Func) -> bool:
    """An op goes through autograd by its own Function when every parameter is a tensor."""
    return has_own_autograd(f)


def dispatcher(f: ir.Func, name: str, launched: bool, autograd: bool,
               library: bool = False) -> str:
    """The op as called: under torch.compile and torch.export its custom op (`library`, where
    torch.library registered it), else its autograd Function when an input requires grad,
    else the kernel where Triton can run it (`fN_op_run`), else the body (calls without
    autograd cost nothing more). The compiling test comes first: Dynamo folds it to a
    constant, and the checks after it are then not traced; `_ln_traced` catches the
    tracers that run Python as it is (torch.export, AOT autograd tracing a backward that
    calls the op, `torch.library.opcheck`), whose tensors are fake or functional."""
    params = [f"v{k}" for k in range(len(f.params))]
    args = ", ".join(["_d"] + params)
    what = ("its kernel where Triton can run it, else its body" if launched else "its body")
    lines = [f"def {name}({args}):",
             f"    # op {comment(f.name)}: {what}"
             + ("; under autograd through its Function" if autograd else "")
             + ("; under torch.compile and torch.export its custom op" if library else "")]
    if library:
        lines += [f"    if {name}_library is not None and (_LT_COMPILING() "
                  f"or _ln_traced({', '.join(params)})):",
                  f"        return {name}_library({args})"]
    if autograd:
        lines += [f"    if _ln_needs_grad({', '.join(params)}):",
                  f"        return {name}_autograd.apply({args})"]
    lines.append(f"    return {name}_{'run' if launched else 'body'}({args})")
    return "\n".join(lines)


def chooser(f: ir.Func, name: str) -> str:
    """`fN_op_run`: the kernel where Triton can run it, else the body, each call counted in
    `_ln_ran` (a list item each: cheap). It is also the custom op's implementation."""
    args = ", ".join(["_d"] + [f"v{k}" for k in range(len(f.params))])
    return "\n".join([f"def {name}_run({args}):",
                      f"    # op {comment(f.name)}: the kernel or the body, counted",
                      f"    if _lt_kernel_ok({args}):", f"        _ln_ran_{name}[0] += 1",
                      f"        return {name}_launch({args})", f"    _ln_ran_{name}[1] += 1",
                      f"    return {name}_body({args})"])


def autograd_class(f: ir.Func, name: str) -> str:
    """The op's `torch.autograd.Function` (docs/language.md, "Gradients").

    forward runs the op as called without autograd (kernel or body); backward runs the
    op's grad clause, which gives the gradient of each floating tensor parameter (others
    get None), or else runs the body again under autograd (`_ln_vjp`), which also serves
    a backward that is itself differentiated. forward takes no ctx and `setup_context`
    saves what backward needs, the form `torch.func` (grad, vmap, with the vmap rule
    generated) and `torch.compile` take.
    """
    params = [f"v{k}" for k in range(len(f.params))]
    args = ", ".join(["_d"] + params)
    result = f.body.result.type
    run = f"{name}({args})"
    many = isinstance(result, ir.TupleTy)
    if f.grad is not None:  # the result is saved: one that is an input must be a view of it
        own = ", ".join(params)
        run = (_tuple([f"_ln_own(r[{k}], {own})" for k in range(len(result.items))]) if many
               else f"_ln_own({run}, {own})")
    lines = [f"class {name}_autograd(torch.autograd.Function):",
             f"    # op {comment(f.name)} under autograd (and torch.func: grad, vmap)",
             "    generate_vmap_rule = True", "",
             "    @staticmethod",
             f"    def forward({args}):",
             *([f"        r = {name}({args})"] if f.grad is not None and many else []),
             f"        return {run}  # autograd records nothing in here: no recursion",
             "", "    @staticmethod",
             "    def setup_context(ctx, inputs, output):",
             f"        {args}, = inputs",
             "        ctx._d = _d"]
    if f.grad is not None:
        lines += _clause_backward(f, name, params, many)
        return "\n".join(lines)
    items = result.items if isinstance(result, ir.TupleTy) else (result,)
    fixed = [f"output[{k}]" if isinstance(result, ir.TupleTy) else "output"
             for k, t in enumerate(items) if not ops.is_float(getattr(t, "dtype", ""))]
    lines.append(f"        ctx.save_for_backward({', '.join(params)})")
    if fixed:
        lines.append(f"        ctx.mark_non_differentiable({', '.join(fixed)})")
    lines += ["", "    @staticmethod", "    def backward(ctx, *dys):",
              f"        return (None,) + _ln_vjp({name}_body, ctx._d, ctx.saved_tensors, "
              "ctx.needs_input_grad[1:], dys)"]
    return "\n".join(lines)


def _clause_backward(f: ir.Func, name: str, params: list[str], many: bool) -> list[str]:
    """setup_context's saving and backward, for an op with a grad clause: the clause takes
    the parameters, the result and its gradient; for a tuple result, both as tuples (an
    item no one used arrives as zeros: autograd materializes the gradients it lacks)."""
    ys = [f"y{k}" for k in range(len(f.body.result.type.items))] if many else ["y"]
    output, star = ("*output", "*") if many else ("output", "")
    return [f"        ctx.save_for_backward({', '.join(params + [output])})",
            "", "    @staticmethod",
            f"    def backward(ctx, {star}dy):",
            f"        {', '.join(params + ys)}, = ctx.saved_tensors",
            f"        g = {name}_grad(ctx._d, {', '.join(params + [_tuple(ys) if many else 'y', 'dy'])})",
            f"        return {_tuple(['None'] + grad_items(f))}"]


def grad_items(f: ir.Func) -> list[str]:
    """What backward returns per parameter: the grad clause's result for each floating
    tensor parameter, in order; None for the others."""
    many = isinstance(f.grad.body.result.type, ir.TupleTy)
    return ["None" if j is None else (f"g[{j}]" if many else "g") for j in grad_slots(f)]


def _tuple(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _input(src: str, ty: ir.Ty) -> str:
    if isinstance(ty, ir.TupleTy):
        return _tuple([_input(f"{src}[{i}]", t) for i, t in enumerate(ty.items)])
    return ops.input_expr(src, ty)


def _output(src: str, ty: ir.Ty) -> str:
    if isinstance(ty, ir.TupleTy):
        return _tuple([_output(f"{src}[{i}]", t) for i, t in enumerate(ty.items)])
    return ops.output_expr(src, ty)



class _FuncEmitter(CodeWriter):
    def __init__(self, module: _ModuleEmitter, func: ir.Func) -> None:
        super().__init__()
        self.module = module
        self.func = func
        self.consts: dict[tuple[str, str], str] = {}
        self.literals: dict[tuple[type, str, str], str] = {}  # spelling -> its const's name
        self.const_lines: list[str] = []

    def emit(self, as_name: str | None = None) -> str:
        """The function's text, defined as `as_name` (by default its module name)."""
        f = self.func
        env: dict[str, str] = {}
        params = []
        for p in f.params:
            env[p.name] = self.fresh()
            params.append(env[p.name])
        result = self.block(f.body, env, 1)
        self.line(1, f"return {result}")
        head = [f"def {as_name or self.module.names[f.name]}({', '.join(['_d'] + params)}):",
                f"    # {comment(f.kind)} {comment(f.name)}"
                + (f" from {comment(f.source)}" if f.source else "")]
        for p, name in zip(f.params, params):
            head.append(f"    # {name} = {comment(p.name)}: {comment(p.type)}")
        if f.kernel is not None:
            head.append(f"    # kernel {comment(f.kernel.kernel)} not launched here: "
                        "this is the op's body")
        return "\n".join(head + ["    " + c for c in self.const_lines] + self.lines)

    # ------------------------------------------------------------ atoms

    def atom(self, a: ir.Atom, env: dict[str, str]) -> str:
        if isinstance(a, ir.Var):
            try:
                return env[a.name]
            except KeyError:
                raise ValueError(f"{self.func.name}: {a.name!r} used before it is bound") from None
        if isinstance(a, ir.Lit):
            spelled = (type(a.value), repr(a.value), a.type.dtype)  # not a.value: -0.0 == 0.0
            if spelled not in self.literals:  # a literal's code, once per spelling
                code = ops.literal_expr(a.value, a.type.dtype)
                key = (a.type.dtype, code)
                if key not in self.consts:
                    self.consts[key] = f"c{len(self.consts)}"
                    self.const_lines.append(
                        f"{self.consts[key]} = {code}  # {comment(ir_atom(a))}")
                self.literals[spelled] = self.consts[key]
            return self.literals[spelled]
        raise TypeError(f"not an atom: {a!r}")

    # ----------------------------------------------------------- blocks

    def block(self, b: ir.Block, env: dict[str, str], depth: int) -> str:
        env = dict(env)
        dead = last_uses(b)
        for bind, done in zip(b.binds, dead):
            self.bind(bind, env, depth)
            if done:  # free intermediates as soon as they are dead, as eager code would
                self.line(depth, "del " + ", ".join(sorted({env[n] for n in done})))
        return self.atom(b.result, env)

    def bind(self, bind: ir.Bind, env: dict[str, str], depth: int) -> None:
        e, var = bind.expr, bind.var
        if isinstance(e, (ir.Var, ir.Lit)):
            env[var.name] = self.atom(e, env)
            return
        note = comment(f"{var.name}: {var.type} = ")
        args = lambda xs: [self.atom(x, env) for x in xs]  # noqa: E731
        target = self.fresh()
        if isinstance(e, ir.Prim):
            code = ops.prim_expr(e.op, args(e.args), [a.type for a in e.args], e.type, e.attrs)
        elif isinstance(e, ir.Einsum):
            code = ops.einsum_expr(e.spec, args(e.args), [a.type for a in e.args], e.type, e.acc)
        elif isinstance(e, ir.Call):
            if e.callee not in self.module.names:
                raise ValueError(f"call of an unknown function {e.callee!r}")
            code = f"{self.module.names[e.callee]}({', '.join(['_d'] + args(e.args))})"
        elif isinstance(e, ir.MakeTuple):
            code = _tuple(args(e.items))
        elif isinstance(e, ir.GetItem):
            code = f"{self.atom(e.tup, env)}[{int(e.index)}]"
        elif isinstance(e, ir.If):
            self.line(depth, f"# {note}if {comment(ir_atom(e.cond))}")
            self.if_(e, env, depth, target)
            env[var.name] = target
            return
        elif isinstance(e, ir.Loop):
            kind = ("scan" if e.yields == 1 else f"scan{e.yields}") if e.yields else "loop"
            self.line(depth, f"# {note}{kind} {comment(e.index.name)} in {e.lo}..{e.hi}")
            self.loop(e, env, depth, target)
            env[var.name] = target
            return
        elif isinstance(e, ir.While):
            self.line(depth, f"# {note}while")
            self.while_(e, env, depth, target)
            env[var.name] = target
            return
        elif isinstance(e, ir.Comprehension):
            raise ValueError("emit-torch needs tensor-core IR: run lower-index-notation first")
        else:
            raise TypeError(f"no torch printer for {type(e).__name__}")
        self.line(depth, f"{target} = {code}  # {note}{comment(print_expr(e))}")
        env[var.name] = target

    def if_(self, e: ir.If, env: dict[str, str], depth: int, target: str) -> None:
        self.line(depth, f"if bool({self.atom(e.cond, env)}):")
        self.line(depth + 1, f"{target} = {self.block(e.then, env, depth + 1)}")
        self.line(depth, "else:")
        self.line(depth + 1, f"{target} = {self.block(e.orelse, env, depth + 1)}")

    def carry(self, e: ir.Loop | ir.While, env: dict[str, str],
              depth: int) -> tuple[list[str], dict[str, str]]:
        """Fresh names for the carried values, set to their initial values; the body's env."""
        carried = [self.fresh() for _ in e.carried]
        if len(e.init) != len(e.carried):
            raise ValueError("a loop's carried variables and initial values differ in number")
        if carried:
            inits = ", ".join(self.atom(a, env) for a in e.init)
            self.line(depth, f"{', '.join(carried)} = {inits}")
        inner = dict(env)
        inner.update({v.name: n for v, n in zip(e.carried, carried)})
        return carried, inner

    def next_values(self, e: ir.Loop | ir.While, res: str, rtype: ir.Ty) -> list[str]:
        expected = loop_expected(e)
        if unpack_count(rtype, expected):
            return [f"{res}[{i}]" for i in range(len(expected))]
        return [res]

    def loop(self, e: ir.Loop, env: dict[str, str], depth: int, target: str) -> None:
        """A Python `for`; each of a scan's yields is appended to its own list, stacked
        after the loop (an empty tensor of the stack's type when there are no trips)."""
        carried, inner = self.carry(e, env, depth)
        lo, hi = int(e.lo), int(e.hi)
        trips = max(0, hi - lo)
        ys = [self.fresh() for _ in range(e.yields)]
        for y in ys:
            self.line(depth, f"{y} = []")
        index = self.fresh()
        inner[e.index.name] = index
        counter = self.fresh()
        self.line(depth, f"for {counter} in range({lo}, {lo + trips}):")
        if e.index in free_vars(e.body):  # the index as a tensor, only where it is read
            self.line(depth + 1, f"{index} = {ops.loop_index_expr(counter)}")
        res = self.block(e.body, inner, depth + 1)
        values = self.next_values(e, res, e.body.result.type)
        if carried:
            self.line(depth + 1, f"{', '.join(carried)} = {', '.join(values[:len(carried)])}")
        for y, value in zip(ys, values[len(carried):]):
            self.line(depth + 1, f"{y}.append({value})")
        outs = list(carried)
        for y, stacked in zip(ys, e.stacked_types):
            outs.append(f"torch.stack({y})" if trips else ops.empty_expr(stacked))
        self.line(depth, f"{target} = {_tuple(outs)}")

    def while_(self, e: ir.While, env: dict[str, str], depth: int, target: str) -> None:
        carried, inner = self.carry(e, env, depth)
        self.line(depth, "while True:")
        cond = self.block(e.cond, inner, depth + 1)
        self.line(depth + 1, f"if not bool({cond}):")
        self.line(depth + 2, "break")
        res = self.block(e.body, inner, depth + 1)
        values = self.next_values(e, res, e.body.result.type)
        if carried:
            self.line(depth + 1, f"{', '.join(carried)} = {', '.join(values)}")
        self.line(depth, f"{target} = {_tuple(carried)}")


def last_uses(b: ir.Block) -> list[list[str]]:
    """For each binding, the block's own variables whose last read it is.

    A variable bound as a plain copy of another (`b = a`) shares a's Python name,
    so reads of either count for both; the block's result is never freed.
    """
    root: dict[str, str] = {}
    owned: list[str] = []
    last: dict[str, int] = {}
    for i, bind in enumerate(b.binds):
        for v in expr_free_vars(bind.expr):
            last[root.get(v.name, v.name)] = i
        if isinstance(bind.expr, ir.Var):
            root[bind.var.name] = root.get(bind.expr.name, bind.expr.name)
        elif not isinstance(bind.expr, ir.Lit):
            owned.append(bind.var.name)
            last.setdefault(bind.var.name, i)
    keep = root.get(b.result.name, b.result.name) if isinstance(b.result, ir.Var) else None
    dead: list[list[str]] = [[] for _ in b.binds]
    for name in owned:
        if name != keep:
            dead[last[name]].append(name)
    return dead


def ir_atom(a: ir.Atom) -> str:
    return a.name if isinstance(a, ir.Var) else f"{a.value!r}:{a.type.dtype}"
