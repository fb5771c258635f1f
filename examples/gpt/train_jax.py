"""Train the Linnet gpt on JAX data-parallel: each step is `jax.jit` of `value_and_grad` of
the `loss` entry, the global batch split by rows over a ("data",) mesh of `--devices`
devices and the params replicated, then an SGD update. `--check` runs the same steps on
one device and compares the losses.

    python examples/gpt/train_jax.py --devices 2 --steps 3 --check

The devices are JAX's default ones (GPUs where its CUDA plugin finds them), else `--devices`
CPU devices (`XLA_FLAGS`, set before JAX is imported), where the kernels run in Pallas's
interpreter (`LINNET_PALLAS_INTERPRET=1`, set unless already set).
The weights and batches are those of `train.py` (the twin's weights from `--seed`, step
`i`'s tokens from `--seed + 1 + i`), so its losses are comparable. The ops' kernels run
per shard (`--numerics equivalent`, the default): the model is loaded with the mesh and
`shard=` naming the library's `rms_norm_2d`, `attention_causal` (whose kernel is that of
`attention_causal_lse`, which it calls) and `embedding_2d` (docs/scale_jax.md), so each
device runs each op's kernel on its own rows under `jax.shard_map`, and XLA's SPMD
partitioner splits the rest. The backward ops (the embedding's scatter-add, the weights'
gradients) sum over the rows, so they have no batch axis and cannot be named: their
kernels run whole, on the gathered rows, on each device. So do the linear layers'
(`linear_product_2d`) and the loss's row kernels (`linear_token_log_probs_stats`,
`_dlogits`): the library calls those ops inside `linear_2d` and `linear_token_log_probs`,
which this script does not name (XLA splits the loss's products, which are no kernels).
What ran of each op (kernel or body, `ran()`) is printed and written to `--json`, with the
per-shard instance of each op instance. `--numerics exact` runs the op bodies only, no
kernel, split by XLA like any `jnp` code.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from train import GPT, batch_of, initial_weights, ran_by_op, sizes  # noqa: E402

#: The ops of gpt.linnet whose kernels run per shard, each split over the data axis.
SHARD = {"rms_norm_2d": "data", "attention_causal": "data", "embedding_2d": "data"}


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--devices", type=int, default=2)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batch", type=int, default=4, help="global batch, split over devices")
    p.add_argument("--length", type=int, default=16)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dim", type=int, default=16)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--numerics", choices=("equivalent", "exact"), default="equivalent",
                   help="equivalent: the ops' kernels run per shard; exact: op bodies only")
    p.add_argument("--check", action="store_true", help="compare with the run on one device")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest |loss - single| / max(1, |single|) --check accepts")
    p.add_argument("--json", type=Path)
    return p.parse_args(argv)


def host_devices(count: int) -> None:
    """`count` CPU devices, for a machine without GPUs (or a JAX without their plugin): XLA
    reads the flag when JAX starts, and it leaves GPUs alone, which JAX prefers."""
    flag = f"--xla_force_host_platform_device_count={count}"
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + flag).strip()


def step_function(model: Any, lr: float) -> Any:
    """One SGD step of the loss entry: (params, tokens, targets) -> (loss, params)."""
    import jax

    def loss(params: dict, tokens: Any, targets: Any) -> Any:
        return model.loss(params, model.initial_state(), tokens, targets)[0]

    def step(params: dict, tokens: Any, targets: Any) -> tuple[Any, dict]:
        value, grads = jax.value_and_grad(loss)(params, tokens, targets)
        return value, jax.tree.map(lambda p, g: p - lr * g, params, grads)

    return jax.jit(step)


def train(args: argparse.Namespace, devices: list[Any]) -> dict[str, Any]:
    """`--steps` steps with the batch split over `devices` (params replicated)."""
    import jax
    import numpy as np
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
    from linnet.jax import load_source
    weights = {k: v.numpy() for k, v in initial_weights(args).items()}
    mesh = Mesh(np.array(devices), ("data",))
    kernels = {} if args.numerics == "exact" else {"mesh": mesh, "shard": SHARD}
    model = load_source(GPT, generics=sizes(args, args.batch), weights=weights,
                        numerics=args.numerics, **kernels)
    rows, whole = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    params = jax.device_put(dict(model.parameters), whole)
    step = step_function(model, args.lr)
    losses, seconds = [], []
    for i in range(args.steps):
        with jax.enable_x64(True):  # the tokens are i64, as the entry declares (docs/jax.md)
            tokens, targets = (jax.device_put(t.numpy(), rows)
                               for t in batch_of(args, i, slice(None)))
            start = time.perf_counter()
            loss, params = step(params, tokens, targets)
            loss.block_until_ready()
        seconds.append(time.perf_counter() - start)
        losses.append(float(loss))
    return {"losses": losses, "seconds": seconds, "devices": len(devices),
            "params_replicated": all(v.sharding.is_fully_replicated for v in params.values()),
            "input_sharding": [str(a) for a in tokens.sharding.spec],
            "numerics": args.numerics, "ran": ran_by_op(model.loss),
            "per_shard": model.loss.function.sharded() if kernels else {}}


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    host_devices(args.devices)
    import jax
    if jax.default_backend() == "cpu":  # read when each generated module is imported
        os.environ.setdefault("LINNET_PALLAS_INTERPRET", "1")
    devices = jax.devices()[:args.devices]
    if len(devices) < args.devices or args.batch % args.devices:
        raise SystemExit(f"need {args.devices} devices (have {len(jax.devices())}) and a "
                         f"batch ({args.batch}) they divide")
    run = train(args, devices)
    single = train(args, devices[:1])["losses"] if args.check else None
    ok = single is None or all(abs(a - b) <= args.tolerance * max(1.0, abs(b))
                               for a, b in zip(run["losses"], single))
    for i, (loss, s) in enumerate(zip(run["losses"], run["seconds"])):
        print(f"step {i}: loss {loss:.6f}  {s * 1e3:.1f} ms"
              + ("" if single is None else f"  (one device: {single[i]:.6f})"))
    for op, counts in sorted(run["ran"].items()):
        shards = sorted({str(s) for full, s in run["per_shard"].items()
                         if full.split("__")[0] == op})
        print(f"{op}: kernel {counts['kernel']}, body {counts['body']} (traced calls)"
              + (f"; per shard: {', '.join(shards)}" if shards else ""))
    print(f"{run['devices']} {devices[0].platform} devices, batch split {run['input_sharding']}"
          f", params replicated: {run['params_replicated']}"
          + ("" if single is None else f"; check: {'within' if ok else 'OUTSIDE'} "
             f"tolerance {args.tolerance}"))
    if args.json:
        args.json.write_text(json.dumps({**run, "single": single, "check": None
                                         if single is None else ok}, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
