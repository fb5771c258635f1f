"""The `_ln_*` runtime helpers of the PyTorch backends, and the two ways they are used.

Generated modules contain the helpers their code calls verbatim (`helpers_used`,
`helper_source`: the source of the functions below is copied), and the interpreter runs
the same source in a namespace of its own (`helper_namespace`, `compile_expr`). So a
helper has one text, whichever backend runs it. `linnet.emit.torch_ops` says what each
primitive computes and calls these by name.
"""

from __future__ import annotations

import inspect
import linecache
import re
import sys
import types
from functools import lru_cache
from typing import Any, Callable, Sequence

from ..lazy_import import LazyModule

# The helpers run in generated modules and in the interpreter's namespace, each of which
# imports torch itself. Here `torch` serves only direct calls of a helper, and is imported at
# the first: printing a module (`linnet torch FILE`) must not spend seconds importing torch.
torch = LazyModule("torch")

# ---------------------------------------------------------------- helpers
#
# Plain functions that generated modules contain verbatim (their source is copied) and that
# the interpreter runs from that same source. They use only `torch` and each other.


def _ln_device(inputs):
    """The device of the first tensor input (new tensors are made there); else the CPU."""
    for x in inputs:
        if isinstance(x, torch.Tensor):
            return x.device
        if isinstance(x, (tuple, list)):
            for y in x:
                if isinstance(y, torch.Tensor):
                    return y.device
    return torch.device("cpu")


def _ln_arg(x, dtype, storage, shape, device):
    """Check an input's dtype and shape, into storage. An input with a dtype of its own (a
    tensor, a NumPy array) must have the parameter's: no dtype is converted implicitly; a
    Python number or list takes the parameter's. A Python number for a scalar is the shared
    tensor `_ln_lit` keeps: made anew, its copy to a GPU would stall every call."""
    if isinstance(x, (bool, int, float)) and shape == ():
        x = _ln_lit(x, dtype, device)
    elif not isinstance(x, torch.Tensor):
        x = torch.as_tensor(x, dtype=None if hasattr(x, "dtype") else dtype, device=device)
    if x.dtype != dtype:
        raise TypeError(f"expected a {dtype} tensor, got {x.dtype}")
    if x.shape != shape:  # a torch.Size is a tuple: no copy to compare
        raise ValueError(f"expected shape {list(shape)}, got {list(x.shape)}")
    if storage != dtype:
        x = x.view(storage) if dtype == torch.uint64 else x.to(storage)
    return x


def _ln_out(x, dtype, shape):
    """An output in its declared dtype (unsigned storage converted back), contiguous; a copy
    where it would be a literal that `_ln_lit` shares (or a view of one)."""
    if x.shape != shape:
        raise AssertionError(f"internal error: result shape {list(x.shape)}, "
                             f"declared {list(shape)}")
    if x.dtype != dtype:
        x = x.view(dtype) if dtype == torch.uint64 else x.to(dtype)
    x = x.contiguous()
    base = x if x._base is None else x._base
    return x.clone() if getattr(base, "_ln_shared", False) else x


def _ln_lit(value, dtype, device, _made={}):
    """A literal as a 0-d tensor on `device`, made at its first use and shared after that.

    Made anew at each call, it would be copied from ordinary host memory, and PyTorch
    waits for the device to finish all the work queued before such a copy: every call
    would stall the GPU. Generated code never writes into a tensor, and `_ln_out` copies a
    result that is a shared literal, so sharing is safe. The key tells -0.0 from 0.0. Python
    numbers passed as inputs are kept here too, so the table is emptied past 4096 entries
    (a tensor handed out stays valid). While a graph is traced (torch.compile, or a mode
    such as a fake or functional tensor mode: torch.export, AOT autograd tracing a
    backward) a literal is made anew: a kept tensor would be a real one among fakes, and
    one made there must not be kept."""
    if torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack():
        return torch.tensor(value, dtype=dtype, device=device)
    key = (repr(value), dtype, device)
    x = _made.get(key)
    if x is None:
        x = torch.tensor(value, dtype=dtype, device=device)
        if len(_made) >= 4096:
            _made.clear()
        _made[key] = x
        x._ln_shared = True
    return x


def _ln_sdiv(a, b):
    """Signed division truncating toward zero; MIN / -1 wraps to MIN (torch would trap), and
    a zero divisor gives 0 (torch raises on the CPU)."""
    m, z = b == -1, b == 0
    q = torch.div(a, b.masked_fill(m | z, 1), rounding_mode="trunc")
    return torch.where(z, 0, torch.where(m, -a, q))


def _ln_smod(a, b):
    """Signed remainder with the dividend's sign; MIN % -1 is 0 (x % 1 == x % -1), and a zero
    divisor gives 0 (as x % 1)."""
    return torch.fmod(a, b.masked_fill((b == -1) | (b == 0), 1))


def _ln_udiv(a, b):
    """Unsigned division (u8, u16, u32 values) truncating; a zero divisor gives 0."""
    z = b == 0
    return torch.where(z, 0, torch.div(a, b.masked_fill(z, 1), rounding_mode="trunc"))


def _ln_umod(a, b):
    """Unsigned remainder (u8, u16, u32 values); a zero divisor gives 0 (as x % 1)."""
    return torch.fmod(a, b.masked_fill(b == 0, 1))


def _ln_flip(x):
    """u64 held as int64 bits: flip the sign bit, so that signed order is unsigned order."""
    return x ^ -0x8000000000000000


def _ln_lshr64(x, n):
    """Logical right shift of u64 bits held in int64; counts of 64 or more give 0."""
    big = (n < 0) | (n > 63)
    k = torch.where(big, 0, n)
    low = 0x7FFFFFFFFFFFFFFF >> (k - 1).clamp(min=0)  # the low 64 - k bits, for k >= 1
    y = torch.where(k == 0, x, (x >> k) & low)
    return torch.where(big, 0, y)


def _ln_udiv64(a, b):
    """Unsigned 64-bit division on int64 bits, truncating; a zero divisor gives 0."""
    big, z = b < 0, b == 0  # a divisor of 2**63 or more: the quotient is 0 or 1
    bs = torch.where(big | z, 1, b)
    half = (a >> 1) & 0x7FFFFFFFFFFFFFFF  # a // 2, now a non-negative int64
    q = torch.div(half, bs, rounding_mode="trunc") << 1
    r = a - q * bs  # in [0, 2 * bs): one correction step
    q = q + (_ln_flip(r) >= _ln_flip(bs)).to(torch.int64)
    q = torch.where(big, (_ln_flip(a) >= _ln_flip(b)).to(torch.int64), q)
    return torch.where(z, 0, q)


def _ln_umod64(a, b):
    """Unsigned 64-bit remainder on int64 bits; a zero divisor gives 0."""
    return torch.where(b == 0, 0, a - _ln_udiv64(a, b) * b)


def _ln_u64_to_float(x, dtype):
    """u64 bits to a float dtype, rounded once: with the top bit set, halve keeping a sticky bit."""
    half = ((x >> 1) & 0x7FFFFFFFFFFFFFFF) | (x & 1)
    return torch.where(x < 0, half.to(dtype) * 2, x.to(dtype))


def _ln_float_to_u64(x):
    """A float truncated toward zero to u64 bits (values from 2**63 up pass through int64)."""
    x = x.to(torch.float64)
    big = x >= 9223372036854775808.0
    hi = (x - 9223372036854775808.0).to(torch.int64) ^ -0x8000000000000000
    return torch.where(big, hi, x.to(torch.int64))


def _ln_positions(shape, axes, positions, device):
    """Gather positions made safe: where every position is inside its axis, and each one
    clamped into its axis (as int64: a u8 tensor would index as a mask)."""
    inside = torch.ones(positions[0].shape, dtype=torch.bool, device=device)
    keys = []
    for k, p in zip(axes, positions):
        p = p.to(torch.int64)
        inside = inside & (p >= 0) & (p < shape[k])
        keys.append(p.clamp(0, max(shape[k] - 1, 0)))
    return inside, tuple(keys)


def _ln_gather(x, axes, *positions):
    """x read at integer positions on `axes`: the positions' shape, then x's other axes;
    a position outside its axis reads 0 (masked, then clamped so memory is read in bounds)."""
    rest = [k for k in range(x.dim()) if k not in axes]
    out = tuple(positions[0].shape) + tuple(x.shape[k] for k in rest)
    zero = torch.zeros((), dtype=x.dtype, device=x.device)
    if any(x.shape[k] == 0 for k in axes):
        return zero.expand(out).clone()
    inside, keys = _ln_positions(x.shape, axes, positions, x.device)
    read = x.permute(*axes, *rest)[keys]
    return torch.where(inside.reshape(inside.shape + (1,) * len(rest)), read, zero)


def _ln_scatter_add(g, shape, axes, *positions):
    """The adjoint of `_ln_gather`: zeros of `shape` with g added at the positions on
    `axes`; a position outside its axis adds nothing."""
    rest = [k for k in range(len(shape)) if k not in axes]
    order = list(axes) + rest
    out = torch.zeros([shape[k] for k in order], dtype=g.dtype, device=g.device)
    if not any(shape[k] == 0 for k in axes):
        inside, keys = _ln_positions(shape, axes, positions, g.device)
        inside = inside.reshape(inside.shape + (1,) * len(rest))
        out.index_put_(keys, torch.where(inside, g, torch.zeros((), dtype=g.dtype,
                                                                  device=g.device)),
                       accumulate=True)
    return out.permute(*[order.index(k) for k in range(len(shape))])


def _ln_einsum_int(spec, dtype, *xs):
    """An integer einsum as a broadcast product and a sum, computed in `dtype`."""
    ins, out = spec.split("->")
    subs = ins.split(",")
    summed = []
    for s in subs:
        summed.extend(c for c in s if c not in out and c not in summed)
    full = list(out) + summed
    prod = None
    for s, x in zip(subs, xs):
        x, s = x.to(dtype), list(s)
        while len(set(s)) < len(s):  # a repeated letter: its diagonal
            c = next(c for c in s if s.count(c) > 1)
            i = s.index(c)
            j = s.index(c, i + 1)
            x = torch.diagonal(x, 0, i, j)
            s = [t for k, t in enumerate(s) if k not in (i, j)] + [c]
        size = dict(zip(s, x.shape))
        x = torch.permute(x, [s.index(c) for c in full if c in s])
        x = torch.reshape(x, [size.get(c, 1) for c in full])
        prod = x if prod is None else prod * x
    if summed:
        prod = torch.sum(prod, dim=tuple(range(len(out), len(full))), dtype=dtype)
    return prod


def _ln_own(r, *xs):
    """An op's result that is one of its inputs (an op returning a parameter) as a view of
    it: autograd refuses to save for backward an input returned as it is (`setup_context`
    saves the result for the grad clause)."""
    for x in xs:
        if r is x:
            return r.view_as(r)
    return r


def _ln_needs_grad(*xs):
    """Is autograd recording, and does an input require a gradient? (Else an op with its own
    autograd Function is called directly, at no cost: this runs on every call of such an
    op, so it is a plain loop.)"""
    if not torch.is_grad_enabled():
        return False
    for x in xs:
        if isinstance(x, torch.Tensor) and x.requires_grad:
            return True
    return False


def _ln_vjp(body, d, xs, need, dys):
    """An op's backward without a grad clause: its body run again under autograd and
    differentiated. Inside a backward that is itself differentiated (grad mode on), the
    body runs on the saved inputs and the graph is kept, so second derivatives work."""
    create = torch.is_grad_enabled()
    with torch.enable_grad():
        ins = [x if create else x.detach().requires_grad_(bool(n)) for x, n in zip(xs, need)]
        ys = body(d, *ins)
    ys = ys if isinstance(ys, tuple) else (ys,)
    pairs = [(y, g) for y, g in zip(ys, dys)
             if isinstance(y, torch.Tensor) and y.requires_grad and g is not None]
    wanted = [x for x, n in zip(ins, need) if n]
    if not pairs or not wanted:
        return tuple(None for _ in xs)
    grads = iter(torch.autograd.grad([y for y, _ in pairs], wanted, [g for _, g in pairs],
                                     allow_unused=True, create_graph=create))
    return tuple(next(grads) if n else None for n in need)


def _ln_fresh(r, *xs):
    """An op's results as a custom op of torch.library must give them: memory of their own.
    A result that shares memory with an input, with an earlier result or with a literal
    `_ln_lit` shares is copied (the body may return a parameter, a view of one, or a
    literal); a kernel's results are new and pass as they are."""
    many = isinstance(r, tuple)
    taken = [x.untyped_storage().data_ptr() for x in xs]
    out = []
    for y in (r if many else (r,)):
        base = y if y._base is None else y._base
        if getattr(base, "_ln_shared", False) or y.untyped_storage().data_ptr() in taken:
            y = y.clone()
        taken.append(y.untyped_storage().data_ptr())
        out.append(y)
    return tuple(out) if many else out[0]


def _ln_traced(*xs):
    """Is a graph being traced by a tracer that runs Python as it is (torch.export, AOT
    autograd tracing a backward): is an input a fake or functional tensor, a subclass of
    torch.Tensor other than a Parameter? A kernel cannot launch on those."""
    for x in xs:
        if type(x) is not torch.Tensor and type(x) is not torch.nn.Parameter:
            return True
    return False


def _ln_library(namespace, name, schema, run, fake, function):
    """Register an op as the custom op `namespace::name` of torch.library, so that
    torch.compile and torch.export see one opaque op with known result shapes (`fake`)
    rather than tracing its kernel launch; its implementation is `run` (the kernel or the
    body, counted), its gradient that of its autograd `function` (`setup_context`,
    `backward`). Returns the op to call (its default overload), or None where this torch
    lacks what it needs: the op then runs as it does outside torch.compile. A name already
    registered in this process (the same module run again) takes a numbered suffix."""
    library = getattr(torch, "library", None)
    needs = ("custom_op", "register_fake", "register_autograd")
    if library is None or not all(hasattr(library, k) for k in needs):
        return None
    ops = getattr(torch.ops, namespace)
    base, n = name, 1
    while hasattr(ops, name):
        n += 1
        name = f"{base}_{n}"
    qualname = f"{namespace}::{name}"
    library.custom_op(qualname, lambda d, *xs: _ln_fresh(run(d, *xs), *xs), mutates_args=(),
                      schema=schema)
    library.register_fake(qualname, fake)
    library.register_autograd(qualname, function.backward, setup_context=function.setup_context)
    return getattr(ops, name).default


HELPERS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (_ln_device, _ln_arg, _ln_out, _ln_lit, _ln_sdiv, _ln_smod, _ln_udiv,
                            _ln_umod, _ln_flip,
                            _ln_lshr64, _ln_udiv64, _ln_umod64, _ln_u64_to_float,
                            _ln_float_to_u64, _ln_positions, _ln_gather, _ln_scatter_add,
                            _ln_einsum_int, _ln_needs_grad, _ln_own,
                            _ln_vjp, _ln_fresh, _ln_traced, _ln_library)}

_HELPER_NAME = re.compile(r"\b_ln_[a-z0-9_]+")


@lru_cache(maxsize=None)
def _helper_text(name: str) -> str:
    return inspect.getsource(HELPERS[name]).rstrip() + "\n"


def helpers_used(code: str) -> list[str]:
    """The helpers that `code` calls, with the helpers they call, in table order."""
    todo = [n for n in _HELPER_NAME.findall(code) if n in HELPERS]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        text = _helper_text(name)
        todo.extend(n for n in _HELPER_NAME.findall(text) if n in HELPERS and n not in seen)
    return [n for n in HELPERS if n in seen]


def helper_source(names: Sequence[str]) -> str:
    """The source of the named helpers, separated as module-level functions."""
    return "\n\n".join(_helper_text(n) for n in names)


# ------------------------------------------------------ for the interpreter

_NAMESPACE: dict[str, Any] | None = None
_HELPERS_FILE = "<linnet torch helpers>"


def helper_namespace() -> dict[str, Any]:
    """A namespace holding torch and every helper, made by executing the helpers' source.

    It is the dict of a module registered in `sys.modules` under its `__name__`, which
    `torch.compile` imports to find the globals of the functions it traces."""
    global _NAMESPACE
    if _NAMESPACE is None:
        source = "import torch\n\n\n" + helper_source(list(HELPERS))
        linecache.cache[_HELPERS_FILE] = (len(source), None, source.splitlines(True),
                                          _HELPERS_FILE)
        module = types.ModuleType("linnet_torch_helpers")
        exec(compile(source, _HELPERS_FILE, "exec"), module.__dict__)
        sys.modules.setdefault(module.__name__, module)
        _NAMESPACE = module.__dict__
    return _NAMESPACE


@lru_cache(maxsize=4096)
def compile_expr(params: tuple[str, ...], expr: str) -> Callable[..., Any]:
    """`lambda _d, *params: expr` in the helper namespace: the interpreter's form of a row."""
    return eval(f"lambda _d, {', '.join(params)}: {expr}" if params
                else f"lambda _d: {expr}", helper_namespace())

