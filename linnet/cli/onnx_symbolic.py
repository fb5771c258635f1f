"""An ONNX export whose generic dimensions stay symbolic: one model for every size.

`linnet onnx` leaves a `Dim` generic that `--bind` does not give (and that has no default)
symbolic: the model's inputs and outputs carry it as a `dim_param` named after the generic
(`N`; a dimension computed from generics by its expression, `2*N`), and onnxruntime runs
the one model at every size the entry's `where` allows.

How: the tensor IR is monomorphic (every shape is a number), so the entry is compiled at
two bindings of the free generics that both satisfy its `where` and differ in every value,
and the two models are compared. Where they are the same graph but for the shapes of their
values, no node depends on the sizes: the first model, its differing dimensions made
symbolic, serves every size. Where a node or a constant differs (a shape given as a
constant to `Expand` or `Reshape`, a loop's trip count, a size used as a value), the
export is refused with E2190, naming the generic and what depends on it; binding the
generic with `--bind` exports that size as before.
"""

from __future__ import annotations

import itertools
from typing import Any

from ..diagnostics import CompileError, Diagnostic, Span
from ..errors import MissingGeneric
from ..pipeline import FRONT, compile_source

__all__ = ["export_symbolic", "SAMPLES"]

SAMPLES = (7, 11, 13, 17, 19, 23, 16, 32, 48, 64, 5, 3, 128, 256, 1024)
"""The sizes tried for a symbolic generic, in order: primes first (no size coincides
with another generic's or with a literal extent), then powers of two and multiples of 16
for a `where` that asks for them. 0, 1 and 2 are left out: an empty or unit axis is
exported as constants or broadcasts, which a general size is not."""
MAX_TRIES = 64


def export_symbolic(text: str, path: str, first: MissingGeneric, **options: Any):
    """The entry exported with every `Dim` generic that no binding gives left symbolic
    (`first` is the first such generic, as compiling reported it); `options` are
    `compile_source`'s (bind, entry, root, ...). Returns the `Compiled` of the model."""
    bind = dict(options.pop("bind", None) or {})
    free = _free_generics(text, path, first, bind, options)
    a, b = _two_bindings(text, path, bind, free, options)
    shown = options.pop("shown", None)
    first_model = compile_source(text, path=path, target="onnx", bind={**bind, **a},
                                 shown=shown, **options)
    second = compile_source(text, path=path, target="onnx", bind={**bind, **b}, **options)
    _same_graph(first_model.text, second.text, free, a, path)
    model = first_model.text
    names = _dim_names(a, b)
    for x, y in zip(_value_infos(model.graph), _value_infos(second.text.graph)):
        _symbolic_dims(x, y, names)
    model.doc_string = model.doc_string.split("__", 1)[0] + \
        f" (symbolic: {', '.join(free)})"
    import onnx
    onnx.checker.check_model(model, full_check=True)
    return first_model


def _free_generics(text: str, path: str, first: MissingGeneric, bind: dict,
                   options: dict) -> dict[str, Any]:
    """The generics without a value ({name: declaration}), each a `Dim` (others stay a
    usage error: a dtype has no symbolic form)."""
    free: dict[str, Any] = {}
    missing: MissingGeneric | None = first
    while missing is not None:
        g = missing.generic
        if g.kind != "Dim" or g.pack or g.name in free:
            raise missing
        free[g.name] = g
        missing = None
        try:
            compile_source(text, path=path, target="onnx", passes=FRONT,
                           bind={**bind, **{n: SAMPLES[0] for n in free}}, **_front(options))
        except MissingGeneric as err:
            missing = err
        except CompileError:  # the samples fail a `where`: every free generic is known
            pass
    return free


def _front(options: dict) -> dict:
    return {k: v for k, v in options.items() if k in ("entry", "root", "present", "grad")}


def _two_bindings(text: str, path: str, bind: dict, free: dict, options: dict
                  ) -> tuple[dict[str, int], dict[str, int]]:
    """Two bindings of the free generics that satisfy the entry's `where`, differing in
    every value (E2190 when none are found among the samples)."""
    names = list(free)
    found: list[dict[str, int]] = []
    tries = 0
    for values in itertools.permutations(SAMPLES, len(names)):
        choice = dict(zip(names, values))
        if found and any(choice[n] == found[0][n] for n in names):
            continue
        tries += 1
        if tries > MAX_TRIES:
            break
        try:
            compile_source(text, path=path, target="onnx", passes=FRONT,
                           bind={**bind, **choice}, **_front(options))
        except CompileError:
            continue
        found.append(choice)
        if len(found) == 2:
            return found[0], found[1]
    g = next(iter(free.values()))
    raise CompileError([Diagnostic(
        "E2190", f"not implemented yet: a symbolic `{g.name}` where the entry's `where` "
        f"admits too few sizes to tell what depends on it", _span(g, path),
        "left symbolic", help=f"bind it: --bind {g.name}=N",
        notes=(f"a symbolic export compiles the entry at two sizes of each symbolic "
               f"generic, tried among {', '.join(map(str, SAMPLES))}",))])


def _span(g: Any, path: str) -> Span:
    span = getattr(g, "span", None)
    return span if span is not None and span.file else Span(path, 0, 0)


def _same_graph(x: Any, y: Any, free: dict, a: dict, path: str) -> None:
    """E2190 unless the two models are one graph but for their values' shapes."""
    gx, gy = _skeleton(x.graph), _skeleton(y.graph)
    if gx.SerializeToString(deterministic=True) == gy.SerializeToString(deterministic=True):
        return
    what = _first_difference(gx, gy)
    names = ", ".join(f"`{n}`" for n in free)
    g = next(iter(free.values()))
    raise CompileError([Diagnostic(
        "E2190", f"not implemented yet: ONNX export with {names} symbolic: {what} "
        "depends on the size", _span(g, path), "left symbolic",
        help=f"bind it to export one size: --bind {g.name}={a[g.name]}",
        notes=("a symbolic export needs a graph in which no node takes a size as a "
               "constant (docs/exports.md, \"Symbolic sizes\", says which operations "
               "qualify)",))])


def _skeleton(graph: Any) -> Any:
    """A copy of the graph without shapes and doc strings (subgraphs alike)."""
    import onnx
    g = onnx.GraphProto()
    g.CopyFrom(graph)
    _strip(g)
    return g


def _strip(g: Any) -> None:
    g.doc_string = ""
    for v in _value_infos(g, nested=False):
        v.doc_string = ""
        v.type.tensor_type.ClearField("shape")
    for node in g.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                _strip(attr.g)
            for sub in attr.graphs:
                _strip(sub)


def _first_difference(x: Any, y: Any) -> str:
    """What differs first: a node (its operator), or a constant."""
    for a, b in zip(x.initializer, y.initializer):
        if a.SerializeToString() != b.SerializeToString():
            users = [n.op_type for n in x.node if a.name in n.input]
            return f"a constant ({a.name}, read by {', '.join(users) or 'a subgraph'})"
    for a, b in zip(x.node, y.node):
        if a.SerializeToString() != b.SerializeToString():
            return f"an `{a.op_type}` node"
    return "the graph's layout"


def _value_infos(graph: Any, nested: bool = True):
    """Every input, output and value_info of the graph, then of its subgraphs, in order."""
    yield from graph.input
    yield from graph.output
    yield from graph.value_info
    if not nested:
        return
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _value_infos(attr.g)
            for sub in attr.graphs:
                yield from _value_infos(sub)


def _dim_names(a: dict[str, int], b: dict[str, int]) -> dict[tuple[int, int], str]:
    """The name of a dimension by its values at the two bindings: a generic, or a small
    expression of generics (`2*N`, `N+1`, `M*N`)."""
    names: dict[tuple[int, int], str] = {}

    def add(key: tuple[int, int], name: str) -> None:
        names.setdefault(key, name)

    for n in a:
        add((a[n], b[n]), n)
    for n in a:
        for k in range(2, 9):
            add((a[n] * k, b[n] * k), f"{k}*{n}")
            if a[n] % k == 0 and b[n] % k == 0:
                add((a[n] // k, b[n] // k), f"{n}/{k}")
        for k in range(1, 9):
            add((a[n] + k, b[n] + k), f"{n}+{k}")
            add((a[n] - k, b[n] - k), f"{n}-{k}")
    for m, n in itertools.combinations(a, 2):
        add((a[m] * a[n], b[m] * b[n]), f"{m}*{n}")
        add((a[m] + a[n], b[m] + b[n]), f"{m}+{n}")
    return names


def _symbolic_dims(x: Any, y: Any, names: dict[tuple[int, int], str]) -> None:
    """x's dimensions that differ from y's made symbolic (named, or left unnamed)."""
    dims_x, dims_y = x.type.tensor_type.shape.dim, y.type.tensor_type.shape.dim
    for k, (d, e) in enumerate(zip(dims_x, dims_y)):
        if d.dim_value == e.dim_value:
            continue
        name = names.get((d.dim_value, e.dim_value), f"{x.name}_dim{k}")
        d.Clear()
        d.dim_param = name
    if x.doc_string:
        x.doc_string = x.doc_string.split(":", 1)[0] + ": " + _shape_text(x)


def _shape_text(x: Any) -> str:
    import onnx
    t = x.type.tensor_type
    dims = [d.dim_param or str(d.dim_value) for d in t.shape.dim]
    return f"{onnx.TensorProto.DataType.Name(t.elem_type).lower()}[{', '.join(dims)}]"
