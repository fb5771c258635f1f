"""What the README and the docs index count stays true: the number of passes the README
names is what `linnet compile --list-passes` lists, and docs/README.md lists every page of
docs/ once."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from linnet.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def test_the_readme_counts_the_passes_that_list_passes_lists(capsys) -> None:
    assert main(["compile", "--list-passes"]) == 0
    listed = capsys.readouterr().out.strip().splitlines()
    claim = re.search(r"A visible pipeline\*\* of (\d+) small passes",
                      (ROOT / "README.md").read_text(encoding="utf-8"))
    assert claim, "the README no longer says how many passes the pipeline has"
    assert int(claim.group(1)) == len(listed), listed


def test_the_docs_index_lists_every_page_once() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    rows = Counter(re.findall(r"^\| \[([\w.]+\.md)\]\(\1\) \|", index, re.M))
    pages = {p.name for p in DOCS.glob("*.md")} - {"README.md"}
    assert sorted(name for name, n in rows.items() if n > 1) == []
    assert set(rows) == pages
