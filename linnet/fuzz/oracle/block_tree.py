"""The oracle's view of a root block: its instance tree, its parameters, the states an
entry assigns, and the checker's types of a block function at concrete generics.

Written from docs/models.md ("Blocks", "Parameters and state"), not from the compiler's
elaboration: every sub (every array element) is an instance whose generics follow from
its parent's; every param, buffer and state has a path (member names joined with `.`,
array positions as numbers), listed in declaration order, depth first. Which optional
members are there is the checkpoint's say (docs/models.md, "Optional members"), given as
`present`, the paths it holds: an optional param or buffer is present when its path is
there; an optional sub when every param and buffer it requires is (its own and its
required subs', optional members and states aside); everything under an absent sub is
absent. Without `present` every optional member is
absent. Only present members are inputs. An entry returns the next value of every state
that it, or a function it calls, assigns: a property of the text, not of the run, so a
state assigned on a branch not taken comes back unchanged; the one exception is a `match`
on an optional sub, which is chosen with the tree (its other arm is not there at all).

The types come from the front end, as for every other body the oracle runs: the block
function is checked again in instance mode (`linnet.check`), its block's generics and its
own bound to values.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...check.block_bodies import BlockBodyChecker, SubRef
from ...check.blocks import BlockInfo
from ...check.checker import Checked
from ...check.dim_normal_form import Dim
from ...check.dims import Facts
from ...check.instance import Analysis, Instance
from ...check.items import signature_of
from ...check.scope import Frame
from ...check.signatures import Binding, Signature, substitute
from ...check.types import TensorT, Val
from ...check.value_types import OptionalT
from ...diagnostics import DiagnosticBag
from ...syntax import tree as t
from .errors import OracleError

MAX_INSTANCES = 100_000


@dataclass
class Node:
    """One block instance: where it sits, its block, its generics' values, whether it is
    present (not an absent optional sub, nor under one), the paths the checkpoint holds,
    its children by sub name (a list for an array)."""
    path: tuple[str, ...]
    info: BlockInfo
    module: Checked
    binding: Binding
    present: bool = True
    held: frozenset[str] = frozenset()
    children: dict[str, "Node | list[Node]"] = field(default_factory=dict)

    def member_path(self, name: str) -> str:
        return ".".join(self.path + (name,))

    def has(self, name: str) -> bool:
        """Is the param, buffer or state `name` there: the instance present and, for an
        optional member, its path held by the checkpoint?"""
        tensor = self.info.tensors[name]
        return self.present and (not tensor.optional or self.member_path(name) in self.held)

    def nodes(self, name: str) -> list["Node"]:
        """The instances of the sub `name` (one, or an array's elements)."""
        child = self.children.get(name)
        return [] if child is None else child if isinstance(child, list) else [child]


@dataclass(frozen=True)
class Member:
    """A param, buffer or state of the tree, at its path, with its concrete type."""
    path: str
    kind: str
    type: TensorT
    present: bool


def build_tree(analysis: Analysis, info: BlockInfo, binding: Binding,
               present: frozenset[str] | None = None) -> Node:
    """The root instance and everything under it; the root's `where` must hold. `present`:
    the parameter paths the checkpoint holds (None: no checkpoint)."""
    for left, op, right, _ in info.where:
        l, r = left.substitute(binding.dims), right.substitute(binding.dims)
        if not Facts().prove(l, op, r):
            raise OracleError(f"the bound values fail `where {l} {op} {r}` of `{info.name}`")
    count = [0]
    return _node(analysis, (), info, binding, True, frozenset(present or ()), count)


def _node(analysis: Analysis, path: tuple[str, ...], info: BlockInfo, binding: Binding,
          present: bool, held: frozenset[str], count: list[int]) -> Node:
    count[0] += 1
    if count[0] > MAX_INSTANCES:
        raise OracleError(f"a tree of more than {MAX_INSTANCES} block instances")
    node = Node(path, info, home_module(analysis, info), binding, present, held)
    for name, sub in info.subs.items():
        if sub.block is None or sub.binding is None:
            raise OracleError(f"sub `{name}` of `{info.name}` did not check")
        child = compose(sub.binding, binding)
        if sub.count is None:
            made = _node(analysis, path + (name,), sub.block, child, present, held, count)
            if sub.optional and not all(p in held for p in required(made)):
                _drop(made)
            node.children[name] = made
        else:
            n = _int(sub.count.substitute(binding.dims))
            node.children[name] = [_node(analysis, path + (name, str(k)), sub.block, child,
                                         present, held, count) for k in range(n)]
    return node


def required(node: Node) -> list[str]:
    """The paths a checkpoint must hold for the instance to be there: its params and
    buffers that are not optional, and those of its subs that are not optional."""
    own = [node.member_path(name) for name, m in node.info.tensors.items()
           if not m.optional and m.kind != "state"]
    return own + [p for name, sub in node.info.subs.items() if not sub.optional
                  for c in node.nodes(name) for p in required(c)]


def _drop(node: Node) -> None:
    """An absent optional sub: it and everything under it are absent."""
    node.present = False
    for name in node.children:
        for c in node.nodes(name):
            _drop(c)


def compose(inner: Binding, outer: Binding) -> Binding:
    """A sub's generics (written in its parent's) at the parent's values."""
    return Binding({k: d.substitute(outer.dims) for k, d in inner.dims.items()},
                   {k: outer.dtypes.get(v, v) for k, v in inner.dtypes.items()})


def _int(d: Dim) -> int:
    value = d.as_int()
    if value is None:
        raise OracleError(f"dimension {d} is not a number")
    return value


def home_module(analysis: Analysis, info: BlockInfo) -> Checked:
    """The module that declares the block: its functions see that module's names."""
    for key, module in analysis.program.modules.items():
        if any(item is info.item for item in module.items):
            return analysis.modules[key]
    raise OracleError(f"no module declares `{info.name}`")


def members(node: Node) -> list[Member]:
    """Every param, buffer and state of the tree, in manifest order."""
    out: list[Member] = []
    for m in node.info.item.members:
        tensor = node.info.tensors.get(m.name)
        if tensor is not None and tensor.member is m:
            ty = substitute(tensor.type, node.binding)
            if not isinstance(ty, TensorT):
                raise OracleError(f"member `{m.name}` of type {ty}")
            out.append(Member(node.member_path(m.name), tensor.kind, ty, node.has(m.name)))
        child = node.children.get(m.name)
        for c in child if isinstance(child, list) else [child] if child else []:
            out += members(c)
    return out


# ------------------------------------------------------------ the states an entry assigns

def assigned_states(node: Node, fn: t.Function) -> set[str]:
    """The paths of the states that `fn`, or any function it reaches, assigns."""
    found: set[str] = set()
    _reach(node, fn, found, set())
    return found


def _reach(node: Node, fn: t.Function, found: set[str], seen: set) -> None:
    key = (id(node), fn.name)
    if key in seen:
        return
    seen.add(key)
    local = {p.name for p in fn.params} | _declared(fn.body)
    _walk(node, fn.body, {}, local, found, seen)


def _walk(node: Node, tree, subvars: dict, local: set, found: set, seen: set) -> None:
    if isinstance(tree, (list, tuple)):
        for x in tree:
            _walk(node, x, subvars, local, found, seen)
        return
    if not hasattr(tree, "__dataclass_fields__"):
        return
    info = node.info
    if isinstance(tree, t.Assign) and tree.name not in local:
        member = info.tensors.get(tree.name)
        if member is not None and member.kind == "state":
            found.add(node.member_path(tree.name))
    if isinstance(tree, t.Call) and tree.callee in info.fns and tree.callee not in local:
        _reach(node, info.fns[tree.callee], found, seen)
    if isinstance(tree, t.MemberCall) and isinstance(tree.base, t.Name):
        for child in subvars.get(tree.base.id) or _children(node, tree.base.id):
            _reach(child, child.info.fns[tree.name], found, seen)
    if isinstance(tree, t.ForEach) and isinstance(tree.iterable, t.Name):
        inner = {**subvars, tree.var: _children(node, tree.iterable.id)}
        _walk(node, tree.body, inner, local, found, seen)
        return
    sub = optional_sub(node, tree, local)
    if sub is not None:
        arm, name = chosen_arm(tree, sub)
        inner = {**subvars, name: [sub]} if name is not None else subvars
        _walk(node, arm.value, inner, local, found, seen)
        return
    for name in tree.__dataclass_fields__:
        if name not in ("span", "callee_span", "name_spans", "name_span"):
            _walk(node, getattr(tree, name), subvars, local, found, seen)


def optional_sub(node: Node, tree, local) -> Node | None:
    """The instance of the optional sub a `match` reads (`match head { ... }`), or None
    for any other tree (a local of that name is not the sub)."""
    if not isinstance(tree, t.Match) or not isinstance(tree.scrutinee, t.Name):
        return None
    name = tree.scrutinee.id
    sub = node.info.subs.get(name)
    if sub is None or not sub.optional or name in local:
        return None
    child = node.children.get(name)
    return child if isinstance(child, Node) else None


def chosen_arm(tree: t.Match, sub: Node) -> tuple[t.Arm, str | None]:
    """The arm the sub's presence takes (`some(h)` when there, `none` when not), and the
    name `h` its pattern gives the sub (None for `none`)."""
    want = t.SomePat if sub.present else t.NonePat
    for arm in tree.arms:
        if isinstance(arm.pattern, want):
            return arm, arm.pattern.names[0] if want is t.SomePat else None
    raise OracleError(f"no arm of a `match` on an optional sub takes it "
                      f"{'present' if sub.present else 'absent'}")


def _children(node: Node, name: str) -> list[Node]:
    child = node.children.get(name)
    if child is None:
        return []
    return [c for c in (child if isinstance(child, list) else [child]) if c.present]


def _declared(body) -> set[str]:
    """Every name a body declares (a local that may hide a member)."""
    out: set[str] = set()
    for s in _statements(body):
        if isinstance(s, (t.Let, t.VarDecl, t.LetIndex)):
            out.add(s.name)
        elif isinstance(s, t.LetTuple):
            out.update(s.names)
        elif isinstance(s, (t.For, t.ForEach)):
            out.add(s.var)
    return out


def _statements(tree):
    if isinstance(tree, (list, tuple)):
        for x in tree:
            yield from _statements(x)
    elif hasattr(tree, "__dataclass_fields__"):
        yield tree
        for name in tree.__dataclass_fields__:
            if name not in ("span", "callee_span", "name_spans", "name_span"):
                yield from _statements(getattr(tree, name))


# ------------------------------------------------------------ instances of block functions

@dataclass
class BlockFnInstance(Instance):
    """A block function checked at concrete generics; `module` declares its block."""
    module: Checked | None = None


def instantiate_block_fn(info: BlockInfo, module: Checked, fn: t.Function,
                         binding: Binding) -> BlockFnInstance:
    """The block function checked again with its block's generics and its own bound
    (`binding` holds both): every node's concrete type, every call's generic binding."""
    bag = DiagnosticBag()
    generics = {**info.generics, **{g.name: g for g in fn.generics}}
    block_values = Binding({k: v for k, v in binding.dims.items() if k in info.generics},
                           {k: v for k, v in binding.dtypes.items() if k in info.generics})
    frame = Frame(module.globals, generics, Facts(), binding=binding)
    checker = InstanceChecker(frame, bag, module.signatures, info, block_values)
    checker.types, checker.call_bindings = {}, {}
    sig = signature_of(fn, checker)
    for left, op, right, _ in sig.where:
        if not Facts().prove(left, op, right):
            raise OracleError(f"`{fn.name}` at this binding fails `where {left} {op} {right}`")
    checker.bind_members()
    for p, ty in zip(fn.params, sig.params):
        frame.bind(p.name, Val(ty))
    checker.expected_result = sig.result
    checker.stmts(fn.body)
    return BlockFnInstance(fn, binding, sig, checker.types, checker.call_bindings,
                           bag.sorted(), module)


class InstanceChecker(BlockBodyChecker):
    """The block body checker at concrete values of the block's generics: members, own
    functions and subs seen through those values; a member call's generic binding kept
    under the member call itself."""

    def __init__(self, frame: Frame, bag: DiagnosticBag, signatures, info: BlockInfo,
                 values: Binding) -> None:
        seen = replace(info, sigs={n: _at(s, values) for n, s in info.sigs.items()})
        super().__init__(frame, bag, signatures, seen)
        self.values = values
        self.subrefs = {name: SubRef(name, s.block, compose(s.binding, values)
                                     if s.binding is not None else None,
                                     s.count is not None, s.optional)
                        for name, s in info.subs.items()}
        self._member_calls: list[t.MemberCall] = []

    def bind_members(self) -> None:
        """As the block checker does, at the values: an optional member is a `T?`."""
        for name, m in self.info.tensors.items():
            if m.type is None:
                continue
            ty = substitute(m.type, self.values)
            self.frame.bind(name, Val(OptionalT(ty) if m.optional else ty),
                            mutable=m.kind == "state" and not m.optional)
            self.members[name] = self.frame.lookup(name)

    def expr_MemberCall(self, e: t.MemberCall) -> Val:
        self._member_calls.append(e)
        try:
            return super().expr_MemberCall(e)
        finally:
            self._member_calls.pop()

    def user_call(self, e: t.Call, sig: Signature) -> Val:
        v = super().user_call(e, sig)
        current = self._member_calls[-1] if self._member_calls else None
        if current is not None and e.args is current.args and self.call_bindings is not None \
                and id(e) in self.call_bindings:
            self.call_bindings[id(current)] = self.call_bindings[id(e)]
        return v


def _at(sig: Signature, b: Binding) -> Signature:
    """A block function's signature with its block's generics at their values."""
    where = [(l.substitute(b.dims), op, r.substitute(b.dims), c) for l, op, r, c in sig.where]
    return Signature(sig.item, sig.generics, [substitute(p, b) for p in sig.params],
                     substitute(sig.result, b), where)


__all__ = ["Node", "Member", "build_tree", "members", "assigned_states", "optional_sub",
           "chosen_arm", "required",
           "instantiate_block_fn", "BlockFnInstance"]
