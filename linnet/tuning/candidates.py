"""The candidates of a tuning run: tile generics and launch hints to try, filtered and capped.

The tunable generics of an op's kernel are its tile choices: the `Dim` generics that none of
its parameter or result types mentions (`kernel matmul_tiles<M, N, K, f32, 128, 128, 32>`:
BM, BN and BK; M, N and K, in `a: Tensor[M, K; f32]`, are sizes). The header may bind a
choice to a literal or to an expression of the op's sizes (gpt's `linear` binds BM to
`min(128, max(16, next_pow2(M)))`); its value at the bound sizes is the header's. Each takes the values given for it (`--try BM=64,128`), else the header's value
and its neighbours (half and double); the launch hints take `--warps`/`--stages`, else
small default sets with the kernel's own hints added. Every combination of generics is
filtered by what the compiler would refuse at the bound sizes (`choice_problem`: the
kernel's `where`, tile sizes that are powers of two, a grid that covers the results), so a
candidate that is tried is one that `linnet torch` would compile. The candidates are then
ordered from the header's choice outwards (fewest and smallest changes first) and capped.
The header's choice is always among them when the compiler accepts it, as the baseline
(it is what runs untuned), whatever values are given.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..errors import LinnetError
from ..passes.front.instances import BoundKernel, instance_source
from ..passes.kernels.kernel_tuning import (TunedChoice, choice_problem, header_hints,
                                            hint_problem, not_tunable, op_identity,
                                            tunable_generics)

DEFAULT_WARPS = (4, 8)
DEFAULT_STAGES = (2, 3, 4)
DEFAULT_CAP = 64


class CandidateError(LinnetError, ValueError):
    """A candidate set that cannot be built as asked (a name that is not tunable, say)."""


@dataclass(frozen=True)
class Candidate:
    """One point to try: a value per tunable generic (kernel order) and the launch hints
    (None: the kernel's, which for the header's choice may be unwritten)."""
    generics: tuple[tuple[str, int], ...]
    warps: int | None
    stages: int | None

    def describe(self) -> str:
        """`BM=64 BN=128 BK=32 warps=8 stages=3`."""
        parts = [f"{n}={v}" for n, v in self.generics]
        parts += [f"{n}={v}" for n, v in (("warps", self.warps), ("stages", self.stages))
                  if v is not None]
        return " ".join(parts)

    def choice(self, op: str, binding: str, numerics: str, kernel: str) -> TunedChoice:
        return TunedChoice(op, binding, numerics, kernel, self.generics, self.warps,
                           self.stages)

    def as_dict(self) -> dict:
        return {"generics": dict(self.generics), "warps": self.warps, "stages": self.stages}


@dataclass
class CandidateSpace:
    """What a tuning run tries for one op at one binding, and what it left out and why."""
    op: str  # module path and name, `examples.matmul.matmul`
    binding: str  # `M=4096 N=4096 K=4096`
    label: str  # `op matmul<M=4096, N=4096, K=4096>`, as the module header names it
    kernel: str
    tunable: dict[str, int]  # the header's value of each tunable generic
    header: Candidate
    candidates: list[Candidate] = field(default_factory=list)  # in order, after the cap
    filtered: list[tuple[Candidate, str]] = field(default_factory=list)  # (left out, why)
    considered: int = 0  # the candidates that passed the filter, before the cap
    cap: int = DEFAULT_CAP

    @property
    def capped(self) -> bool:
        return self.considered > len(self.candidates)

    def cap_note(self) -> str:
        """`the cap (64) cut 98 of 162 candidates`, or "" when it cut none."""
        if not self.capped:
            return ""
        cut = self.considered - len(self.candidates)
        return (f"the cap ({self.cap}) cut {cut} of {self.considered} candidates (those "
                f"furthest from the header's choice); raise it with --max-candidates")


def candidate_space(analysis, bound: BoundKernel, numerics: str, *,
                    tries: Mapping[str, Sequence[int]] | None = None,
                    warps: Sequence[int] | None = None, stages: Sequence[int] | None = None,
                    cap: int = DEFAULT_CAP) -> CandidateSpace:
    """The candidates for `bound` (one op instance's kernel binding, at the bound sizes)."""
    tunable = tunable_generics(bound)
    _check_tries(bound, tunable, tries or {})
    op, binding = op_identity(analysis, bound)
    header_warps, header_stages = header_hints(analysis, bound)
    header = Candidate(tuple(tunable.items()), header_warps, header_stages)
    space = CandidateSpace(op, binding, instance_source("op", bound.op, bound.op_key),
                           bound.kernel.name, tunable, header, cap=cap)
    values = {n: _values(n, v, tries or {}) for n, v in tunable.items()}
    warp_set = _hint_values("warps", warps, DEFAULT_WARPS, header_warps)
    stage_set = _hint_values("stages", stages, DEFAULT_STAGES, header_stages)
    valid = []
    for combo in itertools.product(*values.values()):
        generics = tuple(zip(tunable, combo))
        probe = Candidate(generics, None, None).choice(op, binding, numerics, bound.kernel.name)
        problem = choice_problem(analysis, bound, probe)
        if problem is None:
            valid.append(generics)
        else:
            space.filtered.append((Candidate(generics, None, None), problem))
    found = {Candidate(g, w, s) for g in valid for w in warp_set for s in stage_set}
    if header.generics in valid or _valid(analysis, bound, header, space, numerics):
        found.add(header)  # the baseline: what runs untuned
    ordered = sorted(found, key=lambda c: _distance(c, header))
    space.considered = len(ordered)
    space.candidates = ordered[:cap]
    return space


def _valid(analysis, bound: BoundKernel, cand: Candidate, space: CandidateSpace,
           numerics: str) -> bool:
    choice = cand.choice(space.op, space.binding, numerics, space.kernel)
    return choice_problem(analysis, bound, choice) is None


def _check_tries(bound: BoundKernel, tunable: dict[str, int],
                 tries: Mapping[str, Sequence[int]]) -> None:
    kernel = bound.kernel
    names = {g.name for g in kernel.generics}
    for name, values in tries.items():
        if name not in names:
            raise CandidateError(f"--try {name}: `{kernel.name}` has no generic named "
                                 f"`{name}` (tunable: {', '.join(tunable) or 'none'})")
        if name not in tunable:
            raise CandidateError(f"--try {name}: `{name}` is not tunable: "
                                 f"{not_tunable(kernel, name)} "
                                 f"(tunable: {', '.join(tunable) or 'none'})")
        if not values or not all(isinstance(v, int) and v > 0 for v in values):
            raise CandidateError(f"--try {name}: values must be positive integers")


def _values(name: str, header: int, tries: Mapping[str, Sequence[int]]) -> list[int]:
    """The values to try for one generic: those given, else the header's and its
    neighbours (half, when it halves evenly, and double)."""
    if name in tries:
        return sorted(set(tries[name]))
    found = {header, header * 2}
    if header % 2 == 0:
        found.add(header // 2)
    return sorted(found)


def _hint_values(name: str, given: Sequence[int] | None, default: Sequence[int],
                 header: int | None) -> list[int | None]:
    if given is not None:
        problems = [hint_problem(name, v) for v in given] or ["a positive integer"]
        if any(problems):
            what = next(p for p in problems if p)
            raise CandidateError(f"--{name}: each value must be {what}")
        return sorted(set(given))
    return sorted(set(default) | ({header} if header is not None else set()))


def _distance(c: Candidate, header: Candidate) -> tuple:
    """How far a candidate is from the header's choice: how many values differ, then how
    far (in factors of two), then the values themselves (a stable order)."""
    pairs = list(zip((v for _, v in c.generics), (v for _, v in header.generics)))
    pairs += [(c.warps, header.warps), (c.stages, header.stages)]
    changed = sum(a != b for a, b in pairs)
    steps = sum(abs(math.log2(a / b)) for a, b in pairs
                if a is not None and b is not None and a != b)
    return (changed, steps, c.generics, c.warps or 0, c.stages or 0)
