"""What a program declares, as `linnet inspect FILE` shows it without a flag.

A newcomer handed a `.linnet` file asks first what it offers: the entries a backend can
compile (with the signature to call them by), the ops and the kernels they bind, the helper
fns, and the blocks with their parameters and entries. This module lists them from the
checked program, for text or JSON; `--parameters` gives a root block's full manifest.
"""

from __future__ import annotations

import json
from typing import Any

from ..syntax import tree as t
from ..syntax.printer import print_expr

MEMBER_KINDS = ("param", "buffer", "state")


def declarations(analysis: Any) -> dict[str, Any]:
    """The root module's items by kind: each with its name and signature (an op also its
    kernel binding and whether it has a grad clause; a block its members and entries)."""
    module = analysis.program.root_module
    sigs = analysis.root.signatures
    found: dict[str, Any] = {"module": ".".join(module.path), "entries": [], "ops": [],
                             "kernels": [], "fns": [], "blocks": []}
    for item in module.items:
        if isinstance(item, t.Op):
            found["ops"].append({"name": item.name, "signature": _signature(item, sigs),
                                 "kernel": _binding(item.kernel), "grad": item.grad is not None})
        elif isinstance(item, t.Kernel):
            found["kernels"].append({"name": item.name, "signature": _signature(item, sigs)})
        elif isinstance(item, t.Function):
            kind = "entries" if item.kind == "entry" else "fns"
            found[kind].append({"name": item.name, "signature": _signature(item, sigs)})
        elif isinstance(item, t.BlockDef):
            found["blocks"].append(_block(item, analysis))
    return found


def declarations_text(analysis: Any, path: str) -> str:
    """The listing `linnet inspect FILE` prints: a heading per kind that the file has."""
    found = declarations(analysis)
    lines = [f"{path}: module {found['module']}"]
    for kind in ("entries", "ops", "kernels", "fns"):
        if found[kind]:
            lines.append(f"{kind}:")
            lines += [f"  {_op_line(d) if kind == 'ops' else d['signature']}" for d in found[kind]]
    if found["blocks"]:
        lines.append("blocks:")
        for block in found["blocks"]:
            lines.append(f"  {block['signature']}")
            lines += [f"    {m}" for m in block["members"]]
            lines += [f"    {e['kind']} {e['signature']}" for e in block["functions"]]
        lines.append("(`linnet inspect --parameters FILE` lists a root block's parameters "
                     "in full)")
    if len(lines) == 1:
        lines.append("  (no entries, ops, kernels, fns or blocks)")
    return "\n".join(lines)


def declarations_json(analysis: Any) -> str:
    return json.dumps(declarations(analysis), indent=2)


def _op_line(op: dict[str, Any]) -> str:
    kernel = f", kernel {op['kernel']}" if op["kernel"] else ""
    return op["signature"] + kernel + ("" if op["grad"] else ", no grad clause")


def _signature(item: Any, sigs: dict[str, Any]) -> str:
    """`name<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32]`, with the types
    as the checker resolved them."""
    sig = sigs.get(item.name)
    types = sig.params if sig is not None and sig.item is item else [None] * len(item.params)
    params = ", ".join(f"{p.name}: {ty}" if ty is not None else p.name
                       for p, ty in zip(item.params, types))
    own = sig is not None and sig.item is item
    result = sig.result if own else None
    tail = f" -> {result}" if result is not None else ""
    if isinstance(item, t.Kernel) and own:  # a kernel writes its named results
        tail = " writes (" + ", ".join(f"{r.name}: {ty}" for r, ty in
                                       zip(item.results, sig.results)) + ")"
    return f"{item.name}{_generics(item.generics)}({params}){tail}"


def _generics(generics: tuple[t.Generic, ...]) -> str:
    if not generics:
        return ""
    parts = [("*" if g.pack else "") + f"{g.name}: {g.kind}"
             + (f" = {print_expr(g.default)}" if g.default is not None else "")
             for g in generics]
    return f"<{', '.join(parts)}>"


def _binding(binding: t.KernelBinding | None) -> str | None:
    if binding is None:
        return None
    args = "" if binding.args is None else f"<{', '.join(map(print_expr, binding.args))}>"
    return binding.name + args


def _block(block: t.BlockDef, analysis: Any) -> dict[str, Any]:
    """A block's generics, its params, buffers, states and subs as declared, and its
    functions with their signatures."""
    info = analysis.root.globals.blocks.get(block.name)
    sigs = getattr(info, "sigs", {})
    source = analysis.program.sources.get(block.span.file)
    members, functions = [], []
    for m in block.members:
        if isinstance(m, t.Function):
            if m.kind == "entry" or m.public:
                functions.append({"kind": m.kind, "name": m.name,
                                  "signature": _signature(m, sigs)})
        elif source is not None:
            members.append(" ".join(source.text[m.span.start:m.span.end].split()))
    return {"name": block.name, "signature": f"block {block.name}{_generics(block.generics)}",
            "members": members, "functions": functions}
