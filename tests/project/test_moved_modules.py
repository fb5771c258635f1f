"""Old module names keep importing, for one release, with a DeprecationWarning
(`linnet/moved.py`): the modules the docs showed users before the move into packages."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings

import pytest

import linnet.fuzz
import linnet.fuzz.programs
from linnet.moved import MOVED, new_name


@pytest.mark.parametrize("old, new", [
    ("linnet.testing.fuzz", "linnet.fuzz"),
    ("linnet.testing.programs", "linnet.fuzz.programs"),
    ("linnet.testing.oracle", "linnet.fuzz.oracle"),
    ("linnet.testing.reduce", "linnet.fuzz.reduce"),
    ("linnet.frontend", "linnet.check.frontend"),
    ("linnet.cli_compile", "linnet.cli.compile"),
    ("linnet.passes.cse", "linnet.passes.middle.cse"),
])
def test_an_old_name_is_its_new_module_and_warns(old, new):
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {new}"):
        module = importlib.import_module(old)
    assert module is importlib.import_module(new)


def test_a_module_inside_a_moved_package_imports_by_its_old_name():
    sys.modules.pop("linnet.testing.fuzz.sources", None)
    with pytest.warns(DeprecationWarning):
        from linnet.testing.fuzz.sources import corpus
    assert corpus is linnet.fuzz.corpus


def test_what_the_docs_showed_still_runs_under_the_old_names():
    """docs/fuzzing.md's `from linnet.testing.programs import generate`, in a fresh process."""
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    from linnet.testing.programs import generate\n"
            "except DeprecationWarning as w:\n    print('warned:', w)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.startswith("warned: linnet.testing.programs moved to linnet.fuzz.programs")


def test_the_harness_names_of_linnet_testing_warn_and_forward():
    import linnet.testing
    with pytest.warns(DeprecationWarning, match="linnet.fuzz.compare_kernel_and_body"):
        fn = linnet.testing.compare_kernel_and_body
    assert fn is linnet.fuzz.compare_kernel_and_body


def test_new_names_import_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        importlib.import_module("linnet.fuzz.programs")
        importlib.import_module("linnet.cli")
    assert new_name("linnet.pipeline") is None


def test_every_old_name_maps_to_a_module_that_exists():
    for old, new in MOVED.items():
        assert importlib.util.find_spec(new) is not None, (old, new)
