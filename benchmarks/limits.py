"""Limits: how compile time grows with long but legal (or illegal) input.

Each case is timed at sizes n, 2n and 4n; the ratios (time at 2n over time at n, and at
4n over 2n) show the growth: about 2 is linear, about 4 quadratic, about 8 cubic.

- blank and comment lines in a body, before a closing brace (`tokenize`);
- `static for` trips (`parse` through `elaborate`: unrolling and naming);
- statements written out, one `let` per line (`parse` through `elaborate`);
- a sum of many terms, compiled to PyTorch (the whole pipeline, on the deep stack);
- an integer literal of thousands of digits, decimal and hexadecimal (`check`: E2105);
- an `else if` chain of literal arms (`check`: the arms' values join into one literal);
- an `else if` chain of arms that compute (`check`, and compiled to PyTorch);
- a `fn` with n `where` clauses, called once (`check`: each clause proved at the call);
- n `fn`s, each calling the one before (compiled to PyTorch);
- a `static for` of n trips, compiled to PyTorch;
- a block with `sub leaves: [Leaf; n]`, each called in a `static for` (compiled).

    python benchmarks/limits.py [--scale 1.0] [--repeat 1] [--only NAME]

`--scale` multiplies every size (0.1 for a quick look); `--only` runs the cases whose
label holds NAME.
"""

from __future__ import annotations

import argparse
import time
from typing import Callable

from linnet.check.frontend import check_program
from linnet.pipeline import compile_source, passes_for
from linnet.syntax.lexer import tokenize
from linnet.syntax.parser import _lark

Job = Callable[[], object]


def blank_lines(n: int) -> Job:
    text = ("module m\nfn f(x: f32) -> f32 {\n    return x\n"
            + "    // a comment\n\n" * (n // 2) + "}\n")
    return lambda: tokenize(text, "m.linnet")


def _up_to_elaborate(text: str) -> Job:
    return lambda: compile_source(text, path="m.linnet", passes=passes_for("torch")[:4])


def _checked(text: str) -> Job:
    def run() -> object:
        result = check_program("m.linnet", text)
        assert result.ok, [d.code for d in result.diagnostics]
        return result
    return run


def _compiled(text: str) -> Job:
    return lambda: compile_source(text, path="m.linnet", target="torch")


def static_for_text(n: int) -> str:
    return ("module m\nentry main(x: f32) -> f32 {\n    var a = x\n"
            f"    static for i in 0..{n} {{\n        a = a + 1.0\n    }}\n"
            "    return a\n}\n")


def static_for(n: int) -> Job:
    return _up_to_elaborate(static_for_text(n))


def static_for_compiled(n: int) -> Job:
    return _compiled(static_for_text(n))


def statements(n: int) -> Job:
    body = "".join(f"    let a{i} = a{i - 1} + 1.0\n" for i in range(1, n))
    return _up_to_elaborate(f"module m\nentry main(x: f32) -> f32 {{\n    let a0 = x\n{body}"
                            f"    return a{n - 1}\n}}\n")


def long_sum(n: int) -> Job:
    terms = " + ".join(f"x * {i}.0" for i in range(n))
    return _compiled(f"module m\nentry main(x: f32) -> f32 {{\n    return {terms}\n}}\n")


def literal_chain_text(n: int) -> str:
    """`x + if x < 0.0 { 0.0 } else if x < 1.0 { 1.0 } ... else { 0.5 }`: n literal arms,
    whose values join into one literal that may be any of them."""
    chain = "if x < 0.0 { 0.0 }" + "".join(f" else if x < {i}.0 {{ {i}.0 }}"
                                            for i in range(1, n)) + " else { 0.5 }"
    return f"module m\nentry main(x: f32) -> f32 {{\n    return x + {chain}\n}}\n"


def computed_chain_text(n: int) -> str:
    """`if x < 0.0 { x } else if x < 1.0 { x * 1.0 } ... else { x }`: n arms that compute."""
    chain = "if x < 0.0 { x }" + "".join(f" else if x < {i}.0 {{ x * {i}.0 }}"
                                          for i in range(1, n)) + " else { x }"
    return f"module m\nentry main(x: f32) -> f32 {{\n    return {chain}\n}}\n"


def where_clauses_text(n: int) -> str:
    """A generic fn with n `where` clauses on its size, called once at a size they allow."""
    clauses = ", ".join(f"N >= {i}" for i in range(1, n + 1))
    return (f"module m\nfn f<N: Dim>(x: Tensor[N; f32]) -> Tensor[N; f32] where {clauses} {{\n"
            "    return x\n}\n"
            f"entry main(x: Tensor[{n + 1}; f32]) -> Tensor[{n + 1}; f32] {{\n"
            "    return f(x)\n}\n")


def chained_fns_text(n: int) -> str:
    """n fns, each calling the one before; the entry calls the last."""
    fns = "fn f0(x: f32) -> f32 {\n    return x\n}\n" + "".join(
        f"fn f{i}(x: f32) -> f32 {{\n    return f{i - 1}(x) + 1.0\n}}\n" for i in range(1, n))
    return f"module m\n{fns}entry main(x: f32) -> f32 {{\n    return f{n - 1}(x)\n}}\n"


def leaves_text(n: int) -> str:
    """A block whose `sub leaves: [Leaf; n]` each scale the value in turn."""
    return ("module m\nblock Leaf {\n    param w: Tensor[4; f32]\n"
            "    pub fn forward(x: Tensor[4; f32]) -> Tensor[4; f32] {\n"
            "        return x * w\n    }\n}\n"
            f"block Model {{\n    sub leaves: [Leaf; {n}]\n"
            "    pub entry main(x: Tensor[4; f32]) -> Tensor[4; f32] {\n        var y = x\n"
            "        static for leaf in leaves {\n            y = leaf.forward(y)\n        }\n"
            "        return y\n    }\n}\n")


def _literal(lit: str) -> Job:
    text = f"module m\nentry main(x: f64) -> f64 {{\n    return x + {lit}\n}}\n"

    def run() -> object:
        result = check_program("m.linnet", text)
        assert [d.code for d in result.diagnostics] == ["E2105"]
        return result
    return run


def decimal_literal(n: int) -> Job:
    return _literal("1" + "0" * n)


def hex_literal(n: int) -> Job:
    return _literal("0x" + "f" * n)


CASES: list[tuple[str, Callable[[int], Job], int]] = [
    ("blank/comment lines (tokenize)", blank_lines, 25_000),
    ("static for trips (to elaborate)", static_for, 10_000),
    ("let statements (to elaborate)", statements, 2_000),
    ("terms of a sum (to PyTorch)", long_sum, 250),
    ("decimal literal digits (E2105)", decimal_literal, 25_000),
    ("hex literal digits (E2105)", hex_literal, 25_000),
    ("else-if literal arms (check)", lambda n: _checked(literal_chain_text(n)), 500),
    ("else-if computed arms (check)", lambda n: _checked(computed_chain_text(n)), 500),
    ("else-if computed arms (to PyTorch)", lambda n: _compiled(computed_chain_text(n)), 500),
    ("where clauses (check)", lambda n: _checked(where_clauses_text(n)), 750),
    ("chained fns (to PyTorch)", lambda n: _compiled(chained_fns_text(n)), 500),
    ("static for trips (to PyTorch)", static_for_compiled, 25_000),
    ("sub [Leaf; n] (to PyTorch)", lambda n: _compiled(leaves_text(n)), 4_096),
]


def best_of(job: Job, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        job()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default="", help="run the cases whose label holds this")
    args = parser.parse_args()
    _lark()  # the parse tables, once per process, outside the timings
    compile_source("module m\nentry main(x: f32) -> f32 {\n    return x\n}\n", path="m.linnet")
    print(f"| {'case':<36} | {'n':>7} | {'s at n':>7} | {'s at 2n':>7} | {'s at 4n':>7} "
          f"| {'2n/n':>5} | {'4n/2n':>5} |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, make, size in CASES:
        if args.only not in label:
            continue
        n = max(2, int(size * args.scale))
        t1, t2, t4 = (best_of(make(k * n), args.repeat) for k in (1, 2, 4))
        print(f"| {label:<36} | {n:>7,} | {t1:>7.3f} | {t2:>7.3f} | {t4:>7.3f} "
              f"| {t2 / max(t1, 1e-9):>5.1f} | {t4 / max(t2, 1e-9):>5.1f} |", flush=True)


if __name__ == "__main__":
    main()
