"""The environment of child processes keeps the parent's PYTHONPATH after the checkout."""

from __future__ import annotations

import os

from linnet.testing.child_env import child_env


def test_the_checkout_goes_first_and_the_parents_entries_stay():
    base = {"PYTHONPATH": os.pathsep.join(["/site", "/repo"]), "HOME": "/h", "TRITON_INTERPRET": "1"}
    env = child_env("/repo", base=base, drop=("TRITON_INTERPRET",), LINNET_CACHE="/c")
    assert env["PYTHONPATH"] == os.pathsep.join(["/repo", "/site"])
    assert env["HOME"] == "/h" and env["LINNET_CACHE"] == "/c" and "TRITON_INTERPRET" not in env


def test_without_a_parent_path_only_the_checkout():
    assert child_env("/repo", base={})["PYTHONPATH"] == "/repo"
