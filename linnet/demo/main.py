"""`make demo`: run every example as a user would, and say whether each agrees.

For each program in examples/ (and `examples/NAME/NAME.linnet`, a larger example in a
folder of its own) the demo checks it and prints what it declares, then runs it:

- each module-level entry on random inputs, a generic one at small sizes that satisfy its
  `where` clauses (`entries.py`): with kernels, against its op bodies, forward and
  gradient (kernels on the GPU when there is one, else in Triton's interpreter on the
  CPU); without, exported to ONNX and StableHLO and compared with PyTorch, a loss under
  `--grad` too;
- a root block through `linnet.torch.load` with random weights, its entries called as
  methods, with its optional members absent and present (`blocks.py`).

An example agrees when it checks and every run agrees; one that raises is reported on its
line as that example's failure, and the demo goes on. The last line counts the examples
that agree; the exit status is 1 when any does not.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import shutil
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Iterator

from ..check.frontend import check_program
from ..diagnostics import render
from ..fuzz.harness import entries
from ..syntax import tree as t
from .blocks import block_entry_names, run_model
from .entries import Outcome, failure, run_entry

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def describe(module: t.Module) -> str:
    """`4 ops, 2 kernels, 5 entries, 5 fns`: what the file declares (a block's entries
    among the entries)."""
    counts = {"block": 0, "op": 0, "kernel": 0, "entry": 0, "fn": 0, "grad": 0}
    for item in module.items:
        if isinstance(item, t.BlockDef):
            counts["block"] += 1
            counts["entry"] += sum(isinstance(m, t.Function) and m.kind == "entry"
                                   for m in item.members)
        elif isinstance(item, t.Op):
            counts["op"] += 1
            counts["grad"] += item.grad is not None
        elif isinstance(item, t.Kernel):
            counts["kernel"] += 1
        elif isinstance(item, t.Function):
            counts[item.kind] += 1
    plural = {"entry": "entries"}
    return ", ".join(f"{n} {k if n == 1 else plural.get(k, k + 's')}"
                     for k, n in counts.items() if n)


def example_files(folder: Path) -> list[Path]:
    """The programs of `folder`, then each `folder/NAME/NAME.linnet` (an example whose
    other files are its modules and scripts)."""
    nested = [d / f"{d.name}.linnet" for d in sorted(folder.iterdir()) if d.is_dir()]
    return sorted(folder.glob("*.linnet")) + [p for p in nested if p.is_file()]


def has_kernels(program) -> bool:
    """Does any module of the program (the file and those it uses) declare a kernel?"""
    return any(isinstance(item, t.Kernel) for module in program.modules.values()
               for item in module.items)


INDENT = 22  # the width of the examples' names: each run's line starts under the summary


def run_example(path: Path) -> tuple[bool, str]:
    """Check the example and run it: whether it agrees, and what to print after its name
    (the summary, the diagnostics, then a line per run)."""
    result = check_program(str(path))
    module = result.program.root_module
    summary = describe(module) if module is not None else "did not parse"
    text = f"{'ok' if result.ok else 'ERRORS':<7}{summary}"
    text += "".join("\n\n" + render(d, result.sources) + "\n" for d in result.diagnostics)
    if not result.ok:
        return False, text
    outcomes = run_program(path, has_kernels(result.program))
    lines = [f"{o.label}: {o.line}" for o in outcomes] or [
        "nothing to run: no entries and no root block"]
    return all(o.ok for o in outcomes), text + "".join(
        f"\n{' ' * (INDENT + 2)}{line}" for line in lines)


def run_program(path: Path, kernels: bool) -> list[Outcome]:
    """Every module-level entry, then the root block's model."""
    blocks = block_entry_names(path)
    outcomes = []
    for name in entries(path):
        if name not in blocks:
            outcomes.append(_guarded(name, lambda: run_entry(path, name, kernels)))
    if blocks:
        try:
            outcomes += run_model(path, blocks, kernels)
        except Exception as err:  # noqa: BLE001 - the model's failure, on its line
            outcomes.append(failure("the root block", err))
    return outcomes


def _guarded(label: str, run) -> Outcome:
    try:
        return run()
    except Exception as err:  # noqa: BLE001 - one run's failure, on its line
        return failure(label, err)


def main(folder: Path = EXAMPLES, jobs: int | None = None) -> int:
    """Run the examples of `folder`, `jobs` at a time (default: one per core, at most
    `JOBS`), print what each ran, and return the exit status."""
    files = example_files(folder) if folder.is_dir() else []
    if not files:  # an installed wheel ships the compiler, not the repository's examples
        print(f"linnet.demo: no example programs in {folder}: the demo runs the `examples/` "
              "folder of a source checkout (clone the repository and run `make demo`)",
              file=sys.stderr)
        return 2
    if "LINNET_CACHE" not in os.environ:  # a fresh private folder, not a shared fixed name
        os.environ["LINNET_CACHE"] = tempfile.mkdtemp(prefix="linnet-demo-")
        atexit.register(shutil.rmtree, os.environ["LINNET_CACHE"], True)
    import torch  # importing torch does not import triton: the interpreter can still be chosen
    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
    print(f"Running the {len(files)} examples of {folder.name}/ as a user would: each entry "
          "on random inputs (kernels against op bodies, exports against PyTorch), each root "
          "block loaded with random weights\n", flush=True)
    failed = []
    for path, (ok, text) in zip(files, _results(files, jobs or min(JOBS, os.cpu_count() or 1))):
        name = str(path.relative_to(folder))
        print(f"{name:<{INDENT}}{text}", flush=True)
        if not ok:
            failed.append(name)
    agree = len(files) - len(failed)
    tail = f"; {', '.join(failed)} {'does' if len(failed) == 1 else 'do'} not" if failed else ""
    print(f"\n{agree} of {len(files)} examples agree{tail}")
    return 1 if failed else 0


JOBS = 4  # examples run side by side, each in a process of its own, at most this many


def guarded_example(path: Path) -> tuple[bool, str]:
    """`run_example`, an exception in it being the example's failure, not the demo's."""
    try:
        return run_example(path)
    except Exception as err:  # noqa: BLE001 - this example's failure, on its line
        return False, failure(path.name, err).line


def _results(files: list[Path], jobs: int) -> Iterator[tuple[bool, str]]:
    """Each example's `guarded_example`, in order: in `jobs` fresh processes (spawned, not
    forked: torch's threads do not survive a fork), or here for one job."""
    if jobs <= 1 or len(files) <= 1:
        yield from map(guarded_example, files)
        return
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        yield from pool.map(guarded_example, files)
