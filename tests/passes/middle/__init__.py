"""The middle passes (linnet/passes/middle)."""
