"""The names of an ONNX model's inputs and outputs: the entry's, as users deploy it.

Why apart from the graph builder: naming is a policy over the program's metadata, not a
part of building nodes. An input is named for its parameter (`x`; a struct parameter's
fields by path, `p.a`; a block entry's params, buffers and states by their parameter path,
`layers.0.up`); an output for what it is: `result` (one value), `result_0, result_1` (a
tuple's items), a struct result's field paths (`a`, `b.c`); under `--grad`, `loss` then
`grad.NAME` for each differentiated input; a block entry's next states `PATH.next`. A name
spelled like the builder's own (`v0`, `c1`, `n2`, `g3`, `in4`, `out5`), or taken already by
another input or output, falls back to `inK` / `outK`, as does an input of a program
without the record (hand-built IR, whose names are the IR's): no IR name reaches the model.
"""

from __future__ import annotations

import re

from ..ir import tensor as ir

__all__ = ["input_names", "output_names"]

_OWN = re.compile(r"(?:v|c|g|n|in|out)[0-9]+")


def input_names(program: ir.Program) -> list[str]:
    """The name of each of the entry's inputs, in order."""
    state = program.state
    users = dict(state.interface.inputs) if state.interface is not None else {}
    manifest = state.parameters
    paths = {p.input: p.path for p in manifest.inputs} if manifest is not None else {}
    entry = program.func(program.entry)
    wanted = [paths.get(p.name) or users.get(p.name) for p in entry.params]  # None: inK
    return _unique(wanted, "in", set())


def output_names(program: ir.Program, count: int, inputs: list[str]) -> list[str]:
    """The name of each of the `count` outputs, none an input's."""
    state = program.state
    manifest = state.parameters
    states = [f"{path}.next" for path in manifest.assigned] if manifest is not None else []
    firsts = count - len(states)
    if state.grad is not None:
        users = dict(zip((p.name for p in program.func(program.entry).params), inputs))
        wanted = ["loss"] + [f"grad.{users.get(n, n)}" for n in state.grad.inputs]
    else:
        wanted = _results(state.interface, firsts)
    if len(wanted) != firsts:
        wanted = ["result"] if firsts == 1 else [f"result_{k}" for k in range(firsts)]
    return _unique(wanted + states, "out", set(inputs))


def _results(interface, count: int) -> list[str]:
    """The result names `elaborate` recorded (a block entry's flattened result holds its
    states too: its own results are the first `count`)."""
    labels = list(getattr(interface, "results", ()))
    if len(labels) == count:
        return labels
    own = labels[:count]
    if count == 1:
        return ["result"]
    if own and all(x.startswith("result_0.") for x in own):  # one struct result
        return [x.removeprefix("result_0.") for x in own]
    return own


def _unique(wanted: list[str | None], fallback: str, taken: set[str]) -> list[str]:
    out = []
    for k, name in enumerate(wanted):
        if not name or _OWN.fullmatch(name) or name in taken:
            name = f"{fallback}{k}"
        taken.add(name)
        out.append(name)
    return out
