"""The ops with kernels that an op without one runs: what `shard=` of such an op splits.

An op declared without a kernel runs its body, and the kernels that run for it are those of
the ops its body calls (`attention_causal` calls `attention_causal_lse`, whose kernel gives
the result and each row's log-sum-exp), found through the `fn`s and the kernel-less ops it
calls in turn. `linnet.jax`'s `shard=` takes the names of the ops a program calls, so naming
such an op names these (`batch_rule.sharded_ops`), wherever they are declared: an op of a
used module may call that module's private ops.

Only the body is read: a `grad` clause runs in the backward, whose ops sum over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ..syntax import tree as t
from ..syntax.edit import nodes


@dataclass(frozen=True)
class CalledKernelOp:
    """An op with a kernel, and the key of the module that declares it (in the program's
    `modules`)."""
    module: tuple[str, ...]
    op: t.Op


def declaring_module(analysis: Any, item: object) -> tuple[str, ...]:
    """The key of the module whose items include `item` (an imported item is listed by the
    module that declares it, not by those that use it)."""
    return next(key for key, module in analysis.program.modules.items()
                if any(i is item for i in module.items))


def kernel_ops_called(analysis: Any, op: t.Op) -> tuple[CalledKernelOp, ...]:
    """The ops with a kernel that `op`'s body calls, directly or through fns and ops
    without kernels, each once, in the order their calls are first met."""
    found: dict[int, CalledKernelOp] = {}
    seen: set[int] = {id(op)}
    pending = [(declaring_module(analysis, op), op)]
    while pending:
        module, item = pending.pop(0)
        for callee in _callees(analysis.modules[module].globals.items, item.body):
            if id(callee) in seen:
                continue
            seen.add(id(callee))
            home = declaring_module(analysis, callee)
            if isinstance(callee, t.Op) and callee.kernel is not None:
                found[id(callee)] = CalledKernelOp(home, callee)
            else:
                pending.append((home, callee))
    return tuple(found.values())


def _callees(items: dict[str, t.Item], body: tuple) -> Iterator[t.Op | t.Function]:
    """The ops and fns (not entries) that the statements `body` call, by the names the
    module sees; the prelude's builtins are no items and are passed over."""
    for stmt in body:
        for node in nodes(stmt):
            if isinstance(node, t.Call):
                item = items.get(node.callee)
                if isinstance(item, t.Op) or (isinstance(item, t.Function)
                                              and item.kind == "fn"):
                    yield item
