"""Flattening a block entry (flatten_blocks.py) when the block comes from a module whose
`use` lists names: the list then names the functions made from the block, which the
flattened callers call, and still leaves out what it left out."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from linnet.pipeline import compile_source
from linnet.torch.runtime import import_generated

LEAF = """module lib.leaf

fn doubled<H: Dim>(x: Tensor[H; f32]) -> Tensor[H; f32] {
    return x + x
}

pub fn shift(x: f32) -> f32 {
    return x + 100.0
}

pub block Leaf<H: Dim> {
    param w: Tensor[H; f32]

    pub fn apply(x: Tensor[H; f32]) -> Tensor[H; f32] {
        return doubled(x) * w
    }
}
"""

ROOT = """module root
use lib.leaf{uses}

fn shift(x: f32) -> f32 {{
    return x + 1.0
}}

pub block Model<H: Dim> {{
    sub leaves: [Leaf<H>; 2]

    pub entry run(x: Tensor[H; f32]) -> Tensor[H; f32] {{
        var y = x
        static for leaf in leaves {{
            y = leaf.apply(y)
        }}
        return y * shift(1.0)
    }}
}}
"""


def _torch(tmp_path: Path, uses: str) -> str:
    (tmp_path / "lib").mkdir(exist_ok=True)
    (tmp_path / "lib" / "leaf.linnet").write_text(LEAF)
    root = tmp_path / "root.linnet"
    root.write_text(ROOT.format(uses=uses))
    return compile_source(None, path=str(root), entry="run", bind={"H": 3},
                          target="torch").text


def test_a_listed_block_flattens_and_runs(tmp_path):
    text = _torch(tmp_path, "::{Leaf}")
    main = import_generated(text, "generated_listed_block", "torch").main
    x = torch.tensor([1.0, -2.0, 0.5])
    w0, w1 = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.25, -1.0])
    (y,) = main(x, w0, w1)
    # the local `shift` (1 + 1 = 2) is in force, not the unlisted library one (101)
    np.testing.assert_allclose(y.numpy(), (2 * (2 * x * w0) * w1 * 2.0).numpy())


def test_the_local_shift_shadows_nothing_without_a_list(tmp_path):
    """Without a list the own item wins, as before: the same generated module."""
    assert _torch(tmp_path, "::{Leaf}") == _torch(tmp_path, "")
