"""The forward run of a module-level entry as users call it: through the runtime's callable
(`linnet.torch.load_function(path, entry, compile=False)`, the PyTorch interpreter behind
it), not through the compiled program's `main`.

Why: the callable shapes what `main` gives (one tensor, or a tuple for a tuple result) from
the entry's checked signature, not from the compiled program; a signature that reads wrong
(an entry without `-> T` taken for one returning a single value) returns a tuple result's
first item only, while every generated `main` is right. Running the interpreter attempt
this way holds that shaping to the oracle too, at no extra compile: the callable compiles
the same op bodies the interpreter attempt did. A root block's entry runs through its model
(`autograd.py`), so it keeps the compiled program's `main` here.
"""

from __future__ import annotations

from typing import Any, Callable

from ..passes.front.block_entry import choose_root
from ..torch.loader import EntryFunction, checked
from .case import Case

__all__ = ["module_entry", "interpreter_function", "as_outputs"]


def module_entry(case: Case, path: str) -> bool:
    """Is the case's entry a module-level one (no root block's)?"""
    info = choose_root(checked(case.text, path), None, case.entry)
    return info is None or case.entry not in info.fns


def interpreter_function(case: Case, path: str, inputs: list) -> Callable[..., Any]:
    """`load_function(compile=False)`'s callable for the entry, its binding for these
    inputs (and the case's generics no input determines) compiled now."""
    fn = EntryFunction(path, case.text, case.entry, False, "exact", None)
    values = fn.binding_for(tuple(inputs), complete=False)
    fn.prepare(*inputs, **{k: v for k, v in case.generics.items() if k not in values})
    return fn


def as_outputs(result: Any) -> list:
    """The callable's result as the list of outputs `main` gives: a tuple's items, else
    the one value."""
    return list(result) if isinstance(result, tuple) else [result]
