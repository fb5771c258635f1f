"""Kernel tuning: try an op's kernel at other tile sizes and launch hints, keep the fastest
that agrees with the op's body, and record it in a tuning file that compiling then reads.

- `tune(path, op, bind={...}, candidates={...}, ...)` runs the search and returns a
  `TuneResult` (`linnet/tune/tuner.py`); `plan(...)` lists the candidates it would try
  (`linnet/tuning/candidates.py`); `linnet tune` is its command line (`linnet/cli/tune.py`).
- `TuningFile` reads and writes the tuning file (`linnet/tuning/records.py`);
  `tuning_for(tuning, source, device)` is what a compilation uses.

The records and the candidate space live in `linnet.tuning`, below the pipeline (which
reads tuning files); this package, the tuner, sits above it with the harness. Importing it
does not import torch: the tuner imports it when it times a kernel.
"""

from __future__ import annotations

from ..tuning.candidates import Candidate, CandidateSpace, candidate_space
from ..tuning.records import TuningFile, TuningFileError, tuning_for, tuning_path
from .tuner import Trial, TuneError, TuneResult, plan, tune

__all__ = ["tune", "plan", "TuneResult", "TuneError", "Candidate", "CandidateSpace",
           "candidate_space", "Trial", "TuningFile", "TuningFileError", "tuning_for",
           "tuning_path"]
