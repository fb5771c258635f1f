"""The instance tree of a root block: every sub (every array element) with concrete generics.

The checker knows each sub's generic arguments in its parent's generics (`Mlp<H, 4 * H>`);
given the root's values, each instance's values follow, and with them each member's
concrete shape and dtype. The tree gives the parameter manifest and the flattening of
`passes/front/flatten_blocks.py` its names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...check.blocks import BlockInfo, SubInfo, TensorInfo
from ...check.dim_normal_form import Dim
from ...check.dims import Facts
from ...check.signatures import Binding, substitute, where_note
from ...check.types import TensorT
from ...diagnostics import CompileError, Diagnostic
from ...parameters import Parameter


@dataclass
class Inst:
    """One block instance: its path from the root, its generics' values, its children
    (an `Inst`, or a list for an array) by sub name. `present` is False for an absent
    optional sub and everything under it; `optional` is set for an optional sub and
    everything under it, present or not; `chosen` names the instance's own optional
    params that the checkpoint holds."""
    path: tuple[str, ...]
    info: BlockInfo
    dims: dict[str, int]
    dtypes: dict[str, str]
    present: bool = True
    optional: bool = False
    chosen: frozenset[str] = frozenset()
    children: dict[str, "Inst | list[Inst]"] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        """Is the member (a param, buffer or state) there in this compiled tree?"""
        tensor = self.info.tensors[name]
        return self.present and (not tensor.optional or name in self.chosen)


@dataclass(frozen=True)
class MemberAt:
    """A tensor member of an instance tree, at a path relative to some instance."""
    rel: tuple[str, ...]
    info: TensorInfo
    shape: tuple[int, ...]
    dtype: str
    present: bool
    optional: bool = False

    @property
    def kind(self) -> str:
        return self.info.kind


MAX_INSTANCES = 100_000
"""The most block instances a tree may hold: each is unrolled into functions of its own."""


def instance_tree(info: BlockInfo, dims: dict[str, int], dtypes: dict[str, str],
                  present: frozenset[str] | None = None) -> Inst:
    """The root instance and everything under it; the root's `where` must hold (E2206),
    and the tree may hold at most `MAX_INSTANCES` blocks (E2190). `present` holds the
    parameter paths a checkpoint has (None: no checkpoint, every optional member absent):
    an optional param is present when its path is there, an optional sub when every
    param and buffer it requires is (its own optional members and states aside)."""
    for left, op, right, clause in info.where:
        env = {k: Dim.const(v) for k, v in dims.items()}
        l, r = left.substitute(env), right.substitute(env)
        if not Facts().prove(l, op, r):
            raise CompileError([Diagnostic(
                "E2206", f"the bound values fail `where {l} {op} {r}` of `{info.name}`",
                clause.span, "not satisfied", notes=(where_note(info.name, clause),),
                help="choose values that satisfy every `where` clause")])
    size = _size(info, dims, dtypes)
    if size > MAX_INSTANCES:
        raise CompileError([Diagnostic(
            "E2190", f"not implemented yet: a tree of {size} block instances (`{info.name}` "
            f"with these values; at most {MAX_INSTANCES})", info.item.span, "too many",
            help="bind smaller values, or use fewer, larger sub arrays")])
    return _build((), info, dims, dtypes, True, False, present or frozenset())


def _size(info: BlockInfo, dims: dict[str, int], dtypes: dict[str, str]) -> int:
    """How many instances the tree holds, counted without building it."""
    total = 1
    for sub in info.subs.values():
        child_dims, child_dtypes = _child_values(sub, dims, dtypes)
        n = 1 if sub.count is None else _int(sub.count, dims)
        total += n * _size(sub.block, child_dims, child_dtypes)
        if total > MAX_INSTANCES:
            return total
    return total


def _build(path: tuple[str, ...], info: BlockInfo, dims: dict[str, int],
           dtypes: dict[str, str], present: bool, optional: bool,
           paths: frozenset[str]) -> Inst:
    chosen = frozenset(name for name, m in info.tensors.items()
                       if m.optional and _dotted(path + (name,)) in paths)
    inst = Inst(path, info, dims, dtypes, present, optional, chosen)
    for name, sub in info.subs.items():
        child_dims, child_dtypes = _child_values(sub, dims, dtypes)
        if sub.count is None:
            child = _build(path + (name,), sub.block, child_dims, child_dtypes, present,
                           optional or sub.optional, paths)
            if sub.optional and not _complete(child, paths):
                _absent(child)
            inst.children[name] = child
        else:
            n = _int(sub.count, dims)
            inst.children[name] = [_build(path + (name, str(k)), sub.block, child_dims,
                                          child_dtypes, present, optional, paths)
                                   for k in range(n)]
    return inst


def _dotted(path: tuple[str, ...]) -> str:
    return ".".join(path)


def _complete(inst: Inst, paths: frozenset[str]) -> bool:
    """Does the checkpoint hold every param and buffer the instance requires: its own
    non-optional ones and those of its non-optional subs (an optional sub below requires
    nothing of it)?"""
    if not inst.present:
        return False
    own = all(_dotted(inst.path + (name,)) in paths for name, m in inst.info.tensors.items()
              if not m.optional and m.kind != "state")
    return own and all(_complete(c, paths)
                       for name, child in inst.children.items()
                       if not inst.info.subs[name].optional
                       for c in (child if isinstance(child, list) else [child]))


def _absent(inst: Inst) -> None:
    """Mark an instance and everything under it absent."""
    inst.present = False
    for child in inst.children.values():
        for c in child if isinstance(child, list) else [child]:
            _absent(c)


def _child_values(sub: SubInfo, dims: dict[str, int], dtypes: dict[str, str]
                  ) -> tuple[dict[str, int], dict[str, str]]:
    b = sub.binding
    child_dims = {k: _int(d, dims) for k, d in b.dims.items()}
    child_dtypes = {k: dtypes.get(v, v) for k, v in b.dtypes.items()}
    return child_dims, child_dtypes


def _int(d: Dim, dims: dict[str, int]) -> int:
    value = d.substitute({k: Dim.const(v) for k, v in dims.items()}).as_int()
    if value is None:
        raise RuntimeError(f"internal: dimension {d} not constant under {dims}")
    return value


def concrete(m: TensorInfo, inst: Inst) -> tuple[tuple[int, ...], str]:
    """A member's shape and dtype in this instance."""
    ty = m.type
    assert isinstance(ty, TensorT)
    return tuple(_int(d, inst.dims) for d in ty.dims), inst.dtypes.get(ty.dtype, ty.dtype)


def members(inst: Inst, rel: tuple[str, ...] = ()) -> list[MemberAt]:
    """Every tensor member of the instance's tree, in manifest order (paths relative to
    inst), each present or absent as the checkpoint decided."""
    out: list[MemberAt] = []
    for m in inst.info.item.members:
        tensor = inst.info.tensors.get(m.name)
        if tensor is not None and tensor.member is m and tensor.type is not None:
            shape, dtype = concrete(tensor, inst)
            out.append(MemberAt(rel + (m.name,), tensor, shape, dtype, inst.has(m.name),
                                inst.optional or tensor.optional))
        child = inst.children.get(m.name)
        if isinstance(child, Inst):
            out += members(child, rel + (m.name,))
        elif isinstance(child, list):
            for k, c in enumerate(child):
                out += members(c, rel + (m.name, str(k)))
    return out


def mangle(rel: tuple[str, ...]) -> str:
    """The identifier a member goes by in a flattened function (`layers__0__up`)."""
    return "__".join(rel)


def input_name(m: MemberAt, prefix: tuple[str, ...] = ()) -> str:
    """A state's input carries its value before the call; the body's `var` has its name.
    An optional param's input carries the tensor; the body's optional has its name.
    `prefix`: the path of m's instance tree, from where the name is used."""
    if m.kind == "state":
        return mangle(prefix + m.rel) + "__in"
    return mangle(prefix + m.rel) + ("__some" if m.info.optional else "")


def parameters(root: Inst) -> tuple[Parameter, ...]:
    return tuple(Parameter(".".join(m.rel), m.kind, m.shape, m.dtype, m.optional,
                           input_name(m) if m.present else None) for m in members(root))


# ------------------------------------------------------------- the generic listing

@dataclass(frozen=True)
class Pattern:
    """A line of the manifest before the root's generics have values: `layers[*].up`,
    its type in the root's generics, and the length of each array on the way (`x L`)."""
    path: str
    kind: str
    type: str
    counts: tuple[str, ...]
    optional: bool

    def __str__(self) -> str:
        counts = "".join(f" x {c}" for c in self.counts)
        return f"{self.path}: {self.kind} {self.type}{'?' if self.optional else ''}{counts}"

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "type": self.type,
                "counts": list(self.counts), "optional": self.optional}


def patterns(info: BlockInfo, dims: dict[str, Dim] | None = None,
             dtypes: dict[str, str] | None = None, prefix: str = "",
             counts: tuple[str, ...] = (), optional: bool = False) -> list[Pattern]:
    """Every member of the block's tree, arrays written once with `[*]`, types in the
    root's generics (with whatever values `dims` and `dtypes` give them)."""
    dims, dtypes = dims or {}, dtypes or {}
    here = Binding(dict(dims), dict(dtypes))
    out: list[Pattern] = []
    for m in info.item.members:
        tensor = info.tensors.get(m.name)
        if tensor is not None and tensor.member is m and tensor.type is not None:
            out.append(Pattern(prefix + m.name, tensor.kind, str(substitute(tensor.type, here)),
                               counts, optional or tensor.optional))
        sub = info.subs.get(m.name)
        if sub is None or sub.block is None or sub.binding is None or sub.member is not m:
            continue
        child_dims = {k: d.substitute(dims) if dims else d for k, d in sub.binding.dims.items()}
        child_dtypes = {k: dtypes.get(v, v) for k, v in sub.binding.dtypes.items()}
        name, more = prefix + m.name, counts
        if sub.count is not None:
            name += "[*]"
            more = counts + (str(sub.count.substitute(dims) if dims else sub.count),)
        out += patterns(sub.block, child_dims, child_dtypes, name + ".", more,
                        optional or sub.optional)
    return out
