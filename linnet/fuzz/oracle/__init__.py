"""An independent oracle: a NumPy evaluator of checked Linnet programs.

Written from the language's rules (docs/language.md), sharing no code with the lowering, the
printers or the runtimes, so that every backend can be held to it. See docs/fuzz.md,
"The oracle".

    outputs = evaluate(case)                      # one array per result of the entry
    outputs = evaluate(case, precision="f64")     # every float computed in f64
    grads = gradient_fd(case)                     # central differences, in f64
    slack = gradient_slack(case)                  # how far a tanh a few ulps off moves them
    problem = compare(expected, actual, "f32", reduction_length=64)   # None when equal
    unstable_outputs(case)                        # outputs too ill-conditioned to compare
    unstable_positions(native, wide)              # the same, from evaluations made already
"""

from .compare import compare, tolerance
from .conditioning import unstable_outputs, unstable_positions
from .errors import OracleError, OracleUndefined
from .evaluate import evaluate, evaluate_source
from .grad import gradient_fd, gradient_slack

__all__ = ["evaluate", "evaluate_source", "gradient_fd", "gradient_slack", "compare",
           "tolerance", "unstable_outputs", "unstable_positions", "OracleError",
           "OracleUndefined"]
