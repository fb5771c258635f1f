"""The rule sets of the e-graph stage (linnet/rules)."""
