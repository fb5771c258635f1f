"""A random program generator for `linnet fuzz`.

    from linnet.fuzz.programs import generate, GeneratorConfig
    prog = generate(7, GeneratorConfig(kernels=True))
    prog.text        # the program, as the surface printer writes it; it checks
    prog.cases       # one `Case` per entry: generic bindings and tame inputs
    prog.constructs  # a Counter of the constructs used

See docs/fuzz.md, "The generator".
"""

from .config import ALL_DTYPES, FEATURES, GeneratorConfig
from .generate import GeneratorError, Program, generate

__all__ = ["generate", "GeneratorConfig", "Program", "GeneratorError", "FEATURES", "ALL_DTYPES"]
