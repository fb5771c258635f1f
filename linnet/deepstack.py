"""Running the compiler on a deep stack.

The checker walks expressions recursively, and a program may legitimately
hold a 5,000-term sum or a long `else if` chain. Rather than rewrite every
walk as a loop, compilation runs on a worker thread with a large stack and a
high recursion limit; what still overflows becomes a diagnostic (E1006).
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

R = TypeVar("R")
STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000


_WORKER_NAME = "linnet-compile"


def on_deep_stack() -> bool:
    """True inside a job run by `call_with_deep_stack` (its stack is already deep)."""
    return threading.current_thread().name == _WORKER_NAME


def call_with_deep_stack(job: Callable[[], R]) -> R:
    """Run job on a thread with a deep stack; re-raise whatever it raised.

    Nested calls (a pass run by the pipeline, itself on a deep stack) run the job
    directly rather than starting another thread."""
    if on_deep_stack():
        return job()
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = job()
        except BaseException as err:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = err

    old_limit, old_stack = sys.getrecursionlimit(), threading.stack_size()
    sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
    threading.stack_size(STACK_BYTES)
    try:
        worker = threading.Thread(target=target, name=_WORKER_NAME)
        worker.start()
    finally:
        threading.stack_size(old_stack)
    worker.join()
    sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]
