"""`linnet.fuzz.child_process.Worker`: calls in one spawned child that outlives them, a
death (or a call past its timeout) answered as `Died`, and a fresh child for the next call;
a child forked by the fork server (`forked=True`) sees its parent's environment of now.

The functions sent are this module's, imported again in the child (its folder is on the
path pytest gives the child); they import nothing heavy, so each child starts in a moment.
"""

from __future__ import annotations

import os
import time

import pytest

from linnet.fuzz.child_process import Died, StartFailed, Worker


def square(x: int) -> int:
    return x * x


def pid(_: object) -> int:
    return os.getpid()


def abort(_: object) -> None:
    os.abort()


def sleep(seconds: float) -> float:
    time.sleep(seconds)
    return seconds


def environment_value(name: str) -> str | None:
    return os.environ.get(name)


def fail(_: object) -> None:
    raise ValueError("planted")


def test_calls_share_one_child_and_a_death_starts_a_new_one() -> None:
    with Worker() as worker:
        first = worker.call(pid, None)
        assert worker.call(square, 7) == 49
        assert worker.call(pid, None) == first != os.getpid()
        died = worker.call(abort, None)
        assert died == Died(-6) and died.cause == "SIGABRT" and died.kind == "crash"
        assert died.signature == "process died: SIGABRT"
        assert worker.call(pid, None) not in (first, os.getpid())
        assert worker.starts == 2


def test_an_exception_is_raised_here_and_a_call_past_its_timeout_is_killed() -> None:
    with Worker() as worker:
        first = worker.call(pid, None)
        with pytest.raises(ValueError, match="planted"):
            worker.call(fail, None)
        assert worker.call(pid, None) == first  # an exception leaves the child running
        started = time.monotonic()
        died = worker.call(sleep, 60.0, timeout=0.5)
        assert time.monotonic() - started < 30
        assert isinstance(died, Died) and died.cause == "timed out after 0.5 s"
        assert died.kind == "hang"
        assert worker.call(sleep, 0.0, timeout=30) == 0.0 and worker.starts == 2


def test_a_child_that_cannot_start_is_start_failed() -> None:
    with pytest.raises(StartFailed, match="a verify child could not start: ValueError: planted"):
        Worker(fail, None, "verify child").call(square, 2)


def abort_at_exit(_: object) -> None:
    import atexit
    atexit.register(os.abort)


def test_close_says_when_the_child_dies_as_it_ends() -> None:
    """Memory corrupted by one call may abort the process only when it is freed, at exit."""
    with Worker() as worker:
        worker.call(square, 2)
        assert worker.close() is None
        assert worker.fresh
        worker.call(abort_at_exit, None)
        assert not worker.fresh
        assert worker.close() == Died(-6)


def test_a_forked_child_takes_its_parents_environment_of_now(monkeypatch) -> None:
    """The fork server started with the first forked child, before the variable was set:
    the next child has the variable all the same (Triton and the fuzzer's test rules read
    theirs there), and dies as a spawned child does."""
    with Worker(forked=True) as worker:
        assert worker.call(environment_value, "LINNET_TEST_CHILD_VALUE") is None
    monkeypatch.setenv("LINNET_TEST_CHILD_VALUE", "now")
    with Worker(forked=True) as worker:
        assert worker.call(environment_value, "LINNET_TEST_CHILD_VALUE") == "now"
        assert worker.call(pid, None) != os.getpid()
        assert worker.call(abort, None) == Died(-6)
