"""Every kernel case on one CUDA device, in one process: Linnet against a hand-written Triton
kernel of the same algorithm and against what a user would pick instead (torch, cuBLAS,
torch.compile, JAX), with ratio tables printed and every row written to a JSON file.

    python benchmarks/kernels.py [--only CASE,...] [--ops OP,...] [--json FILE] [--quick]
                                 [--sweep]

Cases: softmax, layer_norm, attention, matmul, std (benchmarks/gpu/<case>.py says what each
measures; `std` times the standard library's ops with kernels, `--ops` picks some of them). Every implementation is warmed up and its result checked against a float64 (f32
for attention) reference before it is timed; a failure of one implementation or case is
recorded (in the table and the JSON) and the run goes on. `--quick` shortens each
measurement; `--sweep` also times the matmul example's kernel at other tiles (how its tiles
were chosen). `benchmarks/report.py FILE` renders the tables of docs/benchmarks.md from the
JSON.
"""

from __future__ import annotations

import os

# JAX shares the GPU with torch: it must not take most of the memory at import.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import argparse  # noqa: E402
import importlib  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # this tree's linnet and benchmarks, not an installed one

CASES = ("softmax", "layer_norm", "attention", "matmul", "std")


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="benchmarks/kernels.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(CASES),
                        help=f"comma-separated cases to run (default: all of {', '.join(CASES)})")
    parser.add_argument("--json", metavar="FILE", help="write the results here (after each case)")
    parser.add_argument("--quick", action="store_true", help="shorter measurements")
    parser.add_argument("--ops", default="",
                        help="comma-separated ops of the std case (default: all of "
                             "benchmarks/gpu/std_ops.py's), so that it can be split over calls")
    parser.add_argument("--sweep", action="store_true",
                        help="also time the matmul example's kernel at other tiles")
    args = parser.parse_args(argv)
    args.only = [c.strip() for c in args.only.split(",") if c.strip()]
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    if args.ops:
        from benchmarks.gpu.std_ops import OPS
        names = {n for op in OPS for n in (op.item, op.name)}
        strange = [o for o in args.ops if o not in names]
        if strange:
            parser.error(f"unknown op {', '.join(strange)}; the std case's ops are "
                         f"{', '.join(dict.fromkeys(op.item for op in OPS))}")
    unknown = [c for c in args.only if c not in CASES]
    if unknown:
        parser.error(f"unknown case {', '.join(unknown)}; the cases are {', '.join(CASES)}")
    return args


def cuda_problem() -> str | None:
    """Why this machine cannot run the suite as users run Linnet, or None."""
    try:
        import torch
    except Exception as err:
        return f"torch is not importable ({type(err).__name__}: {err})"
    if not torch.cuda.is_available():
        return "no CUDA device is available (torch.cuda.is_available() is False)"
    try:
        import triton  # noqa: F401
    except Exception as err:
        return f"triton is not importable ({type(err).__name__}: {err})"
    from linnet.passes.egraph import run as egraph_run
    if not egraph_run.available():  # kernels would lose tl.dot and keep every mask
        return f"the e-graph passes cannot run ({egraph_run.UNAVAILABLE}): install egglog"
    return None


def main(argv: list[str] | None = None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    problem = cuda_problem()
    if problem:
        print(f"benchmarks/kernels.py needs a CUDA device, torch, Triton and egglog: {problem}",
              file=sys.stderr)
        return 1
    import torch._dynamo
    from benchmarks.gpu.environment import environment
    from benchmarks.gpu.harness import Settings, Suite
    from benchmarks.gpu.jax_side import JaxSide
    for name in ("cache_size_limit", "recompile_limit"):  # one compiled body serves many shapes
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, 64)
    suite = Suite(Settings.quick() if args.quick else Settings(), JaxSide())
    measure(suite, args.only, environment(suite.jax), args.json, sweep=args.sweep,
            quick=args.quick, ops=args.ops)
    return 0


def measure(suite, cases: list[str], env: dict, json_path: str | None, sweep: bool = False,
            quick: bool = False, ops: list[str] | None = None) -> dict:
    """Run the cases in order, printing each table when its case ends and rewriting the JSON
    after each (a run cut short keeps what it measured); the results, as written. `ops`
    limits the std case to those ops."""
    from benchmarks.gpu.harness import as_dicts
    from benchmarks.gpu.tables import case_section, preamble, sweep_table
    results = {"environment": env, "settings": vars(suite.settings) | {
        "quick": quick, "only": cases} | ({"ops": ops} if ops else {}), "cases": {}, "rows": []}
    print(preamble(results) + "\n", flush=True)
    started = time.perf_counter()
    for case in cases:
        results["cases"][case] = run_case(suite, case, ops if case == "std" else None)
        results["rows"] = as_dicts(suite.rows)
        print("\n".join(case_section(case, results["cases"][case], results["rows"], 3)),
              flush=True)
        save(json_path, results)
    if sweep:
        from benchmarks.gpu.harness import describe
        from benchmarks.gpu.sweep import sweep as tile_sweep
        try:
            results["sweep"] = tile_sweep(suite.settings)
        except Exception as err:
            results["sweep"] = [{"tiles": [], "error": describe(err)}]
        print("\n".join(sweep_table(results["sweep"])), flush=True)
    results["seconds"] = time.perf_counter() - started
    save(json_path, results)
    bad = [r for r in suite.rows if r.status != "ok"]
    print(f"\n{len(suite.rows)} rows, {len(bad)} not measured "
          f"({', '.join(sorted({r.status for r in bad})) or 'none'}), "
          f"{results['seconds']:.0f} s" + (f"; JSON in {json_path}" if json_path else ""))
    return results


def run_case(suite, case: str, ops: list[str] | None = None) -> dict:
    """Run one case module; a failure outside its groups is recorded, never raised. What
    the case returns beyond its rows (a dict: the std case's bandwidth) joins its record."""
    started = time.perf_counter()
    module, facts = None, None
    try:
        module = importlib.import_module(f"benchmarks.gpu.{case}")
        facts = module.run(suite, ops) if ops else module.run(suite)
    except Exception as err:
        suite.failed(case, err)
    doc = (module.__doc__ or "") if module else ""
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    return {"seconds": time.perf_counter() - started, "about": "\n\n".join(paragraphs),
            **(facts if isinstance(facts, dict) else {})}


def save(path: str | None, results: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(results, indent=1, default=str) + "\n")


if __name__ == "__main__":
    sys.exit(main())
