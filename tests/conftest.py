"""Session setup for every test: where kernels run, where modules are cached, hypothesis.

- Kernels: without a CUDA device, `TRITON_INTERPRET=1` is set here, before anything imports
  Triton (Triton reads it when a kernel is decorated), so on the CPU (CI) generated modules
  run their kernels in Triton's interpreter, and on a GPU machine they run for real.
  Importing torch to ask does not import Triton. An explicit `TRITON_INTERPRET` in the
  environment is left alone.
- `LINNET_CACHE` points at a temporary directory for the session, removed at the end, so
  generated modules never land in the home directory and runs do not share stale files.
  Under pytest-xdist the workers share the directory their controller made (it is named to
  them in `LINNET_TEST_SESSION_CACHE`): an e-graph result one worker wrote, the other reads
  (the cache's writes are atomic). Only the process that made it removes it.
- Compilations are remembered in a process (`linnet/passes/compile_memo.py`) by the program
  and options, which cannot see a function of the compiler replaced: a test that takes
  `monkeypatch` starts and ends with none remembered.
- Hypothesis profiles: "ci" (the default: few examples, no deadline, derandomized, so CI is
  fast and reproducible), "gpu" and "thorough" (more examples, random). Choose one with
  `HYPOTHESIS_PROFILE=thorough pytest tests/equivalence`. Random tests that are not
  Hypothesis's (fuzzing counts, mutants) scale with the profile too (`tests/cases/budget.py`).
- `tests/cases/` and `tests/helpers/` are importable from every test by their modules'
  names: the example programs' weights and NumPy references that unit and equivalence
  tests share (`block_model_case`, ...), and the helpers tests share (`irbuild`,
  `programs`, `kernel_cases`, ...). Every other folder of tests/ is a package, so files
  in two folders may share a name (tests/check/test_values.py,
  tests/syntax/test_values.py).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

for _folder in ("cases", "helpers"):
    sys.path.insert(0, str(Path(__file__).resolve().parent / _folder))



def _cuda_available() -> bool:
    try:
        import torch  # does not import triton
    except ImportError:
        return False
    return torch.cuda.is_available()


if "triton" not in sys.modules and not _cuda_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

_SHARED = "LINNET_TEST_SESSION_CACHE"
_MADE_HERE = _SHARED not in os.environ
if _MADE_HERE:
    os.environ[_SHARED] = tempfile.mkdtemp(prefix="linnet-test-cache-")
_CACHE = os.environ[_SHARED]
os.environ["LINNET_CACHE"] = _CACHE

import pytest  # noqa: E402
from budget import CI_EXAMPLES  # noqa: E402
from linnet.passes import compile_memo  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

_SLOW_OK = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]

settings.register_profile(
    "ci", max_examples=CI_EXAMPLES, deadline=None, derandomize=True, database=None,
    print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile(
    "gpu", max_examples=40, deadline=None, print_blob=True, suppress_health_check=_SLOW_OK)
settings.register_profile(
    "thorough", max_examples=200, deadline=None, print_blob=True,
    suppress_health_check=_SLOW_OK)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True)
def _compilations_forgotten_around_patches(request):
    """A test that may replace parts of the compiler compiles afresh, and leaves nothing
    compiled under its patches to the tests after it."""
    patches = "monkeypatch" in request.fixturenames
    if patches:
        compile_memo.forget()
    yield
    if patches:
        compile_memo.forget()


def pytest_unconfigure(config) -> None:
    if _MADE_HERE:
        shutil.rmtree(_CACHE, ignore_errors=True)
