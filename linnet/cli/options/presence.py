"""`--present PATH` and `--weights FILE.safetensors`: the options that say which optional
members a block entry has (what they mean: `linnet/cli/presence.py`)."""

from __future__ import annotations

import argparse

PRESENT_HELP = ("a parameter path the checkpoint holds (`layers.0.up_bias`), which makes an "
                "optional member present; repeat for each")
WEIGHTS_HELP = ("a .safetensors checkpoint whose tensor names decide which optional "
                "members are present (only the names are read)")
PRESENCE_EPILOG = """

Optional members (`param b: T? = none`, `sub head: Block? = none`) are present when
the checkpoint holds them: --present PATH names one path it holds (repeat it), and
--weights FILE.safetensors every tensor of the file (its names only). Without either,
every optional member is absent. An optional sub is present when every param and
buffer it requires is."""


def add_presence_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--present", action="append", default=[], metavar="PATH",
                   help=PRESENT_HELP)
    p.add_argument("--weights", metavar="FILE", help=WEIGHTS_HELP)
