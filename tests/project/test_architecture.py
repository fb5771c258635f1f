"""The package's shape, read from its source with `ast`: layers that import only downwards,
no import cycles, no private name imported from another module, and imports inside
functions only of the optional heavy dependencies.

Why a test: the layout (docs/architecture.md) says which package may use which; without a
check, one convenient import undoes it. The layers are data (`LAYERS`, lowest first); a
module may import its own layer and those below. What does not hold yet is listed in
`architecture_debt.py`, entry by entry, so the list can only shrink: an entry that no
longer occurs fails the test too, until it is deleted.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from architecture_debt import (CYCLES, IMPORTS_IN_FUNCTIONS, LAYER_EXCEPTIONS,
                               PRIVATE_IMPORTS)

ROOT = Path(__file__).resolve().parents[2]

# Lowest first. A module belongs to the layer of the longest prefix that names it.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("linnet.errors", "linnet.diagnostics", "linnet.version", "linnet.deepstack",
              "linnet.lazy_import", "linnet.privatecache", "linnet.scopes",
              "linnet.parameters", "linnet.moved")),
    ("prims", ("linnet.prims",)),
    ("syntax", ("linnet.syntax",)),
    ("ir", ("linnet.ir",)),
    ("check", ("linnet.check",)),
    ("rules", ("linnet.rules",)),
    ("passes", ("linnet.passes", "linnet.tuning")),
    ("emit", ("linnet.emit",)),
    ("pipeline", ("linnet.pipeline",)),
    ("runtimes", ("linnet.torch", "linnet.jax", "linnet.checkpoint")),
    ("harness", ("linnet.fuzz", "linnet.tune")),
    ("demo", ("linnet.demo",)),
    ("commands", ("linnet.cli",)),
    ("tests' helpers", ("linnet.testing",)),
    ("package", ("linnet", "linnet.__main__")),
]

# Imported inside functions on purpose: heavy, optional, or slow to import (docstrings say
# which). Everything else is imported at the top of its module.
LAZY_ALLOWED = {"torch", "jax", "jaxlib", "triton", "onnx", "onnxruntime", "egglog",
                "safetensors", "ml_dtypes", "hypothesis", "mlir",
                # slow to import (email, zipfile, ...), read once for a version string
                "importlib.metadata",
                # modules of linnet that import torch at their top
                "linnet.torch.block_module", "linnet.torch.interpreter",
                # ... and egglog (with the rule sets: about a second)
                "linnet.passes.egraph.run", "linnet.rules"}


@dataclass(frozen=True)
class Import:
    module: str        # the importing module
    target: str        # the module imported (for `from m import name`: m, or m.name if a module)
    name: str | None   # the name imported from target, if not a module
    in_function: bool
    line: int


def _modules() -> dict[str, tuple[Path, bool]]:
    out = {}
    for path in sorted((ROOT / "linnet").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        out[".".join(parts)] = (path, is_package)
    return out


MODULES = _modules()


def _targets(module: str, is_package: bool, node: ast.AST) -> list[tuple[str, str | None]]:
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    assert isinstance(node, ast.ImportFrom)
    if node.level:
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        out.append((sub, None) if sub in MODULES else (source, alias.name))
    return out


def _imports() -> list[Import]:
    found: list[Import] = []
    for module, (path, is_package) in MODULES.items():
        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target, name in _targets(module, is_package, child):
                        found.append(Import(module, target, name, in_function, child.lineno))
                elif isinstance(child, ast.If) and getattr(child.test, "id", "") == "TYPE_CHECKING":
                    continue  # for the type checker only
                else:
                    visit(child, in_function or isinstance(
                        child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
        visit(ast.parse(path.read_text()), False)
    return found


IMPORTS = _imports()


def _owner(target: str) -> str | None:
    """The linnet module that defines target (a module, or a module's attribute)."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _internal(i: Import) -> bool:
    return i.target == "linnet" or i.target.startswith("linnet.")


def layer_of(module: str) -> int:
    best, rank = -1, None
    for k, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, rank = len(p), k
    assert rank is not None, f"{module} is in no layer of LAYERS"
    return rank


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for i in IMPORTS:
        owner = _owner(i.target) if _internal(i) else None
        if owner and owner != i.module:
            graph[i.module].add(owner)
    return graph


def import_cycles() -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan)."""
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for v in sorted(MODULES):
        if v not in index:
            connect(v)
    return sorted(found)


def layer_violations() -> set[tuple[str, str]]:
    return {(i.module, _owner(i.target)) for i in IMPORTS
            if _internal(i) and _owner(i.target) and i.module != "linnet"
            and layer_of(_owner(i.target)) > layer_of(i.module)}


def private_imports() -> set[tuple[str, str]]:
    """(importer, owner.name) for every underscored name imported from another module."""
    return {(i.module, f"{_owner(i.target)}.{i.name}") for i in IMPORTS
            if _internal(i) and i.name and i.name.startswith("_")
            and not i.name.startswith("__") and _owner(i.target) != i.module}


def imports_in_functions() -> set[tuple[str, str]]:
    out = set()
    for i in IMPORTS:
        lazy = i.target.split(".")[0] in LAZY_ALLOWED or i.target in LAZY_ALLOWED
        if not i.in_function or lazy:
            continue
        out.add((i.module, _owner(i.target) if _internal(i) else i.target))
    return out


def test_every_linnet_import_names_a_module_that_exists():
    missing = sorted({(i.module, i.target) for i in IMPORTS
                      if _internal(i) and _owner(i.target) is None})
    assert not missing


def test_no_import_cycles():
    assert import_cycles() == sorted(CYCLES)


def test_layers_import_only_downwards():
    assert layer_violations() == set(LAYER_EXCEPTIONS)


def test_the_pipeline_and_passes_never_import_runtimes_commands_or_test_helpers():
    low = [m for m in MODULES if layer_of(m) <= layer_of("linnet.pipeline")]
    high = ("linnet.torch", "linnet.jax", "linnet.cli", "linnet.fuzz", "linnet.demo",
            "linnet.testing")
    bad = sorted({(i.module, _owner(i.target)) for i in IMPORTS if i.module in low
                  and _internal(i) and str(_owner(i.target)).startswith(high)})
    assert bad == []


def test_no_private_names_imported_across_modules():
    assert private_imports() == set(PRIVATE_IMPORTS)


def test_imports_inside_functions_only_of_optional_heavy_dependencies():
    assert imports_in_functions() == set(IMPORTS_IN_FUNCTIONS)


def test_layer_order_is_what_the_check_reads():
    """The check itself: an upward import is found, a downward one is not."""
    assert layer_of("linnet.passes.middle.cse") < layer_of("linnet.emit.torch")
    assert layer_of("linnet.pipeline") < layer_of("linnet.torch.loader")
    assert layer_of("linnet.tuning.records") < layer_of("linnet.pipeline") < layer_of(
        "linnet.tune.tuner")
    assert layer_of("linnet.fuzz.harness") < layer_of("linnet.testing.strategies")


def test_every_module_has_a_layer():
    for module in MODULES:
        layer_of(module)


def test_docs_architecture_names_modules_and_passes_that_exist():
    """docs/architecture.md's path from source to kernel: every `linnet/...` file or folder
    it names exists, every pass of the pipeline is in its table, and every backticked
    lower-case-with-dashes name in the table is a pass."""
    from linnet.pipeline import all_passes
    text = (ROOT / "docs" / "architecture.md").read_text()
    for path in set(re.findall(r"`(linnet/[\w/]*(?:\.py)?)`", text)):
        assert (ROOT / path).exists(), path
    section = text.split("## From source text to a running kernel")[1].split("\n## ")[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    passes = [p.name for p in all_passes()]
    named = set(re.findall(r"`([a-z]+(?:-[a-z]+)+|parse|check|cse|dce|elaborate)`", table))
    assert named <= set(passes), named - set(passes)
    mentioned = set(re.findall(r"`([a-z-]+)`", table))
    ranges = re.findall(r"`([a-z-]+)` \.\.\. `([a-z-]+)`", table)
    covered = set(mentioned)
    for first, last in ranges:
        covered |= set(passes[passes.index(first):passes.index(last) + 1])
    assert covered >= set(passes), set(passes) - covered
