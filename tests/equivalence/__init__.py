"""Generated modules against references: kernels against bodies, models against their PyTorch
twins."""
