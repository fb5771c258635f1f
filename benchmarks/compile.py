"""Compile time: parse-to-text for every example, and the share of each stage.

For the `main` entry of each program in examples/, compiles to a PyTorch module
with kernels (`--numerics equivalent`) a few times and reports the best total
time, the slowest pass, and the share of the e-graph stage (when the pipeline has
one). The parser tables are loaded once before timing, as in a long-lived process.

    python benchmarks/compile.py [--repeat 5]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from linnet.pipeline import compile_source
from linnet.syntax.parser import _lark

ROOT = Path(__file__).resolve().parents[1]


def best_run(path: Path, repeat: int):
    text = path.read_text()
    runs = [compile_source(text, path=str(path), entry="main").result for _ in range(repeat)]
    return min(runs, key=lambda r: sum(s.seconds for s in r.stages))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    _lark()
    print("| example | total ms | slowest pass | its ms | e-graph share |")
    print("| --- | --- | --- | --- | --- |")
    for path in sorted((ROOT / "examples").glob("*.linnet")):
        result = best_run(path, args.repeat)
        total = sum(s.seconds for s in result.stages)
        slowest = max(result.stages, key=lambda s: s.seconds)
        egraph = sum(s.seconds for s in result.stages if s.name.startswith("egraph"))
        share = f"{100 * egraph / total:.0f}%" if egraph else "no e-graph pass"
        print(f"| {path.stem} | {total * 1000:.1f} | {slowest.name} | "
              f"{slowest.seconds * 1000:.1f} | {share} |")


if __name__ == "__main__":
    main()
