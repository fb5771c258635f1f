"""The documentation's commands and Python run, and print what the pages say they print.

Every fenced block of `docs/*.md` and `README.md` tagged `console`, `shell` (or `sh`,
`bash`) or `python` is run, the blocks of a page in order, in one scratch directory per
page under pytest's temporary directory. It holds copies of `examples/`, `tests/` and
`benchmarks/`, so a block names them as a reader in a checkout would, and nothing is
written into the repository (asserted: no untracked file appears there while they run).
`linnet` runs this checkout as `sys.executable -m linnet` would, and `python`, `python3`
and `.venv/bin/python` (and each `python` block, as `python -c BLOCK`) as `sys.executable`
would, through a fork server that has the compiler imported already
(linnet/testing/fork_servers.py: a `linnet` command starts in a tenth of the time, and
cannot tell the difference; a form other than `-m` or `-c` starts a fresh interpreter). The
environment is a CPU machine's as a user has
it: a GPU is hidden from torch and JAX (`CUDA_VISIBLE_DEVICES`, `JAX_PLATFORMS`), and
`TRITON_INTERPRET`, `NO_COLOR` and the `LINNET_*` settings (but the test cache) are
removed, so pages show what a plain run prints.

The conventions (also in docs/README.md, "Conventions of these pages"):

- `console`: a transcript. Each `$ ` line is a command (a trailing `\\` continues it onto
  the next line); the lines after it, up to the next `$ ` line, are what it prints on
  standard output and standard error together, compared with what it really prints. The
  commands of a block run in one bash session (`cd` and `echo $?` work). A line `...`
  stands for any number of lines the page leaves out, and `...` within a line for any
  text there. A command may exit with status 1 or 2 only where the page shows its output
  (the error it demonstrates); status 3, an internal error, always fails.
- `shell`: commands without their output; the block runs as one bash script that must
  succeed.
- `python`: a script that must run to completion; what it claims about values is
  written as `assert`.
- Files the blocks read: a block right below `<!-- docs-test: file NAME -->` is written to
  NAME in the scratch directory before the blocks after it run (and is not run itself: a
  script whose output a page shows is such a file, run by a `$ python NAME` line), and
  every `linnet` block is written at its module path (`module lib.act` -> `lib/act.linnet`).
- `<!-- docs-test: skip (REASON) -->` right above a block leaves it out; the reason is
  required (it needs a CUDA GPU, the network, minutes of time, or is a fragment).

What must vary between the page and a run is normalised, and only that: the scratch
directory's absolute path, durations (`9 s`, `0.4 ms`, the spaces that pad them into a
column, `"time_ms": 36.9` in a tuning file), dates, trailing spaces. Blocks tagged `text`
are not run; a `text` block whose first line is a `$ ` command is an error (tag it
`console`), and so is a fence without a tag.
"""

from __future__ import annotations

import os
import subprocess
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from docblocks import (PAGES, ROOT, RUNNABLE_TAGS, Block, make_scratch, output_matches,
                       page_blocks, parse_page, run_block, transcript, write_file)

WORKERS = max(1, min(4, os.cpu_count() or 1))


def _runnable(page: Path) -> list[Block]:
    return [b for b in page_blocks(page)[0] if b.tag in RUNNABLE_TAGS]


RUN_PAGES = [p for p in PAGES if _runnable(p)]


def _untracked() -> set[str] | None:
    """The files git does not track and does not ignore: where a block that wrote into
    the checkout would show. (Changes to tracked files are not compared: whoever edits the
    checkout while the tests run would fail them.)"""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return {line[3:] for line in out.splitlines() if line.startswith("?? ")}


def run_page(page: Path, base: Path) -> list[str]:
    """Every block of a page, in order, in a scratch directory of its own: what failed."""
    work, env = make_scratch(base)
    failures = []
    for block in page_blocks(page)[0]:
        write_file(block, work)
        if block.tag not in RUNNABLE_TAGS or block.marker:
            continue
        failures += [f"{block.where} ({block.tag}): {problem}"
                     for problem in run_block(block, work, env)]
    return failures


class PageRuns:
    """The pages' runs, started together on a few threads when the first is asked for:
    the blocks wait on subprocesses, so pages overlap and the module takes about its total
    time divided by the cores. Under pytest-xdist, which spreads the pages over processes
    already, each page runs when its test does."""

    def __init__(self, pages: list[Path], base: Path, parallel: bool) -> None:
        self.base = base
        self.pool = ThreadPoolExecutor(WORKERS) if parallel and len(pages) > 1 else None
        heaviest_first = sorted(pages, key=lambda p: -len(_runnable(p)))
        self.futures: dict[Path, Future] = {
            p: self.pool.submit(run_page, p, self._dir(p)) for p in heaviest_first
        } if self.pool else {}

    def _dir(self, page: Path) -> Path:
        return self.base / str(page.relative_to(ROOT)).replace(os.sep, "_")

    def failures(self, page: Path) -> list[str]:
        if page in self.futures:
            return self.futures[page].result()
        return run_page(page, self._dir(page))

    def close(self) -> None:
        if self.pool:
            self.pool.shutdown(cancel_futures=True)


@pytest.fixture(scope="module")
def git_before() -> set[str] | None:
    return _untracked()


@pytest.fixture(scope="module")
def page_runs(request, tmp_path_factory, git_before):  # noqa: ARG001 - taken first
    selected = [item.callspec.params["page"] for item in request.session.items
                if getattr(item, "originalname", "") == "test_page_blocks_run_as_shown"
                and item.module is request.module]
    runs = PageRuns(selected, tmp_path_factory.mktemp("docs-blocks"),
                    parallel="PYTEST_XDIST_WORKER" not in os.environ)
    yield runs
    runs.close()


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_blocks_run_as_shown(page: Path, git_before: set[str] | None,
                                  page_runs: PageRuns) -> None:
    failures = page_runs.failures(page)
    now = _untracked()
    assert git_before is None or now is None or now <= git_before, \
        f"running the blocks wrote into the repository: {sorted(now - git_before)}"
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_markers_and_tags_are_well_formed(page: Path) -> None:
    blocks, problems = page_blocks(page)
    for block in blocks:
        where = block.where
        if not block.tag:
            problems.append(f"{where}: a block without a tag (`text` for plain text)")
        if block.tag == "text" and block.text.startswith("$ "):
            problems.append(f"{where}: a transcript tagged `text`; tag it `console`")
        if block.tag == "console":
            try:
                transcript(block.text)
            except ValueError as err:
                problems.append(f"{where}: {err}")
        if block.marker and block.marker.kind == "skip" and block.tag not in RUNNABLE_TAGS:
            problems.append(f"{where}: a skip marker on a `{block.tag}` block, which never runs")
    assert problems == []


def test_skipped_blocks_are_few_and_say_why() -> None:
    skipped = [b for p in PAGES for b in page_blocks(p)[0]
               if b.marker and b.marker.kind == "skip"]
    ran = [b for p in PAGES for b in _runnable(p) if b not in skipped]
    assert all(b.marker.value for b in skipped)
    assert len(ran) > 2 * len(skipped), [b.where for b in skipped]


# ----- the conventions themselves ----------------------------------------------------------

def test_marker_without_reason_is_an_error() -> None:
    _, problems = parse_page("<!-- docs-test: skip () -->\n```python\nx = 1\n```\n")
    assert problems == ["line 1: a skip marker needs a reason: `skip (needs a CUDA GPU)`"]
    _, problems = parse_page("<!-- docs-test: skip -->\n```python\nx = 1\n```\n")
    assert len(problems) == 1 and "unknown docs-test directive 'skip'" in problems[0]


def test_marker_must_sit_right_above_its_block() -> None:
    blocks, problems = parse_page("<!-- docs-test: skip (a GPU) -->\n\n```python\nx\n```\n")
    assert problems == ["line 1: a marker not right above a block"]
    assert blocks[0].marker is None
    blocks, problems = parse_page("text\n<!-- docs-test: file a.py -->\n```python\nx\n```\n")
    assert problems == [] and blocks[0].marker.kind == "file" and blocks[0].line == 3


def test_transcript_splits_commands_and_output() -> None:
    commands = transcript("$ linnet check a \\\n    b\nok: 2 files checked\n$ ls\n")
    assert [(c.text, c.shown) for c in commands] == [
        ("linnet check a \\\n    b", ["ok: 2 files checked"]), ("ls", [])]
    with pytest.raises(ValueError):
        transcript("ok\n$ ls\n")


def test_output_matching_is_exact_but_for_ellipses_and_durations() -> None:
    assert output_matches(["ok: 1 file checked"], "ok: 1 file checked\n")
    assert not output_matches(["ok: 1 file checked"], "ok: 2 files checked\n")
    assert not output_matches([], "something\n")
    assert output_matches(["first", "...", "last"], "first\na\nb\nlast\n")
    assert output_matches(["first", "...", "last"], "first\nlast\n")
    assert not output_matches(["first", "...", "last"], "first\na\n")
    assert output_matches(["kernels on ... (CPU)"], "kernels on the interpreter (CPU)\n")
    assert not output_matches(["kernels on ... (CPU)"], "kernels on cuda\n")
    assert output_matches(["40 programs in 9 s: no findings"], "40 programs in 3 s: no findings")
    assert output_matches(["BC=128  52.82 ms  ok"], "BC=128  6.1 ms    ok\n")
    assert output_matches(['"time_ms": 52.8,', "2026-12-03"], '"time_ms": 7.25,\n2027-01-30\n')
    assert not output_matches(["took 9 s"], "took 9 files\n")
    assert not output_matches(["fired     2x"], "fired     3x\n")
