"""Reverse mode (`--grad`): the differentiate pass and the adjoint rules it runs."""
