"""What the e-graph passes share: an e-graph with the rule sets declared, a bounded run of
them, the names of the rules that fired, and the report kept in the program.

Rule sets come from `options.rules` when the compilation was given some
(`compile_source(..., rules=...)`): every e-graph pass then runs all of them on its own
e-graph (a rule over terms the graph does not hold matches nothing). Otherwise each pass
runs the library's rule sets written for it (`STAGE` in each module of `linnet.rules`).
"""

from __future__ import annotations

import threading
import warnings
from contextlib import contextmanager
from typing import Any, Iterator

from ...ir import tensor as ir

try:  # egglog is the optional extra "rules"; without it the e-graph passes change nothing
    from egglog import EGraph, back_off, run, unstable_combine_rulesets
    from egglog.pretty import pretty_decl

    from ...rules import MODULES, RULE_SETS
    UNAVAILABLE: str | None = None
except ImportError as err:  # pragma: no cover
    RULE_SETS = None
    UNAVAILABLE = f"{type(err).__name__}: {err}"
    """Why the e-graph passes change nothing here (egglog, or a package it needs, is
    missing): kernels then keep their masks and compute tile products without `tl.dot`."""

ITERATION_CAP = 12
MATCH_LIMIT = 1000
BAN_LENGTH = 5


def available() -> bool:
    return RULE_SETS is not None


_WARNED = False


def warn_unavailable(program: ir.Program) -> None:
    """Say on stderr (a RuntimeWarning, once per process) that kernels are compiled without
    the e-graph: what users get is then much slower than what the docs and benchmarks show,
    and nothing else would tell them why."""
    global _WARNED
    if not _WARNED and any(f.kind == "kernel" for f in program.funcs):
        _WARNED = True
        warnings.warn(f"linnet: the e-graph passes cannot run ({UNAVAILABLE}); kernels are "
                      "compiled without them: masks are kept and tile products do not "
                      "become tl.dot. Install egglog: pip install 'linnet[rules]'",
                      RuntimeWarning, stacklevel=2)


def rule_sets(options: Any, stage: str) -> tuple:
    """The rule sets a pass runs: the compilation's own `rules`, else the library's sets
    written for this pass."""
    chosen = getattr(options, "rules", None)
    if chosen is not None:
        return tuple(chosen)
    return tuple(m.RULE_SET for m in MODULES if m.STAGE == stage)


_LOCAL = threading.local()


@contextmanager
def egraph(sets: tuple) -> Iterator[tuple["EGraph", Any]]:
    """An empty e-graph that knows the rule sets, and the bounded schedule that runs them.

    Declaring the term language and the rules costs far more than running them on a
    kernel's few dozen terms, so each thread keeps one e-graph per choice of rule sets,
    declared once, and each use works inside `push()`/`pop()`: the graph is empty again
    afterwards. (An egglog e-graph must stay on the thread that made it.)
    """
    graphs = _LOCAL.__dict__.setdefault("graphs", {})
    key = tuple(id(s) for s in sets)
    if key not in graphs:
        scheduler = back_off(match_limit=MATCH_LIMIT, ban_length=BAN_LENGTH)
        rules = unstable_combine_rulesets(*sets)
        schedule = scheduler.scope(run(rules, scheduler=scheduler) * ITERATION_CAP)
        eg = EGraph()
        eg.run(schedule)  # declares every sort, function and rule while the graph is empty
        graphs[key] = (sets, eg, schedule)  # the sets are kept so their ids stay theirs
    _, eg, schedule = graphs[key]
    eg.push()
    try:
        yield eg, schedule
    finally:
        eg.pop()


def saturate(eg: "EGraph", schedule: Any) -> tuple[int, dict]:
    """Run the schedule (one call: each call costs more than an iteration); return how
    many iterations changed the graph and the match count of each rule."""
    report = eg.run(schedule)
    changed = sum(1 for it in report.iterations if it.rule_set_report.changed)
    return changed, dict(report.num_matches_per_rule)


def fired(matches: dict, sets: tuple = ()) -> list[str]:
    """One report line per rule that matched, sorted by name: `fired   12x  [set] rule`."""
    names = sorted(((rule_name(k, sets), n) for k, n in matches.items() if n),
                   key=lambda x: x[0])
    return [f"//   fired {n:5d}x  " + " ".join(name.split()) for name, n in names]


_RULES: dict = {}   # rule declaration -> (rule set name, rule)
_NAMES: dict = {}   # rule declaration -> its printed name, made when it first fires


def rule_name(decl, sets: tuple = ()) -> str:
    """`[module] label` for a rule of the library, `[rule set] rule` for one of `sets`."""
    if not _RULES:
        for module in MODULES:
            for r in module.RULES:
                _RULES[r.decl] = (module.__name__.rsplit(".", 1)[-1], r)
    if decl not in _NAMES:
        if decl in _RULES:
            name, r = _RULES[decl]
            label = getattr(decl, "name", None) or " ".join(str(r).split())
            return _NAMES.setdefault(decl, f"[{name}] {label}")
        for s in sets:  # a rule set made outside the library: named each time it is seen
            if decl in s.__egg_ruleset__.rules:
                label = getattr(decl, "name", None) or pretty_decl(s.__egg_decls__, decl)
                return f"[{getattr(s.ident, 'name', s.ident)}] " + " ".join(label.split())
        return " ".join(str(decl).split())
    return _NAMES[decl]


def with_report(program: ir.Program, stage: str, lines: list[str]) -> ir.Program:
    """The program with this stage's part of the e-graph report replaced by `lines`.

    The report (`state.egraph_report`, printed at the end of every IR dump) is a block per
    stage and function, each starting with a line `// STAGE ...`.
    """
    old = program.state.egraph_report
    kept, keep = [], True
    for line in old.splitlines():
        if not line.startswith("//   "):
            keep = not line.startswith(f"// {stage} ")
        if keep:
            kept.append(line)
    text = "\n".join(kept + lines)
    return program.with_state(egraph_report=text)
