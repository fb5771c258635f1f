"""NumPy references for the spec programs of the model layer's values (140-147).

`references.py` calls `register` with itself at its end, so these entries join its
registry and use its strategies. An entry's struct parameter is passed as its fields, one
input each; a struct result comes back as the tuple of its fields.
"""

from __future__ import annotations

from types import ModuleType

import numpy as np


def register(r: ModuleType) -> None:
    fl, bl, args, ref = r.fl, r.bl, r.args, r.ref

    def rows(g):
        return g + np.float32(1.0 + np.float32(1e-5)) * g[0]

    ref("140_consts_and_aliases", "rows", out="f32", inputs=args(fl((3, 4))))(rows)
    ref("140_consts_and_aliases", "loss", out="f32", inputs=args(fl((3, 4))))(
        lambda g: (rows(g) ** 2).sum())

    def kv_entry(k, v, scale):
        return v * scale, k + v.sum()

    ref("141_structs", "kv_entry", out="f32 f32", inputs=args(fl((2, 3)), fl((2, 3)), fl(())))(
        kv_entry)

    @ref("141_structs", "loss", out="f32", inputs=args(fl((2, 3)), fl((2, 3))))
    def _structs_loss(k, v):
        tk, tv = kv_entry(k, v, 3.0)
        return (tk * tv).sum()

    def pooled(x):
        return x[0] + x.max(axis=0) + x.sum(axis=0) / 4.0

    ref("142_enums_match", "pooled", out="f32", inputs=args(fl((4, 8))))(pooled)
    ref("142_enums_match", "loss", out="f32", inputs=args(fl((4, 8))))(
        lambda x: (pooled(x) ** 2).sum())

    @ref("143_optionals", "optional_entry", out="f32",
         inputs=args(fl((2, 4)), fl((3, 4)), fl((3,)), bl(())))
    def _optional_entry(x, w, b, flip):
        y = x @ w.T
        return y + (y + 2 * b) + (y + b if flip else y)

    @ref("143_optionals", "loss", out="f32", inputs=args(fl((2, 4)), fl((3, 4)), fl((3,))))
    def _optionals_loss(x, w, b):
        y = x @ w.T
        return ((y + b) * y).sum()

    def norm(x, eps=1e-5, scale=1.0):
        return x / np.sqrt((x * x).sum() / 4.0 + eps) * scale

    ref("144_defaults_named_args", "normed", out="f32", inputs=args(fl((4,))))(
        lambda x: norm(x) + norm(x, 1e-6) + norm(x, scale=2.0) + norm(x, 1e-3, 0.5))
    ref("144_defaults_named_args", "loss", out="f32", inputs=args(fl((4,))))(
        lambda x: (norm(x, scale=3.0) * x).sum())

    def last_axis(x):
        return x[..., 0] + x[..., 3] + x[1, :, 0:1][..., 0] - x[..., 1, 1:3][0, 0]

    ref("145_ellipsis", "last_axis", out="f32", inputs=args(fl((2, 3, 4))))(last_axis)
    ref("145_ellipsis", "loss", out="f32", inputs=args(fl((2, 3, 4))))(
        lambda x: (last_axis(x) ** 2).sum())

    def optional_vars(a, c):
        o, total = None, a
        for _ in range(3):
            total = total + (o if o is not None else a * 10.0)
            o = total
        p = None if c else a
        return total + (p * (1.0 if c else 2.0) if p is not None else a * 100.0)

    ref("146_optional_vars", "main", out="f32", inputs=args(fl((3,)), bl(())))(optional_vars)
    ref("146_optional_vars", "loss", out="f32", inputs=args(fl((3,))))(
        lambda a: ((optional_vars(a, True) + optional_vars(a, False)) ** 2).sum())

    def struct_vars(x, flip):
        h, c, a, b = x, x * 2.0, x, x * 3.0
        for _ in range(3):
            h, c = np.tanh(c + x), c * 0.5 + h
            a, b = b, a + h
        if flip:
            h, c = c, h
        return h * 2.0 + c + a * b

    ref("147_struct_vars", "main", out="f32", inputs=args(fl((3,)), bl(())))(struct_vars)
    ref("147_struct_vars", "loss", out="f32", inputs=args(fl((3,))))(
        lambda x: ((struct_vars(x, True) + struct_vars(x, False)) ** 2).sum())
