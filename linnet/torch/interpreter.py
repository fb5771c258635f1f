"""The PyTorch interpreter (`compile=False`): evaluate tensor-core IR directly with torch.

It walks bindings, calls and control flow itself, and computes every primitive, einsum,
literal, input and output by the row of `linnet.emit.torch_ops` that the generated module
prints for it: the very same expression text, compiled once per node into a function that
runs in a namespace made from the same helper source. So the interpreter and generated
code agree by construction; what they can differ in is only the layout of control flow.

Every primitive's result is checked against the IR's dtype and shape, so a wrong row in the
table shows up here as an internal error rather than as a silently different tensor.
"""

from __future__ import annotations

from typing import Any, Callable

import torch

from ..emit import torch_ops as ops
from ..emit.layout import grad_slots, has_own_autograd, loop_expected, unpack_count
from ..ir import tensor as ir
from ..passes.traverse import free_vars


def run(program: ir.Program, *inputs: Any) -> tuple:
    """Run the program's entry on `inputs`; a tuple of its results, as `main(*inputs)` gives."""
    return Interpreter(program).run(*inputs)


class Interpreter:
    def __init__(self, program: ir.Program) -> None:
        self.program = program
        self.funcs = {f.name: f for f in program.funcs}
        self.device = torch.device("cpu")
        self._code: dict[int, Callable[..., Any]] = {}
        self._lits: dict[tuple[str, str], torch.Tensor] = {}

    # -------------------------------------------------------------- entry

    def run(self, *inputs: Any) -> tuple:
        entry = self.funcs[self.program.entry]
        if len(inputs) != len(entry.params):
            raise TypeError(f"main() takes {len(entry.params)} inputs, got {len(inputs)}")
        self.device = ops.helper_namespace()["_ln_device"](inputs)
        self._lits = {}
        args = [self._convert(x, p.type, ops.input_expr) for x, p in zip(inputs, entry.params)]
        result = self.call(entry, args)
        ty = entry.body.result.type
        if isinstance(ty, ir.TupleTy):
            return tuple(self._convert(r, t, ops.output_expr) for r, t in zip(result, ty.items))
        return (self._convert(result, ty, ops.output_expr),)

    def _convert(self, x: Any, ty: ir.Ty, row) -> Any:
        if isinstance(ty, ir.TupleTy):
            return tuple(self._convert(y, t, row) for y, t in zip(x, ty.items))
        return ops.compile_expr(("x",), row("x", ty))(self.device, x)

    # ------------------------------------------------------------ program

    def call(self, func: ir.Func, args: list[Any]) -> Any:
        if len(args) != len(func.params):
            raise TypeError(f"{func.name} takes {len(func.params)} arguments, got {len(args)}")
        return self.block(func.body, {p.name: a for p, a in zip(func.params, args)})

    def call_op(self, func: ir.Func, args: list[Any]) -> Any:
        """A call as generated code makes it: an op with a `grad` clause goes through its
        autograd Function when autograd records and an argument requires a gradient."""
        if func.grad is not None and has_own_autograd(func) and _needs_grad(args):
            return _ByClause.apply(self, func, *args)
        return self.call(func, args)

    def block(self, b: ir.Block, env: dict[str, Any]) -> Any:
        env = dict(env)
        for bind in b.binds:
            env[bind.var.name] = self.expr(bind.expr, env)
        return self.atom(b.result, env)

    def atom(self, a: ir.Atom, env: dict[str, Any]) -> Any:
        if isinstance(a, ir.Var):
            try:
                return env[a.name]
            except KeyError:
                raise ValueError(f"{a.name!r} used before it is bound") from None
        code = ops.literal_expr(a.value, a.type.dtype)
        key = (a.type.dtype, code)
        if key not in self._lits:
            self._lits[key] = ops.compile_expr((), code)(self.device)
        return self._lits[key]

    def expr(self, e: ir.Expr, env: dict[str, Any]) -> Any:
        if isinstance(e, (ir.Var, ir.Lit)):
            return self.atom(e, env)
        if isinstance(e, (ir.Prim, ir.Einsum)):
            fn = self._code.get(id(e))
            if fn is None:
                fn = self._code[id(e)] = self._compile(e)
            value = fn(self.device, *(self.atom(a, env) for a in e.args))
            _check(value, e.type, e)
            return value
        if isinstance(e, ir.Call):
            return self.call_op(self.funcs[e.callee], [self.atom(a, env) for a in e.args])
        if isinstance(e, ir.MakeTuple):
            return tuple(self.atom(a, env) for a in e.items)
        if isinstance(e, ir.GetItem):
            return self.atom(e.tup, env)[e.index]
        if isinstance(e, ir.If):
            branch = e.then if bool(self.atom(e.cond, env)) else e.orelse
            return self.block(branch, env)
        if isinstance(e, ir.Loop):
            return self.loop(e, env)
        if isinstance(e, ir.While):
            return self.while_(e, env)
        if isinstance(e, ir.Comprehension):
            raise ValueError("the interpreter needs tensor-core IR: run lower-index-notation first")
        raise TypeError(f"cannot interpret {type(e).__name__}")

    def _compile(self, e: ir.Prim | ir.Einsum) -> Callable[..., Any]:
        names = tuple(f"a{i}" for i in range(len(e.args)))
        types = [a.type for a in e.args]
        if isinstance(e, ir.Prim):
            code = ops.prim_expr(e.op, names, types, e.type, e.attrs)
        else:
            code = ops.einsum_expr(e.spec, names, types, e.type, e.acc)
        return ops.compile_expr(names, code)

    # ------------------------------------------------------- control flow

    def _next(self, e: ir.Loop | ir.While, result: Any, body: ir.Block) -> list[Any]:
        expected = loop_expected(e)
        if unpack_count(body.result.type, expected):
            return list(result)
        return [result]

    def loop(self, e: ir.Loop, env: dict[str, Any]) -> tuple:
        """The carried values after the last trip, then one stack per yield."""
        values = [self.atom(a, env) for a in e.init]
        ys: list[list[Any]] = [[] for _ in range(e.yields)]
        trips = max(0, e.hi - e.lo)
        index_of = ops.compile_expr(("i",), ops.loop_index_expr("i"))
        read = e.index in free_vars(e.body)
        for i in range(e.lo, e.lo + trips):  # a Python range, as generated code: no arange
            inner = dict(env)
            inner.update((v.name, x) for v, x in zip(e.carried, values))
            if read:
                inner[e.index.name] = index_of(self.device, i)
            nxt = self._next(e, self.block(e.body, inner), e.body)
            values = nxt[:len(e.carried)]
            for rows, y in zip(ys, nxt[len(e.carried):]):
                rows.append(y)
        for rows, stacked in zip(ys, e.stacked_types):
            values.append(torch.stack(rows) if rows else
                          ops.compile_expr((), ops.empty_expr(stacked))(self.device))
        return tuple(values)

    def while_(self, e: ir.While, env: dict[str, Any]) -> tuple:
        values = [self.atom(a, env) for a in e.init]
        while True:
            inner = dict(env)
            inner.update((v.name, x) for v, x in zip(e.carried, values))
            if not bool(self.block(e.cond, inner)):
                break
            values = self._next(e, self.block(e.body, inner), e.body)
        return tuple(values)


def _needs_grad(args: list[Any]) -> bool:
    """The test generated code makes (`_ln_needs_grad`), from the same helper source."""
    return ops.helper_namespace()["_ln_needs_grad"](*args)


class _ByClause(torch.autograd.Function):
    """An op with a `grad` clause under autograd: forward runs the body (autograd records
    nothing inside a Function's forward), backward runs the clause on the saved inputs, the
    result and the arriving gradient, and hands each floating tensor parameter its part.
    `setup_context` (not a ctx argument of forward) is what `torch.func` takes."""
    generate_vmap_rule = True

    @staticmethod
    def forward(interp: Interpreter, op: ir.Func, *args: torch.Tensor) -> Any:
        return interp.call(op, list(args))

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, result: Any) -> None:
        interp, op, *args = inputs
        ctx.interp, ctx.op = interp, op
        ctx.save_for_backward(*args, *(result if isinstance(result, tuple) else (result,)))

    @staticmethod
    def backward(ctx: Any, *dys: torch.Tensor) -> tuple:
        """A tuple result's clause takes `y` and `dy` as tuples (autograd gives zeros for
        an item no one used)."""
        op: ir.Func = ctx.op
        count = len(op.params)
        args, ys = ctx.saved_tensors[:count], ctx.saved_tensors[count:]
        many = isinstance(op.body.result.type, ir.TupleTy)
        y, dy = (tuple(ys), tuple(dys)) if many else (ys[0], dys[0])
        grads = ctx.interp.call(op.grad, [*args, y, dy])
        pick = (lambda j: grads[j]) if isinstance(grads, tuple) else (lambda j: grads)
        return (None, None) + tuple(None if j is None else pick(j) for j in grad_slots(op))


def _check(value: Any, ty: ir.Ty, e: ir.Expr) -> None:
    """A primitive's result must have the IR's storage dtype and shape."""
    want = getattr(torch, ops.STORAGE[ty.dtype])
    if not isinstance(value, torch.Tensor) or value.dtype != want or tuple(value.shape) != ty.shape:
        got = (f"{value.dtype} {list(value.shape)}" if isinstance(value, torch.Tensor)
               else type(value).__name__)
        raise AssertionError(f"internal error: {type(e).__name__} "
                             f"{getattr(e, 'op', getattr(e, 'spec', ''))} gave {got}, "
                             f"the IR says {ty}")
