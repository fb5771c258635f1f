"""`linnet inspect`: what a program declares, without compiling an entry.

Without a flag it lists the file's entries, ops, kernels, fns and blocks
(`linnet/cli/declarations.py`).
`--parameters` prints the root block's manifest: one line per param, buffer and state,
with its kind and type. With a value for each of the root's generics (`--bind`, or their
defaults), every path is concrete (`layers.0.up: param Tensor[16, 4; f32]`); otherwise an
array's elements share one line (`layers[*].up: param Tensor[4*H, H; f32] x L`), the types
written in the root's generics. `?` marks an optional member (or one under an optional
sub), followed, in the concrete listing, by `present` or `absent` as the checkpoint named
by `--present`/`--weights` decides. `--json` prints the same as a JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys

from .io import print_error, read_program
from .presence import PRESENCE_EPILOG, add_presence_options, presence
from .report import Reporter, add_report_options
from .std_option import add_std_option

INSPECT_HELP = """\
Show what FILE declares. Without a flag: its entries and fns with their signatures,
its ops with the kernels they bind (and whether they have a grad clause), its kernels,
and its blocks with their params, buffers, states, subs and entries. --parameters
lists the root block's parameter manifest instead: every param, buffer and state with
its path, kind and type (the inputs a compiled block entry takes after its own, in
this order).

examples:
  linnet inspect examples/softmax.linnet
  linnet inspect --parameters examples/block_model.linnet
  linnet inspect --parameters examples/block_model.linnet --root Model \
      --bind L=2 --bind H=64 --bind V=100
  linnet inspect --parameters --json examples/block_model.linnet

The root block is the only block with entries, or the one --root names. Without a
value for every generic of the root (--bind, or a default), an array's elements share
one line: `layers[*].up: param Tensor[4*H, H; f32] x L`. `?` marks an optional member;
with every generic given, it is followed by `present` or `absent`.""" + PRESENCE_EPILOG


def add_inspect_command(commands) -> None:
    p = commands.add_parser("inspect", help="show what a program declares, or its parameter "
                                            "manifest",
                            description=INSPECT_HELP,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("file", metavar="FILE", help="a .linnet file, or - (stdin)")
    p.add_argument("--parameters", action="store_true",
                   help="list the root block's params, buffers and states")
    p.add_argument("--root", metavar="BLOCK", help="the root block (optional when one block "
                                                  "of the file has entries)")
    p.add_argument("--bind", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for a generic of the root block; repeat for each")
    add_presence_options(p)
    add_report_options(p, json_help="print the manifest as JSON on standard output (and "
                                    "diagnostics as a JSON list on standard error)")
    add_std_option(p)
    p.set_defaults(run=run_inspect)


def run_inspect(args: argparse.Namespace) -> int:
    from ..check.instance import analyze_program
    from .compile import bind_values
    from ..diagnostics import CompileError
    from ..errors import UsageError
    from ..syntax.program import load_program
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
    from .declarations import declarations_json, declarations_text
    return declarations_json(analysis) if as_json else declarations_text(analysis, path)


def manifest_text(analysis, root: str | None, bind: dict[str, str], as_json: bool,
                  present: frozenset[str] | None = None) -> str:
    """The root block's manifest: concrete when every root generic has a value, each
    optional member then marked present or absent as `present` (the checkpoint's paths)
    decides."""
    from ..passes.front.block_entry import choose_root, root_manifest
    from ..passes.front.block_instances import patterns
    from ..passes.front.bind_generics import parse_bindings
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
    from ..check.dim_normal_form import Dim
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
