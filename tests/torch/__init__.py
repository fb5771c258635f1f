"""The PyTorch runtime (linnet/torch): the interpreter, loading, autograd."""
