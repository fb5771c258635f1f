"""Front-end speed: parse and check a generated 5,000-line module.

The module repeats a block of realistic items (a generic fn, an op with index
notation and a kernel binding, a kernel with masks, an entry calling them) with
fresh names until it reaches the requested number of lines, then times
`linnet.check.frontend.check_program` on it. The parser tables are built (or loaded
from lark's cache) before timing, as they are once per process.

    python benchmarks/frontend.py [--lines 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from linnet.check.frontend import check_program
from linnet.syntax.parser import _lark

BLOCK = """\
fn scale_{k}<N: Dim, T: Float>(x: Tensor[N; T], s: T) -> Tensor[N; T] {{
    let y = x * s
    return y
}}

kernel rows_{k}<R: Dim, C: Dim, B: Dim>(x: Tensor[R, C; f32]) -> y: Tensor[R, C; f32] grid(R)
where B >= C {{
    let row = program_id(0)
    let cols = iota<i32>(B)
    let mask = cols < C
    let v = load(x[row, cols], mask, -1e30)
    let e = exp(v - max[c] v[c])
    store(y[row, cols], e / sum[c] e[c], mask)
}}

pub op softmax_{k}<R: Dim, C: Dim>(x: Tensor[R, C; f32]) -> Tensor[R, C; f32] kernel rows_{k}<R, C, 1024> {{
    let top[r] = max[c] x[r, c]
    let e[r, c] = exp(x[r, c] - top[r])
    let total[r] = sum[c] e[r, c]
    let y[r, c] = e[r, c] / total[r]
    return y
}}

fn mm_{k}<M: Dim, K: Dim, N: Dim>(a: Tensor[M, K; f32], b: Tensor[K, N; f32]) -> Tensor[M, N; f32] {{
    let c[m, n] = sum[k] a[m, k] * b[k, n]
    return c
}}

entry run_{k}(x: Tensor[16, 32; f32], w: Tensor[32, 8; f32]) -> Tensor[16, 8; f32] {{
    let p = softmax_{k}(x)
    var acc = mm_{k}(p, w)
    for i in 0..4 {{
        acc = acc + scale_{k}(reshape(acc, [128]), 0.5)[0] * 0.0
    }}
    return acc
}}
"""


def generate(lines: int) -> str:
    parts, count, k = ["module bench.generated\n"], 1, 0
    per_block = BLOCK.count("\n") + 1  # the block and the blank line joining it
    while count + per_block <= lines:
        parts.append(BLOCK.format(k=k))
        count += per_block
        k += 1
    return "\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    text = generate(args.lines)
    _lark()
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = check_program("generated.linnet", text)
        times.append(time.perf_counter() - start)
        assert result.ok, [d.message for d in result.diagnostics[:3]]
    lines = text.count("\n") + 1
    best, median = min(times), statistics.median(times)
    print(f"parse + check of {lines} lines: best {best:.3f} s, median {median:.3f} s "
          f"({lines / best:,.0f} lines/s), {args.repeat} runs")


if __name__ == "__main__":
    main()
