"""The environment of a child Python process that must import this checkout.

Tests and benchmarks start fresh interpreters (`python -m linnet ...`, generated `run.py`
files). Setting `PYTHONPATH` to the checkout alone drops whatever the parent had on it: on a
machine where the dependencies (lark, egglog) live in a folder on `PYTHONPATH` rather than
in the interpreter's site-packages, the child could no longer import them. The checkout goes
first; the parent's entries follow.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping


def child_env(*first: str | Path, base: Mapping[str, str] | None = None,
              drop: tuple[str, ...] = (), **extra: str) -> dict[str, str]:
    """`base` (default: this process's environment) with `first` put before the entries
    of its PYTHONPATH, the variables in `drop` removed and `extra` set."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in drop}
    inherited = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    ahead = [str(p) for p in first]
    env["PYTHONPATH"] = os.pathsep.join(ahead + [p for p in inherited if p not in ahead])
    env.update(extra)
    return env
