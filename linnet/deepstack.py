"""Running the compiler on a deep stack.

The checker and the passes walk expressions recursively, and a program may
legitimately hold a 5,000-term sum or a long `else if` chain. Rather than rewrite
every walk as a loop, compilation runs on a worker thread with a large stack and
a high recursion limit; what still overflows becomes a diagnostic (E1006).

There is one such worker per process, started on first use and kept: state that
must stay on one thread lives there across compilations (egglog's e-graphs may
only be used, and dropped, on the thread that made them, and the e-graph passes
keep theirs per thread, declared once). Calls from several threads take turns;
a call made on the worker itself (a pass calling the checker) runs directly.
"""

from __future__ import annotations

import atexit
import gc
import queue
import sys
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

R = TypeVar("R")
STACK_BYTES = 512 * 1024 * 1024
RECURSION_LIMIT = 200_000
_WORKER_NAME = "linnet-compile"

_JOBS: "queue.Queue[Callable[[], None]]" = queue.Queue()
_START = threading.Lock()
_TURN = threading.Lock()  # one job at a time: the recursion limit is process-wide
_worker: threading.Thread | None = None
_BUSY = threading.Event()  # set while the worker runs a job


def job_running() -> bool:
    """Is the worker running a job? (After Ctrl-C, the caller stopped waiting for it.)"""
    return _BUSY.is_set()


def on_deep_stack() -> bool:
    """True inside a job run by `call_with_deep_stack` (its stack is already deep)."""
    return threading.current_thread().name == _WORKER_NAME


def call_with_deep_stack(job: Callable[[], R]) -> R:
    """Run job on the deep-stack worker and wait for it; re-raise whatever it raised."""
    if on_deep_stack():
        return job()
    outcome: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        _BUSY.set()
        try:
            with collector_paused():
                outcome["value"] = job()
        except BaseException as err:  # noqa: BLE001 - handed back to the caller
            outcome["error"] = err
        finally:
            _BUSY.clear()
            done.set()

    with _TURN:
        old_limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old_limit, RECURSION_LIMIT))
        try:
            _ensure_worker()
            _JOBS.put(run)
            done.wait()
        finally:
            sys.setrecursionlimit(old_limit)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a compilation runs; one young collection after.

    A compilation allocates millions of objects that live until it ends (trees, types,
    the IR of each pass: immutable, and nearly all without cycles, which reference
    counting frees). The collector's full collections walk every one of them again and
    again: a third of compiling a `[Leaf; 32768]` sub array. Paused, the few cycles made
    meanwhile (thousands of objects) are collected once at the end, here, on the worker,
    where the e-graphs among them must die. A collector the caller had disabled stays so."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect(0)  # what the job left is all young: the collector did not run


def _ensure_worker() -> None:
    global _worker
    with _START:
        if _worker is not None and _worker.is_alive():
            return
        old_stack = threading.stack_size()
        threading.stack_size(STACK_BYTES)
        try:
            _worker = threading.Thread(target=_serve, name=_WORKER_NAME, daemon=True)
            _worker.start()
        finally:
            threading.stack_size(old_stack)


def _serve() -> None:
    while (job := _JOBS.get()) is not _STOP:
        job()
    gc.collect()  # e-graphs left in reference cycles by past jobs die here, on their thread


def _STOP() -> None:
    """Posted at exit: the worker returns, so its thread-local state (e-graphs) is freed
    on its own thread, not by the interpreter's shutdown on another one."""


@atexit.register
def _stop_worker() -> None:
    if _worker is not None and _worker.is_alive():
        _JOBS.put(_STOP)
        _worker.join(timeout=10)
