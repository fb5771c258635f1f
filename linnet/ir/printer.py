"""The tensor IR's text form: deterministic, one binding per line, for dumps and tests.

    func softmax__R8_C40 op (x: f32[8, 40]) -> f32[8, 40] {
      top: f32[8] = for [r:8] max[c:40] x[r, c]
      e: f32[8, 40] = for [r:8, c:40] exp(sub(x[r, c], top[r]))
      ...
      return y
    }

It reads nodes by their kind (the class's name) and imports `linnet.ir.tensor` only for the
type checker, so that the tensor IR's `Program.__str__` can be this text without an import
cycle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from .program_state import ProgramState

if TYPE_CHECKING:
    from . import tensor as ir


def print_program(program: ir.Program) -> str:
    parts = [print_func(f) for f in program.funcs]
    text = "\n\n".join(parts) + f"\n\nentry {program.entry}\n"
    records = print_state(program.state)
    if records:
        text += "\n" + records
    report = program.state.egraph_report
    if report:  # what the e-graph stage did: rules fired, sizes, masks proved
        lines = str(report).splitlines()
        text += "\n" + "\n".join(ln if ln.startswith("//") else "// " + ln for ln in lines) + "\n"
    return text


def print_state(state: ProgramState) -> str:
    """The records the program carries (the e-graph report aside, printed after them), one
    `// state NAME: ...` line each, continued on indented lines; "" when none is set."""
    lines = []
    for name, record in state.written():
        if name == "egraph_report":
            continue
        text = "; ".join(map(str, record)) if isinstance(record, tuple) else str(record)
        first, *rest = text.splitlines() or [""]
        lines.append(f"// state {name}: {first}")
        lines += [f"//   {line}" for line in rest]
    return "".join(line + "\n" for line in lines)


def print_func(f: ir.Func) -> str:
    params = ", ".join(f"{p.name}: {p.type}" for p in f.params)
    head = f"func {f.name} {f.kind} ({params}) -> {_type_of(f.body.result)}"
    if f.outputs:
        head = f"func {f.name} {f.kind} ({params}) writes (" + ", ".join(
            f"{o.name}: {o.type}" for o in f.outputs) + ")"
    if f.launch is not None:
        head += f" grid{f.launch.grid}"
        head += f" warps({f.launch.warps})" if f.launch.warps is not None else ""
        head += f" stages({f.launch.stages})" if f.launch.stages is not None else ""
        head += f" inits{f.launch.inits}"
    if f.kernel is not None:
        generics = ", ".join(f"{k}={v}" for k, v in f.kernel.generics)
        head += f" kernel {f.kernel.kernel}<{generics}>"
        if f.kernel.func:
            head += f" -> {f.kernel.func}"
    if f.source:
        head = f"// {f.source}\n" + head
    text = head + " " + print_block(f.body, 0)
    if f.grad is not None:
        text += "\ngrad " + print_func(f.grad)
    return text


def print_block(b: ir.Block, depth: int) -> str:
    pad = "  " * (depth + 1)
    lines = [f"{pad}{bind.var.name}: {bind.var.type} = {print_expr(bind.expr, depth + 1)}"
             for bind in b.binds]
    lines.append(f"{pad}return {atom(b.result)}")
    return "{\n" + "\n".join(lines) + "\n" + "  " * depth + "}"


def atom(a: ir.Atom) -> str:
    return a.name if _kind(a) == "Var" else f"{a.value!r}:{a.type.dtype}"


def _atoms(items) -> str:
    return ", ".join(atom(a) for a in items)


def _type_of(a: ir.Atom) -> ir.Ty:
    return a.type


def _attrs(attrs) -> str:
    return "" if not attrs else " {" + ", ".join(f"{k}={v!r}" for k, v in attrs) + "}"


def _kind(node: object) -> str:
    """A node's kind is its class's name: the printer reads nodes by kind, not by class, so
    that `linnet/ir/tensor.py` can import it for `str(program)` without an import cycle."""
    return type(node).__name__


def print_expr(e: ir.Expr, depth: int = 0) -> str:
    printer = _EXPRS.get(_kind(e))
    if printer is None:
        raise TypeError(f"no printer for {type(e).__name__}")
    return printer(e, depth)


def _prim(e: ir.Prim, depth: int) -> str:
    return f"{e.op}({_atoms(e.args)}){_attrs(e.attrs)}"


def _einsum(e: ir.Einsum, depth: int) -> str:
    acc = f" acc={e.acc}" if e.acc else ""
    return f"einsum[{e.spec}{acc}]({_atoms(e.args)})"


def _if(e: ir.If, depth: int) -> str:
    return (f"if {atom(e.cond)} {print_block(e.then, depth)} "
            f"else {print_block(e.orelse, depth)}")


def _loop(e: ir.Loop, depth: int) -> str:
    carried = ", ".join(f"{v.name} = {atom(i)}" for v, i in zip(e.carried, e.init))
    kind = ("scan" if e.yields == 1 else f"scan{e.yields}") if e.yields else "loop"
    return (f"{kind} {e.index.name} in {e.lo}..{e.hi} carry ({carried}) "
            f"{print_block(e.body, depth)}")


def _while(e: ir.While, depth: int) -> str:
    carried = ", ".join(f"{v.name} = {atom(i)}" for v, i in zip(e.carried, e.init))
    return (f"while carry ({carried}) cond {print_block(e.cond, depth)} "
            f"do {print_block(e.body, depth)}")


def _comprehension(e: ir.Comprehension, depth: int) -> str:
    outs = ", ".join(f"{n}:{k}" for n, k in e.outputs)
    return f"for [{outs}] {print_ix(e.body)}"


# Each expression kind's text form.
_EXPRS: dict[str, Callable[..., str]] = {
    "Var": lambda e, depth: atom(e),
    "Lit": lambda e, depth: atom(e),
    "Prim": _prim,
    "Einsum": _einsum,
    "Call": lambda e, depth: f"call {e.callee}({_atoms(e.args)})",
    "MakeTuple": lambda e, depth: f"tuple({_atoms(e.items)})",
    "GetItem": lambda e, depth: f"{atom(e.tup)}.{e.index}",
    "If": _if,
    "Loop": _loop,
    "While": _while,
    "Comprehension": _comprehension,
}


def print_ix(e: ir.IxExpr) -> str:
    kind = _kind(e)
    if kind == "IxAccess":
        return f"{atom(e.tensor)}[{', '.join(e.indices)}]"
    if kind == "IxScalar":
        return atom(e.value)
    if kind == "IxGather":
        positions = (p if isinstance(p, str) else print_ix(p) for p in e.positions)
        return f"{atom(e.tensor)}[{', '.join(positions)}]"
    if kind == "IxPrim":
        return f"{e.op}({', '.join(print_ix(a) for a in e.args)}){_attrs(e.attrs)}"
    axes = ", ".join(f"{n}:{k}" for n, k in e.axes)
    return f"{e.op}<{e.dtype}>[{axes}] {print_ix(e.body)}"
