"""lower-kernel-scans: a scan in a kernel becomes a loop carrying its stacks."""

from __future__ import annotations

import pytest
import torch

from linnet.ir import tensor as ir  # noqa: E402
from linnet.ir.walk import all_binds  # noqa: E402
from linnet.passes.kernels.lower_kernel_scans import lower_kernel_scans  # noqa: E402
from linnet.pipeline import compile_source  # noqa: E402
from linnet.torch.runtime import import_generated  # noqa: E402

from tests.language.test_scan_tuples import KERNEL, three_stacks


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


def test_kernel_scans_become_loops_carrying_their_stacks() -> None:
    out = compile_source(KERNEL, target="torch", bind={"R": 4})
    before = out.stage("lower-kernel-einsums")  # the last pass: kernel scans lowered
    kernel = next(f for f in before.funcs if f.kind == "kernel")
    loops = [b.expr for b in all_binds(kernel.body) if isinstance(b.expr, ir.Loop)]
    assert loops and all(not loop.yields for loop in loops)
    assert "@triton.jit" in out.text
    main = import_generated(out.text, "kernel_scan").main
    x = torch.arange(32, dtype=torch.float32).reshape(4, 8)
    ys, ts = main(x)
    assert ys.tolist() == (x * 2.0).tolist() and ts.tolist() == [0, 1, 2, 3]


def test_lower_kernel_scans_leaves_op_bodies_alone() -> None:
    program = three_stacks(3)
    assert lower_kernel_scans(program) == program
