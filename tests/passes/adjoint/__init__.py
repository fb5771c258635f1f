"""Reverse mode (linnet/passes/adjoint)."""
