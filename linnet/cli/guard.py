"""The boundary of every command: what a command's failure becomes.

A mistake with files or packages is the user's (one line, exit 2), Ctrl-C stops quietly
(exit 130), a crash of the compiler itself is one line (exit 3). Apart from `main.py` so
that a command run on its own (`verify`'s worker) keeps the same boundary without
importing the whole command line.
"""

from __future__ import annotations

import os
import sys
import traceback
from typing import Callable

from ..deepstack import job_running
from .io import CliError, missing_extra, print_error

INTERRUPTED = 130
"""The exit status of a run stopped by Ctrl-C (SIGINT), as shells report it."""


def run_guarded(job: Callable[[], int], command: str | None = None) -> int:
    """Run a command. A mistake with files or packages is the user's (one line, exit 2);
    Ctrl-C stops quietly (exit 130); a crash of the compiler itself is one line (exit 3)."""
    name = f"linnet {command}" if command else "linnet"
    try:
        return job()
    except BrokenPipeError:  # the reader went away (`linnet ... | head`): not our error
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return interrupted()
    except CliError as err:
        print_error(name, err)
        return err.status
    except ModuleNotFoundError as err:
        message = missing_extra(err)
        if message is None:
            return internal_error(err)
        print_error(name, message)
        return 2
    except Exception as err:  # noqa: BLE001 - the boundary of the program
        return internal_error(err)


def internal_error(err: BaseException) -> int:
    """A bug in Linnet: one line (the traceback too with LINNET_DEBUG=1), exit status 3."""
    if os.environ.get("LINNET_DEBUG") == "1":
        traceback.print_exception(err)
    print_error("linnet", f"internal compiler error: {type(err).__name__}: {err}")
    return 3


def interrupted() -> int:
    """Ctrl-C: no traceback, exit status 130. A compilation still running on the deep-stack
    worker thread cannot be stopped; the process ends at once rather than wait for it."""
    print("linnet: interrupted", file=sys.stderr)
    if job_running():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED)
    return INTERRUPTED
