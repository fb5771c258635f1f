"""The documentation stays true: its programs check, and every diagnostic code is documented.

Every fenced block tagged `linnet` in `docs/` is a complete module that must check with no
diagnostics. The blocks of one page are written side by side under `tmp_path`, each at the
file its module path names (`module lib.act` -> `lib/act.linnet`), so that a page can show a
library module and a root module that `use`s it. Blocks that are fragments, or that show a
mistake, are tagged `text` and are not checked.

Every code in the table of `LANGUAGE.md` section 10 (read from the shared contract when it is
present, else from the list below), plus E1006, must appear in `docs/diagnostics.md` as a
heading or as an entry of its index table.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from linnet.check.frontend import check_program

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LANGUAGE_CANDIDATES = (Path("/work/shared/LANGUAGE.md"), ROOT / "LANGUAGE.md",
                       ROOT.parent / "shared" / "LANGUAGE.md")

# Section 10 of LANGUAGE.md, for when the contract file is not available.
FALLBACK_CODES = (
    "E1001 E1002 E1004 E1005 E1101 E1102 E1201 E1202 E1204 E1205 E1207 E2101 E2102 E2103 "
    "E2104 E2105 E2106 E2108 E2109 E2110 E2111 E2112 E2114 E2115 E2116 E2119 E2120 E2121 "
    "E2123 E2124 E2125 E2126 E2127 E2190 E2201 E2202 E2203 E2204 E2205 E2206 E2207 E2208 "
    "E2209 E2210 E3101 E3102 E3103 E3104 E3105 E3106").split()
PROJECT_CODES = ["E1006", "E2133", "E2134"]  # added by this project: nesting deeper than 200
# levels, kernel integers that wrap and grids past the launch limits at the bound sizes

FENCE = re.compile(r"^```linnet[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
MODULE = re.compile(r"^module[ \t]+([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)",
                    re.M)


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _blocks(page: Path) -> list[str]:
    return FENCE.findall(page.read_text(encoding="utf-8"))


def _block_ids() -> list[tuple[Path, int]]:
    return [(page, k) for page in _pages() for k in range(len(_blocks(page)))]


def _file_for(block: str, k: int) -> Path:
    """Where a block lives relative to its page's directory: by its module path."""
    m = MODULE.search(block)
    parts = m.group(1).split(".") if m else [f"block_{k}"]
    return Path(*parts[:-1], parts[-1] + ".linnet")


def _write_page(page: Path, tmp_path: Path) -> list[Path]:
    """Write every block of a page beside the others; return their paths, in order."""
    base = tmp_path / page.stem
    paths = []
    for k, block in enumerate(_blocks(page)):
        path = base / _file_for(block, k)
        assert not path.exists(), f"{page.name}: two blocks declare the module of {path.name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block, encoding="utf-8")
        paths.append(path)
    return paths


@pytest.mark.parametrize(("page", "k"), _block_ids(),
                         ids=lambda v: v.name if isinstance(v, Path) else str(v))
def test_linnet_block_checks_cleanly(page: Path, k: int, tmp_path: Path) -> None:
    paths = _write_page(page, tmp_path)
    path = paths[k]
    result = check_program(str(path), path.read_text(encoding="utf-8"))
    shown = [f"{d.code} {d.message} at {Path(d.span.file).name}:"
             f"{result.sources[d.span.file].position(d.span.start)[0]}"
             if d.span.file in result.sources else f"{d.code} {d.message}"
             for d in result.diagnostics]
    assert shown == [], f"block {k} of {page.name} ({path.name}) does not check"


def test_docs_have_linnet_blocks() -> None:
    """Guards the extraction itself: the tour is made of checked programs."""
    assert len(_blocks(DOCS / "tour.md")) >= 10


def _language_codes() -> list[str]:
    for candidate in LANGUAGE_CANDIDATES:
        if candidate.is_file():
            text = candidate.read_text(encoding="utf-8")
            start = re.search(r"^## 10\b.*$", text, re.M)
            assert start, f"no section 10 in {candidate}"
            end = re.search(r"^## ", text[start.end():], re.M)
            section = text[start.end():start.end() + end.start()] if end else text[start.end():]
            codes = re.findall(r"^\|\s*(E\d{4})\s*\|", section, re.M)
            assert codes, f"no code table in section 10 of {candidate}"
            return codes
    return list(FALLBACK_CODES)


def test_every_diagnostic_code_is_documented() -> None:
    text = (DOCS / "diagnostics.md").read_text(encoding="utf-8")
    missing = []
    for code in _language_codes() + PROJECT_CODES:
        heading = re.search(rf"^#+ .*\b{code}\b", text, re.M)
        entry = re.search(rf"^\|\s*\[?{code}\b", text, re.M)
        if not (heading or entry):
            missing.append(code)
    assert missing == []
