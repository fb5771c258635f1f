"""Blocks: their headers, members, subs and function bodies (docs/models.md, "Blocks").

A block is not a runtime value. Inside it, its params, buffers and states are bare names
(a state is the one assignable member), its subs are reached only through member calls
(`layer.forward(x)`, a sub array only through `static for layer in layers`), and its own
functions are called by bare name. Checking runs in three phases over a module's blocks,
because a sub may name a block declared later:

    headers   generics, `where`, tensor members, each function's signature
    subs      each sub's block and generic arguments; the child's `where` proved (E2206);
              no block contains itself (E2119)
    bodies    every function body, in a frame holding the block's generics, its `where`
              facts and its members

What each phase learns is kept in a `BlockInfo` (in `Globals.blocks`, so `use` exports
a `pub block` with the rest of the module's items).
"""

from __future__ import annotations

from ..diagnostics import DiagnosticBag
from ..syntax import tree as t
from .block_bodies import check_block_bodies, header_checker
from .block_info import BlockInfo, SubInfo, TensorInfo
from .item_scope import check_local_name
from .items import check_default, check_generics, signature_of, where_facts
from .scope import Globals
from .signatures import Binding, Signature, where_help, where_note
from .types import TensorT
from .unify import dtype_in_kind
from .value_items import check_member_values


def is_none(e: t.Expr | None) -> bool:
    """Is this initializer the literal `none`?"""
    return isinstance(e, t.NoneLit)


# --------------------------------------------------------------------- the phases

def check_blocks(module: t.Module, globals_: Globals, bag: DiagnosticBag,
                 signatures: dict[str, Signature], infer) -> dict[str, list]:
    """Check every own block of the module; returns the calls each function makes, keyed
    `Block.fn` (for the recursion check)."""
    blocks = [b for b in module.items if isinstance(b, t.BlockDef)
              and globals_.items.get(b.name) is b]
    infos = [_header(b, globals_, bag, signatures, header_checker) for b in blocks]
    for info in infos:
        globals_.blocks[info.name] = info
    for info in infos:
        _subs(info, globals_, bag, signatures, header_checker)
    _nesting(infos, bag)
    calls: dict[str, list] = {}
    for info in infos:
        calls.update(check_block_bodies(info, globals_, bag, signatures, infer))
    return calls


def _header(block: t.BlockDef, globals_: Globals, bag: DiagnosticBag,
            signatures: dict[str, Signature], header_checker) -> BlockInfo:
    info = BlockInfo(block, {g.name: g for g in block.generics})
    checker = header_checker(info, (), globals_, bag, signatures, with_where=False)
    defaults = check_generics(block, checker)
    for g in block.generics:
        if g.kind == "Shape":
            bag.error("E2190", f"not implemented yet: a shape pack `*{g.name}` as a block's "
                      "generic", g.span, "a pack", help="give each dimension its own `Dim`")
    info.where = where_facts(block.where, checker)
    for g in defaults:
        check_default(g, checker)
    seen = set(info.generics)
    for m in block.members:
        check_local_name(m.name, m.span, bag, "a member")
        if m.name in seen:
            bag.error("E1205", f"duplicate member `{m.name}` of `{block.name}`", m.span,
                      "declared again", help="each member, generic and function of a block "
                      "needs its own name")
            continue
        seen.add(m.name)
        if isinstance(m, t.TensorMember):
            info.tensors[m.name] = _tensor_member(m, checker)
        elif isinstance(m, t.Function):
            info.fns[m.name] = m
    for fn in info.fns.values():
        fn_checker = header_checker(info, fn.generics, globals_, bag, signatures)
        info.sigs[fn.name] = signature_of(fn, fn_checker)
        check_member_values(fn, info.sigs[fn.name], fn_checker, bag)
    return info


def _tensor_member(m: t.TensorMember, checker) -> TensorInfo:
    """E4101 (a state optional or with an initializer), E4102 (a param's initializer other
    than `none` on an optional type); a member's type is one tensor."""
    optional = isinstance(m.type, t.OptionalType)
    inner = m.type.inner if optional else m.type
    if m.kind == "state" and optional:
        checker.error("E4101", f"state `{m.name}` declared optional", m.type.span,
                      "a state is never optional",
                      help="a state has a fixed shape and starts at zeros; drop the `?`")
    elif m.kind == "state" and m.init is not None:
        checker.error("E4101", f"state `{m.name}` with an initializer", m.init.span,
                      "a state starts at zeros", help="drop the initializer")
    elif m.init is not None and not (optional and is_none(m.init)):
        checker.error("E4102", f"{m.kind} `{m.name}` with an initializer other than `none`",
                      m.init.span, "not allowed",
                      help=f"a {m.kind} takes its value from the checkpoint; the only "
                           f"initializer is `none`, on an optional type: "
                           f"`{m.kind} {m.name}: T? = none`")
    ty = checker.resolve_type(inner)
    if ty is not None and not isinstance(ty, TensorT):
        checker.error("E2101", f"{m.kind} `{m.name}` must be a tensor, found {ty}", inner.span,
                      help="write a tensor type such as `Tensor[H; f32]` (or a scalar dtype)")
        ty = None
    return TensorInfo(m, ty, optional)


def _subs(info: BlockInfo, globals_: Globals, bag: DiagnosticBag,
          signatures: dict[str, Signature], header_checker) -> None:
    checker = header_checker(info, (), globals_, bag, signatures)
    for m in info.item.members:
        if isinstance(m, t.Sub) and m.name not in info.subs and m.name not in info.tensors \
                and m.name not in info.fns:
            info.subs[m.name] = _sub(m, checker, globals_)


def _sub(m: t.Sub, checker, globals_: Globals) -> SubInfo:
    """The child block, its generic arguments (written or defaults), its array length;
    E4101 for an initializer other than `none` or an optional array; E2206 for the
    child's `where`."""
    sub = SubInfo(m, None, None, None, m.optional)
    if m.init is not None and not (m.optional and is_none(m.init)):
        checker.error("E4101", f"sub `{m.name}` with an initializer other than `none`",
                      m.init.span, "not allowed",
                      help="a sub's params come from the checkpoint; an optional sub is "
                           f"written `sub {m.name}: Block<...>? = none`")
        return sub
    if m.optional and m.type.count is not None:
        checker.error("E4101", f"sub array `{m.name}` declared optional", m.span,
                      "an array is never optional", help="drop the `?` and `= none`")
        return sub
    child = globals_.blocks.get(m.type.block)
    if child is None:
        what = "not a block" if m.type.block in globals_.items else "undeclared block"
        checker.error("E1201", f"{what} `{m.type.block}`", m.type.span, what,
                      help="a sub names a `block` of this module or a `pub block` it uses")
        return sub
    if m.type.count is not None:
        sub.count = checker.expect_const_int(m.type.count, "a sub array's length")
        if sub.count is None:
            return sub
    sub.block = child
    sub.binding = _child_binding(m, child, checker)
    if sub.binding is not None and not _child_where_holds(m, child, sub.binding, checker):
        sub.binding = None
    return sub


def _child_binding(m: t.Sub, child: BlockInfo, checker) -> Binding | None:
    """The child's generics from the written arguments, then the defaults (E2111, E2110)."""
    generics = list(child.item.generics)
    given = m.type.generics or ()
    if len(given) > len(generics):
        checker.error("E2111", f"`{child.name}` has {len(generics)} generics, {len(given)} "
                      "given", m.type.span)
        return None
    b = Binding()
    for g, arg in zip(generics, given):
        if not checker.bind_generic_arg(g, arg, b):
            return None
    for g in generics[len(given):]:
        if g.default is None or not checker.bind_generic_arg(g, g.default, b):
            checker.error("E2110", f"the generic `{g.name}` of `{child.name}` needs a value",
                          m.type.span, "write it",
                          help=f"write every generic without a default: `{child.name}<...>`")
            return None
    return b if _kinds_hold(m, child, b, checker) else None


def _kinds_hold(m: t.Sub, child: BlockInfo, b: Binding, checker) -> bool:
    """Each dtype argument satisfies its generic's kind (E2112)."""
    for g in child.item.generics:
        dtype = b.dtypes.get(g.name)
        if dtype is not None and g.kind in ("Numeric", "Integer", "Float") \
                and not dtype_in_kind(dtype, g.kind, checker.frame.dtype_kind(dtype)):
            checker.error("E2112", f"`{child.name}` needs {g.name}: {g.kind}, found {dtype}",
                          m.type.span, f"{dtype} is not {g.kind}")
            return False
    return True


def _child_where_holds(m: t.Sub, child: BlockInfo, b: Binding, checker) -> bool:
    sizes = b.sizes()
    for left, op, right, written in child.where:
        l, r = left.substitute(sizes), right.substitute(sizes)
        if not checker.frame.facts.prove(l, op, r):
            checker.error("E2206", f"cannot prove `{l} {op} {r}`, required by `{child.name}`",
                          m.type.span, "instantiated here",
                          help=where_help(l, op, r, "the block's"),
                          notes=(where_note(child.name, written),))
            return False
    return True


def _nesting(infos: list[BlockInfo], bag: DiagnosticBag) -> None:
    """A block may not contain itself, directly or through its subs (E2119)."""
    state: dict[str, int] = {}

    def visit(info: BlockInfo) -> None:
        state[info.name] = 1
        for sub in info.subs.values():
            child = sub.block
            if child is None:
                continue
            if state.get(child.name) == 1:
                bag.error("E2119", f"block `{child.name}` contains itself", sub.member.span,
                          "recursive nesting",
                          help="a block's subs are instantiated at compile time; they "
                               "cannot nest without end")
                sub.block = None
            elif child.name not in state:
                visit(child)
        state[info.name] = 2

    for info in infos:
        if info.name not in state:
            visit(info)
