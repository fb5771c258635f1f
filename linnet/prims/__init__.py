"""One definition per primitive of the tensor IR (docs/prims.md).

`PRIMS` maps each primitive's name to its `PrimDef`: arity and attributes, the family
that names its type rule, its meaning for the NumPy oracle, its derivative, how
`fold-constants` evaluates it on literals (`folds`), and how each target (`torch`,
`jax`, `onnx`, `stablehlo`, `triton`; Pallas prints through the JAX row) writes it. The
families live in modules of their own: `math` (`exp` ... `tanh`), `elementwise`,
`shapes`, `kernel`. Everything else reads this table: the IR verifier, the checker's
prelude, the elaborator, the derivative pass, the constant folder, the oracle and the
printers.
This package imports nothing else of the compiler.
"""

from .definition import TARGETS, Fold, Form, Generated, Op, PrimDef, Text, Via
from .kernel import EFFECTS
from .table import PRIMS, ops_of, row, signatures

#: The float math functions (family "math"): prelude functions of one float operand.
MATH = ops_of("math")

__all__ = ["EFFECTS", "Fold", "Form", "Generated", "MATH", "Op", "PRIMS", "PrimDef",
           "TARGETS", "Text", "Via", "ops_of", "row", "signatures"]
