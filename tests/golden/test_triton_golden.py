"""Golden tests: the generated module (Triton kernels included) of every example's `main`.

A change to the kernel path shows up here as a diff to review. To accept the new
text after reviewing it, run `LINNET_UPDATE_GOLDEN=1 pytest tests/golden`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from linnet.pipeline import compile_source

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.linnet"))
GOLDEN = Path(__file__).with_name("triton")


def kernel_text(path: Path, numerics: str = "equivalent") -> str:
    """The whole generated module: kernels, launchers, chooser and bodies, with the op
    headers' tiles (a tuning file committed beside the examples changes none of it)."""
    return compile_source(path.read_text(), path=str(path), entry="main",
                          numerics=numerics, tuning=False).text


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_generated_triton_matches_golden(path: Path) -> None:
    text = kernel_text(path)
    golden = GOLDEN / f"{path.stem}.py.txt"
    if os.environ.get("LINNET_UPDATE_GOLDEN") == "1" or not golden.exists():
        GOLDEN.mkdir(exist_ok=True)
        golden.write_text(text)
    assert text == golden.read_text(), f"generated Triton for {path.name} changed"


def test_matmul_uses_ieee_dot_and_fast_uses_tf32() -> None:
    path = ROOT / "examples" / "matmul.linnet"
    assert 'input_precision="ieee"' in kernel_text(path, "equivalent")
    assert 'input_precision="tf32"' in kernel_text(path, "fast")


def test_exact_numerics_has_no_triton() -> None:
    path = ROOT / "examples" / "softmax.linnet"
    source = compile_source(path.read_text(), path=str(path), entry="main",
                            numerics="exact").text
    assert "triton" not in source
