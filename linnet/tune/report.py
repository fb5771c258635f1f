"""Printing a tuning run: the table `linnet tune` prints, and its `--json` form.

The table lists every candidate tried, the passing ones fastest first, then those that
lost their right to win (did not compile, raised, disagreed with the body); the header's
choice and the winner are marked. Below it: what the filter left out and why, whether the
cap cut, the winner against the header's choice, and where it was recorded.
"""

from __future__ import annotations

from typing import Any

from ..tuning.candidates import CandidateSpace
from .tuner import Trial, TuneResult

SHOWN_FILTERED = 12  # in the table's notes; --json lists them all


def format_space(space: CandidateSpace, numerics: str) -> str:
    """`linnet tune --list`: the candidates that would run, in order, and those left out."""
    lines = [f"{space.label} (kernel {space.kernel}), numerics {numerics}: "
             f"{len(space.candidates)} candidate{'s' if len(space.candidates) != 1 else ''}"]
    for cand in space.candidates:
        mark = "  (header's choice)" if cand == space.header else ""
        lines.append(f"  {cand.describe()}{mark}")
    return "\n".join(lines + _space_notes(space))


def format_result(result: TuneResult) -> str:
    space = result.space
    lines = [f"{space.label} (kernel {space.kernel}), numerics {result.numerics}, on "
             f"{result.device} ({result.runtime})"]
    rows = [_row(result, t) for t in _ordered(result.trials)]
    head = ["candidate", "time", "checked", ""]
    widths = [max(len(r[k]) for r in rows + [head]) for k in range(len(head))]
    for row in [head] + rows:
        lines.append("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    lines += [f"  {t.candidate.describe()}: {t.problem}" for t in result.trials
              if t.problem]
    lines += _space_notes(space)
    lines.append("  " + _verdict(result))
    return "\n".join(lines)


def _ordered(trials: list[Trial]) -> list[Trial]:
    passing = sorted((t for t in trials if t.ok), key=lambda t: t.time_ms)
    return passing + [t for t in trials if not t.ok]


def _row(result: TuneResult, t: Trial) -> list[str]:
    time = f"{t.time_ms:.4g} ms" if t.time_ms is not None else "-"
    if t.checked:
        checked = f"ok ({t.worst:.2g} of tol)"
    elif t.worst is not None:
        checked = f"DISAGREE ({t.worst:.2g} of tol)"
    else:
        checked = "ERROR"
    marks = []
    if t is result.winner:
        marks.append("winner")
    if t.candidate == result.space.header:
        marks.append("header's choice")
    return [t.candidate.describe(), time, checked, ", ".join(marks)]


def _space_notes(space: CandidateSpace) -> list[str]:
    lines = []
    if space.filtered:
        lines.append(f"  {len(space.filtered)} left out before running (the compiler would "
                     f"refuse them at these sizes):")
        for cand, why in space.filtered[:SHOWN_FILTERED]:
            lines.append(f"    {cand.describe()}: {why}")
        if len(space.filtered) > SHOWN_FILTERED:
            lines.append(f"    ... and {len(space.filtered) - SHOWN_FILTERED} more (--json "
                         f"lists them all)")
    if space.header not in space.candidates:
        lines.append("  the header's choice is not among the candidates (the compiler "
                     "refuses it at these sizes)")
    if space.capped:
        lines.append(f"  {space.cap_note()}")
    return lines


def _verdict(result: TuneResult) -> str:
    win = result.winner
    if win is None:
        return "no candidate agreed with the op's body: nothing recorded"
    text = f"winner: {win.candidate.describe()} at {win.time_ms:.4g} ms"
    speedup = result.speedup()
    if win.candidate == result.space.header:
        text += " (the header's choice)"
    elif speedup is not None:
        text += f", {speedup:.2f}x the speed of the header's choice"
    if result.recorded:
        text += (f"; recorded in {result.tuning_path} for {result.device} "
                 f"({result.space.op} at {result.space.binding}, numerics {result.numerics})")
    else:
        text += "; not recorded"
    return text


def result_json(result: TuneResult) -> dict[str, Any]:
    """The run as data: `linnet tune --json` prints it."""
    space, win = result.space, result.winner
    return {
        "op": space.op, "kernel": space.kernel, "binding": space.binding,
        "values": result.values, "numerics": result.numerics, "device": result.device,
        "runtime": result.runtime, "header": space.header.as_dict(),
        "candidates": [{**t.as_dict(), "header": t.candidate == space.header,
                        "winner": t is win} for t in result.trials],
        "filtered": [{**c.as_dict(), "reason": why} for c, why in space.filtered],
        "considered": space.considered, "cap": space.cap, "capped": space.capped,
        "winner": None if win is None else win.as_dict(),
        "speedup_over_header": result.speedup(),
        "tuning_file": result.tuning_path if result.recorded else None,
    }


def space_json(space: CandidateSpace, numerics: str) -> dict[str, Any]:
    """`linnet tune --list --json`."""
    return {"op": space.op, "kernel": space.kernel, "binding": space.binding,
            "numerics": numerics, "header": space.header.as_dict(),
            "candidates": [c.as_dict() for c in space.candidates],
            "filtered": [{**c.as_dict(), "reason": why} for c, why in space.filtered],
            "considered": space.considered, "cap": space.cap, "capped": space.capped}
