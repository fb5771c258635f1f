"""The printers (linnet/emit): each target's generated code."""
