"""Running one call in a fresh process, so that a native crash becomes a finding.

Why: a backend can die in native code (a segfault in a JIT, an abort in a runtime), and
a process that dies takes every program it was running with it. The driver runs programs
in worker processes; when one dies, it runs each program it was given again here, alone,
to learn which one killed it and on which target, and reduces that program with a
predicate that runs each candidate here too. The processes themselves are
`linnet.fuzz.child_process`'s, which `linnet verify` runs its sizes in as well.
"""

from __future__ import annotations

from .child_process import (PROCESS, Died, StartFailed, can_spawn, isolated, process_context,
                            take_environment)

__all__ = ["Died", "StartFailed", "isolated", "can_spawn", "process_context",
           "take_environment", "PROCESS"]
