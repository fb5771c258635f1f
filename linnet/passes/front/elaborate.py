"""elaborate: a bound entry -> the tensor IR (`linnet/ir/tensor.py`).

The checker already knows every type; rather than a second type system, this
pass runs it again in *instance mode* (`Analysis.instantiate`) for each item
with concrete generics and reads the recorded `Val` of every node. What is
left here is translation, one method per surface node kind:

* each instance (the entry, and every op and fn it reaches, memoized by item
  and concrete binding) becomes one `ir.Func`, named from `[A-Za-z0-9_]` only
  (`softmax__R8_C40`); an op's kernel binding becomes a `KernelChoice`, its
  `grad` clause a `Func` of kind "grad" (params: the op's, then `y`, `dy`);
* statements become A-normal-form `Bind`s; `let`, `var` and assignment are
  rebindings of the name (SSA: every `Var` has its own name, `acc`, `acc_1`);
* literals and compile-time integers become `Lit`s of the dtype their context
  gives them (the operand they meet, the annotation, the parameter; else
  i64 / f64); integer compile-time arithmetic is folded exactly, float literal
  arithmetic in f64 as the checker does, typed floats never;
* `for`/`while`/scans become `Loop`/`While` carrying exactly the outer `var`s
  their body assigns; `static for` is unrolled; `if` becomes `ir.If` (or just
  one branch when its condition is a compile-time constant);
* index notation becomes `Comprehension` nodes over `Ix*` expressions; inside
  them, any subexpression that reads no index variable is computed once
  outside and enters as an `IxScalar`, and a `fn` called on elements is
  expanded in place (an `op` cannot be).

Kernel bodies are not translated here: an op keeps its body as its definition.
Each op instance's kernel binding (the kernel item and its concrete generics) is
recorded in a `KernelLibrary` left in the program's state (`state.kernels`);
`choose-kernels` translates the kernels it picks through it
(`elaborate_kernel.py`), since a kernel is only an error when it is chosen.
What cannot be translated raises `ElaborationError` (code E2190, with a span).

This module holds the pass itself: `elaborate`, which runs the elaborator and
makes the `KernelLibrary` of the kernel bindings it recorded. The parts live
beside it:

* `passes/front/elaborator.py`: the work list of instances (`Elaborator`) and the
  body translator `BodyTranslator`, assembled from one mixin per concern, as the
  checker's `BodyChecker` is (kernel elaboration subclasses both);
* `passes/front/call_rewrites.py`: call rewrites (`attention_masked` under
  `causal_mask<Q, K>()` is `attention_causal`), applied where kernels may run;
* `passes/front/vocabulary.py`: `ElaborationError`, `Const`, the operator tables, literals;
* `passes/front/instances.py`: checking, keying and naming instances, kernel bindings;
* `passes/front/builder.py`: `Builder` (the blocks being emitted, fresh names), `Env`;
* `passes/front/surface_walks.py`: `assigned_outer` (what a loop or branch carries), `child_nodes`;
* `passes/front/statements.py`: statements, a function's body, loops (`Statements`);
* `passes/front/expressions.py`: expressions, indexing, calls, prelude prims (`Expressions`);
* `passes/front/index_notation.py`: index notation as `Comprehension`s (`IndexNotation`);
* `passes/front/folding.py`: compile-time folding (`Folding`).

The public names that lived here before the split are re-exported.
"""

from __future__ import annotations

from ...check.instance import Analysis, Instance
from ...check.signatures import Binding
from ...deepstack import call_with_deep_stack
from ...ir import tensor as ir
from ...syntax import tree as t
from .call_rewrites import CallRewrite
from .elaborate_kernel import KernelLibrary, where_holds
from .elaborator import BodyTranslator, Elaborator
from .entry_interface import Interface, result_labels
from .instances import BoundKernel, kernel_choice
from .surface_walks import Memo, assigned_outer
from .vocabulary import (BINARY, COMPARE, Const, ELEMENTWISE, ElaborationError, I64, IX_NODES,
                         MATH, Value)

__all__ = ["elaborate", "Elaborator", "BodyTranslator", "KernelLibrary", "BoundKernel",
           "ElaborationError", "Const", "Value", "BINARY", "COMPARE", "ELEMENTWISE", "I64",
           "IX_NODES", "MATH", "Memo", "assigned_outer", "Interface", "result_labels"]


def elaborate(analysis: Analysis, entry: t.Function, binding: Binding,
              checked: Instance | None = None,
              rewrites: tuple[CallRewrite, ...] = ()) -> ir.Program:
    """The entry instance and every op and fn instance it reaches, as one IR program.
    `checked`: the entry already checked with this binding (by `bind-generics`), used
    rather than checked again. `rewrites`: the call rewrites to apply
    (`call_rewrites.py`). When some op binds a kernel, the program's state holds
    the `KernelLibrary` of those bindings, for `choose-kernels`.

    Runs on a deep stack, as the checker does: both recurse over expressions.
    """
    return call_with_deep_stack(lambda: _program(analysis, entry, binding, checked, rewrites))


def _program(analysis: Analysis, entry: t.Function, binding: Binding,
             checked: Instance | None, rewrites: tuple[CallRewrite, ...]) -> ir.Program:
    elaborator = Elaborator(analysis, rewrites, _kernel_applies(analysis))
    program = elaborator.program(entry, binding, checked)
    if not elaborator.kernels:
        return program
    return program.with_state(kernels=KernelLibrary(analysis, dict(elaborator.kernels)))


def _kernel_applies(analysis: Analysis):
    """Whether an op instance's kernel `where` holds at a binding (false without a kernel):
    a call rewrite fires only where the op it calls would run its kernel."""
    def applies(op: t.Op, binding: Binding) -> bool:
        if op.kernel is None:
            return False
        _, bound = kernel_choice(analysis, op, binding)
        return where_holds(analysis, bound.kernel, bound.binding)
    return applies
