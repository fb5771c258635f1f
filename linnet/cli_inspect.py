"""`linnet inspect`: what a program declares, without compiling an entry.

`--parameters` prints the root block's manifest: one line per param, buffer and state,
with its kind and type. With a value for each of the root's generics (`--bind`, or their
defaults), every path is concrete (`layers.0.up: param Tensor[16, 4; f32]`); otherwise an
array's elements share one line (`layers[*].up: param Tensor[4*H, H; f32] x L`), the types
written in the root's generics. `?` marks an optional member (or one under an optional
sub). `--json` prints the same as a JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys

from .cli_io import read_program
from .cli_report import Reporter, add_report_options

INSPECT_HELP = """\
Show what FILE declares. --parameters lists the root block's parameter manifest:
every param, buffer and state with its path, kind and type (the inputs a compiled
block entry takes after its own, in this order).

examples:
  linnet inspect --parameters examples/block_model.linnet
  linnet inspect --parameters examples/block_model.linnet --root Model \
      --bind L=2 --bind H=64 --bind V=100
  linnet inspect --parameters --json examples/block_model.linnet

The root block is the only block with entries, or the one --root names. Without a
value for every generic of the root (--bind, or a default), an array's elements share
one line: `layers[*].up: param Tensor[4*H, H; f32] x L`. `?` marks an optional member."""


def add_inspect_command(commands) -> None:
    p = commands.add_parser("inspect", help="show a program's parameter manifest",
                            description=INSPECT_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .linnet file, or - (stdin)")
    p.add_argument("--parameters", action="store_true",
                   help="list the root block's params, buffers and states")
    p.add_argument("--root", metavar="BLOCK", help="the root block (optional when one block "
                                                  "of the file has entries)")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for a generic of the root block; repeat for each")
    add_report_options(p, json_help="print the manifest as JSON on standard output (and "
                                    "diagnostics as a JSON list on standard error)")
    p.set_defaults(run=run_inspect)


def run_inspect(args: argparse.Namespace) -> int:
    from .check.instance import analyze_program
    from .cli_compile import _bindings
    from .diagnostics import CompileError
    from .errors import UsageError
    from .program import load_program
    if not args.parameters:
        print("linnet inspect: say what to inspect: --parameters", file=sys.stderr)
        return 2
    program = read_program(args.file)
    report = Reporter(args)
    loaded = load_program(program.path, program.text)
    diagnostics = loaded.diagnostics or analyze_program(loaded).diagnostics
    try:
        if diagnostics:
            raise CompileError(diagnostics, loaded.sources)
        text = manifest_text(analyze_program(loaded), args.root, _bindings(args.bind),
                             args.json)
    except UsageError as err:
        print(f"linnet inspect: {err.command_line}", file=sys.stderr)
        return 2
    except CompileError as err:
        report.add(err.diagnostics, loaded.sources)
        report.finish(1)
        return 1
    report.finish(1)
    print(text)
    return 0


def manifest_text(analysis, root: str | None, bind: dict[str, str], as_json: bool) -> str:
    """The root block's manifest: concrete when every root generic has a value."""
    from .diagnostics import CompileError, Diagnostic, Span
    from .passes.block_entry import choose_root
    from .passes.block_instances import instance_tree, parameters, patterns
    from .passes.front import parse_bindings
    info = choose_root(analysis, root, None)
    if info is None:
        module = analysis.program.root_module
        raise CompileError([Diagnostic(
            "E4103", "no root block: no block of the file has entries", Span(
                analysis.program.root, module.span.start, module.span.start),
            "in this file", help="name the block to inspect with --root")])
    unknown = sorted(set(bind) - set(info.generics))
    if unknown:
        from .errors import UsageError
        raise UsageError(f"`{info.name}` has no generic named `{unknown[0]}`",
                         f"--bind {unknown[0]}: `{info.name}` has no generic named "
                         f"`{unknown[0]}` (its generics: {', '.join(info.generics) or 'none'})")
    given = {g.name for g in info.item.generics if g.name in bind or g.default is not None}
    if given == set(info.generics):
        values = parse_bindings(info.item, bind)
        params = parameters(instance_tree(
            info, {k: v for k, v in values.items() if isinstance(v, int)},
            {k: v for k, v in values.items() if isinstance(v, str)}))
        if as_json:
            return json.dumps({"root": info.name, "parameters": [p.to_json() for p in params]},
                              indent=2)
        return "\n".join(f"{p.path}: {p.kind} {p.type_text()}{'?' if p.optional else ''}"
                         for p in params)
    from .check.dim_normal_form import Dim
    values = parse_bindings(_Partial(info.item, bind), bind) if bind else {}
    lines = patterns(info, {k: Dim.const(v) for k, v in values.items() if isinstance(v, int)},
                     {k: v for k, v in values.items() if isinstance(v, str)})
    if as_json:
        return json.dumps({"root": info.name, "parameters": [p.to_json() for p in lines]},
                          indent=2)
    return "\n".join(map(str, lines))


class _Partial:
    """The root block's generics that `--bind` gives, for `parse_bindings`."""

    def __init__(self, block, bind: dict[str, str]) -> None:
        self.name = block.name
        self.generics = tuple(g for g in block.generics if g.name in bind)
