"""The table of the `std` case (benchmarks/gpu/std.py): one `Op` per standard-library op
with a kernel, saying how to call it from a tiny program, how to draw its inputs, the plain
torch expression of the same computation, Liger-Kernel's function for it, and the bytes or
FLOPs one call must move or compute.

A new kernel in the std is timed by adding its entry to `OPS`; an entry whose item the std
module in the tree does not have yet is recorded as missing, with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
import torch.nn.functional as F

Inputs = tuple  # the entry's inputs, in its parameters' order


@dataclass(frozen=True)
class Shape:
    """A configuration: its label in the tables and the sizes the op's functions read."""
    label: str
    sizes: dict = field(hash=False)


@dataclass(frozen=True)
class Op:
    """One std op timed against its peers.

    `entry` is what follows `entry run` in the program (generics, parameters, result, body),
    which imports `item` and `also` from `module`. `make(sizes, dtype, generator, device)`
    draws the inputs and the cotangent of the result (None for a loss, whose cotangent is 1);
    `grads` are the positions of the inputs that get gradients; `torch_fn` is the plain torch
    expression on the same inputs (its float64 run is the reference, and `torch.compile`
    compiles it); `liger(liger_kernel.ops)` gives Liger's function on the same inputs, and
    `liger_layout(inputs, dy)` their layout for Liger where it differs; `work(sizes, bytes
    per element, step)` is bytes moved or FLOPs, per `unit`. A binding runs the op's kernel
    when `ran()` lists an op named with one of `kernels` (by default the item itself);
    `needs_kernel` records an op without one as missing rather than timing its body.
    `tolerance` is (forward, forward+backward) per dtype, relative to the reference's largest
    entry. `sdpa` adds F.scaled_dot_product_attention's rows (inputs q, k, v, scale and
    perhaps a bool mask); `eager` names a row timing `torch_fn` itself, for an op whose
    torch expression is one library call (conv2d's F.conv2d, cuDNN's)."""
    item: str
    module: str
    entry: str
    shapes: tuple[Shape, ...]
    make: Callable[..., tuple[Inputs, Any]]
    grads: tuple[int, ...]
    torch_fn: Callable[..., torch.Tensor]
    work: Callable[[dict, int, str], float]
    unit: str = "GB/s"
    label: str = ""
    also: tuple[str, ...] = ()
    liger: Callable[[Any], Callable[..., torch.Tensor]] | None = None
    liger_layout: Callable[[Inputs, Any], tuple[Inputs, Any]] | None = None
    kernels: tuple[str, ...] = ()
    needs_kernel: bool = False
    tolerance: dict = field(default_factory=lambda: {"f32": (1e-4, 1e-4),
                                                     "bf16": (2e-2, 3e-2)}, hash=False)
    reference: Callable[..., Any] | None = None  # (inputs, grads, dy) -> (y, [gradients])
    sdpa: bool = False
    eager: str = ""

    @property
    def name(self) -> str:
        return self.label or self.item

    def program(self) -> str:
        names = ", ".join((self.item,) + self.also)
        return (f"module bench_{self.item}\nuse {self.module}::{{{names}}}\n\n"
                f"entry run{self.entry}\n")


# ------------------------------------------------------------------------ the inputs

def rows_weights(bias: bool):
    """x [R, H] and weight (and bias) [H]; dy [R, H]."""
    def make(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
        r, h = s["R"], s["H"]
        x = torch.randn(r, h, device=on, generator=gen) * 2 + 0.5
        w = 1 + 0.1 * torch.randn(h, device=on, generator=gen)
        b = 0.1 * torch.randn(h, device=on, generator=gen)
        dy = torch.randn(r, h, device=on, generator=gen)
        inputs = (x, w, b) if bias else (x, w)
        return tuple(t.to(dtype) for t in inputs), dy.to(dtype)
    return make


def logits(out_f32: bool):
    """Logits [R, V] (of a model's size); dy in the result's dtype."""
    def make(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
        x = (3 * torch.randn(s["R"], s["V"], device=on, generator=gen)).to(dtype)
        dy = torch.randn(s["R"], s["V"], device=on, generator=gen)
        return (x,), dy if out_f32 else dy.to(dtype)
    return make


def logits_targets(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """Logits [N, V], targets [N] (i64, inside the vocabulary) and weights [N] of 1, so that
    every peer computes the same plain sum of -log p(target)."""
    x = (3 * torch.randn(s["R"], s["V"], device=on, generator=gen)).to(dtype)
    targets = torch.randint(0, s["V"], (s["R"],), device=on, generator=gen)
    return (x, targets, torch.ones(s["R"], device=on)), None


def hidden_head_targets(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """hidden [N, H], the head's weight [V, H] (logits of unit size), targets [N] and
    weights [N] of 1."""
    hidden = torch.randn(s["N"], s["H"], device=on, generator=gen).to(dtype)
    weight = torch.randn(s["V"], s["H"], device=on, generator=gen) / math.sqrt(s["H"])
    targets = torch.randint(0, s["V"], (s["N"],), device=on, generator=gen)
    return (hidden, weight.to(dtype), targets, torch.ones(s["N"], device=on)), None


def qkv(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """q [B, H, L, D], k and v [B, Hk, L, D] (Hk = H unless grouped), the scale; dy."""
    b, h, hk, n, d = s["B"], s["H"], s.get("Hk", s["H"]), s["L"], s["D"]
    q = torch.randn(b, h, n, d, device=on, generator=gen)
    k, v = (torch.randn(b, hk, n, d, device=on, generator=gen) for _ in "kv")
    dy = torch.randn(b, h, n, d, device=on, generator=gen)
    return (q.to(dtype), k.to(dtype), v.to(dtype), 1 / math.sqrt(d)), dy.to(dtype)


def window_mask(s: dict, on) -> torch.Tensor:
    """[L, L]: query q sees the `window` keys up to itself, q - window < k <= q (a sliding
    window, as Mistral's layers have)."""
    queries = torch.arange(s["L"], device=on)[:, None]
    keys = torch.arange(s["L"], device=on)[None, :]
    return (keys <= queries) & (keys > queries - s["window"])


def padding_mask(s: dict, on) -> torch.Tensor:
    """[B, L, L]: batch row b's sequence holds its first L - b·L/B positions (L, 3L/4, L/2,
    L/4 for four rows), the rest padding; every query sees the keys of its row's sequence."""
    lengths = s["L"] - torch.arange(s["B"], device=on) * s["L"] // s["B"]
    keys = torch.arange(s["L"], device=on)
    seen = keys[None, None, :] < lengths[:, None, None]
    return seen.expand(s["B"], s["L"], s["L"]).contiguous()


def qkv_masked(mask: Callable[[dict, Any], torch.Tensor]):
    """qkv's inputs and the mask (the entry's last parameter); dy."""
    def make(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
        inputs, dy = qkv(s, dtype, gen, on)
        return inputs + (mask(s, on),), dy
    return make


def qkv_padding_sinks(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """qkv's inputs, the padding mask [B, L, S] and a sink logit for each query head [H],
    in the scores' range; dy."""
    inputs, dy = qkv(s, dtype, gen, on)
    sinks = torch.randn(s["H"], device=on, generator=gen).to(dtype)
    return inputs + (padding_mask(s, on), sinks), dy


def images_filters(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """x [B, Cin, H, W] and filters [Cout, Cin, K, K] of unit-size outputs; dy [B, Cout,
    Ho, Wo]."""
    b, cin, cout, k = s["B"], s["Cin"], s["Cout"], s["K"]
    x = torch.randn(b, cin, s["H"], s["W"], device=on, generator=gen)
    w = torch.randn(cout, cin, k, k, device=on, generator=gen) / math.sqrt(cin * k * k)
    dy = torch.randn(b, cout, *conv_out(s), device=on, generator=gen)
    return (x.to(dtype), w.to(dtype)), dy.to(dtype)


def conv_out(s: dict) -> tuple[int, int]:
    """The output's height and width: (H + 2·pad - K) / stride + 1, and the same across."""
    return tuple((s[n] + 2 * s["pad"] - s["K"]) // s["stride"] + 1 for n in ("H", "W"))


def rope_inputs(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """x [B, H, S, D] and the cos / sin tables [S, D] of rotary positions (base 10000)."""
    b, h, n, d = s["B"], s["H"], s["S"], s["D"]
    x = torch.randn(b, h, n, d, device=on, generator=gen)
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=on, dtype=torch.float32) / d))
    angles = torch.outer(torch.arange(n, device=on, dtype=torch.float32), inv)
    angles = torch.cat([angles, angles], dim=-1)
    dy = torch.randn(b, h, n, d, device=on, generator=gen)
    return (x.to(dtype), angles.cos().to(dtype), angles.sin().to(dtype)), dy.to(dtype)


def ids_table(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """ids [N] (i32, inside the table) and the table [V, H]; dy [N, H]."""
    ids = torch.randint(0, s["V"], (s["N"],), device=on, generator=gen, dtype=torch.int32)
    table = torch.randn(s["V"], s["H"], device=on, generator=gen)
    dy = torch.randn(s["N"], s["H"], device=on, generator=gen)
    return (ids, table.to(dtype)), dy.to(dtype)


def gate_up(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """gate and up [R, N]; dy [R, N]."""
    gate, up, dy = (torch.randn(s["R"], s["N"], device=on, generator=gen) for _ in range(3))
    return (gate.to(dtype), up.to(dtype)), dy.to(dtype)


def x_weight(s: dict, dtype, gen, on) -> tuple[Inputs, Any]:
    """x [M, In] and a weight [Out, In] of unit-size products; dy [M, Out]."""
    x = torch.randn(s["M"], s["In"], device=on, generator=gen)
    w = torch.randn(s["Out"], s["In"], device=on, generator=gen) / math.sqrt(s["In"])
    dy = torch.randn(s["M"], s["Out"], device=on, generator=gen)
    return (x.to(dtype), w.to(dtype)), dy.to(dtype)


# ------------------------------------------------------------ the torch expressions

def rms_norm(x, w):
    v = x.float()
    return (v * torch.rsqrt(v.pow(2).mean(-1, keepdim=True) + 1e-6)).to(x.dtype) * w


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def softmax(x):
    return torch.softmax(x.float(), dim=-1).to(x.dtype)


def log_softmax(x):
    return torch.log_softmax(x.float(), dim=-1)


def cross_entropy(x, targets, weights):
    return (F.cross_entropy(x.float(), targets, reduction="none") * weights).sum()


def linear_cross_entropy(hidden, weight, targets, weights):
    return cross_entropy(hidden @ weight.T, targets, weights)


def attention_body(q, k, v, scale: float, causal: bool, keep=None):
    """Scores in f32, the causal mask (key s seen by query l when s <= l) or the mask `keep`
    ([L, S], or [B, L, S] a batch row each; true where seen), a softmax in f32, the product
    in the inputs' dtype; grouped heads share their key head."""
    if k.shape[1] != q.shape[1]:
        k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], dim=1) for t in (k, v))
    s = torch.matmul(q, k.transpose(-2, -1)).float() * scale
    if causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
    if keep is not None:
        s = s.masked_fill(~(keep[:, None] if keep.dim() == 3 else keep), float("-inf"))
    return torch.matmul(torch.softmax(s, dim=-1).to(v.dtype), v)


def attention(causal: bool) -> Callable:
    def body(q, k, v, scale):
        return attention_body(q, k, v, scale, causal)
    return body


def masked_attention(q, k, v, scale, mask):
    return attention_body(q, k, v, scale, False, mask)


def sink_attention(q, k, v, scale, mask, sinks):
    """Scores in f32 under the mask [B, L, S] (-1e30 where hidden, as the std's), each query
    head's sink joining the softmax's maximum and denominator with no value row, the product
    in the inputs' dtype; grouped heads share their key head."""
    if k.shape[1] != q.shape[1]:
        k, v = (t.repeat_interleave(q.shape[1] // t.shape[1], dim=1) for t in (k, v))
    s = torch.matmul(q, k.transpose(-2, -1)).float() * scale
    s = s.masked_fill(~mask[:, None], -1e30)
    sink = sinks.float().view(1, -1, 1, 1)
    top = torch.maximum(s.amax(-1, keepdim=True), sink)
    e = torch.exp(s - top)
    total = e.sum(-1, keepdim=True) + torch.exp(sink - top)
    return torch.matmul((e / total).to(v.dtype), v)


def conv2d(stride: int, pad: int) -> Callable:
    def body(x, w):
        return F.conv2d(x, w, stride=stride, padding=pad)
    return body


def rope(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


def silu_mul(gate, up):
    return (F.silu(gate.float()) * up.float()).to(gate.dtype)


def embedding(ids, table):
    return F.embedding(ids, table)


def linear(x, w):
    return F.linear(x, w)


# ------------------------------------------------------------ Liger's functions

def liger_rms_norm(ops):
    """Casting "llama" (rstd in f32, x * rstd cast to T, times the weight in T: the library's
    order); not in place, as dy is reused between timed calls."""
    return lambda x, w: ops.LigerRMSNormFunction.apply(x, w, 1e-6, 0.0, "llama", False)


def liger_cross_entropy(ops):
    return lambda x, targets, weights: ops.LigerCrossEntropyFunction.apply(
        x, targets, None, -100, 0.0, 0.0, "sum")[0]


def liger_linear_cross_entropy(ops):
    """Gradients of the weight accumulated in f32, as the library's are."""
    return lambda hidden, weight, targets, weights: \
        ops.LigerFusedLinearCrossEntropyFunction.apply(
            hidden, weight, targets, None, None, -100, 0.0, 0.0, "sum", None, False,
            torch.float32)[0]


def liger_rope(ops):
    """Liger rotates q and k together, in place: k has one head (1/H more work)."""
    return lambda x, k, cos, sin: ops.LigerRopeFunction.apply(x, k, cos, sin)[0]


def rope_layout(inputs: Inputs, dy) -> tuple[Inputs, Any]:
    """x and dy stored [B, S, H, D] (Liger's layout, as a model's projections leave them),
    seen as [B, H, S, D]; a one-head k beside x."""
    x, cos, sin = inputs
    x = x.transpose(1, 2).contiguous().transpose(1, 2)
    k = torch.zeros_like(x[:, :1]).transpose(1, 2).contiguous().transpose(1, 2)
    return (x, k, cos, sin), dy.transpose(1, 2).contiguous().transpose(1, 2)


# ------------------------------------------------------------ bytes and FLOPs

def rows_bytes(n_in: int, out_f32: bool = False):
    """`n_in` inputs of the result's size read and the result written, forward;
    forward+backward adds dy read and each of those inputs' gradients written."""
    def work(s: dict, size: int, step: str) -> float:
        cells = s["R"] * next(s[k] for k in ("H", "V", "N") if k in s)
        out = 4 if out_f32 else size
        forward = cells * (n_in * size + out)
        return forward if step == "forward" else forward + cells * (out + n_in * size)
    return work


def loss_bytes(s: dict, size: int, step: str) -> float:
    """Logits read (forward); read again and their gradient written (backward)."""
    return s["R"] * s["V"] * size * (1 if step == "forward" else 3)


def embedding_bytes(s: dict, size: int, step: str) -> float:
    """Rows read and written (forward); dy read and the table's gradient written."""
    rows = s["N"] * s["H"] * size
    return 2 * rows if step == "forward" else 3 * rows + s["V"] * s["H"] * size


def rope_bytes(s: dict, size: int, step: str) -> float:
    cells = s["B"] * s["H"] * s["S"] * s["D"] * size
    return 2 * cells if step == "forward" else 4 * cells


def attention_flops(s: dict, size: int, step: str) -> float:
    """4·B·H·L·S·D forward, halved when causal; the backward 2.5 times that."""
    forward = 4 * s["B"] * s["H"] * s["L"] * s["L"] * s["D"] * (0.5 if s.get("causal") else 1)
    return forward if step == "forward" else 3.5 * forward


def masked_attention_flops(mask: Callable[[dict, Any], torch.Tensor]):
    """4·H·D per (query, key) pair the mask keeps, in every batch row (attention_flops
    counts a causal mask's pairs so too); the backward 2.5 times that."""
    def work(s: dict, size: int, step: str) -> float:
        seen = mask(s, "cpu")
        pairs = int(seen.sum()) * (1 if seen.dim() == 3 else s["B"])
        forward = 4 * s["H"] * s["D"] * pairs
        return forward if step == "forward" else 3.5 * forward
    return work


def conv_flops(s: dict, size: int, step: str) -> float:
    """2·B·Cout·Ho·Wo·Cin·K² forward; the backward's dx and dweight as many each."""
    ho, wo = conv_out(s)
    forward = 2 * s["B"] * s["Cout"] * ho * wo * s["Cin"] * s["K"] ** 2
    return forward if step == "forward" else 3 * forward


def matmul_flops(s: dict, size: int, step: str) -> float:
    """2·M·N·K forward (the head's product for the losses); three products with the
    backward's two."""
    m, k, n = s.get("M", s.get("N")), s.get("In", s.get("H")), s.get("Out", s.get("V"))
    return 2 * m * n * k * (1 if step == "forward" else 3)


# ------------------------------------------------------------ references

def float64_reference(fn: Callable, inputs: Inputs, grads: tuple[int, ...], dy):
    """fn in float64 on the same (rounded) inputs: its result and the gradients of the
    inputs at `grads` for the cotangent dy (1 for a scalar)."""
    leaves = [x.double().requires_grad_(k in grads)
              if torch.is_tensor(x) and x.is_floating_point() else x
              for k, x in enumerate(inputs)]
    y = fn(*leaves)
    y.backward(torch.ones_like(y) if dy is None else dy.double())
    return y.detach(), [leaves[k].grad for k in grads]


def attention_reference(causal: bool):
    """Attention and its gradients in f32 at full precision (batched_reference)."""
    def body(q, k, v, scale, *keep):
        return attention_body(q, k, v, scale, causal, *keep)
    return batched_reference(body)


def batched_reference(body: Callable[..., torch.Tensor]):
    """An attention `body(q, k, v, scale, mask?, sinks?)` and its gradients in f32 at full
    precision, one batch element at a time (the scores of the whole batch would not fit),
    under the mask that follows the scale where there is one (a [B, L, S] mask: its row of
    the batch element) and with the sinks after it where there are (shared by every batch
    element: their gradient is summed over them)."""
    def reference(inputs: Inputs, grads: tuple[int, ...], dy):
        q, k, v, scale, *rest = inputs
        on, f32 = q.device, torch.float32
        y = torch.empty(q.shape, dtype=f32, device=on)
        gs = [torch.empty(t.shape, dtype=f32, device=on) for t in (q, k, v)]
        shared = [t.float().requires_grad_() for t in rest[1:]]
        saved = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False
        try:
            for i in range(q.shape[0]):
                leaves = [t[i:i + 1].float().requires_grad_() for t in (q, k, v)]
                keep = [m[i:i + 1] if m.dim() == 3 else m for m in rest[:1]]
                out = body(*leaves, scale, *keep, *shared)
                out.backward(dy[i:i + 1].float())
                y[i] = out.detach()[0]
                for into, leaf in zip(gs, leaves):
                    into[i] = leaf.grad[0]
        finally:
            torch.backends.cuda.matmul.allow_tf32 = saved
        return y, gs + [t.grad for t in shared]
    return reference


# ------------------------------------------------------------ the table of ops

def attention_op(grouped: bool, causal: bool) -> Op:
    """attention or grouped_attention (32 query heads over 8 key heads), with the causal
    mask or none, at B4 L4096 D128 and (not grouped) B8 L1024 D64, 32 heads."""
    item = "grouped_attention" if grouped else "attention"
    heads = "Hk" if grouped else "H"
    mask = ", some(causal_mask<L, L>())" if causal else ""
    entry = (f"<B: Dim, H: Dim, {'Hk: Dim, ' if grouped else ''}L: Dim, D: Dim, "
             f"T: Float = f32>(query: Tensor[B, H, L, D; T], key: Tensor[B, {heads}, L, D; T], "
             f"value: Tensor[B, {heads}, L, D; T], scale: f32) -> Tensor[B, H, L, D; T]"
             + ("\nwhere Hk > 0, H % Hk == 0" if grouped else "") + " {\n"
             f"    return {item}(query, key, value, scale{mask})\n}}")
    sizes = ((4, 32, 4096, 128),) + (() if grouped else ((8, 32, 1024, 64),))
    kv = 8 if grouped else 32
    shapes = tuple(Shape(f"B{b} H{h}" + (f"/{kv}" if grouped else "") + f" L=S={n} D{d}"
                         + (" causal" if causal else ""),
                         {"B": b, "H": h, "Hk": kv, "L": n, "D": d, "causal": causal})
                   for b, h, n, d in sizes)
    return Op(item, "std.nn.attention", entry, shapes, qkv, (0, 1, 2), attention(causal),
              attention_flops, unit="TFLOP/s", label=item + (" causal" if causal else ""),
              also=("causal_mask",) if causal else (), kernels=("attention", "grouped_attention"),
              needs_kernel=True, tolerance={"f32": (2e-4, 1e-3), "bf16": (3e-2, 5e-2)},
              reference=attention_reference(causal), sdpa=True)


@dataclass(frozen=True)
class Mask:
    """A mask of the masked attention ops: its name in their labels, `build(sizes, device)`
    the bool tensor, and whether it has a row for each batch element ([B, L, S], taken by
    attention_rows) or one for all ([L, S], by attention with some(mask))."""
    name: str
    build: Callable[[dict, Any], torch.Tensor]
    per_row: bool


WINDOW = Mask("window", window_mask, per_row=False)
WINDOW_KEYS = 512  # the keys a query sees under WINDOW at the benchmark's sizes
PADDING = Mask("padding", padding_mask, per_row=True)


def masked_attention_op(mask: Mask, grouped: bool) -> Op:
    """Attention under a mask given as an input: attention with some(mask) for a [L, S]
    mask, attention_rows or grouped_attention_rows (16 query heads over 4 key heads) for a
    mask per batch row; at B4 H16 L=S=2048 D128 and (not grouped) D64. Their kernels are
    the masked ones (attention_masked_rows_lse's and its backward's)."""
    item = ("grouped_attention_rows" if grouped else "attention_rows") if mask.per_row \
        else ("grouped_attention" if grouped else "attention")
    heads = "Hk" if grouped else "H"
    mask_type = "Tensor[B, L, L; bool]" if mask.per_row else "Tensor[L, L; bool]"
    given = "mask" if mask.per_row else "some(mask)"
    entry = (f"<B: Dim, H: Dim, {'Hk: Dim, ' if grouped else ''}L: Dim, D: Dim, "
             f"T: Float = f32>(query: Tensor[B, H, L, D; T], key: Tensor[B, {heads}, L, D; T], "
             f"value: Tensor[B, {heads}, L, D; T], scale: f32, mask: {mask_type}) "
             f"-> Tensor[B, H, L, D; T]" + ("\nwhere Hk > 0, H % Hk == 0" if grouped else "")
             + f" {{\n    return {item}(query, key, value, scale, {given})\n}}")
    dims = (128,) if grouped else (128, 64)
    kv = 4 if grouped else 16
    shapes = tuple(Shape(f"B4 H16" + (f"/{kv}" if grouped else "") + f" L=S=2048 D{d}"
                         + (f", {WINDOW_KEYS} keys" if mask is WINDOW else ""),
                         {"B": 4, "H": 16, "Hk": kv, "L": 2048, "D": d, "window": WINDOW_KEYS})
                   for d in dims)
    return Op(item, "std.nn.attention", entry, shapes, qkv_masked(mask.build), (0, 1, 2),
              masked_attention, masked_attention_flops(mask.build), unit="TFLOP/s",
              label=f"{item} {mask.name}", kernels=("attention_masked",), needs_kernel=True,
              tolerance={"f32": (2e-4, 1e-3), "bf16": (3e-2, 5e-2)},
              reference=attention_reference(False), sdpa=True)


def sink_attention_op() -> Op:
    """sink_attention (gpt-oss's: 64 query heads over 8 key heads, a head of 64) under the
    padding mask, at B4 L=S=2048; its kernels are attention_sink_rows's, the backward's
    stats with the sinks' gradient and the masked dq and dk/dv. SDPA takes no sink: against
    torch.compile of the torch expression."""
    entry = ("<B: Dim, H: Dim, Hk: Dim, L: Dim, D: Dim, T: Float = f32>"
             "(query: Tensor[B, H, L, D; T], key: Tensor[B, Hk, L, D; T], "
             "value: Tensor[B, Hk, L, D; T], scale: f32, "
             "mask: Tensor[B, L, L; bool], sinks: Tensor[H; T]) -> Tensor[B, H, L, D; T]\n"
             "where Hk > 0, H % Hk == 0 {\n"
             "    return sink_attention(query, key, value, sinks, scale, mask)\n}")
    shapes = (Shape("B4 H64/8 L=S=2048 D64", {"B": 4, "H": 64, "Hk": 8, "L": 2048, "D": 64}),)
    return Op("sink_attention", "std.nn.attention", entry, shapes, qkv_padding_sinks,
              (0, 1, 2, 5), sink_attention, masked_attention_flops(padding_mask),
              unit="TFLOP/s", label="sink_attention padding", kernels=("attention_sink",),
              needs_kernel=True, tolerance={"f32": (2e-4, 1e-3), "bf16": (3e-2, 5e-2)},
              reference=batched_reference(sink_attention))


def conv_op(stride: int, pad: int, *sizes: tuple[int, int, int, int]) -> Op:
    """conv2d with a 3 x 3 window, no bias (a batch norm follows), at this stride and
    padding (literals of the entry, which passes every generic of conv2d), on B images of
    Cin channels, side x side, into Cout channels for each (B, Cin, Cout, side) of `sizes`;
    its kernels are conv2d_gemm's, forward and backward. Against F.conv2d (cuDNN) and its
    torch.compile."""
    out = f"(H + {2 * pad} - K) / {stride} + 1, (W + {2 * pad} - K) / {stride} + 1"
    entry = ("<B: Dim, Cin: Dim, Cout: Dim, H: Dim, W: Dim, K: Dim, T: Float = f32>"
             "(x: Tensor[B, Cin, H, W; T], weight: Tensor[Cout, Cin, K, K; T]) "
             f"-> Tensor[B, Cout, {out}; T]\nwhere K > 0 {{\n"
             f"    return conv2d<B, Cin, Cout, H, W, K, {stride}, {pad}, T>(x, weight)\n}}")
    shapes = tuple(Shape(f"B{b} {cin}->{cout} {side}x{side} K3",
                         {"B": b, "Cin": cin, "Cout": cout, "H": side, "W": side, "K": 3,
                          "stride": stride, "pad": pad})
                   for b, cin, cout, side in sizes)
    return Op("conv2d", "std.nn.conv", entry, shapes, images_filters, (0, 1),
              conv2d(stride, pad), conv_flops, unit="TFLOP/s",
              label="conv2d" + (f" stride {stride}" if stride != 1 else ""),
              kernels=("conv2d_gemm", "conv2d_input_grad", "conv2d_weight_grad"),
              needs_kernel=True, tolerance={"f32": (1e-4, 1e-4), "bf16": (2e-2, 3e-2)},
              eager="F.conv2d (cuDNN)")


def rows(*pairs: tuple[int, int], width: str = "H") -> tuple[Shape, ...]:
    return tuple(Shape(f"{r}x{c}", {"R": r, width: c}) for r, c in pairs)


NORM_ROWS = rows((4096, 4096), (8192, 8192))
VOCAB_ROWS = rows((4096, 32000), (4096, 128000), width="V")

OPS: list[Op] = [
    Op("rms_norm_2d", "std.nn.norm",
       "<R: Dim, H: Dim, T: Float = f32>(x: Tensor[R, H; T], weight: Tensor[H; T]) "
       "-> Tensor[R, H; T] {\n    return rms_norm_2d(x, weight, eps = 1e-6)\n}",
       NORM_ROWS, rows_weights(False), (0, 1), rms_norm, rows_bytes(1), liger=liger_rms_norm),
    Op("layer_norm_2d", "std.nn.norm",
       "<R: Dim, H: Dim, T: Float = f32>(x: Tensor[R, H; T], weight: Tensor[H; T], "
       "bias: Tensor[H; T]) -> Tensor[R, H; T] {\n"
       "    return layer_norm_2d(x, weight, some(bias))\n}",
       NORM_ROWS, rows_weights(True), (0, 1, 2), layer_norm, rows_bytes(1),
       kernels=("layer_norm_affine_2d",),
       liger=lambda ops: lambda x, w, b: ops.LigerLayerNormFunction.apply(x, w, b, 1e-5)),
    Op("softmax_2d", "std.nn.softmax",
       "<R: Dim, V: Dim, T: Float = f32>(x: Tensor[R, V; T]) -> Tensor[R, V; T] {\n"
       "    return softmax_2d(x)\n}",
       VOCAB_ROWS, logits(False), (0,), softmax, rows_bytes(1),
       liger=lambda ops: ops.LigerSoftmaxFunction.apply),
    Op("log_softmax_2d", "std.nn.loss",
       "<R: Dim, V: Dim, T: Float = f32>(logits: Tensor[R, V; T]) -> Tensor[R, V; f32] {\n"
       "    return log_softmax_2d(logits)\n}",
       VOCAB_ROWS, logits(True), (0,), log_softmax, rows_bytes(1, out_f32=True)),
    Op("cross_entropy", "std.nn.loss",
       "<N: Dim, V: Dim, T: Float = f32>(logits: Tensor[N, V; T], targets: Tensor[N; i64], "
       "weights: Tensor[N; f32]) -> f32 {\n    return cross_entropy(logits, targets, weights)\n}",
       VOCAB_ROWS, logits_targets, (0,), cross_entropy, loss_bytes, liger=liger_cross_entropy,
       kernels=("token_log_probs", "cross_entropy"),
       tolerance={"f32": (1e-5, 1e-4), "bf16": (1e-4, 3e-2)}),
    attention_op(False, False),
    attention_op(False, True),
    attention_op(True, False),
    attention_op(True, True),
    masked_attention_op(WINDOW, grouped=False),
    masked_attention_op(PADDING, grouped=False),
    masked_attention_op(PADDING, grouped=True),
    sink_attention_op(),
    Op("rope", "std.nn.rope",
       "<B: Dim, H: Dim, S: Dim, D: Dim, T: Float = f32>(x: Tensor[B, H, S, D; T], "
       "cos_table: Tensor[S, D; T], sin_table: Tensor[S, D; T]) -> Tensor[B, H, S, D; T]\n"
       "where D % 2 == 0 {\n    return rope(x, cos_table, sin_table)\n}",
       (Shape("B4 H32 S4096 D128", {"B": 4, "H": 32, "S": 4096, "D": 128}),), rope_inputs,
       (0,), rope, rope_bytes, liger=liger_rope, liger_layout=rope_layout),
    Op("embedding_2d", "std.nn.embedding",
       "<N: Dim, V: Dim, H: Dim, T: Float = f32>(ids: Tensor[N; i32], table: Tensor[V, H; T]) "
       "-> Tensor[N, H; T] {\n    return embedding_2d(ids, table)\n}",
       (Shape("8192 ids, 128000x4096", {"N": 8192, "V": 128000, "H": 4096}),), ids_table,
       (1,), embedding, embedding_bytes,
       liger=lambda ops: lambda ids, table: ops.LigerEmbeddingFunction.apply(table, ids)),
    # the fused activation of swiglu, silu(gate) * up; its name is the std's inner op's
    Op("silu_mul", "std.nn.mlp",
       "<R: Dim, N: Dim, T: Float = f32>(gate: Tensor[R, N; T], up: Tensor[R, N; T]) "
       "-> Tensor[R, N; T] {\n    return silu_mul(gate, up)\n}",
       rows((8192, 14336), width="N"), gate_up, (0, 1), silu_mul, rows_bytes(2),
       liger=lambda ops: ops.LigerSiLUMulFunction.apply),
    Op("linear_2d", "std.nn.linear",
       "<M: Dim, In: Dim, Out: Dim, T: Float = f32>(x: Tensor[M, In; T], "
       "weight: Tensor[Out, In; T]) -> Tensor[M, Out; T] {\n    return linear_2d(x, weight)\n}",
       (Shape("8192x4096 by 14336x4096", {"M": 8192, "In": 4096, "Out": 14336}),), x_weight,
       (0, 1), linear, matmul_flops, unit="TFLOP/s"),
    Op("linear_cross_entropy", "std.nn.loss",
       "<N: Dim, H: Dim, V: Dim, T: Float = f32>(hidden: Tensor[N, H; T], "
       "weight: Tensor[V, H; T], targets: Tensor[N; i64], weights: Tensor[N; f32]) -> f32 {\n"
       "    return linear_cross_entropy(hidden, weight, targets, weights)\n}",
       tuple(Shape(f"N4096 H4096 V{v}", {"N": 4096, "H": 4096, "V": v}) for v in (32000, 128000)),
       hidden_head_targets, (0, 1), linear_cross_entropy, matmul_flops, unit="TFLOP/s",
       liger=liger_linear_cross_entropy,
       kernels=("linear_cross_entropy", "linear_token_log_probs"),
       tolerance={"f32": (1e-5, 1e-4), "bf16": (1e-3, 3e-2)}),
    # ResNet-50's 3x3 convolutions at a batch of 32: layer 1's, layer 3's, and layer 2's
    # first (stride 2, 56x56 down to 28x28)
    conv_op(1, 1, (32, 64, 64, 56), (32, 256, 256, 14)),
    conv_op(2, 1, (32, 128, 128, 56)),
]
