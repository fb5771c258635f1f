"""Kernel elaboration: one kernel instance -> a kernel `Func` of the tensor IR.

`elaborate` records, for each op instance that binds a kernel, the kernel item
and its concrete generics in a `KernelLibrary` (left in the program's state,
`state.kernels`); `instantiate-kernels` asks the library for the kernel Funcs kept.
Kernels are translated on demand, not by `elaborate`, because a kernel is
only a program error (tile sizes that are not powers of two, say) when it is
chosen: under `--numerics exact` or where its `where` fails it is never read.

The translation reuses the body translator of `elaborate` (the checker's
instance mode gives every node a concrete tile type) and adds what only
kernels have:

* `program_id(a)` is the prim `program_id {axis=a}`, an i32 scalar;
* a memory access `x[i, j, ...]` becomes an explicit OFFSETS tile: inputs are
  contiguous, so axis k has the constant stride `prod(shape[k+1:])`; each index
  is a compile-time integer (folded into one constant), an integer scalar, or
  an integer tile that adds its axes in order (reshaped with trailing 1s so
  numpy broadcasting builds the outer sum). Offsets are i32, or i64 when the
  tensor has more than 2**31 - 1 elements (indices are cast first);
* `load(x[...], mask, other)` is `load(x, offsets[, mask[, other]])`, a tile of
  the offsets' shape in x's dtype; `store` and the atomics are effect prims
  `store(y, offsets, value[, mask])` of type bool, bound to a variable;
* the Func's `params` are the kernel's parameters (tensors as memory Vars of
  their full type, scalars as rank-0 Vars), `outputs` its results, `launch`
  the evaluated grid, the hints, and each result's initial contents by its
  kind of write; the body's result is `true`.

Every tile dimension (iota lengths included) must be a power of two; a tile
that is not raises E2127 with the span of the expression that builds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping

from ...check.dims import Facts
from ...check.instance import Analysis, Instance
from ...check.kernel_bounds import read_accesses, walk_kernel
from ...check.kernel_cover_sizes import unwritten_result
from ...check.kernel_grids import bound_grid_problem, grid_limit_problem, stored_results
from ...check.kernel_wrap import wrap_problem
from ...check.kernel_tiles import HELP as TILE_HELP, is_tile_size, tile_text
from ...check.signatures import Binding
from ...check.types import TensorT, TupleT
from ...deepstack import call_with_deep_stack
from ...diagnostics import Diagnostic
from ...ir import tensor as ir
from ...ir.prim_types import broadcast_shapes
from ...syntax import tree as t
from ...syntax.printer import print_expr
from .elaborator import BodyTranslator, Elaborator
from .builder import Builder
from .instances import BoundKernel, FuncKey, InstanceKey, func_name, home_module, instance_source
from .vocabulary import I64, ElaborationError, typed_literal
from .surface_walks import child_nodes

BOOL = ir.TType((), "bool")
TRUE = ir.Lit(True, BOOL)
I32_MAX = 2**31 - 1
INITS = {"store": "empty", "atomic_add": "zero", "atomic_max": "lowest",
         "atomic_min": "highest"}


# ===================================================================== library


@dataclass(frozen=True)
class KernelLibrary:
    """The checked program's kernel bindings, by op Func name, elaborated on request.

    It lives in the program's state (`state.kernels`) from `elaborate` to
    `instantiate-kernels` (which takes it out), so that no printer ever sees it. `with_bindings` gives a library
    with some bindings replaced (a tuned choice: `kernel_tuning.py`); it never changes.
    Libraries so derived share one `KernelChecks`: each kernel instance is checked once.
    """
    analysis: Analysis
    bindings: Mapping[str, BoundKernel] = field(default_factory=dict)
    checks: "KernelChecks | None" = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.checks is None:
            object.__setattr__(self, "checks", KernelChecks(self.analysis))

    def __repr__(self) -> str:
        return f"KernelLibrary({len(self.bindings)} kernel bindings)"

    def __str__(self) -> str:
        """One line per op instance: the kernel it binds, with its generics and any launch
        hints a tuned choice sets (`--dump-after` prints it)."""
        lines = [f"{len(self.bindings)} kernel binding(s)"]
        for op, bound in self.bindings.items():
            generics = ", ".join(f"{k}={v}" for k, v in bound.generics)
            hints = "".join(f" {k}({v})" for k, v in (("warps", bound.warps),
                                                      ("stages", bound.stages)) if v is not None)
            lines.append(f"{op} -> {bound.kernel.name}<{generics}>{hints}")
        return "\n".join(lines)

    def knows(self, op: str) -> bool:
        return op in self.bindings

    def with_bindings(self, changed: Mapping[str, BoundKernel]) -> "KernelLibrary":
        return KernelLibrary(self.analysis, {**self.bindings, **changed}, self.checks)

    def instance_key(self, op: str) -> tuple[InstanceKey, int | None, int | None]:
        """Equal keys: the same kernel at the same generics and hints (one Func serves both)."""
        bound = self.bindings[op]
        return InstanceKey.of(bound.kernel, bound.binding), bound.warps, bound.stages

    def where_holds(self, op: str) -> bool:
        bound = self.bindings[op]
        return self.checks.failing_where(bound.kernel, bound.binding) is None

    def unwritten_problem(self, op: str) -> Diagnostic | None:
        """E2206 or E2132 when op's kernel, at its bound sizes, would leave part of a
        stored result unwritten (`unwritten_problem`)."""
        bound = self.bindings[op]
        return self.checks.unwritten_problem(bound.kernel, bound.binding)

    def overflow_problem(self, op: str) -> Diagnostic | None:
        """E2134 or E2133 when op's kernel, at its bound sizes, would launch more programs
        than a grid axis allows or compute an integer that wraps (`overflow_problem`)."""
        bound = self.bindings[op]
        return self.checks.overflow_problem(bound.kernel, bound.binding)

    def elaborate(self, op: str, taken: set[str]) -> tuple[ir.Func, ...]:
        """The kernel Func of op's binding, last, after the fn Funcs its body calls; launch
        hints that the binding overrides replace those written."""
        bound = self.bindings[op]
        funcs = self.checks.elaborate(bound.kernel, bound.binding, taken)
        kernel, launch = funcs[-1], funcs[-1].launch
        hints = {"warps": bound.warps, "stages": bound.stages}
        hints = {k: v for k, v in hints.items() if v is not None}
        if not hints:
            return funcs
        return funcs[:-1] + (replace(kernel, launch=replace(launch, **hints)),)


class KernelChecks:
    """Each kernel instance checked once, at its concrete generics, for every question the
    passes ask of it.

    The front end checks each kernel for all values of its generics; what holds only at
    the bound sizes (its `where`, a grid with programs, stores that cover the results,
    tile sizes) is known once the sizes are. The checker's instance mode
    (`Analysis.instantiate`) gives that: run here once per kernel and binding, its
    `Instance` (concrete signature, every node's type) answers `choose-kernels` (does the
    `where` hold? is a result left unwritten?), tuning (is a choice valid?) and
    `instantiate-kernels` (the translation reads its types), none of which checks again.
    """

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self.done: dict[InstanceKey, Instance] = {}

    def instance(self, kernel: t.Kernel, binding: Binding) -> Instance:
        key = InstanceKey.of(kernel, binding)
        if key not in self.done:
            self.done[key] = self.analysis.instantiate(kernel, binding,
                                                       home_module(self.analysis, kernel))
        return self.done[key]

    def failing_where(self, kernel: t.Kernel, binding: Binding) -> str | None:
        """The first of the kernel's `where` clauses that fails for these concrete
        generics, as written (`BK >= 16`); None when they all hold."""
        sig = self.instance(kernel, binding).signature
        return next((print_expr(clause) for left, op, right, clause in sig.where
                     if not Facts().prove(left, op, right)), None)

    def unwritten_problem(self, kernel: t.Kernel, binding: Binding) -> Diagnostic | None:
        """Would the kernel, at these concrete generics, leave part of a stored result
        unwritten? E2206 when its grid has no programs, E2132 when its stores miss
        elements (`check/kernel_cover_sizes.py`)."""
        inst = self.instance(kernel, binding)
        sizes = {g.name: v.as_int() for g in kernel.generics
                 if (v := binding.dims.get(g.name)) is not None}
        writes = _writes(kernel.body)
        grid = [inst.type_of(g).const.as_int() for g in kernel.grid]
        shapes = [tuple(d.as_int() for d in ty.dims) for ty in inst.signature.results]
        empty = bound_grid_problem(kernel, grid, shapes, writes, sizes)
        if empty is not None or inst.diagnostics:
            return empty  # an instance with errors: elaborating it reports them
        accesses, programs = read_accesses(kernel, inst.signature.params,
                                           inst.signature.results, inst.types, Facts())
        stored = [r.name for r in stored_results(kernel, writes)]
        return unwritten_result(kernel, accesses, stored, programs, sizes)

    def overflow_problem(self, kernel: t.Kernel, binding: Binding) -> Diagnostic | None:
        """Would the kernel, at these concrete generics, launch more programs along a grid
        axis than the GPU allows (E2134, `check/kernel_grids.py`), or compute a signed
        integer that leaves its dtype's range (E2133, `check/kernel_wrap.py`), which the
        memory-safety proofs assume it never does?"""
        inst = self.instance(kernel, binding)
        sizes = {g.name: v.as_int() for g in kernel.generics
                 if (v := binding.dims.get(g.name)) is not None}
        grid = [inst.type_of(g).const.as_int() for g in kernel.grid]
        too_many = grid_limit_problem(kernel, grid, sizes)
        if too_many is not None:
            return too_many
        values = walk_kernel(kernel, inst.signature.params, inst.signature.results,
                             inst.types, Facts())
        return wrap_problem(kernel.name, values.computed, sizes)

    def elaborate(self, kernel: t.Kernel, binding: Binding,
                  taken: set[str] = frozenset()) -> tuple[ir.Func, ...]:
        """The kernel instance as a kernel Func (`elaborate_kernel`), from its instance."""
        return elaborate_kernel(self.analysis, kernel, binding, taken,
                                self.instance(kernel, binding))


def where_holds(analysis: Analysis, kernel: t.Kernel, binding: Binding) -> bool:
    """Do the kernel's `where` clauses hold for these concrete generics?"""
    return failing_where(analysis, kernel, binding) is None


def failing_where(analysis: Analysis, kernel: t.Kernel, binding: Binding) -> str | None:
    """`KernelChecks.failing_where`, for one question."""
    return KernelChecks(analysis).failing_where(kernel, binding)


def unwritten_problem(analysis: Analysis, kernel: t.Kernel, binding: Binding
                      ) -> Diagnostic | None:
    """`KernelChecks.unwritten_problem`, for one question."""
    return KernelChecks(analysis).unwritten_problem(kernel, binding)


def elaborate_kernel(analysis: Analysis, kernel: t.Kernel, binding: Binding,
                     taken: set[str] = frozenset(),
                     checked: Instance | None = None) -> tuple[ir.Func, ...]:
    """The kernel instance as a kernel Func, after the fn instances it calls.

    New names avoid `taken` (the program's functions); `checked` is the kernel already
    checked at this binding (`KernelChecks`), else it is checked here. Runs on a deep
    stack, as `elaborate` does.
    """
    return call_with_deep_stack(lambda: _KernelElaborator(analysis, taken).kernel(
        kernel, binding, checked))


class _KernelElaborator(Elaborator):
    """An elaborator for one kernel and the fns it calls, naming around `taken`."""

    def __init__(self, analysis, taken: set[str]) -> None:
        super().__init__(analysis)
        self.taken = set(taken)  # names outside, besides those this one gives
        self.body_class = _FnOnTiles  # the fns a kernel calls run on its tiles

    def kernel(self, kernel: t.Kernel, binding: Binding,
               checked: Instance | None = None) -> tuple[ir.Func, ...]:
        key = InstanceKey.of(kernel, binding)
        name = self._unique(func_name(kernel, key.generics))
        self.names[FuncKey(key)] = name  # reserved, not queued: translated here
        if checked is not None and not checked.diagnostics:
            self.instances[key] = checked  # one with errors: `instance` reports them
        inst = self.instance(kernel, binding)
        func = _KernelBody(self, inst, Builder()).kernel_func(
            name, instance_source("kernel", kernel, key.generics))
        fns, done = [], 0
        while done < len(self.queue):
            fns.append(self.translate(self.queue[done]))
            done += 1
        return tuple(fns) + (func,)


# ===================================================================== bodies


class _TileSizes:
    """Checks, before translating it, that each expression's tile has power-of-two sizes."""

    def expr(self, e: t.Expr, want: str | None = None) -> ir.Atom:
        """Every expression, checked before translation, so the outermost bad tile is named."""
        self.check_tile(e, self.val(e).type)
        return super().expr(e, want)

    def stmt_LetIndex(self, s: t.LetIndex) -> None:
        self.check_tile(s, self.val(s).type)
        super().stmt_LetIndex(s)

    def scan_stacks(self, e: t.ForExpr, names: tuple[str, ...] = ()) -> list[ir.Atom]:
        """A scan's stacks are tiles too (reached without `expr` by `let (a, b) = for`)."""
        self.check_tile(e, self.val(e).type)
        return super().scan_stacks(e, names)

    def check_tile(self, node, ty) -> None:
        """E2127 unless every dimension of the checker type ty is a power of two (Triton's
        tiles are); literals, scalars and tuples of such pass."""
        if isinstance(ty, TupleT):
            for item in ty.items:
                self.check_tile(node, item)
            return
        if not isinstance(ty, TensorT):
            return
        shape = tuple(self.dim(d) for d in ty.dims)
        if all(map(is_tile_size, shape)):
            return
        message = f"tile sizes must be powers of two: {tile_text(node, shape)}"
        span = node.span
        raise ElaborationError(message, span, "E2127", [Diagnostic(
            "E2127", message, span, "not a power of two", help=TILE_HELP)])


class _FnOnTiles(_TileSizes, BodyTranslator):
    """A fn called from a kernel: translated as any fn, its tiles checked."""


class _KernelBody(_TileSizes, BodyTranslator):
    """The body translator of `elaborate`, plus memory, program ids and tile-size rules."""

    def __init__(self, elab, inst, builder) -> None:
        super().__init__(elab, inst, builder)
        self.memory: dict[str, ir.Var] = {}  # tensor parameters and results, by name

    def kernel_func(self, name: str, source: str) -> ir.Func:
        k: t.Kernel = self.inst.item
        sig = self.inst.signature
        params = tuple(self.parameter(p.name, ty) for p, ty in zip(k.params, sig.params))
        outputs = tuple(self.memory_var(p.name, ty) for p, ty in zip(k.results, sig.results))
        self.stmts(k.body)
        body = ir.Block(tuple(self.b.blocks[0]), TRUE)
        return ir.Func(name, "kernel", params, body, source, outputs=outputs,
                       launch=self.launch(k))

    def parameter(self, name: str, ty) -> ir.Var:
        """A tensor parameter is memory (read by `load` only); a scalar is a value."""
        if isinstance(ty, TensorT) and ty.rank:
            return self.memory_var(name, ty)
        var = self.b.fresh(name, self.ir_type(ty))
        self.env.define(name, var)
        return var

    def memory_var(self, name: str, ty) -> ir.Var:
        var = self.b.fresh(name, self.ir_type(ty))
        self.memory[name] = var
        return var

    def launch(self, k: t.Kernel) -> ir.Launch:
        """The grid evaluated; hints as written; each result's start by its kind of write."""
        grid = tuple(self.const_int(g) for g in k.grid)
        warps = self.const_int(k.warps) if k.warps is not None else None
        stages = self.const_int(k.stages) if k.stages is not None else None
        writes = _writes(k.body)
        inits = tuple(INITS[writes.get(r.name, "store")] for r in k.results)
        return ir.Launch(grid, warps, stages, inits)

    def loop_bound(self, e: t.Expr) -> ir.Bound:
        """A `for` bound in a kernel: a compile-time integer, or a run-time integer scalar
        (from `program_id`, say) converted to i64, the counter's dtype."""
        value = self.fold(e)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        atom = self.expr(e, "i64")
        if isinstance(atom, ir.Lit):
            return int(atom.value)
        if atom.type != I64:
            atom = self.prim("cast", (atom,), I64)
        return atom

    # ------------------------------------------------------ kernel prims

    def prelude_program_id(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        axis = self.const_int(self.args(e)[0])
        return self.prim("program_id", (), ir.TType((), "i32"), (("axis", axis),))

    def prelude_load(self, e: t.Call, ty: ir.TType) -> ir.Atom:
        """`load(x[...], mask, other)`; without `other` the printers read 0 under the mask."""
        args = self.args(e)
        mem, offsets = self.access(args[0])
        operands = [mem, offsets]
        if len(args) > 1:
            operands.append(self.fit(self.expr(args[1]), offsets))
        if len(args) > 2:
            operands.append(self.expr(args[2], mem.type.dtype))
        out = ir.TType(_shape(offsets), mem.type.dtype)
        return self.b.emit(ir.Prim("load", tuple(operands), out), "load")

    def stmt_Effect(self, s: t.Effect) -> None:
        """`store` or an atomic: an effect prim of type bool, the value (a literal typed as
        the memory) and the mask broadcast to the offsets when they are tiles."""
        target, value, *mask = [a.value for a in s.args]
        mem, offsets = self.access(target)
        operands = [mem, offsets, self.fit(self.expr(value, mem.type.dtype), offsets)]
        if mask:
            operands.append(self.fit(self.expr(mask[0]), offsets))
        self.b.emit(ir.Prim(s.kind, tuple(operands), BOOL), s.kind)

    def fit(self, atom: ir.Atom, offsets: ir.Atom) -> ir.Atom:
        """A tile operand broadcast to the offsets' shape; a scalar stays a scalar."""
        shape = _shape(offsets)
        if not atom.type.shape or atom.type.shape == shape:
            return atom
        return self.prim("broadcast_to", (atom,), ir.TType(shape, atom.type.dtype))

    # ----------------------------------------------------------- offsets

    def access(self, e: t.Index) -> tuple[ir.Var, ir.Atom]:
        """The memory Var of `x[i, j, ...]` and the offsets tile of the positions read."""
        mem = self.memory[e.base.id]
        shape = mem.type.shape
        dtype = "i64" if math.prod(shape) > I32_MAX else "i32"
        strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
        parts = [self.position(item, dtype) for item in e.items]
        return mem, self.offsets(parts, strides, dtype)

    def position(self, item: t.Expr, dtype: str) -> int | ir.Atom:
        """One index: a compile-time int, or an integer atom cast to the offsets' dtype."""
        value = self.fold(item)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        atom = self.expr(item, dtype)
        if isinstance(atom, ir.Lit):
            return int(atom.value)
        if atom.type.dtype != dtype:
            atom = self.prim("cast", (atom,), ir.TType(atom.type.shape, dtype))
        return atom

    def offsets(self, parts: list, strides: list[int], dtype: str) -> ir.Atom:
        """sum_k index_k * stride_k, each tile index reshaped so its axes come in order."""
        const = sum(p * s for p, s in zip(parts, strides) if isinstance(p, int))
        tiles = [(p, s) for p, s in zip(parts, strides) if not isinstance(p, int)]
        total = None
        for k, (index, stride) in enumerate(tiles):
            later = sum(q.type.rank for q, _ in tiles[k + 1:])
            term = index
            if index.type.rank and later:
                shape = index.type.shape + (1,) * later
                term = self.offs("reshape", (term,), ir.TType(shape, dtype))
            if stride != 1:
                term = self.offs("mul", (term, typed_literal(stride, dtype)), term.type)
            total = term if total is None else self.add(total, term)
        if total is None:
            return typed_literal(const, dtype)
        return self.add(total, typed_literal(const, dtype)) if const else total

    def add(self, a: ir.Atom, b: ir.Atom) -> ir.Atom:
        shape = broadcast_shapes(a.type.shape, b.type.shape)
        return self.offs("add", (a, b), ir.TType(shape, a.type.dtype))

    def offs(self, op: str, args: tuple, ty: ir.TType) -> ir.Var:
        """A step of an offsets computation, named `offs` in dumps."""
        return self.b.emit(ir.Prim(op, args, ty), "offs")


# ===================================================================== helpers


def _shape(atom: ir.Atom) -> tuple[int, ...]:
    return atom.type.shape


def _writes(body: tuple[t.Stmt, ...]) -> dict[str, str]:
    """Each result's kind of write (`store`, `atomic_add`, ...), from the kernel's body."""
    found: dict[str, str] = {}

    def visit(node) -> None:
        if isinstance(node, t.Effect):
            target = node.args[0].value
            found.setdefault(target.base.id, node.kind)
        for child in child_nodes(node):
            visit(child)

    for s in body:
        visit(s)
    return found
