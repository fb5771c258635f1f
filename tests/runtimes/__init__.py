"""What the PyTorch and JAX runtimes share: calling an entry, its conventions, its per-call
path."""
