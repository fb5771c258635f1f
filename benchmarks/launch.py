"""The launch path: what one call of a Linnet op costs beyond its kernel, and a first call.

Per call, on a tiny softmax (4x16 f32, `examples/softmax.linnet`, entry `softmax_any`), where
the kernel's own time is negligible and the Python on the way to it is what a call costs:

- on CUDA: (a) the hand-written Triton kernel called directly
  (`y = torch.empty_like(x); kernel[(R,)](x, y, C, BLOCK=1024)`), (b) the generated module's
  `main`, (c) the `linnet.torch.load_function` callable, (d) `torch.softmax`; ratios to (a).
- everywhere (the only per-call part without CUDA): the same paths with the kernel replaced
  by one that does nothing (`_NoKernel`), so what remains is the Python of each path, and,
  with kernels off, the op body called directly against `main` and `load_function` (whose
  extra cost is the input checks and the dispatch), and `torch.softmax`.
- JAX (in a child process, when JAX is installed): the `linnet.jax.load_function` callable
  against `jax.jit(jax.nn.softmax)`.

Each number is the median over `--repeat` rounds of the mean of `--count` back-to-back
calls, synchronizing before and after each round (the implementations alternate within a
round, so drift on the machine affects all alike).

First calls: in a fresh process per example (softmax, attention, matmul), the time to
generate a new binding (`compile_source`) and to import the module, for the first binding
of the process (which also pays one-off costs: the parser tables, egglog's import and its
rule declarations) and for a second one. Then two fresh processes one after the other, with
empty Linnet and Triton caches before the first, time their first `load_function` result;
the second should find the first's kernel in Triton's on-disk cache (same module name means
byte-identical generated source, which Triton's cache key is built from).

    python benchmarks/launch.py                      # CUDA when there is one, else CPU only
    python benchmarks/launch.py --json launch.json   # also write every number as JSON
    python benchmarks/launch.py --cpu --count 50 --repeat 3 --examples softmax   # quick

docs/benchmarks.md ("Launch path") describes the JSON and holds the results.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
SOFTMAX = ROOT / "examples" / "softmax.linnet"
SHAPE = (4, 16)

try:
    import triton
except Exception:  # no Triton: only the CPU measurements run
    triton = None

if triton is not None:  # the hand-written kernel of the GPU suite, in hand/ beside this file
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from hand.softmax import softmax_rows as hand_softmax_kernel


# ------------------------------------------------------------------ timing

def per_call_us(fns: dict[str, Callable[[], object]], count: int, repeat: int,
                sync: Callable[[], None], clock: Callable[[], float] = time.perf_counter
                ) -> dict[str, float]:
    """Median over rounds of the mean time of `count` back-to-back calls, in microseconds.

    On the CPU the clock is the thread's CPU time (`time.thread_time`), which other work on
    a shared machine does not inflate; with a GPU it is the wall clock."""
    for fn in fns.values():  # warm: compile, caches, allocator
        for _ in range(max(10, count // 10)):
            fn()
    sync()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            sync()
            start = clock()
            for _ in range(count):
                fn()
            sync()
            samples[name].append((clock() - start) / count * 1e6)
    return {name: statistics.median(times) for name, times in samples.items()}


def ratios(times: dict[str, float], base: str) -> dict[str, float]:
    return {f"{name}/{base}": t / times[base] for name, t in times.items() if name != base}


class _NoKernel:
    """Stands for a `@triton.jit` kernel: `kernel[grid](...)` returns at once."""

    def __getitem__(self, grid: tuple) -> Callable[..., None]:
        return self._launch

    @staticmethod
    def _launch(*args: object, **hints: object) -> None:
        return None


class _Patched:
    """Module globals set for a measurement and put back after it."""

    def __init__(self, module: Any, **values: object) -> None:
        self.module, self.values, self.saved = module, values, {}

    def __enter__(self) -> None:
        for name, value in self.values.items():
            self.saved[name] = self.module.__dict__[name]
            self.module.__dict__[name] = value

    def __exit__(self, *exc: object) -> None:
        self.module.__dict__.update(self.saved)


def _generated(entry_fn: Any) -> Any:
    """The generated module behind a `load_function` callable that has run once."""
    (run,) = entry_fn.cache.values()
    return sys.modules[run.__module__]


def _names(module: Any, suffix: str) -> list[str]:
    return sorted(n for n in vars(module) if n.startswith("f") and n.endswith(suffix))


# ---------------------------------------------------------------- per call

def torch_per_call(count: int, repeat: int, cuda: bool) -> dict[str, Any]:
    import torch

    from linnet.torch import load_function
    device = "cuda" if cuda else "cpu"
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    clock = time.perf_counter if cuda else time.thread_time
    if not cuda:  # one thread: an idle pool's spinning would be counted as the call's time
        torch.set_num_threads(1)
    x = torch.randn(*SHAPE, device=device)
    fn = load_function(str(SOFTMAX), "softmax_any")
    want = torch.softmax(x, dim=1)
    assert torch.allclose(fn(x), want, atol=1e-6, rtol=1e-5)
    module = _generated(fn)
    main = module.main
    rows, cols = SHAPE
    out: dict[str, Any] = {}

    def soft() -> object:
        return torch.softmax(x, dim=1)

    if cuda and triton is not None:
        def hand() -> object:
            y = torch.empty_like(x)
            hand_softmax_kernel[(rows,)](x, y, cols, BLOCK=1024)
            return y
        assert torch.allclose(hand(), want, atol=1e-6, rtol=1e-5)
        out["per_call_us"] = times = per_call_us(
            {"hand_triton": hand, "main": lambda: main(x), "load_function": lambda: fn(x),
             "torch_softmax": soft}, count, repeat, sync, clock)
        out["ratios"] = ratios(times, "hand_triton")

    # the Python of each path: every kernel replaced by one that does nothing
    stub = _NoKernel()
    kernels = {name: stub for name in _names(module, "_kernel")}

    def hand_stub() -> object:
        y = torch.empty_like(x)
        stub[(rows,)](x, y, cols, BLOCK=1024)
        return y
    anywhere = {} if cuda else {"_LT_TRITON": True, "_LT_INTERPRET": True}
    with _Patched(module, **kernels, **anywhere):
        out["no_kernel_us"] = times = per_call_us(
            {"hand": hand_stub, "main": lambda: main(x), "load_function": lambda: fn(x)},
            count, repeat, sync, clock)
    out["no_kernel_overhead_us"] = {name: t - times["hand"] for name, t in times.items()
                                    if name != "hand"}

    # kernels off: the op body directly, against main and load_function
    (body,) = _names(module, "_op_body")
    body_fn, d = getattr(module, body), x.device
    with _Patched(module, _LT_TRITON=False):
        assert torch.allclose(fn(x), want, atol=1e-6, rtol=1e-5)
        out["body_us"] = times = per_call_us(
            {"body": lambda: body_fn(d, x), "main": lambda: main(x),
             "load_function": lambda: fn(x), "torch_softmax": soft}, count, repeat, sync, clock)
    out["body_ratios"] = ratios(times, "body")
    return out


def jax_per_call(count: int, repeat: int) -> dict[str, Any]:
    """Run in a child process: `linnet.jax.load_function` against jitted `jax.nn.softmax`."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    from linnet.jax import load_function
    x = jnp.asarray(np.random.default_rng(0).standard_normal(SHAPE), dtype=jnp.float32)
    fn = load_function(str(SOFTMAX), "softmax_any")
    ref = jax.jit(lambda t: jax.nn.softmax(t, axis=1))
    np.testing.assert_allclose(np.asarray(fn(x)), np.asarray(ref(x)), rtol=1e-5, atol=1e-6)
    # calls are dispatched back to back, as torch's are; a round ends when a last result is
    # ready (one device stream runs them in order); the wall clock, since XLA has threads
    times = per_call_us({"jax_softmax_jit": lambda: ref(x), "load_function": lambda: fn(x)},
                        count, repeat, lambda: ref(x).block_until_ready())
    return {"backend": jax.default_backend(), "jax": jax.__version__, "per_call_us": times,
            "ratios": ratios(times, "jax_softmax_jit")}


# --------------------------------------------------------------- first call

#: example: (file, text added to it, entry, two bindings)
EXAMPLES: dict[str, tuple[str, str, str, list[dict[str, int]]]] = {
    "softmax": ("softmax.linnet", "", "softmax_any", [{"R": 4, "C": 16}, {"R": 8, "C": 100}]),
    "attention": ("attention.linnet", "", "attention_any",
                  [{"B": 1, "H": 2, "L": 128, "S": 200, "D": 64},
                   {"B": 2, "H": 1, "L": 40, "S": 72, "D": 32}]),
    "matmul": ("matmul.linnet", "", "matmul_any",
               [{"M": 64, "N": 64, "K": 64}, {"M": 32, "N": 48, "K": 40}]),
}


def first_bindings(example: str) -> dict[str, Any]:
    """Run in a fresh process: generate and import two new bindings of one example."""
    start = time.perf_counter()
    import torch  # noqa: F401 - a one-off import of the process (Triton's was at the top)
    imports = time.perf_counter() - start
    start = time.perf_counter()
    from linnet.pipeline import compile_source
    from linnet.torch.runtime import import_generated
    linnet_import = time.perf_counter() - start
    file, extra, entry, binds = EXAMPLES[example]
    path = ROOT / "examples" / file
    text = path.read_text() + extra
    runs = []
    for bind in binds:
        t0 = time.perf_counter()
        compiled = compile_source(text, path=str(path), entry=entry, bind=bind)
        t1 = time.perf_counter()
        import_generated(compiled.text, entry)
        t2 = time.perf_counter()
        runs.append({"bind": bind, "generate_s": t1 - t0, "import_s": t2 - t1,
                     "total_s": t2 - t0})
    return {"torch_import_s": imports, "linnet_import_s": linnet_import,
            "first_binding": runs[0], "next_binding": runs[1]}


def first_result(cuda: bool) -> dict[str, Any]:
    """Run in a fresh process: the time to the first result of a `load_function` call."""
    start = time.perf_counter()
    import torch

    from linnet.torch import load_function
    imports = time.perf_counter() - start
    x = torch.randn(*SHAPE, device="cuda" if cuda else "cpu")
    start = time.perf_counter()
    fn = load_function(str(SOFTMAX), "softmax_any")
    y = fn(x)
    if cuda:
        torch.cuda.synchronize()
    first = time.perf_counter() - start
    assert torch.allclose(y, torch.softmax(x, dim=1), atol=1e-6, rtol=1e-5)
    return {"imports_s": imports, "first_result_s": first,
            "module": _generated(fn).__name__, "kernel_ran": cuda}


def _child(args: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    """Run this script in a fresh process and read back the JSON it prints last."""
    from linnet.testing.child_env import child_env
    full = child_env(ROOT, **(env or {}))
    done = subprocess.run([sys.executable, __file__, *args], env=full, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _files(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file())


def fresh_processes(cuda: bool) -> dict[str, Any]:
    """Two fresh processes one after the other, sharing new, empty Linnet and Triton caches."""
    caches = Path(tempfile.mkdtemp(prefix="linnet-launch-"))
    env = {"LINNET_CACHE": str(caches / "linnet"), "TRITON_CACHE_DIR": str(caches / "triton")}
    runs = []
    for _ in range(2):
        run = _child(["--child", "first-result"] + ([] if cuda else ["--cpu"]), env)
        run["triton_cache_files"] = _files(caches / "triton") if (caches / "triton").exists() else 0
        runs.append(run)
    return {"first": runs[0], "second": runs[1],
            "same_source": runs[0]["module"] == runs[1]["module"]}


# ------------------------------------------------------------------ report

def report(results: dict[str, Any]) -> list[str]:
    """The results as Markdown tables."""
    lines = [f"# {results['device']}, torch {results['torch']}, triton {results['triton']}, "
             f"softmax {SHAPE[0]}x{SHAPE[1]} f32, {results['count']} calls x "
             f"{results['repeat']} rounds", ""]
    calls = results["per_call"]
    for key, base, title in (("per_call_us", "hand_triton", "CUDA, per call"),
                             ("no_kernel_us", "hand", "no-op kernel, per call"),
                             ("body_us", "body", "kernels off (op body), per call")):
        if key not in calls:
            continue
        lines += [f"| {title} | us | / {base} |", "| --- | ---: | ---: |"]
        times = calls[key]
        lines += [f"| {n} | {t:.2f} | {t / times[base]:.2f} |" for n, t in times.items()]
        lines.append("")
    if "jax" in results and "error" in results["jax"]:
        lines += ["JAX failed:", results["jax"]["error"], ""]
    elif "jax" in results:
        jax = results["jax"]
        lines += [f"| JAX ({jax['backend']}), per call | us | / jax_softmax_jit |",
                  "| --- | ---: | ---: |"]
        times = jax["per_call_us"]
        lines += [f"| {n} | {t:.2f} | {t / times['jax_softmax_jit']:.2f} |"
                  for n, t in times.items()]
        lines.append("")
    if "first_call" in results:
        lines += ["| example | linnet import s | first binding s (generate + import) | "
                  "next binding s (generate + import) |", "| --- | ---: | ---: | ---: |"]
        for name, r in results["first_call"].items():
            a, b = r["first_binding"], r["next_binding"]
            lines.append(f"| {name} | {r['linnet_import_s']:.3f} | {a['total_s']:.3f} "
                         f"({a['generate_s']:.3f} + {a['import_s']:.3f}) | {b['total_s']:.3f} "
                         f"({b['generate_s']:.3f} + {b['import_s']:.3f}) |")
        lines.append("")
    if "fresh_processes" in results:
        fresh = results["fresh_processes"]
        lines += ["| fresh process | imports s | first result s | Triton cache files after |",
                  "| --- | ---: | ---: | ---: |"]
        for name in ("first", "second"):
            r = fresh[name]
            lines.append(f"| {name} | {r['imports_s']:.3f} | {r['first_result_s']:.3f} | "
                         f"{r['triton_cache_files']} |")
        lines.append(f"\nsame generated source in both: {fresh['same_source']}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=2000, help="calls per round")
    parser.add_argument("--repeat", type=int, default=15, help="rounds")
    parser.add_argument("--cpu", action="store_true", help="CPU only, even with CUDA")
    parser.add_argument("--examples", default="softmax,attention,matmul",
                        help="first-call examples (comma-separated; empty for none)")
    parser.add_argument("--no-jax", action="store_true", help="skip the JAX measurement")
    parser.add_argument("--no-processes", action="store_true",
                        help="skip the two fresh processes")
    parser.add_argument("--json", help="write every number to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--example", help=argparse.SUPPRESS)
    args = parser.parse_args()
    import importlib.util
    if args.child:
        return _run_child(args)
    import torch
    cuda = torch.cuda.is_available() and not args.cpu and triton is not None
    results: dict[str, Any] = {
        "device": torch.cuda.get_device_name() if cuda else "cpu", "torch": torch.__version__,
        "triton": getattr(triton, "__version__", None), "count": args.count,
        "repeat": args.repeat, "shape": list(SHAPE)}
    results["per_call"] = torch_per_call(args.count, args.repeat, cuda)
    if not args.no_jax and importlib.util.find_spec("jax") is not None:
        try:  # JAX is optional here: its failure is reported, the rest still runs
            results["jax"] = _child(["--child", "jax", "--count", str(args.count),
                                     "--repeat", str(args.repeat)] + ([] if cuda else ["--cpu"]),
                                    {"XLA_PYTHON_CLIENT_PREALLOCATE": "false"})
        except RuntimeError as err:
            results["jax"] = {"error": str(err)[-2000:]}
    examples = [e for e in args.examples.split(",") if e]
    if examples:
        results["first_call"] = {e: _child(["--child", "first-bindings", "--example", e])
                                 for e in examples}
    if not args.no_processes:
        results["fresh_processes"] = fresh_processes(cuda)
    print("\n".join(report(results)))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


def _run_child(args: argparse.Namespace) -> int:
    if args.cpu:
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch or jax look for a GPU
        os.environ["JAX_PLATFORMS"] = "cpu"
    if args.child == "first-bindings":
        out = first_bindings(args.example)
    elif args.child == "first-result":
        out = first_result(not args.cpu)
    else:
        out = jax_per_call(args.count, args.repeat)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
