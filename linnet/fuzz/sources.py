"""Where the fuzzer's programs come from: the generator, or the corpus.

Why pluggable: `fuzz(programs=...)` takes any iterable of programs (a text and its cases),
so the corpus (`examples/`, `tests/spec/valid/`, `tests/grad/`), a folder of regression
programs or a hand-written list goes through the same oracle, backends and reducer as
generated programs. A generated program is named by its seed alone: program k of a run
with seed S is `generate(program_seed(S, k), config)`, so a worker process can make it
itself and a finding names the seed that remakes it.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from .case import Case
from .programs import generate
from . import harness
from .oracle.dtypes import NUMPY

__all__ = ["Source", "program_seed", "generated", "corpus", "corpus_paths", "case_array"]

ROOT = Path(__file__).resolve().parents[2]
CORPUS_DIRS = ("examples", "tests/spec/valid", "tests/grad")


@dataclass
class Source:
    """A program to fuzz: a label for reports, the path it stands for (the modules it
    `use`s are found beside it), its text and its cases; `seed` for a generated one."""
    label: str
    text: str
    cases: list[Case]
    path: str = "fuzz.linnet"
    seed: int | None = None
    constructs: Any = field(default_factory=dict)


def program_seed(seed: int, k: int) -> int:
    """The generator seed of program k of a run with `seed`: distinct for every (seed, k)
    with k below 2**32, and independent of how programs are spread over processes."""
    return (seed << 32) + k


def generated(seed: int, k: int, config: Any) -> Source:
    """Program k of the run: `generate(program_seed(seed, k), config)`. Raises what the
    generator raises."""
    s = program_seed(seed, k)
    program = generate(s, config)
    return Source(f"seed {s}", program.text, list(program.cases), seed=s,
                  constructs=dict(program.constructs))


def corpus_paths(root: Path = ROOT, dirs: Sequence[str] = CORPUS_DIRS) -> list[Path]:
    """The valid programs of the repository, in a fixed order."""
    return sorted(p for d in dirs for p in (root / d).glob("*.linnet"))


def corpus(paths: Iterable[Path | str] | None = None, seed: int = 0, *, max_dim: int = 9,
           kernels_only: bool = False) -> Iterator[Source]:
    """A `Source` per program with a case per entry: sizes that satisfy its `where`
    clauses (the kernels' too) up to `max_dim`, and the harness's random inputs, all drawn
    from `seed`. Entries the harness cannot size are left out; with `kernels_only`,
    programs without kernels."""
    for path in (corpus_paths() if paths is None else [Path(p) for p in paths]):
        text = path.read_text(encoding="utf-8")
        try:
            if kernels_only and not harness.kernel_ops(str(path), text):
                continue
            names = harness.entries(str(path), text)
        except Exception:  # noqa: BLE001 - a program that does not check: not fuzzed
            continue
        cases = []
        for k, name in enumerate(names):
            rng = random.Random(seed * 7919 + k)
            cases += _corpus_cases(harness, path, text, name, rng, max_dim)
        if cases:
            yield Source(path.name, text, cases, path=str(path))


def _corpus_cases(harness, path: Path, text: str, name: str, rng: random.Random,
                  max_dim: int) -> list[Case]:
    """The entry's case at drawn sizes; for a block entry whose tree has optional members,
    a second one with a checkpoint that holds every path (each optional member present)."""
    try:
        spec = harness.target_spec(str(path), name, text)
        values = harness.draw_values(spec, rng, max_dim=max_dim, max_elements=1 << 12)
        if values is None:
            return []
        cases = [_case(harness, spec, text, name, values, rng)]
        every = spec.block.every_path(values) if spec.block is not None else None
        if every is not None:
            full = dataclasses.replace(spec, block=spec.block.with_present(every))
            cases.append(_case(harness, full, text, name, values, rng))
    except Exception:  # noqa: BLE001 - an entry the harness cannot size is left out
        return []
    return cases


def _case(harness, spec, text: str, name: str, values: dict, rng: random.Random) -> Case:
    inputs = harness.make_inputs(spec, values, seed=rng.randrange(1 << 30), device="cpu")
    arrays = tuple(case_array(x, dtype) for x, (_, dtype) in zip(inputs, spec.shapes(values)))
    present = spec.block.present if spec.block is not None else None
    return Case(text, name, dict(values), arrays, present)


def case_array(x: Any, dtype: str) -> np.ndarray:
    """A harness input (a tensor, or a Python number for a scalar) as the NumPy array a
    `Case` holds (bf16 as `ml_dtypes.bfloat16`)."""
    if hasattr(x, "detach"):
        x = x.detach().cpu()
        x = x.float().numpy() if str(x.dtype) == "torch.bfloat16" else x.numpy()
    return np.asarray(x).astype(NUMPY[dtype])
