"""The gpt example's embedding (`examples/gpt/gpt.linnet`, `Gpt.embedded`) alone: its `i64`
tokens narrowed to the library's `i32` ids, a token outside the table becoming -1 first,
then `std.nn.embedding`'s `embedding_2d`, whose kernel gathers table rows at the ids it
loaded and whose grad clause adds rows of dy into the ids' first positions with
`atomic_add` and writes the table's gradient from them. The ids
cover both ends of the table, repeat (so the scatter-add adds several rows into one) and fall
outside it (a zero row, nothing added; 2**32 + 3 would wrap to 3 if it were narrowed to i32
before its range check). Each run is checked against NumPy's gather and `np.add.at`, kernel
and body: through Triton (its interpreter on the CPU, `tests/conftest.py`) and through
Pallas (`linnet.jax`, its interpreter under `LINNET_PALLAS_INTERPRET=1`). The library's own
tests (`tests/std/test_elem_kernels.py`, `linnet verify linnet/std/nn/embedding.linnet`)
hold `embedding_2d` to `F.embedding`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from linnet.fuzz.backends import as_numpy

from kernel_cases import DEVICE, EXAMPLES

GPT = EXAMPLES / "gpt" / "gpt.linnet"
V, H = 11, 40  # 40 columns: one ragged column tile of 64
TOKENS = np.array([0, V - 1, 3, 3, 3, V - 1, 7, -1, V, 2**32 + 3, 0, 5], dtype=np.int64)
# the forward op and the three ops of its grad clause, each with a kernel
EMBEDDING_KERNELS = ("embedding_2d", "embedding_first_positions", "embedding_sums",
                     "embedding_backward")
# gpt.linnet's narrowing of its tokens, in an entry of its own
NARROWED = "let ids[n] = cast<i32>(select(flat[n] >= 0 && flat[n] < V, flat[n], -1))"
PROGRAM = f"""module gpt_embedding
use std.nn.embedding::{{embedding_2d}}

entry embed<N: Dim>(tokens: Tensor[N; i64], table: Tensor[{V}, {H}; f32]) -> Tensor[N, {H}; f32] {{
    let flat = tokens
    {NARROWED.replace("< V", f"< {V}")}
    return embedding_2d(ids, table)
}}
"""


def gathered(tokens: np.ndarray, table: np.ndarray) -> np.ndarray:
    """table[id] for each id in 0 .. V - 1, a row of zeros for any other."""
    inside = (tokens >= 0) & (tokens < len(table))
    return np.where(inside[:, None], table[np.where(inside, tokens, 0)], 0.0)


def scattered(tokens: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """The rows of dy added into their ids' rows (ids outside 0 .. V - 1 add nothing)."""
    out = np.zeros((V, dy.shape[1]))
    inside = (tokens >= 0) & (tokens < V)
    np.add.at(out, tokens[inside], dy[inside])
    return out


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    """The embedding of gpt.linnet as an entry at V = 11, H = 40."""
    assert NARROWED in GPT.read_text()  # the narrowing tested here is the example's
    path = tmp_path_factory.mktemp("embedding") / "gpt_embedding.linnet"
    path.write_text(PROGRAM)
    return path


def table_and_dy(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((V, H)).astype(np.float32),
            rng.standard_normal((len(TOKENS), H)).astype(np.float32))


def by_op(ran: dict) -> dict[str, dict[str, int]]:
    return {instance.split("__")[0]: counts for instance, counts in ran.items()}


@pytest.mark.parametrize("numerics", ["exact", "equivalent"])
def test_triton_gathers_the_rows_and_scatters_the_gradient(program: Path,
                                                           numerics: str) -> None:
    """Forward (a gather) and autograd's gradient of the table (the grad clause: a
    scatter-add) against NumPy; with kernels, both ran (none is listed under exact)."""
    from linnet.torch import load_function
    table, dy = table_and_dy()
    embed = load_function(str(program), "embed", numerics=numerics)
    weights = torch.tensor(table, device=DEVICE, requires_grad=True)
    out = embed(torch.tensor(TOKENS, device=DEVICE), weights)
    np.testing.assert_array_equal(as_numpy(out.detach()), gathered(TOKENS, table))
    out.backward(torch.tensor(dy, device=DEVICE))
    np.testing.assert_allclose(as_numpy(weights.grad), scattered(TOKENS, dy), rtol=1e-6,
                               atol=1e-6)
    assert not as_numpy(weights.grad)[[1, 2, 4, 6, 8, 9]].any()  # ids no token has
    ran = by_op(embed.ran())
    if numerics == "exact":
        assert ran == {}
    else:
        assert ran == {op: {"kernel": 1, "body": 0} for op in EMBEDDING_KERNELS}


def test_pallas_gathers_the_rows_and_scatters_the_gradient(program: Path,
                                                           monkeypatch) -> None:
    """The same through `linnet.jax`: the kernels in Pallas (its interpreter on the CPU),
    `jax.vjp` through the op's custom_vjp (the grad clause, whose op runs its kernel)."""
    jax = pytest.importorskip("jax")
    assert not jax.config.jax_enable_x64
    if jax.default_backend() != "gpu":
        monkeypatch.setenv("LINNET_PALLAS_INTERPRET", "1")
    from linnet.jax import load_function
    table, dy = table_and_dy(4)
    results = {}
    for numerics in ("exact", "equivalent"):
        embed = load_function(str(program), "embed", numerics=numerics)
        # x64 off here: the backward enters it for its i64 ids (2**32 + 3 stays outside)
        out, vjp = jax.vjp(lambda t: embed(TOKENS, t), table)
        results[numerics] = (np.asarray(out), np.asarray(vjp(dy)[0]))
        ran = by_op(embed.ran())  # counts of traces: both ops traced, each its kernel
        if numerics == "equivalent":
            assert set(ran) == set(EMBEDDING_KERNELS)
            assert all(c["kernel"] >= 1 and c["body"] == 0 for c in ran.values())
        else:
            assert ran == {}
    for out, grad in results.values():
        np.testing.assert_array_equal(out, gathered(TOKENS, table))
        np.testing.assert_allclose(grad, scattered(TOKENS, dy), rtol=1e-6, atol=1e-6)
