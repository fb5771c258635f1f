"""`conv2d_rect`, `zero_pad_rect` and `zero_pad1d` of `std.nn.conv` on every target against
`F.conv2d` with tuple arguments and `F.pad` (windows, strides and paddings that differ
between the axes), and the block `Conv2dRect` loaded by PyTorch's parameter names against
`nn.Conv2d`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from linnet.fuzz.backends import run_entry
from tests.std.inputs import TARGETS, normals, target_runtimes

torch = target_runtimes()
F = torch.nn.functional

import linnet.torch as lt  # noqa: E402

HERE = Path(__file__).resolve().parent
normal = normals(13)


@pytest.mark.parametrize("target", TARGETS)
def test_per_axis_windows_strides_and_padding(target: str) -> None:
    x, w, w2, b, x1 = normal(2, 3, 7, 6), normal(4, 3, 3, 2), normal(4, 3, 1, 3), normal(4), normal(2, 3, 5)
    tx, tw, tw2, tb, tx1 = map(torch.from_numpy, (x, w, w2, b, x1))
    expected = [F.conv2d(tx, tw, tb, stride=(2, 1), padding=(1, 0)),
                F.conv2d(tx, tw2, stride=(1, 2), padding=(0, 1)),
                F.pad(tx, (2, 2, 1, 1)), F.pad(tx1, (3, 3))]
    got = run_entry(HERE / "conv_rect_uses.linnet", "main", target, [x, w, w2, b, x1])
    for k, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g.shape == e.shape, f"result {k}"
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-5, atol=5e-6, err_msg=f"result {k}")


def test_the_block_loads_nn_conv2d_weights() -> None:
    layer = torch.nn.Conv2d(3, 4, (3, 2), stride=(2, 1), padding=(1, 0))
    model = lt.load(str(HERE / "conv_rect_block.linnet"), generics={"Cin": 3, "Cout": 4},
                    weights={f"conv.{k}": v for k, v in layer.state_dict().items()},
                    compile=False)
    x = torch.from_numpy(normal(2, 3, 7, 6))
    np.testing.assert_allclose(model.forward(x).detach().numpy(), layer(x).detach().numpy(),
                               rtol=1e-5, atol=5e-6)
