"""Fixtures for the op-body tests: generated modules go to a temporary cache directory."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session", autouse=True)
def linnet_cache(tmp_path_factory: pytest.TempPathFactory):
    """Point `LINNET_CACHE` at a session tmp dir, so nothing is written under the home dir."""
    path = tmp_path_factory.mktemp("linnet-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("LINNET_CACHE", str(path))
    yield path
    mp.undo()
