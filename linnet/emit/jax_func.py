"""One function of the generated JAX module (`emit/jax.py` lays the module out): its
bindings as straight-line code, and `lax` control flow over local functions; and an op's
`chooser` between its Pallas kernel and its body.

Apart from `jax.py` because the Pallas kernels (`pallas.py`) are written by a subclass of
`JaxFunc`, and the sharded chooser (`jax_shard.py`) wraps `chooser`: both build on this
module, and the module writer on all three.
"""

from __future__ import annotations

from ..ir import tensor as ir
from ..ir.printer import print_expr
from . import jax_ops as ops
from .writer import CodeWriter
from .layout import comment, loop_expected, unpack_count


def chooser(f: ir.Func, name: str, gpu: bool, note: list[str] | None = None,
            first: list[str] = ()) -> str:
    """The op run: its kernel where Pallas can launch it, else its body (`gpu` false: a
    kernel Pallas cannot compile for a GPU runs in its interpreter only). `note` replaces
    the comment that says so, and `first` are lines that run before that choice (a sharded
    op's run under a mesh, `jax_shard.sharded_chooser`)."""
    args = ", ".join(f"v{k}" for k in range(len(f.params)))
    where = "where Pallas runs" if gpu else "in Pallas's interpreter (not on a GPU)"
    note = note or [f"# op {comment(f.name)}: its kernel {where}, else its body (counted "
                    "in _ln_ran per trace)"]
    return "\n".join([f"def {name}_run({args}):",
                      *("    " + line for line in [*note, *first]),
                      f"    if _lp_kernel_ok({'' if gpu else 'gpu=False'}):",
                      f"        _ln_ran_{name}[0] += 1",
                      f"        return {name}_launch({args})",
                      f"    _ln_ran_{name}[1] += 1",
                      f"    return {name}_body({args})"])


def tuple_expr(items: list[str]) -> str:
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


class JaxFunc(CodeWriter):
    """One function: straight-line bindings, and local functions for control flow."""

    NAN_GUARD = True  # float max/min reductions are NaN where a NaN is reduced
    KERNEL = False  # an op body: XLA computes f16/bf16 division and math as it likes
    #: What a `while` loop's first values pass through: XLA (jaxlib 0.10) works out the
    #: trip count of a loop whose counter starts, steps and stops at constants, and gets
    #: some wrong for steps above 1 (`i = 0; while i < 1 { i = i + 2 }` runs no trip under
    #: `jax.jit`); behind a barrier the start is no constant to XLA, and the loop is kept.
    OPAQUE = "lax.optimization_barrier"

    def __init__(self, module, func: ir.Func) -> None:
        super().__init__()
        self.module = module
        self.func = func

    def emit(self, as_name: str | None = None) -> str:
        """The function's text, defined as `as_name` (by default its module name)."""
        f = self.func
        env = {p.name: self.fresh() for p in f.params}
        result = self.block(f.body, env, 1)
        self.line(1, f"return {result}")
        name = as_name or self.module.names[f.name]
        head = [f"def {name}({', '.join(env[p.name] for p in f.params)}):",
                f"    # {comment(f.kind)} {comment(f.name)}"]
        head += [f"    # {env[p.name]} = {comment(p.name)}: {comment(p.type)}" for p in f.params]
        if f.kernel is not None:
            head.append(f"    # the body of an op with kernel {comment(f.kernel.kernel)}")
        return "\n".join(head + self.lines)

    def atom(self, a: ir.Atom, env: dict[str, str]) -> str:
        if isinstance(a, ir.Var):
            if a.name not in env:
                raise ValueError(f"{self.func.name}: {a.name!r} used before it is bound")
            return env[a.name]
        return ops.literal_expr(a.value, a.type.dtype)

    def block(self, b: ir.Block, env: dict[str, str], depth: int) -> str:
        env = dict(env)
        for bind in b.binds:
            self.bind(bind, env, depth)
        return self.atom(b.result, env)

    def bind(self, bind: ir.Bind, env: dict[str, str], depth: int) -> None:
        e, var = bind.expr, bind.var
        if isinstance(e, (ir.Var, ir.Lit)):
            env[var.name] = self.atom(e, env)
            return
        note = comment(f"{var.name}: {var.type} = ")
        target = env[var.name] = self.fresh()
        args = [self.atom(x, env) for x in getattr(e, "args", ())]
        if isinstance(e, ir.Prim):
            code = ops.prim_expr(e.op, args, [a.type for a in e.args], e.type, e.attrs,
                                 self.module.numerics, self.NAN_GUARD, self.KERNEL)
        elif isinstance(e, ir.Einsum):
            code = ops.einsum_expr(e.spec, args, [a.type for a in e.args], e.type, e.acc,
                                   self.module.numerics)
        elif isinstance(e, ir.Call):
            code = f"{self.module.names[e.callee]}({', '.join(args)})"
        elif isinstance(e, ir.MakeTuple):
            code = tuple_expr([self.atom(x, env) for x in e.items])
        elif isinstance(e, ir.GetItem):
            code = f"{self.atom(e.tup, env)}[{int(e.index)}]"
        elif isinstance(e, (ir.If, ir.Loop, ir.While)):
            self.line(depth, f"# {note}{type(e).__name__.lower()}")
            {ir.If: self.if_, ir.Loop: self.loop, ir.While: self.while_}[type(e)](
                e, env, depth, target)
            return
        else:
            raise TypeError(f"no JAX printer for {type(e).__name__}")
        self.line(depth, f"{target} = {code}  # {note}{comment(print_expr(e))}")

    # ------------------------------------------------------------ control flow

    def local(self, name: str, params: str, depth: int, body, env: dict[str, str]) -> None:
        """`def name(params):` whose body is printed by `body(env, depth + 1)`, returning."""
        self.line(depth, f"def {name}({params}):")
        self.line(depth + 1, f"return {body(dict(env), depth + 1)}")

    def if_(self, e: ir.If, env: dict[str, str], depth: int, target: str) -> None:
        then, orelse = self.fresh("_then"), self.fresh("_else")
        self.local(then, "", depth, lambda en, d: self.block(e.then, en, d), env)
        self.local(orelse, "", depth, lambda en, d: self.block(e.orelse, en, d), env)
        self.line(depth, f"{target} = lax.cond({self.atom(e.cond, env)}, {then}, {orelse})")

    def unpack(self, e: ir.Loop | ir.While, carry: str, env: dict[str, str],
               depth: int) -> dict[str, str]:
        """The carried values, unpacked from the tuple `carry` into fresh names."""
        names = [self.fresh() for _ in e.carried]
        if names:
            self.line(depth, f"{', '.join(names)}{',' if len(names) == 1 else ''} = {carry}")
        return {**env, **{v.name: n for v, n in zip(e.carried, names)}}

    def next_values(self, e: ir.Loop | ir.While, res: str) -> list[str]:
        expected = loop_expected(e)
        if unpack_count(e.body.result.type, expected):
            return [f"{res}[{k}]" for k in range(len(expected))]
        return [res]

    def loop(self, e: ir.Loop, env: dict[str, str], depth: int, target: str) -> None:
        body, n = self.fresh("_body"), len(e.carried)
        inits = tuple_expr([self.atom(a, env) for a in e.init])

        def trip(en: dict[str, str], d: int) -> str:
            if e.yields:  # the index travels with the carry: (i, carry)
                self.line(d, "i, carry = state")
            en = self.unpack(e, "carry", en, d)
            index = en[e.index.name] = self.fresh()
            self.line(d, f"{index} = jnp.asarray(i, dtype=jnp.int64)")
            values = self.next_values(e, self.block(e.body, en, d))
            if e.yields:
                return f"(i + 1, {tuple_expr(values[:n])}), {tuple_expr(values[n:])}"
            return tuple_expr(values)

        if e.yields:
            # a scan counts in its carry over `length` trips (scanning over
            # `jnp.arange(lo, hi)` would materialise every index first); lax.scan stacks
            # each item of the tuple of yields on its own
            self.local(body, "state, _", depth, trip, env)
            carry, ys = self.fresh(), self.fresh()
            start = f"jnp.asarray({e.lo}, dtype=jnp.int64)"
            self.line(depth, f"(_, {carry}), {ys} = lax.scan({body}, ({start}, {inits}), None, "
                             f"length={e.trips()})")
            self.line(depth, f"{target} = (*{carry}, *{ys})")
        else:
            self.local(body, "i, carry", depth, trip, env)
            self.line(depth, f"{target} = lax.fori_loop({self.bounds(e, env)}, "
                             f"{body}, {inits})")

    def bounds(self, e: ir.Loop, env: dict[str, str]) -> str:
        """`lo, hi` of `fori_loop`: compile-time bounds as numbers (hi at least lo: a scan
        of negative length is an error), run-time ones (in a Pallas kernel) as their
        traced scalars, where `fori_loop` becomes a `while_loop` that runs no trip when
        hi <= lo."""
        if e.static:
            return f"{e.lo}, {max(e.lo, e.hi)}"
        return ", ".join(str(b) if isinstance(b, int) else self.atom(b, env)
                         for b in (e.lo, e.hi))

    def while_(self, e: ir.While, env: dict[str, str], depth: int, target: str) -> None:
        cond, body = self.fresh("_cond"), self.fresh("_body")
        self.local(cond, "carry", depth, lambda en, d: self.block(
            e.cond, self.unpack(e, "carry", en, d), d), env)
        self.local(body, "carry", depth, lambda en, d: tuple_expr(self.next_values(
            e, self.block(e.body, self.unpack(e, "carry", en, d), d))), env)
        inits = tuple_expr([self.atom(a, env) for a in e.init])
        if e.init:
            inits = f"{self.OPAQUE}({inits})"
        self.line(depth, f"{target} = lax.while_loop({cond}, {body}, {inits})")

