"""No backend materialises a range it only counts through.

- Generated PyTorch and the interpreter loop over a Python `range`, making the index tensor
  each trip where the body reads it (`torch.arange(0, N)` held all N indices first: 8 GB
  for 10**9 trips).
- Generated JAX scans `length` trips, counting the index in the carry (a scan over
  `jnp.arange(lo, hi)` is an array of every index).
- The ONNX export writes a constant of many equal elements (the vector of ones of an exact
  integer sum) as a scalar initializer and an `Expand`, not as every element.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from linnet.pipeline import compile_source
from linnet.torch import load_function

LOOPS = """module loops

// the sum of the indices 3 .. 3 + N - 1, a loop that never reads its index, and a scan
entry main<N: Dim>(x: Tensor[2; i64], trips: Tensor[N; bool]) -> (Tensor[2; i64], Tensor[2; i64], Tensor[N; i64]) {
    var acc = x
    var twice = x
    for t in 3..3 + N {
        acc = acc + t
    }
    for t in 0..N {
        twice = twice + 2
    }
    let squares = for t in 0..N {
        yield t * t
    }
    return (acc, twice, squares)
}
"""


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("LINNET_CACHE", str(tmp_path_factory.getbasetemp() / "linnet-cache"))


@pytest.fixture
def loops(tmp_path):
    path = tmp_path / "loops.linnet"
    path.write_text(LOOPS)
    return str(path)


def _expected(n: int, x: torch.Tensor) -> tuple:
    return (x + sum(range(3, 3 + n)), x + 2 * n, torch.arange(n, dtype=torch.int64) ** 2)


@pytest.mark.parametrize("compile", [True, False], ids=["generated", "interpreter"])
def test_torch_loops_hold_no_range_of_their_trips(compile, loops, monkeypatch):
    """Every `torch.arange` made while the loops run is recorded: none is as long as the
    trips (a 0-d index made per trip is fine), and the results are right."""
    n = 300
    fn = load_function(loops, "main", compile=compile)
    x = torch.tensor([1, -5], dtype=torch.int64)
    trips = torch.zeros(n, dtype=torch.bool)
    fn(x, trips)  # compiled and cached: what is recorded below is the run alone
    sizes = []
    real = torch.arange

    def arange(*args, **kwargs):
        out = real(*args, **kwargs)
        sizes.append(out.numel())
        return out

    monkeypatch.setattr(torch, "arange", arange)
    got = fn(x, trips)
    assert all(size < n for size in sizes), sizes
    for g, w in zip(got, _expected(n, x)):
        assert torch.equal(g, w)


def test_generated_torch_reads_the_index_only_where_the_body_does(loops):
    text = compile_source(LOOPS, path=loops, target="torch", bind={"N": 5}).text
    assert "torch.arange(3, 8" not in text and "for v" in text and "in range(3, 8):" in text
    assert text.count("torch.full((), ") == 2  # the summing loop and the scan, not `twice`


def test_generated_jax_scans_without_an_array_of_indices(loops):
    """Lowered for 10**9 trips (nothing runs), the program holds no i64 array of that
    length: the scan's stacked yields are bools here, so any such array is an index range."""
    jax = pytest.importorskip("jax")
    from linnet.torch.runtime import import_generated
    n = 10**9
    bools = (LOOPS.replace("yield t * t", "yield t < 5")
             .replace("Tensor[2; i64], Tensor[N; i64])", "Tensor[2; i64], Tensor[N; bool])"))
    module = import_generated(compile_source(bools, path=loops, target="jax",
                                             bind={"N": n}).text, "loops_jax", "jax")
    args = (jax.ShapeDtypeStruct((2,), np.int64), jax.ShapeDtypeStruct((n,), np.bool_))
    lowered = jax.jit(module.f0_entry).lower(*args).as_text()
    assert f"tensor<{n}xi1>" in lowered and f"tensor<{n}xi64>" not in lowered
    small = import_generated(compile_source(LOOPS, path=loops, target="jax",
                                            bind={"N": 7}).text, "loops_jax_7", "jax")
    got = small.main(np.array([1, -5], np.int64), np.zeros(7, np.bool_))
    for g, w in zip(got, _expected(7, torch.tensor([1, -5]))):
        np.testing.assert_array_equal(np.asarray(g), w.numpy())


def test_onnx_writes_large_constants_as_a_scalar_and_expand():
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    n = 10**6
    source = f"module big\nentry total(k: Tensor[{n}; i32]) -> i32 {{\n    return sum[i] k[i]\n}}\n"
    model = compile_source(source, path="big.linnet", target="onnx").text
    assert model.ByteSize() < 10_000  # every element of the ones would be 4 MB
    assert all(np.prod(list(t.dims)) <= 8 for t in model.graph.initializer)
    assert "Expand" in [node.op_type for node in model.graph.node]
    k = np.arange(n, dtype=np.int64).astype(np.int32) * 4099  # the sum wraps at 32 bits
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    (got,) = session.run(None, {"k": k})
    want = np.int64(sum(int(v) for v in k)) % 2**32
    assert int(got) % 2**32 == int(want) and onnx is not None
