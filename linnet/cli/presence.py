"""`--present PATH` and `--weights FILE.safetensors`: which optional members a block entry has.

An optional param or sub is present when the checkpoint holds it (docs/models.md,
"Optional members"); the commands that compile a block entry learn what the checkpoint
holds from these flags: each `--present` names one parameter path, `--weights` every
tensor of a safetensors file (its names only: no tensor is read). Neither flag: no
checkpoint, every optional member absent. The options and their help are in
`linnet/cli/options/presence.py`; this module, which reads checkpoints, is loaded only by
the commands that run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from ..checkpoint import CheckpointError, check_checkpoint, check_present, open_checkpoint
from ..errors import LinnetError, UsageError


def presence(args: argparse.Namespace) -> frozenset[str] | None:
    """The parameter paths the flags say the checkpoint holds; None with neither flag.
    A --weights file that cannot be read is a UsageError (exit status 2)."""
    paths = list(getattr(args, "present", None) or [])
    weights = getattr(args, "weights", None)
    if weights is None and not paths:
        return None
    if weights is not None:
        paths += weight_names(weights)
    return frozenset(paths)


def presence_problem(args: argparse.Namespace, manifest) -> tuple[int, Exception] | None:
    """(exit status, CheckpointError) when the flags do not fit the compiled block entry's
    manifest, as the library reports a checkpoint that does not fit (`CheckpointError`):
    a --weights file with params or buffers missing, names the model does not have, or
    other shapes or dtypes (status 1, the input's fault); a --present path the model has
    no parameter for, a misspelling (status 2). None when they fit or do not apply."""
    if manifest is None:
        return None
    try:
        if getattr(args, "present", None):
            check_present(manifest, args.present)
        weights = getattr(args, "weights", None)
        if weights is not None:
            try:
                check_checkpoint(manifest, open_checkpoint(weights))
            except CheckpointError as err:
                return 1, err
    except CheckpointError as err:
        return 2, err
    return None


def weight_names(path: str) -> list[str]:
    """The tensor names of a safetensors file, read from its header alone
    (`linnet.checkpoint.open_checkpoint`); a file it cannot read is a command-line mistake."""
    try:
        import safetensors  # noqa: F401
    except ImportError as err:
        raise UsageError(f"--weights {path}: reading it needs the safetensors package "
                         f"(pip install safetensors): {err}") from None
    if not Path(path).is_file():
        raise UsageError(f"--weights {path}: no such file")
    try:
        return sorted(open_checkpoint(path).keys)
    except LinnetError as err:
        raise UsageError(f"--weights {path}: not a readable safetensors file ({err})") from None
