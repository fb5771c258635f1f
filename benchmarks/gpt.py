"""The gpt example (`examples/gpt/gpt.linnet`) as a whole model on a CUDA device: tokens per
second of prefill and of decode for the Linnet model (kernels on, `numerics="equivalent"`)
against its PyTorch twin (`examples/gpt/twin.py`), eager and under `torch.compile`, with the
same f32 weights (the twin's state_dict, saved with safetensors; the Linnet model is
`linnet.torch.load` of the file, its entries methods, its states buffers). Products
are full f32 on both sides unless `--tf32` (Linnet's `--numerics fast`, torch's allow_tf32).

- prefill: a prompt of T tokens for each of B sequences (logits of every position, the cache
  filled); tokens per second = B * T / the median time of a call (`triton.testing.do_bench`).
- decode: STEPS steps of one token per sequence after the prompt, with the cache; each round
  resets the position to T (Linnet's `pos` state buffer written in place: the same work
  every round), and tokens per second = B * STEPS / the median time of a round
  (synchronized before and after).

Before timing, each implementation is warmed up and its outputs checked: the prefill logits
and the first decode steps' logits against the eager twin, as max |a - b| / max |b| within
`--tolerance`. A failing check is reported and that implementation is not timed. The Linnet
rows also say how many kernels each call launched (every norm, linear layer, attention and
token embedding), from the entries' `ran()` counts before and after a call.

    python benchmarks/gpt.py                          # B=8, L=4, H=512 (8 heads), V=8192, T=512
    python benchmarks/gpt.py --json gpt.json          # also write the rows as JSON
    python benchmarks/gpt.py --tf32                   # TF32 tile products on both sides
    python benchmarks/gpt.py --device cpu --small     # a dry run in Triton's interpreter
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this tree's linnet, not an installed one
sys.path.insert(0, str(ROOT / "examples" / "gpt"))
GPT = ROOT / "examples" / "gpt" / "gpt.linnet"

FULL = {"B": 8, "L": 4, "NH": 8, "D": 64, "V": 8192, "S": 1024}
SMALL = {"B": 2, "L": 2, "NH": 2, "D": 16, "V": 64, "S": 48}


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/gpt.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--small", action="store_true", help=f"sizes {SMALL}, T=30, STEPS=4")
    parser.add_argument("--prompt", type=int, help="T, the prompt length (default 512)")
    parser.add_argument("--steps", type=int, help="decode steps a round (default 64)")
    parser.add_argument("--rounds", type=int, default=10, help="decode rounds timed")
    parser.add_argument("--tf32", action="store_true",
                        help="TF32 products on both sides: Linnet's numerics fast, torch's "
                             "allow_tf32 (and a tolerance of 1e-2)")
    parser.add_argument("--tolerance", type=float, help="default 1e-3, 1e-2 with --tf32")
    parser.add_argument("--no-compile", action="store_true", help="leave out torch.compile")
    parser.add_argument("--json", metavar="FILE", help="write the rows here")
    args = parser.parse_args(argv)
    args.sizes = dict(SMALL if args.small else FULL)
    args.tolerance = args.tolerance or (1e-2 if args.tf32 else 1e-3)
    args.numerics = "fast" if args.tf32 else "equivalent"
    args.prompt = args.prompt or (30 if args.small else 512)
    args.steps = args.steps or (4 if args.small else 64)
    if args.prompt + args.steps > args.sizes["S"]:
        parser.error(f"--prompt + --steps must be at most S = {args.sizes['S']}")
    return args


class Linnet:
    """The Linnet model (`linnet.torch.load`: entries as methods, states in its buffers)."""

    def __init__(self, weights: Path, sizes: dict[str, int], device: str, numerics: str) -> None:
        from linnet.torch import load
        self.model = load(GPT, generics=sizes, weights=weights, numerics=numerics,
                          device=device)

    def prefill(self, tokens):
        return self.model.prefill(tokens)

    def decode(self, token):
        return self.model.decode(token)

    def restart(self, position: int) -> None:
        self.model.pos.fill_(position)  # the state buffer, read by the next call

    def kernels(self) -> int:
        """Op calls so far that ran their kernel, over every entry (`ran()`)."""
        return sum(counts["kernel"] for name in self.model.entries
                   for counts in self.model.entry(name).ran().values())

    def launches(self, call: Callable[[], Any]) -> int:
        """The kernels one call launches: the difference of `kernels()` around it."""
        before = self.kernels()
        call()
        return self.kernels() - before


class Twin:
    """The twin's prefill and decode, eager or through `compile`."""

    def __init__(self, model, compile: Callable | None = None) -> None:
        self.model = model
        self.prefill = compile(model.prefill) if compile else model.prefill
        self.decode = compile(model.decode) if compile else model.decode

    def restart(self, position: int) -> None:
        self.model.pos.fill_(position)


def relative_error(got, want) -> float:
    got, want = got.double(), want.double()
    return ((got - want).abs().max() / want.abs().max()).item()


def check(impl, reference: list, prompt, steps, tolerance: float) -> float:
    """Prefill and the first decode steps against the reference outputs; the worst error."""
    outputs = [impl.prefill(prompt)] + [impl.decode(t) for t in steps]
    worst = max(relative_error(g, w) for g, w in zip(outputs, reference))
    if not worst <= tolerance:
        raise AssertionError(f"outputs differ from the eager twin: {worst:.2e} > {tolerance}")
    return worst


def timer(device: str) -> Callable[[Callable[[], Any]], float]:
    """Median milliseconds of a call: do_bench on CUDA, wall clock on the CPU."""
    if device == "cuda":
        from triton.testing import do_bench
        return lambda fn: do_bench(fn, warmup=25, rep=200)

    def wall(fn) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            fn()
            times.append((time.perf_counter() - started) * 1e3)
        return statistics.median(times)
    return wall


def decode_round_ms(impl, tokens, position: int, rounds: int, sync: Callable[[], None]) -> float:
    """Median milliseconds of a round of decode steps from `position`."""
    times = []
    for _ in range(rounds + 1):
        impl.restart(position)
        sync()
        started = time.perf_counter()
        for t in tokens:
            impl.decode(t)
        sync()
        times.append((time.perf_counter() - started) * 1e3)
    return statistics.median(times[1:])  # the first round is warm-up


def build(args) -> tuple[dict[str, Any], Any]:
    """The implementations, by name, and the eager twin (the reference)."""
    import torch
    import twin
    from safetensors.torch import save_file
    torch.manual_seed(0)
    eager = twin.Gpt(**args.sizes)
    with torch.no_grad():
        for name, p in eager.named_parameters():
            if name.endswith("norm.weight"):
                p.uniform_(0.5, 1.5)
    eager = eager.to(args.device)
    folder = Path(tempfile.mkdtemp(prefix="linnet-gpt-"))
    weights = folder / "model.safetensors"
    save_file({k: v.contiguous() for k, v in eager.state_dict().items()}, str(weights))
    impls: dict[str, Any] = {"linnet": Linnet(weights, args.sizes, args.device, args.numerics),
                             "torch eager": Twin(eager)}
    if not args.no_compile:
        impls["torch.compile"] = Twin(copy.deepcopy(eager), torch.compile)
    return impls, eager


def measure(args) -> list[dict[str, Any]]:
    import torch
    impls, eager = build(args)
    B, V = args.sizes["B"], args.sizes["V"]
    generator = torch.Generator().manual_seed(1)
    sequence = torch.randint(0, V, (B, args.prompt + args.steps), generator=generator)
    sequence = sequence.to(args.device)
    prompt, steps = sequence[:, :args.prompt], list(sequence[:, args.prompt:].T)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    time_ms = timer(args.device)
    with torch.no_grad():
        reference = [Twin(copy.deepcopy(eager)).prefill(prompt)]
        checker = Twin(copy.deepcopy(eager))
        checker.prefill(prompt)
        reference += [checker.decode(t) for t in steps[:4]]
        rows = []
        for name, impl in impls.items():
            rows += measure_one(name, impl, args, reference, prompt, steps, time_ms, sync)
    return rows


def measure_one(name: str, impl, args, reference, prompt, steps, time_ms, sync) -> list[dict]:
    B, T = args.sizes["B"], args.prompt
    base = {"impl": name, "sizes": args.sizes, "prompt": T, "steps": args.steps,
            "tf32": args.tf32}
    try:
        started = time.perf_counter()
        error = check(impl, reference, prompt, steps[:4], args.tolerance)
        first = time.perf_counter() - started
    except Exception as err:
        return [{**base, "phase": p, "status": "wrong" if isinstance(err, AssertionError)
                 else "error", "error": f"{type(err).__name__}: {err}"[:300]}
                for p in ("prefill", "decode")]
    per_call = {}
    if isinstance(impl, Linnet):
        per_call["prefill"] = impl.launches(lambda: impl.prefill(prompt))
        per_call["decode"] = impl.launches(lambda: impl.decode(steps[0]))
    prefill_ms = time_ms(lambda: impl.prefill(prompt))
    impl.prefill(prompt)
    decode_ms = decode_round_ms(impl, steps, T, args.rounds, sync)
    return [{**base, "phase": "prefill", "status": "ok", "ms": prefill_ms,
             "tokens_per_s": B * T / prefill_ms * 1e3, "max_rel_error": error,
             "kernel_launches": per_call.get("prefill"), "first_calls_s": first},
            {**base, "phase": "decode", "status": "ok", "ms": decode_ms / args.steps,
             "tokens_per_s": B * args.steps / decode_ms * 1e3, "max_rel_error": error,
             "kernel_launches": per_call.get("decode")}]


def table(rows: list[dict]) -> str:
    """One line per implementation and phase; the ratio is Linnet's tokens/s over theirs."""
    ours = {r["phase"]: r.get("tokens_per_s") for r in rows if r["impl"] == "linnet"}
    lines = [f"{'phase':8} {'impl':14} {'ms/call':>9} {'tokens/s':>12} {'linnet/x':>9} "
             f"{'max rel err':>11} {'launches':>8}  status"]
    for r in sorted(rows, key=lambda r: (r["phase"] != "prefill", r["phase"])):
        if r["status"] != "ok":
            lines.append(f"{r['phase']:8} {r['impl']:14} {'':>9} {'':>12} {'':>9} {'':>11} "
                         f"{'':>8}  {r['status']}: {r['error']}")
            continue
        ratio = ours.get(r["phase"])
        ratio_text = f"{ratio / r['tokens_per_s']:.2f}" if ratio else "-"
        launches = "" if r["kernel_launches"] is None else str(r["kernel_launches"])
        lines.append(f"{r['phase']:8} {r['impl']:14} {r['ms']:9.3f} {r['tokens_per_s']:12,.0f} "
                     f"{ratio_text:>9} {r['max_rel_error']:11.1e} {launches:>8}  ok")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    if args.device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported
    import torch
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = args.tf32
    if args.device == "cuda" and not torch.cuda.is_available():
        print("benchmarks/gpt.py: no CUDA device (use --device cpu --small for a dry run)",
              file=sys.stderr)
        return 1
    sizes = args.sizes
    print(f"gpt: B={sizes['B']} L={sizes['L']} H={sizes['NH'] * sizes['D']} "
          f"({sizes['NH']} heads of {sizes['D']}) V={sizes['V']} S={sizes['S']}, "
          f"prompt {args.prompt}, {args.steps} decode steps, f32"
          f"{' (TF32 products)' if args.tf32 else ''}, {args.device}", flush=True)
    rows = measure(args)
    print(table(rows))
    if args.json:
        env = {"torch": torch.__version__, "device": args.device}
        if args.device == "cuda":
            from benchmarks.gpu.environment import linnet_commit
            import triton
            env.update(device=torch.cuda.get_device_name(), triton=triton.__version__,
                       linnet_commit=linnet_commit())
        Path(args.json).write_text(json.dumps({"environment": env, "rows": rows}, indent=1)
                                   + "\n")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
