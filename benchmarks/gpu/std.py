"""The standard library's ops with kernels, each imported by a tiny program (`use
std.nn.norm::{rms_norm_2d}` and one entry) and loaded with `linnet.torch.load_function`,
forward and forward+backward, f32 and bf16, at the sizes of LLM training and serving
(benchmarks/gpu/std_ops.py lists the ops and their sizes).

Against: `torch.compile` of the plain torch expression of the same computation, and
Liger-Kernel's function for the op where it has one (`liger_kernel.ops`; "liger-kernel not
installed" where it is absent); attention also against `F.scaled_dot_product_attention` with
the cuDNN and flash backends (for f32, which flash does not take, the memory-efficient one),
and attention under a mask given as an input (a sliding window, a padding mask per batch
row) with the backends that take a bool mask: the memory-efficient one (grouped heads
repeated, as it takes no `enable_gqa`) and the math one, and for bf16 cuDNN's, whose row
records whether this torch's takes one; conv2d also against `F.conv2d` itself (cuDNN, in its
benchmark mode: the fastest of its algorithms for each shape). An op that the tree's std
module does not have is recorded as missing with the reason; an op whose binding has no
kernel runs its body and says so in its note (attention is then recorded as missing: its
body holds every score). Each Linnet note names the kernels that ran (`ran()` counts).

The forward+backward pass is one timed call: y = f(inputs that require grad), then
y.backward(dy) (1 for a loss), the gradients reset to None between calls outside the timing.
Its peak memory is `torch.cuda.max_memory_allocated` over one such call, above what was
allocated before it. f32 products run at full precision everywhere (no TF32, in cuBLAS and
cuDNN). Memory-bound ops count the bytes one call must move at least (the inputs read and
the result written; with the backward, dy read and the gradients written too) and are
reported in TB/s and as a share of the device's bandwidth, measured in the same run by a
device-to-device copy (the "copy" row; else the published peak of the device); attention,
convolutions and products count FLOPs (attention: 4·H·D for each (query, key) pair a batch
row's mask keeps, so 4·B·H·L·S·D forward, halved when causal, 3.5 times that with the
backward; conv2d: 2·B·Cout·Ho·Wo·Cin·K² forward, 3 times that with the backward). The goal
of each row is at or above 1.0x the fastest of torch.compile and Liger (attention: SDPA
cuDNN's; masked attention: the fastest SDPA backend that takes the mask; conv2d: cuDNN's),
and memory-bound kernels at 85% of the bandwidth or more.
"""

from __future__ import annotations

import functools
import importlib
import re
import tempfile
from functools import partial
from pathlib import Path
from typing import Any, Callable

import torch

from .harness import ROOT, Missing, Suite, Timed, rel_error
from .std_ops import OPS, Inputs, Op, float64_reference

CASE = "std"
STD = ROOT / "linnet" / "std"
DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16}
STEPS = ("forward", "forward+backward")
COPY_BYTES = 4 << 30  # the bandwidth probe: a device-to-device copy of this many bytes
PUBLISHED_GBS = (("H200", 4800.0), ("H100 PCIe", 2000.0), ("H100", 3350.0))  # first match


def run(suite: Suite, ops: list[str] | None = None) -> dict:
    """Every op of OPS (only those named in `ops`, by item or label, if given): one op's
    failure is recorded and the next goes on. What the tables need beyond the rows (the
    bandwidth that shares are of) is returned."""
    torch.backends.cuda.matmul.allow_tf32 = False
    facts = {"bandwidth": bandwidth(suite)}
    folder = Path(tempfile.mkdtemp(prefix="linnet-std-bench-"))
    # cuDNN's convolutions at full f32 precision too, each shape with the fastest of its
    # algorithms (timed on its first call, as a convnet's training asks for)
    with torch.backends.cudnn.flags(enabled=True, benchmark=True, allow_tf32=False):
        for op in OPS:
            if ops and op.item not in ops and op.name not in ops:
                continue
            try:
                run_op(suite, op, folder)
            except Exception as err:
                suite.failed(CASE, err, config=op.name)
    return facts


def bandwidth(suite: Suite) -> dict:
    """The device's memory bandwidth in GB/s: a copy of COPY_BYTES timed now (a row of the
    table) and the published peak of the device by its name (None where not known)."""
    name = torch.cuda.get_device_name() if suite.device == "cuda" else suite.device
    published = next((gbs for key, gbs in PUBLISHED_GBS if key in name), None)
    row = None
    with suite.group(
            CASE, f"copy {COPY_BYTES >> 20} MiB", "u8", unit="GB/s", work=2 * COPY_BYTES,
            tolerance=0.0, step="forward") as g:
        src = torch.randint(0, 255, (COPY_BYTES,), dtype=torch.uint8, device=suite.device,
                            generator=suite.seeded(0))
        dst = torch.empty_like(src)
        row = g.add("copy", "device-to-device copy (Tensor.copy_)",
                    lambda: partial(dst.copy_, src), lambda out: float((out != src).any()))
        del src, dst
    return {"device": name, "measured_gbs": row.throughput if row else None,
            "published_gbs": published}


def run_op(suite: Suite, op: Op, folder: Path) -> None:
    """One op at each dtype and shape, forward and forward+backward, on the same inputs."""
    path = folder / f"{op.name.replace(' ', '_')}.linnet"
    path.write_text(op.program())
    linnet = Linnet(op, path)
    compiled = torch.compile(op.torch_fn, dynamic=False)
    for dtype_name, dtype in DTYPES.items():
        for shape in op.shapes:
            with suite.guard(CASE, f"{op.name} {shape.label}", dtype_name):
                inputs, dy = op.make(shape.sizes, dtype, suite.seeded(len(shape.label)),
                                     suite.device)
                ref = (op.reference or partial(float64_reference, op.torch_fn))(
                    inputs, op.grads, dy)
                for step, tolerance in zip(STEPS, op.tolerance[dtype_name]):
                    grads = op.grads if step != "forward" else ()
                    check = partial(rel_error, ref=(ref[0], *ref[1]) if grads else ref[0])
                    with suite.group(CASE, f"{op.name} {shape.label}", dtype_name,
                                     unit=op.unit, work=op.work(shape.sizes, element(inputs),
                                                                 step),
                                     tolerance=tolerance, step=step) as g:
                        add_rows(g, op, (linnet, compiled), inputs, grads, dy, check)
                del inputs, dy, ref


def element(inputs: Inputs) -> int:
    """The bytes of an element of the first floating input (the op's T)."""
    return next(x for x in inputs if torch.is_tensor(x) and x.is_floating_point()).element_size()


def add_rows(g, op: Op, impls: tuple, inputs: Inputs, grads: tuple[int, ...], dy,
             check: Callable) -> None:
    linnet, compiled = impls
    g.add("linnet", "Linnet", lambda: linnet.timed(inputs, grads, dy), check)
    g.add("compile", "torch.compile(torch expression)",
          lambda: timed_call(compiled, inputs, grads, dy), check)
    if op.eager:
        g.add("eager", op.eager, lambda: timed_call(op.torch_fn, inputs, grads, dy), check)
    if op.liger is not None:
        g.add("liger", "Liger-Kernel", lambda: liger_call(op, inputs, grads, dy), check)
    if op.sdpa:
        sdpa_rows(g, inputs, grads, dy, check, causal=op.name.endswith("causal"))


class Linnet:
    """The op's program, loaded when first called (missing where the std has no such item)."""

    def __init__(self, op: Op, path: Path) -> None:
        self.op, self.path = op, path

    @functools.cached_property
    def function(self):
        absent = missing_item(self.op)
        if absent:
            raise Missing(absent)
        from linnet.torch import load_function
        return load_function(str(self.path), "run", tuning=False)

    def timed(self, inputs: Inputs, grads: tuple[int, ...], dy) -> Timed:
        """The entry's call, noting after the first one what ran; missing where the op must
        have a kernel and this binding has none."""
        fn = self.function
        fn.prepare(*inputs)
        if self.op.needs_kernel and not kernel_names(self.op, fn.ran()):
            raise Missing(f"{self.op.item} has no kernel in this binding (its body would run)")
        before = fn.ran()
        timed = timed_call(fn, inputs, grads, dy)
        timed.noted = lambda: ran_note(self.op, since(fn.ran(), before))
        return timed


def missing_item(op: Op) -> str | None:
    """Why the op cannot be imported from the tree's std: its module or item is absent."""
    path = STD.joinpath(*op.module.split(".")[1:]).with_suffix(".linnet")
    if not path.exists():
        return f"{op.module} is not in this tree's std ({path.relative_to(ROOT)})"
    if not re.search(rf"\bpub\s+(op|fn)\s+{re.escape(op.item)}\b", path.read_text()):
        return f"{op.module} in this tree has no {op.item} (not written yet)"
    return None


def since(ran: dict, before: dict) -> dict:
    """`ran()`'s counts less those of an earlier `ran()`: what the calls between ran."""
    zero = {"kernel": 0, "body": 0}
    return {name: {k: c[k] - before.get(name, zero)[k] for k in zero} for name, c in ran.items()}


def kernel_names(op: Op, ran: dict) -> list[str]:
    """The ops listed by `ran()` whose kernels are this op's (named with one of its
    `kernels`, or with its item)."""
    prefixes = op.kernels or (op.item,)
    return sorted({name.split("__")[0] for name in ran
                   if name.split("__")[0].startswith(prefixes)})


def ran_note(op: Op, ran: dict) -> str:
    """"kernels: rms_norm_2d 26, rms_norm_backward 25", or that the body ran."""
    counts: dict[str, list[int]] = {}
    for name, c in ran.items():
        seen = counts.setdefault(name.split("__")[0], [0, 0])
        seen[0] += c["kernel"]
        seen[1] += c["body"]
    kernels = [f"{n} {k}" for n, (k, _) in sorted(counts.items()) if k]
    bodies = [n for n, (_, b) in sorted(counts.items()) if b]
    if not kernel_names(op, {n: c for n, c in ran.items() if c["kernel"]}):
        return "the body ran: no kernel in this binding" + (
            f" (kernels of inner ops: {', '.join(kernels)})" if kernels else "")
    return "kernels: " + ", ".join(kernels) + (f"; bodies: {', '.join(bodies)}" if bodies else "")


def timed_call(fn: Callable, inputs: Inputs, grads: tuple[int, ...], dy) -> Timed:
    """The forward call; or, with `grads`, y = fn(inputs, those requiring grad), then
    y.backward(dy), returning y and the gradients (reset to None between timed calls)."""
    if not grads:
        return Timed(partial(fn, *inputs))
    leaves = [x.detach().clone().requires_grad_() if k in grads else x
              for k, x in enumerate(inputs)]
    wanted = [leaves[k] for k in grads]

    def step():
        y = fn(*leaves)
        y.backward(dy)
        return (y.detach(), *(t.grad for t in wanted))
    return Timed(step, grad_to_none=wanted, peak_memory=True)


def liger_call(op: Op, inputs: Inputs, grads: tuple[int, ...], dy) -> Timed:
    """Liger's function on copies of the inputs (its cross entropy stores the gradient into
    the logits, its rope rotates in place), in its own layout where it has one."""
    fn = liger_function(op)
    inputs = tuple(x.clone() if torch.is_tensor(x) else x for x in inputs)
    if op.liger_layout is not None:
        inputs, dy = op.liger_layout(inputs, dy)
    return timed_call(fn, inputs, grads, dy)


def liger_function(op: Op) -> Callable:
    """The op's Liger function; Missing where liger-kernel is not installed."""
    try:
        ops = importlib.import_module("liger_kernel.ops")
    except ModuleNotFoundError as err:
        if (err.name or "").split(".")[0] == "liger_kernel":
            raise Missing("liger-kernel not installed") from None
        raise
    return op.liger(ops)


def sdpa_rows(g, inputs: Inputs, grads: tuple[int, ...], dy, check: Callable,
              causal: bool) -> None:
    """F.scaled_dot_product_attention on the op's inputs (q, k, v, scale and, for the masked
    ops, a bool mask: true where seen, [L, S] or [B, L, S] given as [B, 1, L, S]), with each
    backend of `sdpa_backends`; grouped heads through `enable_gqa`, or repeated to the query
    heads for a backend that does not take it."""
    from torch.nn.attention import sdpa_kernel
    masked = len(inputs) > 4

    def sdpa(backend: Any, repeat: bool, q, k, v, scale: float, mask=None):
        if repeat and k.shape[1] != q.shape[1]:
            k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], dim=1) for t in (k, v))
        if mask is not None and mask.dim() == 3:
            mask = mask[:, None]
        with sdpa_kernel(backend):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=mask, scale=scale, is_causal=causal,
                enable_gqa=k.shape[1] != q.shape[1])
    grouped = inputs[1].shape[1] != inputs[0].shape[1]
    for key, label, backend, repeat in sdpa_backends(inputs[0].dtype == torch.bfloat16,
                                                     masked):
        label += " (k, v repeated)" if repeat and grouped else ""
        g.add(key, label,
              lambda b=backend, r=repeat: timed_call(partial(sdpa, b, r), inputs, grads, dy),
              check)


def sdpa_backends(bf16: bool, masked: bool) -> list[tuple[str, str, Any, bool]]:
    """(key, label, backend, whether grouped heads are repeated first) of each SDPA row:
    without a mask cuDNN's and flash's for bf16, the memory-efficient one for f32 (flash
    takes no f32); with a mask (flash takes none) the memory-efficient one, which takes no
    grouped heads either, and the math one, and for bf16 cuDNN's, whose row says whether
    this torch's takes the mask."""
    from torch.nn.attention import SDPBackend
    if not masked:
        return ([("sdpa_cudnn", "SDPA cuDNN", SDPBackend.CUDNN_ATTENTION, False),
                 ("sdpa_flash", "SDPA flash", SDPBackend.FLASH_ATTENTION, False)] if bf16
                else [("sdpa_efficient", "SDPA efficient (flash takes no f32)",
                       SDPBackend.EFFICIENT_ATTENTION, False)])
    return (([("sdpa_cudnn", "SDPA cuDNN", SDPBackend.CUDNN_ATTENTION, False)] if bf16 else [])
            + [("sdpa_efficient", "SDPA efficient", SDPBackend.EFFICIENT_ATTENTION, True),
               ("sdpa_math", "SDPA math", SDPBackend.MATH, False)])
