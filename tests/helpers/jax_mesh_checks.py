"""Checks of `linnet.jax` over a device mesh, run in a process of their own.

`tests/jax/test_mesh.py` starts this file with the devices it wants: on the CPU,
`XLA_FLAGS=--xla_force_host_platform_device_count=4` (which JAX reads once, at import, so
the rest of the suite's JAX keeps its single device) and Pallas's interpreter; on a GPU
machine, its GPUs as they are and Pallas through Triton. Each check runs on a mesh of every
device; the output's last line is `RESULTS {json}`, each check's name mapped to "ok" or its
traceback.
"""

from __future__ import annotations

import json
import sys
import traceback

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from linnet.jax import load_function, load_source

SOFTMAX = "examples/softmax.linnet"
LAYER_NORM = "examples/layer_norm.linnet"
GPT = "examples/gpt/gpt.linnet"  # a block model whose ops come from std.nn
#: The ops of gpt's loss that a mesh can split by rows: the library's ops it names.
GPT_OPS = {"rms_norm_2d": "data", "attention_causal": "data", "embedding_2d": "data"}
#: The ops whose kernels run per shard: those named, but for attention_causal, which has no
#: kernel, attention_causal_lse, which its body calls.
GPT_SPLIT = {"rms_norm_2d", "attention_causal_lse", "embedding_2d"}
#: The ops whose kernels run whole (XLA gathers their inputs): the linear layers' op and the
#: loss's row ops, which the library calls inside linear_2d and linear_token_log_probs (no
#: op of the program to name), and the backward ops, whose results sum over the rows (no
#: batch axis to split).
GPT_WHOLE = {"linear_product_2d", "rms_norm_backward", "linear_input_grad",
             "linear_weight_grad", "attention_delta", "attention_dq", "attention_dkv",
             "embedding_first_positions", "embedding_sums", "embedding_backward",
             "linear_token_log_probs_stats",
             "linear_token_log_probs_dlogits"}
N = len(jax.devices())
R, C = 8, 16  # 8 rows divide over 2 and 4 devices

#: Ops of a kernel each: `pair` gives a tuple (rows doubled, row sums); `big`'s kernel
#: applies only for 8 rows or more, so per shard of 8 rows its `where` fails and its body
#: runs; `tall` itself takes 8 rows or more, so it has no per-shard instance at all;
#: `row_sums` has no kernel, and runs `pair`'s through its body.
PAIRS = """module mesh_checks

pub kernel twice_rows<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> (y: Tensor[R, C; f32], s: Tensor[R; f32]) grid(R)
where B >= C {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    let v = load(x[row, cols], mask, 0.0)
    store(y[row, cols], v * 2.0, mask)
    store(s[row], sum[c] v[c])
}

pub op pair<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> (Tensor[R, C; f32], Tensor[R; f32]) kernel twice_rows<R, C, 64> {
    let y[r, c] = x[r, c] * 2.0
    let s[r] = sum[c] x[r, c]
    return (y, s)
}

pub kernel big_rows<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R)
where B >= C, R >= 8 {
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    store(y[row, cols], load(x[row, cols], mask, 0.0) + 1.0, mask)
}

pub op big<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel big_rows<R, C, 64> {
    let y[r, c] = x[r, c] + 1.0
    return y
}

pub op tall<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel big_rows<R, C, 64>
where R >= 8 {
    let y[r, c] = x[r, c] + 1.0
    return y
}

pub op row_sums<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] {
    let (y, s) = pair(x)
    return s
}

entry pairs<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> (Tensor[R, C; f32], Tensor[R; f32]) {
    return pair(x)
}

entry sums<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R; f32] {
    return row_sums(x)
}

entry bigs<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] {
    return big(x)
}

entry talls<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] where R >= 8 {
    return tall(x)
}
"""


def mesh_1d() -> Mesh:
    return Mesh(np.array(jax.devices()), ("data",))


def rows(mesh: Mesh, n_rows: int = R, seed: int = 0, cols: int = C) -> jax.Array:
    """An [n_rows, cols] f32 array split by rows over the mesh's "data" axis."""
    x = np.random.default_rng(seed).standard_normal((n_rows, cols)).astype(np.float32)
    return jax.device_put(x, NamedSharding(mesh, P("data")))


def close(a, b, tol: float = 1e-5) -> None:
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def split_by_rows(y: jax.Array, mesh: Mesh) -> None:
    want = NamedSharding(mesh, P("data"))
    assert y.sharding.is_equivalent_to(want, y.ndim), (y.sharding, want)


def ran_during(fn, *inputs) -> tuple:
    """`fn(*inputs)`, and what it added to `fn.ran()`. Modules are shared by their text,
    and so are their counts: the binding is compiled and imported first, so that the
    counts before the call are those of the modules it runs."""
    fn._run_for(inputs)
    before = fn.ran()
    result = fn(*inputs)
    after = fn.ran()
    zero = {"kernel": 0, "body": 0}
    added = {op: {k: n - before.get(op, zero)[k] for k, n in counts.items()}
             for op, counts in after.items()}
    return result, {op: counts for op, counts in added.items() if any(counts.values())}


def check_softmax_matches_and_stays_split() -> None:
    mesh = mesh_1d()
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    plain = load_function(SOFTMAX, "softmax_any")
    x = rows(mesh)
    y = fn(x)
    close(y, plain(np.asarray(x)))
    split_by_rows(y, mesh)
    mine = jax.jit(lambda x: fn(x) * 2.0)(x)  # inside the caller's own jit
    close(mine, 2.0 * plain(np.asarray(x)))
    split_by_rows(mine, mesh)


def check_softmax_kernel_runs_per_shard() -> None:
    mesh = mesh_1d()
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    # columns of its own: a binding traced by another check would count nothing here
    _, ran = ran_during(fn, rows(mesh, cols=24))
    assert ran == {f"softmax__R{R}_C24": {"kernel": 1, "body": 0}}, ran
    assert fn.sharded() == {f"softmax__R{R}_C24": f"softmax__R{R // N}_C24"}, fn.sharded()
    jaxpr = str(jax.make_jaxpr(fn)(rows(mesh)))
    assert "shard_map" in jaxpr and "pallas_call" in jaxpr, jaxpr


def check_the_generated_module_holds_the_shard_map() -> None:
    mesh = mesh_1d()
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    text = fn.source(R=R, C=C)
    assert '_ln_per_shard = {"f1_op": None}' in text, text
    assert "if _ln_mesh is not None:" in text
    assert """_ln_shard_map(_ln_per_shard["f1_op"], (_P('data'),), _P('data'))(v0)""" in text
    fn(rows(mesh))
    (module, _names, _base), = fn._modules
    assert module._ln_mesh is mesh
    launch = module._ln_per_shard["f1_op"]  # the kernel of the per-shard instance's module
    assert launch.__name__ == "f1_op_launch" and launch.__module__ != module.__name__


def check_softmax_gradient() -> None:
    mesh = mesh_1d()
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    plain = load_function(SOFTMAX, "softmax_any")
    x = rows(mesh)
    weights = np.arange(R * C, dtype=np.float32).reshape(R, C) / (R * C)
    g = jax.jit(jax.grad(lambda x: (fn(x) * weights).sum()))(x)
    close(g, jax.grad(lambda x: (plain(x) * weights).sum())(np.asarray(x)))
    split_by_rows(g, mesh)


def check_layer_norm_forward_and_gradients() -> None:
    mesh = mesh_1d()
    fn = load_function(LAYER_NORM, "layer_norm_any", mesh=mesh, shard={"layer_norm": "data"})
    plain = load_function(LAYER_NORM, "layer_norm_any")
    x = rows(mesh, seed=1)
    rng = np.random.default_rng(2)
    w, b = (rng.standard_normal(C).astype(np.float32) for _ in range(2))
    y, ran = ran_during(fn, x, w, b)
    close(y, plain(np.asarray(x), w, b))
    assert ran == {f"layer_norm__R{R}_C{C}": {"kernel": 1, "body": 0}}, ran
    assert fn.sharded() == {f"layer_norm__R{R}_C{C}": f"layer_norm__R{R // N}_C{C}"}
    split_by_rows(fn(x, w, b), mesh)

    def loss(f):
        return lambda x, w, b: (f(x, w, b) ** 2 * jnp.arange(C, dtype=jnp.float32)).sum()
    got = jax.grad(loss(fn), argnums=(0, 1, 2))(x, w, b)
    want = jax.grad(loss(plain), argnums=(0, 1, 2))(np.asarray(x), w, b)
    for g, h in zip(got, want):
        close(g, h, 1e-4)


def check_body_where_batch_does_not_divide() -> None:
    mesh = mesh_1d()
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    x = np.random.default_rng(3).standard_normal((N + 1, C)).astype(np.float32)
    y, ran = ran_during(fn, x)
    close(y, jax.nn.softmax(x, axis=1))
    assert ran == {f"softmax__R{N + 1}_C{C}": {"kernel": 0, "body": 1}}, ran
    assert fn.sharded() == {f"softmax__R{N + 1}_C{C}": None}


def check_body_where_the_where_fails_per_shard() -> None:
    mesh = mesh_1d()
    fn = load_source(PAIRS, "bigs", mesh=mesh, shard={"big": "data"})
    x = rows(mesh)
    y, ran = ran_during(fn, x)
    close(y, np.asarray(x) + 1.0)
    # R=8 passes `R >= 8`, R/N rows per shard do not: the body runs, whole
    assert ran == {f"big__R{R}_C{C}": {"kernel": 0, "body": 1}}, ran
    assert fn.sharded() == {f"big__R{R}_C{C}": None}
    split_by_rows(fn(x), mesh)
    unsharded = load_source(PAIRS, "bigs")
    y, ran = ran_during(unsharded, np.asarray(x))
    close(y, np.asarray(x) + 1.0)
    assert ran == {f"big__R{R}_C{C}": {"kernel": 1, "body": 0}}, ran


def check_body_where_the_op_takes_no_per_shard_rows() -> None:
    mesh = mesh_1d()
    fn = load_source(PAIRS, "talls", mesh=mesh, shard={"tall": "data"})
    x = rows(mesh)
    y, ran = ran_during(fn, x)
    close(y, np.asarray(x) + 1.0)
    # the op's own `where R >= 8` holds for 8 rows, not for R/N: no per-shard instance
    assert ran == {f"tall__R{R}_C{C}": {"kernel": 0, "body": 1}}, ran
    assert fn.sharded() == {f"tall__R{R}_C{C}": None}


def pair_per_shard(entry: str, named: str) -> tuple:
    """PAIRS's `entry` over the mesh with `named` sharded, run on split rows; `pair`'s
    kernel must have run once, per shard. Its result, the rows and the mesh."""
    mesh = mesh_1d()
    fn = load_source(PAIRS, entry, mesh=mesh, shard={named: "data"})
    x = rows(mesh)
    result, ran = ran_during(fn, x)
    assert ran == {f"pair__R{R}_C{C}": {"kernel": 1, "body": 0}}, ran
    assert fn.sharded() == {f"pair__R{R}_C{C}": f"pair__R{R // N}_C{C}"}
    return result, np.asarray(x), mesh


def check_tuple_results_split() -> None:
    (y, s), x, mesh = pair_per_shard("pairs", "pair")
    close(y, 2.0 * x)
    close(s, x.sum(axis=1))
    split_by_rows(y, mesh)
    split_by_rows(s, mesh)


def check_op_without_a_kernel_splits_the_ops_it_calls() -> None:
    # row_sums has no kernel of its own: pair's, which its body calls, runs per shard
    s, x, mesh = pair_per_shard("sums", "row_sums")
    close(s, x.sum(axis=1))
    split_by_rows(s, mesh)


def check_one_axis_of_a_2d_mesh() -> None:
    if N % 2:
        return
    mesh = Mesh(np.array(jax.devices()).reshape(2, N // 2), ("data", "model"))
    fn = load_function(SOFTMAX, "softmax_any", mesh=mesh, shard={"softmax": "data"})
    x = rows(mesh)
    _, ran = ran_during(fn, x)
    assert ran == {f"softmax__R{R}_C{C}": {"kernel": 1, "body": 0}}, ran
    assert fn.sharded() == {f"softmax__R{R}_C{C}": f"softmax__R{R // 2}_C{C}"}
    y = fn(x)
    close(y, jax.nn.softmax(np.asarray(x), axis=1))
    split_by_rows(y, mesh)
    both = load_function(SOFTMAX, "softmax_any", mesh=mesh,
                         shard={"softmax": ("data", "model")})
    z, ran = ran_during(both, x)
    close(z, y)
    assert ran == {f"softmax__R{R}_C{C}": {"kernel": 1, "body": 0}}, ran
    assert both.sharded() == {f"softmax__R{R}_C{C}": f"softmax__R{R // N}_C{C}"}


def gpt_case(batch: int, length: int, mesh: Mesh | None = None) -> tuple:
    """The gpt model of one layer over `batch` sequences, random params, and a batch of
    tokens and targets (i64). Over the mesh, the ops of GPT_OPS sharded and every op's
    kernel running; without one, the reference: op bodies only (`numerics="exact"`: no
    kernel to compile and run in Pallas's interpreter; the kernels' agreement with the
    bodies is proved by the std tests)."""
    sizes = {"B": batch, "L": 1, "NH": 2, "D": 16, "V": 32, "S": max(8, length)}
    kernels = {"numerics": "exact"} if mesh is None else {"mesh": mesh, "shard": GPT_OPS}
    model = load_source(GPT, generics=sizes, **kernels)
    rng = np.random.default_rng(5)
    params = {k: jnp.asarray(0.3 * rng.standard_normal(v.shape).astype(np.float32))
              for k, v in model.parameters.items()}
    tokens, targets = rng.integers(0, sizes["V"], (2, batch, length))
    return model, params, tokens, targets


def loss_and_grads(model, params, tokens, targets, jit: bool = False) -> tuple:
    def loss(p, t, y):
        return model.loss(p, model.initial_state(), t, y)[0]
    step = jax.value_and_grad(loss)
    with jax.enable_x64(True):  # the tokens are i64, as the entry declares
        return (jax.jit(step) if jit else step)(params, tokens, targets)


def check_block_model_kernels_per_shard_and_gradients() -> None:
    mesh = mesh_1d()
    model, params, tokens, targets = gpt_case(N, 4, mesh)
    plain = gpt_case(N, 4)[0]
    with jax.enable_x64(True):
        split = [jax.device_put(a, NamedSharding(mesh, P("data"))) for a in (tokens, targets)]
    loss, grads = loss_and_grads(model, params, *split, jit=True)
    want, want_grads = loss_and_grads(plain, params, tokens, targets)
    close(loss, want, 1e-5)
    assert set(grads) == set(want_grads)
    for k in grads:
        close(grads[k], want_grads[k], 1e-4)
    ran = model.loss.ran()
    ops = {op.split("__")[0] for op, c in ran.items() if c["kernel"] > 0}
    assert ops == {*GPT_SPLIT, *GPT_WHOLE}, ran
    assert all(c["body"] == 0 for c in ran.values()), ran
    per_shard = model.loss.function.sharded()
    assert {op.split("__")[0] for op in per_shard} == GPT_SPLIT, per_shard
    attention = f"attention_causal_lse__B{N}_Hk2_G1_Q4_K4_D16_Tf32"
    assert per_shard[attention] == "attention_causal_lse__B1_Hk2_G1_Q4_K4_D16_Tf32", per_shard
    assert per_shard[f"rms_norm_2d__R{4 * N}_H32_Tf32"] == "rms_norm_2d__R4_H32_Tf32", per_shard
    assert per_shard[f"embedding_2d__N{4 * N}_Vocab32_H32_Tf32"] == \
        "embedding_2d__N4_Vocab32_H32_Tf32", per_shard


def check_block_model_body_where_the_batch_does_not_divide() -> None:
    # N - 1 sequences of N tokens: attention's B does not divide by N (its body runs,
    # whole), the rows of the embedding, the norms and the loss, (N - 1) * N, do
    mesh = mesh_1d()
    model, params, tokens, targets = gpt_case(N - 1, N, mesh)
    plain = gpt_case(N - 1, N)[0]
    with jax.enable_x64(True):
        loss, _ = model.loss(params, model.initial_state(), tokens, targets)
        want, _ = plain.loss(params, plain.initial_state(), tokens, targets)
    close(loss, want, 1e-5)
    ran, per_shard = model.loss.ran(), model.loss.function.sharded()
    attention = f"attention_causal_lse__B{N - 1}_Hk2_G1_Q{N}_K{N}_D16_Tf32"
    assert ran[attention]["kernel"] == 0 and ran.pop(attention)["body"] > 0, ran
    assert per_shard.pop(attention) is None, per_shard
    ran = {op: c for op, c in ran.items() if c != {"kernel": 0, "body": 0}}  # not run
    # attention's body takes its softmax with softmax_2d, whose kernel runs whole
    assert {op.split("__")[0] for op in ran} == {
        *GPT_SPLIT, "linear_product_2d", "linear_token_log_probs_stats", "softmax_2d"} - {
        "attention_causal_lse"}, ran
    assert all(c["kernel"] > 0 and c["body"] == 0 for c in ran.values()), ran
    assert all(per_shard[op] for op in ran if op in per_shard), per_shard
    assert {op.split("__")[0] for op in per_shard} == GPT_SPLIT - {"attention_causal_lse"}


CHECKS = {name[len("check_"):]: fn for name, fn in sorted(globals().items())
          if name.startswith("check_")}


def main() -> None:
    results = {"devices": f"{N} {jax.default_backend()}"}
    for name, check in CHECKS.items():
        try:
            check()
            results[name] = "ok"
        except Exception:  # reported to the parent test, which fails on it
            results[name] = traceback.format_exc()
    sys.stdout.write("RESULTS " + json.dumps(results) + "\n")


if __name__ == "__main__":
    main()
