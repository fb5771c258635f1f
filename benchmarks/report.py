"""The markdown tables of docs/benchmarks.md ("Kernels on the GPU") from a run's JSON.

    python benchmarks/kernels.py --json kernels.json      # on the GPU
    python benchmarks/report.py kernels.json [--level 2]  # anywhere: markdown on stdout

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
    parser.add_argument("json", metavar="JSON", help="the file benchmarks/kernels.py --json wrote")
    parser.add_argument("--level", type=int, default=2, help="the heading level of the title")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        results = json.loads(Path(args.json).read_text())
    except (OSError, ValueError) as err:
        print(f"benchmarks/report.py: cannot read {args.json}: {err}", file=sys.stderr)
        return 1
    from benchmarks.gpu.tables import render
    sys.stdout.write(render(results, level=args.level))
    return 0


if __name__ == "__main__":
    sys.exit(main())
