"""Tests that run at CPython's default recursion limit, as a user's program would: deep
programs must compile and run there (linnet.deepstack), not only under a raised limit."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def default_limit():
    """Each test runs at CPython's default recursion limit, as a user's program would."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(old)
