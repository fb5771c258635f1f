"""The checker (linnet/check): types, shapes, dimensions, kernels, and its diagnostics."""
