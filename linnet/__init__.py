"""Linnet: a compiler for a typed tensor language with tile kernels."""

__version__ = "0.1.0"
