"""The parsers of the `linnet` commands: help texts and argparse options, one module per
command.

Building every command's parser is what `linnet --help` and `linnet check` pay for on each
run, so these modules import nothing of the compiler, the fuzzer or the tuner: only the
names a parser shows (the numerics modes, the standard library's variable). What a command
does lives in `linnet/cli/<command>.py`, loaded by the command table
(`linnet/cli/commands.py`) only when that command runs.
"""
