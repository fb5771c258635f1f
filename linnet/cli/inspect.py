"""`linnet inspect`: what a program declares, without compiling an entry.

Without a flag it lists the file's entries, ops, kernels, fns and blocks
(`linnet/cli/declarations.py`).
`--parameters` prints the root block's manifest: one line per param, buffer and state,
with its kind and type. With a value for each of the root's generics (`--bind`, or their
defaults), every path is concrete (`layers.0.up: param Tensor[16, 4; f32]`); otherwise an
array's elements share one line (`layers[*].up: param Tensor[4*H, H; f32] x L`), the types
written in the root's generics. `?` marks an optional member (or one under an optional
sub), followed, in the concrete listing, by `present` or `absent` as the checkpoint named
by `--present`/`--weights` decides. `--json` prints the same as a JSON object. Its options
are in `linnet/cli/options/inspect.py`.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..check.dim_normal_form import Dim
from ..check.instance import analyze_program
from ..diagnostics import CompileError
from ..errors import UsageError
from ..passes.front.bind_generics import parse_bindings
from ..passes.front.block_entry import choose_root, root_manifest
from ..passes.front.block_instances import patterns
from ..syntax.program import load_program
from .arguments import bind_values
from .declarations import declarations_json, declarations_text
from .io import print_error, read_program
from .presence import presence
from .report import Reporter


def run_inspect(args: argparse.Namespace) -> int:
    if not args.parameters and (args.root or args.bind or args.present or args.weights):
        print("linnet inspect: --root, --bind, --present and --weights go with --parameters",
              file=sys.stderr)
        return 2
    program = read_program(args.file)
    report = Reporter(args)
    loaded = load_program(program.path, program.text)
    diagnostics = loaded.diagnostics or analyze_program(loaded).diagnostics
    try:
        if diagnostics:
            raise CompileError(diagnostics, loaded.sources)
        text = manifest_text(analyze_program(loaded), args.root, bind_values(args.bind),
                             args.json, presence(args)) if args.parameters \
            else _declared(analyze_program(loaded), program.path, args.json)
    except UsageError as err:
        print_error("linnet inspect", err.command_line)
        return 2
    except CompileError as err:
        report.add(err.diagnostics, loaded.sources)
        report.finish(1)
        return 1
    report.finish(1)
    print(text)
    return 0


def _declared(analysis, path: str, as_json: bool) -> str:
    """Without a flag: what the file declares (`linnet/cli/declarations.py`)."""
    return declarations_json(analysis) if as_json else declarations_text(analysis, path)


def manifest_text(analysis, root: str | None, bind: dict[str, str], as_json: bool,
                  present: frozenset[str] | None = None) -> str:
    """The root block's manifest: concrete when every root generic has a value, each
    optional member then marked present or absent as `present` (the checkpoint's paths)
    decides."""
    info = choose_root(analysis, root, None)
    given = set() if info is None else {g.name for g in info.item.generics
                                        if g.name in bind or g.default is not None}
    if info is None or given == set(info.generics) or set(bind) - set(info.generics):
        # concrete (or a mistake root_manifest reports: no root block, an unknown generic)
        manifest = root_manifest(analysis, root, bind, present)
        params = manifest.parameters
        if as_json:
            return json.dumps({"root": manifest.root, "parameters": [
                {**p.to_json(), "present": p.input is not None} for p in params]}, indent=2)
        return "\n".join(_line(p) for p in params)
    values = parse_bindings(_Partial(info.item, bind), bind) if bind else {}
    lines = patterns(info, {k: Dim.const(v) for k, v in values.items() if isinstance(v, int)},
                     {k: v for k, v in values.items() if isinstance(v, str)})
    if as_json:
        return json.dumps({"root": info.name, "parameters": [p.to_json() for p in lines]},
                          indent=2)
    return "\n".join(map(str, lines))


def _line(p) -> str:
    """`head.up: param Tensor[8, 4; f32]? absent`: an optional member says which it is."""
    text = f"{p.path}: {p.kind} {p.type_text()}"
    if p.optional:
        text += "? " + ("present" if p.input is not None else "absent")
    return text


class _Partial:
    """The root block's generics that `--bind` gives, for `parse_bindings`."""

    def __init__(self, block, bind: dict[str, str]) -> None:
        self.name = block.name
        self.generics = tuple(g for g in block.generics if g.name in bind)
