"""The compiler's pipeline, top to bottom, as a list of named passes.

This list is the whole compiler. To experiment, copy it and insert, remove or
reorder passes (`linnet.pipeline.passes_for("torch")` returns a fresh list),
then call `compile_source(..., passes=your_list)`.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from .check.batch_rule import named_axes, sharded_ops
from .diagnostics import CompileError
from .errors import UsageError, suggest
from .ir.languages import LANGUAGES as IR_LANGUAGES
from .ir.numerics import MODES, kernels_may_run
from .ir.printer import print_program
from .ir.verify import verify as verify_language
from .passes.front import bind_generics as front
from .passes.front.call_rewrites import REWRITES as CALL_REWRITES
from .passes.front.elaborate import elaborate
from .passes import compile_memo
from .passes.egraph.cache import cached_pass
from .passes.manager import (PRINTERS, Instrumentation, Options, Pass, Result, language,
                             run_pipeline, skipped_note)
from .syntax.program import load_program
from .tuning.records import tuning_for


def _lazy(module: str, function: str, options: bool = False) -> Callable[[Any, Options], Any]:
    """A pass whose implementation is imported on first use (keeps `linnet check` light).

    With `options=True` the function also receives the compilation's `Options`.
    """
    def run(ir: Any, opts: Options) -> Any:
        fn = getattr(importlib.import_module(module), function)
        return fn(ir, opts) if options else fn(ir)
    run.__name__ = function
    return run


def _program_printer(program) -> str:
    return str(program)


def _analysis_printer(analysis) -> str:
    return str(analysis)


def _verifier(lang: str):
    def verify(program) -> list[str]:
        return verify_language(program, lang)
    return verify


language("source", lambda s: s.text or open(s.path).read())
language("surface", _program_printer)
language("checked", _analysis_printer)
language("bound", front.describe_bound)
for _name in IR_LANGUAGES:  # the tensor IR's languages (linnet/ir/languages.py)
    language(_name, print_program, _verifier(_name))
language("torch-source", lambda text: text)
language("jax-source", lambda text: text)
language("onnx-model", lambda model: __import__("onnx").printer.to_text(model))
language("stablehlo-text", lambda text: text)

FRONT = [
    Pass("parse", "read the file and the modules it uses into surface trees",
         "source", "surface", front.parse),
    Pass("check", "resolve names, check types, shapes, index notation, kernels and grads",
         "surface", "checked", front.check),
    Pass("bind-generics", "choose the entry and give each of its generics its --bind value "
         "(a block's entry: the root block's instance tree flattened into plain functions "
         "first)",
         "checked", "bound", front.bind_generics),
]


def _elaborate(bound: front.Bound, options: Options):
    """The entry as tensor IR, with the records later passes read: the module's path (it
    names the custom ops of a generated PyTorch module, emit/torch_library.py), a block
    entry's manifest, and the ops to run per shard of a mesh (emit-jax). Where kernels may
    run, the library's call rewrites apply (passes/front/call_rewrites.py)."""
    rewrites = CALL_REWRITES if kernels_may_run(options) else ()
    program = elaborate(bound.analysis, bound.entry, bound.binding, bound.instance, rewrites)
    shard: tuple = ()
    if options.shard:
        shard = sharded_ops(bound.analysis, dict(options.shard), options.path)
    return program.with_state(module=".".join(bound.analysis.program.root_module.path),
                              parameters=bound.parameters, shard=shard)


MIDDLE = [
    Pass("elaborate", "instantiate the entry and every op and fn it calls into tensor IR",
         "bound", "tensor", _elaborate,
         writes=("interface", "kernels", "module", "parameters", "shard")),
    Pass("choose-kernels", "for each op call, run its kernel or its body (numerics, target, "
         "the kernel's where for the bound sizes)", "tensor", "tensor",
         _lazy("linnet.passes.kernels.choose_kernels", "choose_kernels", options=True),
         reads=("kernels",), writes=("kernels", "tuning")),
    Pass("instantiate-kernels", "translate each kernel an op runs into a kernel Func (once "
         "per kernel instance)", "tensor", "tensor-kernels",
         _lazy("linnet.passes.kernels.instantiate_kernels", "instantiate_kernels"),
         reads=("kernels",), writes=("kernels",)),
    Pass("inline-fns", "replace each call of a fn by its body", "tensor-kernels", "tensor-inlined",
         _lazy("linnet.passes.middle.inline_fns", "inline_fns")),
    Pass("merge-reductions", "write directly nested like reductions (sum[i] sum[j] e) as one "
         "(sum[i, j] e)", "tensor-inlined", "tensor-inlined",
         _lazy("linnet.passes.middle.merge_reductions", "merge_reductions")),
    Pass("lower-index-notation", "turn index notation into aligned tensor operations, "
         "reductions and einsums", "tensor-inlined", "tensor-core",
         _lazy("linnet.passes.middle.lower_index_notation", "lower_index_notation")),
    Pass("differentiate", "under --grad only: a new entry returning the loss and, by reverse "
         "mode, its gradient with respect to every floating input (op grad clauses honoured)",
         "tensor-core", "tensor-core",
         _lazy("linnet.passes.adjoint.differentiate", "differentiate", options=True),
         skipped=lambda o: "" if o.grad else "it runs under --grad only",
         reads=("parameters",), writes=("grad",)),
    Pass("fold-constants", "evaluate operations on literals with the language's exact "
         "integer semantics", "tensor-core", "tensor-core",
         _lazy("linnet.passes.middle.fold_constants", "fold_constants")),
    Pass("hoist-loop-invariants", "move pure bindings that are the same on every trip out "
         "of for and while loops", "tensor-core", "tensor-core",
         _lazy("linnet.passes.middle.hoist_loop_invariants", "hoist_loop_invariants")),
    Pass("cse", "share repeated pure computations", "tensor-core", "tensor-core",
         _lazy("linnet.passes.middle.cse", "cse")),
    Pass("dce", "drop unused bindings and unreachable functions", "tensor-core",
         "tensor-core", _lazy("linnet.passes.middle.dce", "dce")),
    Pass("drop-dead-carries", "stop loops carrying values that nothing after the loop and "
         "nothing kept inside it reads", "tensor-core", "tensor-core",
         _lazy("linnet.passes.middle.drop_dead_carries", "drop_dead_carries")),
    Pass("egraph-tiles", "prove kernel masks with the rule sets of linnet/rules (an e-graph "
         "per kernel) and drop those always true", "tensor-core", "tensor-core",
         cached_pass("linnet.passes.egraph.egraph_tiles", "egraph_tiles"),
         reads=("egraph_report",), writes=("egraph_report",)),
    Pass("fold-proved-masks", "follow through on proved masks: selects on known conditions, "
         "and accesses whose mask is always false", "tensor-core", "tensor-core",
         _lazy("linnet.passes.kernels.fold_proved_masks", "fold_proved_masks")),
    Pass("egraph-products", "choose tile products as dots with the rule sets of linnet/rules "
         "(an e-graph per function): transposes moved and cancelled, half tiles fed to the "
         "matrix units, products added into accumulators", "tensor-core", "tensor-dots",
         cached_pass("linnet.passes.egraph.egraph_products", "egraph_products"),
         reads=("egraph_report",), writes=("egraph_report",)),
    Pass("exact-division", "in kernels, divide by a power of two as a multiplication by "
         "its reciprocal (the same bits, one instruction)", "tensor-dots", "tensor-dots",
         _lazy("linnet.passes.kernels.exact_division", "exact_division")),
    Pass("fast-math", "under --numerics fast only: in kernels, divide by a broadcast divisor "
         "through its reciprocal, and x / sqrt(y) as x * rsqrt(y)", "tensor-dots", "tensor-dots",
         _lazy("linnet.passes.kernels.fast_math", "fast_math", options=True),
         skipped=lambda o: "" if o.numerics == "fast" else "it runs under --numerics fast only"),
    Pass("lower-kernel-scans", "turn the scans in kernels into loops that carry their stacks "
         "and write one row per trip", "tensor-dots", "tensor-kernel-loops",
         _lazy("linnet.passes.kernels.lower_kernel_scans", "lower_kernel_scans")),
    Pass("lower-kernel-einsums", "turn the contractions left in kernels into broadcast "
         "products and sums", "tensor-kernel-loops", "tensor-kernel-tiles",
         _lazy("linnet.passes.kernels.lower_kernel_einsums", "lower_kernel_einsums")),
    Pass("outline-deep-blocks", "move if, for and while nested more than 24 blocks deep "
         "into functions of their own (long else-if chains), so generated Python stays "
         "within CPython's nesting limits", "tensor-kernel-tiles", "tensor-outlined",
         _lazy("linnet.passes.middle.outline_deep_blocks", "outline_deep_blocks")),
]

# what the generated PyTorch module's header prints: every record a printer may see
HEADER_RECORDS = ("interface", "source", "module", "parameters", "shard", "tuning", "grad",
                  "egraph_report")

BACK = {
    "torch": [Pass("emit-torch", "print the program as a PyTorch module, with each chosen "
                   "kernel as a @triton.jit function and its launcher", "tensor-outlined",
                   "torch-source", _lazy("linnet.emit.torch", "emit_torch", options=True),
                   reads=HEADER_RECORDS)],
    "jax": [Pass("emit-jax", "print the program as a JAX module (lax control flow), with each "
                 "chosen kernel through pl.pallas_call and a custom_vjp", "tensor-outlined",
                 "jax-source", _lazy("linnet.emit.jax", "emit_jax", options=True),
                 reads=("parameters", "shard", "tuning", "grad"))],
    "onnx": [Pass("emit-onnx", "build the program as an ONNX model (op bodies; functions "
                  "inlined, loops as Loop, if as If), checked by onnx.checker", "tensor-outlined",
                  "onnx-model", _lazy("linnet.emit.onnx", "emit_onnx", options=True),
                  reads=("interface", "parameters", "grad"))],
    "stablehlo": [Pass("emit-stablehlo", "print the program as StableHLO MLIR text with a "
                       "public @main (op bodies; loops as stablehlo.while)", "tensor-outlined",
                       "stablehlo-text",
                       _lazy("linnet.emit.stablehlo", "emit_stablehlo", options=True),
                       reads=("parameters", "grad"))],
}
TARGETS = tuple(BACK)
NUMERICS = MODES  # linnet.ir.numerics; what each means: linnet.ir.kernel_numerics


def passes_for(target: str) -> list[Pass]:
    """A fresh copy of the pipeline for one target."""
    return FRONT + MIDDLE + BACK[check_choice("target", target, TARGETS)]


def check_choice(what: str, value: object, choices: tuple[str, ...]) -> str:
    """value, when it is one of choices; else a UsageError naming them (and the closest)."""
    if isinstance(value, str) and value in choices:
        return value
    hint = suggest(value, choices) if isinstance(value, str) else ""
    raise UsageError(f"unknown {what} {value!r}{hint}; choose one of {', '.join(choices)}",
                     f"unknown --{what} {value!r}{hint}; choose one of {', '.join(choices)}")


def all_passes() -> list[Pass]:
    seen: dict[str, Pass] = {}
    for target in TARGETS:
        for p in passes_for(target):
            seen.setdefault(p.name, p)
    return list(seen.values())


def pass_targets(name: str) -> tuple[str, ...]:
    """The targets whose pipeline has a pass of this name (none for a name no pipeline has)."""
    return tuple(t for t in TARGETS if any(p.name == name for p in passes_for(t)))


def elsewhere(name: str, target: str) -> str | None:
    """`pass NAME runs only for target(s) ...` when NAME is no pass of target's pipeline but
    is one of other targets' (`emit-onnx` asked of a torch compilation); else None. A name
    the user spelled right but aimed at the wrong target is told so, not called unknown."""
    targets = pass_targets(name)
    if not targets or target in targets:
        return None
    return f"pass {name} runs only for target(s) {', '.join(targets)}"


def check_pass_names(names: Iterable[str], passes: list[Pass], target: str) -> None:
    """Every name (`all` aside) is a pass of `passes`, the pipeline about to run; else a
    UsageError naming the first that is not: a pass of other targets as such, any other
    name as unknown, with the closest pass of the pipeline."""
    known = {p.name for p in passes}
    for name in sorted(set(names) - known - {"all"}):
        other = elsewhere(name, target)
        if other:
            raise UsageError(f"{other}; this compilation is for target {target!r}",
                             f"{other}, not --target {target}")
        hint = suggest(name, sorted(known | {p.name for p in all_passes()}))
        raise UsageError(f"no pass {name!r} in this pipeline{hint}",
                         f"unknown pass {name}{hint}; see --list-passes")


_RULES: contextvars.ContextVar[tuple | None] = contextvars.ContextVar("linnet_rules",
                                                                    default=None)


@contextlib.contextmanager
def rules_in_effect(rules: tuple | list | None) -> Iterator[None]:
    """Within the block, every compilation that is not given `rules` runs these rule sets
    (`None`: the library's again).

    Why: `compile_source(..., rules=...)` reaches one compilation, but the runtimes
    (`linnet.torch.load_function`, `linnet.jax`) and the test harness compile on their own.
    A researcher fuzzing a new rule wraps the whole run instead:

        with rules_in_effect([*linnet.rules.RULE_SETS, mine]):
            report = linnet.fuzz.fuzz(count=100, kernels=True)
    """
    token = _RULES.set(tuple(rules) if rules is not None else None)
    try:
        yield
    finally:
        _RULES.reset(token)


@dataclass
class Compiled:
    """What `compile_source` returns: the final text and every stage's IR."""
    text: Any
    result: Result
    target: str = "torch"

    def stage(self, name: str) -> Any:
        """The IR after the pass `name`: the value the next pass took, whose `str()` is the
        text `linnet compile --dump-after=NAME` prints (`dump(name)` for the ONNX model,
        whose `str()` protobuf gives). An unknown name, or a pass that did not run (cut
        short by `passes` or `stop_after`), is a `UsageError` naming the passes that ran;
        a pass of another target's pipeline (`emit-onnx` of a torch compilation) is named
        as such."""
        return self._stage(name).ir

    def dump(self, name: str) -> str:
        """The text `--dump-after=NAME` prints for the stage `name` (for a pass that this
        compilation did not need, such as `differentiate` without `grad=True`, a first line
        says that it did not run)."""
        found = self._stage(name)
        return skipped_note(name, found.skipped) + PRINTERS[found.language](found.ir)

    @property
    def parameters(self):
        """A block entry's parameter manifest (`linnet.parameters.Manifest`): the inputs
        after the entry's own, and the states it returns; None for a module-level entry."""
        for s in self.result.stages:
            if isinstance(s.ir, front.Bound):
                return s.ir.parameters
        return None

    @property
    def stages(self) -> list[str]:
        """The names of the passes that ran, in order."""
        return [s.name for s in self.result.stages]

    def _stage(self, name: str):
        for s in self.result.stages:
            if s.name == name:
                return s
        ran = self.stages
        other = elsewhere(name, self.target)
        if other:
            what = f"{other}, and this compilation is for {self.target}"
        else:
            known = {p.name for p in all_passes()}
            what = f"it {'did not run' if name in known else 'is not a pass'}"
            what += suggest(name, ran)
        raise UsageError(f"no stage {name!r}: {what}; the stages of this compilation: "
                         f"{', '.join(ran)}")


def compile_source(text: str | None = None, *, path: str = "<input>.linnet",
                   target: str = "torch", entry: str | None = None,
                   root: str | None = None, bind: dict[str, object] | None = None,
                   numerics: str = "equivalent", grad: bool = False, passes: list[Pass] | None = None,
                   rules: tuple | list | None = None, shown: Instrumentation | None = None,
                   tuning: Any = None, device: str | None = None, present: Any = None,
                   shard: Any = None) -> Compiled:
    """Compile a program held in a string (or the file at path) for one target.

    `grad=True` compiles the entry's reverse mode (`--grad`): the result returns the loss
    and its gradient with respect to every floating input. `passes` replaces the pipeline
    (`passes_for(target)`, edited); `rules` replaces the rule sets the e-graph passes run
    (`linnet.rules.RULE_SETS`, plus or minus some); without it, those of the innermost
    `rules_in_effect` block apply, if any.

    `tuning` gives the kernel choices recorded by `linnet tune`: None (the default) reads
    `$LINNET_TUNING`, else `linnet.tuning.json` beside the file at path if there is one;
    a path or a `linnet.tune.TuningFile` reads that file; a `KernelTuning` is used as it
    is; False uses the op headers' choices only, and reads no file. `device` names the
    device whose choices apply (default: the only device the file records). A file that
    cannot be read raises `linnet.tune.TuningFileError`. A pipeline without
    `choose-kernels` (the front end alone, say) reads no tuning file.

    `present` is, for a block entry, the parameter paths a checkpoint holds (any iterable
    of paths, such as a checkpoint's keys): an optional param is present when its path is
    among them, an optional sub when all its required params are. None (the default):
    every optional member is absent.

    `shard` ({op name: mesh axis name, or a tuple of names}; target "jax" only) names the
    ops whose kernels are to run per shard of a device mesh: each instance of one with a
    kernel gets a slot for its per-shard launch and the `jax.shard_map` that runs it, which
    `linnet.jax.mesh` fills in for a mesh (docs/scale_jax.md, "The generated module"). An
    op without a batch axis (`linnet.check.batch_rule`) is a UsageError.

    A compilation for torch or jax with the default passes and no instrumentation is
    remembered (`passes/compile_memo.py`): the same program and options give the same
    `Compiled` again, without running the passes.

    Every error is a `linnet.LinnetError`: an unknown `target`, `numerics` or entry and a
    binding that cannot be used are `linnet.errors.UsageError`; a program with errors is a
    `CompileError`, whose `str()` is its diagnostics rendered with their source lines.
    """
    check_choice("target", target, TARGETS)
    check_choice("numerics", numerics, NUMERICS)
    if shard and target != "jax":
        raise UsageError(f"shard= is for the jax target (a device mesh), not {target}")
    if text is None and not Path(path).is_file():
        raise UsageError(f"no program to compile: no text given, and no file at {path!r}",
                         f"no such file: {path}")
    pipeline = passes or passes_for(target)
    chooses = any(p.name == "choose-kernels" for p in pipeline)
    options = Options(target=target, entry=entry, root=root, numerics=numerics, grad=grad,
                      path=path, present=None if present is None else frozenset(present),
                      bind={k: _bind_text(v) for k, v in (bind or {}).items()},
                      rules=tuple(rules) if rules is not None else _RULES.get(),
                      tuning=tuning_for(tuning, path, device) if chooses else None,
                      shard=_shard_option(shard))
    if shown is not None:
        check_pass_names(shown.dump_before | shown.dump_after |
                         ({shown.stop_after} if shown.stop_after else set()), pipeline, target)
    own_run = passes is not None or shown is not None  # the caller wants the passes run
    key = None if own_run else compile_memo.request_key(path, text, options)
    try:
        return compile_memo.remembered(key, lambda: _compiled(pipeline, path, text, options,
                                                              shown))
    except CompileError as err:
        if not err.sources:
            err.sources = _sources(path, text)
        raise


def _compiled(pipeline: list[Pass], path: str, text: str | None, options: Options,
              shown: Instrumentation | None) -> Compiled:
    result = run_pipeline(pipeline, front.Source(path, text), options, shown)
    return Compiled(result.ir, result, options.target)


def _shard_option(shard: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """`shard=` as `Options.shard`: (op name, mesh axes) pairs, in name order."""
    if not shard:
        return ()
    return tuple(sorted(named_axes(shard).items()))


def compile_file(path: str | Path, **options: Any) -> Compiled:
    """`compile_source` for the program in the file at path (its `use`d modules beside it):
    `compile_file("examples/softmax.linnet", entry="main")`. Takes `compile_source`'s
    keywords."""
    return compile_source(None, path=str(path), **options)


def _sources(path: str, text: str | None) -> dict:
    """The program's files (the root and the modules it uses), for rendering diagnostics."""
    try:
        return load_program(path, text).sources
    except OSError:
        return {}


def _bind_text(value: object) -> str:
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)
