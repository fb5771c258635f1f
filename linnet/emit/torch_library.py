"""Ops with a kernel as custom ops of `torch.library`, in the generated PyTorch module.

Under `torch.compile` and `torch.export` an op whose kernel was chosen is called as one
registered custom op, `linnet_<module>_<hash>::<op instance>`: the tracer sees an opaque op
whose result shapes and dtypes come from its fake implementation (the instance is
monomorphic: `torch.empty` of the declared result), instead of tracing the body in its
place, so the compiled graph launches the kernel (docs/scale.md). Its gradient is that of
the op's autograd Function (the `grad` clause, or the body differentiated), registered with
`register_autograd`.

Custom ops cannot be registered twice with different bodies, and one process may compile
the same op for many bindings and programs: the namespace holds the program's module name
and a short hash of the generated text (`namespace`), and the runtime helper `_ln_library`
numbers a name that is taken anyway (the same text run again).

An op qualifies when every parameter is a tensor (scalars are 0-d tensors in generated
code) and it returns a tensor or a tuple of two or more (`library_ok`); others keep the
plain path.
"""

from __future__ import annotations

import hashlib
import re

from ..ir import tensor as ir
from . import torch_ops as ops
from .layout import comment, has_own_autograd

#: Stands for the namespace while the module is printed; `namespace` hashes the text with it.
NAMESPACE_TOKEN = "linnet_NAMESPACE_"


def library_ok(f: ir.Func) -> bool:
    """Whether an op can be a custom op: tensor parameters (its autograd Function's
    condition), and a tensor or a tuple of at least two tensors as its result."""
    if not has_own_autograd(f):
        return False
    result = f.body.result.type
    if isinstance(result, ir.TType):
        return True
    return (isinstance(result, ir.TupleTy) and len(result.items) >= 2
            and all(isinstance(t, ir.TType) for t in result.items))


def namespace(module: str, text: str) -> str:
    """The op namespace of a generated module: `linnet_`, the program's module name made
    an identifier (`examples.softmax` gives `examples_softmax`), and 10 hex digits of the
    text's hash, so two programs or bindings never share one."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]
    safe = re.sub(r"[^A-Za-z0-9_]", "_", module)[:40].strip("_")
    return f"linnet_{safe}_{digest}" if safe else f"linnet_{digest}"


def op_names(funcs: list[ir.Func]) -> dict[str, str]:
    """The custom op name of each op (instance names made identifiers; a name that two
    would share after that gets the function's position)."""
    names: dict[str, str] = {}
    for i, f in enumerate(funcs):
        name = re.sub(r"[^A-Za-z0-9_]", "_", f.name)[:60] or "op"
        if name[0].isdigit() or name in names.values():
            name = f"op{i}_{name}"
        names[f.name] = name
    return names


def schema(f: ir.Func) -> str:
    """The op's schema: the device and its tensors in, its tensor or tensors out."""
    params = ", ".join(["Device d"] + [f"Tensor v{k}" for k in range(len(f.params))])
    result = f.body.result.type
    out = ("(" + ", ".join("Tensor" for _ in result.items) + ")"
           if isinstance(result, ir.TupleTy) else "Tensor")
    return f"({params}) -> {out}"


def fake_source(f: ir.Func, name: str) -> str:
    """`name_fake`: the op's results as empty tensors of the declared shapes and (storage)
    dtypes on the device `_d`, what tracing needs to know of them."""
    args = ", ".join(["_d"] + [f"v{k}" for k in range(len(f.params))])
    result = f.body.result.type
    items = result.items if isinstance(result, ir.TupleTy) else (result,)
    empties = [f"torch.empty({ops.shape_code(t.shape)}, dtype={ops.torch_dtype(t.dtype)}, "
               "device=_d)" for t in items]
    value = ("(" + ", ".join(empties) + ")") if isinstance(result, ir.TupleTy) else empties[0]
    return "\n".join([f"def {name}_fake({args}):",
                      "    # the results' shapes and dtypes, for torch.compile and torch.export",
                      f"    return {value}"])


def library_source(f: ir.Func, name: str, op_name: str) -> str:
    """The op's fake implementation and its registration as a custom op (None where the
    torch at hand has no `torch.library.custom_op`)."""
    qualname = f"{NAMESPACE_TOKEN}::{op_name}"
    return "\n".join([
        fake_source(f, name), "", "",
        f"# op {comment(f.name)} as the custom op {qualname} (torch.library): what",
        "# torch.compile and torch.export call; it runs the kernel or the body, counted",
        f"{name}_library = _ln_library({NAMESPACE_TOKEN!r}, {op_name!r}, {schema(f)!r},",
        f"                          {name}_run, {name}_fake, {name}_autograd)"])
