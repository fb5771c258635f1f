"""Running a block entry (docs/models.md, "Blocks").

Inside a block its params, buffers and states are bare names, read from the values the
entry was given; a state is assigned (`calls = calls + 1`) and keeps its new value for the
rest of the entry call, in every function of its block that reads it; a member call
(`head.forward(x)`) runs the child instance's function, with the child's members, which
the parent reads as `head.w`; `static
for layer in layers` runs its body once per element of the sub array, `layer` naming it.
A compiled block entry takes its own inputs, then one input per present parameter in
manifest order, and returns its own results, then the next value of each state it assigns
(in manifest order): `BlockEntry` is that convention.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...check.signatures import Binding, substitute
from ...check.types import TensorT
from ...syntax import tree as t
from .block_tree import (Member, Node, assigned_states, build_tree, chosen_arm,
                         instantiate_block_fn, members, optional_sub)
from .calls import Body
from .errors import OracleError
from .values import NONE, SomeV


class BlockBody(Body):
    """A block function's body: the block's members and subs in scope."""

    def __init__(self, machine, inst, node: Node, store: dict) -> None:
        super().__init__(machine, inst)
        self.node = node
        self.store = store
        self.subvars: dict[str, Node] = {}

    def _member(self, name: str) -> str | None:
        """The path of the block's member `name` (a local may hide it)."""
        tensor = self.node.info.tensors.get(name)
        if tensor is None or self._is_local(name):
            return None
        return self.node.member_path(name)

    def lookup(self, name: str):
        """A member's value; an optional one is `some` of it when the checkpoint holds it,
        else `none`."""
        path = self._member(name)
        if path is None:
            return super().lookup(name)
        if not self.node.info.tensors[name].optional:
            return self.store[path]
        return SomeV(self.store[path]) if self.node.has(name) else NONE

    def assign(self, name: str, value) -> None:
        path = self._member(name)
        if path is None:
            return super().assign(name, value)
        tensor = self.node.info.tensors[name]
        if tensor.kind != "state" or tensor.optional:
            raise OracleError(f"assignment to the {tensor.kind} `{name}`")
        self.store[path] = self.conform(value, self.member_type(name))

    def member_type(self, name: str) -> TensorT:
        return substitute(self.node.info.tensors[name].type, self.node.binding)

    def expr_Call(self, e: t.Call):
        fn = self.node.info.fns.get(e.callee)
        if fn is None or self._is_local(e.callee):
            return super().expr_Call(e)
        return self.block_call(self.node, fn, e, e.args)

    def expr_Match(self, e: t.Match):
        """A `match` on an optional sub takes the arm of its presence; in `some(h)`, `h`
        names the sub. Any other `match` is a value's."""
        sub = optional_sub(self.node, e, {n for scope in self.scopes for n in scope})
        if sub is None:
            return super().expr_Match(e)
        arm, name = chosen_arm(e, sub)
        saved = dict(self.subvars)
        if name is not None:
            self.subvars[name] = sub
        try:
            return self.expr(arm.value)
        finally:
            self.subvars = saved

    def expr_Field(self, e: t.Field):
        """`cache.keys`: a sub's member, its value now (after any call that assigned it)."""
        name = e.base.id if isinstance(e.base, t.Name) else None
        child = None if name is None or self._is_local(name) \
            else self.subvars.get(name) or self.node.children.get(name)
        if child is None:
            return super().expr_Field(e)
        if not isinstance(child, Node) or not child.present:
            raise OracleError(f"`{name}.{e.name}` of a sub array or an absent sub")
        tensor = child.info.tensors.get(e.name)
        if tensor is None:
            raise OracleError(f"block `{child.info.name}` has no member `{e.name}`")
        value = self.store.get(child.member_path(e.name))
        if not tensor.optional:
            return value
        return SomeV(value) if child.has(e.name) else NONE

    def expr_MemberCall(self, e: t.MemberCall):
        if not isinstance(e.base, t.Name):
            raise OracleError("a member call on something that is not a sub")
        child = self.subvars.get(e.base.id) or self.node.children.get(e.base.id)
        if not isinstance(child, Node):
            raise OracleError(f"`{e.base.id}` is not a sub that can be called")
        if not child.present:
            raise OracleError(f"calling the absent optional sub `{e.base.id}`")
        fn = child.info.fns.get(e.name)
        if fn is None:
            raise OracleError(f"block `{child.info.name}` has no function `{e.name}`")
        return self.block_call(child, fn, e, e.args)

    def block_call(self, node: Node, fn: t.Function, e, args: tuple[t.Arg, ...]):
        """`fn` of the instance `node`, at the generics the checker bound for this call."""
        own = self.inst.call_bindings.get(id(e))
        if own is None:
            raise OracleError(f"no generic binding recorded for the call of `{fn.name}`")
        inst = self.machine.block_instance(node, fn, own)
        values = self.call_args(fn.params, args)
        values = [self.conform(v, p) for v, p in zip(values, inst.signature.params)]
        return run_block_fn(self.machine, inst, node, self.store, values)

    def stmt_ForEach(self, s: t.ForEach) -> None:
        name = s.iterable.id if isinstance(s.iterable, t.Name) else None
        elements = self.node.children.get(name) if name is not None else None
        if not isinstance(elements, list):
            raise OracleError("`static for` over something that is not a sub array")
        saved = dict(self.subvars)
        try:
            for element in elements:
                self.subvars[s.var] = element
                self._trip(s.body, None, None)
        finally:
            self.subvars = saved


def run_block_fn(machine, inst, node: Node, store: dict, args: list):
    body = BlockBody(machine, inst, node, store)
    for p, ty, value in zip(inst.item.params, inst.signature.params, args):
        body.bind(p.name, body.conform(value, ty))
    return body.conform(body.run_body(inst.item.body), inst.signature.result)


@dataclass
class BlockEntry:
    """A root block's entry at concrete generics: its instance tree, its parameters in
    manifest order (the present ones are inputs), and the states it returns."""
    node: Node
    fn: t.Function
    parameters: list[Member]
    assigned: list[str]

    @property
    def inputs(self) -> list[Member]:
        return [m for m in self.parameters if m.present]


def block_entry(analysis, info, fn: t.Function, block_values: Binding,
                present: frozenset[str] | None = None) -> BlockEntry:
    """The entry's tree at these values of the root's generics, with the optional members
    the checkpoint's paths (`present`) make present."""
    node = build_tree(analysis, info, block_values, present)
    params = members(node)
    reached = assigned_states(node, fn)
    return BlockEntry(node, fn, params, [m.path for m in params if m.path in reached])


def run_block_entry(machine, entry: BlockEntry, inst, args: list,
                    parameters: Sequence) -> tuple:
    """The entry's value and the next states it returns, from its arguments and the
    parameters' values (in the order of `entry.inputs`)."""
    store = {m.path: v for m, v in zip(entry.inputs, parameters)}
    result = run_block_fn(machine, inst, entry.node, store, args)
    return result, [store[path] for path in entry.assigned]


def root_block(analysis, root: str | None):
    """The root block: the one named, or the only block of the file with entries."""
    blocks = analysis.root.globals.blocks
    if root is not None:
        if root not in blocks:
            raise OracleError(f"no block named `{root}`")
        return blocks[root]
    module = analysis.program.root_module
    with_entries = [b for b in module.items if isinstance(b, t.BlockDef)
                    and any(isinstance(m, t.Function) and m.kind == "entry"
                            for m in b.members)]
    if len(with_entries) != 1:
        return None
    return blocks[with_entries[0].name]


__all__ = ["BlockBody", "BlockEntry", "block_entry", "run_block_entry", "root_block",
           "instantiate_block_fn"]
