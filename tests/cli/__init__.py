"""The `linnet` command (linnet/cli): one file per command module."""
