"""`linnet fuzz`: differential testing of every backend against an independent oracle.

    from linnet.fuzz import fuzz
    report = fuzz(seed=0, count=50, kernels=True, out="fuzz-out")
    print(report.summary())      # findings by failure class
    report.failed                # a crash, late diagnostic, hang, fault or disagreement

Random well-typed programs (`linnet.fuzz.programs`, or any `programs=` iterable, such
as `corpus()`) go through the NumPy oracle and every target; each failure is a `Finding`
with a class key, and the first occurrences of a class are reduced
(`linnet.fuzz.reduce`). See docs/fuzz.md, "Running the fuzzer".

Kernels against their op bodies (`linnet verify`, docs/kernels.md "From Python"):
`compare_kernel_and_body(path, op_or_entry, inputs, numerics=..., device=...)`,
`target_spec(path, name)` and `make_inputs`, from `harness.py`.
"""

from .driver import fuzz, load_rules, prepare_runtimes
from .execute import ALL_TARGETS, Plan, run_case
from .findings import FAILING, KINDS, Finding
from .harness import (INPUT_STYLES, Comparison, OutputError, ProgramError, TargetSpec, Tolerance,
                      compare_kernel_and_body, compare_outputs, compiled, default_device,
                      draw_values, kernel_ops, kernel_runtime, make_inputs, shrink, target_spec,
                      tolerance_for)
from .report import FuzzReport, Progress, Reduced
from .sources import Source, corpus, program_seed

__all__ = ["fuzz", "load_rules", "prepare_runtimes", "ALL_TARGETS", "Plan", "run_case",
           "FAILING", "KINDS", "Finding", "FuzzReport", "Progress", "Reduced", "Source",
           "corpus", "program_seed", "compare_kernel_and_body", "compare_outputs", "Comparison",
           "OutputError", "Tolerance", "tolerance_for", "TargetSpec", "target_spec",
           "kernel_ops", "make_inputs", "INPUT_STYLES", "default_device", "kernel_runtime",
           "compiled", "draw_values", "shrink", "ProgramError"]
