"""`make demo`: check every program in examples/ and print what each contains.

The front end is what exists so far; later stages extend this demo to compile
the examples and run their kernels against their op bodies.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .diagnostics import render
from .frontend import check_program
from .syntax import tree as t

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def describe(module: t.Module) -> str:
    counts = {"op": 0, "kernel": 0, "entry": 0, "fn": 0, "grad": 0}
    for item in module.items:
        if isinstance(item, t.Op):
            counts["op"] += 1
            counts["grad"] += item.grad is not None
        elif isinstance(item, t.Kernel):
            counts["kernel"] += 1
        elif isinstance(item, t.Function):
            counts[item.kind] += 1
    plural = {"entry": "entries"}
    return ", ".join(f"{n} {k if n == 1 else plural.get(k, k + 's')}"
                     for k, n in counts.items() if n)


def main(folder: Path = EXAMPLES) -> int:
    files = sorted(folder.glob("*.linnet"))
    failed = 0
    print(f"Checking {len(files)} example programs in {folder.name}/\n")
    for path in files:
        start = time.perf_counter()
        result = check_program(str(path))
        ms = (time.perf_counter() - start) * 1000
        module = result.program.root_module
        summary = describe(module) if module is not None else "did not parse"
        verdict = "ok" if result.ok else f"{len(result.diagnostics)} error(s)"
        print(f"  {path.name:<22} {verdict:<10} {ms:6.1f} ms   {summary}")
        for d in result.diagnostics:
            print("\n" + render(d, result.sources) + "\n")
        failed += not result.ok
    print(f"\n{len(files) - failed} of {len(files)} examples check cleanly.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
