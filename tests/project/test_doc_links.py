"""The documentation stands on its own: it names no file outside the repository, and its links
lead somewhere.

Users of the repository or of the wheel see only what the repository holds, so a page, the
README or a string of the package that sends them to a file beside it (a contract or design
note kept elsewhere) sends them nowhere. And a relative link in `docs/*.md` or `README.md`
must name a file that exists and, when it has a `#fragment`, a heading of that file, with
anchors made as GitHub makes them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]
PACKAGE_SUFFIXES = {".py", ".lark", ".toml", ".json", ".md", ".txt"}

# Files that live beside the repository, never in it, and paths that reach outside it.
OUTSIDE = re.compile(r"\b(?:LANGUAGE(?:-MODELS)?|DESIGN|APIS|PREAMBLE)\.md\b"
                     r"|\.\./shared\b|/work/shared\b")

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.S | re.M)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.S)
LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


def _prose(text: str) -> str:
    """The text without fenced blocks and code spans: where links and headings are real."""
    text = FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return CODE_SPAN.sub("", text)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: link targets and markup dropped, lower case,
    punctuation other than `-` and `_` removed, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every heading anchor of a page, the repeated ones numbered as GitHub numbers them."""
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    out = set()
    for m in HEADING.finditer(text):
        base = slug(m.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        out.add(base if count == 0 else f"{base}-{count}")
    return out


def links(page: Path) -> list[str]:
    return [m.group(2) for m in LINK.finditer(_prose(page.read_text(encoding="utf-8")))]


def _package_files() -> list[Path]:
    return sorted(p for p in (ROOT / "linnet").rglob("*")
                  if p.is_file() and p.suffix in PACKAGE_SUFFIXES)


def test_slug_matches_github() -> None:
    assert slug("5. Index notation and reductions") == "5-index-notation-and-reductions"
    assert slug("`--grad`") == "--grad"
    assert slug("Tiles sized from the shapes: `next_pow2`") == "tiles-sized-from-the-shapes-next_pow2"
    assert slug("E2126: op/kernel mismatch, or a call to a kernel") == \
        "e2126-opkernel-mismatch-or-a-call-to-a-kernel"


def test_link_extraction_skips_code() -> None:
    page_text = "see [a](a.md#x) and `[b](b.md)`\n```text\n[c](c.md)\n```\n[d](<d.md>)\n"
    assert [m.group(2) for m in LINK.finditer(_prose(page_text))] == ["a.md#x", "d.md"]


@pytest.mark.parametrize("path", PAGES + _package_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_reference_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    found = [f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)}"
             for m in OUTSIDE.finditer(text)]
    assert found == [], f"{path.relative_to(ROOT)} refers to files outside the repository"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for target in links(page):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, fragment = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading #{fragment} in {dest.name}")
    assert broken == []


def test_language_reference_is_linked() -> None:
    """The reference is reachable from both indexes."""
    assert "language.md" in links(DOCS / "README.md")
    assert "docs/language.md" in links(ROOT / "README.md")
