"""The spec corpus: valid programs check cleanly; each invalid one fails with its code.

`tests/spec/invalid/manifest.toml` names, for every invalid program, the code of
its first diagnostic and the line where that diagnostic's span starts.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from linnet.check.frontend import check_program

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "tests" / "spec"
VALID = sorted((SPEC / "valid").glob("*.linnet")) + sorted((ROOT / "examples").glob("*.linnet"))
MANIFEST = tomllib.loads((SPEC / "invalid" / "manifest.toml").read_text())
LANGUAGE_CODES = ("E1001 E1002 E1004 E1005 E1101 E1102 E1201 E1202 E1204 E1205 E1207 E2101 "
                  "E2102 E2103 E2104 E2105 E2106 E2108 E2109 E2110 E2111 E2112 E2114 E2115 "
                  "E2116 E2119 E2120 E2121 E2123 E2124 E2125 E2126 E2127 E2190 E2201 E2202 "
                  "E2203 E2204 E2205 E2206 E2207 E2208 E2209 E2210 E3101 E3102 E3103 E3104 "
                  "E3105 E3106 E2131 E2132").split()


def _line_of(result, diagnostic) -> int:
    return result.sources[diagnostic.span.file].position(diagnostic.span.start)[0]


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_program_checks_cleanly(path: Path) -> None:
    result = check_program(str(path))
    assert [f"{d.code} {d.message}" for d in result.diagnostics] == []


@pytest.mark.parametrize("name", sorted(MANIFEST), ids=str)
def test_invalid_program_fails_with_its_code(name: str) -> None:
    entry = MANIFEST[name]
    result = check_program(str(SPEC / "invalid" / entry["file"]))
    assert result.diagnostics, "expected a diagnostic"
    first = result.diagnostics[0]
    assert (first.code, _line_of(result, first)) == (entry["code"], entry["line"]), first.message


def test_every_invalid_file_is_in_the_manifest() -> None:
    files = {p.name for p in (SPEC / "invalid").glob("*.linnet")}
    listed = {entry["file"] for entry in MANIFEST.values()}
    assert files == listed


def test_every_language_code_has_an_invalid_program() -> None:
    covered = {entry["code"] for entry in MANIFEST.values()}
    assert set(LANGUAGE_CODES) - covered == set()


def test_corpus_is_large_enough() -> None:
    assert len(list((SPEC / "valid").glob("*.linnet"))) >= 40
    assert len(MANIFEST) >= len(LANGUAGE_CODES)


def test_manifest_matches_expect_comments() -> None:
    """Each program marks its mistake with `// expect: CODE` on the line before it."""
    for entry in MANIFEST.values():
        lines = (SPEC / "invalid" / entry["file"]).read_text().splitlines()
        marks = [k + 2 for k, line in enumerate(lines)
                 if re.search(r"//\s*expect:\s*" + entry["code"], line)]
        assert entry["line"] in marks, entry["file"]
