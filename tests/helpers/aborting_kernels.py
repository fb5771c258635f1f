"""Planted in `linnet verify`'s child (`linnet.fuzz.verify_trials.CHILD_IMPORTS`): in a process
that imports it, the kernel of every op named `softmax` calls `os.abort()`, as a kernel
writing out of bounds ends its process with SIGABRT. The bodies (`--numerics exact`) and
every other op's kernel are the compiler's own."""

from __future__ import annotations

import os

from linnet.fuzz import harness

_real = harness.compiled


def _aborting(*inputs):
    os.abort()


def _compiled(spec, values, numerics, tuning=False):
    if spec.name == "softmax" and numerics != "exact":
        return _aborting, "@triton.jit  # planted: aborts"
    return _real(spec, values, numerics, tuning)


harness.compiled = _compiled
