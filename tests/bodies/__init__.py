"""Every corpus entry's op bodies against hand-written NumPy references, on every backend."""
