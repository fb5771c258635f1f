"""`linnet fuzz`: its help and options (run by `linnet/cli/fuzz.py`)."""

from __future__ import annotations

import argparse

from ..io import duration, positive_int

FUZZ_HELP = """\
Differential testing. Generate random well-typed programs, evaluate each case
(an entry, its generic bindings and inputs) with the NumPy oracle, which shares
no code with the compiler, run it through every target and compare:

  interpreter  the PyTorch interpreter of the tensor IR (op bodies)
  torch        generated PyTorch          jax        generated JAX
  onnx         the ONNX model, onnxruntime stablehlo  the StableHLO text, XLA

--kernels also generates ops bound to kernels and runs them (--numerics
equivalent) through Triton from torch and Pallas from jax: on the GPU when
there is one, else in their interpreters (TRITON_INTERPRET=1 and
LINNET_PALLAS_INTERPRET=1 are set for this process). --grad makes entries that
return one floating scalar and checks the --grad export of every target and
autograd through linnet.torch and linnet.jax against finite differences.
--block-grad (implies --grad) makes each program's first entry a root block's,
whose loss is differentiated with respect to the block tree's params too
(autograd through the models linnet.torch.load and linnet.jax.load_source give).

Each failure is a finding of a kind: crash (an internal error, or a process
dying in a backend's native code: programs run in worker processes, and the
program that killed one is run again alone to name the target), late (the
checker accepted the program but compiling it gave a diagnostic), hang
(compiling or loading ran past the time limit), fault (a run stopped at an index
out of range the oracle did not see), disagree (results differ from the
oracle's beyond the dtype's tolerance); and, not failing the run, slow (a run
past the time limit) and oracle (the oracle cannot evaluate the case). Findings
are grouped by failure class; with --out the first occurrence of each class is
reduced to a small program and reported in DIR/<class>/report.md.

examples:
  linnet fuzz --count 50                      # 50 programs, every target
  linnet fuzz --time 600 --jobs 4 --out found # ten minutes on four processes
  linnet fuzz --kernels --targets torch,jax --count 100
  linnet fuzz --grad --seed 7 --count 30 --json > report.json
  linnet fuzz --block-grad --count 50         # block entries' gradients
  linnet fuzz --kernels --rules mypkg.rules:MINE --count 200   # fuzz a new rule

The same --seed and --count give the same programs whatever --jobs is.

--negative N runs nothing: it generates N kernels whose load, store or atomic
can leave its tensor (no mask over a tile wider than the axis, a mask with the
wrong bound or on the wrong axis, a grid with more programs than rows, negative
offsets), one fault each, and checks that `linnet check` rejects every one with
E2131 and accepts its twin with the fault mended; each program it accepts is a
finding (with --out, written to DIR/negative/).

  linnet fuzz --negative 100 --seed 3

exit status: 0 nothing failed, 1 a crash, late diagnostic, hang, fault or
disagreement (with --negative: an out-of-bounds kernel check accepted), 2 a
command-line mistake."""

TARGETS = ("interpreter", "torch", "jax", "onnx", "stablehlo")


def add_fuzz(commands, name: str) -> argparse.ArgumentParser:
    """Add `fuzz` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser(name, help="random programs through every backend against "
                                         "an oracle", description=FUZZ_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, default=0, metavar="S",
                   help="names the programs: program k is generated from (S, k) (default 0)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--count", type=positive_int, metavar="N",
                        help="programs to generate (default 100)")
    budget.add_argument("--time", type=duration, metavar="T",
                        help="generate programs for T seconds (30, 90s, 10m, 1h)")
    budget.add_argument("--negative", type=positive_int, metavar="N",
                        help="instead: generate N kernels that access memory out of bounds "
                             "and check that `linnet check` rejects each (E2131)")
    p.add_argument("--targets", type=_targets, default=TARGETS, metavar="T1,T2",
                   help=f"the targets to run (default all: {','.join(TARGETS)})")
    p.add_argument("--kernels", action="store_true",
                   help="generate kernels and run them through Triton and Pallas")
    p.add_argument("--grad", action="store_true",
                   help="generate scalar losses and check gradients")
    p.add_argument("--block-grad", action="store_true",
                   help="make root blocks' entries and differentiate them with respect "
                        "to their params too (implies --grad)")
    p.add_argument("--jobs", type=positive_int, default=1, metavar="J",
                   help="worker processes (default 1)")
    p.add_argument("--in-process", action="store_true",
                   help="run the programs in this process, not in a worker (with --jobs 1; "
                        "for a debugger: a native crash then ends the run)")
    p.add_argument("--out", metavar="DIR",
                   help="reduce the first occurrence of each failure class and write its "
                        "report to DIR/<class>/")
    p.add_argument("--rules", metavar="MODULE[:NAME]",
                   help="add these e-graph rule sets to the library's (NAME defaults to "
                        "RULE_SET; a rule set or a list of them)")
    p.add_argument("--seconds", type=duration, default=60.0, metavar="T",
                   help="time limit of each compile, load or run (default 60)")
    p.add_argument("--json", action="store_true",
                   help="print the report as JSON on stdout (classes, findings, reductions)")
    return p


def _targets(text: str) -> tuple[str, ...]:
    names = tuple(t.strip() for t in text.split(",") if t.strip())
    unknown = [t for t in names if t not in TARGETS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown target {unknown[0] if unknown else '(none)'}; choose from "
            f"{', '.join(TARGETS)}")
    return names
