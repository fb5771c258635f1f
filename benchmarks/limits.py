"""Front-end limits: how time grows with pathological but legal (or illegal) input.

Each case is timed at two sizes a factor of ten apart, so the ratio shows the growth
(about 10 for linear work, about 100 for quadratic):

- blank and comment lines in a body, before a closing brace (`tokenize`);
- `static for` trips (`parse` through `elaborate`: unrolling and naming);
- statements written out, one `let` per line (`parse` through `elaborate`);
- a sum of many terms and a long `else if` chain, compiled to PyTorch (the whole pipeline,
  on the deep stack, with `outline-deep-blocks`);
- an integer literal of thousands of digits, decimal and hexadecimal (`check`: E2105).

    python benchmarks/limits.py [--scale 1.0]

`--scale` multiplies every size (0.1 for a quick look).
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from linnet.frontend import check_program
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.lexer import tokenize
from linnet.syntax.parser import _lark


def blank_lines(n: int) -> Callable[[], object]:
    text = ("module m\nfn f(x: f32) -> f32 {\n    return x\n"
            + "    // a comment\n\n" * (n // 2) + "}\n")
    return lambda: tokenize(text, "m.linnet")


def _up_to_elaborate(text: str) -> Callable[[], object]:
    return lambda: compile_source(text, path="m.linnet", passes=passes_for("torch")[:4])


def static_for(n: int) -> Callable[[], object]:
    return _up_to_elaborate("module m\nentry main(x: f32) -> f32 {\n    var a = x\n"
                            f"    static for i in 0..{n} {{\n        a = a + 1.0\n    }}\n"
                            "    return a\n}\n")


def statements(n: int) -> Callable[[], object]:
    body = "".join(f"    let a{i} = a{i - 1} + 1.0\n" for i in range(1, n))
    return _up_to_elaborate(f"module m\nentry main(x: f32) -> f32 {{\n    let a0 = x\n{body}"
                            f"    return a{n - 1}\n}}\n")


def long_sum(n: int) -> Callable[[], object]:
    terms = " + ".join(f"x * {i}.0" for i in range(n))
    text = f"module m\nentry main(x: f32) -> f32 {{\n    return {terms}\n}}\n"
    return lambda: compile_source(text, path="m.linnet", target="torch")


def else_if_chain(n: int) -> Callable[[], object]:
    chain = "if x < 0.0 { 0.0 }" + "".join(f" else if x < {i}.0 {{ {i}.0 }}"
                                            for i in range(1, n)) + " else { x }"
    text = f"module m\nentry main(x: f32) -> f32 {{\n    return {chain}\n}}\n"
    return lambda: compile_source(text, path="m.linnet", target="torch")


def _literal(lit: str) -> Callable[[], object]:
    text = f"module m\nentry main(x: f64) -> f64 {{\n    return x + {lit}\n}}\n"

    def run() -> object:
        result = check_program("m.linnet", text)
        assert [d.code for d in result.diagnostics] == ["E2105"]
        return result
    return run


def decimal_literal(n: int) -> Callable[[], object]:
    return _literal("1" + "0" * n)


def hex_literal(n: int) -> Callable[[], object]:
    return _literal("0x" + "f" * n)


CASES: list[tuple[str, Callable[[int], Callable[[], object]], int]] = [
    ("blank/comment lines (tokenize)", blank_lines, 10_000),
    ("static for trips (to elaborate)", static_for, 10_000),
    ("let statements (to elaborate)", statements, 2_000),
    ("terms of a sum (to PyTorch)", long_sum, 100),
    ("else-if branches (to PyTorch)", else_if_chain, 50),
    ("decimal literal digits (E2105)", decimal_literal, 10_000),
    ("hex literal digits (E2105)", hex_literal, 10_000),
]


def best_of(job: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    _lark()  # the parse tables, once per process, outside the timings
    compile_source("module m\nentry main(x: f32) -> f32 {\n    return x\n}\n", path="m.linnet")
    print(f"{'case':<34} {'n':>9} {'seconds':>9} {'10n':>9} {'seconds':>9} {'ratio':>6}")
    for label, make, size in CASES:
        n = max(1, int(size * args.scale))
        small = best_of(make(n), args.repeat)
        large = best_of(make(10 * n), args.repeat)
        print(f"{label:<34} {n:>9,} {small:>9.3f} {10 * n:>9,} {large:>9.3f} "
              f"{large / max(small, 1e-9):>6.1f}")


if __name__ == "__main__":
    main()
