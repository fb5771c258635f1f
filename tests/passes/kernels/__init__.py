"""The kernel passes (linnet/passes/kernels)."""
