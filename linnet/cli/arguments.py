"""What the options several commands share mean: `--bind NAME=VALUE` and `--tuning` /
`--no-tuning`.

`compile`, the generating commands, `verify`, `tune` and `inspect` all take them; reading
them here, apart from any one command, lets each command module import only what it runs.
"""

from __future__ import annotations

import argparse

from ..errors import UsageError


def tuning_argument(args: argparse.Namespace) -> object:
    """compile_source's `tuning=` for the command's --tuning / --no-tuning."""
    if getattr(args, "no_tuning", False):
        return False
    return getattr(args, "tuning", None)


def bind_values(items: list[str]) -> dict[str, str]:
    """`--bind NAME=VALUE` items as {name: value} (every command that takes `--bind`)."""
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise UsageError(f"--bind {item}: write NAME=VALUE, such as R=8 or T=f32")
        out[name.strip()] = value.strip()
    return out
