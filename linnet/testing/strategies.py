"""Hypothesis strategies over an op's sizes and inputs.

    from hypothesis import given
    from linnet.fuzz import compare_kernel_and_body, target_spec
    from linnet.testing.strategies import cases

    SPEC = target_spec("examples/softmax.linnet", "softmax")

    @given(cases(SPEC, max_dim=130))
    def test_softmax(case):
        result = compare_kernel_and_body(SPEC.path, "softmax", case.inputs)
        assert result.ok, str(result)

`generic_values(spec)` draws a value for every generic: each `Dim` from small sizes (1 and
up), the sizes around each tile size and constant bound of the `where` clauses (`T - 1`,
`T`, `T + 1`, `2T + 1`: the ragged edges), and any size up to `max_dim`, then keeps only
draws that satisfy both the op's `where` clause and its kernel's (so the kernel, not the
body, runs). Shrinking goes towards 1 and the small sizes. `cases(spec)` adds inputs: a
seed and a value style (`INPUT_STYLES`), from which `make_inputs` builds the tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from hypothesis import strategies as st

from ..fuzz.harness import (INPUT_STYLES, Override, TargetSpec, dtype_choices, make_inputs,
                            target_spec)

__all__ = ["dim_values", "generic_values", "input_values", "cases", "Case", "spec_of"]


def spec_of(spec_or_path: TargetSpec | str, name: str | None = None) -> TargetSpec:
    if isinstance(spec_or_path, TargetSpec):
        return spec_or_path
    if name is None:
        raise TypeError("give a TargetSpec, or a path and an op or entry name")
    return target_spec(spec_or_path, name)


def dim_values(spec: TargetSpec, name: str, lo: int = 1, hi: int = 130) -> st.SearchStrategy[int]:
    """One `Dim` generic: the interesting sizes of `spec.candidates`, or any in [lo, hi]."""
    picks = [c for c in spec.candidates(name, hi) if c >= lo]
    return st.one_of(st.sampled_from(picks), st.integers(lo, hi)) if picks \
        else st.integers(lo, hi)


def generic_values(spec: TargetSpec, *, max_dim: int = 130,
                   ranges: Mapping[str, tuple[int, int]] | None = None,
                   dtypes: Mapping[str, Sequence[str]] | None = None,
                   max_elements: int | None = None, kernel: bool = True
                   ) -> st.SearchStrategy[dict[str, Any]]:
    """Values for every generic of `spec` that satisfy the `where` clauses (with the
    kernel's when `kernel`); `ranges` bounds single dims, `dtypes` lists the dtypes to try
    for a dtype generic, `max_elements` bounds the elements of the largest input."""
    ranges = ranges or {}
    fields: dict[str, st.SearchStrategy] = {}
    for g in spec.generics:
        if g.kind == "Dim":
            fields[g.name] = dim_values(spec, g.name, *ranges.get(g.name, (1, max_dim)))
        elif g.pack:
            raise NotImplementedError(f"{spec.label}: shape packs are not drawn")
        else:
            fields[g.name] = st.sampled_from(list(dtype_choices(g, dtypes)))
    check = spec.satisfies if kernel else spec.allows

    def fits(values: dict[str, Any]) -> bool:
        if not check(values):
            return False
        if max_elements is None:
            return True
        return all(math.prod(shape) <= max_elements for shape, _ in spec.shapes(values))

    return st.fixed_dictionaries(fields).filter(fits)


@dataclass(frozen=True)
class Case:
    """Generic values, the inputs made from them, and how they were made."""
    values: dict[str, Any]
    inputs: list
    style: str
    seed: int
    shown: str

    def __repr__(self) -> str:  # hypothesis prints this for a falsifying example
        return f"Case({self.shown}, style={self.style!r}, seed={self.seed})"


def input_values(spec: TargetSpec, values: Mapping[str, Any], *,
                 styles: Sequence[str] = ("normal", "uniform"),
                 overrides: Mapping[str, Override] | None = None,
                 device: str | None = None) -> st.SearchStrategy[Case]:
    """Inputs for fixed generic values: a style among `styles` and a seed."""
    for s in styles:
        if s not in INPUT_STYLES:
            raise ValueError(f"unknown input style {s!r}; one of {sorted(INPUT_STYLES)}")

    def build(style: str, seed: int) -> Case:
        inputs = make_inputs(spec, values, seed=seed, style=style, overrides=overrides,
                             device=device)
        shown = f"{spec.describe(values)}; {spec.describe_inputs(values)}"
        return Case(dict(values), inputs, style, seed, shown)

    return st.builds(build, st.sampled_from(list(styles)), st.integers(0, 2**31 - 1))


def cases(spec: TargetSpec, *, max_dim: int = 130,
          ranges: Mapping[str, tuple[int, int]] | None = None,
          dtypes: Mapping[str, Sequence[str]] | None = None,
          max_elements: int | None = None, kernel: bool = True,
          styles: Sequence[str] = ("normal", "uniform"),
          overrides: Mapping[str, Override] | None = None,
          device: str | None = None) -> st.SearchStrategy[Case]:
    """Generic values (`generic_values`) and random inputs for them (`input_values`)."""
    return generic_values(spec, max_dim=max_dim, ranges=ranges, dtypes=dtypes,
                          max_elements=max_elements, kernel=kernel).flatmap(
        lambda values: input_values(spec, values, styles=styles, overrides=overrides,
                                    device=device))
