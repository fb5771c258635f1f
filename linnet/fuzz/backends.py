"""Compiling, loading and running one entry on one backend, and sorting what went wrong.

Why a module of its own: the corpus cross-checker (`crosscheck.py`) and the fuzzer
(`linnet.fuzz`) both push programs through every backend under a time limit and
sort each failure the same way: an internal error (`crash`), a diagnostic only compiling
gives (`late`), a time limit (`hang` while compiling or loading, `slow` while running), a
runtime index out of range (`fault`). This module holds that shared machinery; the two
callers differ only in what they compare with.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np
from .. import deepstack
from ..diagnostics import CompileError
from ..passes.front.bind_generics import UsageError
from ..pipeline import compile_source, passes_for
from ..torch.runtime import import_generated
from .jax_compare import to_jax
from .onnx_run import load_onnx
from .stablehlo_run import load_stablehlo

__all__ = ["TARGETS", "GRAD_CODES", "Timeout", "Failure", "time_limit", "classify",
           "describe", "compile_entry", "loader", "run_entry", "as_numpy", "dtype_name",
           "to_torch"]

TARGETS = ("torch", "jax", "onnx", "stablehlo")
"""The exported backends; the PyTorch interpreter (`"interpreter"`) is compiled apart."""
GRAD_CODES = frozenset({"E2128", "E2129"})
"""Diagnostics of `--grad` alone (the entry cannot be differentiated), which `check` does
not give: not findings."""


class Timeout(BaseException):
    """A stage ran past its limit (a BaseException, so library code does not catch it)."""


STUCK_EXIT = 124
"""The exit status of a worker process stuck in a stage (see `HARD_LIMIT`)."""

HARD_LIMIT: float | None = None
"""Seconds past a stage's limit after which the process exits with `STUCK_EXIT`. A fuzz
worker sets it: SIGALRM cannot interrupt native code (a kernel spinning on the GPU, a
compiler's C++), and a stuck worker would stall the whole run. None (the default) in any
other process: a library never ends its caller."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise `Timeout` in the block after `seconds` (SIGALRM: the main thread only; elsewhere
    or with `seconds <= 0` the block runs unbounded). With `HARD_LIMIT` set, a block still
    running that much later ends the process."""
    if threading.current_thread() is not threading.main_thread() or seconds <= 0:
        yield
        return

    def expire(signum, frame):  # noqa: ARG001
        raise Timeout()

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog = None
    if HARD_LIMIT is not None:
        watchdog = threading.Timer(seconds + HARD_LIMIT, os._exit, (STUCK_EXIT,))
        watchdog.daemon = True
        watchdog.start()
    try:
        yield
    except Timeout:
        if HARD_LIMIT is not None:
            _settle_compiler(HARD_LIMIT)
        raise
    finally:
        if watchdog is not None:
            watchdog.cancel()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _settle_compiler(seconds: float) -> None:
    """After a timeout, the compilation on the deep-stack thread (`linnet.deepstack`) runs
    on, and every later compilation would wait for it. A worker waits `seconds` for it to
    end, else ends itself (`STUCK_EXIT`): its later programs would all time out."""
    deadline = time.monotonic() + seconds
    while deepstack.job_running() and time.monotonic() < deadline:
        time.sleep(0.05)
    if deepstack.job_running():
        os._exit(STUCK_EXIT)


@dataclass(frozen=True)
class Failure:
    """What escaped a stage, sorted: `kind` (crash, late, hang, slow, fault), `detail` (one
    line for a person) and `signature` (the part that names the failure class: exception
    type and innermost compiler frame, or diagnostic codes; no values)."""
    kind: str
    detail: str
    signature: str


def classify(err: BaseException, stage: str, seconds: float, grad: bool = False
             ) -> Failure | None:
    """Sort an exception raised by `stage` ("check", "compile", "load", "run", ...); None
    when it is no finding (`--grad` refusing an entry it cannot differentiate)."""
    if isinstance(err, Timeout):
        kind = "slow" if stage.startswith("run") else "hang"
        return Failure(kind, f"ran past {seconds:g} s", "time limit")
    if isinstance(err, CompileError):
        codes = [d.code for d in err.diagnostics]
        if grad and set(codes) <= GRAD_CODES:
            return None
        detail = ", ".join(f"{d.code} {d.message}" for d in err.diagnostics[:3])
        return Failure("late", detail, ",".join(sorted(set(codes))))
    if isinstance(err, UsageError):
        return Failure("late", str(err), "usage: " + normalize(str(err)))
    if stage.startswith("run") and reads_out_of_range(err):
        return Failure("fault", describe(err), "index out of range")
    return Failure("crash", describe(err), signature(err))


def reads_out_of_range(err: BaseException) -> bool:
    """PyTorch's error for a runtime index out of range (`xs[t]` with a loop counter `t`
    past the axis): undefined behaviour of the program (docs/language.md, "Statements and
    expressions"), which the PyTorch targets report and XLA clamps."""
    return isinstance(err, IndexError) and re.search(
        r"index -?\d+ is out of bounds for dimension \d+ with size \d+", str(err)) is not None


def _frames(err: BaseException) -> list[traceback.FrameSummary]:
    return [f for f in traceback.extract_tb(err.__traceback__)
            if "linnet" in f.filename or "generated" in f.filename]


def describe(err: BaseException) -> str:
    """The exception and the innermost frame of the compiler or generated code."""
    frames = _frames(err)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    first = (str(err).strip().splitlines() or [""])[0][:300]
    return f"{type(err).__name__}: {first}{where}"


def signature(err: BaseException) -> str:
    """The exception's type and the innermost compiler frame (file and function, no line
    number: an edit elsewhere in the file must not split a class), or the normalized message
    when the error comes from generated code or a library."""
    package = Path(__file__).resolve().parents[1]
    harness = (package / "fuzz", package / "testing")  # the caller, not the compiler
    frames = [f for f in _frames(err) if _inside(f.filename, package)
              and not any(_inside(f.filename, h) for h in harness)]
    if frames:
        return f"{type(err).__name__} in {Path(frames[-1].filename).stem}.{frames[-1].name}"
    return f"{type(err).__name__}: {normalize(str(err))}"


def _inside(filename: str, folder: Path) -> bool:
    try:
        return Path(filename).resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False


def normalize(message: str, width: int = 80) -> str:
    """A message with its values taken out (numbers, quoted names, shapes), so that two
    occurrences of one failure read the same."""
    text = (message.strip().splitlines() or [""])[0]
    text = re.sub(r"`[^`]*`|'[^']*'|\"[^\"]*\"", "_", text)
    text = re.sub(r"\[[^\]]*\]|\([0-9, ]*\)", "[..]", text)
    text = re.sub(r"\b\w*[0-9a-f]{16,}\w*\b", "_", text)  # generated module names
    text = re.sub(r"0x[0-9a-f]+|-?\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return " ".join(text.split())[:width]


# ------------------------------------------------------------------------------------------
# Compiling and loading each target.

def compile_entry(text: str, path: str, entry: str, bind: dict, target: str,
                  numerics: str = "exact", grad: bool = False, present: Any = None) -> Any:
    """The compiled entry for `target`: the generated text (or ONNX model) of a backend, or
    the tensor IR the PyTorch interpreter runs (`target="interpreter"`, op bodies).
    `present`: a block entry's parameter paths the checkpoint holds."""
    if target == "interpreter":
        passes = [p for p in passes_for("torch") if p.name != "emit-torch"]
        return compile_source(text, path=path, entry=entry, bind=dict(bind), target="torch",
                              numerics="exact", grad=grad, passes=passes,
                              present=present).text
    return compile_source(text, path=path, entry=entry, bind=dict(bind), target=target,
                          numerics=numerics, grad=grad, present=present).text


def run_entry(path: str | Path, entry: str, target: str, inputs: Sequence[Any],
              bind: dict | None = None) -> list[np.ndarray]:
    """Compile the program at `path` for `target` (or "interpreter"), run `entry` on
    `inputs` (NumPy arrays or scalars, passed as torch tensors) and return its results as
    NumPy arrays: one program on every backend, as the tests of the language and the
    standard library run it."""
    import torch
    compiled = compile_entry(Path(path).read_text(encoding="utf-8"), str(path), entry,
                             dict(bind or {}), target)
    main = loader(target)(compiled, entry)
    return [as_numpy(r) for r in main(*(torch.as_tensor(x) for x in inputs))]


def loader(target: str) -> Callable[[Any, str], Callable[..., Sequence[Any]]]:
    """`load(compiled, entry_name)` for a target: its `main`, taking torch tensors (the
    exported targets convert them)."""
    def interpreter_main(program: Any, name: str):  # noqa: ARG001
        from ..torch.interpreter import run
        return lambda *xs: run(program, *xs)

    def torch_main(text: str, name: str):
        return import_generated(text, f"generated_{name}", "torch").main

    def jax_main(text: str, name: str):
        main = import_generated(text, f"generated_{name}", "jax").main
        return lambda *xs: main(*(to_jax(x) for x in xs))

    def onnx_main(model: Any, name: str):  # noqa: ARG001
        run = load_onnx(model)
        return lambda *xs: run(*(as_numpy(x) for x in xs))

    def stablehlo_main(text: str, name: str):  # noqa: ARG001
        run = load_stablehlo(text)
        return lambda *xs: run(*(as_numpy(x) for x in xs))

    return {"interpreter": interpreter_main, "torch": torch_main, "jax": jax_main,
            "onnx": onnx_main, "stablehlo": stablehlo_main}[target]


def dtype_name(x: Any) -> str:
    """The Linnet name of a result's dtype (`bf16`, `f32`, `i64`, `bool`, ...)."""
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    name = str(dtype).removeprefix("torch.")
    return {"bfloat16": "bf16", "float16": "f16", "float32": "f32", "float64": "f64",
            "bool": "bool"}.get(name, name.replace("uint", "u").replace("int", "i"))


def as_numpy(x: Any) -> np.ndarray:
    """A result as a NumPy array; bf16 as f32 (exactly)."""
    if hasattr(x, "detach"):
        import torch
        x = x.detach().cpu()
        return (x.float() if x.dtype == torch.bfloat16 else x).numpy()
    array = np.asarray(x)
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def to_torch(x: Any, device: str = "cpu") -> Any:
    """A NumPy input as the torch tensor a generated `main` takes (bf16 through f32,
    exactly)."""
    import torch
    x = np.asarray(x)
    if x.dtype.name == "bfloat16":
        return torch.from_numpy(np.array(x.astype(np.float32))).to(torch.bfloat16).to(device)
    return torch.from_numpy(np.array(x, order="C")).to(device)
