"""Printing a module is fast: `linnet torch|jax|onnx|stablehlo` imports neither torch nor
jax nor ml_dtypes, each of which takes seconds to import (checked in a fresh process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from linnet.testing.fork_servers import python_command

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "jax", "jaxlib", "ml_dtypes", "triton")
PROBE = """
import contextlib, io, json, sys
from linnet.cli.main import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    status = main(sys.argv[1:])
print(json.dumps({"status": status, "printed": len(out.getvalue()),
                  "heavy": sorted(m for m in %r if m in sys.modules)}))
""" % (HEAVY,)


def _imports(*argv: str) -> dict:
    """Run a command in a process of its own (a child of the fork server, which has imported
    the compiler but none of HEAVY); the modules of HEAVY loaded after it."""
    done = subprocess.run([*python_command(), "-c", PROBE, *argv], capture_output=True,
                          text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("target", ["torch", "jax", "stablehlo"])
@pytest.mark.parametrize("example", ["softmax", "attention"])
def test_printing_imports_no_framework(target: str, example: str) -> None:
    seen = _imports(target, f"examples/{example}.linnet", "--entry", "main")
    assert seen["status"] == 0 and seen["printed"] > 100
    assert seen["heavy"] == []


def test_onnx_imports_only_what_onnx_itself_imports() -> None:
    """The ONNX export builds its model with the onnx package, which imports ml_dtypes
    itself; torch and jax stay out."""
    seen = _imports("onnx", "examples/softmax.linnet", "--entry", "main")
    onnx_own = subprocess.run([sys.executable, "-c", "import sys, onnx; print(sorted(m for m "
                               f"in {HEAVY!r} if m in sys.modules))"], capture_output=True,
                              text=True, timeout=300).stdout.strip()
    assert seen["status"] == 0 and seen["printed"] > 100
    assert "torch" not in seen["heavy"] and "jax" not in seen["heavy"]
    assert str(seen["heavy"]) == onnx_own


def test_generated_torch_still_runs() -> None:
    """The helpers' `torch` is bound at first use: a direct call works."""
    from linnet.emit.torch_helpers import HELPERS
    import torch
    a = torch.tensor([7, -7, -2**63], dtype=torch.int64)
    b = torch.tensor([2, 2, -1], dtype=torch.int64)
    assert HELPERS["_ln_sdiv"](a, b).tolist() == [3, -3, -2**63]
