"""lower-index-notation: tensor-inlined -> tensor-core (no `Comprehension` left).

Each index subexpression lowers to a *labelled tensor*: an atom whose axes
carry index names. An access `x[i, k]` is x labelled (i, k); a repeated index
(`x[i, i]`) takes the `diagonal` prim first. An elementwise prim aligns its
operands to the union of their labels (in order of first appearance): each
operand is permuted to that relative order and, unless its labels are a
suffix of the union, reshaped with size-1 axes, so the prim's numpy-style
broadcasting does the rest. A reduction reduces the labels it binds with
`reduce_<op>`. A `sum` over a product of factors (any tree of `mul`) becomes
one `Einsum` over the factors that have axes, the scalar factors multiplied
after, so `sum[k] a[m, k] * b[k, n]` is `einsum[mk,kn->mn]` and the M×K×N
product never exists. A gather `t[ids[b, s], h]` lowers its positions first, spreads
them over the union of their labels and reads `gather(t, ids)`, labelled by those labels
and then the table's other indices. The result is permuted to the comprehension's output
order and broadcast to its full shape if an output index is absent.

Everything else is copied by the shared traversal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from string import ascii_letters

from ...ir import tensor as ir
from ..traverse import Rewriter, map_ix_atoms


def lower_index_notation(program: ir.Program) -> ir.Program:
    """Replace every `Comprehension` with prims and einsums computing the same tensor."""
    return _LowerIndexNotation().program(program)


@dataclass(frozen=True)
class Labelled:
    """A lowered index expression: `atom`'s axes are the iteration axes `labels`."""
    atom: ir.Atom
    labels: tuple[str, ...]


class _LowerIndexNotation(Rewriter):
    def comprehension(self, e: ir.Comprehension, bind: ir.Bind) -> ir.Expr:
        start = self.mark()
        body = map_ix_atoms(e.body, self.atom)
        lowering = _Lowering(self, e.outputs, bind.var.name)
        result = lowering.finish(lowering.lower(lowering.rename_apart(body)), e.type)
        last = self.pop_emitted(result, start)  # the last step binds the comprehension's name
        return result if last is None else last


class _Lowering:
    """The state of lowering one comprehension: index extents, their order, and the emitter."""

    def __init__(self, rw: Rewriter, outputs: tuple[tuple[str, int], ...], hint: str) -> None:
        self.rw = rw
        self.hint = hint
        self.outputs = tuple(n for n, _ in outputs)
        self.extents: dict[str, int] = dict(outputs)
        self.order: dict[str, int] = {n: k for k, n in enumerate(self.outputs)}

    # ----------------------------------------------------------- helpers

    def emit(self, e: ir.Expr) -> ir.Var:
        return self.rw.emit_expr(e, self.hint)

    def ttype(self, labels: tuple[str, ...], dtype: str) -> ir.TType:
        return ir.TType(tuple(self.extents[n] for n in labels), dtype)

    def rename_apart(self, e: ir.IxExpr) -> ir.IxExpr:
        """Give every reduction index a name of its own, and record extents and order.

        Sibling or nested reductions may reuse a name (`sum[k] a[k] + sum[k] b[k]`);
        after renaming, one name means one axis everywhere in the comprehension.
        """
        return self._rename(e, {}, set(self.outputs))

    def _rename(self, e: ir.IxExpr, env: dict[str, str], taken: set[str]) -> ir.IxExpr:
        if isinstance(e, ir.IxAccess):
            return replace(e, indices=tuple(env.get(i, i) for i in e.indices))
        if isinstance(e, ir.IxScalar):
            return e
        if isinstance(e, ir.IxPrim):
            return replace(e, args=tuple(self._rename(a, env, taken) for a in e.args))
        if isinstance(e, ir.IxGather):
            return replace(e, positions=tuple(
                env.get(p, p) if isinstance(p, str) else self._rename(p, env, taken)
                for p in e.positions))
        inner, axes = dict(env), []
        for name, extent in e.axes:
            new, n = name, 0
            while new in taken:
                n += 1
                new = f"{name}_{n}"
            taken.add(new)
            inner[name] = new
            axes.append((new, extent))
            self.extents[new] = extent
            self.order[new] = len(self.order)
        return replace(e, axes=tuple(axes), body=self._rename(e.body, inner, taken))

    # ------------------------------------------------------------ lowering

    def lower(self, e: ir.IxExpr) -> Labelled:
        if isinstance(e, ir.IxAccess):
            return self.access(e)
        if isinstance(e, ir.IxScalar):
            return Labelled(e.value, ())
        if isinstance(e, ir.IxPrim):
            return self.elementwise(e)
        if isinstance(e, ir.IxReduce):
            return self.reduce(e)
        if isinstance(e, ir.IxGather):
            return self.gather(e)
        raise TypeError(f"not an index expression: {type(e).__name__}")

    def access(self, e: ir.IxAccess) -> Labelled:
        """`x[i, k]` is x labelled (i, k); each repeated index merges its axes by `diagonal`."""
        atom, labels = e.tensor, e.indices
        if len(labels) != atom.type.rank:
            raise ValueError(f"access {atom} with {len(labels)} indices, rank {atom.type.rank}")
        for name, extent in zip(labels, atom.type.shape):
            self.extents.setdefault(name, extent)
        return self.merge_repeats(Labelled(atom, labels))

    def merge_repeats(self, x: Labelled) -> Labelled:
        """x with each repeated label's axes merged by `diagonal` (`a[i, i]`)."""
        atom, labels = x.atom, x.labels
        while len(set(labels)) < len(labels):
            name = next(n for n in labels if labels.count(n) > 1)
            axes = tuple(p for p, n in enumerate(labels) if n == name)
            labels = tuple(n for n in labels if n != name) + (name,)
            atom = self.emit(ir.Prim("diagonal", (atom,),
                                     self.ttype(labels, atom.type.dtype), (("axes", axes),)))
        return Labelled(atom, labels)

    def gather(self, e: ir.IxGather) -> Labelled:
        """`t[ids[b, s], h]`: the positions lowered and spread over the union of their
        labels, `gather` reading the table there; its axes are those labels, then the
        indices of the table's other axes (merged where one repeats, `t[ids[i], i]`)."""
        axes = tuple(k for k, p in enumerate(e.positions) if not isinstance(p, str))
        names = tuple(p for p in e.positions if isinstance(p, str))
        rest = tuple(n for k, n in enumerate(e.tensor.type.shape) if k not in axes)
        for name, extent in zip(names, rest):
            self.extents.setdefault(name, extent)
        positions = [self.lower(e.positions[k]) for k in axes]
        labels = tuple(sorted(_union(x.labels for x in positions),
                              key=lambda n: self.order.get(n, len(self.order))))
        atoms = tuple(self.spread(x, labels) for x in positions)
        ty = ir.TType(tuple(self.extents[n] for n in labels) + rest, e.dtype)
        read = self.emit(ir.Prim("gather", (e.tensor, *atoms), ty, (("axes", axes),)))
        return self.merge_repeats(Labelled(read, labels + names))

    def spread(self, x: Labelled, labels: tuple[str, ...]) -> ir.Atom:
        """x over exactly `labels` (a superset of its own), in that order."""
        if set(x.labels) == set(labels):
            return self.permute(x, labels).atom
        return self.broadcast(x, labels).atom

    def align(self, x: Labelled, target: tuple[str, ...]) -> ir.Atom:
        """x as an operand broadcasting against `target`: permuted, then size-1 axes added."""
        order = tuple(n for n in target if n in x.labels)
        atom = self.permute(x, order).atom
        if target[len(target) - len(order):] == order:
            return atom  # a suffix already broadcasts, right-aligned
        shape = tuple(self.extents[n] if n in order else 1 for n in target)
        return self.emit(ir.Prim("reshape", (atom,), ir.TType(shape, atom.type.dtype)))

    def permute(self, x: Labelled, labels: tuple[str, ...]) -> Labelled:
        if x.labels == labels:
            return x
        perm = tuple(x.labels.index(n) for n in labels)
        out = ir.Prim("permute", (x.atom,), self.ttype(labels, x.atom.type.dtype),
                      (("perm", perm),))
        return Labelled(self.emit(out), labels)

    def elementwise(self, e: ir.IxPrim) -> Labelled:
        args = [self.lower(a) for a in e.args]
        target = self.target([a.labels for a in args])
        atoms = tuple(self.align(a, target) for a in args)
        return Labelled(self.emit(ir.Prim(e.op, atoms, self.ttype(target, e.dtype), e.attrs)),
                        target)

    def target(self, groups: list[tuple[str, ...]]) -> tuple[str, ...]:
        """The axes of an elementwise result: those of an operand that has them all (it
        then needs no permute), else all labels in the comprehension's order."""
        labels = _union(groups)
        for g in groups:
            if len(g) == len(labels):
                return g
        return tuple(sorted(labels, key=lambda n: self.order.get(n, len(self.order))))

    def reduce(self, e: ir.IxReduce) -> Labelled:
        axes, body = e.axes, e.body
        names = tuple(n for n, _ in axes)
        if e.op == "sum" and body.dtype == e.dtype:
            factors = _factors(body)
            tensors = [f for f in factors if _free(f)]
            if tensors and set(names) <= set().union(*(_free(f) for f in tensors)):
                return self.contract(factors, names, e.dtype)
        return self.reduce_with(e.op, self.lower(body), names, e.dtype)

    def reduce_with(self, op: str, x: Labelled, names: tuple[str, ...], dtype: str) -> Labelled:
        """`reduce_<op>` of x over `names`, in `dtype` (a cast first if x has another dtype)."""
        if x.atom.type.dtype != dtype:
            x = Labelled(self.emit(ir.Prim("cast", (x.atom,), self.ttype(x.labels, dtype))),
                         x.labels)
        missing = tuple(n for n in names if n not in x.labels)
        if missing:  # an index the body ignores still counts: broadcast along it first
            x = self.broadcast(x, x.labels + missing)
        positions = tuple(sorted(x.labels.index(n) for n in names))
        rest = tuple(n for n in x.labels if n not in names)
        out = ir.Prim(f"reduce_{op}", (x.atom,), self.ttype(rest, dtype), (("axes", positions),))
        return Labelled(self.emit(out), rest)

    def contract(self, factors: list[ir.IxExpr], names: tuple[str, ...], dtype: str) -> Labelled:
        """`sum[names]` of a product: one einsum over the tensor factors, scalars after."""
        lowered = [self.lower(f) for f in factors]
        tensors = [x for x in lowered if x.labels]
        scalars = [x.atom for x in lowered if not x.labels]
        if len(tensors) == 1:
            result = self.reduce_with("sum", tensors[0], names, dtype)
        elif _product_fits_an_operand(tensors):  # a dot per element: more accurate as mul-sum
            result = self.reduce_with("sum", self.multiply(tensors, dtype), names, dtype)
        else:
            result = self.einsum(tensors, names, dtype)
        if not scalars:
            return result
        scale = scalars[0]
        for s in scalars[1:]:
            scale = self.emit(ir.Prim("mul", (scale, s), ir.TType((), dtype)))
        out = ir.Prim("mul", (result.atom, scale), result.atom.type)
        return Labelled(self.emit(out), result.labels)

    def multiply(self, tensors: list[Labelled], dtype: str) -> Labelled:
        """The elementwise product of the tensors, over the union of their labels."""
        product = tensors[0]
        for x in tensors[1:]:
            target = _union([product.labels, x.labels])
            atoms = (self.align(product, target), self.align(x, target))
            product = Labelled(self.emit(ir.Prim("mul", atoms, self.ttype(target, dtype))), target)
        return product

    def einsum(self, tensors: list[Labelled], names: tuple[str, ...], dtype: str) -> Labelled:
        labels = _union(x.labels for x in tensors)
        free = tuple(sorted((n for n in labels if n not in names), key=self.order.__getitem__))
        letter = _letters(sorted(labels, key=self.order.__getitem__))
        ins = ",".join("".join(letter[n] for n in x.labels) for x in tensors)
        spec = f"{ins}->{''.join(letter[n] for n in free)}"
        out = ir.Einsum(spec, tuple(x.atom for x in tensors), self.ttype(free, dtype), dtype)
        return Labelled(self.emit(out), free)

    def broadcast(self, x: Labelled, labels: tuple[str, ...]) -> Labelled:
        """x (labels a subset of `labels`) materialized over all of `labels`, in that order."""
        atom = self.align(x, labels)
        return Labelled(self.emit(ir.Prim("broadcast_to", (atom,),
                                          self.ttype(labels, atom.type.dtype))), labels)

    def finish(self, x: Labelled, ty: ir.TType) -> ir.Atom:
        """The comprehension's value: x in output order, full shape, result dtype."""
        stray = [n for n in x.labels if n not in self.outputs]
        if stray:
            raise ValueError(f"index {stray[0]} is neither an output nor reduced")
        if x.atom.type.dtype != ty.dtype:
            x = Labelled(self.emit(ir.Prim("cast", (x.atom,), self.ttype(x.labels, ty.dtype))),
                         x.labels)
        if set(x.labels) == set(self.outputs):
            return self.permute(x, self.outputs).atom
        return self.broadcast(x, self.outputs).atom


# ---------------------------------------------------------------- analyses


def _product_fits_an_operand(tensors: list[Labelled]) -> bool:
    """Is the full product no larger than one of its operands (no real contraction)?

    Then multiplying and summing costs no extra memory and sums in a tree, which is
    more accurate than the sequential dot products an einsum may use.
    """
    labels = set(_union(x.labels for x in tensors))
    return any(set(x.labels) == labels for x in tensors)


def _union(groups) -> tuple[str, ...]:
    """The labels of all groups, each once, in order of first appearance."""
    out: list[str] = []
    for labels in groups:
        out.extend(n for n in labels if n not in out)
    return tuple(out)


def _factors(e: ir.IxExpr) -> list[ir.IxExpr]:
    """The factors of a tree of `mul`s (of one dtype), in order."""
    if (isinstance(e, ir.IxPrim) and e.op == "mul" and len(e.args) == 2
            and all(a.dtype == e.dtype for a in e.args)):
        return [f for a in e.args for f in _factors(a)]
    return [e]


def _free(e: ir.IxExpr) -> frozenset[str]:
    """The index names an expression depends on (those its reductions bind excluded)."""
    if isinstance(e, ir.IxAccess):
        return frozenset(e.indices)
    if isinstance(e, ir.IxScalar):
        return frozenset()
    if isinstance(e, ir.IxPrim):
        return frozenset().union(*(_free(a) for a in e.args))
    if isinstance(e, ir.IxGather):
        return frozenset().union(*(frozenset((p,)) if isinstance(p, str) else _free(p)
                                   for p in e.positions))
    return _free(e.body) - {n for n, _ in e.axes}


def _letters(labels: list[str]) -> dict[str, str]:
    """An einsum letter per label: its own name when that is one free letter, else the next free."""
    letter: dict[str, str] = {}
    for n in labels:
        if len(n) == 1 and n in ascii_letters and n not in letter.values():
            letter[n] = n
    spare = (c for c in ascii_letters if c not in letter.values())
    for n in labels:
        if n not in letter:
            letter[n] = next(spare, "")
            if not letter[n]:
                raise ValueError("more than 52 indices in one contraction")
    return letter
