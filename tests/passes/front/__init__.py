"""The front end's passes (linnet/passes/front)."""
