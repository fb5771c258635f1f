"""Train the Linnet gpt (`gpt.linnet`, its ops' kernels running) for a few steps: on one
process, or data-parallel under `torchrun` with DDP or FSDP2.

    python examples/gpt/train.py --mode single --steps 5
    torchrun --nproc_per_node 2 examples/gpt/train.py --mode ddp --steps 5 --check
    torchrun --nproc_per_node 2 examples/gpt/train.py --mode fsdp2 --steps 5 --check
    python examples/gpt/train.py --mode single --steps 5 --compile --check

Every run starts from the same weights (the twin's, `twin.py`, made from `--seed`) and sees
the same global batches (step `i`'s tokens are drawn from `--seed + 1 + i`); each of the
`W` ranks takes its `--batch / W` rows, so the model is loaded with `B = batch / W`. The
loss is a mean over the rows, and DDP and FSDP2 average the gradients over the ranks, so a
step of W ranks is the step of one process over the whole batch: the printed loss (the mean
of the ranks' losses) is the global batch's. `--check` then trains one process over the
global batch on rank 0 and compares the losses (`--tolerance`). `--json PATH` writes the
losses and the time of each step (rank 0).

`--compile [BACKEND]` runs each step's forward and backward through
`torch.compile(fullgraph=True, dynamic=False)` of the loss module, compiled in place
(`nn.Module.compile`) after it is wrapped: the DDP-wrapped module's inner module (DDP's own
forward stays eager, and Dynamo splits the graph at DDP's buckets), the FSDP2 module itself.
BACKEND is inductor on CUDA and aot_eager on the CPU unless named. The ops with kernels are
custom ops in the graph, so `ran()` still counts their kernels. `--check`'s reference
process is eager. The first step includes the compilation; the steady state is the median
of the other steps.

The backend is nccl on CUDA (each rank on `cuda:LOCAL_RANK`), gloo on the CPU
(`--device cpu`, or no CUDA). On the CPU, kernels run in Triton's interpreter
(`TRITON_INTERPRET=1`, set before Triton is imported, unless already set).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch
from torch import nn

HERE = Path(__file__).resolve().parent
GPT = HERE / "gpt.linnet"
MODES = ("single", "ddp", "fsdp2")


class LossOf(nn.Module):
    """`forward` is the model's `loss` entry: DDP and FSDP2 hook a module's forward, and a
    Linnet model's entries are methods, so this is what they wrap. Its params are the
    model's, under `model.`."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return self.model.loss(tokens, targets)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", choices=MODES, default="single")
    p.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto",
                   help="auto: CUDA where torch sees it, else the CPU")
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--batch", type=int, default=4, help="global batch (rows), split over ranks")
    p.add_argument("--length", type=int, default=16, help="T, positions per row")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=2)
    p.add_argument("--dim", type=int, default=16, help="D, dims per head")
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--optimizer", choices=("sgd", "adamw"), default="adamw")
    p.add_argument("--lr", type=float, default=1e-2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--numerics", choices=("equivalent", "exact"), default="equivalent",
                   help="equivalent: the ops' kernels run; exact: op bodies only")
    p.add_argument("--check", action="store_true",
                   help="compare with one process over the global batch (rank 0)")
    p.add_argument("--tolerance", type=float, default=1e-4,
                   help="largest |loss - single| / max(1, |single|) --check accepts")
    p.add_argument("--compile", nargs="?", const="default", metavar="BACKEND",
                   help="torch.compile the loss module (fullgraph): BACKEND inductor (the "
                        "default on CUDA), aot_eager (the default on the CPU), or another")
    p.add_argument("--json", type=Path, help="write the losses and step times here")
    return p.parse_args(argv)


def sizes(args: argparse.Namespace, batch: int) -> dict[str, int]:
    """The root block's generics for `batch` rows a call (the cache is unused: S = T)."""
    return {"B": batch, "L": args.layers, "NH": args.heads, "D": args.dim, "V": args.vocab,
            "S": args.length}


def initial_weights(args: argparse.Namespace) -> dict[str, torch.Tensor]:
    """The twin's weights from `--seed`: every run and rank starts from these."""
    sys.path.insert(0, str(HERE))
    import twin
    torch.manual_seed(args.seed)
    return {k: v.contiguous() for k, v in twin.Gpt(**sizes(args, 1)).state_dict().items()}


def batch_of(args: argparse.Namespace, step: int, rows: slice) -> tuple[torch.Tensor, ...]:
    """Step `step`'s global batch (the same in every process), rows `rows` of it."""
    generator = torch.Generator().manual_seed(args.seed + 1 + step)
    tokens = torch.randint(0, args.vocab, (args.batch, args.length + 1), generator=generator)
    tokens = tokens[rows]
    return tokens[:, :-1], tokens[:, 1:]


def fully_shard_function() -> Callable[..., Any]:
    """FSDP2's `fully_shard` (public in `torch.distributed.fsdp` since torch 2.6)."""
    try:
        from torch.distributed.fsdp import fully_shard
    except ImportError:
        try:
            from torch.distributed._composable.fsdp import fully_shard
        except ImportError:
            raise SystemExit(f"--mode fsdp2 needs FSDP2 (torch.distributed.fsdp.fully_shard), "
                             f"which torch {torch.__version__} does not have") from None
    return fully_shard


def wrapped(args: argparse.Namespace, batch: int, device: torch.device, mode: str,
            backend: str | None = None) -> nn.Module:
    """The Linnet model for `batch` rows a call, its loss in a module, wrapped for `mode`,
    then compiled with `backend` (None: eager). The loss entry's binding is compiled
    first (`prepare`): Dynamo cannot trace that compilation."""
    from linnet.torch import load
    model = load(str(GPT), generics=sizes(args, batch), weights=initial_weights(args),
                 numerics=args.numerics, device=device)
    tokens = torch.zeros(batch, args.length, dtype=torch.int64, device=device)
    model.loss.prepare(tokens, tokens)
    module: nn.Module = LossOf(model)
    if mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        ids = [device.index] if device.type == "cuda" else None
        module = DistributedDataParallel(module, device_ids=ids)
    if mode == "fsdp2":
        fully_shard_function()(module)
    if backend is not None:
        compile_loss(module, backend)
    return module


def compile_loss(module: nn.Module, backend: Any) -> None:
    """`torch.compile(fullgraph=True)` of the wrapped loss module, in place: under DDP its
    inner module (DDP's forward is Python that Dynamo does not trace in one graph; the inner
    module's graph is split at DDP's buckets by Dynamo's DDPOptimizer), under FSDP2 the
    sharded module. `dynamic=False`: a step's shapes never change, and a Linnet binding is
    chosen by static shapes."""
    from torch.nn.parallel import DistributedDataParallel
    target = module.module if isinstance(module, DistributedDataParallel) else module
    target.compile(fullgraph=True, backend=backend, dynamic=False)


def compile_backend(choice: str | None, cuda: bool) -> str | None:
    """The torch.compile backend `--compile` names: inductor on CUDA and aot_eager on the
    CPU by default; None without `--compile`."""
    if choice is None:
        return None
    if choice == "default":
        return "inductor" if cuda else "aot_eager"
    known = torch._dynamo.list_backends(exclude_tags=())
    if choice not in known:
        raise SystemExit(f"--compile {choice}: not a torch.compile backend "
                         f"(this torch has {', '.join(sorted(known))})")
    return choice


def dynamo_counts() -> dict[str, int]:
    """Dynamo's counts so far in this process: graphs compiled and graph breaks."""
    from torch._dynamo.utils import counters
    return {"graphs": counters["stats"]["unique_graphs"],
            "graph_breaks": sum(counters["graph_break"].values())}


def optimizer(args: argparse.Namespace, module: nn.Module) -> torch.optim.Optimizer:
    if args.optimizer == "sgd":
        return torch.optim.SGD(module.parameters(), lr=args.lr)
    return torch.optim.AdamW(module.parameters(), lr=args.lr)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def train(args: argparse.Namespace, mode: str, device: torch.device, rank: int = 0,
          world: int = 1, backend: str | None = None) -> dict[str, Any]:
    """`--steps` steps: the global loss and the seconds of each step, what ran of each op
    (kernel or body, in this process) and how many params are sharded (DTensors); compiled
    with `backend` (None: eager), the graphs and graph breaks Dynamo made."""
    if args.batch % world:
        raise SystemExit(f"--batch {args.batch} does not split over {world} ranks")
    local = args.batch // world
    rows = slice(rank * local, (rank + 1) * local)
    before = dynamo_counts()
    module = wrapped(args, local, device, mode, backend)
    opt = optimizer(args, module)
    losses, seconds = [], []
    for step in range(args.steps):
        tokens, targets = (t.to(device) for t in batch_of(args, step, rows))
        synchronize(device)
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = module(tokens, targets)
        loss.backward()
        opt.step()
        synchronize(device)
        seconds.append(time.perf_counter() - start)
        losses.append(global_loss(loss.detach(), world))
    model = module.module.model if mode == "ddp" else module.model
    after = dynamo_counts()
    compiled = None if backend is None else {
        "backend": backend, "fullgraph": True, **{k: after[k] - before[k] for k in after}}
    return {"losses": losses, "seconds": seconds, "steady_seconds": steady(seconds),
            "ran": ran_by_op(model.loss), "compiled": compiled,
            "sharded": sum(type(p).__name__ == "DTensor" for p in module.parameters()),
            "params": len(list(module.parameters())), "device": device.type}


def steady(seconds: list[float]) -> float | None:
    """The steady-state time of a step: the median of the steps after the first (which
    includes compiling: Triton's kernels at their first launch, and torch.compile's
    tracing and backend with --compile); None with one step."""
    return statistics.median(seconds[1:]) if len(seconds) > 1 else None


def ran_by_op(entry: Any) -> dict[str, dict[str, int]]:
    """`entry.ran()` summed per op over its bindings: {op: {"kernel": n, "body": n}}."""
    found: dict[str, dict[str, int]] = {}
    for instance, counts in entry.ran().items():
        total = found.setdefault(instance.split("__")[0], {"kernel": 0, "body": 0})
        for key, n in counts.items():
            total[key] = total.get(key, 0) + n
    return found


def global_loss(loss: torch.Tensor, world: int) -> float:
    """The mean of the ranks' losses: the global batch's (the ranks' rows are as many)."""
    if world > 1:
        import torch.distributed as dist
        loss = loss.clone()
        dist.all_reduce(loss)
        loss = loss / world
    return float(loss)


def setup(mode: str, cuda: bool) -> tuple[torch.device, int, int]:
    """The device, rank and world size; the process group for ddp and fsdp2."""
    if mode == "single":
        return torch.device("cuda" if cuda else "cpu"), 0, 1
    import torch.distributed as dist
    if "RANK" not in os.environ:
        raise SystemExit(f"--mode {mode} runs under torchrun: "
                         f"torchrun --nproc_per_node 2 {__file__} --mode {mode}")
    local = int(os.environ.get("LOCAL_RANK", 0))
    if cuda:
        torch.cuda.set_device(local)
    dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", local) if cuda else torch.device("cpu")
    return device, dist.get_rank(), dist.get_world_size()


def on_cuda(choice: str) -> bool:
    """Whether to run on CUDA; on the CPU, Triton's interpreter runs the kernels."""
    cuda = choice == "cuda" or (choice == "auto" and torch.cuda.is_available())
    if not cuda:
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before anything imports Triton
    return cuda


def report(args: argparse.Namespace, world: int, run: dict[str, Any],
           single: list[float] | None) -> int:
    """Print (and write, with --json) the run; 1 when --check finds the losses apart."""
    losses, seconds = run["losses"], run["seconds"]
    worst = None if single is None else max(abs(a - b) / max(1.0, abs(b))
                                            for a, b in zip(losses, single))
    for i, (loss, s) in enumerate(zip(losses, seconds)):
        line = f"step {i}: loss {loss:.6f}  {s * 1e3:.1f} ms"
        line += "" if i else " (includes compiling)"
        print(line + ("" if single is None else f"  (eager single process: {single[i]:.6f})"))
    ok = worst is None or worst <= args.tolerance
    if run["steady_seconds"] is not None:
        print(f"steady state: {run['steady_seconds'] * 1e3:.1f} ms a step (the median of "
              f"steps 1-{len(seconds) - 1})")
    compiled = run["compiled"]
    print("eager" if compiled is None else
          f"torch.compile (backend {compiled['backend']}, fullgraph): {compiled['graphs']} "
          f"graph(s), {compiled['graph_breaks']} graph break(s)")
    print(f"ran (rank 0, per op): {run['ran']}; params sharded: {run['sharded']} of "
          f"{run['params']}")
    if worst is not None:
        print(f"check: largest relative difference {worst:.3g} (|loss - eager| / max(1, "
              f"|eager|)), {'within' if ok else 'OUTSIDE'} tolerance {args.tolerance}")
    if args.json:
        args.json.write_text(json.dumps({
            "mode": args.mode, "world": world, "batch": args.batch, **run, "single": single,
            "check": None if single is None else ok, "numerics": args.numerics,
            "first_step_includes_compiling": True}, indent=1))
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    args = arguments(argv)
    cuda = on_cuda(args.device)
    backend = compile_backend(args.compile, cuda)
    device, rank, world = setup(args.mode, cuda)
    try:
        run = train(args, args.mode, device, rank, world, backend)
        if rank != 0:
            return 0
        single = train(args, "single", device)["losses"] if args.check else None
        return report(args, world, run, single)
    finally:
        if args.mode != "single":
            import torch.distributed as dist
            dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
