"""The measuring loop shared by every case: groups of implementations on the same inputs.

A case makes one `Group` per configuration (shape, dtype, pass) with `Suite.group`, and adds
each implementation with `Group.add(key, name, make, check)`. `make()` builds what will be
timed (loading an entry, compiling, preparing a backward graph) and returns a zero-argument
callable, or a `Timed` that adds a note or the tensors whose gradients are reset between
calls. The callable is called once (its wall time, compile included, is `first_call_s`:
everyone is warm before timing), its result is checked by `check(result) -> max error`, and
only a result within the group's tolerance is timed. Anything that goes wrong becomes a row
(`missing`, `error` or `wrong`) and the run goes on.

Timing: torch and Triton calls use `triton.testing.do_bench` (the median, L2 flushed before
each call); JAX calls run on JAX's own streams, which CUDA events on torch's stream do not
see, so they are timed by `JaxSide.time` (back-to-back calls synchronized once, the median
of rounds), as `benchmarks/pallas.py` did.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import time
import traceback
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
BASELINE, PALLAS = "linnet", "linnet_pallas"  # the keys the ratios are taken against


class Missing(Exception):
    """An implementation that is not there (an absent entry, hand kernel or JAX)."""


@dataclass
class Timed:
    """What `make()` may return instead of a bare callable: `noted()` gives a note once the
    first call has run (what it ran), `peak_memory` asks for the peak memory of one call."""
    run: Callable[[], Any]
    note: str = ""
    grad_to_none: list | None = None
    noted: Callable[[], str] | None = None
    peak_memory: bool = False


@dataclass
class Row:
    """One implementation at one configuration; `status` is ok, wrong, error or missing."""
    case: str
    config: str
    dtype: str
    step: str
    key: str
    impl: str
    family: str
    unit: str
    status: str = "ok"
    ms: float | None = None
    throughput: float | None = None
    max_error: float | None = None
    tolerance: float | None = None
    vs_linnet: float | None = None
    vs_pallas: float | None = None
    first_call_s: float | None = None
    peak_bytes: float | None = None  # over one call, beyond what was allocated before it
    timer: str = ""
    note: str = ""
    error: str = ""


@dataclass
class Settings:
    """How long each measurement runs (milliseconds of do_bench's warmup and repetitions)."""
    warmup_ms: int = 25
    rep_ms: int = 100
    jax_rounds: int = 5

    @classmethod
    def quick(cls) -> "Settings":
        return cls(warmup_ms=10, rep_ms=40, jax_rounds=3)


@dataclass
class Suite:
    """The rows of one run, and what every group needs (settings, the JAX side)."""
    settings: Settings
    jax: Any  # benchmarks.gpu.jax_side.JaxSide
    device: str = "cuda"
    torch_timer: Callable[..., float] | None = None  # do_bench unless set (a CPU dry run)
    rows: list[Row] = field(default_factory=list)
    _entries: dict = field(default_factory=dict)
    _arrays: dict = field(default_factory=dict)

    def seeded(self, seed: int) -> torch.Generator:
        """A generator on the suite's device, so that every run draws the same inputs."""
        return torch.Generator(device=self.device).manual_seed(seed)

    def sync(self) -> None:
        if self.device == "cuda":
            torch.cuda.synchronize()

    def group(self, case: str, config: str, dtype: str, *, unit: str, work: float,
              tolerance: float, step: str = "") -> "Group":
        return Group(self, case, config, dtype, step, unit, work, tolerance)

    def linnet(self, example: str, entry: str, numerics: str = "equivalent",
               target: str = "torch") -> Callable:
        """The entry `entry` of `examples/<example>.linnet` (`Missing` if it has none),
        loaded once per run so that its compiled bindings are reused."""
        key = (example, entry, numerics, target)
        if key not in self._entries:
            path = EXAMPLES / f"{example}.linnet"
            if entry not in entry_names(path):
                raise Missing(f"examples/{example}.linnet has no entry {entry}")
            if target == "jax":
                self.jax.require()  # Missing, with the reason, where JAX is not usable
                from linnet.jax import load_function
                self._entries[key] = load_function(str(path), entry, numerics=numerics)
            else:
                from linnet.torch import load_function
                self._entries[key] = load_function(str(path), entry, numerics=numerics)
        return self._entries[key]

    def jax_args(self, *tensors: torch.Tensor) -> tuple:
        """The tensors as JAX arrays (exact copies), each made once and dropped with its
        tensor."""
        return tuple(self._jax_array(t) for t in tensors)

    def _jax_array(self, t: torch.Tensor) -> Any:
        key = id(t)
        held = self._arrays.get(key)
        if held is None or held[0]() is not t:
            gone = weakref.ref(t, lambda _, k=key: self._arrays.pop(k, None))
            held = self._arrays[key] = (gone, self.jax.array(t))
        return held[1]

    def failed(self, case: str, err: BaseException, config: str = "(case)",
               dtype: str = "") -> None:
        """A case, or one of its configurations, that broke outside any group."""
        self.rows.append(Row(case, config, dtype, "", "(setup)", "(setup)", "", "",
                             status="error", error=describe(err)))

    @contextlib.contextmanager
    def guard(self, case: str, config: str, dtype: str) -> Iterator[None]:
        """Preparing a configuration's inputs: a failure is recorded and the case goes on."""
        try:
            yield
        except Exception as err:
            self.failed(case, err, config, dtype)
        finally:
            gc.collect()
            torch.cuda.empty_cache()


@dataclass
class Group:
    """The implementations of one configuration, measured on the same inputs.

    Used as a context manager: an exception inside the block (making inputs or the
    reference) is recorded as a `(setup)` row, and on exit the ratios are filled in and
    torch's cached memory is released."""
    suite: Suite
    case: str
    config: str
    dtype: str
    step: str
    unit: str
    work: float  # bytes moved (GB/s) or floating-point operations (TFLOP/s)
    tolerance: float
    rows: list[Row] = field(default_factory=list)

    def __enter__(self) -> "Group":
        return self

    def __exit__(self, kind, err, tb) -> bool:
        if err is not None:
            row = self._row("(setup)", "(setup)", "")
            row.status, row.error = "error", describe(err)
        self._ratios()
        torch.cuda.empty_cache()
        return err is None or isinstance(err, Exception)

    def add(self, key: str, impl: str, make: Callable[[], Any],
            check: Callable[[Any], float], family: str = "torch", note: str = "") -> Row:
        """Make, call once, check, then time one implementation; never raises."""
        row = self._row(key, impl, family)
        row.note, row.tolerance = note, self.tolerance
        try:
            timed = make()
            timed = timed if isinstance(timed, Timed) else Timed(timed)
            row.note = "; ".join(n for n in (note, timed.note) if n)
            self._measure(row, timed, check)
        except Missing as err:
            row.status, row.error = "missing", str(err)
        except Exception as err:  # one implementation must never stop the run
            row.status, row.error = "error", describe(err)
        return row

    def _measure(self, row: Row, timed: Timed, check: Callable[[Any], float]) -> None:
        start = time.perf_counter()
        out = timed.run()
        self._sync(row.family, out)
        row.first_call_s = time.perf_counter() - start
        if timed.noted is not None:
            row.note = "; ".join(n for n in (row.note, timed.noted()) if n)
        row.max_error = float(check(out))
        del out
        if not row.max_error <= self.tolerance:  # NaN too
            row.status = "wrong"
            row.error = f"max error {row.max_error:.2e} above the tolerance {self.tolerance:.0e}"
            return
        if timed.peak_memory and self.suite.device == "cuda":
            row.peak_bytes = peak_bytes(timed)
        row.ms, row.timer = self._time(row.family, timed)
        row.throughput = self.work / row.ms / (1e6 if self.unit == "GB/s" else 1e9)

    def _row(self, key: str, impl: str, family: str) -> Row:
        row = Row(self.case, self.config, self.dtype, self.step, key, impl, family, self.unit)
        self.rows.append(row)
        self.suite.rows.append(row)
        return row

    def _sync(self, family: str, out: Any) -> None:
        if family == "jax":
            self.suite.jax.block(out)
        else:
            self.suite.sync()

    def _time(self, family: str, timed: Timed) -> tuple[float, str]:
        s = self.suite.settings
        if family == "jax":
            self.suite.sync()
            return self.suite.jax.time(timed.run, s.rep_ms, s.jax_rounds), "jax-pipelined"
        if self.suite.torch_timer is not None:
            return float(self.suite.torch_timer(timed.run, timed.grad_to_none)), "custom"
        import triton.testing
        ms = triton.testing.do_bench(timed.run, warmup=s.warmup_ms, rep=s.rep_ms,
                                     grad_to_none=timed.grad_to_none, return_mode="median")
        return float(ms), "do_bench"

    def _ratios(self) -> None:
        """Each time over Linnet's (and, for JAX rows, over Linnet's Pallas kernel's)."""
        times = {r.key: r.ms for r in self.rows if r.ms}
        for r in self.rows:
            if r.ms and times.get(BASELINE):
                r.vs_linnet = r.ms / times[BASELINE]
            if r.ms and r.family == "jax" and times.get(PALLAS):
                r.vs_pallas = r.ms / times[PALLAS]


def peak_bytes(timed: Timed) -> float:
    """The most CUDA memory one call allocated beyond what was allocated before it (its
    gradients reset first, as between timed calls)."""
    for t in timed.grad_to_none or ():
        t.grad = None
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    out = timed.run()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    del out
    return float(peak)


def rel_error(out: Any, ref: torch.Tensor | Iterable[torch.Tensor]) -> float:
    """The largest difference from the reference, relative to the reference's largest entry
    (the worst over a tuple of results); JAX and NumPy arrays are accepted."""
    if isinstance(ref, (tuple, list)):
        if len(out) != len(ref):
            raise ValueError(f"{len(out)} results, expected {len(ref)}")
        return max(rel_error(o, r) for o, r in zip(out, ref))
    if out is None:
        raise ValueError("no result (a gradient was not computed)")
    if not isinstance(out, torch.Tensor):
        out = torch.from_numpy(np.array(out, dtype=np.float32)).to(ref.device)
    if tuple(out.shape) != tuple(ref.shape):
        raise ValueError(f"result shape {list(out.shape)}, expected {list(ref.shape)}")
    top = ref.abs().max().double()
    return ((out.double() - ref.double()).abs().max() / top).item()


def hand(name: str, *functions: str) -> Any:
    """`benchmarks/hand/<name>.py`, imported when first needed; `Missing` if the module or
    one of `functions` is absent (a kernel being written elsewhere)."""
    module_name = f"benchmarks.hand.{name}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name in (module_name, "benchmarks.hand"):
            raise Missing(f"benchmarks/hand/{name}.py is not there") from None
        raise
    for fn in functions:
        if not hasattr(module, fn):
            raise Missing(f"benchmarks/hand/{name}.py has no {fn}()")
    return module


_ENTRY_NAMES: dict[Path, set[str]] = {}


def entry_names(path: Path) -> set[str]:
    """The entries of a Linnet program (checked once); a program with errors raises."""
    if path not in _ENTRY_NAMES:
        from linnet.diagnostics import render
        from linnet.check.frontend import check_program
        from linnet.torch import LinnetError
        result = check_program(str(path))
        if not result.ok:
            raise LinnetError("\n\n".join(render(d, result.sources) for d in result.diagnostics))
        _ENTRY_NAMES[path] = {i.name for i in result.program.root_module.items
                              if getattr(i, "kind", None) == "entry"}
    return _ENTRY_NAMES[path]


def describe(err: BaseException, limit: int = 2000) -> str:
    """An exception as one string for the JSON: its type, message and innermost frame."""
    text = f"{type(err).__name__}: {err}".strip()
    frames = traceback.extract_tb(err.__traceback__)
    if frames:
        last = frames[-1]
        text += f" (at {Path(last.filename).name}:{last.lineno})"
    return text if len(text) <= limit else text[:limit] + " ..."


def as_dicts(rows: list[Row]) -> list[dict]:
    return [asdict(r) for r in rows]
