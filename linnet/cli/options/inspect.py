"""`linnet inspect FILE`: its help and options (run by `linnet/cli/inspect.py`)."""

from __future__ import annotations

import argparse

from ..report import add_report_options
from ..std_option import add_std_option
from .presence import PRESENCE_EPILOG, add_presence_options

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


def add_inspect(commands, name: str) -> argparse.ArgumentParser:
    """Add `inspect` to the subparsers of `linnet`'s parser."""
    p = commands.add_parser(name, help="show what a program declares, or its parameter "
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
    return p
