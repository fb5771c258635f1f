"""NumPy references for the spec programs of the model layer's values (140-147, 170-173),
of `...` slices and `use` lists (178, 180) and of gathers in index notation (181).

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

    ref("170_static_for_counter", "loss", out="f32", inputs=args(fl((5,))))(
        lambda x: sum(x[i] * np.float32(i + 1) for i in range(5)))

    @ref("170_static_for_counter", "rows", out="f32 i64", inputs=args(fl((3, 4))))
    def _counter_rows(x):
        acc, seen = np.zeros(4, np.float32), np.zeros(3, np.int64)
        for i in (1, 2):
            acc = acc + x[i] * np.float32(i) + x[i - 1, i]
            seen = seen + i * i
        return acc, seen

    def step(x, mode, c):
        n, acc, y = 0, x, x
        if mode == "double" and c:
            n, acc = n + 1, acc * 2.0
            y = acc
        elif mode == "shift" and c:
            n, y = n + 10, x * 0.5
        elif mode == "shift":
            acc = acc + 1.0
        return y + acc, n

    def with_bias(x, b):
        acc, seen, y = x, None, x
        if b is not None:
            if b[0] > 0:
                acc, seen, y = acc + b, b * 3.0, b
            else:
                y = b * 2.0
        elif x[0] > 0:
            acc = acc * 3.0
        return y + acc + (seen if seen is not None else x)

    @ref("171_match_arm_vars", "main", out="f32 i64 f32",
         inputs=args(fl((4,)), bl(()), bl(())))
    def _arm_vars_main(x, c, f):
        a, n = step(x, "double" if f else "shift", c)
        k, m = step(x, "keep", c)
        b = x if c else None
        return (a + k, np.int64(n + m),
                with_bias(x, b) + with_bias(x, None) + with_bias(x, x))

    @ref("171_match_arm_vars", "loss", out="f32", inputs=args(fl((4,)), bl(()), bl(())))
    def _arm_vars_loss(x, c, f):
        a, n = step(x * x, "shift" if f else "double", c)
        return (a * with_bias(x, x if f else None) * np.float32(n + 1)).sum()

    @ref("173_optional_op_params", "main", out="f32",
         inputs=args(fl((3, 4)), fl((4,)), bl(())))
    def _op_optionals_main(x, b, c):
        return (x + b) + x + (x + b if c else x)

    def scaled(x, s=None, shift=None):
        base = x * s if s is not None else x
        return base + shift if shift is not None else base

    @ref("173_optional_op_params", "loss", out="f32",
         inputs=args(fl((4,)), fl((4,)), bl(())))
    def _op_optionals_loss(x, t, c):
        ramp = np.arange(4, dtype=np.float32) * np.float32(0.5)
        shifted = scaled(x, 2.0 if c else None, ramp) + scaled(t, shift=ramp)
        y = scaled(x) + scaled(x, 3.0) + shifted
        return (y * y).sum()

    _register_strided(r)
    _register_use_lists(r)
    _register_gathers(r)


def _register_strided(r: ModuleType) -> None:
    """Spec 178: `...` before a shape pack, and slices clamped to their axis (an even and
    an odd axis, empty results included)."""
    fl, args, ref, dims = r.fl, r.args, r.ref, r.dims

    def halves(x):
        return x[..., 0::2] * 2.0 + x[..., 1::2]

    def rotate(x):
        return np.concatenate([-x[..., 1::2], x[..., 0::2]], axis=-1)

    @ref("178_strided_ellipsis", "even_axis", out="f32 f32",
         inputs=dims((0, 6)).flatmap(lambda d: args(fl((3, 2 * d[0])))))
    def _even_axis(x):
        return halves(x), rotate(x)

    @ref("178_strided_ellipsis", "batched", out="f32 f32", inputs=args(fl((2, 3, 6))))
    def _batched(x):
        return halves(x), rotate(x)

    @ref("178_strided_ellipsis", "odd_axis", out="f32 f32 f32 f32", inputs=args(fl((2, 5))))
    def _odd_axis(x):
        return x[..., 0::2], x[..., 1::2], x[..., 5:9], x[:, 3:9]

    @ref("178_strided_ellipsis", "single", out="f32 f32 f32", inputs=args(fl((4, 1))))
    def _single(x):
        return x[..., 0::2], x[..., 1::2], np.float64(0.0)


def _register_use_lists(r: ModuleType) -> None:
    """Spec 180: halves of the last axis after a pack (an odd axis splits at its floor
    half), through `use` lists."""
    fl, args, ref = r.fl, r.args, r.ref

    def swap(x):
        d = x.shape[-1] // 2
        return np.concatenate([x[..., d:], x[..., :d]], axis=-1)

    ref("180_use_lists", "halves", out="f32 f32 f32", inputs=args(fl((2, 3, 6))))(
        lambda x: (x[..., :3], x[..., 3:], 2 * swap(x)))
    ref("180_use_lists", "odd", out="f32 f32 f32", inputs=args(fl((4, 5))))(
        lambda x: (x[:, :2], x[:, 2:], (x[:, 2:] * 2).sum(axis=1)))
    ref("180_use_lists", "loss", out="f32", inputs=args(fl((2, 6))))(
        lambda x: (swap(x) * x).sum() * 0.5)


def take(table: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Rows ids of table, as a gather in index notation reads them: an id outside the
    table reads zeros."""
    ids = np.asarray(ids).astype(np.int64)
    inside = (ids >= 0) & (ids < table.shape[0])
    rows = table[np.clip(ids, 0, table.shape[0] - 1)]
    return np.where(inside.reshape(inside.shape + (1,) * (rows.ndim - inside.ndim)), rows, 0)


def _register_gathers(r: ModuleType) -> None:
    """Spec 181: gathers in index notation, ids outside their axis included."""
    fl, it, args, ref, dims = r.fl, r.it, r.args, r.ref, r.dims

    @ref("181_gathers", "lookup", out="f32", inputs=dims((1, 3), (1, 3), (1, 6), (1, 4)).flatmap(
        lambda d: args(fl((d[2], d[3])), it((d[0], d[1]), "i32", -1, d[2]))))
    def _lookup(table, ids):
        return take(table, ids)

    @ref("181_gathers", "pick", out="f32", inputs=dims((1, 4), (1, 4), (1, 5)).flatmap(
        lambda d: args(fl((d[1], d[2])), it((d[0],), "i64", -1, d[1]),
                       it((d[0],), "i64", -1, d[2]))))
    def _pick(m, rows, cols):
        inside = (rows >= 0) & (rows < m.shape[0]) & (cols >= 0) & (cols < m.shape[1])
        values = m[np.clip(rows, 0, m.shape[0] - 1), np.clip(cols, 0, m.shape[1] - 1)]
        return np.where(inside, values, 0)

    @ref("181_gathers", "weighted", out="f32 f32", inputs=dims((1, 5), (1, 6)).flatmap(
        lambda d: args(fl((d[1],)), it((d[0],), "i32", -1, d[1]), fl((d[0],)))))
    def _weighted(w, idx, x):
        return (take(w, idx) * x).sum(), (take(w, idx.astype(np.int64) + 1) * x).sum()

    @ref("181_gathers", "packed", out="f32 f32", inputs=dims((1, 3), (1, 3), (1, 6), (1, 4)).flatmap(
        lambda d: args(fl((d[2], d[3])), it((d[0], d[1]), "u8", 0, d[2] + 1),
                       it((d[2],), "i16", -1, d[2]))))
    def _packed(table, ids, order):
        return take(table, ids), take(table, take(order, ids))

    @ref("181_gathers", "embedding_loss", out="f32", inputs=dims((1, 4), (1, 6), (1, 4)).flatmap(
        lambda d: args(fl((d[1], d[2])), it((d[0],), "i64", -1, d[1]), fl((d[0], d[2])))))
    def _embedding_loss(table, ids, target):
        return ((take(table, ids) - target) ** 2).sum()

    @ref("181_gathers", "embed_rows_of", out="f32", inputs=dims((1, 4), (1, 6)).flatmap(
        lambda d: args(fl((d[1], 48)), it((d[0],), "i32", -1, d[1]))))
    def _embed_rows_of(table, ids):
        return take(table, ids)
