"""The markdown tables of docs/benchmarks.md ("Kernels on the GPU") from a run's JSON.

    python benchmarks/kernels.py --json kernels.json      # on the GPU
    python benchmarks/report.py kernels.json [--level 2]  # anywhere: markdown on stdout
    python benchmarks/report.py a.json b.json             # one report from several calls

Several files are the cases of one run split over several calls on the same machine (one
call has a time limit): they must name the same device and Linnet commit, and their cases
are reported in the order given; a case in several files (the std case split with `--ops`)
is reported once, with the rows of every file.

The heading carries the device and the date, the first paragraph the versions, the Linnet
commit and how times were taken; then one table per case in the order measured, with the
case's description and its run time, so the docs come from the measurement itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/report.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("json", metavar="JSON", nargs="+",
                        help="the file(s) benchmarks/kernels.py --json wrote")
    parser.add_argument("--level", type=int, default=2, help="the heading level of the title")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    parts = []
    for name in args.json:
        try:
            parts.append(json.loads(Path(name).read_text()))
        except (OSError, ValueError) as err:
            print(f"benchmarks/report.py: cannot read {name}: {err}", file=sys.stderr)
            return 1
    try:
        results = merge(parts)
    except ValueError as err:
        print(f"benchmarks/report.py: {err}", file=sys.stderr)
        return 1
    from benchmarks.gpu.tables import render
    sys.stdout.write(render(results, level=args.level))
    return 0


SAME = ("device", "linnet_commit", "torch", "triton", "jax")


def merge(parts: list[dict]) -> dict:
    """One run's results from the JSON of its calls: the first call's environment and
    settings, every call's cases and rows in order, the seconds added up. Calls made on
    another device or at another commit are not one run, and are refused."""
    first = parts[0]
    env = first.get("environment", {})
    for other in parts[1:]:
        theirs = other.get("environment", {})
        for key in SAME:
            if theirs.get(key) != env.get(key):
                raise ValueError(f"the files differ in {key} ({env.get(key)!r} against "
                                 f"{theirs.get(key)!r}): they are not one run")
    if len(parts) == 1:
        return first
    merged = dict(first, cases={}, rows=[], seconds=0.0, sweep=None)
    merged["settings"] = dict(first.get("settings", {}), only=[])
    for part in parts:
        for case, info in part.get("cases", {}).items():  # a case split over calls (--ops)
            held = merged["cases"].get(case)
            merged["cases"][case] = info if held is None else dict(
                held, seconds=(held.get("seconds") or 0.0) + (info.get("seconds") or 0.0))
        merged["rows"] += part.get("rows", [])
        merged["seconds"] += part.get("seconds") or 0.0
        merged["settings"]["only"] += part.get("settings", {}).get("only", [])
        if part.get("sweep"):
            merged["sweep"] = part["sweep"]
    return merged


if __name__ == "__main__":
    sys.exit(main())
