"""`make demo` (`python -m linnet.demo`): every example run as a user would.

`main.py` runs the examples and prints one line per run and a count of the examples that
agree; `entries.py` runs a module-level entry (kernels against op bodies, exports against
PyTorch), `blocks.py` a root block through `linnet.torch.load`. The demo uses the
differential harness of `linnet.fuzz` and sits above it.
"""

from .main import EXAMPLES, describe, example_files, guarded_example, main, run_example

__all__ = ["EXAMPLES", "describe", "example_files", "guarded_example", "main", "run_example"]
