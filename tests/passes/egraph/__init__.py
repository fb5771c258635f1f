"""The e-graph stage (linnet/passes/egraph)."""
