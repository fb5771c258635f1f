"""What a run was measured on: the device, the versions and the date, for the JSON and the
tables. The Linnet commit comes from git when the tree is a checkout; `LINNET_COMMIT` in the
environment names it otherwise (a copy of the tree on a GPU machine has no .git)."""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from typing import Any

import torch

from .harness import ROOT


def environment(jax_side: Any) -> dict[str, Any]:
    import triton
    major, minor = torch.cuda.get_device_capability()
    env = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "device": torch.cuda.get_device_name(), "capability": f"{major}.{minor}",
           "cuda": torch.version.cuda, "torch": torch.__version__, "triton": triton.__version__,
           "python": platform.python_version(), "linnet_commit": linnet_commit()}
    env.update(jax_side.versions())
    return env


def linnet_commit() -> str:
    named = os.environ.get("LINNET_COMMIT")
    if named:
        return named
    if not (ROOT / ".git").exists():
        return "not a git checkout"
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError) as err:
        return f"unknown ({type(err).__name__})"
    return head + (" (with uncommitted changes)" if dirty else "")
