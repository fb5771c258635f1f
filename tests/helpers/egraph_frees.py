"""Freeing a test's e-graphs after it, cheaply: the fixtures the e-graph test files import.

Why: egglog's Rust e-graph must be dropped on the thread that made it, and a Python e-graph
left in a reference cycle dies only at a cyclic collection, which might run later on
another thread (the compiler's deep-stack worker). So each test ends with `gc.collect()`,
on its own thread. A full collection walks every object the process holds: under xdist, a
worker that already ran other files (torch, JAX, compiled modules) takes about half a
second each time. The objects older than the file cannot hold its e-graphs, so the file
freezes them first (`gc.freeze`: the collector skips them) and gives them back after its
last test (`gc.unfreeze`); each test's collection then walks only what the file made.

Use: `from egraph_frees import free_egraphs, older_objects_frozen  # noqa: F401`.
"""

from __future__ import annotations

import gc
from typing import Iterator

import pytest


@pytest.fixture(scope="module")
def older_objects_frozen() -> Iterator[None]:
    """What the process held before this file (its garbage collected first, here) is left
    out of the collections until the file's last test ends."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(autouse=True)
def free_egraphs(older_objects_frozen: None) -> Iterator[None]:
    """Drop the e-graphs a test made, on the test's thread, before the next test starts."""
    yield
    gc.collect()
