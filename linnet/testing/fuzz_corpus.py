"""Fuzz the compiler with the corpus and mutants of it, through every backend.

    python -m linnet.testing.fuzz_corpus --mutants 300 --seed 1 --report fuzz.json

Each corpus program (`examples/`, `tests/spec/valid/`, `tests/grad/`) and then each mutant
(`linnet.testing.mutate`) goes through `crosscheck`: the checker, and for programs that
check every entry through the interpreter, generated PyTorch and JAX, ONNX and StableHLO,
with `--grad` where the entry returns a floating scalar. The summary counts programs by
outcome and lists every finding; the JSON report holds each program with findings, its
text included, and `--save DIR` writes those programs as `.linnet` files. The exit status
is 1 when a crash or hang was found (internal errors: the kind that must never happen),
else 0; late diagnostics and disagreements are reported but do not fail the run unless
`--strict`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Iterator, Sequence

from ..fuzz.crosscheck import TARGETS, Report, crosscheck
from .mutate import mutants

ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIRS = ("examples", "tests/spec/valid", "tests/grad")


def corpus(root: Path = ROOT) -> list[Path]:
    """The valid programs of the repository, in a fixed order."""
    return sorted(p for d in CORPUS_DIRS for p in (root / d).glob("*.linnet"))


def programs(paths: Sequence[Path], count: int, seed: int, originals: bool = True
             ) -> Iterator[tuple[str, Path, str]]:
    """(label, path it stands for, text): the originals, then `count` mutants."""
    texts = [p.read_text(encoding="utf-8") for p in paths]
    if originals:
        for p, text in zip(paths, texts):
            yield p.name, p, text
    for n, (k, text) in enumerate(mutants(texts, count, seed)):
        yield f"mutant {n} of {paths[k].name}", paths[k], text


def run(paths: Sequence[Path], count: int, seed: int, *, targets: Sequence[str] = TARGETS,
        grad: bool = True, originals: bool = True, seconds: float = 60.0,
        log=sys.stderr) -> list[tuple[str, str, Report]]:
    """Crosscheck every program; (label, text, report) for each."""
    out = []
    for label, path, text in programs(paths, count, seed, originals):
        started = time.perf_counter()
        kernels = "run" if label.startswith("mutant") else "compare"
        report = crosscheck(text, str(path), seed=seed, targets=targets, grad=grad,
                            seconds=seconds, kernels=kernels)
        out.append((label, text, report))
        if log is not None:
            state = "checks" if report.checked else f"rejected {','.join(report.codes[:2])}"
            print(f"{label}: {state}, {len(report.ran)} stages, {len(report.findings)} "
                  f"findings ({time.perf_counter() - started:.1f} s)", file=log, flush=True)
            for f in report.findings:
                print(f"    {f}", file=log, flush=True)
    return out


def summary(results: list[tuple[str, str, Report]]) -> str:
    kinds = Counter(f.kind for _, _, r in results for f in r.findings)
    checked = sum(r.checked for _, _, r in results)
    stages = sum(len(r.ran) for _, _, r in results)
    lines = [f"{len(results)} programs: {checked} checked, {len(results) - checked} rejected "
             f"by the checker; {stages} stages ran",
             "findings: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
                             or "none")]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m linnet.testing.fuzz_corpus",
                                     description=__doc__.split("\n\n")[2],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mutants", type=int, default=100, help="mutants to try (100)")
    parser.add_argument("--seed", type=int, default=0, help="names the mutants (0)")
    parser.add_argument("--targets", default=",".join(TARGETS),
                        help=f"comma-separated subset of {','.join(TARGETS)}")
    parser.add_argument("--no-grad", action="store_true", help="skip the --grad exports")
    parser.add_argument("--no-originals", action="store_true",
                        help="mutants only, not the corpus programs themselves")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="time limit of each stage (60)")
    parser.add_argument("--report", help="write a JSON report here")
    parser.add_argument("--save", help="write each program with findings into this folder")
    parser.add_argument("--strict", action="store_true",
                        help="also fail on late diagnostics and disagreements")
    args = parser.parse_args(argv)
    targets = [t for t in args.targets.split(",") if t]
    unknown = sorted(set(targets) - set(TARGETS))
    if unknown:
        parser.error(f"unknown target {unknown[0]}; choose from {', '.join(TARGETS)}")
    os.environ.setdefault("TRITON_INTERPRET", "1")
    results = run(corpus(), args.mutants, args.seed, targets=targets, grad=not args.no_grad,
                  originals=not args.no_originals, seconds=args.seconds)
    print(summary(results))
    found = [(label, text, r) for label, text, r in results if r.findings]
    if args.report:
        Path(args.report).write_text(json.dumps([
            {"program": label, "text": text, "codes": r.codes,
             "findings": [vars(f) for f in r.findings]} for label, text, r in found],
            indent=1))
    if args.save:
        folder = Path(args.save)
        folder.mkdir(parents=True, exist_ok=True)
        for n, (label, text, _) in enumerate(found):
            (folder / f"finding_{n:03d}.linnet").write_text(f"// {label}\n{text}")
    failing = [r for _, _, r in results
               if r.crashes or (args.strict and r.findings)]
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
