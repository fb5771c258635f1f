"""What travels with the tensor IR between passes: typed, frozen records, one field each.

A `Program` is its functions and its entry, plus a `ProgramState`: what passes learned or
decided that is not IR (the checker's kernel bindings, the tuning report, the shard plan,
the parameter manifest, the entry's user names, what the e-graph stage did). Each field is
one record; each pass declares the records it reads and writes (`Pass.reads`,
`Pass.writes` in `linnet.passes.manager`), and `--verify-each` fails a pass that changes a
record it did not declare. `RECORDS` lists the field names.

What a compilation was *asked for* (numerics, target, `--grad`, tuning, `shard=`) is not
here: it is `linnet.passes.manager.Options`, which every pass receives. One channel each:
the state holds what passes computed, the options what the user asked.

Records defined elsewhere (the kernel library, the tuning report, the manifest, the shard
plan) are named for type checkers only: the IR imports no pass and no runtime.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only: ir must not import what builds on it
    from ..check.batch_rule import ShardedOp
    from ..parameters import Manifest
    from ..passes.front.elaborate_kernel import KernelLibrary
    from ..passes.kernels.kernel_tuning import TuningReport

__all__ = ["Interface", "GradNote", "ProgramState", "RECORDS", "state_from_meta"]


@dataclass(frozen=True)
class Interface:
    """An entry's user names: {IR input name: user name}, and one name per result leaf.

    Written by `elaborate` (`passes/front/entry_interface.py` says how the names are made); read
    by `emit-onnx` (the graph's input and output names) and printed in the header of the
    generated PyTorch module."""
    inputs: tuple[tuple[str, str], ...]
    results: tuple[str, ...]

    def __str__(self) -> str:
        ins = ", ".join(f"{ir} = {name}" for ir, name in self.inputs)
        return f"inputs: {ins}; results: {', '.join(self.results)}"


@dataclass(frozen=True)
class GradNote:
    """What a `--grad` entry returns: the loss, then its gradient with respect to `inputs`
    (IR names of the entry's floating inputs, frozen parameters excepted).

    Written by `differentiate`; read by the printers (a header line, ONNX output names)."""
    inputs: tuple[str, ...]

    def __str__(self) -> str:
        return ("returns the loss, then its gradient with respect to: "
                f"{', '.join(self.inputs) or 'none'}")


@dataclass(frozen=True)
class ProgramState:
    """The records a program carries besides its IR; a field left at its default is unset.

    * `interface`: the entry's user names. Written by `elaborate`; read by `emit-onnx`.
    * `kernels`: the checked program's kernel bindings (`KernelLibrary`), one per op
      instance that binds a kernel. Written by `elaborate`, replaced by `choose-kernels`
      (tuned bindings), taken out by `instantiate-kernels` (which makes the kernel Funcs),
      so no later pass or printer sees the checker's analysis.
    * `module`: the dotted path of the compiled module (`examples.matmul`). Written by
      `elaborate`; read by `emit-torch` (the namespace of the module's custom ops).
    * `source`: where the program came from, for the generated module's header. The
      pipeline leaves it empty (generated code does not depend on where the file lies);
      a program built by hand may set it.
    * `parameters`: a block entry's parameter manifest (`linnet.parameters.Manifest`).
      Written by `elaborate`; read by `differentiate` and the printers.
    * `shard`: the ops to run per shard of a device mesh (`ShardedOp`s, `shard=`).
      Written by `elaborate`; read by `emit-jax`.
    * `tuning`: what each op instance's kernel binding came from (`TuningReport`), when a
      compilation is given tuning. Written by `choose-kernels`; read by the printers.
    * `grad`: what a `--grad` entry returns (`GradNote`). Written by `differentiate`; read
      by the printers.
    * `egraph_report`: what the e-graph stage did (rules fired, sizes, masks proved), a
      block per stage and function. Written by `egraph-tiles` and `egraph-products`;
      printed at the end of every IR dump and in the PyTorch module's header.
    """
    interface: Interface | None = None
    kernels: KernelLibrary | None = None
    module: str = ""
    source: str = ""
    parameters: Manifest | None = None
    shard: tuple[ShardedOp, ...] = ()
    tuning: TuningReport | None = None
    grad: GradNote | None = None
    egraph_report: str = ""

    def set(self, **records: object) -> "ProgramState":
        """This state with some records replaced (`state.set(tuning=report)`)."""
        return replace(self, **records)

    def written(self) -> tuple[tuple[str, object], ...]:
        """(name, record) for every record set, in field order."""
        return tuple((f.name, getattr(self, f.name)) for f in fields(self)
                     if not _same(getattr(self, f.name), f.default))

    def changed(self, other: "ProgramState") -> tuple[str, ...]:
        """The names of the records that differ between this state and `other`."""
        return tuple(f.name for f in fields(self)
                     if not _same(getattr(self, f.name), getattr(other, f.name)))

    def legacy_items(self) -> tuple[tuple[str, object], ...]:
        """The records as the old `Program.meta` pairs (the PyTorch module's header prints
        them): `grad` as its text and the IR names of its inputs under "grad_inputs"."""
        pairs: list[tuple[str, object]] = []
        for name, record in self.written():
            if name == "grad":
                pairs += [("grad", str(record)), ("grad_inputs", record.inputs)]
            else:
                pairs.append((name, record))
        return tuple(pairs)


EMPTY = ProgramState()
RECORDS: tuple[str, ...] = tuple(f.name for f in fields(ProgramState))


def _same(a: object, b: object) -> bool:
    return a is b or a == b


def state_from_meta(meta: tuple[tuple[str, object], ...]) -> ProgramState:
    """A state from the old `Program.meta` pairs (deprecated: build a `ProgramState`).
    A "numerics" pair is dropped: the numerics are the compilation's `Options`."""
    warnings.warn("Program(meta=...) is deprecated: pass state=ProgramState(...) "
                  "(linnet.ir.program_state)", DeprecationWarning, stacklevel=3)
    pairs = dict(meta)
    records = {k: v for k, v in pairs.items() if k in RECORDS and k != "grad"}
    if "grad_inputs" in pairs:
        records["grad"] = GradNote(tuple(pairs["grad_inputs"]))
    if "path" in pairs and "source" not in pairs:
        records["source"] = str(pairs["path"])
    return ProgramState(**records)
