"""The parameter manifest of a block program: every param, buffer and state by its path.

A compiled block entry takes its own inputs, then one input per parameter of the root
block's tree (params, buffers and states, in manifest order), and returns its results,
then the next value of every state its functions assign. The runtimes that load weights
read this manifest from the compiled program (`Compiled.parameters`): the path names a
weight as a PyTorch `state_dict` would (`layers.3.up`), and shape and dtype say what the
checkpoint must hold.

Manifest order is declaration order, depth first: a block's members as written, a sub's
members where the sub is declared, an array's elements by position.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("param", "buffer", "state")


@dataclass(frozen=True)
class Parameter:
    """One param, buffer or state of a block instance tree.

    `input` is the name of the compiled entry's input that carries it (an identifier;
    None when the parameter is absent). `optional` is set for an optional param and for
    everything under an optional sub: such a parameter is present or absent as the
    checkpoint's paths (`present`) decide."""
    path: str
    kind: str  # param | buffer | state
    shape: tuple[int, ...]
    dtype: str
    optional: bool = False
    input: str | None = None

    @property
    def trainable(self) -> bool:
        """A floating param: what `--grad` differentiates with respect to."""
        return self.kind == "param" and self.dtype in ("f16", "bf16", "f32", "f64")

    def type_text(self) -> str:
        if not self.shape:
            return self.dtype
        return f"Tensor[{', '.join(map(str, self.shape))}; {self.dtype}]"

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "shape": list(self.shape),
                "dtype": self.dtype, "optional": self.optional, "input": self.input}


@dataclass(frozen=True)
class Manifest:
    """The root block, the entry compiled, its parameters, and the states it assigns."""
    root: str
    entry: str
    parameters: tuple[Parameter, ...]
    assigned: tuple[str, ...] = ()  # paths of the states the entry returns, in order

    @property
    def inputs(self) -> tuple[Parameter, ...]:
        """The parameters the compiled entry takes, after its own inputs, in order."""
        return tuple(p for p in self.parameters if p.input is not None)

    def by_path(self) -> dict[str, Parameter]:
        return {p.path: p for p in self.parameters}

    def by_input(self) -> dict[str, Parameter]:
        """Parameters by the name of the entry input that carries them."""
        return {p.input: p for p in self.parameters if p.input is not None}

    def __str__(self) -> str:
        """What the compiled entry takes after its own inputs, and returns after its
        results (the header of a generated module shows it)."""
        who = f"`{self.entry}` takes" if self.entry else "each entry takes"  # none chosen yet
        lines = [f"the root block {self.root}: after its own inputs, {who}"]
        lines += [f"  {p.path}: {p.kind} {p.type_text()}" for p in self.inputs]
        absent = [p.path for p in self.parameters if p.input is None]
        if absent:
            lines.append(f"absent (optional): {', '.join(absent)}")
        if self.assigned:
            lines.append(f"after its results it returns the next {', '.join(self.assigned)}")
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {"root": self.root, "entry": self.entry,
                "parameters": [p.to_json() for p in self.parameters],
                "assigned_states": list(self.assigned)}
