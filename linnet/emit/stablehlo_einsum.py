"""`Einsum` in StableHLO: contractions as `dot_general`s, left to right.

StableHLO has no einsum: `einsum` writes one with the operations of
`linnet.emit.stablehlo_building_blocks` (casts, broadcasts, diagonals, reductions,
transposes and `dot_general`), so the printer (`linnet.emit.stablehlo`) emits an `Einsum` node as a
short chain of ops whose accumulation dtype and precision follow the node's.
"""

from __future__ import annotations

from typing import Sequence

from ..ir import tensor as ir
from .stablehlo_building_blocks import convert, diagonal, dot_general, reduce, transpose
from .stablehlo_writer import OpWriter, Value, dense_array, work_dtype

Labelled = tuple[list[str], Value]  # an operand and the einsum label of each of its axes


def einsum(w: OpWriter, spec: str, args: Sequence[Value], result: ir.TType, acc: str = "",
           numerics: str = "equivalent") -> Value:
    """`Einsum(spec, args)` accumulated in `acc` (f32 for halves): operands cast to the
    accumulator; repeated labels of one operand taken as diagonals; labels no other
    operand nor the output uses summed away; then `dot_general` left to right (shared
    labels still needed later are batch axes, the others contracted); finally a transpose
    into the output's order and a cast to the result dtype."""
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",") if inputs else []
    if not arrow or len(terms) != len(args) or not args:
        raise ValueError(f"einsum {spec!r} with {len(args)} operands")
    acc = acc or result.dtype
    wd = work_dtype(acc)
    ops: list[Labelled] = [(list(t), convert(w, x, wd)) for t, x in zip(terms, args)]
    extents = _label_extents(ops)
    ops = [_stretch(w, labels, x, extents) for labels, x in ops]
    ops = [_own_labels(w, ops[k], _labels_outside(ops, k, output)) for k in range(len(ops))]
    while len(ops) > 1:
        later = set(output).union(*(set(labels) for labels, _ in ops[2:]))
        ops = [_contract(w, ops[0], ops[1], later, numerics)] + ops[2:]
    labels, x = _own_labels(w, ops[0], set(output))
    x = transpose(w, x, [labels.index(c) for c in output])
    return convert(w, convert(w, x, acc), result.dtype)


def _label_extents(ops: list[Labelled]) -> dict[str, int]:
    extents: dict[str, int] = {}
    for labels, x in ops:
        if len(labels) != x.type.rank:
            raise ValueError(f"einsum labels {''.join(labels)} for a {x.type}")
        for c, n in zip(labels, x.type.shape):
            m = extents.setdefault(c, n)
            if m != n and 1 not in (m, n):
                raise ValueError(f"einsum label {c} has extents {m} and {n}")
            extents[c] = n if m == 1 else m
    return extents


def _stretch(w: OpWriter, labels: list[str], x: Value, extents: dict[str, int]) -> Labelled:
    """Size-1 axes of a label that is longer elsewhere, broadcast to its extent."""
    shape = tuple(extents[c] for c in labels)
    if shape == x.type.shape:
        return labels, x
    return labels, w.op1("stablehlo.broadcast_in_dim", [x], ir.TType(shape, x.type.dtype),
                         f"broadcast_dimensions = {dense_array(range(x.type.rank))}")


def _labels_outside(ops: list[Labelled], k: int, output: str) -> set[str]:
    return set(output).union(*(set(labels) for j, (labels, _) in enumerate(ops) if j != k))


def _own_labels(w: OpWriter, op: Labelled, keep: set[str]) -> Labelled:
    """One operand with its repeated labels merged (diagonals) and the labels not in
    `keep` summed away."""
    labels, x = op
    for c in dict.fromkeys(labels):
        axes = [k for k, l in enumerate(labels) if l == c]
        if len(axes) > 1:
            x = diagonal(w, x, axes)
            labels = [l for l in labels if l != c] + [c]
    gone = [k for k, c in enumerate(labels) if c not in keep]
    if gone:
        x = reduce(w, x, gone, "stablehlo.add", 0)
        labels = [c for c in labels if c in keep]
    return labels, x


def _contract(w: OpWriter, a: Labelled, b: Labelled, later: set[str],
              numerics: str) -> Labelled:
    (la, x), (lb, y) = a, b
    shared = [c for c in la if c in lb]
    batch = [c for c in shared if c in later]
    summed = [c for c in shared if c not in later]
    out = dot_general(w, x, y, [(la.index(c), lb.index(c)) for c in batch],
                      [(la.index(c), lb.index(c)) for c in summed], numerics)
    return batch + [c for c in la if c not in lb] + [c for c in lb if c not in la], out
