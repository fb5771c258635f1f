"""How long `linnet torch|jax|onnx|stablehlo FILE` takes to print a module, in a fresh process.

Each run is a new `python -m linnet TARGET FILE --entry ENTRY > /dev/null`, timed by the
wall clock from start to exit, as a user sees it, and by the CPU time the process used
(user plus system: steadier than the wall clock on a busy machine). Each target starts
from an empty private cache (`LINNET_CACHE`, a temporary folder), as a new user would: the
first run builds the parser tables and keeps the e-graph passes' results; the table gives
that run, then the best and the median wall clock and the median CPU time of --repeat runs
after it, and which heavy packages such a run imports (torch, jax, ml_dtypes:
printing needs none of them; the ONNX export builds its model with the onnx package, which
imports ml_dtypes itself).

    python benchmarks/cli_startup.py [--example softmax] [--entry main] [--repeat 5]
                                     [--root DIR]

--root times the checkout at DIR (its `linnet` package first on the path), to compare
against another version of the compiler.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = ("torch", "jax", "onnx", "stablehlo")
HEAVY = ("torch", "jax", "ml_dtypes", "onnx", "egglog", "numpy")
PROBE = """
import atexit, json, sys
atexit.register(lambda: sys.stderr.write("\\nlinnet-startup " + json.dumps(
    [m for m in %r if m in sys.modules]) + "\\n"))
import runpy
sys.argv = ["linnet"] + sys.argv[1:]
runpy.run_module("linnet", run_name="__main__")
""" % (HEAVY,)


def run_once(root: Path, target: str, source: Path, entry: str, cache: Path,
             probe: bool = False) -> tuple[float, float, list[str]]:
    """Wall-clock and CPU seconds of one fresh process with its private cache at `cache`;
    with probe, also the heavy packages it imported (the probe's own overhead is not part
    of the timed runs)."""
    from linnet.testing.child_env import child_env
    env = child_env(root, LINNET_CACHE=str(cache))
    argv = [target, str(source), "--entry", entry]
    command = ([sys.executable, "-c", PROBE, *argv] if probe
               else [sys.executable, "-m", "linnet", *argv])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=root, env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"linnet {target} failed:\n{done.stderr}")
    heavy: list[str] = []
    for line in done.stderr.splitlines():
        if line.startswith("linnet-startup "):
            heavy = json.loads(line.split(" ", 1)[1])
    return seconds, cpu, heavy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--example", default="softmax")
    parser.add_argument("--entry", default="main")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parents[1])
    args = parser.parse_args()
    root = args.root.resolve()
    source = root / "examples" / f"{args.example}.linnet"
    print(f"`linnet TARGET examples/{args.example}.linnet --entry {args.entry}`, "
          f"{args.repeat} fresh processes each ({root})\n")
    print("| target | first run s (CPU s) | then: best s | median s | median CPU s | "
          "heavy packages imported then |")
    print("| --- | --- | --- | --- | --- | --- |")
    for target in TARGETS:
        with tempfile.TemporaryDirectory() as cache:  # a new user: nothing cached yet
            first = run_once(root, target, source, args.entry, Path(cache))
            runs = [run_once(root, target, source, args.entry, Path(cache))
                    for _ in range(args.repeat)]
            heavy = run_once(root, target, source, args.entry, Path(cache), probe=True)[2]
        wall = [r[0] for r in runs]
        print(f"| {target} | {first[0]:.2f} ({first[1]:.2f}) | {min(wall):.2f} | "
              f"{statistics.median(wall):.2f} | {statistics.median(r[1] for r in runs):.2f} | "
              f"{', '.join(heavy) or '-'} |")


if __name__ == "__main__":
    main()
