"""Which block instances flatten to the same functions, so that they share them.

The flattening (`passes/front/flatten_blocks.py`) gives a function of an instance its tree's members
as arguments named by their path relative to the instance (`w`, `mlp__up`), never by
their absolute path. So two instances of one block generate the same function text when
everything the text depends on is the same: the block, its generics' values, which of its
members are present (an optional param or sub that the checkpoint holds or not), and the
same for every instance below it. The elements of a sub array usually are such
instances: `sub leaves: [Leaf; 65536]` then generates one `leaves__forward`, which the
checker and `elaborate` see once, rather than 65,536 copies they see one by one.
"""

from __future__ import annotations

from .block_instances import Inst


def instance_classes(root: Inst) -> dict[int, int]:
    """A number for every instance of the tree (by `id`), equal for two instances exactly
    when their functions flatten to the same text. Numbered bottom-up, so that a parent's
    description holds its children's numbers, not their whole trees."""
    numbers: dict[tuple, int] = {}
    out: dict[int, int] = {}
    for inst in _post_order(root):
        key = (id(inst.info), tuple(sorted(inst.dims.items())),
               tuple(sorted(inst.dtypes.items())), inst.present, inst.optional,
               tuple(sorted(inst.chosen)), tuple(_child_key(name, child, out)
                                                 for name, child in inst.children.items()))
        out[id(inst)] = numbers.setdefault(key, len(numbers))
    return out


def _child_key(name: str, child: Inst | list[Inst], out: dict[int, int]) -> tuple:
    if isinstance(child, Inst):
        return (name, out[id(child)])
    return (name, tuple(out[id(c)] for c in child))


def _post_order(root: Inst) -> list[Inst]:
    """Every instance of the tree, each after all of its children (no recursion: a tree
    may be deep)."""
    out: list[Inst] = []
    todo: list[tuple[Inst, bool]] = [(root, False)]
    while todo:
        inst, expanded = todo.pop()
        if expanded:
            out.append(inst)
            continue
        todo.append((inst, True))
        for child in inst.children.values():
            todo += [(c, False) for c in (child if isinstance(child, list) else [child])]
    return out


def shared_path(path: tuple[str, ...]) -> tuple[str, ...]:
    """An instance's path without its array positions (`layers.3.mlp` is `layers.mlp`):
    what the elements of one sub array have in common, and what names their shared
    functions (`layers__mlp__forward`)."""
    return tuple(p for p in path if not p.isdigit())
