"""Kernels: choosing them, instantiating them, and lowering what printers cannot print."""
