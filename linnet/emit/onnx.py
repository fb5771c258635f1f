"""emit-onnx: build a tensor-outlined program as one ONNX model (`onnx.ModelProto`).

The model imports the default ONNX domain at `OPSET` 21 with IR version 10, which
onnxruntime runs from release 1.20 on (a newer opset would shut out the runtimes most
deployments have: onnxruntime 1.30 refuses IR version 14, which opset 28 needs), and
`emit_onnx` checks it with `onnx.checker.check_model(full_check=True)`; a model that fails
the check is an internal error. The graph's inputs are the entry's parameters and its
outputs its results, in order (a tuple result gives one output per item), named as users
know them (`onnx_names.py`: `x`, `p.a`, `layers.0.up`; `result`, `result_0`, a struct
result's fields, `loss` and `grad.x` under `--grad`, a state's next value `PATH.next`), all
with their declared dtypes and shapes.
Values are named `v0, v1, ...`, constants `c0, c1, ...`, nodes `n0, n1, ...`: no user
text reaches a name, only doc strings.

What each primitive and einsum becomes is decided by `onnx_ops` (with its table of work
dtypes). This module lays out the program:

- A `Call` is inlined: the callee's body is built in place, with its parameters bound to
  the arguments. The program has no recursion, so this ends, and the model is one graph
  that onnxruntime optimizes as a whole (ONNX functions would be expanded by the runtime
  anyway, and are typed per call site, which monomorphic callees gain nothing from).
- Tuples (`MakeTuple`, `GetItem`) exist only while building: a tuple value is a Python
  tuple of value names, flattened into several outputs where it crosses a graph boundary.
- `If` is ONNX `If` with two subgraphs; a counted `Loop` is ONNX `Loop` with a constant
  trip count (the index is `lo` plus the iteration number; a scan's yields are the body's
  scan outputs, which ONNX stacks on a new leading axis; a loop of no trips is its initial
  values and empty stacks, without a node); `While` is ONNX `Loop` with no trip count
  whose condition is computed before the loop and again at the end of each trip.
- Constants are initializers of the main graph (subgraphs see them as outer values).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Union

import onnx
from onnx import helper

from ..diagnostics import CompileError, Diagnostic, Span
from ..ir import tensor as ir
from . import onnx_ops as ops
from .layout import loop_expected, unpack_count
from .onnx_names import input_names, output_names

#: The ONNX opset: every operator the table uses has its current definition at 21, and
#: onnxruntime runs opset 21 (IR version 10) from release 1.20 on.
OPSET = 21

#: If and Loop subgraphs nested in one another, at most: each costs the model three
#: levels of protobuf messages, and onnxruntime's reader refuses a model 32 deep.
MAX_SUBGRAPH_DEPTH = 24

Value = Union[str, tuple["Value", ...]]
Env = dict[str, Value]


def emit_onnx(program: ir.Program, options=None) -> onnx.ModelProto:
    """The ONNX model of `program`'s entry (op bodies only), checked by `onnx.checker`."""
    model = _Exporter(program, getattr(options, "path", "<input>")).model()
    try:
        onnx.checker.check_model(model, full_check=True)
    except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as err:
        raise ValueError(f"internal error: the ONNX model of {program.entry} fails "
                         f"onnx.checker: {err}") from err
    return model


def _info(name: str, ty: ir.TType, doc: str = "") -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, ops.ELEM[ty.dtype], list(ty.shape),
                                         doc_string=doc)


def _leaves(ty: ir.Ty) -> list[ir.TType]:
    """The tensor types of a (possibly nested) tuple type, in order."""
    if isinstance(ty, ir.TupleTy):
        return [t for item in ty.items for t in _leaves(item)]
    return [ty]


def _flatten(value: Value) -> list[str]:
    if isinstance(value, tuple):
        return [n for item in value for n in _flatten(item)]
    return [value]


def _unflatten(names: list[str], ty: ir.Ty) -> Value:
    """Names laid out as `ty`: a name for a tensor, a tuple of values for a tuple."""
    if not isinstance(ty, ir.TupleTy):
        return names.pop(0)
    return tuple(_unflatten(names, item) for item in ty.items)


class _Exporter:
    def __init__(self, program: ir.Program, path: str = "<input>") -> None:
        self.program = program
        self.scope = ops.Scope()
        self.path = path
        self.depth = 0  # subgraphs open around the node being built

    @contextmanager
    def subgraph(self) -> Iterator[None]:
        """Around the building of an If's or Loop's subgraphs: refuses more than
        `MAX_SUBGRAPH_DEPTH` of them nested, which ONNX's protobuf cannot hold."""
        if self.depth >= MAX_SUBGRAPH_DEPTH:
            raise CompileError([Diagnostic(
                "E2190", f"not implemented yet: ONNX export of `if`, `for` and `while` "
                f"nested more than {MAX_SUBGRAPH_DEPTH} deep (an else-if chain counts each "
                "`else if`)", Span(self.path, 0, 0),
                notes=("ONNX nests each subgraph in its parent's protobuf message, and "
                       "protobuf readers (onnxruntime's included) refuse messages nested "
                       "about 100 deep; functions are inlined, so calls do not help",),
                help="nest fewer levels (test the conditions as a balanced tree rather "
                     "than a chain), or export with `linnet torch`, `jax` or `stablehlo`")])
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def model(self) -> onnx.ModelProto:
        entry = self.program.func(self.program.entry)
        g = ops.Nodes(self.scope)
        inputs, env = [], {}
        names = input_names(self.program)
        for name, p in zip(names, entry.params):
            if not isinstance(p.type, ir.TType):
                raise ValueError(f"entry parameter {p.name} is not a tensor")
            inputs.append(_info(name, p.type, doc=f"parameter {p.name}: {p.type}"))
            env[p.name] = name
        result = self.block(entry.body, env, g)
        outputs = []
        leaves = list(zip(_flatten(result), _leaves(entry.body.result.type)))
        for k, ((value, ty), out) in enumerate(zip(leaves, output_names(
                self.program, len(leaves), names))):
            g.nodes.append(helper.make_node("Identity", [value], [out],
                                            name=self.scope.fresh("n")))
            outputs.append(_info(out, ty, doc=f"result {k}: {ty}"))
        graph = helper.make_graph(g.nodes, "linnet_entry", inputs, outputs,
                                  initializer=self.scope.initializers,
                                  doc_string=f"entry {entry.name}")
        grad = self.program.state.grad  # --grad: what the outputs are
        doc = f"Linnet export of entry {entry.name}" + (f"; --grad: {grad}" if grad else "")
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="linnet", doc_string=doc)
        model.ir_version = helper.find_min_ir_version_for(list(model.opset_import))
        return model

    # ------------------------------------------------------------- blocks

    def block(self, b: ir.Block, env: Env, g: ops.Nodes) -> Value:
        env = dict(env)
        for bind in b.binds:
            env[bind.var.name] = self.expr(bind.expr, env, g)
        return self.atom(b.result, env, g)

    def atom(self, a: ir.Atom, env: Env, g: ops.Nodes) -> Value:
        if isinstance(a, ir.Var):
            if a.name not in env:
                raise ValueError(f"{a.name!r} used before it is bound")
            return env[a.name]
        return g.const(a.value, a.type.dtype)

    def expr(self, e: ir.Expr, env: Env, g: ops.Nodes) -> Value:
        if isinstance(e, (ir.Var, ir.Lit)):
            return self.atom(e, env, g)
        if isinstance(e, (ir.Prim, ir.Einsum)):
            if isinstance(e.type, ir.TType) and 0 in e.type.shape:
                return _empty(g, e.type)
            args = [self.atom(a, env, g) for a in e.args]
            types = [a.type for a in e.args]
            if isinstance(e, ir.Prim):
                return ops.prim(g, e.op, args, types, e.type, e.attrs)
            return ops.einsum(g, e.spec, args, types, e.type, e.acc)
        if isinstance(e, ir.Call):
            callee = self.program.func(e.callee)
            args = [self.atom(a, env, g) for a in e.args]
            return self.block(callee.body, {p.name: a for p, a in zip(callee.params, args)}, g)
        if isinstance(e, ir.MakeTuple):
            return tuple(self.atom(a, env, g) for a in e.items)
        if isinstance(e, ir.GetItem):
            return self.atom(e.tup, env, g)[e.index]
        if isinstance(e, ir.If):
            return self.if_(e, env, g)
        if isinstance(e, ir.Loop):
            return self.loop(e, env, g)
        if isinstance(e, ir.While):
            return self.while_(e, env, g)
        raise ValueError(f"emit-onnx needs tensor-core IR, got {type(e).__name__}")

    # ------------------------------------------------------- control flow

    def graph(self, name: str, g: ops.Nodes, inputs: list[onnx.ValueInfoProto],
              results: list[str], types: list[ir.TType]) -> onnx.GraphProto:
        """A subgraph of the nodes in `g`; each result leaves through an `Identity`, so
        that every output is made inside the subgraph."""
        outputs = [_info(g.add("Identity", [value]), ty) for value, ty in zip(results, types)]
        return helper.make_graph(g.nodes, name, inputs, outputs)

    def if_(self, e: ir.If, env: Env, g: ops.Nodes) -> Value:
        types = _leaves(e.type)
        branches = {}
        for key, block in (("then_branch", e.then), ("else_branch", e.orelse)):
            sub = ops.Nodes(self.scope)
            with self.subgraph():
                results = _flatten(self.block(block, env, sub))
            branches[key] = self.graph(self.scope.fresh("g"), sub, [], results, types)
        cond = self.atom(e.cond, env, g)
        names = g.add("If", [cond], outputs=len(types), **branches)
        return _unflatten([names] if len(types) == 1 else names, e.type)

    def carried_inputs(self, e: ir.Loop | ir.While, env: Env
                       ) -> tuple[list[onnx.ValueInfoProto], Env, str, str]:
        """A loop body's inputs (iteration number, condition, carried values), the env
        inside it, and the names of the first two."""
        number, cond = self.scope.fresh(), self.scope.fresh()
        inputs = [_info(number, ir.TType((), "i64")), _info(cond, ir.TType((), "bool"))]
        inner = dict(env)
        for v in e.carried:
            names = [self.scope.fresh() for _ in _leaves(v.type)]
            inputs += [_info(n, t) for n, t in zip(names, _leaves(v.type))]
            inner[v.name] = _unflatten(list(names), v.type)
        return inputs, inner, number, cond

    def next_values(self, e: ir.Loop | ir.While, env: Env, sub: ops.Nodes) -> list[Value]:
        result = self.block(e.body, env, sub)
        expected = loop_expected(e)
        return list(result) if unpack_count(e.body.result.type, expected) else [result]

    def loop(self, e: ir.Loop, env: Env, g: ops.Nodes) -> Value:
        trips = max(0, e.hi - e.lo)
        init = [self.atom(a, env, g) for a in e.init]
        if trips == 0:
            return tuple(init + [g.const([], st.dtype, st.shape) for st in e.stacked_types])
        inputs, inner, number, cond = self.carried_inputs(e, env)
        sub = ops.Nodes(self.scope)
        inner[e.index.name] = number if e.lo == 0 else sub.add(
            "Add", [number, g.const(e.lo, "i64")])
        with self.subgraph():
            values = self.next_values(e, inner, sub)
        carried_types = [t for v in e.carried for t in _leaves(v.type)]
        types = [ir.TType((), "bool"), *carried_types, *e.yield_types]
        body = self.graph(self.scope.fresh("g"), sub, inputs,
                          [cond] + [n for v in values for n in _flatten(v)], types)
        count = len(carried_types) + e.yields
        names = g.add("Loop", [g.const(trips, "i64"), g.const(True, "bool"),
                               *(n for v in init for n in _flatten(v))],
                      outputs=count, body=body)
        return _unflatten([names] if count == 1 else names, e.type)

    def while_(self, e: ir.While, env: Env, g: ops.Nodes) -> Value:
        init = [self.atom(a, env, g) for a in e.init]
        first = self.block(e.cond, {**env, **{v.name: x for v, x in zip(e.carried, init)}}, g)
        inputs, inner, _, _ = self.carried_inputs(e, env)
        sub = ops.Nodes(self.scope)
        with self.subgraph():
            values = self.next_values(e, inner, sub)
            again = self.block(e.cond, {**inner, **{v.name: x for v, x in zip(e.carried, values)}},
                               sub)
        carried_types = [t for v in e.carried for t in _leaves(v.type)]
        body = self.graph(self.scope.fresh("g"), sub, inputs,
                          [again] + [n for v in values for n in _flatten(v)],
                          [ir.TType((), "bool"), *carried_types])
        count = len(carried_types)
        names = g.add("Loop", ["", first, *(n for v in init for n in _flatten(v))],
                      outputs=count, body=body)
        return _unflatten([names] if count == 1 else names, e.type)


def _empty(g: ops.Nodes, ty: ir.TType) -> str:
    """A result with no elements, as a constant of its shape rather than the node that would
    compute it. onnxruntime (1.32.0) mishandles some such nodes: `Expand` of a [1] tensor to
    the shape [0] gives [1] where ONNX broadcasting gives [0], and a `Reshape` to a shape
    with a 0 fails; an empty tensor has no values to compute, so no node is needed."""
    return g.scope.const([], ty.dtype, tuple(int(d) for d in ty.shape))

