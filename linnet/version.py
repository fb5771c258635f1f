"""The package's version, in a module of its own so that any layer can read it without
importing the package's `__init__` (the e-graph cache keys its results by it)."""

__version__ = "0.1.0"
