"""Kernels against the oracle: every op with a kernel in `examples/` and the spec corpus, run
from generated PyTorch with `--numerics equivalent` (the kernel, through Triton, wherever its
`where` holds) and compared with the oracle's value of the op's body.

The kernels run on CUDA tensors, so this runs on a GPU machine only (on the CPU the generated
module runs the body, which the corpus tests already compare):

    python -m pytest tests/oracle/test_oracle_kernels.py -q -p no:cacheprovider

`LINNET_ORACLE_KERNEL_DRAWS` sets the number of size draws per op (default 4).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="kernels run on CUDA")

from corpus_run import FILES, _to_numpy  # noqa: E402

from linnet.fuzz import harness  # noqa: E402
from linnet.fuzz.oracle import OracleUndefined, compare, evaluate_source  # noqa: E402
from linnet.fuzz.oracle.dtypes import dtype_name  # noqa: E402

DRAWS = int(os.environ.get("LINNET_ORACLE_KERNEL_DRAWS", 4))
OPS = [(path, op) for path in FILES for op in harness.kernel_ops(str(path))]


@pytest.mark.parametrize("target", OPS, ids=lambda t: f"{t[0].name}:{t[1]}")
def test_kernel_agrees_with_the_oracle(target):
    path, op = target
    spec = harness.target_spec(str(path), op)
    rng = random.Random(0)
    ran = drawn = 0
    for draw in range(DRAWS):
        values = harness.draw_values(spec, rng, max_dim=200, max_elements=1 << 16)
        if values is None:
            continue
        drawn += 1
        inputs = harness.make_inputs(spec, values, seed=draw, device="cuda")
        try:
            expected = evaluate_source(spec.source, spec.entry, values,
                                       [_to_numpy(x) for x in inputs], path=str(path))
        except OracleUndefined:
            continue
        main, text = harness.compiled(spec, values, "equivalent")
        actual = [_to_numpy(x) for x in main(*inputs)]
        n = max(n for shape, _ in spec.shapes(values) for n in shape)
        for k, (e, a) in enumerate(zip(expected, actual)):
            problem = compare(e, a, dtype_name(e), reduction_length=n)
            assert problem is None, f"{op} at {spec.describe(values)}, result {k}: {problem}"
        ran += "@triton.jit" in text
    if not drawn:
        pytest.skip("no sizes up to 200 (2**16 elements) satisfy the kernel's where clauses")
    assert ran, "no draw ran the kernel"
