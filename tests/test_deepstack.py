"""The deep-stack worker that runs compilations (`linnet.deepstack`): the cyclic garbage
collector is paused while a job runs, and left as the caller had it after."""

from __future__ import annotations

import gc

import pytest

from linnet.deepstack import call_with_deep_stack


def _cycle() -> None:
    a: list = []
    a.append(a)


def test_the_collector_is_paused_during_a_job_and_enabled_after():
    assert gc.isenabled()
    seen = call_with_deep_stack(gc.isenabled)
    assert seen is False and gc.isenabled()


def test_the_cycles_a_job_leaves_are_collected_at_its_end():
    gc.collect()
    call_with_deep_stack(lambda: [_cycle() for _ in range(1000)])
    assert gc.collect() == 0  # the job's end collected them already


def test_a_collector_the_caller_disabled_stays_disabled():
    gc.disable()
    try:
        assert call_with_deep_stack(gc.isenabled) is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_in_a_job_still_enables_the_collector():
    def fail() -> None:
        raise ValueError("boom")
    with pytest.raises(ValueError):
        call_with_deep_stack(fail)
    assert gc.isenabled()
