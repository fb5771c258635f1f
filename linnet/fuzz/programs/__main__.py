"""Generate programs and run their cases: kernels against op bodies, on any device.

    python -m linnet.fuzz.programs --seeds 0:100 --kernels --device cuda
    TRITON_INTERPRET=1 python -m linnet.fuzz.programs --seeds 0:20 --kernels

Each program's cases run through the PyTorch interpreter (op bodies) and generated PyTorch
with `--numerics equivalent` (kernels through Triton on CUDA, or in Triton's interpreter
under `TRITON_INTERPRET=1`); results are compared per dtype. Prints each failing seed, then
a summary and the table of constructs used. Exit status 1 when any case failed.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter

from .config import GeneratorConfig
from .generate import generate
from .run import assert_tame, differences, run_case


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m linnet.fuzz.programs")
    ap.add_argument("--seeds", default="0:50", help="a range lo:hi")
    ap.add_argument("--kernels", action="store_true")
    ap.add_argument("--grad", action="store_true")
    ap.add_argument("--block-grad", action="store_true", help="implies --grad")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--numerics", default="equivalent")
    ap.add_argument("--max-dim", type=int, default=17)
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.seeds.split(":"))
    config = GeneratorConfig(kernels=args.kernels, grad=args.grad or args.block_grad,
                             block_grad=args.block_grad, max_dim=args.max_dim)
    seen: Counter = Counter()
    failed = ran = 0
    for seed in range(lo, hi):
        prog = generate(seed, config)
        seen.update(prog.constructs)
        for case in prog.cases:
            ran += 1
            try:
                results = run_case(case, numerics=args.numerics, device=args.device)
                assert_tame(results)
                problems = differences(results)
            except Exception as err:  # noqa: BLE001 - reported
                problems = [f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                            + f" {getattr(err, 'diagnostics', '')}"[:400]]
            if problems:
                failed += 1
                print(f"seed {seed} entry {case.entry} {dict(case.generics)}:")
                for p in problems:
                    print("   ", p)
    print(f"{ran} cases of {hi - lo} programs, {failed} failed")
    for name, count in sorted(seen.items()):
        print(f"  {name:32} {count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
