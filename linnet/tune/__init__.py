"""Kernel tuning: try an op's kernel at other tile sizes and launch hints, keep the fastest
that agrees with the op's body, and record it in a tuning file that compiling then reads.

- `tune(path, op, bind={...}, candidates={...}, ...)` runs the search and returns a
  `TuneResult` (`linnet/tune/tuner.py`); `plan(...)` lists the candidates it would try
  (`candidates.py`); `linnet tune` is its command line (`linnet/cli/tune.py`).
- `TuningFile` reads and writes the tuning file (`linnet/tune/records.py`);
  `tuning_for(tuning, source, device)` is what a compilation uses.

Imported lazily, so that compiling (which reads tuning files) never imports torch.
"""

from __future__ import annotations

from typing import Any

from .records import TuningFile, TuningFileError, tuning_for, tuning_path

__all__ = ["tune", "plan", "TuneResult", "TuneError", "Candidate", "Trial", "TuningFile", "TuningFileError",
           "tuning_for", "tuning_path"]


def __getattr__(name: str) -> Any:
    if name in ("tune", "plan", "TuneResult", "Trial", "TuneError"):
        from . import tuner
        return getattr(tuner, name)
    if name in ("Candidate", "CandidateSpace", "candidate_space"):
        from . import candidates
        return getattr(candidates, name)
    raise AttributeError(f"module 'linnet.tune' has no attribute {name!r}")
